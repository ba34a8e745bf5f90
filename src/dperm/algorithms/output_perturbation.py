"""Output perturbation: of an (approximate) exact minimizer, and of T gradient-descent steps.

Both release ``w + z`` once, with z from the one general vector mechanism
(:func:`dperm.privacy.mechanisms.vector_mechanism`: L2-Laplace for epsilon-DP, analytic
Gaussian for (epsilon, delta)-DP) scaled to an L2 sensitivity computed for the iterate
actually released.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..privacy.budget import PrivacyBudget
from ..privacy.mechanisms import release as noisy_release
from ..privacy.mechanisms import vector_mechanism
from ..problem.erm import ERMProblem
from ..problem.reference import solve_reference
from ..result import PrivateFit
from . import schedules
from ._common import check_step_size, check_steps, initial_point, start
from .auto import strongly_convex_smooth
from .registry import AutoRule, check_assumptions, get, register
from .._warnings import user_stacklevel

__all__ = [
    "output_perturbation", "gd_output_perturbation", "gd_sensitivity", "gradient_descent",
    "PreparedRelease", "prepare_output_perturbation", "prepare_gd_output_perturbation", "gd_output_perturbation_steps",
]


@dataclass(frozen=True)
class PreparedRelease:
    """The deterministic part of an output-perturbation fit: the un-noised point and the
    calibration its single noise draw comes from.

    Everything here is computed without randomness, so repeated private releases of one
    problem (benchmarks, ``dperm bench table3``) may share it and redraw only the noise;
    each release is then a fresh run of the mechanism with the stated guarantee (and is
    charged as such by :meth:`release`). ``diagnostics`` holds the non-private solver's
    bookkeeping (never released).
    """

    algorithm: str
    point: np.ndarray
    calibration: object  # privacy.accountant.Calibration
    hyperparameters: dict
    info: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)

    def draw(self, problem: ERMProblem, rng) -> np.ndarray:
        """``point + z``, projected back onto a bounded C (post-processing)."""
        w_priv = noisy_release(rng, self.point, self.calibration.event)
        if problem.constraint.bounded:
            w_priv = problem.constraint.project(w_priv)
        return w_priv

    def release(self, problem: ERMProblem, rng, *, diagnostics: bool = False) -> PrivateFit:
        return PrivateFit(
            coef=self.draw(problem, rng),
            privacy_spent=self.calibration.spent,
            algorithm=self.algorithm,
            event=self.calibration.event,
            hyperparameters=dict(self.hyperparameters),
            info=dict(self.info),
            diagnostics=dict(self.diagnostics) if diagnostics else {},
        )


def _check(name: str, problem: ERMProblem, budget: PrivacyBudget) -> None:
    """What :func:`start` checks, without making a generator."""
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    check_assumptions(get(name), problem, budget)
    budget.check_delta(problem.n_samples)


@register(
    "output_perturbation",
    setting="strongly convex",
    guarantee="epsilon or (epsilon, delta)",
    source="Bassily, Smith, Thakurta 2014, Alg. 3 (output perturbation step; after Chaudhuri et al. 2011)",
    paper="Bassily, Smith, Thakurta 2014; Chaudhuri, Monteleoni, Sarwate 2011",
    # margin_loss: the argmin sensitivity 2L/(n mu) needs the loss's convexity and the
    # bound L to hold for the true gradients; a custom loss only declares them
    requires=("convex", "strongly_convex", "lipschitz", "smooth", "margin_loss"),
    gradient_complexity="a non-private solve to a certified tolerance (Newton, as objective perturbation's)",
    summary="perturb an approximate minimizer whose optimality residual is certified",
    auto=AutoRule(3, lambda p, b: strongly_convex_smooth(p, b) and p.regularizer.is_smooth,
                  'strongly convex and smooth: output perturbation of the minimizer'),
)
def output_perturbation(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    tolerance: float | None = None,
    diagnostics: bool = False,
) -> PrivateFit:
    """Output perturbation of an approximate minimizer of a strongly convex F.

    Exact minimizers of mu-strongly convex objectives on neighbouring datasets differ
    by at most ``2 L / (n mu)`` (replace-one). The minimizer is computed only
    approximately: the solver runs until the optimality residual
    ``dist(0, dF(w)) <= tolerance`` (a public number), which puts w within
    ``tolerance / mu`` of the exact minimizer; so the released point has sensitivity
    ``2 L / (n mu) + 2 tolerance / mu``, and that is what the noise is calibrated to.

    Parameters
    ----------
    problem : ERMProblem
        Convex smooth Lipschitz loss, mu-strongly convex F (l2 or elastic-net).
    budget : PrivacyBudget
        ``delta == 0``: epsilon-DP with L2-Laplace noise; ``delta > 0``:
        (epsilon, delta)-DP with analytic Gaussian noise.
    rng : None, int or numpy.random.Generator
        Source of the noise. ``None`` (the production path): the floating-point-safe
        release of :mod:`dperm.privacy.secure_release` (grid rounding plus exact discrete
        noise from the operating system's secure generator; docs/privacy.md). A seed or a
        Generator: NumPy's floating-point noise, reproducible, for experiments only.
    tolerance : float, optional
        Public residual target; default ``1e-3 L / n`` (adds 0.1% to the sensitivity).
        For an unconstrained smooth margin loss it is raised, before the data are read, to
        4 times the rounding floor of the certified gradient at the public bound on the
        minimizer (:func:`output_tolerance`; warns when a requested value is raised), and
        the residual is certified with that gradient and its rounding bound.
    diagnostics : bool, default False
        Fill ``PrivateFit.diagnostics`` with the non-private solver's iteration count
        (NOT private: for debugging only).

    Returns
    -------
    PrivateFit
        ``coef`` = approximate minimizer + noise, projected back onto C when C is bounded.

    Raises
    ------
    RuntimeError
        If the solver cannot certify the tolerance (nothing is released then).

    References
    ----------
    Bassily, Smith, Thakurta 2014, Algorithm 3 step 1; Chaudhuri et al.
    2011; the approximate-minimizer correction follows the remark of ALGORITHMS.md.
    """
    secure = rng is None  # the production path: floating-point-safe noise from the OS
    rng = start("output_perturbation", problem, budget, rng)
    prepared = prepare_output_perturbation(problem, budget, tolerance=tolerance, secure=secure)
    return prepared.release(problem, rng, diagnostics=diagnostics)


def prepare_output_perturbation(problem: ERMProblem, budget: PrivacyBudget, *, tolerance: float | None = None,
                                secure: bool = False) -> PreparedRelease:
    """The deterministic part of :func:`output_perturbation` (same checks and defaults)."""
    _check("output_perturbation", problem, budget)
    n, L, mu = problem.n_samples, problem.lipschitz, problem.strong_convexity
    requested = tolerance
    tolerance = 1e-3 * L / n if tolerance is None else float(tolerance)
    if not (math.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be a finite number > 0, got {tolerance}")
    certify = _certifiable(problem)
    constrained = not certify and _certifiable_constrained(problem)
    if certify or constrained:  # reachable in float64 on any data of this shape and layout: public inputs
        tolerance = output_tolerance(problem, tolerance) if certify else constrained_tolerance(problem, tolerance)
        if requested is not None and tolerance > float(requested):
            warnings.warn(
                f"tolerance={float(requested):.3g} is below what float64 arithmetic can certify for n={n} rows in "
                f"this summation layout; the fit uses {tolerance:.3g} instead (the sensitivity is calibrated to it)",
                UserWarning, stacklevel=user_stacklevel())
    sensitivity = 2.0 * L / (n * mu) + 2.0 * tolerance / mu
    calibration = vector_mechanism(budget, sensitivity, label="output_perturbation", secure=secure,
                                   dim=problem.n_features)  # before the data is read
    if certify and problem.regularizer.is_smooth:
        # objective perturbation's Newton solver with no noise term: a row-sample warm start,
        # certified float64 gradients, stopping on the certificate of ||grad F|| itself
        from .objective_perturbation import _solve_perturbed

        point, residual, iterations = _solve_perturbed(problem, 0.0, np.zeros(problem.n_features), tolerance)
    else:
        solution = solve_reference(problem, tol=0.5 * tolerance if (certify or constrained) else tolerance)
        point, residual, iterations = solution.coef, solution.residual, solution.iterations
    if certify and not problem.regularizer.is_smooth:
        residual = _certified_residual(problem, point)
    elif constrained:
        point, residual = _certified_constrained_point(problem, point)
    if not residual <= tolerance:
        raise RuntimeError(
            f"the solver did not reach the tolerance {tolerance:.3g}; nothing was released. "
            "Raise `tolerance` (it enters the sensitivity)."
        )
    return PreparedRelease(
        algorithm="output_perturbation",
        point=point,
        calibration=calibration,
        hyperparameters={"tolerance": tolerance},
        info={"minimizer_sensitivity": 2.0 * L / (n * mu)},
        diagnostics={"solver_iterations": iterations},
    )


def _certifiable(problem: ERMProblem) -> bool:
    """Whether the residual of the solution can be certified with a rounding-error bound:
    a built-in smooth margin loss, unconstrained (the residual is then ``dist(0, grad F +
    the l1 part's subdifferential)`` at the solution itself)."""
    return (not getattr(problem, "_custom", False) and hasattr(problem, "certified_gradient")
            and problem.is_smooth and not problem.constraint.bounded)


def _certifiable_constrained(problem: ERMProblem) -> bool:
    """Whether a constrained solution's residual can be certified: a built-in smooth margin
    loss over a bounded C (the residual is then the gradient mapping's, at one proximal
    step from the solution, see :func:`_certified_constrained_point`), with a smooth
    regularizer, or with an l1 part when C is an L2 ball or a box, where the step's
    ``P_C(soft-threshold(.))`` is exactly the proximal map of ``l1 + indicator of C``
    (separable for a box; for a ball centred at 0 the optimality conditions give a scaled
    soft-threshold). Over an L1 ball with an l1 part it is not, and no certificate is made."""
    from ..problem.constraints import Box, L2Ball

    exact_prox = problem.regularizer.is_smooth or isinstance(problem.constraint, (L2Ball, Box))
    return (not getattr(problem, "_custom", False) and hasattr(problem, "certified_gradient")
            and problem.is_smooth and problem.constraint.bounded and exact_prox)


def constrained_tolerance(problem: ERMProblem, tolerance: float) -> float:
    """``max(tolerance, 4 (2 + mu/beta) floor)``, ``floor`` the certified gradient's rounding
    error anywhere on C (points of norm <= its radius R, gradients of norm <= L + l2 R):
    n, d, the summation layout and declared constants only. The factor ``2 + mu/beta`` is
    what the rounding costs the constrained certificate (:func:`_certified_constrained_point`):
    the solver's half of the tolerance plus that stays within it."""
    from ..problem.erm import _rounding_bound
    from .objective_perturbation import CERTIFICATE_MARGIN

    radius = problem.constraint.l2_radius(problem.n_features)
    gradient_norm = problem.lipschitz + problem.regularizer.l2 * radius
    floor = _rounding_bound(problem, radius, gradient_norm, problem.certificate_accumulation())
    return max(float(tolerance), CERTIFICATE_MARGIN * (2.0 + problem.strong_convexity / problem.smoothness) * floor)


def _certified_constrained_point(problem: ERMProblem, w: np.ndarray) -> tuple[np.ndarray, float]:
    """``(w+, r)``: one projected gradient step from w on the certified float64 gradient,
    and a bound r with ``||w+ - w*|| <= r / mu`` (w* the exact constrained minimizer).

    With g the certified gradient (``||g - grad F(w)|| <= b``) and step s = 1/beta, the
    exact step ``w+* = P_C(w - s grad F(w))`` is within ``s b`` of the computed w+ (the
    projection is non-expansive), plus the step's own rounding ``e``. At w+*, twice the
    gradient mapping, ``2 ||w - w+*|| / s``, bounds ``dist(0, grad F + N_C)``, so
    ``||w+* - w*|| <= 2 (||w - w+|| + s b + e) / (s mu)`` and ``||w+ - w*||`` adds
    ``s b + e``: r = ``2 (||w - w+|| + s b + e) / s + mu (s b + e)``."""
    w = np.asarray(w, dtype=np.float64)
    step = 1.0 / problem.smoothness
    grad, bound = problem.astype(np.float64).certified_gradient(w)
    w_plus = problem.prox_step(w, grad, step)
    k = problem.n_features + 2
    unit = 2.0**-53
    gap = float(np.linalg.norm(w - w_plus)) * (1.0 + 2.0 * k * unit)
    # rounding of w - s g and of the projection: a few ulps of the vectors involved, per coordinate
    own = 8.0 * k * unit * (float(np.linalg.norm(w)) + step * float(np.linalg.norm(grad)))
    moved = step * bound + own
    residual = (2.0 * (gap + moved) / step + problem.strong_convexity * moved) * (1.0 + 4.0 * unit)
    return w_plus, residual


def output_tolerance(problem: ERMProblem, tolerance: float) -> float:
    """``max(tolerance, 4 floor)`` with ``floor`` the certified rounding error of the
    gradient at the public bound on the minimizer's norm
    (:func:`~dperm.algorithms.objective_perturbation.certified_tolerance` with no noise):
    n, d, the summation layout and declared constants only."""
    from .objective_perturbation import certified_tolerance

    return certified_tolerance(problem, tolerance, problem.strong_convexity)


def _certified_residual(problem: ERMProblem, w: np.ndarray) -> float:
    """An upper bound on the exact ``dist(0, dF(w))``: the distance computed from the
    certified float64 gradient plus its rounding bound (the distance is 1-Lipschitz in
    the gradient), the norm's own rounding allowed for."""
    grad, bound = problem.astype(np.float64).certified_gradient(w)
    distance = problem.regularizer.subgradient_distance(np.asarray(w, dtype=np.float64), grad)
    k = problem.n_features + 2
    return distance * (1.0 + 2.0 * k * 2.0**-53) + bound


def gd_sensitivity(lipschitz: float, n: int, step_size: float, steps: int, mu: float, beta: float) -> float:
    """L2 sensitivity of the T-th iterate of (proximal, projected) gradient descent.

    Two runs from the same w_0 on neighbouring datasets satisfy
    ``Delta_{t+1} <= c Delta_t + 2 eta L / n`` with ``c = max(|1 - eta mu|, |1 - eta beta|)``,
    the Lipschitz constant of the gradient step ``w -> w - eta grad F(w)`` for a
    mu-strongly convex beta-smooth F (projections and proximal maps of convex
    functions are non-expansive and keep the bound). Closed form:
    ``Delta_T = (2 eta L / n) sum_{k < T} c^k``. Needs ``eta <= 2 / beta``.
    """
    if step_size > 2.0 / beta * (1 + 1e-12):
        raise ValueError(f"step_size {step_size:g} exceeds 2/beta = {2.0 / beta:g}: GD is not stable there")
    c = max(abs(1.0 - step_size * mu), abs(1.0 - step_size * beta))
    per_step = 2.0 * step_size * lipschitz / n
    if c >= 1.0:
        return per_step * steps
    return per_step * (1.0 - c**steps) / (1.0 - c)


def gradient_descent(problem: ERMProblem, step_size: float, steps: int, w0: np.ndarray) -> np.ndarray:
    """T steps of (proximal, projected) full gradient descent from w0; no noise."""
    w = np.array(w0, dtype=np.float64)
    for _ in range(steps):
        w = problem.prox_step(w, problem.gradient(w), step_size)
    return w


def gd_output_perturbation_steps(problem: ERMProblem, budget: PrivacyBudget, radius: float, step_size: float, w0,
                                 share: float = schedules.GD_OUTPUT_OPTIMIZATION_SHARE) -> tuple[int, int]:
    """(default T, the theorem's T) of :func:`gd_output_perturbation`: Zhang, Zheng, Mou,
    Wang 2017 Theorem 2 or 3 (constant 1), capped for mu > 0 where its bound's
    optimization term is ``share`` of the noise term
    (:func:`~dperm.algorithms.schedules.gd_output_perturbation_capped_steps`)."""
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    mu, beta = problem.strong_convexity, problem.smoothness
    theorem = schedules.gd_output_perturbation_theorem_steps(
        n=n, d=d, lipschitz=L, strong_convexity=mu, smoothness=beta, epsilon=budget.epsilon,
        delta=budget.delta, radius=radius)
    if not mu > 0 or step_size > 1.0 / beta:  # the contraction 1 - eta mu of F - F* needs eta <= 1/beta
        return theorem, theorem
    unit = vector_mechanism(budget, 1.0, charge_now=False).noise  # noise per unit of sensitivity
    per_unit = d * (d + 1) * unit**2 if budget.is_pure else d * unit**2  # E||z||^2 at sensitivity 1

    T = schedules.gd_output_perturbation_capped_steps(
        theorem_steps=theorem, step_size=step_size, strong_convexity=mu, smoothness=beta,
        initial_gap=schedules.initial_gap_bound(problem, w0),
        noise_second_moment=lambda sensitivity: per_unit * sensitivity**2,
        sensitivity=lambda T: gd_sensitivity(L, n, step_size, T, mu, beta), share=share)
    return T, theorem


@register(
    "gd_output_perturbation",
    setting="convex or strongly convex, smooth",
    guarantee="epsilon or (epsilon, delta)",
    source="Zhang, Zheng, Mou, Wang 2017, Alg. 1",
    paper="Zhang, Zheng, Mou, Wang 2017",
    # margin_loss: the contraction of GD steps needs the declared convexity and
    # smoothness to be true, which a custom loss's clipped gradients do not guarantee
    requires=("convex", "smooth", "lipschitz", "margin_loss"),
    gradient_complexity="n T, T = O(kappa log n) strongly convex, O(n^(2/3)) convex",
    summary="T steps of full gradient descent, then noise scaled to the exact GD sensitivity",
    auto=AutoRule(7, lambda p, b: p.is_convex and p.is_smooth and p.regularizer.is_smooth,
                  'convex and smooth: output-perturbation gradient descent'),
)
def gd_output_perturbation(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    step_size: float | None = None,
    steps: int | None = None,
    radius: float | None = None,
    init=None,
) -> PrivateFit:
    """Output-perturbation gradient descent (Zhang, Zheng, Mou, Wang 2017, Algorithm 1).

    Runs T steps of (proximal, projected) full gradient descent from a public w_0 and
    releases ``w_T + z``. The noise is calibrated to the exact sensitivity recursion of
    :func:`gd_sensitivity`, which is never larger than the paper's Lemma 2
    (``3 L T eta / n``) and Lemma 3 (``5 L (mu + beta) / (n mu beta)``) bounds; both
    are reported in ``info`` for comparison.

    Parameters
    ----------
    problem : ERMProblem
        Convex, beta-smooth, L-Lipschitz loss; mu-strongly convex F when mu > 0.
    budget : PrivacyBudget
        ``delta == 0``: epsilon-DP with L2-Laplace noise (density ~ exp(-eps ||z|| / Delta),
        line 5); ``delta > 0``: (epsilon, delta)-DP with the analytic Gaussian, which
        needs less noise than line 7's ``4 log(2/delta)`` Gaussian.
    step_size : float, optional
        Default ``1 / (mu + beta)`` (Theorem 2) when mu > 0, else ``1 / beta`` (Theorem 3).
    steps : int or "theorem", optional
        "theorem": T of Theorem 2, ``(mu^2 + beta^2)/(mu beta) log(mu^2 n^2 eps^2 D^2 / (L^2 p))``,
        or Theorem 3, ``(beta^2 n^2 eps^2 D^2 / (L^2 p))^(1/3)``, with p = d^2 for
        epsilon-DP and ``d log(1/delta)`` for (epsilon, delta)-DP (reported as
        ``info["theorem_steps"]``). Default (None): that T when mu = 0; when mu > 0, the
        smallest T at which the optimization term ``(1 - eta mu)^T G_0`` of the excess-risk
        bound is at most its noise term ``(beta/2) E||z_T||^2`` (G_0 a public bound
        on ``F(w_0) - F*``; :func:`~dperm.algorithms.schedules.gd_output_perturbation_capped_steps`),
        if smaller: the noise is calibrated to the sensitivity of the T actually run.
    radius : float, optional
        D, a public bound on ||w_hat|| used only to choose T. Default: the radius of a
        bounded C, else L / mu when mu > 0 (where the minimizer provably lies), else 1.
    init : array-like, optional
        Public starting point w_0 (default zeros).
    rng : None, int or numpy.random.Generator
        ``None``: the floating-point-safe release (as :func:`output_perturbation`); a seed
        or a Generator: NumPy's reproducible floating-point noise, for experiments.

    References
    ----------
    Zhang, Zheng, Mou, Wang. Efficient private ERM for smooth objectives. IJCAI 2017,
    Algorithm 1, Lemmas 2-3, Theorems 2-3.
    """
    secure = rng is None  # the production path: floating-point-safe noise from the OS
    rng = start("gd_output_perturbation", problem, budget, rng)
    prepared = prepare_gd_output_perturbation(problem, budget, step_size=step_size, steps=steps, radius=radius, init=init,
                                              secure=secure)
    return prepared.release(problem, rng)


def prepare_gd_output_perturbation(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    step_size: float | None = None,
    steps: int | None = None,
    radius: float | None = None,
    init=None,
    secure: bool = False,
) -> PreparedRelease:
    """The deterministic part of :func:`gd_output_perturbation` (same checks and defaults)."""
    _check("gd_output_perturbation", problem, budget)
    n, L = problem.n_samples, problem.lipschitz
    mu, beta = problem.strong_convexity, problem.smoothness
    if radius is None:
        domain = problem.effective_constraint()
        radius = domain.l2_radius(problem.n_features) if domain is not None else 1.0
    eta = (1.0 / (mu + beta) if mu > 0 else 1.0 / beta) if step_size is None else check_step_size(step_size)
    w0 = initial_point(problem, init)
    capped, theorem = gd_output_perturbation_steps(problem, budget, radius, eta, w0)
    if steps is None:
        T = capped
    elif isinstance(steps, str):
        if steps != "theorem":
            raise ValueError(f"steps must be an integer >= 1, 'theorem' or None, got {steps!r}")
        T = theorem
    else:
        T = check_steps("steps", steps)
    sensitivity = gd_sensitivity(L, n, eta, T, mu, beta)
    calibration = vector_mechanism(budget, sensitivity, label="gd_output_perturbation", secure=secure,
                                   dim=problem.n_features)  # before the data is read

    w = gradient_descent(problem, eta, T, w0)

    info = {"paper_sensitivity_convex": 3.0 * L * T * eta / n, "theorem_steps": theorem}
    if mu > 0 and eta <= 1.0 / (mu + beta) * (1 + 1e-12):
        info["paper_sensitivity_strongly_convex"] = 5.0 * L * (mu + beta) / (n * mu * beta)
    return PreparedRelease(
        algorithm="gd_output_perturbation",
        point=w,
        calibration=calibration,
        hyperparameters={"step_size": eta, "steps": T, "radius": radius},
        info=info,
    )


# The algorithms whose repeats may share their deterministic part (name -> prepare).
PREPARE = {
    "output_perturbation": prepare_output_perturbation,
    "gd_output_perturbation": prepare_gd_output_perturbation,
}
