"""DP-SVRG and DP-SVRG++ (Wang, Ye, Xu 2017, Algorithms 1 and 2), exactly accounted.

The paper's inner step is ``v = grad f_i(x) - grad f_i(x~) + v~ + u`` with
``v~ = grad F(x~)`` the snapshot gradient and ``u ~ N(0, sigma^2 I)``. Its privacy
theorems (4.1, 4.3) treat v as a subsampled Gaussian release of sensitivity O(G), but v~
is a full-batch quantity that enters *every* inner step un-noised: the inner steps leak
it, and Theorems 4.1 / 4.3 (stated "for some constant c") do not account for it.

dperm runs a variant in which every released quantity has its own exactly accounted
Gaussian noise (ALGORITHMS.md):

1. Once per epoch the snapshot gradient of the loss is released as
   ``v~ = grad F_loss(x~) + N(0, sigma_s^2 I)``, sensitivity ``2 L / n`` (replace-one),
   a full-batch Gaussian release. The snapshots share their Gaussian-DP budget
   geometrically by default (:func:`snapshot_weights`): later snapshots, whose noise the
   remaining contractions cannot shrink, get more of it.
2. Every inner step releases the batch sum of the variance-reduction terms
   ``grad f_i(x) - grad f_i(x~)``. For a GLM loss with ``|phi'| <= L_phi``,
   ``|phi''| <= beta_phi`` and ``||x_i|| <= R`` each term has norm at most
   ``c = min(2 L, beta_phi R^2 ||x - x~||)``, a *public* number (x and x~ are
   post-processing of earlier releases), so the sum has replace-one sensitivity 2c and
   gets noise of standard deviation ``r * 2c`` with a fixed ratio r: every inner step is
   a subsampled Gaussian mechanism with the same noise ratio, whatever c is.

Both phases form one event (full-batch Gaussian snapshot releases composed with T
subsampled Gaussian inner releases), accounted exactly by the one accountant (PLD; a
fixed-size batch by the pair of :func:`dperm.privacy.pld.fixed_batch_gaussian_pmf`). The noise of the inner steps shrinks as
the iterates approach the snapshot, which is what makes variance reduction pay off
under privacy. The regularizer (l1, l2, elastic net) enters through its proximal map
and costs no privacy.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..exceptions import SVRGNoiseWarning  # defined in the leaf, re-exported here
from .._warnings import user_stacklevel
from ..privacy.budget import PrivacyBudget
from ..privacy import events as ev
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness, single_release
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import LazyModule

_kernels = LazyModule("dperm.algorithms._kernels")  # numba is imported at the first kernel call
from ._common import check_step_size, check_steps, initial_point, projection_of, start
from .registry import AutoRule, register, strongly_convex_smooth

__all__ = ["dp_svrg", "dp_svrg_pp", "prox_svrg_inner_steps", "prox_svrg_rate", "minibatch_variance_factor",
           "svrg_default_epochs", "snapshot_weights", "snapshot_noise_factor", "inner_noise_contraction_term",
           "SVRGNoiseWarning", "SVRGPlan", "dp_svrg_plan", "svrg_contracts"]

_BLOCK = 512


def minibatch_variance_factor(n: int, batch_size: int, sampling: str) -> float:
    """alpha(b): how much a batch of b rows shrinks the variance of the SVRG estimator.

    For fixed-size batches without replacement ``alpha = (n - b) / (b (n - 1))``
    (Konecny, Liu, Richtarik, Takac 2016, mS2GD); for Poisson batches of rate q = b/n
    normalized by b, ``alpha = (1 - q) / b`` (the variance of a Poisson sum divided by b^2,
    relative to the second moment). alpha = 1 at b = 1 (fixed size), the single-example
    estimator of Prox-SVRG.
    """
    b = batch_size
    if sampling == "poisson":
        return (1.0 - b / n) / b
    return (n - b) / (b * (n - 1.0)) if n > 1 else 0.0


def prox_svrg_rate(step_size: float, mu: float, beta: float, inner_steps: int, variance_factor: float = 1.0) -> float:
    """The per-epoch contraction factor of (mini-batch) Prox-SVRG,
    ``1/(mu eta (1 - a) m) + a (m + 1) / ((1 - a) m)`` with ``a = 4 beta eta alpha``
    (Xiao & Zhang 2014, Theorem 3.1 at alpha = 1; mS2GD for a batch variance factor
    alpha, see :func:`minibatch_variance_factor`): ``E[P(x~_s) - P*] <= rate^s (P(x~_0) - P*)``.
    """
    a = 4.0 * beta * step_size * variance_factor
    if a >= 1.0:
        return math.inf
    m = inner_steps
    return 1.0 / (mu * step_size * (1.0 - a) * m) + a * (m + 1.0) / ((1.0 - a) * m)


def prox_svrg_inner_steps(step_size: float, mu: float, beta: float, rate: float = 0.75,
                          variance_factor: float = 1.0) -> int:
    """Smallest m whose Prox-SVRG contraction factor (:func:`prox_svrg_rate`) is <= rate.

    Wang, Ye, Xu's inequality (4) has 8 in place of 4 and asks for ``< 1/2``; as printed it
    cannot hold for any m when ``eta = 1/(12 beta)`` (its second term exceeds 2), so the
    Prox-SVRG condition it is derived from is used.
    """
    a = 4.0 * beta * step_size * variance_factor
    if a >= 1.0:
        raise ValueError("step_size must be below 1/(4 beta alpha) for Prox-SVRG")
    slack = rate - a / (1.0 - a)  # the (m + 1)/m term tends to a / (1 - a)
    if slack <= 0:
        raise ValueError(f"no epoch length reaches the rate {rate} at this step size")
    # 1/(mu eta (1-a) m) + a/((1-a) m) <= slack
    m = (1.0 / (mu * step_size * (1.0 - a)) + a / (1.0 - a)) / slack
    return max(1, int(math.ceil(m)))


def snapshot_noise_factor(epochs: int, rate: float, schedule: str) -> float:
    """``sum_s rate^(T-s) sigma_s^2``, in units of the variance ``1/mu_s^2`` one snapshot
    would have with the snapshots' whole Gaussian-DP budget: how much the T noisy
    snapshots add up to after the contractions. ``T (1 - rate^T) / (1 - rate)`` for the
    uniform schedule, ``((1 - rate^(T/2)) / (1 - sqrt(rate)))^2`` for the geometric one
    (:func:`snapshot_weights`), which stays below ``1 / (1 - sqrt(rate))^2``."""
    if schedule == "uniform":
        return epochs * (1.0 - rate**epochs) / (1.0 - rate)
    if schedule == "geometric":
        return ((1.0 - math.sqrt(rate) ** epochs) / (1.0 - math.sqrt(rate))) ** 2
    raise ValueError(f"snapshot_schedule must be 'uniform' or 'geometric', got {schedule!r}")


def svrg_default_epochs(rate: float, n: int, d: int, snapshot_mu: float, max_epochs: int = 200,
                        schedule: str = "geometric", tolerance: float = 0.1) -> int:
    """Number of epochs T for the public bound
    ``B(T) = rate^T + (4 d / (n^2 mu_s^2)) * snapshot_noise_factor(T, rate, schedule)``:
    the smallest T with ``B(T) <= (1 + tolerance) min_T B``.

    In units of ``L^2 / (2 mu)`` (a bound on ``P(0) - P*``, the loss gradient at the
    default start w = 0 having norm <= L): the first term is the optimization error
    after T contractions; the second bounds the error the noisy snapshots leave. Each
    epoch's inner loop minimizes ``P + <u_s, w>`` with u_s the snapshot noise, so it
    stops ``<= ||u_s||^2 / (2 mu)`` above P*, with ``E||u_s||^2 = d sigma_s^2``,
    ``sigma_s = (2L/n) / mu_{s}`` (mu_{s} the snapshot's share of the Gaussian-DP
    parameter mu_s), and the later contractions shrink that floor by ``rate^(T - s)``
    (:func:`snapshot_noise_factor`). More epochs shrink the first term and grow the
    second: the theorem's ``T = O(log(n^2 eps^2 / (d log(1/delta))))`` with its
    constant made explicit by this trade-off. Under the geometric schedule the bound is
    flat near its minimum (ADULT, eps = 1: 10 epochs are within 3% of the 15 that
    minimize it), so the first T within ``tolerance`` of the minimum is taken rather than
    paying up to 70% more gradient evaluations for the last few percent of a bound.
    """
    weight = 4.0 * d / (n * snapshot_mu) ** 2
    bounds = [rate**T + weight * snapshot_noise_factor(T, rate, schedule) for T in range(1, max_epochs + 1)]
    best = min(bounds)
    return next(T for T, value in enumerate(bounds, start=1) if value <= (1.0 + tolerance) * best)


def svrg_contracts(p, b) -> bool:
    """dp_svrg's default plan keeps its inner noise within what the Prox-SVRG contraction
    tolerates (otherwise it warns and may drift; the next rules take over): the condition
    of dp_svrg's ``AutoRule``."""
    try:
        return b.delta > 0 and dp_svrg_plan(p, b).noise_term < 1.0
    except ValueError:
        return False


def inner_noise_contraction_term(*, n: int, d: int, batch_size: int, steps: int, step_size: float, mu: float,
                                 beta: float, loss_smoothness: float, inner_gdp_mu: float) -> float:
    """``4 beta eta alpha_noise``: the share of the Prox-SVRG variance budget taken by the
    inner-step noise (contraction needs the total below 1).

    The noise added to the batch mean has ``E||.||^2 = d (2 r c / b)^2`` with
    ``c <= loss_smoothness ||w - w~||`` and ``||w - w~||^2 <= (4/mu)(P(w) - P* + P(w~) - P*)``,
    which is the Prox-SVRG variance bound ``4 beta alpha (P(w) - P* + P(w~) - P*)`` with
    ``alpha_noise = 4 d r^2 loss_smoothness^2 / (b^2 mu beta)``. The noise ratio r is
    estimated by the central-limit approximation of the subsampled Gaussian
    (``mu_inner^2 = q^2 steps (exp(1/r^2) - 1)``), which is only used for this diagnostic;
    the noise actually added is calibrated exactly by the accountant.
    """
    q = batch_size / n
    r = 1.0 / math.sqrt(math.log1p(inner_gdp_mu**2 / (q * q * steps)))
    alpha_noise = 4.0 * d * (r * loss_smoothness / batch_size) ** 2 / (mu * beta)
    return 4.0 * beta * step_size * alpha_noise


def snapshot_weights(epochs: int, schedule: str, rate: float) -> np.ndarray:
    """Shares of the snapshots' Gaussian-DP ``mu^2``, one per epoch (they sum to 1).

    ``"uniform"``: every snapshot gets ``1/T``. ``"geometric"``: epoch s gets a share
    proportional to ``rate^((T - s)/2)``. The noise of snapshot s biases the inner loop
    of epoch s, and the later contractions shrink that error by ``rate^(T - s)``; the
    shares minimizing ``sum_s rate^(T-s) sigma_s^2`` under a fixed total
    ``sum_s 1/sigma_s^2`` are these (Lagrange), and they leave the last epoch with
    ``mu^2 (1 - sqrt(rate))`` instead of ``mu^2 / T``.
    """
    if schedule == "uniform":
        return np.full(epochs, 1.0 / epochs)
    if schedule != "geometric":
        raise ValueError(f"snapshot_schedule must be 'uniform' or 'geometric', got {schedule!r}")
    if not (0.0 < rate < 1.0):
        raise ValueError(f"rate must be in (0, 1), got {rate}")
    weights = np.sqrt(rate) ** np.arange(epochs - 1, -1, -1, dtype=float)
    return weights / weights.sum()


def _svrg_event(snapshot_sigmas, snapshot_sensitivity, inner_ratio, inner_bound, steps, q, sampling, n,
                secure=False):
    """The event: one full-batch Gaussian release per snapshot, then ``steps`` subsampled
    releases of a batch sum of replace-one sensitivity at most ``inner_bound`` (= 2 x the
    per-example cap 2L) with noise ``inner_ratio`` times the step's public sensitivity
    bound. The event states the worst step (sensitivity ``inner_bound``); every step has
    the same noise ratio, so the same privacy loss (``secure``: every release by the
    floating-point-safe sampler, accounted at the rounding's effective sensitivity, which
    is the same multiple ``1 + 2^-12`` of every step's bound)."""
    snapshots = [ev.gaussian_release(s, snapshot_sensitivity, secure=secure) for s in snapshot_sigmas]
    inner = ev.sampled_releases(ev.gaussian_release(inner_ratio * inner_bound, inner_bound, secure=secure), n,
                                round(q * n), steps, sampling)
    return ev.composed(snapshots + [inner])


def _split_budget(problem, budget: PrivacyBudget, weights: np.ndarray, snapshot_share: float, steps: int, q: float,
                  sampling: str, n: int, secure: bool = False):
    """Snapshot sigmas and the calibration of the inner noise ratio. Snapshot s gets the
    Gaussian-DP parameter ``sqrt(share * weights[s]) * mu(eps, delta)`` (an allocation;
    the accountant certifies the whole event); the inner ratio is the smallest the
    accountant certifies for the whole budget."""
    if not (0.0 < snapshot_share < 1.0):
        raise ValueError(f"snapshot_share must be in (0, 1), got {snapshot_share}")
    mu_snapshot = math.sqrt(snapshot_share) * gaussian_dp_mu(budget.epsilon, budget.delta)
    sensitivity = problem.gradient_sensitivity()
    snapshot_sigmas = [sensitivity / (mu_snapshot * math.sqrt(w)) for w in weights]
    inner_bound = 4.0 * problem.lipschitz

    def make_event(ratio):
        return _svrg_event(snapshot_sigmas, sensitivity, ratio, inner_bound, steps, q, sampling, n, secure)

    try:
        calibration = calibrate_and_charge(make_event, budget, "dp_svrg")
    except ValueError:
        raise ValueError("no noise level meets the budget (the snapshot releases take all of it)") from None
    return snapshot_sigmas, calibration


def _run(problem: ERMProblem, budget, rng, *, name, epoch_lengths, restart_from_snapshot, step_size, batch_size,
         sampling, snapshot_share, init, snapshot_weights, secure=False):
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    b = batch_size
    if b > n:
        raise ValueError(f"batch_size {b} exceeds the number of rows {n}")
    epochs, total_steps, q = len(epoch_lengths), int(sum(epoch_lengths)), b / n
    if len(snapshot_weights) != epochs:
        raise ValueError("one snapshot weight per epoch is needed")
    snapshot_sigmas, calibration = _split_budget(problem, budget, snapshot_weights, snapshot_share, total_steps, q,
                                                 sampling, n, secure)
    inner_ratio = calibration.noise
    snapshot_events = [single_release(e) for e in calibration.event.events[:-1]]
    grid_unit, inner_noise = 0.0, None
    if secure:  # each inner step g_k (round(sum / g_k) + K), g_k = c_k grid_unit, K exact (os.urandom)
        from ..privacy.exact_sampling import SecureRandom
        from ..privacy.fast_sampling import fast_discrete_gaussian
        from ..privacy.secure_release import secure_gaussian_parameters

        # at a power-of-two bound c the secure grid is c times this one and the integer
        # noise scale S is the same, so K can be drawn ahead of the step
        unit = secure_gaussian_parameters(2.0 * inner_ratio, 2.0, d)
        grid_unit, source = unit.grid, SecureRandom()

        def exact_integers(out):
            out[...] = fast_discrete_gaussian(source, unit.noise_multiple, out.size).reshape(out.shape)
            return out

        inner_noise = exact_integers

    X, y = problem.X, problem.y
    weights = _kernels.weights_of(problem)
    csr = sp.issparse(X)
    gather = getattr(problem, "gather_rows_and_slopes", None)  # Dask data: each round fetches its batches' rows
    if not csr and gather is None:
        X = np.ascontiguousarray(X)
    code, param = _kernels.loss_code(problem.loss)
    proj_kind, proj_radius = projection_of(problem.constraint)
    reg = problem.regularizer
    diff_cap = 2.0 * L
    diff_smoothness = problem.constants.loss_smoothness  # beta_phi R^2
    marker = np.zeros(n, dtype=np.int8)
    block_normals = np.empty((min(_BLOCK, max(epoch_lengths)), d))  # reused by every block

    w_snap = initial_point(problem, init)
    w = w_snap.copy()
    for epoch, (m, snapshot_sigma) in enumerate(zip(epoch_lengths, snapshot_sigmas)):
        if gather is None:
            # phi'(<x_i, w~>, y_i) for every row: the snapshot gradient and every inner step's correction use them
            snap_slopes = np.ascontiguousarray(problem._slopes(problem.margins(w_snap)), np.float64)  # weighted
            v_snap = _snapshot_release(rng, problem._xt(snap_slopes) / n, snapshot_sigma, snapshot_events[epoch])
        else:  # one map-reduce; the fetched rows come with their slopes at w~
            v_snap = _snapshot_release(rng, problem.loss_gradient(w_snap), snapshot_sigma, snapshot_events[epoch])
        if restart_from_snapshot:
            w = w_snap.copy()
        w_sum = np.zeros(d)
        for begin in range(0, m, _BLOCK):
            K = min(_BLOCK, m - begin)
            counts = rng.binomial(n, q, size=K).astype(np.int64) if sampling == "poisson" else np.full(K, b, np.int64)
            width = max(1, int(counts.max()))
            rows = np.zeros((K, width), dtype=np.int64)
            _kernels.sample_batches(n, counts, rng.random((K, width)), rows, marker)
            normals = rng.standard_normal(out=block_normals[:K]) if inner_noise is None else inner_noise(
                block_normals[:K])
            etas = np.full(K, step_size)
            if gather is not None:
                X, y, rows, snap_slopes = gather(rows, counts, w_snap)
                csr = sp.issparse(X)
            scales = np.empty(K)
            args = (y, weights, w, w_snap, v_snap, snap_slopes, rows, counts, normals, inner_ratio, etas, float(b), code,
                    param, reg.l2, reg.l1, proj_kind, proj_radius, w_sum, diff_cap, diff_smoothness,
                    problem.data_norm, scales, grid_unit)
            if csr:
                _kernels.svrg_steps_csr(X.indptr, X.indices, X.data, *args)
            else:
                _kernels.svrg_steps_dense(X, *args)
        w_snap = w_sum / m
    return PrivateFit(
        coef=w_snap,
        privacy_spent=calibration.spent,
        algorithm=name,
        event=calibration.event,
        hyperparameters={"step_size": step_size, "epochs": epochs, "epoch_lengths": list(map(int, epoch_lengths)),
                         "batch_size": b, "sampling": sampling, "snapshot_share": snapshot_share},
    )


def _snapshot_release(rng, gradient: np.ndarray, sigma: float, event) -> np.ndarray:
    """The snapshot gradient released: NumPy's normal (the seeded path, as ever) or the
    floating-point-safe sampler for a secure event."""
    if event.secure:
        return release(rng, gradient, event)
    return gradient + rng.normal(0.0, sigma, size=gradient.size)


def _privacy_ratio(n: int, d: int, budget: PrivacyBudget) -> float:
    """``n^2 eps^2 / (d ln(1/delta))``: the ratio of the initial error to the target
    error ``d ln(1/delta) / (n^2 eps^2)`` (in units of G^2/mu) in Theorems 4.2 and 4.4."""
    return (n * budget.epsilon) ** 2 / (d * math.log(1.0 / budget.delta))


class SVRGPlan(NamedTuple):
    """The hyper-parameters dp_svrg runs with, and its inner-noise diagnostic.

    ``noise_term``: :func:`inner_noise_contraction_term` (>= 1: contraction not
    guaranteed); ``rate``: the plan's Prox-SVRG contraction factor per epoch
    (:func:`prox_svrg_rate`, capped at 0.99), which also shapes the geometric snapshot
    schedule.
    """

    step_size: float
    inner_steps: int
    epochs: int
    batch_size: int
    noise_term: float
    rate: float


def dp_svrg_plan(problem: ERMProblem, budget: PrivacyBudget, *, step_size=None, inner_steps=None, epochs=None,
                 batch_size=None, sampling: str = "poisson", snapshot_share: float = 0.8,
                 epoch_rate: float = 0.25, snapshot_schedule: str = "geometric") -> SVRGPlan:
    """dp_svrg's defaults for ``problem`` and ``budget`` (see :func:`dp_svrg`), computed
    from public quantities only, without running anything: ``solver="auto"`` uses
    ``noise_term`` to pass over dp_svrg where its contraction is not guaranteed."""
    n, d = problem.n_samples, problem.n_features
    beta, mu = problem.smoothness, problem.strong_convexity
    eta = 1.0 / (12.0 * beta) if step_size is None else check_step_size(step_size)
    b = max(1, round(math.sqrt(n))) if batch_size is None else check_steps("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size {b} exceeds the number of rows {n}")
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    if not (0.0 < snapshot_share < 1.0):
        raise ValueError(f"snapshot_share must be in (0, 1), got {snapshot_share}")
    if not (0.0 < epoch_rate < 1.0):
        raise ValueError(f"epoch_rate must be in (0, 1), got {epoch_rate}")
    if snapshot_schedule not in ("uniform", "geometric"):
        raise ValueError(f"snapshot_schedule must be 'uniform' or 'geometric', got {snapshot_schedule!r}")
    alpha = minibatch_variance_factor(n, b, sampling)
    if inner_steps is None:
        m = prox_svrg_inner_steps(eta, mu, beta, rate=epoch_rate, variance_factor=alpha)
    else:
        m = check_steps("inner_steps", inner_steps)
    mu_gdp = gaussian_dp_mu(budget.epsilon, budget.delta)
    rate = min(prox_svrg_rate(eta, mu, beta, m, alpha), 0.99)
    if epochs is None:
        epochs = svrg_default_epochs(rate, n, d, math.sqrt(snapshot_share) * mu_gdp, schedule=snapshot_schedule)
    T = check_steps("epochs", epochs)
    noise_term = inner_noise_contraction_term(
        n=n, d=d, batch_size=b, steps=T * m, step_size=eta, mu=mu, beta=beta,
        loss_smoothness=problem.constants.loss_smoothness, inner_gdp_mu=math.sqrt(1.0 - snapshot_share) * mu_gdp)
    return SVRGPlan(eta, m, T, b, noise_term, rate)


@register(
    "dp_svrg",
    setting="strongly convex F (prox for l1 / l2 / elastic net), smooth convex loss",
    guarantee="(epsilon, delta)",
    source="Wang, Ye, Xu 2017 Alg. 1 (accountable variant)",
    paper="Wang, Ye, Xu 2017",
    requires=("convex", "smooth", "lipschitz", "strongly_convex", "approximate_dp", "compiled_loss"),
    gradient_complexity="O((n + beta/mu) log(n eps / d))",
    summary="proximal SVRG with a noisy snapshot per epoch and noise scaled to ||x - x~|| per step",
    auto=AutoRule(4, lambda p, b: strongly_convex_smooth(p, b) and not p.regularizer.is_smooth and svrg_contracts(p, b),
                  'strongly convex with an l1 part: proximal DP-SVRG'),
)
def dp_svrg(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    step_size: float | None = None,
    inner_steps: int | None = None,
    epochs: int | None = None,
    batch_size: int | None = None,
    sampling: str = "poisson",
    snapshot_share: float = 0.8,
    epoch_rate: float = 0.25,
    snapshot_schedule: str = "geometric",
    init=None,
) -> PrivateFit:
    """DP-SVRG (Wang, Ye, Xu 2017, Algorithm 1) for a mu-strongly convex ``F + r``.

    Parameters
    ----------
    problem : ERMProblem
        Convex, beta-smooth, L-Lipschitz GLM loss; ``F + r`` mu-strongly convex (the l2
        part of r counts); r may have an l1 part (handled by its prox); C may be any
        constraint with a projection (footnote 3 of the paper).
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    step_size : float, optional
        Default ``1 / (12 beta)`` (Theorem 4.2).
    inner_steps : int, optional
        m; default the smallest m = Theta(beta / mu) whose mini-batch Prox-SVRG
        contraction factor is at most ``epoch_rate`` at the chosen step size
        (:func:`prox_svrg_inner_steps` with the batch variance factor of
        :func:`minibatch_variance_factor`).
    epochs : int, optional
        T; default :func:`svrg_default_epochs`: the first T within 10% of the minimum of
        the explicit bound ``rate^T + (4 d / (n^2 mu_s^2)) snapshot_noise_factor(T)``
        (optimization error after T contractions plus the error floor the noisy
        snapshots leave), i.e. Theorem 4.2's ``T = O(log(n^2 eps^2 / (d log(1/delta))))``
        with its constant fixed by the trade-off it hides. (Until 2026-11 the default
        was the log base 4/3 of that ratio, 48 epochs on ADULT at eps = 1: every extra
        snapshot raised the noise of all of them, and the excess risk was 0.78 at
        eps = 0.1.)
    batch_size : int, optional
        Examples per inner step. The paper picks one (``batch_size=1``); the default
        ``round(sqrt(n))`` gives the same privacy amplification per example seen and
        far less noise per step.
    sampling : {"poisson", "without_replacement"}
        Batch sampling; the accountant matches it (PLD or RDP, replace-one).
    snapshot_share : float
        Share (in Gaussian-DP ``mu^2``) of the budget given to the T snapshot releases;
        the inner steps get the rest, computed exactly by the accountant.
    epoch_rate : float
        Target per-epoch contraction factor that sets the default m (default 1/4; the
        paper's analysis uses 3/4 with single-example steps, where a batch of b rows
        reaches 1/4 with a similar m).
    snapshot_schedule : {"geometric", "uniform"}
        How the snapshots share their Gaussian-DP budget (:func:`snapshot_weights`).
        ``"geometric"``: shares proportional to ``rate^((T - s)/2)`` with ``rate`` the
        plan's Prox-SVRG contraction factor, which minimizes the bias the snapshot
        noise leaves after the contractions (4x lower excess risk than ``"uniform"``
        on ADULT at eps = 1; the privacy guarantee is the same).

    Warns
    -----
    SVRGNoiseWarning
        When the inner-step noise the budget forces exceeds the variance the Prox-SVRG
        contraction tolerates (:func:`inner_noise_contraction_term` >= 1): small
        epsilon with weak strong convexity (ADULT at mu = 1e-3 for any epsilon <= 1).
        The run is still private; its accuracy is not guaranteed.

    Returns
    -------
    PrivateFit
        ``coef`` = x~_T, the average of the last epoch's iterates (line 12).

    Notes
    -----
    See the module docstring for the deviation from the paper's pseudo-code (the
    snapshot gradient is released with its own noise once per epoch) and its exact
    accounting. The paper's sigma (Theorem 4.1, "for some constant c") is not used.
    With ``rng=None`` every release takes the floating-point-safe path: each snapshot
    gradient and each inner step's sum are rounded to a power-of-two grid plus exact
    discrete Gaussian noise from the operating system (the inner step's bound c is then
    rounded up to a power of two; docs/privacy.md, "DP-SVRG's inner steps on the secure
    path"); a seed keeps NumPy's normals, bit for bit.

    References
    ----------
    Wang, Ye, Xu. Differentially private empirical risk minimization revisited: faster
    and more general. NIPS 2017, Algorithm 1, Theorems 4.1-4.2; Xiao & Zhang,
    A proximal stochastic gradient method with progressive variance reduction, 2014.
    """
    secure = secure_randomness(rng)
    rng = start("dp_svrg", problem, budget, rng)
    plan = dp_svrg_plan(problem, budget, step_size=step_size, inner_steps=inner_steps, epochs=epochs,
                        batch_size=batch_size, sampling=sampling, snapshot_share=snapshot_share,
                        epoch_rate=epoch_rate, snapshot_schedule=snapshot_schedule)
    eta, m, T, b = plan.step_size, plan.inner_steps, plan.epochs, plan.batch_size
    if plan.noise_term >= 1.0:
        warnings.warn(
            f"dp_svrg: at epsilon={budget.epsilon:g} and strong convexity mu={problem.strong_convexity:g} the "
            f"inner-step noise outweighs the Prox-SVRG contraction (noise term {plan.noise_term:.3g} >= 1), so "
            "the iterates may drift and the result can be worse than the starting point. Prefer "
            "objective_perturbation, output_perturbation or dp_sgd here, or a larger epsilon / regularization.",
            SVRGNoiseWarning, stacklevel=user_stacklevel())
    weights = snapshot_weights(T, snapshot_schedule, plan.rate)
    return _run(problem, budget, rng, secure=secure, name="dp_svrg", epoch_lengths=[m] * T, restart_from_snapshot=True,
                step_size=eta, batch_size=b, sampling=sampling, snapshot_share=snapshot_share, init=init,
                snapshot_weights=weights)


@register(
    "dp_svrg_pp",
    setting="convex (not necessarily strongly convex), smooth; prox for l1 / l2 / elastic net",
    guarantee="(epsilon, delta)",
    source="Wang, Ye, Xu 2017 Alg. 2 (accountable variant)",
    paper="Wang, Ye, Xu 2017",
    requires=("convex", "smooth", "lipschitz", "approximate_dp", "compiled_loss"),
    gradient_complexity="O(n log(n eps / sqrt(d)) + n beta / sqrt(d))",
    summary="SVRG++ with doubling epochs, noisy snapshots and noise scaled to ||x - x~||",
)
def dp_svrg_pp(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    step_size: float | None = None,
    inner_steps: int | None = None,
    epochs: int | None = None,
    batch_size: int | None = None,
    sampling: str = "poisson",
    snapshot_share: float = 0.8,
    snapshot_schedule: str = "geometric",
    init=None,
) -> PrivateFit:
    """DP-SVRG++ (Wang, Ye, Xu 2017, Algorithm 2) for a convex, not necessarily strongly convex F.

    Epoch s runs ``m_s = 2^s m`` inner steps starting from the last iterate of the
    previous epoch; the snapshot is the average of the previous epoch's iterates.

    Parameters
    ----------
    step_size : float, optional
        Default ``1 / (13 beta)`` (Theorem 4.4).
    epochs : int, optional
        T; default ``ceil(log2(n eps / sqrt(d ln(1/delta))))`` (Theorem 4.4's
        ``T = O(log(n / (G sqrt(p log(1/delta)))))`` with constant 1, base 2 since the
        epochs double).
    inner_steps : int, optional
        m; Theorem 4.4 only asks for ``m = Theta(beta)`` "sufficiently large". The
        default is the smallest m whose last epoch sees n examples,
        ``ceil(n / (b 2^T))``, so the inner loop costs about two passes over the data.
    batch_size, sampling, snapshot_share :
        As in :func:`dp_svrg`.
    snapshot_schedule : {"geometric", "uniform"}
        As in :func:`dp_svrg`, with ``rate = 1/2`` (SVRG++ halves its error bound per
        epoch): 2-3x lower excess risk than ``"uniform"`` on ADULT, BANK and CreditCard.

    References
    ----------
    Wang, Ye, Xu 2017, Algorithm 2, Theorems 4.3-4.4; Allen-Zhu & Yuan,
    Improved SVRG for non-strongly-convex or sum-of-non-convex objectives, 2016.
    """
    secure = secure_randomness(rng)
    rng = start("dp_svrg_pp", problem, budget, rng)
    n, d = problem.n_samples, problem.n_features
    beta = problem.smoothness
    eta = 1.0 / (13.0 * beta) if step_size is None else check_step_size(step_size)
    if epochs is None:
        epochs = max(1, math.ceil(0.5 * math.log2(max(_privacy_ratio(n, d, budget), 4.0))))
    T = check_steps("epochs", epochs)
    b = max(1, round(math.sqrt(n))) if batch_size is None else check_steps("batch_size", batch_size)
    m = max(1, math.ceil(n / (b * 2**T))) if inner_steps is None else check_steps("inner_steps", inner_steps)
    lengths = [m * 2**s for s in range(1, T + 1)]
    return _run(problem, budget, rng, secure=secure, name="dp_svrg_pp", epoch_lengths=lengths, restart_from_snapshot=False,
                step_size=eta, batch_size=b, sampling=sampling, snapshot_share=snapshot_share, init=init,
                snapshot_weights=snapshot_weights(T, snapshot_schedule, 0.5))
