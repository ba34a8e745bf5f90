"""Differentially private Frank-Wolfe over the L2 ball (Gaussian noise) and the L1 ball
(exponential mechanism over the vertices).

Frank-Wolfe never projects: each step moves towards the output of a linear minimization
oracle (LMO), ``w_{t+1} = (1 - gamma_t) w_t + gamma_t v_t``, so every iterate is a convex
combination of points of C and stays feasible. Privacy enters through the LMO only:

- ``dp_fw_l2`` (Wang, Chen, Xu 2019, Algorithm 2) feeds the LMO of the L2 ball with a Gaussian-noised
  mean gradient. T adaptive full-batch Gaussian releases of replace-one sensitivity
  ``2 L / n`` are exactly ``sqrt(T) (2L/n) / sigma``-Gaussian-DP (Dong, Roth, Su 2019), so
  :func:`~dperm.privacy.mechanisms.vector_mechanism` loses nothing to composition.
- ``dp_fw_l1`` (Wang, Chen, Xu 2019, Algorithm 3, after Talwar, Thakurta, Zhang 2015) picks the vertex
  ``+-R e_j`` of the L1 ball by the exponential mechanism on the scores
  ``u(s) = -<s, grad F(w_t)>`` (Gumbel-max: an exact sample), each step epsilon_0-DP, the T
  steps composed by the one accountant (:mod:`dperm.privacy.accountant`: basic composition
  at delta = 0; with delta > 0 the tightest of advanced, bounded-range zCDP and the
  privacy-loss distribution of T epsilon_0-DP steps).

Convergence (both): the standard inexact-LMO argument. With ``gap(w) = max_{s in C}
<grad F(w), w - s>`` (the Frank-Wolfe gap, zero exactly at first-order stationary points
of F over C, and an upper bound on ``F(w) - min_C F`` when F is convex),
beta-smoothness and ``||v - w||_2 <= 2R`` give, for a constant step gamma::

    (1/T) sum_{t=1}^T gap(w_t) <= (F(w_1) - F(w_{T+1})) / (gamma T) + 2 beta gamma R^2
                                   + (1/T) sum_t err_t,

where ``err_t = <grad F(w_t), v_t> - min_s <grad F(w_t), s>`` is the LMO's excess, caused
by the privacy noise. A uniformly random iterate ``w_R`` (the papers' output) has expected
gap equal to the left-hand side.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import events as ev
from ..privacy.accountant import calibrate
from ..privacy.budget import PrivacyBudget
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import calibrate_and_charge, exponential_select, release, secure_randomness, vector_mechanism
from ..problem.constraints import L1Ball, L2Ball
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import check_step_size, check_steps, initial_point, start
from .registry import AutoRule, AssumptionError, register

__all__ = [
    "dp_fw_l2",
    "dp_fw_l1",
    "frank_wolfe_gap",
    "l1_vertex_scores",
    "l1_score_sensitivity",
    "l1_step_epsilon",
    "dp_fw_l2_default_steps",
    "dp_fw_l1_default_steps",
]

_OUTPUTS = ("random", "last")


# ----------------------------------------------------------------------------- helpers
def _require_constraint(name: str, source: str, problem: ERMProblem, cls, spec: str) -> float:
    """The radius of the problem's constraint if it is exactly ``cls``; AssumptionError
    naming what was found otherwise."""
    if type(problem.constraint) is not cls:
        raise AssumptionError(
            f"{name} ({source}) needs the constraint {spec} (a {cls.__name__}); the problem has "
            f"{problem.constraint!r}. Pass constraint={spec}."
        )
    return problem.constraint.radius


def frank_wolfe_gap(problem: ERMProblem, w) -> float:
    """``max_{s in C} <grad F(w), w - s>`` for the problem's (bounded) constraint.

    Non-private: a measurement for tests and benchmarks. Zero exactly at the first-order
    stationary points of F over C; for convex F an upper bound on ``F(w) - min_C F``.
    """
    w = np.asarray(w, dtype=np.float64)
    g = problem.gradient(w)
    return float(g @ w - g @ problem.constraint.lmo(g))


def _check_output(output: str) -> str:
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}, got {output!r}")
    return output


def _step_schedule(step_size, steps: int):
    """(list of gamma_t, the constant gamma or None). ``None``: gamma = min(1, 1/sqrt(T))
    (Wang, Chen, Xu 2019, Theorems 5 and 6); ``"decreasing"``: gamma_t = 2/(t+2), t = 0..T-1 (Jaggi
    2013; Talwar et al. 2015); a number in (0, 1]: that constant."""
    if step_size is None:
        gamma = min(1.0, 1.0 / math.sqrt(steps))
        return [gamma] * steps, gamma
    if isinstance(step_size, str):
        if step_size != "decreasing":
            raise ValueError(f"step_size must be None, 'decreasing' or a number in (0, 1], got {step_size!r}")
        return [2.0 / (t + 2.0) for t in range(steps)], None
    gamma = check_step_size(step_size)
    if gamma > 1.0:
        raise ValueError(f"a Frank-Wolfe step size must be in (0, 1] to stay in C, got {gamma}")
    return [gamma] * steps, gamma


def _run(problem, w0, gammas, select_vertex, rng, output, keep_iterates):
    """The Frank-Wolfe loop. ``select_vertex(g, w)`` returns (index j, signed value): the
    LMO output is the vector with that value at coordinate j (L1), or a full vector (L2)."""
    T = len(gammas)
    selected = int(rng.integers(T)) if output == "random" else T  # public, data-independent
    w = np.array(w0, dtype=np.float64)
    chosen = None
    iterates = [w.copy()] if keep_iterates else None
    for t, gamma in enumerate(gammas):
        if t == selected:
            chosen = w.copy()
        v = select_vertex(problem.gradient(w), w)
        w *= 1.0 - gamma
        if isinstance(v, tuple):
            j, value = v
            w[j] += gamma * value
        else:
            w += gamma * v
        if keep_iterates:
            iterates.append(w.copy())
    coef = w if chosen is None else chosen
    # A convex combination of points of C is in C; rounding may leave it an ulp outside.
    if problem.constraint.minkowski_norm(coef) > 1.0:
        coef = problem.constraint.project(coef)
    return coef, selected, iterates


def _fit(name, coef, selected, iterates, calibration, hyper, info):
    info = dict(info)
    info["selected_iterate"] = selected  # index into w_1..w_{T+1} (0-based); T means the last
    if iterates is not None:
        # Every iterate is post-processing of the private releases: covered by the guarantee.
        info["iterates"] = np.array(iterates)
    return PrivateFit(
        coef=np.asarray(coef, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm=name,
        event=calibration.event,
        hyperparameters=hyper,
        info=info,
    )


# ---------------------------------------------------------------------------- dp_fw_l2
def dp_fw_l2_default_steps(problem: ERMProblem, budget: PrivacyBudget, w0=None) -> int:
    """The step count minimizing the explicit gap bound of Wang, Chen, Xu 2019, Theorem 5.

    With gamma = 1/sqrt(T) and Gaussian noise of std ``sigma = sqrt(T) (2L/n) / mu``
    (mu the Gaussian-DP parameter of the budget), ``E||z_t|| <= sigma sqrt(d)`` and
    ``err_t <= 2R ||z_t||``, the bound of the module docstring reads
    ``A / sqrt(T) + B sqrt(T)`` with ``A = G (R + ||w_1||) + 2 beta R^2`` (G bounds
    ``||grad F||`` on C) and ``B = 4 R L sqrt(d) / (n mu)``; it is minimized at
    ``T = A / B = A n mu / (4 R L sqrt(d))``, rounded up. For w_1 = 0 and no regularizer
    that is ``(1 + 2 beta R / L) n mu / (4 sqrt(d))``, the theorem's
    ``T = O(n eps / sqrt(d log(1/delta)))`` with its constant made explicit.
    """
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    R = problem.constraint.l2_radius(d)
    w1 = 0.0 if w0 is None else float(np.linalg.norm(w0))
    G = L + problem.regularizer.l2 * R
    A = G * (R + w1) + 2.0 * problem.smoothness * R * R
    # the GDP parameter of the budget only chooses T (utility); the noise is calibrated
    mu = gaussian_dp_mu(budget.epsilon, budget.delta)
    if L <= 0:
        return 1
    return max(1, math.ceil(A * n * mu / (4.0 * R * L * math.sqrt(d))))


@register(
    "dp_fw_l2",
    setting="non-convex (GLM with sigmoid-type link, robust regression) or convex; smooth; C = L2 ball",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 2 (Theorem 5)",
    paper="Wang, Chen, Xu 2019, Differentially private ERM with non-convex loss functions (ICML)",
    requires=("smooth", "lipschitz", "bounded_constraint", "smooth_regularizer", "approximate_dp"),
    gradient_complexity="n T, T = A n mu_GDP / (4 R L sqrt(d)) (capped by max_steps)",
    summary="Frank-Wolfe over the L2 ball with Gaussian-noised full gradients; random iterate",
)
def dp_fw_l2(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    step_size=None,
    max_steps: int = 1000,
    output: str = "random",
    init=None,
    keep_iterates: bool = False,
) -> PrivateFit:
    """Private Frank-Wolfe over the L2 ball with a noisy gradient (Wang, Chen, Xu 2019, Algorithm 2).

    For t = 1..T: ``v_t = argmin_{||v|| <= R} <v, grad F(w_t) + z_t> = -R (g + z)/||g + z||``,
    ``w_{t+1} = (1 - gamma_t) w_t + gamma_t v_t``, with ``z_t ~ N(0, sigma^2 I_d)``; return
    ``w_R`` for R uniform on {1..T} (default) or the last iterate ``w_{T+1}``.

    Assumptions
        A smooth loss (beta-smooth F, smooth regularizer: an ``l2`` part only), L-Lipschitz
        on C, and C the L2 ball ``('l2_ball', R)`` of the problem. The paper's setting is
        the non-convex squared loss of a GLM with a sigmoid-type link
        (``"sigmoid_squared"``) and robust regression (``"biweight"``) with ``||x|| <= 1``
        and R = 1; the algorithm and its guarantee hold for any smooth Lipschitz loss.

    Privacy (exact accounting)
        Each step releases the mean loss gradient plus N(0, sigma^2 I); its replace-one
        L2 sensitivity is ``2L/n`` (the l2 part of the regularizer is data-independent).
        T adaptive such releases are exactly ``mu = sqrt(T) (2L/n) / sigma``-GDP, so
        ``sigma = sqrt(T) (2L/n) / mu(eps, delta)`` with ``mu(eps, delta)`` the largest
        mu whose GDP curve passes below (eps, delta)
        (:func:`~dperm.privacy.mechanisms.vector_mechanism`). The LMO, the step
        and the choice of R (drawn independently of the data) are post-processing.
        Every iterate is covered, so ``keep_iterates=True`` releases nothing more.

    Utility
        The bound of the module docstring with ``err_t <= 2R ||z_t||`` and
        ``E||z_t|| <= sigma sqrt(d)``: ``E gap(w_R) <= A / (gamma T) + 2 beta gamma R^2 +
        2 R sigma sqrt(d)`` with ``A = G (R + ||w_1||)``, G the bound on ``||grad F||``
        on C; at the default T and gamma it is ``O((d log(1/delta))^{1/4} / sqrt(n eps))``
        (Wang, Chen, Xu 2019, Theorem 5, which converts it to excess population risk under the
        paper's Assumptions 2 and 3). The value is returned as ``info["gap_bound"]``.

    Parameters
    ----------
    problem : ERMProblem
        With constraint ``('l2_ball', R)``.
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    rng : None, int or numpy Generator
        Source of all randomness (noise and the random iterate). ``None`` (production): every step's noisy gradient is a floating-point-safe
        release (grid rounding plus exact discrete Gaussian noise from the OS,
        docs/privacy.md); a seed or Generator: NumPy's reproducible noise, for experiments.
    steps : int, optional
        T. Default :func:`dp_fw_l2_default_steps`: ``ceil(A n mu / (4 R L sqrt(d)))`` with
        ``A = G (R + ||w_1||) + 2 beta R^2``, the exact minimizer of the bound above at
        gamma = 1/sqrt(T); Theorem 5 states ``T = O(n eps / sqrt(d log(1/delta)))`` with a hidden
        constant, which this makes explicit. Capped by ``max_steps`` (the uncapped value
        is ``info["theorem_steps"]``).
    step_size : None, "decreasing" or float in (0, 1]
        Default ``gamma_t = min(1, 1/sqrt(T))`` for every t, Theorem 5's
        ``gamma = O((d log(1/delta))^{1/4} / sqrt(n eps))`` at its T.
        ``"decreasing"``: ``gamma_t = 2/(t+2)`` (Jaggi 2013), best with ``output="last"``
        for convex losses.
    max_steps : int, default 1000
        Cap on the default T (each step costs one full gradient, n d operations).
    output : {"random", "last"}
        ``"random"`` (the paper's): ``w_R``, R uniform on {1..T}; ``"last"``: ``w_{T+1}``.
    init : array-like, optional
        Public starting point ``w_1`` (default 0, the centre of the ball).
    keep_iterates : bool
        Store ``w_1..w_{T+1}`` in ``info["iterates"]`` (all private, post-processing).

    Returns
    -------
    PrivateFit
        ``event`` the T Gaussian releases (``sigma``, ``sensitivity``); ``info`` holds
        ``theorem_steps``, ``selected_iterate`` (0-based index into ``w_1..w_{T+1}``) and
        ``gap_bound`` (None for ``step_size="decreasing"``).

    References
    ----------
    Wang, Chen, Xu 2019, Algorithm 2 and Theorem 5; Dong, Roth, Su 2019
    (Gaussian differential privacy); Jaggi 2013 (Frank-Wolfe step sizes and gap).
    """
    source = "Wang, Chen, Xu 2019, Alg. 2"
    R = _require_constraint("dp_fw_l2", source, problem, L2Ball, "('l2_ball', R)")
    secure = secure_randomness(rng)
    rng = start("dp_fw_l2", problem, budget, rng)
    output = _check_output(output)
    d, L = problem.n_features, problem.lipschitz
    w0 = initial_point(problem, init)
    theorem_T = dp_fw_l2_default_steps(problem, budget, w0)
    T = min(theorem_T, check_steps("max_steps", max_steps)) if steps is None else check_steps("steps", steps)
    gammas, gamma = _step_schedule(step_size, T)
    calibration = vector_mechanism(budget, problem.gradient_sensitivity(), steps=T, label="dp_fw_l2",
                                   secure=secure, dim=d)
    lmo = problem.constraint.lmo

    def select(g, w):
        return lmo(release(rng, g, calibration.event))

    coef, selected, iterates = _run(problem, w0, gammas, select, rng, output, keep_iterates)
    gap_bound = None
    if gamma is not None:
        G = L + problem.regularizer.l2 * R
        A = G * (R + float(np.linalg.norm(w0)))
        gap_bound = (A / (gamma * T) + 2.0 * problem.smoothness * gamma * R * R
                     + 2.0 * R * calibration.noise * math.sqrt(d))
    return _fit(
        "dp_fw_l2", coef, selected, iterates, calibration,
        {"steps": T, "step_size": "decreasing" if gamma is None else gamma, "radius": R, "output": output},
        {"theorem_steps": theorem_T, "gap_bound": gap_bound},
    )


# ---------------------------------------------------------------------------- dp_fw_l1
def _linf_bound(problem: ERMProblem) -> float:
    """The tightest public bound on ``||x_i||_inf``: ERMProblem declares ``||x_i||_2 <=
    data_norm`` (and enforces it by clipping), and ``||x||_inf <= ||x||_2``."""
    return float(problem.data_norm)


def _l1_gradient_bound(problem: ERMProblem, radius: float) -> float:
    """A public bound on ``||grad f(w; x, y)||_inf`` over the L1 ball of ``radius``.

    A margin loss: ``L_phi X_inf``, L_phi = sup |phi'(a, y)| over the margins reachable
    there, ``|<w, x>| <= ||w||_1 ||x||_inf <= R X_inf``, and the declared labels. A
    custom loss: its declared bound on the gradient's L2 norm (enforced by clipping),
    which bounds the infinity norm too."""
    from ..problem.custom import CustomLoss

    if isinstance(problem.loss, CustomLoss):
        return float(problem.loss.lipschitz)
    X_inf = _linf_bound(problem)
    return float(problem.loss.lipschitz(radius * X_inf, problem.label_bound)) * X_inf


def l1_score_sensitivity(problem: ERMProblem, radius: float | None = None) -> float:
    """Replace-one sensitivity of the vertex scores ``u(+-R e_j) = -+R (grad F)_j``.

    Replacing row i changes the mean gradient by ``(g_i - g_i') / n``, whose every
    coordinate is at most ``2 G_inf / n`` in absolute value (the l2 part of the
    regularizer does not depend on the data). So every score moves by at most
    ``Delta = 2 R G_inf / n``, with G_inf the public bound of :func:`_l1_gradient_bound`
    (``L_phi X_inf`` for a margin loss: ``X_inf`` the public bound on ``||x||_inf``,
    here ``data_norm``, and L_phi the loss's derivative bound at margins ``R X_inf``).
    """
    R = problem.constraint.radius if radius is None else float(radius)
    return 2.0 * R * _l1_gradient_bound(problem, R) / problem.n_samples


def l1_vertex_scores(problem: ERMProblem, w, radius: float | None = None) -> np.ndarray:
    """Scores of the 2d vertices of the L1 ball at w, in the order of
    :meth:`L1Ball.vertices`: ``-R grad_j`` for ``+R e_j`` (j < d), ``+R grad_j`` for
    ``-R e_j``. The highest score is the exact LMO."""
    R = problem.constraint.radius if radius is None else float(radius)
    g = problem.gradient(np.asarray(w, dtype=np.float64))
    return np.concatenate([-R * g, R * g])


def dp_fw_l1_default_steps(problem: ERMProblem, budget: PrivacyBudget, w0=None) -> int:
    """The step count minimizing the explicit bound of Wang, Chen, Xu 2019, Theorem 6.

    With gamma = 1/sqrt(T), the exponential mechanism's expected excess
    ``E err_t <= (2 Delta / e0)(ln(2d) + 1)`` (McSherry & Talwar 2007) and the module
    bound give ``Phi(T) = A / sqrt(T) + M / e0(T)`` with ``A = G1 (R + ||w_1||_1) +
    2 beta R^2`` (G1 bounds ``||grad F||_inf`` on C) and ``M = 2 Delta (ln(2d) + 1)``.

    - delta = 0: ``e0 = eps / T``, minimized at ``T = (A eps / (2 M))^{2/3}`` (the
      ``(n eps)^{2/3}`` of Talwar et al. 2015);
    - delta > 0: the zCDP route gives ``e0 = sqrt(8 rho / T)``, ``rho =
      (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))^2`` (the largest rho with
      ``rho + 2 sqrt(rho ln(1/delta)) <= eps``), minimized at ``T = A sqrt(8 rho) / M``,
      Theorem 6's ``T = O(n eps / (sqrt(log(1/delta)) log(d n)))`` with explicit constant.
      The pure-DP candidate is also evaluated and the T with the smaller Phi at the
      per-step epsilon the accountant certifies (:func:`l1_step_epsilon`) wins.

    The zCDP formula above only proposes a T (a utility choice); every per-step epsilon
    comes from the accountant.
    """
    d = problem.n_features
    R = problem.constraint.radius
    w1 = 0.0 if w0 is None else float(np.abs(w0).sum())
    G1 = _l1_gradient_bound(problem, R) + problem.regularizer.l2 * R
    A = G1 * (R + w1) + 2.0 * problem.smoothness * R * R
    M = 2.0 * l1_score_sensitivity(problem) * (math.log(2.0 * d) + 1.0)
    if M <= 0 or A <= 0:
        return 1
    eps, delta = budget.epsilon, budget.delta
    candidates = [max(1, math.ceil(min((A * eps / (2.0 * M)) ** (2.0 / 3.0), 1e12)))]
    if delta > 0:
        log_inv = math.log(1.0 / delta)
        rho = (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2
        candidates.append(max(1, math.ceil(min(A * math.sqrt(8.0 * rho) / M, 1e12))))

    def phi(T):
        return A / math.sqrt(T) + M / l1_step_epsilon(budget, T, d)

    return min(candidates, key=phi)


def _l1_steps_event(steps: int, dim: int):
    """x -> the event of ``steps`` exponential-mechanism draws of parameter 1/x among the
    2 dim vertices of the L1 ball."""
    def make(x):
        return ev.repeated(ev.ExponentialMechanismRelease(1.0 / x, candidates=2 * dim), steps)
    return make


def l1_step_epsilon(budget: PrivacyBudget, steps: int, dim: int) -> float:
    """The largest per-step parameter e0 whose ``steps``-fold composition the accountant
    certifies within ``budget`` (:func:`dperm.privacy.accountant.calibrate`; nothing is
    charged): ``epsilon / T`` at delta = 0, larger with delta > 0."""
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    return 1.0 / calibrate(_l1_steps_event(check_steps("steps", steps), dim), budget).noise


@register(
    "dp_fw_l1",
    setting="non-convex (GLM, robust regression) or convex; smooth; C = L1 ball, ||x||_inf bounded",
    guarantee="epsilon or (epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 3 (Theorem 6); Talwar, Thakurta, Zhang 2015",
    paper="Wang, Chen, Xu 2019 (ICML); Talwar, Thakurta, Zhang 2015, Nearly optimal private LASSO (NeurIPS)",
    requires=("smooth", "lipschitz", "bounded_constraint", "smooth_regularizer"),
    gradient_complexity="n T, T = A sqrt(8 rho) / M (delta > 0) or (A eps / 2M)^(2/3) (delta = 0), capped",
    summary="Frank-Wolfe over the L1 ball; each vertex chosen by the exponential mechanism (Gumbel-max)",
    auto=AutoRule(5, lambda p, b: p.is_smooth and isinstance(p.constraint, L1Ball) and p.n_features > p.n_samples,
                  'L1-ball constraint in high dimension: private Frank-Wolfe over the vertices'),
)
def dp_fw_l1(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    step_size=None,
    max_steps: int = 1000,
    output: str = "random",
    init=None,
    keep_iterates: bool = False,
) -> PrivateFit:
    """Private Frank-Wolfe over the L1 ball by the exponential mechanism (Wang, Chen, Xu 2019,
    Algorithm 3; Talwar, Thakurta, Zhang 2015).

    For t = 1..T: draw a vertex ``s_t`` of ``{||w||_1 <= R}`` among the 2d vertices
    ``+-R e_j`` with probability proportional to ``exp(e0 u(s) / (2 Delta))``,
    ``u(s) = -<s, grad F(w_t)>`` (Gumbel-max: an exact sample), then
    ``w_{t+1} = (1 - gamma_t) w_t + gamma_t s_t``; return ``w_R`` for R uniform on
    {1..T} (default) or the last iterate. No Python loop over examples: one full
    gradient ``X^T phi'(X w, y) / n`` per step, dense or CSR.

    Assumptions
        A smooth loss (beta-smooth F, smooth regularizer), C the L1 ball
        ``('l1_ball', R)`` of the problem, and a public bound ``X_inf`` on ``||x_i||_inf``.
        The paper takes ``||x||_inf <= 1`` and R = 1. ERMProblem declares
        ``||x||_2 <= data_norm`` (enforced by clipping) and ``||x||_inf <= ||x||_2``, so
        ``X_inf = data_norm`` is the tightest public bound available; it is tight for
        sparse rows and pessimistic by up to sqrt(d) for dense ones.

    Privacy (exact accounting)
        The score of ``+-R e_j`` is ``-+R (grad F)_j``; replacing one row moves every
        coordinate of the mean gradient by at most ``2 L_phi X_inf / n``, so the scores
        have sensitivity ``Delta = 2 R L_phi X_inf / n``, with L_phi =
        ``problem.loss.lipschitz(R X_inf, label_bound)`` (margins satisfy
        ``|<w, x>| <= ||w||_1 ||x||_inf``). Each step is then e0-DP (McSherry & Talwar
        2007) and e0-bounded-range, hence ``e0^2/8``-zCDP. e0 is the largest value (to
        relative precision 1e-4) whose T-fold composition the accountant certifies within
        the budget (:func:`~dperm.privacy.mechanisms.calibrate_and_charge` on T
        :class:`~dperm.privacy.events.ExponentialMechanismRelease` events; delta = 0:
        ``e0 = eps / T``; delta > 0: the best of advanced composition, zCDP and the
        privacy-loss distribution of T e0-DP steps); this beats the paper's
        ``eps / sqrt(8 T ln(1/delta))`` (advanced composition) by about 2x in e0.
        ``privacy_spent`` is the certified guarantee.

    Utility
        ``E gap(w_R) <= A / (gamma T) + 2 beta gamma R^2 + (2 Delta / e0)(ln(2d) + 1)``
        with ``A = G1 (R + ||w_1||_1)``, G1 bounding ``||grad F||_inf`` on C: logarithmic
        in d. At the default T it is
        ``O(log(1/delta)^{1/4} sqrt(log d) / sqrt(n eps))`` (Theorem 6, which states it with
        high probability and as excess population risk under the paper's assumptions).
        Returned as ``info["gap_bound"]`` (constant steps only).

    Parameters
    ----------
    problem : ERMProblem
        With constraint ``('l1_ball', R)``.
    budget : PrivacyBudget
        epsilon (delta = 0) or (epsilon, delta).
    rng : None, int or numpy Generator
        Source of all randomness.
    steps : int, optional
        T. Default :func:`dp_fw_l1_default_steps` (the minimizer of the explicit Theorem 6
        bound, whose constants the theorem hides); capped by ``max_steps``, the uncapped
        value in ``info["theorem_steps"]``.
    step_size : None, "decreasing" or float in (0, 1]
        Default ``gamma_t = min(1, 1/sqrt(T))`` (Theorem 6: ``gamma = O(1/sqrt(T))`` at its
        T); ``"decreasing"``: ``2/(t+2)`` as in Talwar et al. 2015 (with ``output="last"``).
    max_steps : int, default 1000
        Cap on the default T.
    output : {"random", "last"}
        ``"random"`` (the paper's) or ``"last"``.
    init : array-like, optional
        Public ``w_1`` (default 0).
    keep_iterates : bool
        Store ``w_1..w_{T+1}`` in ``info["iterates"]`` (all private, post-processing).

    Returns
    -------
    PrivateFit
        ``event`` the T exponential-mechanism draws (``epsilon`` = e0, ``candidates`` =
        2d); ``info`` holds ``step_epsilon`` (e0), ``score_sensitivity`` (Delta),
        ``linf_bound``, ``theorem_steps``, ``selected_iterate`` and ``gap_bound``.

    References
    ----------
    Wang, Chen, Xu 2019, Algorithm 3 and Theorem 6; Talwar, Thakurta, Zhang
    2015, Algorithm 1; McSherry & Talwar 2007; Dong, Durfee, Rogers 2020 and Cesar &
    Rogers 2021 (bounded range, zCDP); Bun & Steinke 2016; Dwork, Rothblum, Vadhan 2010.
    """
    source = "Wang, Chen, Xu 2019, Alg. 3"
    R = _require_constraint("dp_fw_l1", source, problem, L1Ball, "('l1_ball', R)")
    secure = secure_randomness(rng)
    rng = start("dp_fw_l1", problem, budget, rng)
    output = _check_output(output)
    d = problem.n_features
    w0 = initial_point(problem, init)
    theorem_T = dp_fw_l1_default_steps(problem, budget, w0)
    T = min(theorem_T, check_steps("max_steps", max_steps)) if steps is None else check_steps("steps", steps)
    gammas, gamma = _step_schedule(step_size, T)
    sensitivity = l1_score_sensitivity(problem)
    calibration = calibrate_and_charge(_l1_steps_event(T, d), budget, "dp_fw_l1")
    e0 = 1.0 / calibration.noise

    def select(g, w):
        k = exponential_select(rng, np.concatenate([-R * g, R * g]), e0, sensitivity, secure=secure)
        return (k, R) if k < d else (k - d, -R)

    coef, selected, iterates = _run(problem, w0, gammas, select, rng, output, keep_iterates)
    gap_bound = None
    if gamma is not None:
        G1 = _l1_gradient_bound(problem, R) + problem.regularizer.l2 * R
        A = G1 * (R + float(np.abs(w0).sum()))
        gap_bound = (A / (gamma * T) + 2.0 * problem.smoothness * gamma * R * R
                     + 2.0 * sensitivity / e0 * (math.log(2.0 * d) + 1.0))
    return _fit(
        "dp_fw_l1", coef, selected, iterates, calibration,
        {"steps": T, "step_size": "decreasing" if gamma is None else gamma, "radius": R, "output": output},
        {"theorem_steps": theorem_T, "gap_bound": gap_bound, "step_epsilon": e0, "score_sensitivity": sensitivity,
         "linf_bound": _linf_bound(problem)},
    )
