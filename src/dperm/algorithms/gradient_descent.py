"""Noisy full-batch gradient descent: every step releases a Gaussian-noised mean gradient.

T adaptive full-batch Gaussian steps of replace-one sensitivity ``2 L / n`` and noise
std sigma are exactly ``sqrt(T) (2L/n) / sigma``-Gaussian-DP (Dong, Roth, Su 2019), so
the accountant's calibration (:func:`dperm.privacy.mechanisms.vector_mechanism`) loses
nothing to composition.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.budget import PrivacyBudget
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import release, secure_randomness, vector_mechanism
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import check_step_size, check_steps, initial_point, start
from .registry import AutoRule, register

__all__ = ["noisy_gd", "noisy_gradient_steps"]


def noisy_gradient_steps(problem: ERMProblem, noise, w0, step_sizes, rng, domain=None, *, keep_iterates=False):
    """Run ``w <- Pi(prox(w - eta_t (grad F(w) + z_t)))`` with z_t the noise of one release
    of ``noise`` (a release event, or an object with ``sample(rng, dim)``).

    The only data-dependent quantity each step touches is the mean loss gradient, whose
    replace-one sensitivity is the calibration's; everything after the noise is
    post-processing. Returns (last iterate, sum of the iterates w_0..w_{T-1}, iterates).
    """
    d = problem.n_features
    w = np.array(w0, dtype=np.float64)
    w_sum = np.zeros(d)
    iterates = [] if keep_iterates else None
    if hasattr(noise, "sample"):
        def noisy_gradient(w):
            return problem.gradient(w) + noise.sample(rng, d)
    else:
        def noisy_gradient(w):  # secure or seeded, as the event says
            return release(rng, problem.gradient(w), noise)
    for eta in step_sizes:
        w_sum += w
        if keep_iterates:
            iterates.append(w.copy())
        noisy = noisy_gradient(w)
        w = problem.regularizer.nonsmooth_prox(w - eta * noisy, eta)
        if domain is not None:
            w = domain.project(w)
    return w, w_sum, iterates


@register(
    "noisy_gd",
    setting="convex, Lipschitz, bounded C",
    guarantee="(epsilon, delta)",
    source="Nikolov's lecture notes on private ERM (noisy projected gradient descent); Bassily, Smith, Thakurta 2014 note (2)",
    paper="lecture notes on private logistic regression; Bassily, Smith, Thakurta 2014",
    requires=("convex", "lipschitz", "bounded_domain", "approximate_dp"),
    gradient_complexity="n T, T = n^2 mu_GDP^2 / (4 d) (capped by max_steps)",
    summary="projected GD with Gaussian-noised full gradients; outputs the average iterate",
    auto=AutoRule(8, lambda p, b: p.is_convex,
                  'convex, possibly non-smooth: noisy projected gradient descent'),
)
def noisy_gd(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    step_size: float | None = None,
    max_steps: int = 1000,
    init=None,
) -> PrivateFit:
    """Noisy projected gradient descent with the averaged iterate.

    ``theta_t = Pi_C(theta_{t-1} - eta (grad F(theta_{t-1}) + w_t))``, output
    ``(1/T) sum_{t=0}^{T-1} theta_t``, with ``w_t ~ N(0, sigma^2 I)`` and sigma from the
    exact composition of T Gaussian steps of sensitivity ``2L/n`` (replace-one; the
    lecture's ``C/n`` is the add/remove figure).

    Parameters
    ----------
    problem : ERMProblem
        Convex L-Lipschitz loss over a bounded C. Without a constraint, a mu-strongly
        convex F is run over the ball of radius L/mu, which holds the minimizer.
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    rng : None, int or numpy.random.Generator
        ``None`` (production): every step's noisy gradient is a floating-point-safe
        release (grid rounding plus exact discrete Gaussian noise from the OS,
        docs/privacy.md); a seed or Generator: NumPy's reproducible noise, for experiments.
    steps : int, optional
        Default ``T = ceil(n^2 mu^2 / (4 d))`` where mu is the Gaussian-DP parameter of
        the budget: beyond it the optimization term ``R B / sqrt(T)`` of Nikolov's lecture notes on private ERM
        Theorem 1 falls below the noise term ``R C sigma sqrt(d) / n``; capped by
        ``max_steps`` (the theorem's T is reported in ``info``).
    step_size : float, optional
        Default ``eta = R / (B sqrt(T))`` (Nikolov's lecture notes on private ERM Theorem 1) with R the radius of C and
        ``B^2 = G^2 + d sigma^2`` bounding E||noisy gradient||^2, G the gradient bound
        ``L + l2 R``.
    max_steps : int
        Cap on the default T.
    init : array-like, optional
        Public starting point (default 0, as in Nikolov's lecture notes on private ERM).

    References
    ----------
    Nikolov's lecture notes on private ERM, "noisy gradient descent" and Theorem 1; Dong, Roth, Su 2019 (Gaussian DP).
    """
    secure = secure_randomness(rng)
    rng = start("noisy_gd", problem, budget, rng)
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    domain = problem.effective_constraint()
    R = domain.l2_radius(d)
    # a utility choice (the theorem's T), not accounting: the noise comes from the calibration
    theorem_T = max(1, math.ceil(n * n * gaussian_dp_mu(budget.epsilon, budget.delta) ** 2 / (4.0 * d)))
    T = min(theorem_T, check_steps("max_steps", max_steps)) if steps is None else check_steps("steps", steps)
    calibration = vector_mechanism(budget, problem.gradient_sensitivity(), steps=T, label="noisy_gd",
                                   secure=secure, dim=d)
    G = L + problem.regularizer.l2 * R + problem.regularizer.l1 * math.sqrt(d)
    B = math.sqrt(G * G + d * calibration.noise**2)
    eta = R / (B * math.sqrt(T)) if step_size is None else check_step_size(step_size)

    w0 = initial_point(problem, init)
    _, w_sum, _ = noisy_gradient_steps(problem, calibration.event, w0, [eta] * T, rng, domain)
    return PrivateFit(
        coef=w_sum / T,
        privacy_spent=calibration.spent,
        algorithm="noisy_gd",
        event=calibration.event,
        hyperparameters={"steps": T, "step_size": eta, "radius": R},
        info={"theorem_steps": theorem_T},
    )
