"""Objective perturbation with approximate-minimizer accounting (AMP).

Chaudhuri, Monteleoni, Sarwate 2011 (epsilon-DP), Kifer, Smith, Thakurta 2012
((epsilon, delta)-DP), made practical by Iyengar et al. 2019 ("approximate minima
perturbation"): the perturbed objective is solved only to a public gradient tolerance,
and the remaining error is covered by a small output perturbation.

The mechanism, in the normalized form used throughout dperm::

    J(w) = F(w) + (Lambda / (2 n)) ||w||^2 + <b, w> / n,

with ``b`` Gaussian (delta > 0) or L2-Laplace (delta = 0) of replace-one sensitivity
``2 L``. Its privacy loss at an output w has two parts:

- the density ratio of b at the two noise vectors that map to w on neighbouring
  datasets, which differ by ``grad l(w; z) - grad l(w; z')`` (norm <= 2L): the Gaussian
  (analytic) or L2-Laplace mechanism with sensitivity 2L, parameter ``eps_noise``;
- the Jacobian ratio of ``b -> w``: the Hessians of n J on neighbouring datasets differ
  by one rank-one GLM term ``phi'' x x^T`` of norm <= ``beta_loss`` (= beta_phi R^2:
  the curvature bound scales with data_norm squared) added to a common part whose
  smallest eigenvalue is at least ``Lambda + n mu``, so the ratio of determinants is at
  most ``1 + beta_loss / (Lambda + n mu)`` (matrix determinant lemma):
  ``eps_jacobian = ln(1 + beta_loss / (Lambda + n mu))``.

The exact minimizer of J is then (eps_jacobian + eps_noise, delta_1)-DP. The solver
stops at ``||grad J(w~)|| <= gamma`` (public, chosen from public inputs so that float64
can certify it on any data and chunking: :func:`certified_tolerance`; the exact norm,
certified by a float64 evaluation with an explicit rounding-error bound), so ``||w~ - w_J|| <= gamma / (mu + Lambda/n)``;
releasing ``w~ + N`` with N calibrated to sensitivity ``2 gamma / (mu + Lambda/n)`` with
(eps_2, delta_2) gives (eps_1 + eps_2, delta_1 + delta_2)-DP (Iyengar et al. 2019,
Theorem 1).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize

from ..privacy.budget import PrivacyBudget
from ..privacy import events as ev
from ..privacy.accountant import calibrate
from ..privacy.accountant import epsilon as certified_epsilon
from ..privacy.events import ObjectivePerturbationRelease
from ..privacy.mechanisms import charge, release, sample_release, secure_randomness, vector_mechanism
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import start
from .auto import strongly_convex_smooth
from .registry import AutoRule, register
from .._warnings import user_stacklevel

__all__ = ["objective_perturbation", "objective_perturbation_lambda", "default_tolerance", "certified_tolerance",
           "noise_norm_bound", "minimizer_norm_bound"]

# The certified tolerance is at least this many times the certificate's rounding floor at
# the public bound on ||w||, so the floor is at most gamma / 4 wherever ||w|| is within the
# bound: near the minimizer the computed ||grad J|| is at most that floor plus the exact
# norm (which Newton drives to 0), and the certificate, the computed norm plus its
# rounding bound, then gets below gamma / 2 + the exact norm: the solver stops on the
# certificate itself (the very check made before release).
CERTIFICATE_MARGIN = 4.0


def default_tolerance(lipschitz: float, n: int) -> float:
    """The default public bound gamma on ``||grad J||`` at the released point:
    ``L max(1e-4 / n, 64 u sqrt(n))`` with ``u = 2^-53``.

    ``1e-4 L / n`` makes the output perturbation's sensitivity ``2 gamma / (mu + Lambda/n)``
    a ten-thousandth of the minimizer's ``2 L / (n (mu + Lambda / n))``: its noise, with 1%
    of the budget, is about 1% of the objective noise's standard deviation (0.01% of its
    variance). The floor ``64 u sqrt(n) L`` keeps gamma well above the rounding error
    bound of a float64 gradient (about ``2 sqrt(n) u L`` with the blocked sums of
    :meth:`ERMProblem.certified_gradient`), so the certificate can be met at every n
    (it is the larger term above n of about 5e6). Both are public: n and the declared L.
    """
    return float(lipschitz) * max(1e-4 / n, 64.0 * 2.0**-53 * math.sqrt(n))


def noise_norm_bound(noise: str, scale: float, d: int) -> float:
    """A public bound on ``||b||`` for the noise of b (``scale``: a Gaussian's standard
    deviation, or the scale of an L2-Laplace / iid Laplace vector), exceeded with
    probability below e^-40: ``scale (sqrt(d) + 10)`` for Gaussian noise (Gaussian
    concentration of the norm, a 1-Lipschitz function), ``scale (d + 10 sqrt(d) + 50)``
    for the Laplace kinds (the norm is at most a Gamma(d, scale) variable). It only
    sizes the certified tolerance (:func:`certified_tolerance`); no privacy claim rests
    on it."""
    if noise == "gaussian":
        return float(scale) * (math.sqrt(d) + 10.0)
    return float(scale) * (d + 10.0 * math.sqrt(d) + 50.0)


def certified_tolerance(problem: ERMProblem, requested: float | None, strong_convexity: float,
                        noise_norm: float = 0.0) -> float:
    """The public tolerance gamma on ``||grad J||`` at the released point, reachable in
    float64 arithmetic on any data of the problem's shape and layout.

    ``max(requested or default_tolerance(L, n), 4 floor)`` with ``floor`` the certified
    rounding error of the gradient (:func:`dperm.problem.erm.rounding_floor`) at the
    public bound :func:`minimizer_norm_bound` on the minimizer's norm, for the problem's
    summation layout (n and d in memory; the row blocks on Dask data).
    Every input is public (n, d, the declared bounds, the block sizes, the noise scale),
    so gamma, and the output noise it sizes, are decided before the data are read and
    are the same on neighbouring datasets. Where the floor wins (large n on large
    blocks, or a requested tolerance below float64's reach), the looser tolerance is
    paid for in the output perturbation, whose event is calibrated to it.
    """
    n, L = problem.n_samples, problem.lipschitz
    gamma = default_tolerance(L, n) if requested is None else float(requested)
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"tolerance must be a finite number > 0, got {requested}")
    if getattr(problem, "_custom", False):
        return gamma
    from ..problem.erm import rounding_floor

    w_bound = minimizer_norm_bound(problem, strong_convexity, noise_norm)
    floor = CERTIFICATE_MARGIN * rounding_floor(problem, w_bound)
    if not math.isfinite(floor):
        raise ValueError("no finite tolerance can be certified for this problem: its regularized objective has "
                         "no public bound on the minimizer (add an l2 regularizer)")
    return max(gamma, floor)


def minimizer_norm_bound(problem: ERMProblem, strong_convexity: float, noise_norm: float) -> float:
    """A public bound on ``||w||`` for the minimizer of ``J(w) = loss part + (m/2)||w||^2 +
    <b, w>/n`` with ``m = strong_convexity`` and ``||b|| <= noise_norm``, for a margin loss
    with ``phi >= 0`` (every built-in convex margin loss) and weights in [0, 1].

    The smaller of two: ``(L + ||b||/n) / m`` (the gradient at the minimizer vanishes, the
    loss gradient's norm is at most L), and the root of ``(m/2) r^2 - (||b||/n) r = phi0``
    with ``phi0 = sup_|y| phi(0, y)`` (J at the minimizer is at most J(0) = the mean loss
    at 0 <= phi0, and at least ``(m/2) r^2 - ||b|| r / n``): about ``sqrt(2 phi0 / m)``,
    far below ``L / m`` when m is small. Declared constants and the noise's public scale
    only."""
    if not strong_convexity > 0:
        return math.inf
    n, L, m = problem.n_samples, problem.lipschitz, strong_convexity
    shift = noise_norm / n
    bound = (L + shift) / m
    loss = problem.loss
    try:
        labels = [-1.0, 1.0] if loss.binary else [-problem.label_bound, problem.label_bound, 0.0]
        phi0 = float(np.max(loss.value(np.zeros(len(labels)), np.array(labels))))
    except Exception:  # a loss without a closed-form value at 0: the gradient bound alone
        return bound
    if math.isfinite(phi0) and phi0 >= 0:
        bound = min(bound, (shift + math.sqrt(shift * shift + 2.0 * m * phi0)) / m)
    return bound


def objective_perturbation_lambda(jacobian_epsilon: float, loss_smoothness: float, n: int, mu: float) -> float:
    """The smallest extra ridge Lambda (sum form) with
    ``ln(1 + loss_smoothness / (Lambda + n mu)) <= jacobian_epsilon``."""
    if not jacobian_epsilon > 0:
        raise ValueError(f"jacobian_epsilon must be > 0, got {jacobian_epsilon}")
    if jacobian_epsilon > 700.0:  # e^eps overflows; the ridge it asks for is 0 anyway
        return 0.0
    return max(0.0, loss_smoothness / math.expm1(jacobian_epsilon) - n * mu)


def _objective_functions(problem: ERMProblem, ridge: float, linear: np.ndarray):
    def value_and_gradient(w):
        value, grad = problem.value_and_gradient(w)
        return value + 0.5 * ridge * float(w @ w) + float(linear @ w), grad + ridge * w + linear

    def hessp(w, v):
        return problem.hessian_vector(w, v) + ridge * v

    return value_and_gradient, hessp


# Below this dimension a dense d x d Hessian (one pass over X as a matrix product) gives
# the Newton directions more cheaply than conjugate gradients (two passes per
# Hessian-vector product, about 16 of them to reach rtol 1e-10).
_EXPLICIT_HESSIAN_MAX_D = 1024

# The warm start and the Hessians are taken on every _SAMPLE_STRIDE-th row where n is at
# least _SAMPLE_MIN_ROWS and the sample keeps at least max(_SAMPLE_KEPT_ROWS, 64 d) rows: a pass over
# so many rows costs tens of milliseconds, and a sample of 1/16 of them gives a point whose
# full gradient is already at the sample's error (about 1e-3 of its scale at n = 1e6).
_SAMPLE_MIN_ROWS = 100_000
_SAMPLE_STRIDE = 16
_SAMPLE_KEPT_ROWS = 20_000


# From this dimension on, a Newton step on all rows is solved by conjugate gradients on
# Hessian-vector products (two passes over X each), preconditioned by the row sample's
# Hessian, instead of forming the Hessian on all rows (n d^2 flops, hundreds of passes'
# worth at d = 1000); the sample then keeps at least 8 d rows (its Hessian's relative
# error, about sqrt(d / m), only slows the preconditioned iterations).
_PCG_MIN_D = 256
_PCG_MAX_ITER = 10
_PCG_RTOL = 0.05


def sample_stride(n: int, d: int) -> int:
    """The stride of the row sample the solver warms up on and takes its Hessians from (1:
    none): a function of n and d only. The sample changes only the solver's path, never
    what is certified: every released point meets ``||grad J|| <= gamma`` on all rows."""
    if n < _SAMPLE_MIN_ROWS:
        return 1
    if d >= _PCG_MIN_D:  # the sample only preconditions: 8 d rows (measured at 1e5 x 1000: 41 Gflop, 4.8 s,
        return max(1, min(_SAMPLE_STRIDE, n // (8 * d)))  # against 81 Gflop, 6.1 s with 20 000 rows)
    return max(1, min(_SAMPLE_STRIDE, n // max(_SAMPLE_KEPT_ROWS, 64 * d)))


def _pcg(hessian_vector, precondition, b: np.ndarray, rtol: float, max_iter: int) -> np.ndarray:
    """Preconditioned conjugate gradients for ``H x = b`` (H symmetric positive definite,
    given by its products), stopped at ``||r|| <= rtol ||b||`` or ``max_iter`` products."""
    x = np.zeros_like(b)
    r = b.copy()
    z = precondition(r)
    p = z.copy()
    rz = float(r @ z)
    target = rtol * float(np.linalg.norm(b))
    for _ in range(max_iter):
        hp = hessian_vector(p)
        curvature = float(p @ hp)
        if not curvature > 0:
            break
        alpha = rz / curvature
        x += alpha * p
        r -= alpha * hp
        if float(np.linalg.norm(r)) <= target:
            break
        z = precondition(r)
        rz, previous = float(r @ z), rz
        p = z + (rz / previous) * p
    return x


def _solve_perturbed(problem: ERMProblem, ridge: float, linear: np.ndarray, tolerance: float):
    """Minimize J(w) = F(w) + ridge/2 ||w||^2 + <linear, w> to ||grad J|| <= tolerance.

    Newton's method with a step accepted when it shrinks ||grad J|| (J's values agree to
    the last bit near the minimizer, the gradient norm still measures progress; with the
    exact Hessian the Newton direction always shrinks it for small steps). Large n: first
    a warm start, Newton on a strided row sample (:func:`sample_stride`, 1/16 of the rows)
    to the sample's own accuracy, whose last Hessian is kept for the full data. The
    Hessians are formed with float32 block products (relative error about 1e-6) on the
    sample, and on all rows only where a fresh sample Hessian contracted the gradient by
    less than ``_REFRESH_CONTRACTION`` (its sampling error then limits the steps); a kept
    Hessian is formed again where a step contracted the gradient by less than that or
    would need more than 3 further steps. Gradients need no objective values. float32
    data are driven to float32 accuracy on their own precision (half the memory traffic
    per pass), then, as float64 data, to the tolerance on certified float64 gradients
    (float32 blocks converted exactly), each one pass over X that also leaves the margins
    for a Hessian at that point. Large d, custom losses, or a failed Newton run:
    trust-region Newton-CG and L-BFGS on the float64 view.

    Returns (w, residual, iterations) with ``residual`` an upper bound on the exact
    ``||grad J(w)||`` (computed norm plus its rounding bound, :meth:`_NewtonState.certified_norm`).
    """
    d = problem.n_features
    w = np.zeros(d)
    iterations = 0
    explicit = d <= _EXPLICIT_HESSIAN_MAX_D and not getattr(problem, "_custom", False)
    precise = problem.astype(np.float64)
    state = _NewtonState(ridge, linear)
    if explicit:
        stride = sample_stride(problem.n_samples, d)
        if stride > 1:
            sample = problem.row_sample(stride)
            state.hessian_problem = sample
            state.pcg = d >= _PCG_MIN_D
            w, it = state.run(sample, w, 0.0, float32_stage=True, level=_SAMPLE_STAGE_LEVEL)
            iterations += it
        if problem.dtype == np.float32:
            w, it = state.run(problem, w, 0.0, float32_stage=True)
            iterations += it
        w, it = state.run(precise, w, tolerance)  # stops on the certificate (norm + rounding bound)
        iterations += it
        residual = state.certified_norm()
        if residual <= tolerance:
            return w, residual, iterations
    value_and_gradient, hessp = _objective_functions(precise, ridge, linear)
    for method in ("trust-ncg", "L-BFGS-B", "trust-ncg"):
        options = {"gtol": 0.1 * tolerance, "maxiter": 500}  # aim below: the check is strict
        if method == "L-BFGS-B":
            options.update(ftol=0.0, maxcor=30)
        res = optimize.minimize(value_and_gradient, w, jac=True, hessp=hessp if method == "trust-ncg" else None,
                                method=method, options=options)
        w, iterations = res.x, iterations + int(res.nit)
        w, polish = _newton_polish(value_and_gradient, hessp, w, tolerance)
        iterations += polish
        state.norm = float(np.linalg.norm(state.gradient(precise, w, certify=True)))
        residual = state.certified_norm()
        if residual <= tolerance:
            break
    return w, residual, iterations


_REFRESH_CONTRACTION = 0.05
# A sample's Hessian kept on all rows is formed again (on the sample) only where a step
# contracted the gradient by less than this: the point moved away from where it was formed.
_SAMPLE_REFRESH_CONTRACTION = 0.2
# The float32 stage stops where float32 gradients stop contracting (their rounding
# error, about 1e-7 of the gradient's scale, is reached) or at this relative level.
_FLOAT32_STAGE_LEVEL = 1e-5
# The warm start on the row sample stops at this relative level: the full gradient at the
# sample's minimizer is still about 1e-1 of the starting one at n = 1e6 (the sampling
# error), so going further buys little.
_SAMPLE_STAGE_LEVEL = 1e-2


class _NewtonState:
    """Newton's method on J with a dense Hessian kept (as its Cholesky factor) across
    stages and steps until a step shows it stale. ``hessian_problem`` (a row sample, or
    None for the problem being stepped on) is where fresh Hessians are formed until one
    of them proves too coarse."""

    def __init__(self, ridge: float, linear: np.ndarray):
        self.ridge, self.linear = ridge, linear
        self.factor = None
        self.hessian_problem = None
        self.sampled = False  # whether the kept factor is a sample's Hessian
        self.norm = math.inf  # ||grad J|| at the point the last run returned
        self.bound = math.inf  # the rounding bound of that norm (certified runs)
        self.pcg = False  # steps on all rows by CG preconditioned with the sample's Hessian

    def gradient(self, problem: ERMProblem, w: np.ndarray, certify: bool = False) -> np.ndarray:
        """grad J(w); with ``certify``, in float64 with the rounding bound of
        :meth:`ERMProblem.certified_gradient` extended to J's two extra terms, kept in
        ``self.bound``."""
        if not certify:
            return problem.gradient(w) + self.ridge * w + self.linear
        grad, bound = problem.certified_gradient(w)
        grad = grad + self.ridge * w + self.linear
        u = 2.0**-53  # three more roundings of each coordinate: the product, two sums
        self.bound = bound + 3.0 * u * (self.ridge * float(np.linalg.norm(w)) + float(np.linalg.norm(self.linear))
                                        + float(np.linalg.norm(grad)))
        return grad

    def certified_norm(self) -> float:
        """An upper bound on the exact ||grad J|| at the last certified point: the computed
        norm (d + 1 roundings of a sum of squares and a square root) plus the bound on
        the computed gradient's error."""
        return self._certified(self.norm)

    def _certified(self, norm: float) -> float:
        d_ops = self.linear.shape[0] + 2
        u = 2.0**-53
        return norm * (1.0 + d_ops * u / (1.0 - d_ops * u)) + self.bound

    def _refresh(self, problem: ERMProblem, w: np.ndarray) -> bool:
        from scipy.linalg import cho_factor

        source = problem if self.hessian_problem is None else self.hessian_problem
        H = source.hessian(w, dtype=np.float32)
        H[np.diag_indices_from(H)] += self.ridge
        try:
            self.factor = cho_factor(H)
        except np.linalg.LinAlgError:
            self.factor = None
            return False
        self.sampled = source is not problem
        return True

    def _worth_all_rows(self, contraction: float, norm: float, target: float) -> bool:
        """Whether a Hessian on all rows (about ``1 + d / 100`` certified gradients' time,
        measured at n = 1e6, then about 2 steps) is cheaper than going on with the sample's
        Hessian, which contracts the gradient by ``contraction`` a step."""
        if not (0.0 < contraction < 1.0) or not target > 0:
            return True
        steps = math.log(target / norm) / math.log(contraction) if norm > target else 0.0
        return steps - 2.0 > 1.0 + self.linear.shape[0] / 100.0

    def run(self, problem: ERMProblem, w: np.ndarray, target: float, *, float32_stage: bool = False,
            level: float = _FLOAT32_STAGE_LEVEL, max_iter: int = 50):
        """Newton steps from w until ||grad J|| <= target. The float32 stage works in the
        data's precision (and stops at ``level`` relative to the starting gradient); the
        other computes certified float64 gradients (``self.norm`` and ``self.bound`` then
        describe the returned point)."""
        from scipy.linalg import cho_solve

        certify = not float32_stage
        grad = self.gradient(problem, w, certify)
        norm = float(np.linalg.norm(grad))
        if float32_stage:
            target = max(target, level * norm)
        fresh = False
        for it in range(max_iter):
            # certified runs stop on the certificate itself (the computed norm plus its
            # rounding bound, exactly the released check), not on the computed norm
            if (self._certified(norm) if certify else norm) <= target:
                self.norm = norm
                return w, it
            if self.factor is None:
                if not self._refresh(problem, w):
                    if self.hessian_problem is not None:  # a singular sample Hessian: all rows from now on
                        self.hessian_problem = None
                        continue
                    self.norm = norm
                    return w, it
                fresh = True
            if self.pcg and self.sampled:
                # all rows' curvature through Hessian-vector products (the margins of the last
                # gradient are reused), the sample's Hessian as preconditioner
                factor = self.factor
                step = _pcg(lambda v: problem.hessian_vector(w, v) + self.ridge * v,
                            lambda r: cho_solve(factor, r), -grad, _PCG_RTOL, _PCG_MAX_ITER)
            else:
                step = cho_solve(self.factor, -grad)
            t = 1.0
            while t > 1e-6:
                trial = w + t * step
                bound = self.bound
                trial_grad = self.gradient(problem, trial, certify)
                trial_norm = float(np.linalg.norm(trial_grad))
                if trial_norm < norm:
                    break
                t *= 0.5
            else:
                self.bound = bound  # of w, which is kept
                if fresh and self.sampled:  # the sample's Hessian is too coarse here: all rows
                    self.hessian_problem, self.factor = None, None
                    continue
                if fresh:  # a fresh Hessian cannot shrink the gradient: rounding level reached
                    self.norm = norm
                    return w, it
                self.factor = None  # a stale Hessian: form it here and retry
                continue
            contraction = trial_norm / norm
            if fresh and float32_stage and t == 1.0 and contraction > 0.5 and not self.sampled:
                self.norm = trial_norm  # the fresh Hessian is kept for the float64 stage
                return trial, it + 1  # float32 rounding: the float64 stage continues
            # A kept Hessian contracts the gradient linearly, by about this step's factor;
            # form it again where that would take more than 3 further steps (a fresh one
            # converges quadratically and costs about as much as 1-3 gradients). A fresh
            # sample Hessian that contracts so little is limited by its sampling error:
            # the next one is formed on all rows.
            stale = contraction > _REFRESH_CONTRACTION or (trial_norm > target and contraction**3 > target / trial_norm)
            if stale and self.sampled and self.pcg:
                if contraction > _SAMPLE_REFRESH_CONTRACTION:  # a preconditioner from here
                    self.factor = None
            elif stale and self.sampled:
                # a sample's Hessian on all rows: its sampling error bounds the contraction,
                # which a fresh sample Hessian would not improve; all rows where that pays
                if self._worth_all_rows(contraction, trial_norm, target):
                    self.hessian_problem, self.factor = None, None
                elif contraction > _SAMPLE_REFRESH_CONTRACTION:
                    self.factor = None
            elif stale:
                self.factor = None
            fresh = False
            w, grad, norm = trial, trial_grad, trial_norm
        self.norm = norm
        return w, max_iter


def _newton_polish(value_and_gradient, hessp, w, tolerance, max_iter=30):
    """Newton-CG steps (Hessian-vector products) accepted when they shrink ||grad J||.

    Near the minimizer J's values agree to the last bit and trust-region or line-search
    solvers stop on the value test; the gradient norm still measures progress there.
    """
    from scipy.sparse.linalg import LinearOperator, cg

    grad = value_and_gradient(w)[1]
    norm = float(np.linalg.norm(grad))
    d = w.shape[0]
    for it in range(max_iter):
        if norm <= 0.1 * tolerance:
            return w, it
        H = LinearOperator((d, d), matvec=lambda v, w=w: hessp(w, v), dtype=np.float64)
        step, _ = cg(H, -grad, rtol=1e-10, maxiter=10 * d + 100)
        t = 1.0
        while t > 1e-6:
            trial = w + t * step
            trial_grad = value_and_gradient(trial)[1]
            trial_norm = float(np.linalg.norm(trial_grad))
            if trial_norm < norm:
                break
            t *= 0.5
        else:
            return w, it
        w, grad, norm = trial, trial_grad, trial_norm
    return w, max_iter


@register(
    "objective_perturbation",
    setting="convex GLM loss with bounded curvature, smooth regularizer, unconstrained",
    guarantee="epsilon or (epsilon, delta)",
    source="Chaudhuri et al. 2011 / Kifer et al. 2012; baseline of Wang, Ye, Xu 2017 and Zhang, Zheng, Mou, Wang 2017",
    paper="Kifer, Smith, Thakurta 2012; Iyengar et al. 2019 (AMP)",
    requires=("convex", "smooth", "lipschitz", "smooth_regularizer", "unconstrained", "margin_loss"),
    gradient_complexity="a non-private solve of the perturbed objective (Newton-CG)",
    summary="minimize F + Lambda/(2n)||w||^2 + <b, w>/n, then a small output perturbation",
    auto=AutoRule(2, lambda p, b: strongly_convex_smooth(p, b) and p.regularizer.is_smooth and not p.constraint.bounded,
                  'strongly convex, smooth, unconstrained: objective perturbation'),
)
def objective_perturbation(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    jacobian_share: float = 0.5,
    output_share: float = 0.01,
    tolerance: float | None = None,
    diagnostics: bool = False,
) -> PrivateFit:
    """Objective perturbation (Kifer et al. 2012; epsilon-DP as Chaudhuri et al. 2011)
    with approximate-minimizer accounting (Iyengar et al. 2019).

    Parameters
    ----------
    problem : ERMProblem
        Convex, twice (almost everywhere) differentiable GLM loss with
        ``|phi'| <= L_phi`` and ``0 <= phi'' <= beta_phi``; a smooth regularizer (l2, or
        none); no constraint (the change of variables ``b -> w`` needs the whole space).
    budget : PrivacyBudget
        delta = 0: b is L2-Laplace (Chaudhuri et al.); delta > 0: b is Gaussian. The
        direction of b's shift between neighbours depends on the output, so b is *not*
        calibrated as a fixed-shift Gaussian release (the analytic Gaussian would
        understate delta up to a factor 2): dperm calibrates it to the bound of
        :mod:`dperm.privacy.shifted_gaussian` (a shift in the 2-dimensional span of the
        differing rows; about 14% more noise than the analytic Gaussian at
        (1, 1e-5)), which is valid and tighter than Kifer et al.'s
        ``(8 ln(2/delta) + 4 eps) / eps^2`` times L^2.
    rng : None, int or numpy.random.Generator
        ``None`` with delta > 0 (production): b is drawn exactly on a fine grid and the
        output released by the floating-point-safe sampler, accounted through a coupling
        with the continuous mechanism (docs/privacy.md, "Objective perturbation on the
        secure path"); delta = 0 keeps NumPy's L2-Laplace noise. A seed or Generator:
        NumPy's reproducible noise, for experiments.
    jacobian_share : float
        Share of the objective part's epsilon spent on the Jacobian term; it sets the
        extra ridge ``Lambda = beta_loss / (e^{eps_J} - 1) - n mu`` (zero when the
        regularizer already suffices, the unused epsilon then going to the noise).
        Kifer et al.'s ``Lambda >= 2 beta / eps`` corresponds to about one half.
    output_share : float
        Share of (epsilon, delta) for the output perturbation that covers the solver's
        tolerance (AMP).
    tolerance : float, optional
        Public bound gamma on the exact ``||grad J||`` at the released point; default
        :func:`default_tolerance`, ``L max(1e-4 / n, 64 u sqrt(n))`` (u = 2^-53). The solver
        certifies it in float64 arithmetic with an explicit rounding-error bound
        (:meth:`ERMProblem.certified_gradient`), whatever the data's precision. gamma is
        raised, before the data are read, to 4 times the certificate's rounding floor
        for the problem's summation layout (:func:`certified_tolerance`: n, d, the Dask
        block sizes, declared bounds, the noise scale) where it is below it, with a warning
        when a requested value is raised; the output perturbation is calibrated to the
        gamma used (``hyperparameters["tolerance"]``), so every well-posed fit releases.
    diagnostics : bool, default False
        Fill ``PrivateFit.diagnostics`` with the solver's iteration count (NOT private).

    References
    ----------
    Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization.
    JMLR 2011. Kifer, Smith, Thakurta. Private convex ERM and high-dimensional
    regression. COLT 2012. Iyengar, Near, Song, Thakkar, Thakurta, Wang. Towards
    practical differentially private convex optimization. IEEE S&P 2019.
    """
    secure = secure_randomness(rng)
    rng = start("objective_perturbation", problem, budget, rng)
    for name, share in (("jacobian_share", jacobian_share), ("output_share", output_share)):
        if not 0.0 < share < 1.0:
            raise ValueError(f"{name} must be in (0, 1), got {share}")
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    mu, beta_loss = problem.strong_convexity, problem.constants.loss_smoothness
    if tolerance is not None and not (math.isfinite(float(tolerance)) and float(tolerance) > 0):
        raise ValueError(f"tolerance must be a finite number > 0, got {tolerance}")

    objective_budget, output_budget = budget.scale(1.0 - output_share), budget.scale(output_share)
    if secure and budget.is_pure:
        return _secure_pure(problem, budget, objective_budget, output_budget, jacobian_share, output_share,
                            tolerance, diagnostics)
    if secure:
        coupling = _secure_coupling_event(budget, d)
        objective_budget = PrivacyBudget(objective_budget.epsilon,
                                         math.nextafter(objective_budget.delta - coupling.delta, 0.0))
    eps_1 = objective_budget.epsilon
    ridge_sum = objective_perturbation_lambda(jacobian_share * eps_1, beta_loss, n, mu)
    eps_jacobian = math.log1p(beta_loss / (ridge_sum + n * mu))
    noise_kind = "l2_laplace" if budget.is_pure else "gaussian"
    strong_convexity_J = mu + ridge_sum / n
    # Both releases are calibrated, and their composition charged, before the data is read.
    objective_part = calibrate(lambda x: ObjectivePerturbationRelease(
        noise_kind, x, 2.0 * L, eps_jacobian, objective_budget.delta), objective_budget)
    gamma = _public_tolerance(problem, tolerance, strong_convexity_J, noise_kind, objective_part.event.scale)
    if secure:
        # b = g K exactly (see _secure_coupling_event): continuous noise plus a perturbation
        # rho, ||rho|| <= R, which moves the minimizer of J by at most R / (n mu_J)
        from ..privacy.secure_release import secure_gaussian_noise, secure_noise_parameters

        perturbation = secure_noise_parameters(objective_part.event.scale, d).perturbation
        output_part = vector_mechanism(output_budget, 2.0 * (gamma + perturbation / n) / strong_convexity_J,
                                       charge_now=False, secure=True, dim=d)
        event = ev.composed([objective_part.event, coupling, output_part.event])
        charge(event, "objective_perturbation")
        b = secure_gaussian_noise(objective_part.event.scale, d)
    else:
        output_part = vector_mechanism(output_budget, 2.0 * gamma / strong_convexity_J, charge_now=False)
        event = ev.composed([objective_part.event, output_part.event])
        charge(event, "objective_perturbation")
        b = sample_release(rng, _as_release(objective_part.event), d)
    w, residual, iterations = _solve_perturbed(problem, ridge_sum / n, b / n, gamma)
    _check_certificate(residual, gamma)
    w_priv = release(rng, w, output_part.event)  # secure or seeded, as the event says
    return PrivateFit(
        coef=w_priv,
        privacy_spent=PrivacyBudget(certified_epsilon(event, budget.delta), budget.delta),
        algorithm="objective_perturbation",
        event=event,
        hyperparameters={"jacobian_share": jacobian_share, "output_share": output_share, "tolerance": gamma},
        info={"extra_ridge": ridge_sum / n},
        diagnostics={"solver_iterations": iterations} if diagnostics else {},
    )


def _public_tolerance(problem: ERMProblem, requested, strong_convexity_J: float, noise: str, scale: float) -> float:
    """:func:`certified_tolerance` for the noise actually drawn; warns (public numbers only)
    where a requested tolerance is below float64's certified reach and was raised."""
    gamma = certified_tolerance(problem, requested, strong_convexity_J,
                                noise_norm_bound(noise, scale, problem.n_features))
    if requested is not None and gamma > float(requested):
        warnings.warn(
            f"tolerance={float(requested):.3g} is below what float64 arithmetic can certify for n="
            f"{problem.n_samples} rows in this summation layout; the fit uses {gamma:.3g} instead "
            "(its output perturbation is calibrated to it)", UserWarning, stacklevel=user_stacklevel())
    return gamma


def _check_certificate(residual: float, gamma: float) -> None:
    """The AMP guarantee needs ``||grad J|| <= gamma`` at the released point. gamma is at
    least 4 times the certificate's rounding floor (:func:`certified_tolerance`), where
    Newton's method with backtracking on ``||grad J||`` (J strongly convex, its gradient
    norm's level sets bounded) always gets; the chain of :func:`_solve_perturbed` ends
    there. Not meeting it would be a defect of the solver, never a property of the data:
    it is reported as an internal error rather than released."""
    if not residual <= gamma:
        raise RuntimeError(
            f"internal error: the solver did not reach the tolerance {gamma:.3g} (at least 4 times float64's certified "
            "rounding floor for this problem); nothing was released. Please report it."
        )


def _secure_pure(problem: ERMProblem, budget: PrivacyBudget, objective_budget: PrivacyBudget,
                 output_budget: PrivacyBudget, jacobian_share: float, output_share: float, tolerance,
                 diagnostics: bool) -> PrivateFit:
    """Objective perturbation with delta = 0 on the secure path: exactly epsilon-DP, no slack.

    b has iid Laplace coordinates of scale s (density ``exp(-||b||_1 / s)``): the shift
    between neighbours' noise vectors (L2 norm <= 2L) has L1 norm <= ``sqrt(d) 2 L``, so
    the noise term is ``sqrt(d) 2 L / s`` (the L1 route of the secure Laplace release,
    about sqrt(2) more noise than L2-Laplace for large d). b is drawn as ``g floor(X/g)``
    (:func:`~dperm.privacy.secure_release.floor_laplace_noise`): exactly X minus a
    perturbation rho in ``[0, g)^d``, a function of X, with X continuous Laplace. The
    exact minimizer of J at X is private by the usual analysis; the solver's point, at
    ``||grad J_{X - rho}|| <= gamma``, has ``||grad J_X|| <= gamma + ||rho|| / n``, so it is
    within ``(gamma + g sqrt(d) / n) / mu_J`` of that minimizer whatever X, and the output
    release (the secure discrete Laplace, pure) covers twice that (Iyengar et al. 2019,
    Theorem 1's argument). Total: the objective part's epsilon plus the output's.
    """
    from ..privacy.secure_release import floor_laplace_noise, floor_laplace_parameters

    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    mu, beta_loss = problem.strong_convexity, problem.constants.loss_smoothness
    eps_1 = objective_budget.epsilon
    ridge_sum = objective_perturbation_lambda(jacobian_share * eps_1, beta_loss, n, mu)
    eps_jacobian = math.log1p(beta_loss / (ridge_sum + n * mu))
    strong_convexity_J = mu + ridge_sum / n
    l1_shift = math.nextafter(math.sqrt(d) * 2.0 * L, math.inf)
    calibrated = calibrate(lambda x: ObjectivePerturbationRelease("laplace", x, l1_shift, eps_jacobian, 0.0),
                           objective_budget)
    noise = floor_laplace_parameters(calibrated.event.scale, d)  # its scale g t >= the calibrated one
    gamma = _public_tolerance(problem, tolerance, strong_convexity_J, "laplace", noise.scale)
    objective_event = ObjectivePerturbationRelease("laplace", noise.scale, l1_shift, eps_jacobian, 0.0)
    output_part = vector_mechanism(output_budget, 2.0 * (gamma + noise.perturbation / n) / strong_convexity_J,
                                   charge_now=False, secure=True, dim=d)
    event = ev.composed([objective_event, output_part.event])
    charge(event, "objective_perturbation")  # before the data is read
    b = floor_laplace_noise(noise.scale, d)
    w, residual, iterations = _solve_perturbed(problem, ridge_sum / n, b / n, gamma)
    _check_certificate(residual, gamma)
    return PrivateFit(
        coef=release(None, w, output_part.event),
        privacy_spent=PrivacyBudget(certified_epsilon(event, 0.0), 0.0),
        algorithm="objective_perturbation",
        event=event,
        hyperparameters={"jacobian_share": jacobian_share, "output_share": output_share, "tolerance": gamma},
        info={"extra_ridge": ridge_sum / n},
        diagnostics={"solver_iterations": iterations} if diagnostics else {},
    )


def _secure_coupling_event(budget: PrivacyBudget, dim: int) -> ev.ApproximateDpRelease:
    """What drawing b exactly on a grid costs on top of the continuous analysis.

    b = g K with K discrete Gaussian (:func:`~dperm.privacy.secure_release.secure_gaussian_noise`)
    is, to within e^(+-tau) pointwise, continuous Gaussian noise z of std >= the calibrated
    one plus a data-independent perturbation rho with ``||rho|| <= R`` except with
    probability ``p`` (< 4e-88 d). In that coupled world: the exact minimizer of J at z is
    private by the objective-perturbation analysis; the solver's point is within
    ``(gamma + R / n) / mu_J`` of it whenever ``||rho|| <= R`` (the gradients of J at z and
    at z + rho differ by rho / n), so the output release is a Gaussian mechanism of
    sensitivity ``2 (gamma + R / n) / mu_J`` (Iyengar et al. 2019, Theorem 1's argument);
    the mechanism that clips rho to norm R is then (eps, delta)-DP, and ours differs from
    it with probability <= p, which adds ``(1 + e^eps) p`` to delta. The coupling adds
    2 tau to epsilon and multiplies delta by e^tau <= 1 + 2 tau (tau < 3e-58). All of it is
    this (2 tau, (1 + e^eps) p + 2 tau) term, composed by basic composition.
    """
    from ..privacy.secure_release import PERTURBATION_TAIL, TAU_PER_RELEASE

    tail = math.nextafter(dim * PERTURBATION_TAIL, math.inf)
    extra = (1.0 + math.exp(min(budget.epsilon, 700.0))) * tail + 2.0 * TAU_PER_RELEASE
    if not extra <= 1e-3 * budget.delta:
        raise ValueError("epsilon is too large for the secure objective perturbation (its coupling term would "
                         "exceed 0.1% of delta); pass a random_state for the NumPy path or use output perturbation")
    return ev.ApproximateDpRelease(math.nextafter(2.0 * TAU_PER_RELEASE, math.inf), math.nextafter(extra, 1.0))


def _as_release(event: ObjectivePerturbationRelease):
    """The noise of b as a release event, for the sampler."""
    if event.noise == "gaussian":
        return ev.gaussian_release(event.scale, event.sensitivity)
    return ev.L2LaplaceRelease(event.scale, event.sensitivity)
