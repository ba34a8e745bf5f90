"""Exponential-mechanism sampling over a finite net of C, and localization.

Bassily, Smith, Thakurta 2014, Algorithm 2 samples w from C with density
proportional to ``exp(-eps n F(w) / (2 L ||C||))``. A continuous sampler (their
Algorithm 7, a random walk) is only approximately exact; dperm samples *exactly* from
the same weights restricted to a finite, data-independent alpha-net of C, by Gumbel-max.

Privacy: for a reference point c of C chosen without the data (the centre of the
symmetric sets dperm supports), ``u(D, w) = -sum_i (l(w; z_i) - l(w; c)) - n r(w)``
differs from ``-n F(w)`` by a constant in w, so it induces the same distribution; its
replace-one sensitivity is at most ``2 L max_{w in net} ||w - c||`` (each shifted loss
term has absolute value at most ``L ||w - c||``). The exponential mechanism with that
sensitivity is exactly epsilon-DP (McSherry & Talwar 2007).

The net costs ``n d`` per point to score (a compiled loop, about 3 ns per row and point
at d = 2), and its size grows like
``(eps n / sqrt d)^d``: the mechanism serves small dimensions only and refuses, with the
largest d it could serve, when the net would exceed ``max_points``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy import stats

from ..privacy.budget import PrivacyBudget
from ..privacy import events as ev
from ..privacy.accountant import epsilon as certified_epsilon
from ..privacy.mechanisms import calibrate_and_charge, exponential_select, secure_randomness
from ..problem.constraints import Box, L1Ball, L2Ball
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import LazyModule

_kernels = LazyModule("dperm.algorithms._kernels")  # numba is imported at the first kernel call
from ._common import start
from .registry import AutoRule, register

__all__ = ["exponential_mechanism", "localization", "grid_net", "net_size"]

_SCORE_CHUNK = 2**22  # margins evaluated per chunk (n x points), bounds memory


def _spacing(alpha: float, d: int) -> float:
    """Grid spacing whose cube cells have covering radius alpha: h sqrt(d) / 2 = alpha."""
    return 2.0 * alpha / math.sqrt(d)


def net_size(radius: float, alpha: float, d: int) -> float:
    """Number of points of the cube grid of :func:`grid_net` (before filtering)."""
    per_axis = 2 * math.floor(radius / _spacing(alpha, d)) + 1
    log_size = d * math.log(per_axis)
    return math.exp(log_size) if log_size < 700.0 else math.inf  # 1563^109 overflows a float


def _project_rows(constraint, points: np.ndarray) -> np.ndarray:
    """Row-wise projection onto a constraint (vectorized for the L2 ball and the box)."""
    if isinstance(constraint, L2Ball):
        norms = np.linalg.norm(points, axis=1, keepdims=True)
        return points * np.minimum(1.0, constraint.radius / np.maximum(norms, 1e-300))
    if isinstance(constraint, Box):
        return np.clip(points, -constraint.radius, constraint.radius)
    return np.array([constraint.project(p) for p in points])


def _contains(constraint, points: np.ndarray) -> np.ndarray:
    slack = 1 + 1e-12
    if isinstance(constraint, L2Ball):
        return np.linalg.norm(points, axis=1) <= constraint.radius * slack
    if isinstance(constraint, L1Ball):
        return np.abs(points).sum(axis=1) <= constraint.radius * slack
    if isinstance(constraint, Box):
        return np.abs(points).max(axis=1) <= constraint.radius * slack
    return np.array([constraint.contains(p) for p in points])


def grid_net(constraint, centre: np.ndarray, radius: float, alpha: float) -> np.ndarray:
    """A data-independent alpha-net of ``S = C ∩ B(centre, radius)``.

    The cube grid of spacing ``2 alpha / sqrt(d)`` around ``centre`` covers the cube
    with radius alpha; grid points outside S are replaced by their projection onto S
    when that moves them by at most alpha (projection is non-expansive, so every point
    of S stays within alpha of the net). ``constraint=None`` means S is the ball.
    """
    d = centre.shape[0]
    h = _spacing(alpha, d)
    k = math.floor(radius / h)
    axis = np.arange(-k, k + 1) * h
    grid = np.stack(np.meshgrid(*([axis] * d), indexing="ij"), axis=-1).reshape(-1, d) + centre
    ball = L2Ball(radius)
    bounded = constraint is not None and constraint.bounded
    inside = np.linalg.norm(grid - centre, axis=1) <= radius
    if bounded:
        inside &= _contains(constraint, grid)
    outside = grid[~inside]
    proj = outside
    for _ in range(50 if bounded else 1):  # alternating projections onto two convex sets
        proj = centre + _project_rows(ball, proj - centre)
        if bounded:
            proj = _project_rows(constraint, proj)
            if np.all(np.linalg.norm(proj - centre, axis=1) <= radius * (1 + 1e-12)):
                break
    close = np.linalg.norm(proj - outside, axis=1) <= alpha
    return np.concatenate([grid[inside], proj[close]])


def _objectives(problem: ERMProblem, points: np.ndarray) -> np.ndarray:
    """F at every point of the net: a compiled loop for the built-in losses (dense copy
    of X: the mechanism serves small d), else (a custom loss, or sample weights) chunked
    ``X @ W^T``."""
    reg = problem.regularizer
    penalty = reg.l1 * np.abs(points).sum(axis=1) + 0.5 * reg.l2 * np.einsum("ij,ij->i", points, points)
    on_blocks = getattr(problem, "mean_losses_at_points", None)  # Dask data: one map-reduce over the blocks
    if on_blocks is not None:
        return on_blocks(points) + penalty
    try:
        code, param = _kernels.loss_code(problem.loss)
    except ValueError:
        code = None
    if code is not None and problem.sample_weight is None:
        X = problem.X.toarray() if sp.issparse(problem.X) else problem.X
        values = np.empty(len(points))
        _kernels.mean_losses_at_points(np.ascontiguousarray(X, dtype=np.float64), problem.y.astype(np.float64),
                                       np.ascontiguousarray(points, dtype=np.float64), code, param, values)
        return values + penalty
    X = problem.X
    n = problem.n_samples
    chunk = max(1, _SCORE_CHUNK // n)
    values = np.empty(len(points))
    for begin in range(0, len(points), chunk):
        W = points[begin : begin + chunk]
        margins = np.asarray(X @ W.T.astype(X.dtype), dtype=np.float64)  # (n, k)
        losses = problem._weigh(problem.loss.value(margins, problem.y[:, None]))  # s_i phi(<w, x_i>, y_i)
        values[begin : begin + chunk] = losses.mean(axis=0)
    return values + penalty


def _largest_dimension(radius: float, alpha_of_d, max_points: float) -> int:
    d = 0
    while d < 64 and net_size(radius, alpha_of_d(d + 1), d + 1) <= max_points:
        d += 1
    return d


def _sample_net(problem, budget_epsilon, net, centre, rng, secure: bool):
    L = problem.lipschitz
    reach = float(np.max(np.linalg.norm(net - centre, axis=1)))
    sensitivity = 2.0 * L * reach
    scores = -problem.n_samples * _objectives(problem, net)
    index = exponential_select(rng, scores, budget_epsilon, sensitivity, secure=secure) if sensitivity > 0 else 0
    return net[index], sensitivity


def _default_alpha(n: int, d: int, epsilon: float, diameter: float) -> float:
    """Bassily, Smith, Thakurta 2014 Theorem 3.2: excess risk O(d L ||C|| / (eps n)); a net of resolution
    ``alpha = d ||C|| / (eps n)`` adds at most ``L alpha``, the same order."""
    return d * diameter / (epsilon * n)


def _check_net(radius, alpha, d, max_points, n, epsilon, diameter_of):
    size = net_size(radius, alpha, d)
    if size > max_points:
        largest = _largest_dimension(radius, lambda k: _default_alpha(n, k, epsilon, diameter_of(k)), max_points)
        raise ValueError(
            f"the alpha-net would have {size:.3g} points (d={d}, alpha={alpha:.3g}), more than "
            f"max_points={max_points:.3g}; at this n and epsilon the exponential mechanism serves "
            f"d <= {largest}. Use a gradient method (noisy_gd, dp_sgd) in higher dimension."
        )


@register(
    "exponential_mechanism",
    setting="convex, Lipschitz, bounded C, small d",
    guarantee="epsilon",
    source="Bassily, Smith, Thakurta 2014 Alg. 2",
    paper="Bassily, Smith, Thakurta 2014",
    requires=("convex", "lipschitz", "bounded_domain", "pure_dp", "margin_loss"),
    gradient_complexity="n d |net| loss evaluations, |net| ~ (eps n / sqrt d)^d",
    summary="exact Gumbel-max sampling of exp(-eps n F / (2 L ||C||)) over an alpha-net of C",
    auto=AutoRule(9, lambda p, b: p.is_convex,
                  'convex, pure DP, small dimension: exponential mechanism'),
)
def exponential_mechanism(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    alpha: float | None = None,
    max_points: float = 2e6,
) -> PrivateFit:
    """Exponential sampling based convex optimization (Bassily, Smith, Thakurta 2014, Algorithm 2), exact.

    Parameters
    ----------
    problem : ERMProblem
        Convex L-Lipschitz loss over a bounded C centred at 0 (an unconstrained
        mu-strongly convex F is run over the ball of radius L/mu holding its minimizer).
    budget : PrivacyBudget
        epsilon-DP (delta = 0).
    alpha : float, optional
        Net resolution (covering radius); default ``d ||C|| / (eps n)`` (Theorem 3.2).
    max_points : float
        Largest net allowed; beyond it a ``ValueError`` names the largest d served.

    References
    ----------
    Bassily, Smith, Thakurta 2014, Algorithm 2 and Theorems 3.1-3.2;
    McSherry & Talwar 2007.
    """
    secure = secure_randomness(rng)
    rng = start("exponential_mechanism", problem, budget, rng)
    n, d = problem.n_samples, problem.n_features
    domain = problem.effective_constraint()
    radius = domain.l2_radius(d)
    alpha = _default_alpha(n, d, budget.epsilon, domain.diameter(d)) if alpha is None else float(alpha)
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha}")
    _check_net(radius, alpha, d, max_points, n, budget.epsilon, lambda k: 2.0 * radius)
    centre = np.zeros(d)
    net = grid_net(domain, centre, radius, alpha)
    calibration = _draw_parameter(len(net), budget, "exponential_mechanism")
    w, score_sensitivity = _sample_net(problem, 1.0 / calibration.noise, net, centre, rng, secure)
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm="exponential_mechanism",
        event=calibration.event,
        hyperparameters={"alpha": alpha, "max_points": max_points},
        info={"score_sensitivity": score_sensitivity},  # 2 L max ||w - centre|| over the net: public
    )


def _draw_parameter(candidates: int, budget: PrivacyBudget, label: str):
    """The exponential mechanism's parameter epsilon_0 = 1 / noise level, calibrated."""
    return calibrate_and_charge(lambda x: ev.ExponentialMechanismRelease(1.0 / x, candidates=int(candidates)),
                                budget, label)


def _centre_error_bound(release, d: int, failure: float) -> float:
    """The radius r of localization's ball: ``||w0 - w_hat_tol|| <= r`` with probability
    ``>= 1 - failure`` under the law of the centre's release (public parameters only).
    L2-Laplace: the Gamma(d, scale) quantile of its norm; the secure discrete Laplace:
    :func:`~dperm.privacy.secure_release.secure_laplace_error_bound`."""
    if isinstance(release, ev.SecureLaplaceRelease):
        from ..privacy.secure_release import secure_laplace_error_bound

        return secure_laplace_error_bound(release.grid, release.scale_multiple, d, failure)
    return float(stats.gamma.ppf(1.0 - failure, d, scale=release.scale))


@register(
    "localization",
    setting="strongly convex, Lipschitz, small d",
    guarantee="epsilon",
    source="Bassily, Smith, Thakurta 2014 Alg. 3 + 4",
    paper="Bassily, Smith, Thakurta 2014",
    requires=("convex", "strongly_convex", "lipschitz", "smooth", "pure_dp", "margin_loss"),
    gradient_complexity="a non-private solve, then n d |net| loss evaluations",
    summary="eps/2 output perturbation to a centre, eps/2 exponential mechanism in a ball around it",
)
def localization(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    failure_probability: float | None = None,
    alpha: float | None = None,
    max_points: float = 2e6,
) -> PrivateFit:
    """Localization (Bassily, Smith, Thakurta 2014, Algorithm 4 with Algorithm 3 as the localization step).

    1. Output perturbation with epsilon/2: ``w0 = w_hat + z``, z L2-Laplace with
       sensitivity ``2 L / (n mu)`` (plus ``2 g_tol / mu`` for the certified
       approximate minimizer, as in :func:`output_perturbation`). With
       ``rng=None`` (the secure path) z is the floating-point-safe release of
       :func:`~dperm.privacy.secure_release.secure_laplace_release` (grid rounding plus
       exact iid discrete Laplace noise from the operating system), as in
       :func:`output_perturbation`.
    2. The exponential mechanism with epsilon/2 over an alpha-net of
       ``C0 = C ∩ B(w0, r)``, where r bounds ||z|| with probability
       ``1 - failure_probability`` under z's law (public parameters only): the Gamma
       quantile for L2-Laplace, :func:`~dperm.privacy.secure_release.
       secure_laplace_error_bound` for the secure release (about sqrt(2) times larger for
       large d). So ``w_hat`` lies in C0 with that probability. The score is
       shifted by the loss at w0 (public), so its sensitivity is ``2 L r``.

    Both steps are epsilon/2-DP; w0 is public to step 2 (post-processing), so the
    composition is epsilon-DP whatever r is.

    Parameters
    ----------
    failure_probability : float, optional
        Chance that the ball misses the minimizer; default 1/n (Bassily, Smith, Thakurta 2014 takes a
        polynomially small failure probability).
    alpha : float, optional
        Net resolution; default ``d (2 r) / (eps/2 n)`` (Theorem 3.2 on C0).

    References
    ----------
    Bassily, Smith, Thakurta 2014, Algorithms 3-4, Theorem 4.3.
    """
    from .output_perturbation import output_perturbation

    secure = secure_randomness(rng)
    rng = start("localization", problem, budget, rng)
    n, d = problem.n_samples, problem.n_features
    failure = 1.0 / n if failure_probability is None else float(failure_probability)
    if not 0.0 < failure < 1.0:
        raise ValueError(f"failure_probability must be in (0, 1), got {failure_probability}")
    half = budget.scale(0.5)
    # unseeded: the secure discrete-Laplace release, whose error has its own public bound
    first = output_perturbation(problem, half, rng=None if secure else rng)
    w0 = first.coef
    radius = _centre_error_bound(first.event, d, failure)
    alpha = _default_alpha(n, d, half.epsilon, 2.0 * radius) if alpha is None else float(alpha)
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha}")
    _check_net(radius, alpha, d, max_points, n, half.epsilon, lambda k: 2.0 * radius)
    net = grid_net(problem.constraint, w0, radius, alpha)  # built from w0: post-processing
    second = _draw_parameter(len(net), half, "localization")
    w, score_sensitivity = _sample_net(problem, 1.0 / second.noise, net, w0, rng, secure)
    event = ev.composed([first.event, second.event])
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=PrivacyBudget(certified_epsilon(event, 0.0), 0.0),
        algorithm="localization",
        event=event,
        hyperparameters={"failure_probability": failure, "alpha": alpha, "max_points": max_points},
        info={"ball_radius": radius, "score_sensitivity": score_sensitivity},
    )
