"""The budget at which a mechanism runs with half the noise of a claimed budget.

The audit's mis-calibrated variant runs a mechanism at ``epsilon_run`` chosen so that
its noise is half the noise the claim ``(epsilon, delta)`` needs, and audits it against
the claim: a sound audit must then report a lower bound above the claim. These are
independent implementations (from the papers' formulas, not dperm's accountant), so a
bug in the code under audit cannot hide itself here.

- Pure epsilon-DP mechanisms whose noise scale is proportional to 1 / epsilon (the
  L2-Laplace mechanism, the exponential mechanism, report-noisy-max under basic
  composition): ``epsilon_run = 2 epsilon``.
- Gaussian mechanisms and their full-batch compositions, calibrated exactly as
  mu-Gaussian-DP (Dong, Roth, Su 2019; Balle, Wang 2018): noise ``sigma`` is
  proportional to ``1 / mu(epsilon, delta)``, so ``epsilon_run = eps_GDP(2 mu, delta)``.
- Poisson-subsampled Gaussian steps (DP-SGD): dp-accounting's privacy-loss-distribution
  accountant under the replace-one relation, by bisection on the noise multiplier.
"""

from __future__ import annotations

import math

from scipy import optimize
from scipy.special import log_ndtr

__all__ = ["gdp_delta", "gdp_mu", "gdp_epsilon", "pure_halving_epsilon", "gaussian_halving_epsilon",
           "poisson_gaussian_epsilon", "poisson_gaussian_noise_multiplier", "poisson_halving_epsilon"]


def gdp_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of mu-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``
    (Dong, Roth, Su 2019, Corollary 2.13), in log space."""
    if mu <= 0:
        return 0.0
    first = log_ndtr(-epsilon / mu + mu / 2.0)
    second = epsilon + log_ndtr(-epsilon / mu - mu / 2.0)
    return 0.0 if second >= first else float(math.exp(first) * -math.expm1(second - first))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The mu of the Gaussian mechanism calibrated exactly to (epsilon, delta)."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"need epsilon > 0 and delta in (0, 1), got ({epsilon}, {delta})")
    hi = 1.0
    while gdp_delta(hi, epsilon) < delta:
        hi *= 2.0
    return float(optimize.brentq(lambda m: gdp_delta(m, epsilon) - delta, 1e-12, hi, xtol=1e-14, rtol=1e-13))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The epsilon at ``delta`` of mu-GDP."""
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-14, rtol=1e-13))


def pure_halving_epsilon(epsilon: float, delta: float = 0.0) -> float:
    """``2 epsilon``: the noise of a pure-DP mechanism scales as 1 / epsilon."""
    return 2.0 * float(epsilon)


def gaussian_halving_epsilon(epsilon: float, delta: float) -> float:
    """``eps_GDP(2 mu(epsilon, delta), delta)``: half the sigma of an exact Gaussian
    calibration (single release or any full-batch composition)."""
    return gdp_epsilon(2.0 * gdp_mu(epsilon, delta), delta)


def poisson_gaussian_epsilon(noise_multiplier: float, sampling_probability: float, steps: int, delta: float) -> float:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian releases, replace-one, by
    dp-accounting's PLD accountant. ``noise_multiplier`` is sigma over the per-example
    norm bound (the replace-one sensitivity of a sum is twice that bound)."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-3)
    event = dpa.PoissonSampledDpEvent(sampling_probability, dpa.GaussianDpEvent(noise_multiplier))
    accountant.compose(dpa.SelfComposedDpEvent(event, int(steps)))
    return float(accountant.get_epsilon(delta))


def poisson_gaussian_noise_multiplier(epsilon: float, sampling_probability: float, steps: int, delta: float) -> float:
    """The smallest noise multiplier whose PLD epsilon is at most ``epsilon`` (bisection
    on its logarithm to 1e-5 relative)."""
    def excess(log_z):
        return poisson_gaussian_epsilon(math.exp(log_z), sampling_probability, steps, delta) - epsilon

    lo, hi = math.log(0.5), math.log(2.0)
    while excess(hi) > 0:
        lo, hi = hi, hi + math.log(2.0)
    while excess(lo) <= 0:
        lo, hi = lo - math.log(2.0), lo
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-5))


def poisson_halving_epsilon(epsilon: float, delta: float, sampling_probability: float, steps: int) -> float:
    """The epsilon of the same Poisson-subsampled schedule with half the noise multiplier."""
    z = poisson_gaussian_noise_multiplier(epsilon, sampling_probability, steps, delta)
    return poisson_gaussian_epsilon(z / 2.0, sampling_probability, steps, delta)
