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

Privacy: every release is a full-batch Gaussian mechanism
-------------------------------------------------------------
*Gradients.* The mean loss gradient has replace-one L2 sensitivity ``Delta_g = 2 L / n``.

*Hessians.* For a margin loss the per-example Hessian is ``phi''(<w, x>, y) x x^T``, a
rank-one matrix of Frobenius (and operator) norm ``|phi''| ||x||^2 <= beta_phi R^2 =
beta`` (``problem.constants.loss_smoothness``; the l2 regularizer's ``mu I`` is data
independent). Replacing one row moves the mean Hessian by at most ``2 beta / n`` in
Frobenius norm. (Wang, Chen, Xu 2019's ``sigma_2^2 ~ d M^2 T log(1/delta) / (n eps)^2`` carries an
extra factor d from bounding a general Hessian's Frobenius norm by ``sqrt(d)`` times its
operator norm; for rank-one per-example Hessians it is not needed. A custom, non-margin
loss gets exactly that: ``2 sqrt(d) beta / n`` with beta its *declared* smoothness, see
:func:`hessian_sensitivity`.)

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

Both algorithms account the worst case of every release they might make (selection or
stopping early only skips releases, which is post-processing of a run that made them
all), so the reported ``privacy_spent`` is the whole budget whatever the outcome.

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
from scipy import optimize

from ..privacy.budget import PrivacyBudget
from ..privacy.calibrate import gaussian_dp_mu
from ..privacy.noise import symmetric_gaussian_matrix
from ..privacy.phases import GaussianPhase, phases_epsilon
from ..problem.constraints import L2Ball
from ..problem.erm import ERMProblem
from ..problem.losses import Biweight, MarginLoss, SigmoidSquared
from ..result import PrivateFit
from .. import theory
from ._common import check_step_size, check_steps, initial_point, start
from .gradient_descent import noisy_gradient_steps
from .registry import AssumptionError, register

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
_DEFAULT_CANDIDATES = 4  # dp_sosp: default number of candidate iterates K (see its docstring)


# ------------------------------------------------------------------ sensitivities, bounds
def hessian_sensitivity(problem: ERMProblem) -> float:
    """Replace-one sensitivity of the mean Hessian, in Frobenius norm.

    Margin losses: ``2 beta / n`` with ``beta = beta_phi R^2`` the loss part's smoothness;
    per-example Hessians ``phi'' x x^T`` are rank one with Frobenius norm
    ``|phi''| ||x||^2 <= beta``. Any other loss (a user-declared custom loss): the
    per-example Hessian has operator norm ``<= beta`` (the declared smoothness) and rank
    ``<= d``, so Frobenius norm ``<= sqrt(d) beta`` and the sensitivity is
    ``2 sqrt(d) beta / n`` (Wang, Chen, Xu 2019's factor d in sigma_2^2). For a custom loss this rests
    on the *declared* smoothness, which dperm cannot enforce on Hessians. The value also
    bounds the L2 sensitivity of the vector of upper-triangular entries (module notes).
    """
    beta = problem.constants.loss_smoothness
    if not isinstance(problem.loss, MarginLoss):
        beta *= math.sqrt(problem.n_features)
    return 2.0 * beta / problem.n_samples


def _check_probability(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def gaussian_norm_bound(scale: float, dim: int, failure_probability: float) -> float:
    """``t`` with ``P(||z||_2 > t) <= p`` for ``z ~ N(0, scale^2 I_dim)``.

    ``t = scale (sqrt(dim) + sqrt(2 ln(1/p)))`` (Gaussian concentration of the
    1-Lipschitz norm around its mean, which is at most ``scale sqrt(dim)``).
    """
    p = _check_probability("failure_probability", failure_probability)
    return float(scale) * (math.sqrt(dim) + math.sqrt(2.0 * math.log(1.0 / p)))


def symmetric_noise_eigenvalue_bound(scale: float, dim: int, failure_probability: float) -> float:
    """``t`` with ``P(lambda_max(E) > t) <= p`` (and the same for ``-lambda_min(E)``).

    E is the symmetric dim x dim matrix whose upper triangle (diagonal included) is i.i.d.
    ``N(0, scale^2)``: ``t = scale (2 sqrt(dim) + 2 sqrt(ln(1/p)))`` by Sudakov-Fernique
    and Borell-TIS (module notes). For ``||E||_op`` use ``p / 2``.
    """
    p = _check_probability("failure_probability", failure_probability)
    return float(scale) * (2.0 * math.sqrt(dim) + 2.0 * math.sqrt(math.log(1.0 / p)))


# --------------------------------------------------------------- trust-region sub-solvers
def _tr_candidates(H: np.ndarray, b: np.ndarray, radius: float, tiebreak=None) -> list[np.ndarray]:
    """Feasible points among which the minimizer of ``b^T s + s^T H s / 2`` over
    ``||s|| <= radius`` lies: the global minimizer (interior, easy or hard case) and the
    KKT points on the sphere with multiplier in ``(-lambda_2, -lambda_1)``, which hold
    the local-non-global minimizer when there is one (Martínez 1994)."""
    d = b.size
    lam, V = np.linalg.eigh(0.5 * (H + H.T))
    beta = V.T @ b
    scale = max(float(np.max(np.abs(lam))), float(np.linalg.norm(b)) / radius, np.finfo(float).tiny)
    out: list[np.ndarray] = []

    def s_of(m):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -beta / (lam + m)

    def norm_of(m):
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(beta == 0.0, 0.0, beta / (lam + m))
        return float(np.linalg.norm(q))

    # Interior: H positive definite and the Newton point inside the ball.
    if lam[0] > 0:
        s = -beta / lam
        if np.linalg.norm(s) <= radius:
            return [V @ s]
    lo = max(0.0, -lam[0])
    near = lam <= lam[0] + 1e-12 * scale
    # Hard-case point: multiplier -lambda_1, the minimal eigenspace filled up to the sphere.
    if lam[0] <= 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(near, 0.0, -beta / (lam + lo))
        p_norm = float(np.linalg.norm(p))
        if p_norm <= radius:
            Vn = V[:, near]
            direction = Vn @ (Vn.T @ b)
            if np.linalg.norm(direction) <= 1e-14 * max(1.0, float(np.linalg.norm(b))) and tiebreak is not None:
                direction = Vn @ (Vn.T @ tiebreak)
            if np.linalg.norm(direction) == 0.0:
                direction = V[:, 0]
            direction = -direction / np.linalg.norm(direction)
            tau = math.sqrt(max(radius * radius - p_norm * p_norm, 0.0))
            out.append(V @ p + tau * direction)
    # Easy case: the multiplier m > lo with ||s(m)|| = radius (||s|| decreases in m).
    if norm_of(lo) > radius:
        hi = lo + float(np.linalg.norm(b)) / radius + 1e-300
        while norm_of(hi) > radius:  # rounding only
            hi = hi * 2.0 + 1e-300
        m = optimize.brentq(lambda t: 1.0 / radius - 1.0 / max(norm_of(t), 1e-300), lo, hi,
                            xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
        out.append(V @ s_of(m))
    # KKT points with multiplier in (max(0, -lambda_2), -lambda_1): local-non-global candidates.
    # There psi(m) = ||s(m)||^2 is convex and infinite at -lambda_1 (beta_1 != 0): find its
    # minimum, then the roots of psi = radius^2 on either side of it.
    if d >= 2 and lam[0] < 0 and lam[1] > lam[0] and beta[0] != 0.0:
        left, right = max(0.0, -lam[1]), -lam[0]
        if left < right:
            f = lambda t: norm_of(t) ** 2 - radius * radius  # noqa: E731
            res = optimize.minimize_scalar(lambda t: norm_of(t) ** 2, bounds=(left, right), method="bounded",
                                           options={"xatol": 1e-13 * max(1.0, abs(right))})
            m0 = float(res.x)
            if f(m0) < 0:
                for end in (right, left):
                    if not f(end) > 0:  # no sign change on this side (the left end may be 0)
                        continue
                    inner = end if math.isfinite(f(end)) else None
                    for k in range(1, 64) if inner is None else ():
                        trial = end + (m0 - end) * 2.0**-k  # f increases from m0 towards end
                        if math.isfinite(f(trial)) and f(trial) > 0:
                            inner = trial
                            break
                    if inner is None:
                        continue
                    m = optimize.brentq(f, min(m0, inner), max(m0, inner), xtol=1e-300,
                                        rtol=4 * np.finfo(float).eps, maxiter=500)
                    out.append(V @ s_of(m))
    # Keep every candidate inside the ball (rounding may leave one an ulp outside).
    fixed = []
    for s in out:
        if np.all(np.isfinite(s)):
            ns = float(np.linalg.norm(s))
            fixed.append(s if ns <= radius else s * (radius / ns))
    return fixed


def trust_region_subproblem(H, b, radius: float) -> np.ndarray:
    """Exact solution of ``min_{||s||_2 <= radius} b^T s + s^T H s / 2`` (H symmetric).

    By the eigendecomposition ``H = V diag(lambda) V^T`` (Moré & Sorensen 1983): the
    Newton point if H is positive definite and it lies in the ball; otherwise the
    multiplier ``m >= max(0, -lambda_1)`` with ``||(H + m I)^{-1} b|| = radius``, found by
    Brent's method on the secular equation ``1/radius - 1/||s(m)|| = 0``; in the *hard
    case* (b orthogonal to the eigenspace of lambda_1 and ``||s(-lambda_1)|| <= radius``)
    ``s = s(-lambda_1) + tau v`` with v in that eigenspace and ``||s|| = radius``. When
    several candidates arise (near-hard cases), the one of least objective is returned.

    Parameters
    ----------
    H : array-like of shape (d, d)
        Symmetric matrix (symmetrized if not exactly).
    b : array-like of shape (d,)
        Linear term.
    radius : float
        > 0.

    Returns
    -------
    ndarray of shape (d,)
        A global minimizer (``||s|| <= radius``).
    """
    H = np.asarray(H, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    radius = float(radius)
    if H.ndim != 2 or H.shape[0] != H.shape[1] or b.shape != (H.shape[0],):
        raise ValueError(f"H must be square (d, d) and b of shape (d,), got {H.shape} and {b.shape}")
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius}")
    candidates = _tr_candidates(H, b, radius)
    values = [float(b @ s + 0.5 * s @ H @ s) for s in candidates]
    return candidates[int(np.argmin(values))]


def ball_halfspace_quadratic(H, w, g, slack: float, radius: float) -> tuple[np.ndarray, float]:
    """Global solution of the sub-problem of Wang, Chen, Xu 2019, Algorithm 6, step 8, over an L2 ball.

    ``min_u q(u) = (u - w)^T H (u - w)`` subject to ``||u||_2 <= radius`` and
    ``g^T (u - w) <= slack`` (H symmetric, possibly indefinite; ``||w|| <= radius``,
    ``slack >= 0``).

    A global minimizer either leaves the linear constraint inactive, and is then a local
    minimizer of q over the ball (the global one, or the unique local-non-global one),
    or makes it active, and is then a global minimizer of q over the ball's intersection
    with the hyperplane ``g^T (u - w) = slack`` (a trust-region problem in d - 1
    dimensions). All these candidates are computed by :func:`trust_region_subproblem`'s
    machinery (in the hard case the minimizer of ``g^T u`` among the global trust-region
    minimizers is taken) and the best feasible one is returned; ``u = w`` (value 0) is
    always feasible, so a positive semi-definite H returns it.

    Parameters
    ----------
    H : array-like of shape (d, d)
    w : array-like of shape (d,)
    g : array-like of shape (d,)
    slack : float
        The paper's r (>= 0).
    radius : float
        Radius of the ball C.

    Returns
    -------
    u : ndarray of shape (d,)
    value : float
        ``q(u)`` (<= 0).
    """
    H = np.asarray(H, dtype=np.float64)
    H = 0.5 * (H + H.T)
    w = np.asarray(w, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    d = w.size
    radius, slack = float(radius), float(slack)
    if slack < 0:
        raise ValueError(f"slack must be >= 0, got {slack}")
    q = lambda u: float((u - w) @ H @ (u - w))  # noqa: E731
    best_u, best_q = w.copy(), 0.0
    if np.linalg.eigvalsh(H)[0] >= 0:
        return best_u, best_q
    g_norm = float(np.linalg.norm(g))
    tol_lin = 1e-9 * (slack + g_norm * radius) + 1e-300

    def consider(u):
        nonlocal best_u, best_q
        nu = float(np.linalg.norm(u))
        if nu > radius:
            u = u * (radius / nu)
        if g @ (u - w) <= slack + tol_lin:
            value = q(u)
            if value < best_q:
                best_u, best_q = u, value

    # (a) linear constraint inactive: q(u) = u^T H u - 2 (Hw)^T u + const over the ball.
    for u in _tr_candidates(2.0 * H, -2.0 * (H @ w), radius, tiebreak=g):
        consider(u)
    # (c) linear constraint active: u = h n + N z on the hyperplane, ||z|| <= sqrt(R^2 - h^2).
    if g_norm > 0:
        n_hat = g / g_norm
        h = float(n_hat @ w) + slack / g_norm
        if abs(h) <= radius:
            rad = math.sqrt(max(radius * radius - h * h, 0.0))
            if d == 1 or rad == 0.0:
                consider(h * n_hat)
            else:
                Q, _ = np.linalg.qr(n_hat.reshape(-1, 1), mode="complete")
                N = Q[:, 1:]
                e = h * n_hat - w
                A = 2.0 * (N.T @ H @ N)
                c = 2.0 * (N.T @ (H @ e))
                for z in _tr_candidates(A, c, rad):
                    consider(h * n_hat + N @ z)
    return best_u, best_q


# ------------------------------------------------------------------------ shared set-up
class _Gaussian:
    """The noise of one phase of full-batch Gaussian releases (``sample(rng, d)``)."""

    def __init__(self, scale: float):
        self.scale = float(scale)

    def sample(self, rng, dim):
        return rng.normal(0.0, self.scale, size=dim) if self.scale > 0 else np.zeros(dim)


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
    return _check_probability(name, value)


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _phase(noise: float, sensitivity: float, releases: int, name: str) -> dict:
    return {"name": name, "scale": float(noise), "sensitivity": float(sensitivity), "releases": int(releases)}


def _spent(budget: PrivacyBudget, phases: list[tuple[float, float, int]]) -> tuple[PrivacyBudget, float]:
    """The (epsilon, delta) of the adaptive composition of full-batch Gaussian phases
    ``(sigma, Delta, releases)`` by Gaussian DP, never reported above the budget."""
    kept = [GaussianPhase(s / D, k) for s, D, k in phases if D > 0 and k > 0]
    mu = math.sqrt(sum(p.steps / p.noise_ratio**2 for p in kept))
    eps = phases_epsilon(kept, budget.delta) if kept else 0.0
    return PrivacyBudget(min(budget.epsilon, eps) if eps > 0 else budget.epsilon, budget.delta), mu


# ---------------------------------------------------------------------------- dp_sosp
@register(
    "dp_sosp",
    setting="non-convex; L-Lipschitz, M-smooth, rho-Hessian-Lipschitz; unconstrained",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 4 + 5 (Theorems 7, 8)",
    paper="Wang, Chen, Xu 2019, Differentially private ERM with non-convex loss functions (ICML)",
    requires=("smooth", "lipschitz", "smooth_regularizer", "unconstrained", "approximate_dp"),
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
    (2 beta/(n sigma_2))^2)``, converted to (epsilon, delta) exactly.

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
        Return the phase-1 iterates in ``trace["iterates"]`` (post-processing: private).

    Returns
    -------
    PrivateFit
        ``info["status"]`` is ``"found"`` or ``"not found"``; ``info["selected_iterate"]``
        the index t of the returned iterate (or None); ``info["certified_gradient_norm"]``
        and ``info["certified_min_eigenvalue"]`` the noisy, margin-corrected values of the
        returned candidate (public: post-processing of releases).

    References
    ----------
    Wang, Chen, Xu 2019, Algorithms 4 and 5, Theorems 7 and 8, Definition 9; Dong, Roth, Su 2019.
    """
    name = "dp_sosp"
    rng = start(name, problem, budget, rng)
    rho_problem = _second_order_checks(name, problem)
    n, d = problem.n_samples, problem.n_features
    M = problem.smoothness
    L = problem.lipschitz
    rho = (rho_problem if rho_problem > 0 else M) if rho is None else _positive("rho", rho)
    zeta = _check_probability("failure_probability", failure_probability)
    split = _check_fraction_open("phase_split", phase_split)
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
    if order not in ("latest", "earliest"):
        raise ValueError(f"order must be 'latest' or 'earliest', got {order!r}")
    if isinstance(candidates, str):
        if candidates != "all":
            raise ValueError(f"candidates must be an int, 'all' or None, got {candidates!r}")
        indices = np.arange(T + 1)
    else:
        K_req = _DEFAULT_CANDIDATES if candidates is None else check_steps("candidates", candidates)
        indices = np.unique(np.floor(np.linspace(0, T, min(K_req, T + 1)) + 0.5).astype(int))
        indices[-1] = T
    K = int(indices.size)

    mu = gaussian_dp_mu(budget.epsilon, budget.delta)
    mu_gd = mu * math.sqrt(split)
    mu_cand = mu * math.sqrt(1.0 - split) / math.sqrt(K)
    p = zeta / (2.0 * K)
    a_g = gaussian_norm_bound(1.0, d, p)
    a_h = symmetric_noise_eigenvalue_bound(1.0, d, p)

    # alpha: given, or max(theorem, smallest certifiable under the balanced split).
    if hessian_share is not None:
        share = _check_fraction_open("hessian_share", hessian_share)
        tau_g_fixed = dg / (mu_cand * math.sqrt(1.0 - share)) * a_g
        tau_h_fixed = dh / (mu_cand * math.sqrt(share)) * a_h
        alpha_cert = max(2.0 * tau_g_fixed, 4.0 * tau_h_fixed**2 / rho)
    else:
        A, Bq = (dg * a_g) ** 2, (dh * a_h) ** 2 / rho
        x = (-Bq + math.sqrt(Bq * Bq + A * mu_cand**2)) / (2.0 * A) if A > 0 else mu_cand**2 / (4.0 * Bq)
        alpha_cert = 1.0 / x
    if alpha is None:
        alpha = alpha_cert
    else:
        alpha = _positive("alpha", alpha)
    threshold = math.sqrt(rho * alpha)
    if hessian_share is None:
        c1, c2 = dg * a_g / alpha, dh * a_h / threshold
        share = c2 * c2 / (c1 * c1 + c2 * c2) if c1 + c2 > 0 else 0.5
        share = min(max(share, 1e-12), 1.0 - 1e-12)  # both releases keep a finite noise
    m_g, m_h = mu_cand * math.sqrt(1.0 - share), mu_cand * math.sqrt(share)
    sigma0 = math.sqrt(T) * dg / mu_gd
    sigma1 = dg / m_g
    sigma2 = dh / m_h
    tau_g, tau_h = sigma1 * a_g, sigma2 * a_h

    # Phase 1: DP-GD, all iterates kept.
    last, _, iterates = noisy_gradient_steps(problem, _Gaussian(sigma0), w0, [eta] * T, rng, None, keep_iterates=True)
    iterates.append(last)

    # Phase 2: private certified selection.
    status, selected, cert_g, cert_lam = "not found", None, None, None
    examined = hessians = 0
    for t in (indices[::-1] if order == "latest" else indices):
        w = iterates[int(t)]
        examined += 1
        g = problem.gradient(w) + rng.normal(0.0, sigma1, size=d)
        bound_g = float(np.linalg.norm(g)) + tau_g
        if bound_g > alpha:
            continue
        hessians += 1
        H = problem.hessian(w) + symmetric_gaussian_matrix(rng, d, sigma2)
        bound_lam = float(np.linalg.eigvalsh(H)[0]) - tau_h
        if bound_lam >= -threshold:
            status, selected, cert_g, cert_lam = "found", int(t), bound_g, bound_lam
            break
    coef = iterates[selected] if selected is not None else last

    spent, mu_total = _spent(budget, [(sigma0, dg, T), (sigma1, dg, K), (sigma2, dh, K)])
    trace = {"iterates": np.array(iterates), "private": True} if keep_iterates else {}
    return PrivateFit(
        coef=np.array(coef, dtype=np.float64),
        privacy_spent=spent,
        algorithm=name,
        hyperparameters={
            "steps": T, "step_size": eta, "alpha": alpha, "rho": rho, "candidates": K, "order": order,
            "phase_split": split, "hessian_share": share, "failure_probability": zeta, "loss_bound": B,
        },
        noise={
            "mechanism": "gaussian", "mu": mu_total,
            "scale": sigma0, "sensitivity": dg, "releases": T + 2 * K,
            "phases": [
                _phase(sigma0, dg, T, "gradient descent (phase 1)"),
                _phase(sigma1, dg, K, "candidate gradients (phase 2)"),
                _phase(sigma2, dh, K, "candidate symmetric Hessians (phase 2, upper triangle)"),
            ],
        },
        gradient_evaluations=n * (T + examined),
        iterations=T,
        trace=trace,
        info={
            "status": status, "selected_iterate": selected,
            "certified_gradient_norm": cert_g, "certified_min_eigenvalue": cert_lam,
            "gradient_margin": tau_g, "eigenvalue_margin": tau_h, "eigenvalue_threshold": -threshold,
            "confidence": 1.0 - zeta, "candidates_examined": examined, "hessian_releases": hessians,
            "theorem_alpha": alpha_thm, "certifiable_alpha": alpha_cert, "theorem_steps": theorem_T,
            "candidate_indices": indices.tolist(),
        },
    )


# ---------------------------------------------------------------------------- dp_gd_so
@register(
    "dp_gd_so",
    setting="non-convex; L-Lipschitz, M-smooth, rho-Hessian-Lipschitz; C = L2 ball",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 6 (Theorem 9)",
    paper="Wang, Chen, Xu 2019, Differentially private ERM with non-convex loss functions (ICML)",
    requires=("smooth", "lipschitz", "bounded_constraint", "smooth_regularizer", "approximate_dp"),
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
    mu^2 for the Hessians. Reported spend = the budget, whatever the stopping time. The
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
        Return all iterates in ``trace["iterates"]`` (post-processing: private).

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
    rng = start(name, problem, budget, rng)
    if not isinstance(problem.constraint, L2Ball):
        raise AssumptionError(
            f"{name} (Wang, Chen, Xu 2019, Alg. 6) needs an L2-ball constraint such as ('l2_ball', R); "
            f"got {problem.constraint!r}"
        )
    rho_problem = _second_order_checks(name, problem)
    n, d = problem.n_samples, problem.n_features
    M, R, L = problem.smoothness, problem.constraint.radius, problem.lipschitz
    D = 2.0 * R
    rho = (rho_problem if rho_problem > 0 else M) if rho is None else _positive("rho", rho)
    xi = _check_probability("failure_probability", failure_probability)
    if hessian_share is not None:
        hessian_share = _check_fraction_open("hessian_share", hessian_share)
    w = initial_point(problem, init)
    B = _objective_range(problem, w, loss_bound)
    dg, dh = problem.gradient_sensitivity(), hessian_sensitivity(problem)
    cap = check_steps("max_steps", max_steps)
    if steps is not None:
        steps = check_steps("steps", steps)
    if alpha is not None:
        alpha = _positive("alpha", alpha)
    if gamma is not None:
        gamma = _positive("gamma", gamma)
    elif alpha is not None:
        gamma = math.sqrt(rho * alpha)  # Definition 10 (footnote 6's special case)

    alpha_thm = math.sqrt(theory.dp_sosp_constrained_sample_complexity(
        1.0, d, budget.epsilon, budget.delta, failure_probability=xi) / n)
    if B is None and steps is None:
        _need_bound(name, problem, "steps")
    mu = gaussian_dp_mu(budget.epsilon, budget.delta)
    alpha_vac, gamma_vac = 2.0 * L * D, 2.0 * M * D * D / _PHI  # a test is vacuous at and above these

    def steps_for(a: float, c: float) -> int:  # Theorem 9's T at thresholds (a, c), explicit constants
        return max(1, math.ceil(8.0 * D * D * M * B / a**2 + 144.0 * B * rho**2 * D**6 / (5.0 * _PHI**3 * c**3)))

    def noise_levels(T_: int) -> tuple[float, float, float]:
        """(alpha_noise, gamma_noise, hessian share) for T_ steps: 4 m_g, 4 m_H / Phi."""
        p_ = xi / (2.0 * T_)
        a = 4.0 * D * gaussian_norm_bound(math.sqrt(T_) * dg / mu, d, p_)  # 4 m_g at share 0
        b = 4.0 * D * D * symmetric_noise_eigenvalue_bound(math.sqrt(T_) * dh / mu, d, p_ / 2.0) / _PHI  # at share 1
        if hessian_share is not None:
            sh = hessian_share
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

        if ok(1):
            T = 1
        else:
            lo, hi = 1, cap  # ok(cap) always holds
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if ok(mid):
                    hi = mid
                else:
                    lo = mid
            T = hi
        theorem_T = steps_for(*thresholds(T))
    alpha_noise, gamma_noise, share = noise_levels(T)
    alpha, gamma = thresholds(T)

    sigma1 = math.sqrt(T) * dg / (mu * math.sqrt(1.0 - share))
    sigma2 = math.sqrt(T) * dh / (mu * math.sqrt(share))
    p = xi / (2.0 * T)
    m_g = D * gaussian_norm_bound(sigma1, d, p)
    m_h = D * D * symmetric_noise_eigenvalue_bound(sigma2, d, p / 2.0)
    vacuous_g = alpha >= alpha_vac
    vacuous_h = _PHI * gamma / 2.0 >= M * D * D
    if vacuous_g or vacuous_h:
        which = " and ".join(
            s for s, v in ((f"the first-order test (alpha={alpha:.3g} >= 2 L D = {alpha_vac:.3g})", vacuous_g),
                           (f"the curvature test (Phi gamma / 2 = {_PHI * gamma / 2.0:.3g} >= M D^2 = "
                            f"{M * D * D:.3g})", vacuous_h)) if v
        )
        warnings.warn(
            f"{name}: {which} {'are' if vacuous_g and vacuous_h else 'is'} vacuous: no exact measurement can "
            "trigger it, so the algorithm cannot act on it and status 'found' certifies nothing about it. The "
            "default thresholds are the smallest the noise "
            "allows; more data, a larger epsilon or a smaller radius make them meaningful.",
            UserWarning,
            stacklevel=2,
        )
    eta = min(1.0, alpha / (2.0 * D * D * M)) if step_size is None else check_step_size(step_size)
    theta = min(1.0, _PHI * gamma / (2.0 * rho * D**3)) if theta is None else _positive("theta", theta)
    r = _PHI**2 * gamma**2 / (72.0 * rho * D**3) if linear_slack is None else _positive("linear_slack", linear_slack)
    if eta > 1 or theta > 1:
        raise ValueError(f"step_size and theta must be in (0, 1] to keep the iterates in C, got {eta} and {theta}")

    constraint = problem.constraint
    iterates = [w.copy()] if keep_iterates else None
    status, stopped_by, fw_steps, so_steps = "not found", "max_steps", 0, 0
    last_gap = last_q = cert_gap = cert_q = None
    t_done = 0
    for t in range(T):
        t_done = t + 1
        g = problem.gradient(w) + rng.normal(0.0, sigma1, size=d)
        v = constraint.lmo(g)
        last_gap = float(g @ (v - w))
        if last_gap < -alpha / 2.0:
            w = (1.0 - eta) * w + eta * v
            fw_steps += 1
        else:
            H = problem.hessian(w) + symmetric_gaussian_matrix(rng, d, sigma2)
            u, last_q = ball_halfspace_quadratic(H, w, g, r, R)
            if last_q <= -_PHI * gamma / 2.0:
                w = (1.0 - theta) * w + theta * u
                so_steps += 1
            else:
                status, stopped_by = "found", "second_order_test"
                cert_gap, cert_q = last_gap - m_g, last_q - m_h
                break
        if constraint.minkowski_norm(w) > 1.0:  # rounding only: convex combinations stay in C
            w = constraint.project(w)
        if keep_iterates:
            iterates.append(w.copy())

    spent, mu_total = _spent(budget, [(sigma1, dg, T), (sigma2, dh, T)])
    trace = {"iterates": np.array(iterates), "private": True} if keep_iterates else {}
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=spent,
        algorithm=name,
        hyperparameters={
            "steps": T, "alpha": alpha, "gamma": gamma, "step_size": eta, "theta": theta, "linear_slack": r,
            "rho": rho, "hessian_share": share, "failure_probability": xi, "loss_bound": B, "radius": R,
        },
        noise={
            "mechanism": "gaussian", "mu": mu_total,
            "scale": sigma1, "sensitivity": dg, "releases": 2 * T,
            "phases": [
                _phase(sigma1, dg, T, "gradients"),
                _phase(sigma2, dh, T, "symmetric Hessians (upper triangle), worst case one per step"),
            ],
        },
        gradient_evaluations=n * t_done,
        iterations=t_done,
        trace=trace,
        info={
            "status": status, "stopped_by": stopped_by,
            "frank_wolfe_steps": fw_steps, "second_order_steps": so_steps,
            "first_order_threshold": alpha, "second_order_threshold": gamma,
            "gap_threshold": -alpha / 2.0, "curvature_threshold": -_PHI * gamma / 2.0,
            "last_gap": last_gap, "last_quadratic_value": last_q,
            "gradient_noise_margin": m_g, "curvature_noise_margin": m_h,
            "certified_gap": cert_gap, "certified_curvature": cert_q,
            "theorem_alpha": alpha_thm, "noise_alpha": alpha_noise, "noise_gamma": gamma_noise,
            "theorem_steps": theorem_T,
            "vacuous_gradient_test": vacuous_g, "vacuous_curvature_test": vacuous_h,
        },
    )
