"""Gaussian differential privacy in closed form (Dong, Roth, Su 2019).

A Gaussian release of noise standard deviation sigma and replace-one L2 sensitivity Delta
is ``mu = Delta / sigma``-GDP; T adaptive such releases are ``sqrt(sum_t mu_t^2)``-GDP
exactly; the (epsilon, delta) curve of mu-GDP is
``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, which for one release is
the analytic Gaussian mechanism of Balle and Wang (2018). Knows nothing of events: the
accountant (:mod:`dperm.privacy.accountant`) routes to it.
"""

from __future__ import annotations

import functools
import math

from scipy import optimize
from scipy.special import log_ndtr

from ..exceptions import PrivacyWarning
from .._warnings import user_stacklevel

__all__ = ["gaussian_dp_delta", "gaussian_dp_epsilon", "gaussian_dp_mu", "analytic_gaussian_sigma",
           "classical_gaussian_sigma", "check_number"]


def check_number(name: str, value: float, *, lower: float = 0.0, strict: bool = True, upper: float = math.inf) -> float:
    """``value`` as a float, or a ValueError naming ``name`` and the allowed range."""
    value = float(value)
    ok = math.isfinite(value) and (value > lower if strict else value >= lower) and value < upper
    if not ok:
        raise ValueError(f"{name} must be a finite number {'>' if strict else '>='} {lower:g}"
                         + (f" and < {upper:g}" if math.isfinite(upper) else "") + f", got {value}")
    return value


_check = check_number


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

        warnings.warn("the classical Gaussian mechanism is proven only for epsilon < 1", PrivacyWarning,
                      stacklevel=user_stacklevel())
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon

