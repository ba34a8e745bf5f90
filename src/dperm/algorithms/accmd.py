"""DP-AccMD: differentially private accelerated mirror descent (Wang, Ye, Xu 2017, Algorithm 3).

Linear coupling (Allen-Zhu & Orecchia 2017) of a gradient step and a mirror step, both fed
the same Gaussian-noised full gradient. For a convex, smooth loss over a centrally
symmetric constraint set C (L1 ball, box, L2 ball) and a mirror map adapted to C, the
excess empirical risk depends on C through ``sqrt(B_w G_C^2)``-type quantities (the
Bregman diameter of the mirror map and the Gaussian width of C) rather than on sqrt(d):
on the L1 ball it grows like ``log d``.

Privacy: step k releases ``g_k = grad F(x_k) + b_k``, ``b_k ~ N(0, sigma^2 I)``, whose
replace-one L2 sensitivity is ``2L/n``; everything else is post-processing of
``g_1..g_T``. T adaptive Gaussian releases are exactly ``sqrt(T) (2L/n) / sigma``-GDP
(Dong, Roth, Su 2019), so the one accountant
(:func:`~dperm.privacy.mechanisms.vector_mechanism` with sensitivity 2L/n and T steps)
loses nothing to composition.

Geometry (one per constraint, all public, :mod:`dperm.algorithms._mirror_geometries`): a
norm ``||.||``, a mirror map w that is 1-strongly convex in it, the smoothness
``L_C = beta rho^2`` of F in it (``||v||_2 <= rho ||v||``), the Bregman diameter
``D >= V_{x_0}(x*)`` and the dual width ``W = E ||xi||_*^2``, xi ~ N(0, I). See
:func:`dp_accmd` for the algorithm and the bound.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.budget import PrivacyBudget
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import release as noisy_release
from ..privacy.mechanisms import secure_randomness, vector_mechanism
from ..problem.constraints import Box, L1Ball, L2Ball
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import check_steps, initial_point, start
from ._mirror_geometries import (
    GEOMETRIES,
    BoxLinfGeometry,
    EuclideanGeometry,
    L1PNormGeometry,
    expected_sq_max_abs_gaussian,
    linf_prox_box,
    make_geometry,
    optimal_pnorm_exponent,
)
from ._mirror_geometries import into as _into
from .registry import AutoRule, AssumptionError, register

__all__ = [
    "dp_accmd",
    "accelerated_mirror_descent",
    "accmd_excess_risk_bound",
    "make_geometry",
    "EuclideanGeometry",
    "L1PNormGeometry",
    "BoxLinfGeometry",
    "linf_prox_box",
    "optimal_pnorm_exponent",
    "expected_sq_max_abs_gaussian",
]


# ------------------------------------------------------------------------- the bound
def accmd_excess_risk_bound(steps, smoothness: float, bregman: float, dual_width: float, sigma: float):
    """The bound proved in :func:`dp_accmd`'s Notes, at T = ``steps`` (array-like ok)::

        E F(y_T) - F* <= 8 L_C D / (T+1)^2 + S_T sigma^2 W / (2 L_C (T+1)^2),
        S_T = sum_{j=2}^{T+1} j^2.

    ``sigma`` is the per-step noise std (itself ``sqrt(T) Delta / mu`` for a budget).
    """
    T = np.asarray(steps, dtype=float)
    S = (T + 1.0) * (T + 2.0) * (2.0 * T + 3.0) / 6.0 - 1.0
    value = 8.0 * smoothness * bregman / (T + 1.0) ** 2 + S * np.square(sigma) * dual_width / (2.0 * smoothness * (T + 1.0) ** 2)
    return float(value) if value.ndim == 0 else value


def _bound_at(geo, D: float, T, sensitivity: float, mu: float):
    T = np.asarray(T, dtype=float)
    sigma = np.sqrt(T) * sensitivity / mu
    return accmd_excess_risk_bound(T, geo.smoothness, D, geo.dual_width(), sigma)


def _theorem_steps(geo, D: float, sensitivity: float, mu: float) -> float:
    """The T minimizing the bound with ``sigma^2 = T Delta^2 / mu^2``.

    Asymptotically ``8 L_C D / T^2 + T^2 Delta^2 W / (6 L_C mu^2)``, minimized at
    ``T = (48 L_C^2 D mu^2 / (Delta^2 W))^{1/4}`` (Wang, Ye, Xu 2017, Theorem 5.4's
    ``sqrt(L ||C||^2 sqrt(B_w) n eps / (G sqrt(ln 1/delta) sqrt(G_C^2 + ||C||^2)))``
    with the constants made explicit); refined over integers near it.
    """
    if sensitivity == 0.0:
        return math.inf
    Tc = (48.0 * geo.smoothness**2 * D * mu**2 / (sensitivity**2 * geo.dual_width())) ** 0.25
    if not math.isfinite(Tc) or Tc > 1e9:
        return math.inf if not math.isfinite(Tc) else float(round(Tc))
    grid = np.unique(np.maximum(1, np.round(Tc * np.exp(np.linspace(-1.0, 1.0, 401)))).astype(np.int64))
    values = _bound_at(geo, D, grid, sensitivity, mu)
    return float(grid[int(np.argmin(values))])


# ------------------------------------------------------------------------- the loop
def accelerated_mirror_descent(problem: ERMProblem, geometry, release, x0, steps: int, rng, *, keep_iterates: bool = False):
    """T steps of linear coupling with one noisy gradient per step (Algorithm 3).

    For k = 0..T-1, with ``alpha = (k+2) / (4 L_C)`` and ``tau = 2 / (k+2) = 1/(2 alpha L_C)``::

        x_{k+1} = tau z_k + (1 - tau) y_k
        g       = grad F(x_{k+1}) + b_{k+1}                 (the only data access)
        z_{k+1} = argmin_{z in C} alpha <g, z> + V_{z_k}(z)  (mirror step)
        v       = tau z_{k+1} + (1 - tau) y_k
        y_{k+1} = a point of C with model(y) <= model(v),    (gradient step, same g)
                  model(y) = <g, y - x_{k+1}> + L_C ||y - x_{k+1}||^2

    ``b_{k+1}`` is one draw of the noise of ``release`` (the event of one step's release or
    of the T steps, drawn by :func:`~dperm.privacy.mechanisms.release`: secure or seeded as the event says).

    Returns ``(y_T, iterates)``; ``iterates`` (with ``keep_iterates``) maps "x", "y", "z"
    to arrays of shape (T + 1, d) (``x[0] = x_0``); they are post-processing of the noisy
    gradients, covered by the same guarantee as ``y_T``.
    """
    d = problem.n_features
    C = problem.constraint
    L_C = geometry.smoothness
    y = np.array(x0, dtype=np.float64)
    z = y.copy()
    xs, ys, zs = ([y.copy()], [y.copy()], [z.copy()]) if keep_iterates else (None, None, None)
    for k in range(steps):
        alpha = (k + 2.0) / (4.0 * L_C)
        tau = 2.0 / (k + 2.0)
        x = _into(C, tau * z + (1.0 - tau) * y)
        g = noisy_release(rng, problem.gradient(x), release)
        z = geometry.mirror_step(z, g, alpha)
        v = _into(C, tau * z + (1.0 - tau) * y)
        y = _into(C, geometry.gradient_step(x, g, v))
        if keep_iterates:
            xs.append(x)
            ys.append(y.copy())
            zs.append(z.copy())
    iterates = {"x": np.array(xs), "y": np.array(ys), "z": np.array(zs)} if keep_iterates else None
    return y, iterates


# ------------------------------------------------------------------------- the algorithm
@register(
    "dp_accmd",
    setting="convex, smooth, C an L1 ball / box / L2 ball",
    guarantee="(epsilon, delta)",
    source="Wang, Ye, Xu 2017, Alg. 3 (Theorem 5.4)",
    paper="Wang, Ye, Xu 2017, Differentially Private ERM Revisited: Faster and More General",
    requires=("convex", "smooth", "lipschitz", "bounded_constraint", "approximate_dp", "smooth_regularizer"),
    gradient_complexity="n T, T = (48 L_C^2 D mu_GDP^2 / (Delta^2 W))^(1/4) ~ sqrt(n) (capped by max_steps)",
    summary="accelerated mirror descent (linear coupling), one Gaussian-noised full gradient per step; "
            "dimension-light on the L1 ball",
    auto=AutoRule(6, lambda p, b: p.is_convex and p.is_smooth and p.constraint.bounded and p.n_features > p.n_samples,
                  'bounded constraint in high dimension: accelerated mirror descent'),
)
def dp_accmd(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    max_steps: int = 1000,
    geometry: str = "auto",
    p: float | None = None,
    init=None,
    keep_iterates: bool = False,
) -> PrivateFit:
    """Differentially private accelerated mirror descent, DP-AccMD (Wang, Ye, Xu 2017, Algorithm 3).

    Linear coupling of a gradient step and a mirror step (Allen-Zhu & Orecchia): for
    k = 0..T-1, with ``alpha_{k+1} = (k+2)/(4 L_C)`` and ``tau_k = 2/(k+2)``,
    ``x_{k+1} = tau_k z_k + (1-tau_k) y_k``; ``g = grad F(x_{k+1}) + b_{k+1}``,
    ``b_{k+1} ~ N(0, sigma^2 I)``; ``z_{k+1} = argmin_{z in C} alpha_{k+1} <g, z> +
    V_{z_k}(z)``; ``y_{k+1}`` minimizes (or, on the L1 ball, improves on ``v = tau_k
    z_{k+1} + (1-tau_k) y_k`` for) the model ``<g, y - x_{k+1}> + L_C ||y - x_{k+1}||^2``
    over C. Output ``y_T``.

    Assumptions: a convex loss that is L-Lipschitz and beta-smooth (in L2) over C, a smooth
    regularizer (none or l2), and C one of the L1 ball, the box, the L2 ball (bounded and
    centrally symmetric); an (epsilon, delta) budget with delta > 0.

    Parameters
    ----------
    problem : ERMProblem
        Convex smooth loss with a bounded constraint ``("l1_ball", R)``, ``("box", R)`` or
        ``("l2_ball", R)``.
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    rng : None, int or numpy.random.Generator
        Source of the noise. ``None`` (production): every step's noisy gradient is a floating-point-safe
        release (grid rounding plus exact discrete Gaussian noise from the OS,
        docs/privacy.md); a seed or Generator: NumPy's reproducible noise, for experiments.
    steps : int, optional
        T. Default: the integer minimizing the explicit bound below with ``sigma^2 = T
        Delta^2 / mu^2`` -- about ``(48 L_C^2 D mu^2 / (Delta^2 W))^{1/4}``, Wang, Ye, Xu 2017,
        Theorem 5.4's ``T = O(sqrt(L ||C||^2 sqrt(B_w) n eps / (G sqrt(ln 1/delta)
        sqrt(G_C^2 + ||C||^2))))`` with explicit constants -- capped by ``max_steps``
        (the uncapped value is ``info["theorem_steps"]``).
    max_steps : int
        Cap on the default T (relevant only at large epsilon).
    geometry : {"auto", "euclidean", "minkowski"}
        ``"minkowski"``: the paper's norm ``||.||_C`` (p-norm mirror map on the L1 ball,
        L-infinity norm with the squared L2 mirror map on the box). ``"euclidean"``:
        ``||.||_2 / r`` with the squared L2 mirror map (projected steps). ``"auto"``
        (default): the one whose bound below is smaller at the T it runs (its own default
        T, or ``steps``) -- at the default T, the p-norm map on the L1 ball in high
        dimension (d beyond a few hundred), Euclidean on the box (whose bound at the
        optimal T is ~ sqrt(2d/pi) times smaller than with the box's own norm) and on the
        L2 ball (where they coincide). The choice uses public constants only.
    p : float in (1, 2], optional
        Exponent of the p-norm mirror map on the L1 ball; default
        :func:`optimal_pnorm_exponent` (about ``1 + 1/(2 ln d)``, minimizing the Bregman
        diameter; the textbook ``1 + 1/ln d`` gives a diameter larger by a factor
        between 1.15 at d = 2000 and e/2 as d grows).
    init : array-like, optional
        Public starting point x_0 (default 0, the centre of C).
    keep_iterates : bool
        Keep the iterates x_k, y_k, z_k in ``info["iterates"]`` (a dict of three (T+1, d)
        arrays; all private: post-processing).

    Returns
    -------
    PrivateFit
        ``coef = y_T``; ``info`` holds the geometry, the mirror map, ``L_C``, the Bregman
        diameter D, the dual width W, ``theorem_steps`` and ``excess_risk_bound`` (the
        bound below at the T run).

    Notes
    -----
    **Privacy, exact accounting.** Step k touches the data only through ``grad F(x_k)``
    (mean loss gradient; the l2 part of r is public), whose replace-one L2 sensitivity is
    ``Delta = 2L/n``; ``g_k`` is released with ``N(0, sigma^2 I)`` noise and everything
    else -- both steps, the choice of the gradient-step candidate (by the model value,
    which depends on g only), the output -- is post-processing. T adaptive Gaussian
    releases are exactly ``sqrt(T) Delta / sigma``-GDP (Dong, Roth, Su 2019), so
    ``sigma = sqrt(T) Delta / mu(eps, delta)`` via ``vector_mechanism(budget, 2L/n,
    steps=T)`` (the event is in ``PrivateFit.event``); one noise draw per step.

    **Deviation from the paper.** Algorithm 3 as printed feeds the exact gradient
    ``grad F(x_{k+1})`` to the y-step and the noisy one only to the z-step: its output
    y_T would then not be private (Theorem 5.3 accounts for the z-step noise only). Here
    both steps use the same noisy g. Also: the paper's ``L`` is read as the smoothness in
    ``||.||_C``, ``L_C = beta rho^2`` with rho the L2 radius of C (Lemma 5.1 holds with
    the radius in place of the diameter ``||C||_2``, a factor 4 in L_C); the y-step's
    quadratic weight is ``L_C = 1/(2 alpha tau)``, the value the coupling identity asks
    for, which also lets the noise enter only as ``||b||_*^2 / (2 L_C)`` per step.

    **Utility (Theorem 5.4 with explicit constants).** With ``V_{z_0}(x*) <= D``,
    ``W = E||xi||_*^2``, the coupling argument gives, per step,
    ``2 alpha^2 L_C (F(y_{k+1}) - F*) <= (2 alpha^2 L_C - alpha)(F(y_k) - F*) + V_k - V_{k+1}
    + alpha^2 ||b||_*^2 - alpha <b, z_k - x*>`` (Young's inequality absorbs the noise in
    the gradient step; the last term has mean 0), hence::

        E F(y_T) - F* <= 8 L_C D / (T+1)^2 + S_T sigma^2 W / (2 L_C (T+1)^2),
        S_T = sum_{j=2}^{T+1} j^2 ~ T^3 / 3,

    ``~ 8 L_C D / T^2 + T^2 Delta^2 W / (6 L_C mu^2)``, whose minimum over T is about
    ``4 Delta sqrt(D W / 3) / mu = 8 L sqrt(D W / 3) / (n mu)`` -- Wang, Ye, Xu 2017's
    ``O(sqrt(B_w) sqrt(G_C^2 + ||C||^2) G sqrt(ln 1/delta) / (n eps))``. On the L1 ball of
    radius R with the p-norm map, ``D W ~ 2 e R^2 ln(d) ln(2d)``: logarithmic in d.

    References
    ----------
    Wang, Ye, Xu 2017, Section 5, Algorithm 3, Theorems 5.3-5.4; Allen-Zhu &
    Orecchia, "Linear Coupling", ITCS 2017; Ben-Tal, Margalit, Nemirovski 2001 and
    Shalev-Shwartz 2007 (p-norm mirror maps); Dong, Roth, Su 2019 (Gaussian DP).
    """
    secure = secure_randomness(rng)
    rng = start("dp_accmd", problem, budget, rng)
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    max_steps = check_steps("max_steps", max_steps)
    user_steps = None if steps is None else check_steps("steps", steps)
    constraint = problem.constraint
    if type(constraint) not in (L2Ball, L1Ball, Box):
        raise AssumptionError(
            f"dp_accmd (Wang, Ye, Xu 2017, Alg. 3) needs C an L2 ball, L1 ball or box; got {constraint!r}")
    x0 = initial_point(problem, init)
    sensitivity = problem.gradient_sensitivity()
    geo, D, theorem_T, T, options = _choose_geometry(problem, budget, geometry, p, x0, user_steps, max_steps)

    calibration = vector_mechanism(budget, sensitivity, steps=T, label="dp_accmd", secure=secure,
                                   dim=problem.n_features)
    coef, iterates = accelerated_mirror_descent(problem, geo, calibration.event, x0, T, rng,
                                                keep_iterates=keep_iterates)
    hyper = {"steps": T, "geometry": geo.name, "max_steps": max_steps,
             "alpha": "(k+2) / (4 L_C)", "tau": "2 / (k+2)"}
    if isinstance(geo, L1PNormGeometry):
        hyper["p"] = geo.p
    info = {
        "theorem_steps": int(theorem_T) if math.isfinite(theorem_T) else None,
        "mirror_map": geo.mirror_map,
        "smoothness_in_norm": geo.smoothness,
        "bregman_diameter": D,
        "dual_width": geo.dual_width(),
        "excess_risk_bound": float(accmd_excess_risk_bound(T, geo.smoothness, D, geo.dual_width(), calibration.noise)),
        "geometry_bounds": {name: bound for name, bound in options},
    }
    if iterates is not None:
        info["iterates"] = iterates  # post-processing of the noisy gradients: private
    return PrivateFit(
        coef=coef,
        privacy_spent=calibration.spent,
        algorithm="dp_accmd",
        event=calibration.event,
        hyperparameters=hyper,
        info=info,
    )


def _choose_geometry(problem: ERMProblem, budget: PrivacyBudget, geometry: str, p, x0, user_steps, max_steps):
    """(geometry, D, theorem T, T, [(name, bound at its T)]): the geometry named, or for
    "auto" the one whose bound is smaller at the T it runs. Public constants only."""
    d, sensitivity = problem.n_features, problem.gradient_sensitivity()
    # The GDP parameter of the budget only enters this utility choice (T and geometry);
    # the noise is calibrated by the accountant in dp_accmd.
    mu = gaussian_dp_mu(budget.epsilon, budget.delta)
    names = ["euclidean", "minkowski"] if geometry == "auto" else [geometry]
    options = []
    for name in names:
        geo = make_geometry(problem.constraint, d, problem.smoothness, name, p)
        if any(type(o[0]) is type(geo) for o in options):
            continue  # the L2 ball: both names are the same geometry
        D = geo.bregman_diameter(x0)
        theorem_T = _theorem_steps(geo, D, sensitivity, mu)
        T = user_steps if user_steps is not None else int(min(theorem_T, max_steps))
        options.append((geo, D, theorem_T, T, float(_bound_at(geo, D, T, sensitivity, mu))))
    geo, D, theorem_T, T, _ = min(options, key=lambda o: o[4])
    return geo, D, theorem_T, T, [(o[0].name, o[4]) for o in options]
