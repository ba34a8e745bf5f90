"""Noise calibration: every noise scale in dperm is computed here, exactly.

All functions speak of the noise standard deviation ``sigma`` and the replace-one L2
``sensitivity`` Delta of the released quantity (the largest ||q(D) - q(D')|| over
datasets D, D' of equal size differing in one row); none of them takes a "noise
multiplier". The conversion to dp-accounting's noise multiplier happens in one place,
:func:`_accountant_noise_multiplier`, and is pinned by tests.

Primitives
----------
- Gaussian DP (Dong, Roth, Su 2019): a Gaussian release with sigma and Delta is
  ``mu = Delta / sigma``-GDP; T adaptive such releases are ``sqrt(T) Delta / sigma``-GDP
  exactly; the (epsilon, delta) curve of mu-GDP is
  ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``. One release thus gets
  the analytic Gaussian of Balle & Wang (2018), and T full-batch steps lose nothing to
  composition.
- Subsampled Gaussian steps: dp-accounting, replace-one (PLD for Poisson sampling, RDP for
  fixed-size batches without replacement).
- Pure DP: basic composition, and for exponential mechanisms the bounded-range zCDP
  route when delta > 0.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import optimize
from scipy.special import log_ndtr

from .budget import PrivacyBudget, PrivacyWarning
from . import noise as _noise

__all__ = [
    "gaussian_dp_delta",
    "gaussian_dp_epsilon",
    "gaussian_dp_mu",
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_steps_sigma",
    "gaussian_steps_epsilon",
    "subsampled_gaussian_sigma",
    "subsampled_gaussian_epsilon",
    "smallest_certified_noise",
    "clt_log_slope",
    "step_gdp_mu",
    "pure_composition_epsilon",
    "exponential_mechanism_composition_epsilon",
    "exponential_mechanism_step_epsilon",
    "NoiseCalibration",
    "calibrate_vector_mechanism",
]


def _check(name: str, value: float, *, lower: float = 0.0, strict: bool = True, upper: float = math.inf) -> float:
    value = float(value)
    ok = math.isfinite(value) and (value > lower if strict else value >= lower) and value < upper
    if not ok:
        raise ValueError(f"{name} must be a finite number {'>' if strict else '>='} {lower:g}"
                         + (f" and < {upper:g}" if math.isfinite(upper) else "") + f", got {value}")
    return value


# ----------------------------------------------------------------------------- Gaussian DP
def gaussian_dp_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of mu-Gaussian-DP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    if mu <= 0:
        return 0.0
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    first = log_ndtr(a)
    second = epsilon + log_ndtr(b)  # log of e^eps Phi(b), no overflow for large eps
    if second >= first:
        return 0.0
    return float(math.exp(first) * -math.expm1(second - first))


def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon >= 0 with ``gaussian_dp_delta(mu, epsilon) <= delta``."""
    mu = _check("mu", mu, strict=False)
    delta = _check("delta", delta, strict=False, upper=1.0)
    if gaussian_dp_delta(mu, 0.0) <= delta:
        return 0.0
    if delta == 0.0:
        return math.inf
    hi = max(1.0, mu * mu)
    while gaussian_dp_delta(mu, hi) > delta:
        hi *= 2.0
    eps = optimize.brentq(lambda e: gaussian_dp_delta(mu, e) - delta, 0.0, hi, xtol=1e-14, rtol=1e-14)
    while gaussian_dp_delta(mu, eps) > delta:  # round up to a certified value
        eps = eps * (1 + 1e-12) + 1e-15
    return float(eps)


@functools.lru_cache(maxsize=4096)
def gaussian_dp_mu(epsilon: float, delta: float) -> float:
    """The largest mu such that mu-GDP implies (epsilon, delta)-DP.

    Never returns a mu whose delta(epsilon) exceeds ``delta``.
    """
    epsilon = _check("epsilon", epsilon)
    delta = _check("delta", delta, upper=1.0)
    hi = 1.0
    while gaussian_dp_delta(hi, epsilon) < delta:
        hi *= 2.0
    mu = optimize.brentq(lambda m: gaussian_dp_delta(m, epsilon) - delta, 1e-12, hi, xtol=1e-15, rtol=1e-14)
    while gaussian_dp_delta(mu, epsilon) > delta:  # round down to a certified value
        mu *= 1 - 1e-12
    return float(mu)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma for which one Gaussian release of ``sensitivity`` is (eps, delta)-DP
    (the analytic Gaussian mechanism of Balle & Wang 2018)."""
    sensitivity = _check("sensitivity", sensitivity, strict=False)
    return sensitivity / gaussian_dp_mu(float(epsilon), float(delta))


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``sqrt(2 ln(1.25/delta)) Delta / eps`` (Dwork & Roth, Thm A.1), valid for eps < 1.

    Kept to compare with the papers; dperm calibrates with the analytic Gaussian.
    """
    epsilon = _check("epsilon", epsilon)
    delta = _check("delta", delta, upper=1.0)
    if epsilon >= 1:
        import warnings

        warnings.warn("the classical Gaussian mechanism is proven only for epsilon < 1", PrivacyWarning, stacklevel=2)
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


def gaussian_steps_sigma(epsilon: float, delta: float, sensitivity: float, steps: int) -> float:
    """sigma for T adaptive Gaussian releases, each of L2 ``sensitivity``, to be
    (epsilon, delta)-DP in total: ``sqrt(T) Delta / mu(eps, delta)`` (exact, via GDP)."""
    steps = _check_steps(steps)
    sensitivity = _check("sensitivity", sensitivity, strict=False)
    return math.sqrt(steps) * sensitivity / gaussian_dp_mu(float(epsilon), float(delta))


def gaussian_steps_epsilon(sigma: float, sensitivity: float, steps: int, delta: float) -> float:
    """The epsilon (at ``delta``) of T Gaussian releases with std sigma and ``sensitivity``."""
    steps = _check_steps(steps)
    sigma = _check("sigma", sigma)
    return gaussian_dp_epsilon(math.sqrt(steps) * float(sensitivity) / sigma, delta)


def _check_steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    return int(steps)


# ------------------------------------------------------------------- subsampled Gaussian
def _accountant_noise_multiplier(sigma: float, sensitivity: float, sampling: str) -> float:
    """dp-accounting's noise multiplier for our (sigma, replace-one sensitivity Delta).

    - PLD accountant, REPLACE_ONE: its GaussianDpEvent(z) is the Gaussian of std z and
      *per-example* bound 1, whose replace-one sensitivity is 2 (GaussianDpEvent(4.0)
      gives eps 1.9931 at delta 1e-5 = the analytic value at sigma/Delta = 2). So
      z = sigma / (Delta / 2).
    - RDP accountant, REPLACE_ONE, SampledWithoutReplacementDpEvent: at sampling ratio 1
      it returns the Gaussian RDP alpha / (2 z^2), which is the replace-one RDP of our
      release exactly when z = sigma / Delta (Wang, Balle, Kasiviswanathan 2019 take the
      base mechanism's replace-one RDP). So z = sigma / Delta. (A plain GaussianDpEvent
      under RDP REPLACE_ONE is *not* doubled, upstream issue #378: we never use it.)
    Both are pinned by tests comparing sampling ratio 1 with the closed form.
    """
    return sigma / (sensitivity / 2.0) if sampling == "poisson" else sigma / sensitivity


def _self_composed(pld, count: int):
    """``pld.self_compose(count)``, computed as dp-accounting computes it, without its
    exact size test ``size ** count`` on a sparse PMF: a Python integer with
    ``count log10(size)`` digits, which took hours at DP-SGD's paper schedule
    (T = n^2 ~ 1e9 single-example steps). Where that test would send the PMF to the
    dense FFT path, it is sent there directly (the same computation, bitwise)."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    limit = math.log(getattr(pld_pmf, "_MAX_PMF_SPARSE_SIZE", 1000))

    def dense(pmf):
        if isinstance(pmf, pld_pmf.SparsePLDPmf) and pmf.size > 1 and count * math.log(pmf.size) > limit:
            return pmf.to_dense_pmf()
        return pmf

    try:  # private attributes of dp-accounting (0.4-0.6); without them, its own path
        remove, add, symmetric = pld._pmf_remove, pld._pmf_add, pld._symmetric
    except AttributeError:
        return pld.self_compose(count)
    pld = PrivacyLossDistribution(dense(remove), None if symmetric else dense(add))
    return pld.self_compose(count)


@functools.lru_cache(maxsize=64)
def _full_batch_pld(noise_multiplier: float, steps: int, grid: float):
    """``steps`` full-batch Gaussian releases: one Gaussian of std ``z / sqrt(steps)``, as
    ``PLDAccountant`` builds it. Cached: a calibration search composes the same fixed
    (full-batch) phases with every candidate, and their PLD is the costliest to build."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_gaussian_mechanism(standard_deviation=noise_multiplier / math.sqrt(steps),
                                       value_discretization_interval=grid,
                                       neighboring_relation=NeighboringRelation.REPLACE_ONE)


def _gaussian_pld(noise_multiplier: float, steps: int, q: float, grid: float):
    """The PLD of ``steps`` Poisson-subsampled (rate q; q = 1: plain) Gaussian releases of
    dp-accounting noise multiplier z under REPLACE_ONE, built exactly as its
    ``PLDAccountant`` builds it (subsampled: the subsampled Gaussian's PLD self-composed
    ``steps`` times, by :func:`_self_composed`). Subsampled PLDs are not cached: at
    T ~ 1e9 one takes gigabytes."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    if q >= 1.0:
        return _full_batch_pld(noise_multiplier, steps, grid)
    single = pld.from_gaussian_mechanism(standard_deviation=noise_multiplier, value_discretization_interval=grid,
                                         sampling_prob=q, neighboring_relation=NeighboringRelation.REPLACE_ONE)
    return _self_composed(single, steps)


def _pld_epsilon(phases: Sequence[tuple[float, int, float]], delta: float, grid: float) -> float:
    """Epsilon at ``delta`` of the composition of ``(noise_multiplier, steps, q)`` phases
    (:func:`_gaussian_pld`), composed in order from the identity as ``PLDAccountant``
    composes its events."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = pld.identity(value_discretization_interval=grid)
    for z, steps, q in phases:
        total = total.compose(_gaussian_pld(z, steps, q, grid))
    return float(total.get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=4096)
def _subsampled_epsilon(z: float, q: float, steps: int, delta: float, sampling: str, dataset_size: int, grid: float = 1e-4) -> float:
    """Epsilon by the accountant. ``grid`` is the PLD's privacy-loss discretization: the
    PLD rounds pessimistically, so a coarser grid gives a larger (still valid) epsilon."""
    import dp_accounting as dpa

    replace_one = dpa.NeighboringRelation.REPLACE_ONE
    if sampling == "poisson":
        return _pld_epsilon([(z, steps, min(q, 1.0))], delta, grid)
    else:
        from dp_accounting.rdp import rdp_privacy_accountant

        batch = int(round(q * dataset_size))
        accountant = rdp_privacy_accountant.RdpAccountant(neighboring_relation=replace_one)
        event = dpa.SampledWithoutReplacementDpEvent(dataset_size, batch, dpa.GaussianDpEvent(z))
        accountant.compose(dpa.SelfComposedDpEvent(event, steps))
    return float(accountant.get_epsilon(delta))


def _check_sampling(sampling: str, q: float, dataset_size) -> tuple[float, int]:
    q = _check("sampling_probability", q)
    if q > 1:
        raise ValueError(f"sampling_probability must be <= 1, got {q}")
    if sampling == "poisson":
        return q, 0
    if sampling != "without_replacement":
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    if dataset_size is None or int(dataset_size) < 1:
        raise ValueError("sampling='without_replacement' needs dataset_size (the public n)")
    n = int(dataset_size)
    batch = int(round(q * n))
    if batch < 1 or abs(batch - q * n) > 1e-6 * n:
        raise ValueError(f"sampling_probability * dataset_size must be a whole batch size, got {q * n}")
    return batch / n, n


def subsampled_gaussian_epsilon(
    sigma: float,
    *,
    sensitivity: float,
    sampling_probability: float,
    steps: int,
    delta: float,
    sampling: str = "poisson",
    dataset_size: int | None = None,
) -> float:
    """Epsilon (at ``delta``) of T subsampled Gaussian steps, replace-one.

    Each step releases (sum over the sampled batch of per-example vectors) +
    N(0, sigma^2 I); ``sensitivity`` is the replace-one L2 sensitivity of that sum (2C for
    per-example norms <= C). ``sampling="poisson"``: each row enters independently with
    probability q (PLD accountant); ``"without_replacement"``: uniform batches of size
    ``q * dataset_size`` (RDP accountant).
    """
    q, n = _check_sampling(sampling, sampling_probability, dataset_size)
    sigma = _check("sigma", sigma)
    sensitivity = _check("sensitivity", sensitivity)
    delta = _check("delta", delta, upper=1.0)
    z = _accountant_noise_multiplier(sigma, sensitivity, sampling)
    steps = _check_steps(steps)
    if sigma / sensitivity < ACCOUNTANT_MIN_RATIO:
        # Sampling never weakens a Gaussian release, so the full-batch closed form is a
        # valid upper bound; the accountants are slow for such nearly noiseless steps.
        return gaussian_steps_epsilon(sigma, sensitivity, steps, delta)
    if sampling != "poisson":
        return _subsampled_epsilon(z, q, steps, delta, sampling, n)
    # Every PLD grid gives a valid (pessimistic) upper bound, so the minimum over the
    # grids tried is valid too. Refine the grid relative to the answer: a grid fine
    # enough for epsilon 0.1 is needlessly slow (and overflows) at epsilon 1e6.
    step_mu = step_gdp_mu(q, sigma / sensitivity) if q < 1.0 else None
    best, grid = math.inf, _pld_grid(math.inf, step_mu, steps)
    while True:
        best = min(best, _safe_pld_epsilon(z, q, steps, delta, grid))
        finer = _pld_grid(best, step_mu, steps)
        if finer >= grid * 0.999:
            return best
        grid = finer


_PLD_COARSE_GRID = 0.5


def clt_noise_ratio(mu_squared: float, q: float, steps: int) -> float | None:
    """Starting guess for a calibration search: the noise ratio sigma / sensitivity at
    which ``steps`` subsampled Gaussian steps are ``sqrt(mu_squared)``-GDP by the central
    limit theorem of Bu, Dong, Long, Su (2020), ``mu = q sqrt(T (exp(1/r^2) - 1))``.

    Only a guess (the accountants certify); ``None`` when the formula does not apply.
    """
    if not (mu_squared > 0 and 0 < q < 1 and steps >= 1):
        return None
    x = math.log1p(mu_squared / (q * q * steps))
    return 1.0 / math.sqrt(x) if x > 0 else None


def clt_log_slope(ratio: float, fixed_mu_squared: float, q: float, steps: int, delta: float) -> float | None:
    """``d log epsilon / d log ratio`` at ``ratio`` in the central-limit model of
    :func:`clt_noise_ratio` (``steps`` subsampled Gaussian steps composed with phases of
    Gaussian-DP parameter ``sqrt(fixed_mu_squared)``): the first secant step of a
    calibration search. Only a guess; ``None`` when the model does not apply."""
    if not (ratio > 0 and 0 < q < 1 and steps >= 1 and fixed_mu_squared >= 0):
        return None

    def log_epsilon(r):
        return math.log(gaussian_dp_epsilon(math.sqrt(fixed_mu_squared + q * q * steps * math.expm1(1.0 / (r * r))),
                                            delta))

    h = 0.01
    try:
        slope = (log_epsilon(ratio * math.exp(h)) - log_epsilon(ratio * math.exp(-h))) / (2 * h)
    except (OverflowError, ValueError):
        return None
    return slope if math.isfinite(slope) and slope < 0 else None


def smallest_certified_noise(epsilon_at, target: float, guess: float, *, floor: float, rtol: float = 1e-4,
                             ceiling: float = math.inf, factor: float = 2.0, budget_rtol: float = 1e-3,
                             slope: float | None = None) -> float:
    """The smallest noise level x (to relative precision ``rtol``) with
    ``epsilon_at(x) <= target``, for an ``epsilon_at`` that decreases in x.

    The returned value is always one at which ``epsilon_at`` was evaluated and certified
    (``<= target``): the search only ever returns points it evaluated and found certified,
    so privacy never rests on the guess or on a model.

    The search works on ``g = log(epsilon / target)`` against ``log x``. It first brackets
    the answer by secant steps from ``guess``, each at most a factor ``factor``, aimed at
    ``g = log(1 - budget_rtol) / 2`` (just inside the certified side). The first step
    uses ``slope`` (a model's ``d g / d log x``, e.g. :func:`clt_log_slope`; -1 if not
    given); later ones the last two evaluations. It then runs the Illinois variant of
    regula falsi on ``g`` minus that aim, safeguarded to stay ``rtol / 2`` inside the
    bracket, with a bisection step whenever a value is infinite. From a good guess this
    takes 2-3 accountant calls; bisection needs 13-15.

    ``floor``: below it the search stops lowering (the noise cannot be smaller);
    ``ceiling``: raise ``ValueError`` if no level up to it is certified. The search
    stops at the first certified point that spends the target to within ``budget_rtol``
    (0.1%): where epsilon is flat in the noise (a phase that holds a small share of the
    budget) pinning x to ``rtol`` would cost several more accountant calls for nothing.
    """
    def g(log_x):
        e = epsilon_at(math.exp(log_x))
        return math.log(e / target) if e > 0 else -math.inf

    step = math.log1p(rtol)
    spent_enough = math.log1p(-budget_rtol)
    aim = 0.5 * spent_enough
    max_move = math.log(factor)
    log_floor = math.log(floor)
    log_ceiling = math.log(ceiling) if math.isfinite(ceiling) else math.inf

    # Bracket: xh the smallest certified point seen (g <= 0), xl the largest uncertified.
    xh = g_hi = xl = g_lo = None
    x, previous = math.log(guess), None
    while True:
        gx = g(x)
        if gx <= 0:
            if gx >= spent_enough or x <= log_floor:
                return math.exp(x)
            xh, g_hi = x, gx
        else:
            xl, g_lo = x, gx
        if xh is not None and xl is not None:
            break
        if xh is None and x > log_ceiling:
            raise ValueError("no noise level meets the budget")
        if math.isinf(gx):
            move = -max_move if gx < 0 else max_move
        else:
            s = slope if slope is not None and slope < 0 else -1.0
            if previous is not None and math.isfinite(previous[1]) and x != previous[0]:
                secant = (gx - previous[1]) / (x - previous[0])
                s = secant if secant < 0 else s
            move = (aim - gx) / s
            # at least one rtol, at most a factor, always towards the unbracketed side
            move = math.copysign(min(max(abs(move), step), max_move), -1.0 if gx <= 0 else 1.0)
        previous = (x, gx)
        x = max(x + move, log_floor)

    kept = 0  # which end the last step kept: +1 the high, -1 the low (Illinois halving)
    h_lo, h_hi = g_lo - aim, g_hi - aim  # h_lo > 0 (uncertified), h_hi < 0 (certified, short of the aim)
    while xh - xl > step:
        width = xh - xl
        if math.isfinite(h_lo) and math.isfinite(h_hi) and h_lo > h_hi:
            x = xh - h_hi * width / (h_hi - h_lo)
            x = min(max(x, xl + 0.5 * step), xh - 0.5 * step)
        else:
            x = 0.5 * (xl + xh)
        gx = g(x)
        if gx <= 0:  # certified
            if gx >= spent_enough:
                return math.exp(x)
            xh, h_hi = x, gx - aim
            if kept == -1 and math.isfinite(h_lo):
                h_lo *= 0.5  # Illinois: the low end was kept twice (h_lo is then a weight, not a value)
            kept = -1
        else:
            xl, h_lo = x, gx - aim
            if kept == 1:
                h_hi *= 0.5
            kept = 1
    return math.exp(xh)


# Below this noise ratio sigma / sensitivity (budgets in the hundreds), subsampled steps
# are accounted by the full-batch closed form, a valid upper bound computed at once.
ACCOUNTANT_MIN_RATIO = 0.1


_PLD_FINEST_GRID = 5e-7
# Peak memory of a T-fold self-composed subsampled PLD, measured (dp-accounting 0.6,
# q = 1/32561): about 1.9e-5 bytes times T / grid (T = 1e8: 0.95 GB at grid 2e-6;
# T = 4e8: 2.0 GB at grid 4e-6). The grid is kept coarse enough to stay near the budget.
_PLD_BYTES_PER_STEP_OVER_GRID = 1.9e-5
_PLD_MEMORY_BUDGET = 2e9


def step_gdp_mu(q: float, noise_ratio: float) -> float:
    """``q sqrt(exp(1/r^2) - 1)``: the central-limit Gaussian-DP parameter of one
    subsampled Gaussian step of noise ratio r = sigma / Delta (Bu, Dong, Long, Su 2020),
    i.e. the scale of one step's privacy loss; T steps compose to about ``sqrt(T)`` times it."""
    exponent = 1.0 / (noise_ratio * noise_ratio)
    return q * math.sqrt(math.expm1(exponent)) if exponent < 700 else math.inf


def _pld_grid(epsilon: float, step_mu: float | None = None, steps: int | None = None) -> float:
    """PLD discretization for a target epsilon: epsilon / 2000 within [1e-5, 0.5], and
    at most a fifth of one step's privacy-loss scale ``step_mu`` (:func:`step_gdp_mu`),
    down to 5e-7; for ``steps`` compositions, no finer than keeps the PLD near 2 GB
    (binds only for T >~ 1e8: at T = n^2 on ADULT the grid is 1.0e-5, 1.6x one step's
    scale, about 20% above the converged epsilon, where 1.35e-6 needed over 24 GB).

    Measured at q = 0.0058, T = 30072: the grid error at epsilon 0.1 is 2.5% with grid
    1e-4 and 100% with 1e-3; at epsilon 7.4 it is 0.1% with 1e-3. The second rule is for
    tiny sampling rates: when one step's loss is far below the grid, every step's
    rounding adds up. The error depends on grid / step_mu alone (q from 3e-5 to 5.5e-3,
    T from 3e4 to 9e6): a factor 4 at 15, 25% at 2, 0.6% at 1/4, 0.1% at 1/10. DP-SGD
    with seed 002's schedule on ADULT (q = 1/n, T = n^2) was certified at epsilon 3.0
    instead of 0.78 with grid 1e-4 (at the epsilon rule's 5e-4 far worse: its noise 40x
    too large).
    """
    grid = min(_PLD_COARSE_GRID, max(1e-5, epsilon / 2000.0))
    if step_mu is not None and 0 < step_mu < math.inf:
        grid = min(grid, max(_PLD_FINEST_GRID, step_mu / 5.0))
    if steps is not None:
        # memory: a coarser grid is still a valid upper bound, only a looser one
        grid = max(grid, _PLD_BYTES_PER_STEP_OVER_GRID * steps / _PLD_MEMORY_BUDGET)
    return grid


def _safe_pld_epsilon(z, q, steps, delta, grid) -> float:
    try:
        return _subsampled_epsilon(z, q, steps, delta, "poisson", 0, grid)
    except (OverflowError, FloatingPointError):  # a grid too coarse for this loss range
        return math.inf


@functools.lru_cache(maxsize=1024)
def _subsampled_sigma(epsilon, delta, sensitivity, q, steps, sampling, n) -> float:
    full_batch = gaussian_steps_sigma(epsilon, delta, sensitivity, steps)
    if full_batch / sensitivity < ACCOUNTANT_MIN_RATIO:  # see subsampled_gaussian_epsilon
        return full_batch
    # the scale of one step's privacy loss at the answer: about mu(eps, delta) / sqrt(T)
    grid = _pld_grid(epsilon, gaussian_dp_mu(epsilon, delta) / math.sqrt(steps) if q < 1.0 else None, steps)

    def eps_at(sigma):
        z = _accountant_noise_multiplier(sigma, sensitivity, sampling)
        if sampling == "poisson":
            return _safe_pld_epsilon(z, q, steps, delta, grid)
        return _subsampled_epsilon(z, q, steps, delta, sampling, n)

    guess = clt_noise_ratio(gaussian_dp_mu(epsilon, delta) ** 2, q, steps)
    if guess is None:
        return smallest_certified_noise(eps_at, epsilon, max(full_batch * min(1.0, 4 * q), 1e-3 * sensitivity),
                                        floor=1e-6 * sensitivity)
    slope = clt_log_slope(1.05 * guess, 0.0, q, steps, delta)
    return smallest_certified_noise(eps_at, epsilon, 1.05 * guess * sensitivity, floor=1e-6 * sensitivity, factor=1.25,
                                    slope=slope)


def subsampled_gaussian_sigma(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float,
    sampling_probability: float,
    steps: int,
    sampling: str = "poisson",
    dataset_size: int | None = None,
) -> float:
    """The smallest sigma (to 1e-4 relative) whose T subsampled steps are (eps, delta)-DP
    by the accountant of ``sampling``; see :func:`subsampled_gaussian_epsilon`."""
    budget = PrivacyBudget(epsilon, delta)
    if budget.delta == 0:
        raise ValueError("the Gaussian mechanism needs delta > 0")
    q, n = _check_sampling(sampling, sampling_probability, dataset_size)
    sensitivity = _check("sensitivity", sensitivity)
    return _subsampled_sigma(budget.epsilon, budget.delta, sensitivity, q, _check_steps(steps), sampling, n)


# -------------------------------------------------------------------------------- pure DP
def pure_composition_epsilon(step_epsilons: Sequence[float], delta: float = 0.0) -> float:
    """Total epsilon of pure-DP steps: basic composition, or with delta > 0 the better of
    basic and advanced composition (Dwork, Rothblum, Vadhan 2010) at the largest step."""
    eps = [_check("step epsilon", e) for e in step_epsilons]
    if not eps:
        raise ValueError("step_epsilons is empty")
    basic = float(sum(eps))
    delta = _check("delta", delta, strict=False, upper=1.0)
    if delta == 0:
        return basic
    k, e0 = len(eps), max(eps)
    advanced = math.sqrt(2.0 * k * math.log(1.0 / delta)) * e0 + (k * e0 * math.expm1(e0) if e0 < 700 else math.inf)
    return min(basic, advanced)


def exponential_mechanism_composition_epsilon(step_epsilons: Sequence[float], delta: float = 0.0) -> float:
    """Total epsilon of exponential-mechanism steps with parameters eps_i.

    Each step is eps_i-DP and (bounded range) eps_i^2/8-zCDP (Cesar & Rogers 2021); with
    delta > 0, rho-zCDP gives ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP (Bun & Steinke
    2016). Returns the better of that and :func:`pure_composition_epsilon`.
    """
    best = pure_composition_epsilon(step_epsilons, delta)
    if delta > 0:
        rho = sum(float(e) ** 2 for e in step_epsilons) / 8.0
        best = min(best, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)))
    return best


def exponential_mechanism_step_epsilon(epsilon: float, delta: float, steps: int) -> float:
    """The largest equal per-step parameter e0 with
    ``exponential_mechanism_composition_epsilon([e0] * steps, delta) <= epsilon``."""
    budget = PrivacyBudget(epsilon, delta)
    steps = _check_steps(steps)
    total = lambda e0: exponential_mechanism_composition_epsilon([e0] * steps, budget.delta)  # noqa: E731
    lo, hi = budget.epsilon / steps, budget.epsilon  # basic composition is feasible at lo, up to rounding
    if budget.delta == 0:
        while total(lo) > budget.epsilon:  # sum([eps / T] * T) may round above eps
            lo = math.nextafter(lo, 0.0)
        return lo
    while total(lo) > budget.epsilon:
        lo = math.nextafter(lo, 0.0)
    if total(hi) <= budget.epsilon:
        return hi
    e0 = optimize.brentq(lambda e: total(e) - budget.epsilon, lo, hi, xtol=1e-15, rtol=1e-13)
    while total(e0) > budget.epsilon:
        e0 *= 1 - 1e-12
    return max(e0, lo)


# ------------------------------------------------------------- the one vector mechanism
@dataclass(frozen=True)
class NoiseCalibration:
    """A calibrated vector mechanism: T releases of a d-vector of L2 ``sensitivity``.

    ``mechanism="gaussian"``: N(0, scale^2 I) per release, (eps, delta)-DP in total by
    Gaussian DP. ``mechanism="l2_laplace"``: density ~ exp(-||z|| / scale) with
    ``scale = Delta / eps_step``, eps-DP in total by basic composition.
    """

    mechanism: str
    scale: float
    sensitivity: float
    steps: int
    budget: PrivacyBudget

    def sample(self, rng: np.random.Generator, dim: int) -> np.ndarray:
        if self.scale == 0.0:
            return np.zeros(dim)
        if self.mechanism == "gaussian":
            return _noise.gaussian_noise(rng, self.scale, dim)
        return _noise.l2_laplace_noise(rng, dim, self.scale)


def calibrate_vector_mechanism(budget: PrivacyBudget, sensitivity: float, steps: int = 1) -> NoiseCalibration:
    """Calibrate T releases of a vector of replace-one L2 ``sensitivity`` to ``budget``.

    delta = 0: L2-Laplace with per-release epsilon = epsilon / T (basic composition).
    delta > 0: Gaussian with ``sigma = sqrt(T) Delta / mu(eps, delta)`` (exact GDP).
    ``budget`` of the result is the guarantee actually delivered (never above the target).
    """
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    sensitivity = _check("sensitivity", sensitivity, strict=False)
    steps = _check_steps(steps)
    if budget.is_pure:
        scale = sensitivity * steps / budget.epsilon
        return NoiseCalibration("l2_laplace", scale, sensitivity, steps, budget)
    sigma = gaussian_steps_sigma(budget.epsilon, budget.delta, sensitivity, steps)
    spent = budget if sensitivity == 0 else PrivacyBudget(
        min(budget.epsilon, gaussian_steps_epsilon(sigma, sensitivity, steps, budget.delta)), budget.delta
    )
    return NoiseCalibration("gaussian", sigma, sensitivity, steps, spent)
