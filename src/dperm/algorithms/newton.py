"""Private Newton's method for convex GLMs (Ganesh, Haghifam, Steinke, Thakurta 2023): ``dp_newton``.

The objective is ``F(w) = (1/n) sum_i s_i phi(<w, x_i>, y_i) + (mu/2) ||w||^2`` with a
built-in margin (GLM) loss phi that is convex and smooth (``0 <= phi'' <= beta_phi``),
no constraint, ``mu >= 0``. Each iteration computes a Newton direction from private
releases; two mechanisms are offered.

``mechanism="double_noise"`` (default): the paper's practical algorithm
------------------------------------------------------------------------
Ganesh, Haghifam, Steinke, Thakurta 2023, the "double noise" mechanism for unconstrained
logistic regression (the paper's practical second-order method, ``DoubleNoiseMech`` with
``type_reg="add"`` and ``curvature_info="hessian"`` in the authors' code,
tensorflow/privacy ``research/dp_newton``). From the public iterate ``w_t``, each of the T
iterations makes three Gaussian releases:

1. the gradient ``g~ = grad F(w_t) + N(0, sigma_g^2 I)``;
2. the trace of the loss Hessian ``tau~ = tr grad^2 L(w_t) + N(0, sigma_tr^2)``, which sets
   the eigenvalue shift ``lambda_0 = max((c max(tau~, 0) / (n^2 rho_dir))^(1/3), 1/n)``
   (the paper's rule; ``c`` = ``trace_coefficient``, ``rho_dir = mu_dir^2 / 2`` the zCDP
   parameter of one direction release, ``mu_dir`` its Gaussian-DP parameter);
3. the direction ``d~ = (grad^2 F(w_t) + lambda_0 I)^-1 g~ + N(0, sigma_d^2 I)``, whose
   sensitivity depends on the released ``g~`` and ``lambda_0`` (below);

and ``w_{t+1} = w_t - d~`` (a full step, as the paper). The output is ``w_T``.

The shift rule (as in the authors' code) makes the direction noise, relative to the step,
grow like ``n^(1/3) rho^(1/6)`` far from the optimum: on the regression study the iterates
diverge at every n and epsilon (docs/results.md). ``eigenvalue_floor="stable"`` (dperm's
addition, not the default) raises the floor ``1/n`` of ``lambda_0`` to
:func:`stable_floor`, a public function of n, d, beta, mu and the calibrated noise.

``mechanism="noisy_hessian"``: private damped Newton with a noisy Hessian
-----------------------------------------------------------------------
The baseline the paper compares with (a private Newton step in the manner of Avella-Medina,
Bradshaw, Loh 2021): per iteration the gradient and the loss Hessian ``H = grad^2 L(w_t)``
are released with Gaussian noise (the Hessian through its isometric upper triangle), the
noisy Hessian is projected on the PSD cone, and ``w_{t+1} = w_t - (H~_+ + (mu + t) I)^-1 g~``
with ``t`` the high-probability bound on the Hessian noise's operator norm
(:func:`~dperm.algorithms.sufficient_statistics.noise_operator_bound`, the ridge SSP and
AdaSSP use). Deviation: the authors' baseline floors the eigenvalues at 1e-5 and damps the
step with the norm of the *non-private* Newton direction, which is not private; dperm's
step uses public quantities only.

Replace-one sensitivities, from the declared bounds only
--------------------------------------------------------
Rows ``||x|| <= R`` (``data_norm``, intercept column included), labels ``|y| <= B``
(``label_bound``), weights ``s in [0, 1]``; ``beta = beta_phi R^2`` is the loss part's
smoothness (``problem.constants.loss_smoothness``). Neighbours differ in one record
``(x, y, s) -> (x', y', s')``.

*Gradient.* The mean loss gradient moves by ``(s phi'(<w, x>, y) x - s' phi'(<w, x'>, y')
x') / n``, of norm at most ``2 L_t / n`` with ``L_t = R sup {|phi'(a, y)| : |a| <= R ||w_t||,
|y| <= B}`` (``phi`` convex, so ``|phi'|`` is largest at the ends of the interval). ``w_t``
is public (a post-processing of earlier releases), so ``L_t`` is a public, data-independent
bound: ``R`` for the logistic loss, ``R min(k, R ||w_t|| + B)`` for Huber, ``R (R ||w_t|| +
B)`` for the squared loss (which is Lipschitz only on a bounded set). The gradient is
released in units of this bound: ``g / (2 L_t / n)`` has sensitivity 1, and the event
records a unit-sensitivity release of std ``sigma_g / (2 L_t / n)``, constant over t.

*Trace.* The per-example trace ``s phi'' ||x||^2`` lies in ``[0, beta]``, so the mean trace
moves by at most ``beta / n`` (attained by a row with ``phi'' = beta_phi`` at norm R
replaced by a zero row).

*Hessian (Frobenius).* For a convex GLM the per-example Hessians ``P = (s phi''/n) x x^T``
and ``Q = (s' phi''/n) x' x'^T`` are positive semidefinite with ``||P||_F = s phi'' ||x||^2 / n
<= beta / n``, and ``<P, Q>_F = s s' phi''(<w, x>, y) phi''(<w, x'>, y') <x, x'>^2 / n^2 >= 0``
(convexity: ``phi'' >= 0``), so

    ||P - Q||_F^2 = ||P||_F^2 + ||Q||_F^2 - 2 <P, Q>_F <= 2 beta^2 / n^2:

the mean Hessian has replace-one Frobenius sensitivity ``sqrt(2) beta / n`` (not the
``2 beta / n`` of the triangle inequality, which dp_sosp needs for non-convex losses);
attained by two orthogonal rows of norm R at curvature ``beta_phi`` (any w for the squared
loss, margin 0 for the logistic). It is released as the isometric vector of its upper
triangle (off-diagonal entries times sqrt 2, whose norm is the Frobenius norm), as the Gram
matrix of :mod:`~dperm.algorithms.sufficient_statistics`.

*Direction (double noise).* Let ``A = grad^2 F(w_t) + lambda_0 I = C + u u^T`` and ``A' = C
+ v v^T`` with C the common part, ``C >= lambda I``, ``lambda = lambda_0 + mu``, and
``u = sqrt(s phi''/n) x``, ``||u||^2 <= beta / n`` (v likewise). By Sherman-Morrison
``C^-1 - A^-1 = C^-1 u u^T C^-1 / (1 + u^T C^-1 u)``, PSD with operator norm at most
``||C^-1 u||^2 / (1 + u^T C^-1 u) <= (1/lambda) s_u / (1 + s_u)`` with ``s_u = u^T C^-1 u <=
beta / (n lambda)``, so at most ``beta / (n lambda^2 + beta lambda)``. ``A^-1 - A'^-1 =
(C^-1 - A'^-1) - (C^-1 - A^-1)`` is a difference of two PSD matrices, whose operator norm
is at most the larger of theirs. Hence, ``g~`` being already released,

    ||A^-1 g~ - A'^-1 g~|| <= ||g~|| beta / (n lambda^2 + beta lambda) =: Delta_d,

a function of released and public values only. It is the paper's add/remove bound, which
holds unchanged under replace-one by the PSD argument; it is attained when C = lambda I on
the span of x, g~ is parallel to x and x' has zero curvature (e.g. x' = 0). The direction
is released in units of ``Delta_d`` (sensitivity 1). When ``Delta_d = 0`` (``g~ = 0``) the
direction is 0 on every dataset and is returned without noise.

Privacy accounting
------------------
Every release is a :func:`~dperm.privacy.events.gaussian_release`; a fit is their adaptive
composition over the T iterations (Gaussian DP composes as ``mu^2 = sum_k mu_k^2``, Dong,
Roth, Su 2019, exactly). The standard deviations all scale with one noise level x (the
shares split ``mu^2``: ``gradient_share`` to the gradients, the rest to the curvature
releases, ``trace_share`` of it to the traces), x is the smallest level the accountant
certifies within the budget (:func:`~dperm.privacy.mechanisms.calibrate_and_charge`), and
the composition is ``PrivateFit.event``. Without a seed every release goes through the
floating-point-safe sampler (:func:`~dperm.privacy.mechanisms.release`).

References
----------
.. [1] Ganesh, Haghifam, Steinke, Thakurta. Faster differentially private convex
   optimization via second-order methods. NeurIPS 2023 (arXiv 2305.13209).
.. [2] Avella-Medina, Bradshaw, Loh. Differentially private inference via noisy
   optimization. Annals of Statistics 2023 (arXiv 2103.11003).
.. [3] Dong, Roth, Su. Gaussian differential privacy. JRSS-B 2022.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import events as ev
from ..privacy.budget import PrivacyBudget
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness, single_release
from ..problem.erm import ERMProblem
from ..problem.losses import MarginLoss
from ..result import PrivateFit
from ._common import check_steps, initial_point, start
from .registry import AssumptionError, register
from .sufficient_statistics import _psd, _solve, _symmetric, _upper, noise_operator_bound

__all__ = ["dp_newton", "gradient_bound", "trace_sensitivity", "hessian_frobenius_sensitivity",
           "direction_sensitivity", "eigenvalue_shift", "stable_floor", "MECHANISMS", "FLOORS"]

MECHANISMS = ("double_noise", "noisy_hessian")
FLOORS = ("paper", "stable")
_SQRT2 = math.sqrt(2.0)


# ------------------------------------------------------------------------ sensitivities
def gradient_bound(problem: ERMProblem, w: np.ndarray) -> float:
    """``2 L_t / n``: the replace-one L2 sensitivity of the mean loss gradient at the public
    point w, ``L_t = R sup{|phi'(a, y)| : |a| <= R ||w||, |y| <= B}`` (module notes)."""
    R = problem.data_norm
    margin = R * float(np.linalg.norm(w))
    lipschitz = R * problem.loss.lipschitz(margin, problem.label_bound)
    return 2.0 * min(lipschitz, problem.lipschitz) / problem.n_samples


def trace_sensitivity(problem: ERMProblem) -> float:
    """``beta / n``: replace-one sensitivity of the trace of the mean loss Hessian."""
    return problem.constants.loss_smoothness / problem.n_samples


def hessian_frobenius_sensitivity(problem: ERMProblem) -> float:
    """``sqrt(2) beta / n``: replace-one Frobenius sensitivity of the mean loss Hessian of a
    convex GLM (module notes; also the L2 sensitivity of its isometric upper triangle)."""
    return _SQRT2 * problem.constants.loss_smoothness / problem.n_samples


def direction_sensitivity(noisy_gradient_norm: float, beta: float, n: int, lam: float) -> float:
    """``||g~|| beta / (n lambda^2 + beta lambda)``: replace-one sensitivity of
    ``(grad^2 F + lambda_0 I)^-1 g~`` for a released ``g~`` and ``lambda = lambda_0 + mu``
    (module notes, Sherman-Morrison)."""
    return noisy_gradient_norm * beta / (n * lam * lam + beta * lam)


def eigenvalue_shift(noisy_trace: float, coefficient: float, n: int, direction_mu: float,
                     floor: float | None = None) -> float:
    """The paper's ``lambda_0 = max((c max(tau~, 0) / (n^2 rho))^(1/3), floor)`` with
    ``rho = direction_mu^2 / 2`` the zCDP parameter of one direction release and the
    paper's floor ``1/n`` by default."""
    rho = 0.5 * direction_mu * direction_mu
    floor = 1.0 / n if floor is None else floor
    return max((coefficient * max(noisy_trace, 0.0) / (n * n * rho)) ** (1.0 / 3.0), floor)


def stable_floor(n: int, d: int, beta: float, mu: float, direction_mu: float) -> float:
    """The smallest shift ``lambda_0 >= 1/n`` at which the direction noise is at most half the
    gradient's worst-case scale: with ``lambda = lambda_0 + mu``, ``sqrt(d) Delta_d /
    (||g~|| mu_dir) <= 1 / (2 (beta + mu))``, i.e. ``n lambda^2 + beta lambda >= 2 sqrt(d)
    beta (beta + mu) / mu_dir``. Near the optimum ``||g|| <= (beta + mu) ||w - w*||``, so the
    noise then adds at most half of ``||w - w*||`` per step in expectation of its norm: the
    iteration stays contracting. A function of n, d, the declared bounds and the calibrated
    noise only (public); dperm's addition, not the paper's (``eigenvalue_floor="stable"``)."""
    target = 2.0 * math.sqrt(d) * beta * (beta + mu) / direction_mu
    lam = (-beta + math.sqrt(beta * beta + 4.0 * n * target)) / (2.0 * n)
    return max(lam - mu, 1.0 / n)


# ------------------------------------------------------------------------ checks
def _fraction(name: str, value) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return value


def _glm_checks(problem: ERMProblem) -> float:
    """beta, after refusing what the sensitivities above do not cover."""
    if not isinstance(problem.loss, MarginLoss) or not problem.loss.convex:
        raise AssumptionError("dp_newton needs a built-in convex margin (GLM) loss: its sensitivities rest on "
                              "PSD rank-one per-example Hessians")
    beta = float(problem.constants.loss_smoothness)
    if not (math.isfinite(beta) and beta > 0):
        raise AssumptionError(f"dp_newton needs a smooth loss with curvature (the {problem.loss.name} loss has "
                              f"smoothness {beta})")
    return beta


def _event(mechanism: str, T: int, grad_share: float, trace_share: float, dt: float, dh: float, secure: bool):
    """x -> the composed event of T iterations at noise level x (x = 1 / mu, mu the total
    Gaussian-DP parameter). Gradients and directions are released in units of their
    sensitivity (sensitivity 1)."""
    curvature = 1.0 - grad_share

    def make(x):
        gradients = ev.repeated(ev.gaussian_release(x * math.sqrt(T / grad_share), 1.0, secure=secure), T)
        if mechanism == "noisy_hessian":
            hessians = ev.repeated(ev.gaussian_release(x * dh * math.sqrt(T / curvature), dh, secure=secure), T)
            return ev.composed([gradients, hessians])
        traces = ev.repeated(ev.gaussian_release(x * dt * math.sqrt(T / (curvature * trace_share)), dt,
                                                 secure=secure), T)
        directions = ev.repeated(ev.gaussian_release(x * math.sqrt(T / (curvature * (1.0 - trace_share))), 1.0,
                                                     secure=secure), T)
        return ev.composed([gradients, traces, directions])

    return make


def _release_scaled(rng, value: np.ndarray, scale: float, event) -> np.ndarray:
    """``value`` released through a unit-sensitivity ``event`` in units of ``scale`` (its
    public sensitivity): ``scale * release(value / scale)``."""
    return scale * release(rng, np.asarray(value, dtype=np.float64) / scale, event)


def _loss_hessian(problem: ERMProblem, w: np.ndarray) -> np.ndarray:
    """The mean loss Hessian (the l2 part mu I removed: it is data independent)."""
    H = problem.hessian(w)
    H[np.diag_indices_from(H)] -= problem.regularizer.l2
    return H


# ---------------------------------------------------------------------------- dp_newton
@register(
    "dp_newton",
    setting="convex GLM: smooth convex margin loss, l2 regularizer allowed; unconstrained",
    guarantee="(epsilon, delta)",
    source="Ganesh, Haghifam, Steinke, Thakurta 2023 (double-noise private Newton, 'add' modification)",
    paper="Ganesh, Haghifam, Steinke, Thakurta 2023 (NeurIPS), Faster differentially private convex "
          "optimization via second-order methods",
    requires=("convex", "smooth", "smooth_regularizer", "unconstrained", "approximate_dp", "margin_loss"),
    gradient_complexity="T full gradients and T d x d Hessians (n d^2 each) and solves, T = 15 by default",
    summary="Newton steps from a noisy gradient and a noisy Newton direction (Hessian + private eigenvalue "
            "shift), or from a noisy gradient and a noisy Hessian",
)
def dp_newton(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int = 15,
    mechanism: str = "double_noise",
    gradient_share: float = 0.7,
    trace_share: float = 0.1,
    trace_coefficient: float = 0.5,
    eigenvalue_floor: str = "paper",
    failure_probability: float = 0.05,
    init=None,
) -> PrivateFit:
    """Private Newton's method (Ganesh, Haghifam, Steinke, Thakurta 2023).

    ``mechanism="double_noise"`` (default) is the paper's double-noise mechanism with the
    "add" eigenvalue modification on the exact Hessian: per iteration a noisy gradient
    ``g~``, a noisy Hessian trace that sets the shift ``lambda_0`` by the paper's rule, and
    the noisy direction ``(grad^2 F(w_t) + lambda_0 I)^-1 g~ + N(0, sigma_d^2 I)``, its noise
    scaled to the sensitivity ``||g~|| beta / (n lambda^2 + beta lambda)``, ``lambda =
    lambda_0 + mu``; then ``w_{t+1} = w_t - d~``. ``mechanism="noisy_hessian"``: the private
    damped-Newton baseline, a noisy gradient and a noisy Hessian (Frobenius sensitivity
    ``sqrt(2) beta / n``) per iteration, ``w_{t+1} = w_t - (H~_+ + (mu + t) I)^-1 g~``.
    Module notes: the sensitivities and their proofs.

    Choices and deviations from the paper: the defaults T = 15, ``gradient_share`` 0.7,
    ``trace_share`` 0.1 and ``trace_coefficient`` 0.5 are those of the authors' privacy-utility
    script; their budget split is in zCDP and dperm's in Gaussian DP (the same proportions
    of ``mu^2 = 2 rho``), calibrated exactly by the accountant rather than by the zCDP
    conversion. The paper starts from a random unit vector; dperm from ``init`` (default 0).
    The paper treats add/remove neighbours (gradient sensitivity ``1/n``); dperm's
    replace-one gradient sensitivity is ``2 L_t / n`` and the direction's bound is the
    same (module notes). The paper's "clip" modification (eigenvalues floored at
    ``lambda_0``) and its quadratic-upper-bound curvature and stochastic variants are not
    implemented; the paper's private cubic-regularized Newton method (for strongly convex
    losses) neither.

    Parameters
    ----------
    problem : ERMProblem
        A built-in convex, smooth margin loss (logistic, squared, Huber, huberized hinge,
        ...), regularizer None or ``("l2", mu)``, no constraint. Rows of norm <=
        ``data_norm``, labels ``|y| <= label_bound`` (clipped by the problem).
    budget : PrivacyBudget
        delta > 0: (epsilon, delta)-DP under replace-one.
    rng : None, int or numpy.random.Generator
        ``None``: the floating-point-safe sampler; a seed or Generator: NumPy's noise.
    steps : int, default 15
        T, the number of Newton iterations (all of them are accounted).
    mechanism : {"double_noise", "noisy_hessian"}
    gradient_share : float in (0, 1), default 0.7
        Share of ``mu^2`` spent on the gradients.
    trace_share : float in (0, 1), default 0.1
        Share of the curvature budget spent on the traces (double noise only).
    trace_coefficient : float > 0, default 0.5
        c of the paper's ``lambda_0`` rule (double noise only).
    eigenvalue_floor : {"paper", "stable"}, default "paper"
        The lower bound of ``lambda_0`` (double noise only): the paper's ``1/n``, or
        :func:`stable_floor` (dperm's addition): with the paper's rule the direction noise
        relative to the step grows like ``n^(1/3) rho^(1/6)`` far from the optimum, and the
        iterates diverge on the regression study (docs/results.md); the stable floor keeps
        the noise below half the worst-case gradient scale.
    failure_probability : float in (0, 1), default 0.05
        The probability with which the Hessian noise may exceed the ridge ``t``
        (noisy_hessian only; utility, not privacy).
    init : array-like, optional
        Public starting point w_0 (default 0).

    Returns
    -------
    PrivateFit
        ``event``: the composition of the gradient, trace and direction releases (or
        gradient and Hessian releases), all T iterations accounted. Should the iterates
        overflow float64 (a diverging run), the last finite iterate is returned and the
        remaining iterations are skipped (post-processing of the releases).

    References
    ----------
    Ganesh, Haghifam, Steinke, Thakurta 2023 (NeurIPS); Avella-Medina, Bradshaw, Loh 2021
    (the noisy-Hessian baseline); Dong, Roth, Su 2019 (composition).
    """
    name = "dp_newton"
    secure = secure_randomness(rng)
    rng = start(name, problem, budget, rng)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    if eigenvalue_floor not in FLOORS:
        raise ValueError(f"eigenvalue_floor must be one of {FLOORS}, got {eigenvalue_floor!r}")
    T = check_steps("steps", steps)
    grad_share = _fraction("gradient_share", gradient_share)
    trace_share = _fraction("trace_share", trace_share)
    rho_fail = _fraction("failure_probability", failure_probability)
    coefficient = float(trace_coefficient)
    if not (math.isfinite(coefficient) and coefficient > 0):
        raise ValueError(f"trace_coefficient must be a finite number > 0, got {trace_coefficient!r}")
    beta = _glm_checks(problem)
    w = initial_point(problem, init)
    n, d, mu = problem.n_samples, problem.n_features, problem.regularizer.l2
    dt, dh = trace_sensitivity(problem), hessian_frobenius_sensitivity(problem)

    calibration = calibrate_and_charge(_event(mechanism, T, grad_share, trace_share, dt, dh, secure), budget, name)
    leaves = [single_release(e) for e in calibration.event.events]
    gradients = leaves[0]
    if mechanism == "double_noise":
        traces, directions = leaves[1], leaves[2]
        direction_mu = 1.0 / directions.sigma  # Gaussian-DP parameter of one direction release
        floor = stable_floor(n, d, beta, mu, direction_mu) if eigenvalue_floor == "stable" else 1.0 / n
        for _ in range(T):
            g = _release_scaled(rng, problem.gradient(w), gradient_bound(problem, w), gradients)
            H = problem.hessian(w)  # grad^2 F (mu I included)
            loss_trace = float(np.trace(H)) - d * mu
            lam0 = eigenvalue_shift(float(release(rng, np.array([loss_trace]), traces)[0]), coefficient, n,
                                    direction_mu, floor)
            H[np.diag_indices_from(H)] += lam0
            direction = _solve(H, g)
            scale = direction_sensitivity(float(np.linalg.norm(g)), beta, n, lam0 + mu)
            if scale > 0:  # otherwise g~ = 0 and the direction is 0 on every dataset
                direction = _release_scaled(rng, direction, scale, directions)
            if not np.all(np.isfinite(w - direction)):
                break  # diverged past float64: keep the last finite iterate (post-processing)
            w = w - direction
    else:
        hessians = leaves[1]
        ridge = mu + noise_operator_bound(hessians.sigma, d, rho_fail)  # public: the calibrated noise
        for _ in range(T):
            g = _release_scaled(rng, problem.gradient(w), gradient_bound(problem, w), gradients)
            noisy = _symmetric(release(rng, _upper(_loss_hessian(problem, w)), hessians), d)
            step = _solve(_psd(noisy) + ridge * np.eye(d), g)
            if not np.all(np.isfinite(w - step)):
                break  # diverged past float64: keep the last finite iterate (post-processing)
            w = w - step
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm=name,
        event=calibration.event,
        hyperparameters={"steps": T, "mechanism": mechanism, "gradient_share": grad_share,
                         "trace_share": trace_share, "trace_coefficient": coefficient,
                         "eigenvalue_floor": eigenvalue_floor, "failure_probability": rho_fail},
        info={},
    )
