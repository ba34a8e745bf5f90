"""The sub-problems of the private second-order methods (:mod:`dperm.algorithms.sosp`):
exact trust-region and ball-and-halfspace quadratic solvers, and the high-probability
bounds on the noise that the certified selections subtract.

Everything here is deterministic and public (it sees only released, noisy quantities or
public constants); see :mod:`dperm.algorithms.sosp` for the proofs of the noise bounds.

References
----------
Moré, Sorensen. Computing a trust region step. SIAM J. Sci. Stat. Comput. 1983;
Martínez. Local minimizers of quadratic functions on Euclidean balls and spheres. SIAM J.
Optim. 1994 (the trust-region sub-solver and its local-non-global minimizer).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import optimize

__all__ = [
    "check_probability",
    "candidate_indices",
    "gaussian_norm_bound",
    "symmetric_noise_eigenvalue_bound",
    "trust_region_subproblem",
    "ball_halfspace_quadratic",
]


DEFAULT_CANDIDATES = 4  # dp_sosp: default number of candidate iterates K (see its docstring)


# ------------------------------------------------------------------ candidate selection
def candidate_indices(steps: int, candidates) -> np.ndarray:
    """The iterates 0..T that dp_sosp examines, fixed before any data is touched:
    ``"all"`` of them, or K (default :data:`DEFAULT_CANDIDATES`) evenly spaced ones, both
    ends included."""
    if isinstance(candidates, str):
        if candidates != "all":
            raise ValueError(f"candidates must be an int, 'all' or None, got {candidates!r}")
        return np.arange(steps + 1)
    if candidates is None:
        k = DEFAULT_CANDIDATES
    elif isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)) or candidates < 1:
        raise ValueError(f"candidates must be an integer >= 1, 'all' or None, got {candidates!r}")
    else:
        k = int(candidates)
    indices = np.unique(np.floor(np.linspace(0, steps, min(k, steps + 1)) + 0.5).astype(int))
    indices[-1] = steps
    return indices


# ------------------------------------------------------------------------ noise bounds
def check_probability(name: str, value) -> float:
    """``value`` as a float in the open interval (0, 1); TypeError or ValueError otherwise."""
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
    p = check_probability("failure_probability", failure_probability)
    return float(scale) * (math.sqrt(dim) + math.sqrt(2.0 * math.log(1.0 / p)))


def symmetric_noise_eigenvalue_bound(scale: float, dim: int, failure_probability: float) -> float:
    """``t`` with ``P(lambda_max(E) > t) <= p`` (and the same for ``-lambda_min(E)``).

    E is the symmetric dim x dim matrix whose upper triangle (diagonal included) is i.i.d.
    ``N(0, scale^2)``: ``t = scale (2 sqrt(dim) + 2 sqrt(ln(1/p)))`` by Sudakov-Fernique
    and Borell-TIS (notes of :mod:`dperm.algorithms.sosp`). For ``||E||_op`` use ``p / 2``.
    """
    p = check_probability("failure_probability", failure_probability)
    return float(scale) * (2.0 * math.sqrt(dim) + 2.0 * math.sqrt(math.log(1.0 / p)))


def release_norm_bound(release, dim: int, failure_probability: float) -> float:
    """``t`` with ``P(||noise|| > t) <= p`` for the noise of one draw of ``release`` (a
    ``GaussianRelease`` of a ``dim``-vector, drawn by :func:`dperm.privacy.mechanisms.release`).

    Seeded path: :func:`gaussian_norm_bound` at ``release.sigma``. Secure path (``release.
    secure``): the error of ``g (round(q/g) + K)`` is the rounding (``<= g/2`` a
    coordinate) plus ``g K``; by the coupling of :mod:`dperm.privacy.secure_release`, the
    law of K is within ``e^(+-tau)`` pointwise (tau = ``TAU_PER_COORDINATE dim``) of
    ``x + (k - x)`` with x continuous N(0, S^2 - r^2) per coordinate and
    ``|k - x| <= 60`` except with probability ``PERTURBATION_TAIL`` per coordinate. So the
    continuous bound at std ``g sqrt(S^2 - r^2)`` (>= sigma) plus ``60.5 g sqrt(dim)``
    holds except with probability ``e^tau (p' + dim PERTURBATION_TAIL) <= p``, p' the
    probability the continuous bound is computed at (:func:`_secure_share`).
    """
    if not getattr(release, "secure", False):
        return gaussian_norm_bound(release.sigma, dim, failure_probability)
    grid, std, inner = _secure_noise(release, dim, failure_probability)
    return gaussian_norm_bound(std, dim, inner) + 60.5 * grid * math.sqrt(dim)


def release_eigenvalue_bound(release, dim: int, failure_probability: float) -> float:
    """``t`` with ``P(lambda_max(E) > t) <= p`` (and for ``-lambda_min(E)``) for the
    symmetric noise E of one release of a ``dim x dim`` symmetric matrix through its upper
    triangle (``dim (dim + 1) / 2`` coordinates) by ``release``.

    Seeded path: :func:`symmetric_noise_eigenvalue_bound`. Secure path: as
    :func:`release_norm_bound`, the continuous bound at the coupled std plus the
    operator norm of the perturbation matrix, at most its Frobenius norm
    ``60.5 g dim`` (every entry within ``60.5 g``).
    """
    if not getattr(release, "secure", False):
        return symmetric_noise_eigenvalue_bound(release.sigma, dim, failure_probability)
    grid, std, inner = _secure_noise(release, dim * (dim + 1) // 2, failure_probability)
    return symmetric_noise_eigenvalue_bound(std, dim, inner) + 60.5 * grid * dim


def _secure_noise(release, size: int, failure_probability: float) -> tuple[float, float, float]:
    """(grid g, coupled continuous std ``g sqrt(S^2 - r^2)``, the probability p' at which
    to take the continuous bound) for a secure release of ``size`` coordinates."""
    from ..privacy.secure_release import (
        PERTURBATION_TAIL,
        SMOOTHING,
        TAU_PER_COORDINATE,
        secure_gaussian_parameters,
    )

    p = check_probability("failure_probability", failure_probability)
    params = secure_gaussian_parameters(release.sigma, release.sensitivity, size)
    std = params.grid * math.sqrt(params.noise_multiple**2 - SMOOTHING**2)
    # e^tau (p' + size tail) <= p; tau is below 1e-60 for any size that fits in memory
    inner = p * math.exp(-2.0 * TAU_PER_COORDINATE * size) - 2.0 * size * PERTURBATION_TAIL
    return params.grid, std, inner


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
