"""Private second-order stationary points (Wang, Chen, Xu 2019, Section 5): ``dp_sosp`` and ``dp_gd_so``.

An alpha-second-order stationary point (alpha-SOSP, Wang, Chen, Xu 2019, Definition 9) of a
twice-differentiable F is a w with ``||grad F(w)|| <= alpha`` and
``lambda_min(grad^2 F(w)) >= -sqrt(rho alpha)``, rho the Hessian-Lipschitz constant.

- ``dp_sosp`` (Algorithms 4 + 5, Theorems 7-8, unconstrained): noisy gradient descent
  keeps all its iterates (public post-processing); a private selection then releases,
  per candidate iterate, a noisy gradient and a noisy symmetric Hessian, and returns the
  first candidate whose noisy measurements *certify* an alpha-SOSP once the noise's
  high-probability magnitude is subtracted.
- ``dp_gd_so`` (Algorithm 6, Theorem 9, C an L2 ball): noisy Frank-Wolfe steps while the
  noisy Frank-Wolfe gap is large; otherwise a noisy Hessian and the quadratic sub-problem
  ``min (u - w)^T H (u - w)`` over ``C cap {g^T (u - w) <= r}`` (a trust-region problem
  with one linear constraint), solved exactly by :func:`ball_halfspace_quadratic`.

The sub-problem solvers and the noise bounds live in
:mod:`dperm.algorithms._sosp_subproblems` (re-exported here).

Privacy: every release is a full-batch Gaussian mechanism
-------------------------------------------------------------
*Gradients.* The mean loss gradient has replace-one L2 sensitivity ``Delta_g = 2 L / n``.

*Hessians.* For a margin loss the per-example Hessian is ``phi''(<w, x>, y) x x^T``, a
rank-one matrix of Frobenius (and operator) norm ``|phi''| ||x||^2 <= beta_phi R^2 =
beta`` (``problem.constants.loss_smoothness``; the l2 regularizer's ``mu I`` is data
independent). Replacing one row moves the mean Hessian by at most ``2 beta / n`` in
Frobenius norm. (Wang, Chen, Xu 2019's ``sigma_2^2 ~ d M^2 T log(1/delta) / (n eps)^2`` carries an
extra factor d from bounding a general Hessian's Frobenius norm by ``sqrt(d)`` times its
operator norm; for rank-one per-example Hessians it is not needed.) Both algorithms
refuse a custom loss (requirement ``margin_loss``): its Hessian-vector products are not
clipped, so the sensitivity of its central-difference or declared Hessians would rest on
a smoothness dperm cannot enforce.

The noisy Hessian is ``H + E`` with E symmetric, its upper triangle (diagonal included)
i.i.d. ``N(0, sigma_2^2)`` and the lower triangle copied (Wang, Chen, Xu 2019, Algorithm 5, step 5;
:func:`~dperm.privacy.noise.symmetric_gaussian_matrix`). Releasing it is exactly the
Gaussian mechanism on the vector ``v(H) = (H_ii)_i ++ (H_ij)_{i<j}`` of the d(d+1)/2
upper-triangular entries *without* any rescaling, followed by the public map
``v -> symmetric matrix``. The sensitivity of that vector is

    ||v(Delta H)||_2^2 = sum_i Delta_ii^2 + sum_{i<j} Delta_ij^2
                       = (||Delta H||_F^2 + sum_i Delta_ii^2) / 2 <= ||Delta H||_F^2,

so ``Delta_H = 2 beta / n`` (attained when Delta H is diagonal, e.g. rows along a
coordinate axis). Were the off-diagonal entries scaled by sqrt 2 to make ``||v|| =
||.||_F`` exactly, the off-diagonal noise of H would have variance ``sigma^2 / 2``: a
different distribution from the paper's, which we keep. A release of std ``sigma`` and
sensitivity Delta is ``Delta / sigma``-Gaussian-DP, and adaptive compositions of
Gaussian-DP mechanisms compose as ``mu^2 = sum_i mu_i^2`` (Dong, Roth, Su 2019), exactly.

Both algorithms describe the worst case of every release they might make as one event
(:mod:`dperm.privacy.events`: a composition of Gaussian releases, one phase per kind of
release, whose standard deviations all scale with one noise level x in the ratios set by
the phase split and the Hessian share) and take x from the accountant's calibration
(selection or stopping early only skips releases, which is post-processing of a run that
made them all), so the reported ``privacy_spent`` is the whole budget whatever the
outcome.

High-probability noise bounds (used to certify, stated with their proofs)
------------------------------------------------------------------------
*Gaussian vector* ``z ~ N(0, s^2 I_d)``: ``||z||`` is an s-Lipschitz function of a
standard Gaussian with mean ``<= s sqrt(d)``; Gaussian concentration gives
``P(||z|| > s (sqrt(d) + sqrt(2 ln(1/p)))) <= p`` (:func:`gaussian_norm_bound`).

*Symmetric noise* E as above, entries of std s: the process ``X_u = u^T E u`` on the
unit sphere has increments ``E(X_u - X_v)^2 <= 2 s^2 ||uu^T - vv^T||_F^2 <=
4 s^2 ||u - v||^2 = E(Y_u - Y_v)^2`` with ``Y_u = 2 s <g, u>``; Sudakov-Fernique gives
``E lambda_max(E) <= 2 s E||g|| <= 2 s sqrt(d)``, and ``Var X_u <= 2 s^2``, so the
Borell-TIS inequality gives ``P(lambda_max(E) > s (2 sqrt(d) + 2 sqrt(ln(1/p)))) <= p``
(:func:`symmetric_noise_eigenvalue_bound`); the same for ``-lambda_min(E)``.

*Secure path* (``rng=None``): every gradient and Hessian (upper triangle) is a
floating-point-safe grid release with exact discrete Gaussian noise, and the margins are
:func:`~dperm.algorithms._sosp_subproblems.release_norm_bound` and
:func:`~dperm.algorithms._sosp_subproblems.release_eigenvalue_bound`: the bounds above at
the coupled continuous std plus the grid perturbation (docs/privacy.md, "The certificates
of dp_sosp and dp_gd_so on the secure path"). A seed keeps NumPy's normals and the bounds
above, bit for bit.

References
----------
.. [1] Wang, Chen, Xu. Differentially private empirical risk minimization with
   non-convex loss functions. ICML 2019, Algorithms 4-6, Theorems 7-9.
.. [2] Dong, Roth, Su. Gaussian differential privacy. JRSS-B 2022 (arXiv 2019).
.. [3] Mokhtari, Ozdaglar, Jadbabaie. Escaping saddle points in constrained
   optimization. NeurIPS 2018 (the second-order step of Algorithm 6).
.. [4] Moré, Sorensen. Computing a trust region step. SIAM J. Sci. Stat. Comput. 1983;
   Martínez. Local minimizers of quadratic functions on Euclidean balls and spheres.
   SIAM J. Optim. 1994 (the trust-region sub-solver and its local-non-global minimizer).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import theory
from ..privacy import events as ev
from ..privacy.budget import PrivacyBudget
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness, single_release
from ..privacy.noise import symmetric_gaussian_matrix
from ..problem.constraints import L2Ball
from ..problem.erm import ERMProblem
from ..problem.losses import Biweight, MarginLoss, SigmoidSquared
from ..result import PrivateFit
from ._common import check_step_size, check_steps, initial_point, start
from ._sosp_subproblems import (
    ball_halfspace_quadratic,
    candidate_indices,
    check_probability,
    gaussian_norm_bound,
    release_eigenvalue_bound,
    release_norm_bound,
    symmetric_noise_eigenvalue_bound,
    trust_region_subproblem,
)
from .nonconvex_gd import noisy_gd_path
from .registry import AssumptionError, register
from .._warnings import user_stacklevel

__all__ = [
    "dp_sosp",
    "dp_gd_so",
    "hessian_sensitivity",
    "gaussian_norm_bound",
    "symmetric_noise_eigenvalue_bound",
    "trust_region_subproblem",
    "ball_halfspace_quadratic",
]

_PHI = 1.0  # approximation factor of the sub-problem solver: exact, so Phi = 1


# ------------------------------------------------------------------------ sensitivities
def hessian_sensitivity(problem: ERMProblem) -> float:
    """Replace-one sensitivity of the mean Hessian of a margin loss, in Frobenius norm.

    ``2 beta / n`` with ``beta = beta_phi R^2`` the loss part's smoothness: per-example
    Hessians ``phi'' x x^T`` are rank one with Frobenius norm ``|phi''| ||x||^2 <= beta``.
    The value also bounds the L2 sensitivity of the vector of upper-triangular entries
    (module notes). A custom loss has no such structure (and its Hessians are computed
    from unclipped gradients): AssumptionError.
    """
    if not isinstance(problem.loss, MarginLoss):
        raise AssumptionError(
            "the Hessian sensitivity is known for the built-in margin losses only; a custom loss's "
            "Hessians are not clipped to its declared smoothness"
        )
    return 2.0 * problem.constants.loss_smoothness / problem.n_samples


# ------------------------------------------------------------------------ shared set-up
def _second_order_checks(name: str, problem: ERMProblem) -> float:
    """The Hessian-Lipschitz constant rho of the loss part; AssumptionError if infinite."""
    rho = problem.constants.hessian_lipschitz
    if not math.isfinite(rho) or not getattr(problem.loss, "twice_differentiable", True):
        raise AssumptionError(
            f"{name} needs a loss with a Lipschitz Hessian (Wang, Chen, Xu 2019, Assumption 4): the "
            f"{problem.loss.name} loss has a second derivative that jumps (rho = inf). Use a "
            "twice-differentiable loss such as 'logistic', 'sigmoid_squared' or 'biweight'."
        )
    return float(rho)


def _objective_range(problem: ERMProblem, w0: np.ndarray, loss_bound) -> float | None:
    """B: a public bound on ``F(w_0) - inf F`` for the default step counts (None if no
    public bound is known: a custom or unknown non-convex loss without ``loss_bound``).

    Every built-in loss and regularizer is >= 0, so ``inf F >= 0`` and
    ``B = sup_{|a| <= R ||w_0||, |y| <= label_bound} phi(a, y) + r(w_0)``: the biweight's
    ``c^2 / 6`` and the sigmoid-squared's ``(1 + label_bound)^2`` are global bounds; a
    convex loss is maximized at the corners of the (a, y) box (binary labels +-1, real
    labels on an 11-point grid). B only sets a default T (public), never a noise scale.
    """
    if loss_bound is not None:
        value = float(loss_bound)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"loss_bound must be a finite number > 0, got {loss_bound!r}")
        return value
    loss = problem.loss
    if isinstance(loss, Biweight):
        top = loss.c**2 / 6.0
    elif isinstance(loss, SigmoidSquared):
        top = (1.0 + problem.label_bound) ** 2
    elif isinstance(loss, MarginLoss) and loss.convex:
        a = problem.data_norm * float(np.linalg.norm(w0))
        ys = np.array([-1.0, 1.0]) if loss.binary else np.linspace(-problem.label_bound, problem.label_bound, 11)
        A, Y = np.meshgrid(np.array([-a, a]), ys)
        top = float(np.max(loss.value(A.ravel(), Y.ravel())))
    else:
        return None
    return max(top + problem.regularizer.value(w0), np.finfo(float).tiny)


def _need_bound(name: str, problem: ERMProblem, what: str):
    raise ValueError(
        f"{name}: no public bound on the {problem.loss.name} loss is known, and the default {what} "
        "needs one: pass loss_bound (B, a bound on F(w_0) - inf F), or set it explicitly"
    )


def _check_fraction_open(name: str, value) -> float:
    return check_probability(name, value)


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


# ---------------------------------------------------------------------------- dp_sosp
@register(
    "dp_sosp",
    setting="non-convex; L-Lipschitz, M-smooth, rho-Hessian-Lipschitz; unconstrained",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 4 + 5 (Theorems 7, 8)",
    paper="Wang, Chen, Xu 2019, Differentially private ERM with non-convex loss functions (ICML)",
    # margin_loss: the Hessian release's sensitivity 2 beta / n needs rank-one per-example
    # Hessians bounded by the loss's true smoothness; a custom loss's Hessians are unclipped
    requires=("smooth", "lipschitz", "smooth_regularizer", "unconstrained", "approximate_dp", "margin_loss"),
    gradient_complexity="n (T + K) gradients and up to K Hessians, T = 2 M B / alpha^2 (capped by max_steps)",
    summary="noisy GD keeping all iterates, then a private certified selection of an alpha-SOSP "
            "with a noisy gradient and a noisy symmetric Hessian per candidate",
)
def dp_sosp(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    step_size: float | None = None,
    alpha: float | None = None,
    rho: float | None = None,
    candidates: int | str | None = None,
    order: str = "latest",
    phase_split: float = 0.5,
    hessian_share: float | None = None,
    failure_probability: float = 0.05,
    loss_bound: float | None = None,
    max_steps: int = 1000,
    init=None,
    keep_iterates: bool = False,
) -> PrivateFit:
    """Private alpha-second-order stationary point by DP-GD and a certified selection.

    Phase 1 (Wang, Chen, Xu 2019, Algorithm 4): ``w_{t+1} = w_t - eta (grad F(w_t) + z_t)``,
    ``z_t ~ N(0, sigma_0^2 I)``, t = 0..T-1, keeping ``w_0, ..., w_T`` (post-processing).
    Phase 2 (Algorithm 5): for K candidates ``w_t`` (by default the last first), release
    ``g_t = grad F(w_t) + N(0, sigma_1^2 I)`` and ``H_t = grad^2 F(w_t) + E_t`` (E_t
    symmetric, upper triangle i.i.d. ``N(0, sigma_2^2)``), and return the first ``w_t``
    with

        ||g_t|| + tau_g <= alpha   and   lambda_min(H_t) - tau_H >= -sqrt(rho alpha),

    where ``tau_g = sigma_1 (sqrt(d) + sqrt(2 ln(1/p)))`` and ``tau_H = sigma_2
    (2 sqrt(d) + 2 sqrt(ln(1/p)))`` bound the noise (module notes) with
    ``p = failure_probability / (2 K)``. By a union bound over the 2K noise draws,
    **with probability at least 1 - failure_probability every certificate is correct**:
    a returned point is a true alpha-SOSP of F (Weyl: ``lambda_min(grad^2 F) >=
    lambda_min(H_t) - lambda_max(E_t)``). If no candidate is certified, ``coef`` is the
    last iterate ``w_T`` and ``info["status"] = "not found"``. (The paper compares the
    noisy values with alpha directly; the margins make the outcome a certificate.)
    A candidate whose gradient test fails has its Hessian release skipped; the
    accounting counts it anyway.

    Privacy (exact, Gaussian DP): with mu = mu(epsilon, delta) the Gaussian-DP parameter
    of the budget, phase 1 gets ``mu_1^2 = phase_split mu^2`` over T releases of
    sensitivity ``2L/n``; phase 2 gets ``mu_2^2 = (1 - phase_split) mu^2``, split equally
    over the K candidates, and within a candidate ``hessian_share`` of it to the Hessian
    (sensitivity ``2 beta / n`` of the vectorized upper triangle, module notes) and the
    rest to the gradient. Total ``mu^2 = T (2L/(n sigma_0))^2 + K ((2L/(n sigma_1))^2 +
    (2 beta/(n sigma_2))^2)``, converted to (epsilon, delta) exactly. The three phases form
    one event (``PrivateFit.event``: a composition of the three Gaussian phases, each
    release with its ``sigma`` and ``sensitivity``) whose standard deviations scale with one
    noise level calibrated by the accountant.

    Assumptions also include a built-in margin loss (requirement ``margin_loss``): a custom
    loss is refused, its Hessians being computed from unclipped gradients.

    Parameters
    ----------
    problem : ERMProblem
        Unconstrained; smooth, Lipschitz loss with a finite Hessian-Lipschitz constant
        (Wang, Chen, Xu 2019, Assumption 4); l2 regularizer allowed (no l1).
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    steps : int, optional
        T. Default ``min(max_steps, ceil(2 M B / alpha_thm^2))``: with ``eta = 1/M`` the
        descent lemma decreases F by at least ``alpha^2 / (2M)`` on every step whose
        gradient exceeds alpha, and F drops by at most B, which is Theorem 7's
        ``T = O~(M B / alpha^2)`` with the constant 2 (its log factors, which pay for
        saddle escapes, are left to ``max_steps``). The uncapped value is
        ``info["theorem_steps"]``.
    step_size : float, optional
        eta. Default ``1 / M`` (Theorem 7), M the smoothness of F.
    alpha : float, optional
        Target accuracy. Default ``alpha_cert``, the smallest *certifiable* alpha: the
        smallest alpha whose margins are at most half the thresholds (``tau_g <=
        alpha/2``, ``tau_H <= sqrt(rho alpha)/2``, mirroring Algorithm 5 which runs
        phase 1 for an alpha/2-SOSP; with the balanced ``hessian_share`` both hold with
        equality). Below it not even an exact SOSP could be certified; it is a function
        of n, d, epsilon, delta, L, beta, rho, K and failure_probability only (public).
        ``alpha_thm``, Theorem 8 solved for alpha with constant 1
        (:func:`dperm.theory.dp_sosp_accuracy_bound`), is reported in ``info`` and sets
        the default T, but no longer enters the default alpha: its constant is
        arbitrary, and earlier versions took ``max(alpha_thm, alpha_cert)`` with
        ``alpha_cert`` computed for all T + 1 candidates, which gave alphas so large
        (e.g. 0.98 on the 10%-outlier BIKE benchmark at epsilon 0.1, Hessian threshold
        -2.8 below the loss's own smoothness -1) that the starting point w_0 = 0
        qualified and was returned. With the default K = 4 the same problem gets
        alpha ~ 0.095 (threshold ~ -0.87).
    rho : float, optional
        Hessian-Lipschitz constant of the definition. Default the problem's
        ``rho_phi R^3``; if that is 0 (a quadratic loss, where any rho >= 0 is valid) the
        smoothness M.
    candidates : int or "all", optional
        K. An int selects K iterates evenly spaced in 0..T (both ends included), fixed
        before any data is touched; ``"all"``: all T + 1 iterates, as Algorithm 5.
        Default 4 (a deviation from Algorithm 5, public and data independent): phase 2
        splits its budget over the K candidates, so each noisy gradient's std grows
        like ``sqrt(K)`` and ``alpha_cert`` like ``sqrt(K)`` (gradient margin) to ``K``
        (Hessian margin, through ``tau_H^2 / rho``). Checking every iterate (K up to
        1001) made ``alpha_cert`` 10-100 times larger than at K = 4, and the thresholds
        vacuous. K = 4 costs a factor of about 2 over a single candidate (K = 1) and
        keeps a few chances should the last iterate be in the middle of a saddle
        escape.
    order : {"latest", "earliest"}, default "latest"
        The order in which the candidates are examined; the first certified one is
        returned. Algorithm 5 goes forward in t ("earliest"); by default dperm examines
        the last iterate first, because noisy GD decreases F on average, so the latest
        certified iterate is expected to be the best one. Neither privacy (every
        candidate's releases are accounted) nor the certificate depends on the order.
    phase_split : float in (0, 1), default 0.5
        Fraction of mu^2 spent on phase 1 (Algorithm 5 gives each phase half the budget).
    hessian_share : float in (0, 1), optional
        Fraction of a candidate's mu^2 for its Hessian. Default: balance the margins
        relative to their thresholds, ``tau_g / alpha = tau_H / sqrt(rho alpha)``, which
        minimizes the larger of the two (a public, data-independent choice).
    failure_probability : float, default 0.05
        zeta: the certificates hold jointly with probability >= 1 - zeta (also the xi of
        the default alpha).
    loss_bound : float, optional
        B, a bound on ``F(w_0) - inf F`` for the default T and alpha (default: from the
        loss's public bounds; required for a custom loss unless steps and alpha are given).
        B only shapes public defaults, never a noise scale.
    max_steps : int, default 1000
        Cap on the default T.
    init : array-like, optional
        Public starting point w_0 (default 0).
    keep_iterates : bool, default False
        Return the phase-1 iterates in ``info["iterates"]`` (post-processing: private).

    Returns
    -------
    PrivateFit
        ``info["status"]`` is ``"found"`` or ``"not found"``; ``info["selected_iterate"]``
        the index t of the returned iterate (or None); ``info["certified_gradient_norm"]``
        and ``info["certified_min_eigenvalue"]`` the noisy, margin-corrected values of the
        returned candidate, ``info["candidates_examined"]`` and ``info["hessian_releases"]``
        (public: post-processings of the noisy releases); ``event`` the composed Gaussian
        releases.

    References
    ----------
    Wang, Chen, Xu 2019, Algorithms 4 and 5, Theorems 7 and 8, Definition 9; Dong, Roth, Su 2019.
    """
    name = "dp_sosp"
    secure = secure_randomness(rng)
    rng = start(name, problem, budget, rng)
    rho_problem = _second_order_checks(name, problem)
    n, d, M, L = problem.n_samples, problem.n_features, problem.smoothness, problem.lipschitz
    rho = (rho_problem if rho_problem > 0 else M) if rho is None else _positive("rho", rho)
    zeta = check_probability("failure_probability", failure_probability)
    split = _check_fraction_open("phase_split", phase_split)
    if order not in ("latest", "earliest"):
        raise ValueError(f"order must be 'latest' or 'earliest', got {order!r}")
    w0 = initial_point(problem, init)
    B = _objective_range(problem, w0, loss_bound)
    dg, dh = problem.gradient_sensitivity(), hessian_sensitivity(problem)
    if B is None and (steps is None or alpha is None):
        _need_bound(name, problem, "steps and alpha")
    alpha_thm = theorem_T = None
    if B is not None:
        alpha_thm = theory.dp_sosp_accuracy_bound(
            n, d, budget.epsilon, budget.delta, lipschitz=max(L, 1e-300), smoothness=M,
            hessian_lipschitz=rho, loss_bound=B, failure_probability=zeta,
        )
        theorem_T = max(1, math.ceil(2.0 * M * B / alpha_thm**2))
    T = min(theorem_T, check_steps("max_steps", max_steps)) if steps is None else check_steps("steps", steps)
    eta = 1.0 / M if step_size is None else check_step_size(step_size)
    indices = candidate_indices(T, candidates)
    K = int(indices.size)
    p = zeta / (2.0 * K)
    a_g, a_h = dg * gaussian_norm_bound(1.0, d, p), dh * symmetric_noise_eigenvalue_bound(1.0, d, p)
    alpha, alpha_cert, share = _sosp_thresholds(budget, a_g, a_h, rho, K, split, alpha, hessian_share)
    threshold = math.sqrt(rho * alpha)

    calibration = calibrate_and_charge(_sosp_event(T, K, dg, dh, split, share, secure), budget, name)
    descent, gradients, hessians = (single_release(e) for e in calibration.event.events)
    tau_g = release_norm_bound(gradients, d, p)
    tau_h = release_eigenvalue_bound(hessians, d, p)
    _, _, path = noisy_gd_path(problem, descent, w0, eta, T, rng, None, keep_all=True)  # phase 1
    outcome = _certified_selection(problem, path, indices[::-1] if order == "latest" else indices,
                                   gradients, hessians, tau_g, tau_h, alpha, threshold, rng)  # phase 2
    selected = outcome["selected_iterate"]
    info = dict(outcome, gradient_margin=tau_g, eigenvalue_margin=tau_h, eigenvalue_threshold=-threshold,
                confidence=1.0 - zeta, theorem_alpha=alpha_thm, certifiable_alpha=alpha_cert,
                theorem_steps=theorem_T, candidate_indices=indices.tolist())
    if keep_iterates:
        info["iterates"] = path  # post-processing of the phase-1 releases: private
    return PrivateFit(
        coef=np.array(path[selected] if selected is not None else path[-1], dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm=name,
        event=calibration.event,
        hyperparameters={
            "steps": T, "step_size": eta, "alpha": alpha, "rho": rho, "candidates": K, "order": order,
            "phase_split": split, "hessian_share": share, "failure_probability": zeta, "loss_bound": B,
        },
        info=info,
    )


def _sosp_thresholds(budget: PrivacyBudget, a_g: float, a_h: float, rho: float, K: int, split: float,
                     alpha, hessian_share) -> tuple[float, float, float]:
    """(alpha, the smallest certifiable alpha, Hessian share) of dp_sosp.

    ``a_g`` and ``a_h`` are the gradient and eigenvalue margins per unit of a candidate's
    Gaussian-DP parameter. A utility choice: the margins are computed at the GDP parameter
    of the budget (``gaussian_dp_mu``), which only picks the default alpha and share; the
    noise itself comes from the accountant's calibration in :func:`dp_sosp`.
    """
    mu_cand = gaussian_dp_mu(budget.epsilon, budget.delta) * math.sqrt((1.0 - split) / K)
    if hessian_share is not None:
        share = _check_fraction_open("hessian_share", hessian_share)
        tau_g, tau_h = a_g / (mu_cand * math.sqrt(1.0 - share)), a_h / (mu_cand * math.sqrt(share))
        alpha_cert = max(2.0 * tau_g, 4.0 * tau_h**2 / rho)
    else:  # balanced split: tau_g = alpha / 2 and tau_H = sqrt(rho alpha) / 2 at once
        A, Bq = a_g**2, a_h**2 / rho
        x = (-Bq + math.sqrt(Bq * Bq + A * mu_cand**2)) / (2.0 * A) if A > 0 else mu_cand**2 / (4.0 * Bq)
        alpha_cert = 1.0 / x
    alpha = alpha_cert if alpha is None else _positive("alpha", alpha)
    if hessian_share is None:
        c1, c2 = a_g / alpha, a_h / math.sqrt(rho * alpha)
        share = c2 * c2 / (c1 * c1 + c2 * c2) if c1 + c2 > 0 else 0.5
        share = min(max(share, 1e-12), 1.0 - 1e-12)  # both releases keep a finite noise
    return alpha, alpha_cert, share


def _sosp_event(T: int, K: int, dg: float, dh: float, split: float, share: float, secure: bool = False):
    """x -> the event of dp_sosp at noise level x (x = 1 / mu, mu the total GDP parameter):
    T descent gradients, K candidate gradients and K candidate Hessians, whose standard
    deviations give phase 1 ``split`` of mu^2 and each candidate ``(1 - split) / K`` of it,
    ``share`` of that to its Hessian (``secure``: floating-point-safe releases)."""
    def make(x):
        return ev.composed([
            ev.repeated(ev.gaussian_release(x * dg * math.sqrt(T / split), dg, secure=secure), T),
            ev.repeated(ev.gaussian_release(x * dg * math.sqrt(K / ((1.0 - split) * (1.0 - share))), dg,
                                            secure=secure), K),
            ev.repeated(ev.gaussian_release(x * dh * math.sqrt(K / ((1.0 - split) * share)), dh, secure=secure), K),
        ])
    return make


def _noisy_hessian(problem: ERMProblem, w, hessians, rng) -> np.ndarray:
    """The Hessian at w released through ``hessians``: its upper triangle (diagonal
    included) as one vector release, mirrored. The seeded path draws the same noise as
    ever (:func:`~dperm.privacy.noise.symmetric_gaussian_matrix`); the secure path rounds
    the triangle to a grid and adds exact discrete Gaussian noise."""
    d = problem.n_features
    if not hessians.secure:
        return problem.hessian(w) + symmetric_gaussian_matrix(rng, d, hessians.sigma)
    rows, cols = np.triu_indices(d)
    noisy = np.zeros((d, d))
    noisy[rows, cols] = release(rng, problem.hessian(w)[rows, cols], hessians)
    return noisy + np.triu(noisy, 1).T


def _certified_selection(problem: ERMProblem, path, order, gradients, hessians, tau_g: float,
                         tau_h: float, alpha: float, threshold: float, rng) -> dict:
    """Phase 2 of dp_sosp: per candidate a noisy gradient (the release ``gradients``) and,
    if it passes, a noisy symmetric Hessian (``hessians``); the first certified candidate
    wins. The outcome is a post-processing of these releases."""
    out = {"status": "not found", "selected_iterate": None, "certified_gradient_norm": None,
           "certified_min_eigenvalue": None, "candidates_examined": 0, "hessian_releases": 0}
    for t in order:
        w = path[int(t)]
        out["candidates_examined"] += 1
        g = release(rng, problem.gradient(w), gradients)
        bound_g = float(np.linalg.norm(g)) + tau_g
        if bound_g > alpha:
            continue
        out["hessian_releases"] += 1
        H = _noisy_hessian(problem, w, hessians, rng)
        bound_lam = float(np.linalg.eigvalsh(H)[0]) - tau_h
        if bound_lam >= -threshold:
            out.update(status="found", selected_iterate=int(t), certified_gradient_norm=bound_g,
                       certified_min_eigenvalue=bound_lam)
            break
    return out


# ---------------------------------------------------------------------------- dp_gd_so
@register(
    "dp_gd_so",
    setting="non-convex; L-Lipschitz, M-smooth, rho-Hessian-Lipschitz; C = L2 ball",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 6 (Theorem 9)",
    paper="Wang, Chen, Xu 2019, Differentially private ERM with non-convex loss functions (ICML)",
    # margin_loss: as dp_sosp, the Hessian release rests on the loss's structure
    requires=("smooth", "lipschitz", "bounded_constraint", "smooth_regularizer", "approximate_dp", "margin_loss"),
    gradient_complexity="n T gradients and up to T Hessians, T = 8 D^2 M B / alpha^2 + "
                        "144 B rho^2 D^6 / (5 gamma^3) (capped by max_steps)",
    summary="noisy Frank-Wolfe with second-order escape steps over the L2 ball: noisy gradient, "
            "noisy symmetric Hessian, exact ball-and-halfspace quadratic sub-problem",
)
def dp_gd_so(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    alpha: float | None = None,
    gamma: float | None = None,
    step_size: float | None = None,
    theta: float | None = None,
    linear_slack: float | None = None,
    rho: float | None = None,
    hessian_share: float | None = None,
    failure_probability: float = 0.05,
    loss_bound: float | None = None,
    max_steps: int = 1000,
    init=None,
    keep_iterates: bool = False,
) -> PrivateFit:
    """Private second-order method over an L2 ball (Wang, Chen, Xu 2019, Algorithm 6, DP-GD-SO).

    Targets an (alpha, gamma)-second-order stationary point in C, the general form of
    Wang, Chen, Xu 2019's footnote 6 ((epsilon, gamma)-SOSP of Ge et al. 2015; Mokhtari et al.
    2018's (epsilon_g, epsilon_H)) applied to Definition 10: ``grad F(w)^T (u - w) >=
    -alpha`` for all u in C, and ``(u - w)^T grad^2 F(w) (u - w) >= -gamma`` for the
    feasible u orthogonal to the gradient. Definition 10 is the special case
    ``gamma = sqrt(rho alpha)``. For t = 1..T with the noisy gradient
    ``g_t = grad F(w_t) + N(0, sigma_1^2 I)``:

    1. ``v_t = argmin_{v in C} g_t^T v = -R g_t / ||g_t||``;
    2. if ``g_t^T (v_t - w_t) < -alpha / 2`` (first-order test): Frank-Wolfe step
       ``w_{t+1} = (1 - eta) w_t + eta v_t``;
    3. else release ``H_t = grad^2 F(w_t) + E_t`` (E_t symmetric, upper triangle i.i.d.
       ``N(0, sigma_2^2)``) and solve ``u_t = argmin (u - w_t)^T H_t (u - w_t)`` over
       ``||u|| <= R, g_t^T (u - w_t) <= r`` exactly (:func:`ball_halfspace_quadratic`,
       so the paper's approximation factor is Phi = 1); if ``q(u_t) <= -Phi gamma / 2``
       (second-order test) take ``w_{t+1} = (1 - theta) w_t + theta u_t``, else stop and
       return ``w_t`` (``info["status"] = "found"``, ``info["stopped_by"] =
       "second_order_test"``).

    After T steps without stopping, ``w_{T+1}`` is returned with status ``"not found"``
    (``info["stopped_by"] = "max_steps"``). Every iterate is a convex combination of
    points of C (projected onto C against rounding only).

    Certificate. With D = 2R the diameter of C, the gradient noise moves the first-order
    test by at most ``m_g = D tau_g`` (``|z^T (v - w)| <= ||z|| D``) and the Hessian
    noise the second-order test by at most ``m_H = D^2 tau_H`` (``|s^T E s| <= ||E||
    ||s||^2``), where ``tau_g`` and ``tau_H`` (:func:`gaussian_norm_bound`,
    :func:`symmetric_noise_eigenvalue_bound` at ``p = failure_probability / (2T)``, ``p /
    2`` per side for ``||E||``) hold for all 2T draws with probability ``1 -
    failure_probability``. On that event a ``"found"`` output has
    ``min_{u in C} grad F(w)^T (u - w) >= info["certified_gap"]`` (noisy gap ``- m_g``)
    and ``(u - w)^T grad^2 F(w) (u - w) >= info["certified_curvature"]`` (``q(u_t) - m_H``)
    for all u in ``C cap {g^T (u - w) <= r}``, the noisy-gradient version of Definition
    10's set (it contains the set ``grad F(w)^T (u - w) = 0`` when ``m_g <= r``). When
    ``alpha >= 2 m_g`` and ``gamma >= 2 m_H / Phi`` (true at the defaults, with room)
    these bounds are ``>= -alpha`` and ``>= -gamma``. ``info["gradient_noise_margin"]``
    and ``info["curvature_noise_margin"]`` are m_g and m_H.

    Privacy: T gradient releases (sensitivity ``2L/n``) and at most T Hessian releases
    (sensitivity ``2 beta / n`` of the upper triangle, module notes), all accounted:
    ``mu^2 = T (2L/(n sigma_1))^2 + T (2 beta/(n sigma_2))^2`` with ``hessian_share`` of
    mu^2 for the Hessians, one event calibrated by the accountant (``PrivateFit.event``).
    A custom loss is refused (requirement ``margin_loss``: its Hessians are not clipped).
    Reported spend = the budget, whatever the stopping time. The
    thresholds and T only choose how the budget is used (public, data-independent
    defaults); they never change what is released or its noise calibration.

    Parameters
    ----------
    problem : ERMProblem
        Constraint ``("l2_ball", R)``; smooth, Lipschitz loss with a finite
        Hessian-Lipschitz constant; l2 regularizer allowed.
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    steps : int, optional
        T. Default ``min(max_steps, T_9(alpha, gamma))`` with

            T_9(alpha, gamma) = ceil(8 D^2 M B / alpha^2 + 144 B rho^2 D^6 / (5 Phi^3 gamma^3)):

        with the step sizes below and exact gradients and Hessians, a Frank-Wolfe step
        decreases F by ``>= alpha^2 / (8 D^2 M)`` (descent lemma) and a second-order step
        by ``>= 5 theta Phi^2 gamma^2 / (72 rho D^3) = 5 Phi^3 gamma^3 / (144 rho^2 D^6)``
        (second-order Taylor bound with the cubic remainder of a rho-Hessian-Lipschitz F),
        and F drops by at most B. This is Theorem 9's
        ``T = O(max(D^2 M B / alpha^2, B rho^{1/2} D^6 / (Phi^3 alpha^{3/2})))`` with
        ``sqrt(rho alpha)`` replaced by gamma (``rho^{1/2} / alpha^{3/2} = rho^2 /
        gamma^3``) and a sum for the max. **Reconstructed**: the constants 8 and 144/5
        are not printed in the paper (O-notation; the text we worked from also loses the radicals of
        theta and r); they come from the descent argument above, which ignores the noise
        (with the gradient noise at its full margin alpha/4 the guaranteed Frank-Wolfe
        decrease at Theorem 9's eta vanishes: T is the theorem's step count, not a
        guarantee at finite n). Computed at the thresholds in use; the uncapped value is
        ``info["theorem_steps"]``.
    alpha : float, optional
        First-order threshold (Frank-Wolfe gap test ``g^T (v - w) < -alpha / 2``).
        Default: noise-determined, ``alpha = 4 m_g`` (the gradient noise moves the test by
        at most a quarter of alpha, half its threshold alpha / 2), with T and the noise
        scales solved jointly (below).
    gamma : float, optional
        Second-order threshold (curvature test ``q(u) <= -Phi gamma / 2``). Default: if
        alpha is given, ``sqrt(rho alpha)`` (Definition 10, the behaviour of earlier
        versions); otherwise noise-determined, ``gamma = 4 m_H / Phi``.

        Joint default. A threshold left to its default is a function of T (the noise std
        grows with sqrt(T)), and T_9 falls as the thresholds grow: the default T is the
        smallest T in ``[1, max_steps]`` with ``T >= min(max_steps, T_9(alpha(T),
        gamma(T)))`` (integer bisection; the condition is monotone in T). Everything
        depends on n, d, epsilon, delta, L, beta, M, rho, D, B, failure_probability only
        (public). Earlier versions used the single threshold alpha for both tests with
        ``gamma = sqrt(rho alpha)``; the Hessian noise then entered alpha as ``16
        ||E||^2 D^4 / rho`` and alpha ended far above ``2 L D`` (e.g. 205, 713 and 2.5e4
        on the WINE, BIKE and ADULT benchmarks at epsilon 0.1), so the first-order test
        could never fire.
    step_size : float, optional
        eta of the Frank-Wolfe step. Default ``alpha / (2 D^2 M)`` (Theorem 9).
    theta : float, optional
        Second-order step. Default ``Phi gamma / (2 rho D^3)`` (Theorem 9 with
        ``sqrt(rho alpha)`` replaced by gamma, as reconstructed from its proof: the
        text of the paper we worked from drops the radicals).
    linear_slack : float, optional
        r. Default ``Phi^2 gamma^2 / (72 rho D^3)`` (Theorem 9, same reconstruction): with
        theta above, each second-order step decreases F by at least ``5 theta Phi^2
        gamma^2 / (72 rho D^3)`` (exact measurements).
    rho : float, optional
        Hessian-Lipschitz constant (default the problem's; M if that is 0).
    hessian_share : float in (0, 1), optional
        Fraction of mu^2 spent on the Hessian releases. Default: the share that equalizes
        the two noise margins relative to their thresholds' scales, ``m_g / a_s = m_H /
        g_s`` (it minimizes the larger ratio), where ``a_s`` is alpha if given, else ``2 L
        D`` (at and above which no true gap can reach -alpha/2: the first-order test is
        vacuous), and ``g_s`` is gamma if given, else ``2 M D^2 / Phi`` (idem for the
        curvature test). A public choice.
    failure_probability : float, default 0.05
        xi of the noise margins (and of ``info["theorem_alpha"]``).
    loss_bound : float, optional
        B for the default T (default: from the loss's public bounds; required for a custom
        loss unless steps is given).
    max_steps : int, default 1000
        Cap on the default T.
    init : array-like, optional
        Public starting point (default 0), projected onto C.
    keep_iterates : bool, default False
        Return all iterates in ``info["iterates"]`` (post-processing: private).

    Returns
    -------
    PrivateFit
        ``hyperparameters["alpha"]``, ``hyperparameters["gamma"]``: the two thresholds.
        ``info["status"]``: ``"found"`` or ``"not found"``; ``info["stopped_by"]``:
        ``"second_order_test"`` or ``"max_steps"``; ``info["frank_wolfe_steps"]``,
        ``info["second_order_steps"]``; ``info["gap_threshold"]`` (-alpha/2) and
        ``info["curvature_threshold"]`` (-Phi gamma/2); ``info["last_gap"]`` and
        ``info["last_quadratic_value"]`` (noisy, the last tests made);
        ``info["certified_gap"]``, ``info["certified_curvature"]`` (see Certificate; None
        unless found); ``info["vacuous_gradient_test"]`` (``alpha >= 2 L D``) and
        ``info["vacuous_curvature_test"]`` (``Phi gamma / 2 >= M D^2``), either of which
        also raises a UserWarning.

    References
    ----------
    Wang, Chen, Xu 2019, Algorithm 6, Theorem 9, Definition 10 and footnote 6; Mokhtari, Ozdaglar,
    Jadbabaie 2018; Ge, Huang, Jin, Yuan 2015.
    """
    name = "dp_gd_so"
    secure = secure_randomness(rng)
    rng = start(name, problem, budget, rng)
    if not isinstance(problem.constraint, L2Ball):
        raise AssumptionError(
            f"{name} (Wang, Chen, Xu 2019, Alg. 6) needs an L2-ball constraint such as ('l2_ball', R); "
            f"got {problem.constraint!r}"
        )
    rho_problem = _second_order_checks(name, problem)
    d, M, R, L = problem.n_features, problem.smoothness, problem.constraint.radius, problem.lipschitz
    D = 2.0 * R
    rho = (rho_problem if rho_problem > 0 else M) if rho is None else _positive("rho", rho)
    xi = check_probability("failure_probability", failure_probability)
    share = None if hessian_share is None else _check_fraction_open("hessian_share", hessian_share)
    w = initial_point(problem, init)
    B = _objective_range(problem, w, loss_bound)
    cap = check_steps("max_steps", max_steps)
    steps = None if steps is None else check_steps("steps", steps)
    alpha = None if alpha is None else _positive("alpha", alpha)
    if gamma is not None:
        gamma = _positive("gamma", gamma)
    elif alpha is not None:
        gamma = math.sqrt(rho * alpha)  # Definition 10 (footnote 6's special case)
    if B is None and steps is None:
        _need_bound(name, problem, "steps")
    plan = _gd_so_plan(problem, budget, D=D, rho=rho, xi=xi, B=B, alpha=alpha, gamma=gamma, share=share,
                       steps=steps, cap=cap)
    T, alpha, gamma = plan["steps"], plan["alpha"], plan["gamma"]
    eta = min(1.0, alpha / (2.0 * D * D * M)) if step_size is None else check_step_size(step_size)
    theta = min(1.0, _PHI * gamma / (2.0 * rho * D**3)) if theta is None else _positive("theta", theta)
    r = _PHI**2 * gamma**2 / (72.0 * rho * D**3) if linear_slack is None else _positive("linear_slack", linear_slack)
    if eta > 1 or theta > 1:
        raise ValueError(f"step_size and theta must be in (0, 1] to keep the iterates in C, got {eta} and {theta}")

    calibration = calibrate_and_charge(_gd_so_event(T, problem.gradient_sensitivity(), hessian_sensitivity(problem),
                                                    plan["share"], secure), budget, name)  # every input checked
    gradients, hessians = (single_release(e) for e in calibration.event.events)
    p = xi / (2.0 * T)
    m_g = D * release_norm_bound(gradients, d, p)
    m_h = D * D * release_eigenvalue_bound(hessians, d, p / 2.0)
    vacuous_g, vacuous_h = _warn_if_vacuous(name, alpha, gamma, 2.0 * L * D, M * D * D)

    w, outcome = _gd_so_run(problem, w, T, gradients, hessians, alpha=alpha, gamma=gamma, eta=eta,
                            theta=theta, slack=r, margins=(m_g, m_h), rng=rng, keep_iterates=keep_iterates)
    info = dict(outcome, first_order_threshold=alpha, second_order_threshold=gamma, gap_threshold=-alpha / 2.0,
                curvature_threshold=-_PHI * gamma / 2.0, gradient_noise_margin=m_g, curvature_noise_margin=m_h,
                theorem_alpha=plan["theorem_alpha"], noise_alpha=plan["noise_alpha"], noise_gamma=plan["noise_gamma"],
                theorem_steps=plan["theorem_steps"], vacuous_gradient_test=vacuous_g, vacuous_curvature_test=vacuous_h)
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm=name,
        event=calibration.event,
        hyperparameters={
            "steps": T, "alpha": alpha, "gamma": gamma, "step_size": eta, "theta": theta, "linear_slack": r,
            "rho": rho, "hessian_share": plan["share"], "failure_probability": xi, "loss_bound": B, "radius": R,
        },
        info=info,
    )


def _gd_so_plan(problem: ERMProblem, budget: PrivacyBudget, *, D, rho, xi, B, alpha, gamma, share, steps, cap) -> dict:
    """The public defaults of dp_gd_so: T, the thresholds (alpha, gamma) and the Hessian
    share (see the dp_gd_so docstring, "Joint default").

    A utility choice: the noise margins are computed at the GDP parameter of the budget
    (``gaussian_dp_mu``), which only picks these defaults; the noise of the run comes from
    the accountant's calibration (its margins are recomputed from it in :func:`dp_gd_so`).
    """
    n, d, M, L = problem.n_samples, problem.n_features, problem.smoothness, problem.lipschitz
    dg, dh = problem.gradient_sensitivity(), hessian_sensitivity(problem)
    mu = gaussian_dp_mu(budget.epsilon, budget.delta)
    alpha_vac, gamma_vac = 2.0 * L * D, 2.0 * M * D * D / _PHI  # a test is vacuous at and above these

    def steps_for(a: float, c: float) -> int:  # Theorem 9's T at thresholds (a, c), explicit constants
        return max(1, math.ceil(8.0 * D * D * M * B / a**2 + 144.0 * B * rho**2 * D**6 / (5.0 * _PHI**3 * c**3)))

    def noise_levels(T_: int) -> tuple[float, float, float]:
        """(alpha_noise, gamma_noise, hessian share) for T_ steps: 4 m_g, 4 m_H / Phi."""
        p_ = xi / (2.0 * T_)
        a = 4.0 * D * gaussian_norm_bound(math.sqrt(T_) * dg / mu, d, p_)  # 4 m_g at share 0
        b = 4.0 * D * D * symmetric_noise_eigenvalue_bound(math.sqrt(T_) * dh / mu, d, p_ / 2.0) / _PHI  # at share 1
        if share is not None:
            sh = share
        else:  # a / (a_s sqrt(1 - s)) = b / (g_s sqrt(s))
            x = a / (alpha if alpha is not None else max(alpha_vac, 1e-300))
            y = b / (gamma if gamma is not None else max(gamma_vac, 1e-300))
            sh = y * y / (x * x + y * y) if x + y > 0 else 0.5
        sh = min(max(sh, 1e-12), 1.0 - 1e-12)
        return a / math.sqrt(1.0 - sh), b / math.sqrt(sh), sh

    def thresholds(T_: int) -> tuple[float, float]:
        a, c, _ = noise_levels(T_)
        return (alpha if alpha is not None else a), (gamma if gamma is not None else c)

    theorem_T = None
    if steps is not None:
        T = steps
        if B is not None:
            theorem_T = steps_for(*thresholds(T))
    else:
        # Smallest T with T >= min(cap, T_9(thresholds(T))): the thresholds grow with T and
        # T_9 falls with them, so the condition is monotone in T.
        def ok(T_: int) -> bool:
            return T_ >= min(cap, steps_for(*thresholds(T_)))

        lo, hi = 1, cap  # ok(cap) always holds
        if ok(1):
            hi = 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid
        T = hi
        theorem_T = steps_for(*thresholds(T))
    alpha_noise, gamma_noise, sh = noise_levels(T)
    a, c = thresholds(T)
    theorem_alpha = math.sqrt(theory.dp_sosp_constrained_sample_complexity(
        1.0, d, budget.epsilon, budget.delta, failure_probability=xi) / n)
    return {"steps": T, "alpha": a, "gamma": c, "share": sh, "theorem_steps": theorem_T,
            "noise_alpha": alpha_noise, "noise_gamma": gamma_noise, "theorem_alpha": theorem_alpha}


def _gd_so_event(T: int, dg: float, dh: float, share: float, secure: bool = False):
    """x -> the event of dp_gd_so at noise level x (x = 1 / mu, mu the total GDP
    parameter): T gradients and, in the worst case, T Hessians, ``share`` of mu^2 to the
    Hessians (``secure``: floating-point-safe releases)."""
    def make(x):
        return ev.composed([
            ev.repeated(ev.gaussian_release(x * dg * math.sqrt(T / (1.0 - share)), dg, secure=secure), T),
            ev.repeated(ev.gaussian_release(x * dh * math.sqrt(T / share), dh, secure=secure), T),
        ])
    return make


def _warn_if_vacuous(name: str, alpha: float, gamma: float, alpha_vac: float,
                     curvature_vac: float) -> tuple[bool, bool]:
    """Flag (and warn about) a test no exact measurement can trigger: the first-order test
    when ``alpha >= 2 L D``, the curvature test when ``Phi gamma / 2 >= M D^2``."""
    vacuous_g = alpha >= alpha_vac
    vacuous_h = _PHI * gamma / 2.0 >= curvature_vac
    if vacuous_g or vacuous_h:
        which = " and ".join(
            s for s, v in ((f"the first-order test (alpha={alpha:.3g} >= 2 L D = {alpha_vac:.3g})", vacuous_g),
                           (f"the curvature test (Phi gamma / 2 = {_PHI * gamma / 2.0:.3g} >= M D^2 = "
                            f"{curvature_vac:.3g})", vacuous_h)) if v
        )
        warnings.warn(
            f"{name}: {which} {'are' if vacuous_g and vacuous_h else 'is'} vacuous: no exact measurement can "
            "trigger it, so the algorithm cannot act on it and status 'found' certifies nothing about it. The "
            "default thresholds are the smallest the noise "
            "allows; more data, a larger epsilon or a smaller radius make them meaningful.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return vacuous_g, vacuous_h


def _gd_so_run(problem: ERMProblem, w, T: int, gradients, hessians, *, alpha, gamma, eta, theta, slack,
               margins, rng, keep_iterates: bool):
    """The loop of dp_gd_so (Algorithm 6): (last iterate, outcome). Every test is made on
    the released noisy gradient (``gradients``) and noisy Hessian, so the outcome is a
    post-processing of the releases."""
    constraint, R = problem.constraint, problem.constraint.radius
    iterates = [w.copy()] if keep_iterates else None
    out = {"status": "not found", "stopped_by": "max_steps", "frank_wolfe_steps": 0, "second_order_steps": 0,
           "last_gap": None, "last_quadratic_value": None, "certified_gap": None, "certified_curvature": None}
    for _ in range(T):
        g = release(rng, problem.gradient(w), gradients)
        v = constraint.lmo(g)
        out["last_gap"] = float(g @ (v - w))
        if out["last_gap"] < -alpha / 2.0:
            w = (1.0 - eta) * w + eta * v
            out["frank_wolfe_steps"] += 1
        else:
            H = _noisy_hessian(problem, w, hessians, rng)
            u, out["last_quadratic_value"] = ball_halfspace_quadratic(H, w, g, slack, R)
            if out["last_quadratic_value"] <= -_PHI * gamma / 2.0:
                w = (1.0 - theta) * w + theta * u
                out["second_order_steps"] += 1
            else:
                out.update(status="found", stopped_by="second_order_test", certified_gap=out["last_gap"] - margins[0],
                           certified_curvature=out["last_quadratic_value"] - margins[1])
                break
        if constraint.minkowski_norm(w) > 1.0:  # rounding only: convex combinations stay in C
            w = constraint.project(w)
        if keep_iterates:
            iterates.append(w.copy())
    if keep_iterates:
        out["iterates"] = np.array(iterates)  # post-processing of the releases: private
    return w, out
