"""Exact accounting of algorithms that mix full-batch and subsampled Gaussian releases.

Variance-reduced methods (DP-SVRG) release a full-batch gradient once per epoch and a
subsampled correction at every inner step, at different noise levels. A
:class:`GaussianPhase` describes ``steps`` releases of one kind by their *noise ratio*
``sigma / Delta`` (noise standard deviation over the replace-one L2 sensitivity of the
released sum) and their sampling probability; :func:`phases_epsilon` composes any list of
phases exactly:

- every phase full-batch: Gaussian DP in closed form, ``mu^2 = sum_k steps_k / r_k^2``;
- Poisson sampling: dp-accounting's PLD accountant under REPLACE_ONE (full-batch phases
  as plain Gaussian events);
- fixed-size batches without replacement: dp-accounting's RDP accountant under
  REPLACE_ONE, full-batch phases expressed as "n out of n" sampled events (which
  dp-accounting treats as the plain replace-one Gaussian, avoiding upstream issue
  #378 of the plain Gaussian event under RDP).

The noise ratio is converted to dp-accounting's noise multiplier by the same rule as
:func:`dperm.privacy.calibrate.subsampled_gaussian_epsilon` (PLD: ``2 r``; RDP: ``r``),
and :func:`phases_epsilon` with one phase reproduces that function (tested).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

from .budget import PrivacyBudget
from .calibrate import ACCOUNTANT_MIN_RATIO as _ACCOUNTANT_MIN_RATIO
from .calibrate import (_pld_epsilon, _pld_grid, clt_log_slope, clt_noise_ratio, gaussian_dp_epsilon, gaussian_dp_mu,
                        smallest_certified_noise, step_gdp_mu)

__all__ = ["GaussianPhase", "phases_epsilon", "calibrate_phase_noise_ratio", "calibration_grid"]

_SAMPLINGS = ("poisson", "without_replacement")



@dataclass(frozen=True)
class GaussianPhase:
    """``steps`` adaptive releases of a (sub)sampled sum plus ``N(0, sigma^2 I)``.

    Parameters
    ----------
    noise_ratio : float
        ``sigma / Delta`` with Delta the replace-one L2 sensitivity of the released sum
        (the noise may be rescaled at every step as long as this ratio is kept, e.g. when
        Delta is a public function of earlier releases).
    steps : int
        Number of releases.
    sampling_probability : float
        1 for full-batch releases; otherwise the Poisson rate, or ``batch / n`` for
        fixed-size batches without replacement.
    """

    noise_ratio: float
    steps: int
    sampling_probability: float = 1.0

    def __post_init__(self):
        if not (self.noise_ratio > 0 and math.isfinite(self.noise_ratio)):
            raise ValueError(f"noise_ratio must be a finite number > 0, got {self.noise_ratio!r}")
        if isinstance(self.steps, bool) or int(self.steps) != self.steps or self.steps < 1:
            raise ValueError(f"steps must be an integer >= 1, got {self.steps!r}")
        if not (0 < self.sampling_probability <= 1):
            raise ValueError(f"sampling_probability must be in (0, 1], got {self.sampling_probability!r}")

    @property
    def full_batch(self) -> bool:
        return self.sampling_probability >= 1.0


def _check_common(phases: Sequence[GaussianPhase], delta: float, sampling: str, dataset_size):
    if not phases:
        raise ValueError("phases must not be empty")
    if not all(isinstance(p, GaussianPhase) for p in phases):
        raise TypeError("phases must be GaussianPhase objects")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) for Gaussian accounting, got {delta!r}")
    if sampling not in _SAMPLINGS:
        raise ValueError(f"sampling must be one of {_SAMPLINGS}, got {sampling!r}")
    if sampling == "without_replacement" and not all(p.full_batch for p in phases):
        if dataset_size is None or int(dataset_size) < 1:
            raise ValueError("sampling='without_replacement' needs dataset_size (the public n)")
        for p in phases:
            batch = p.sampling_probability * dataset_size
            if abs(batch - round(batch)) > 1e-6 * dataset_size:
                raise ValueError(f"sampling_probability * dataset_size must be a whole batch size, got {batch}")


@functools.lru_cache(maxsize=2048)
def _accountant_epsilon(key: tuple, delta: float, sampling: str, n: int, grid: float) -> float:
    import dp_accounting as dpa

    replace_one = dpa.NeighboringRelation.REPLACE_ONE
    if sampling == "poisson":
        # The composition PLDAccountant performs (noise multiplier 2 r: per-example bound
        # 1, replace-one sensitivity 2), phase PLDs taken from the cache.
        return _pld_epsilon([(2.0 * ratio, steps, q) for ratio, steps, q in key], delta, grid)
    from dp_accounting.rdp import rdp_privacy_accountant

    accountant = rdp_privacy_accountant.RdpAccountant(neighboring_relation=replace_one)
    for ratio, steps, q in key:
        batch = n if q >= 1.0 else int(round(q * n))
        event = dpa.SampledWithoutReplacementDpEvent(n, batch, dpa.GaussianDpEvent(ratio))
        accountant.compose(dpa.SelfComposedDpEvent(event, steps))
    return float(accountant.get_epsilon(delta))


def _safe(key, delta, sampling, n, grid) -> float:
    try:
        return _accountant_epsilon(key, delta, sampling, n, grid)
    except (OverflowError, FloatingPointError):
        return math.inf


def _accounting_key(phases: Sequence[GaussianPhase]) -> tuple:
    """The phases as the accountant composes them: all full-batch phases merged into one
    Gaussian release of ratio ``1 / sqrt(sum_k steps_k / r_k^2)`` (exact: composed
    Gaussian mechanisms are a Gaussian mechanism, in privacy-loss distribution and in
    RDP alike), so that T snapshots with T different noise levels cost one PLD."""
    full = sum(p.steps / p.noise_ratio**2 for p in phases if p.full_batch)
    merged = ((1.0 / math.sqrt(full), 1, 1.0),) if full > 0 else ()
    return merged + tuple((float(p.noise_ratio), int(p.steps), float(p.sampling_probability))
                          for p in phases if not p.full_batch)


def phases_epsilon(
    phases: Sequence[GaussianPhase],
    delta: float,
    *,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    grid: float | None = None,
) -> float:
    """Epsilon at ``delta`` of the adaptive composition of all ``phases`` (replace-one).

    Full-batch-only compositions are computed in closed form (Gaussian DP); otherwise by
    dp-accounting (PLD for Poisson, RDP for fixed-size batches), the PLD grid refined
    relative to the answer (every grid gives a valid upper bound; the smallest is kept),
    or, when ``grid`` is given, one PLD at that discretization (what a calibration at a
    known target uses: its certified points are then recomputed from the cache).
    When some noise ratio is below 0.1 (budgets in the hundreds), the closed form that
    ignores amplification by sampling is returned: a valid upper bound, computed at once.
    """
    _check_common(phases, delta, sampling, dataset_size)
    mu = math.sqrt(sum(p.steps / p.noise_ratio**2 for p in phases))
    if all(p.full_batch for p in phases) or min(p.noise_ratio for p in phases) < _ACCOUNTANT_MIN_RATIO:
        # Sampling never weakens a Gaussian release (the subsampled tradeoff curve lies
        # above the full-batch one), so the closed form is a valid upper bound; below
        # the threshold the accountants are slow (the PLD of a nearly noiseless
        # Gaussian spans a huge loss range) and the budget is in the hundreds anyway.
        return gaussian_dp_epsilon(mu, delta)
    key = _accounting_key(phases)
    n = int(dataset_size or 0)
    if sampling == "without_replacement":
        return _accountant_epsilon(key, float(delta), sampling, n, 0.0)
    if grid is not None:
        return _safe(key, float(delta), sampling, n, float(grid))
    # the smallest privacy-loss scale of one subsampled step sets a floor on the grid
    step_mu = min(step_gdp_mu(p.sampling_probability, p.noise_ratio) for p in phases if not p.full_batch)
    steps = max(p.steps for p in phases if not p.full_batch)
    best, grid = math.inf, _pld_grid(math.inf, step_mu, steps)
    while True:
        best = min(best, _safe(key, float(delta), sampling, n, grid))
        finer = _pld_grid(best, step_mu, steps)
        if finer >= grid * 0.999:
            return best
        grid = finer


def calibration_grid(epsilon: float, delta: float | None = None, steps: int | None = None) -> float:
    """The PLD discretization :func:`calibrate_phase_noise_ratio` certifies at, for a
    target ``(epsilon, delta)`` and a calibrated phase of ``steps`` subsampled steps:
    epsilon / 2000, and at most a fifth of ``mu(epsilon, delta) / sqrt(steps)``, an
    upper estimate of one step's privacy-loss scale (see ``_pld_grid``)."""
    if delta is None or steps is None:
        return _pld_grid(epsilon)
    return _pld_grid(epsilon, gaussian_dp_mu(epsilon, delta) / math.sqrt(steps), steps)


def calibrate_phase_noise_ratio(
    budget: PrivacyBudget,
    fixed: Sequence[GaussianPhase],
    steps: int,
    sampling_probability: float,
    *,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    rtol: float = 1e-4,
) -> float:
    """The smallest noise ratio (to ``rtol``) of one more phase such that ``fixed`` plus
    that phase is ``budget``-DP.

    Raises ``ValueError`` when the ``fixed`` phases alone already spend the budget. The
    epsilon the accountant certified at the returned ratio is
    ``phases_epsilon(..., grid=calibration_grid(budget.epsilon, budget.delta, steps))``
    (cached: free).
    """
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    fixed = tuple(fixed)

    grid = calibration_grid(budget.epsilon, budget.delta, steps)

    def eps_at(ratio: float) -> float:
        # One PLD at the grid fitted to the target (every grid gives a valid upper bound):
        # the coarse-to-fine refinement would build four or five per candidate.
        phase = GaussianPhase(ratio, steps, sampling_probability)
        return phases_epsilon(fixed + (phase,), budget.delta, sampling=sampling, dataset_size=dataset_size, grid=grid)

    if fixed and phases_epsilon(fixed, budget.delta, sampling=sampling, dataset_size=dataset_size) >= budget.epsilon:
        raise ValueError("the fixed phases alone already spend the whole budget")
    # The ratio the closed form certifies without amplification by sampling: an upper
    # bound on the answer, and the answer itself below the accountants' threshold.
    spare = gaussian_dp_mu(budget.epsilon, budget.delta) ** 2 - sum(p.steps / p.noise_ratio**2 for p in fixed)
    if spare > 0 and math.sqrt(steps / spare) < _ACCOUNTANT_MIN_RATIO:
        return math.sqrt(steps / spare) * (1 + 1e-12)
    guess = clt_noise_ratio(spare, sampling_probability, steps)
    try:
        if guess is None:
            return smallest_certified_noise(eps_at, budget.epsilon, 1.0, floor=1e-8, rtol=rtol, ceiling=1e12)
        fixed_mu_squared = sum(p.steps / p.noise_ratio**2 for p in fixed)
        slope = clt_log_slope(1.05 * guess, fixed_mu_squared, sampling_probability, steps, budget.delta)
        return smallest_certified_noise(eps_at, budget.epsilon, 1.05 * guess, floor=1e-8, rtol=rtol, ceiling=1e12,
                                        factor=1.25, slope=slope)
    except ValueError:
        raise ValueError("no noise level meets the budget (the fixed phases take all of it)") from None
