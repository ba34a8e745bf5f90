"""Renyi-DP curves of dperm's events, for the one accounting route that needs them:
repeat-and-select (Papernot and Steinke 2022).

A mechanism M is (lambda, rho(lambda))-RDP (Mironov 2017) when the Renyi divergence of order
lambda between its outputs on replace-one neighbours is at most rho(lambda), both ways.
Curves compose by addition and convert to (epsilon, delta) by dp-accounting's
``compute_epsilon`` / ``compute_delta``. dp-accounting's ``RdpAccountant`` computes the
curves of its own events but has no hook for dperm's; this module gives the curve of every
full-batch event of :mod:`dperm.privacy.events`, each a valid upper bound:

- ``GaussianDpEvent`` / ``GaussianRelease`` (sensitivity Delta, standard deviation sigma):
  ``lambda mu^2 / 2`` with ``mu = Delta / sigma``, exact (Mironov 2017, Proposition 7);
- ``LaplaceDpEvent`` (scale b per unit of sensitivity): Mironov 2017, Proposition 6, exact;
- a pure epsilon-DP release (L2-Laplace, secure or discrete Laplace, exponential mechanism,
  ``RandomizedResponseDpEvent``): the divergence of binary randomized response with
  parameter epsilon, the dominating pair of every pure epsilon-DP mechanism (Kairouz, Oh,
  Viswanath 2015),
  ``log((e^(lambda eps) + e^((1 - lambda) eps)) / (1 + e^eps)) / (lambda - 1)``;
- objective perturbation with Gaussian b (:class:`~dperm.privacy.events.ObjectivePerturbationRelease`):
  its privacy loss at an output is at most ``eps_J + mu R + mu^2 / 2`` with R ~ chi_2
  the norm of the noise's projection on the span of the two differing rows (the argument
  of :mod:`dperm.privacy.shifted_gaussian`); since ``E_P[exp((lambda - 1) L)]`` grows with
  the loss, ``rho(lambda) <= eps_J + mu^2/2 + log M((lambda - 1) mu) / (lambda - 1)``
  with ``M(t) = 1 + t sqrt(2 pi) e^(t^2/2) Phi(t)`` the moment generating function of
  the Rayleigh law; with L2-Laplace b it is pure (randomized response above);
- a floating-point-safe release (``secure=True``): its output law is within
  ``e^(+-tau)`` of a post-processed Gaussian's (:mod:`dperm.privacy.secure_release`), so
  each adds ``(2 lambda - 1) tau / (lambda - 1)``;
- ``ComposedDpEvent`` / ``SelfComposedDpEvent``: sums;
- :class:`~dperm.privacy.events.OneOfRelease` (one of several mechanisms, chosen
  independently of the data): the pointwise maximum (Renyi divergence is jointly
  quasi-convex);
- an :class:`~dperm.privacy.events.ApproximateDpRelease` (eps, delta) (e.g. the coupling
  term of the secure objective perturbation): no curve exists, but the pair is
  delta-close in total variation to a 2 eps-indistinguishable one, so it contributes the
  pure curve of 2 eps and a *slack* delta (:func:`renyi_curve_and_slack`): the mechanism
  is within total variation ``slack`` of one with the curve. Repeat-and-select then pays
  ``(1 + e^eps) E[K] slack`` in delta (each of the K runs may be the one that differs;
  the union bound over runs uses the mean, as K is independent of the data).

Sampled releases have no curve here (their exact route is the PLD); an event without a
curve raises :class:`UnsupportedEventError`.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import dp_event as _dpe
from scipy.special import log_ndtr

from . import events as ev

__all__ = ["ORDERS", "renyi_curve", "renyi_curve_and_slack", "UnsupportedRenyiEvent"]

# Orders lambda > 1 at which curves are evaluated: dp-accounting's default grid
# (1.1 to 11 by 0.1, the integers to 63, then 128 ... 1024).
ORDERS = np.array([round(1.0 + 0.1 * k, 1) for k in range(1, 101)] + list(range(12, 64)) + [128, 256, 512, 1024],
                  dtype=np.float64)


class UnsupportedRenyiEvent(ValueError):
    """The event has no Renyi-DP curve in dperm (sampled releases, (epsilon, delta)-only parts)."""


def _pure_curve(epsilon: float, orders: np.ndarray) -> np.ndarray:
    if epsilon <= 0:
        return np.zeros_like(orders)
    a = orders
    # log(e^(a eps) + e^((1 - a) eps)) - log(1 + e^eps), stably
    top = np.logaddexp(a * epsilon, (1.0 - a) * epsilon)
    return np.minimum((top - np.logaddexp(0.0, epsilon)) / (a - 1.0), epsilon)


def _laplace_curve(scale: float, orders: np.ndarray) -> np.ndarray:
    """Mironov 2017, Prop. 6, for sensitivity 1 and scale b: with eps = 1/b,
    ``rho = eps + log(1 + (a - 1)(e^((1 - 2a) eps) - 1) / (2a - 1)) / (a - 1)``."""
    eps = 1.0 / scale
    a = orders
    return eps + np.log1p((a - 1.0) * np.expm1((1.0 - 2.0 * a) * eps) / (2.0 * a - 1.0)) / (a - 1.0)


def _log_rayleigh_mgf(t: np.ndarray) -> np.ndarray:
    """log E[exp(t R)] for R Rayleigh (chi with 2 degrees of freedom), t >= 0."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(divide="ignore"):
        second = np.log(t) + 0.5 * math.log(2.0 * math.pi) + 0.5 * t * t + log_ndtr(t)
    return np.logaddexp(0.0, second)


def _gaussian_mu(event) -> float:
    """Delta / sigma of a full-batch Gaussian event (dp-accounting's REPLACE_ONE convention:
    ``noise_multiplier`` is sigma over half the sensitivity, see :mod:`dperm.privacy.events`)."""
    return 2.0 / float(event.noise_multiplier)


def _curve(event, orders: np.ndarray) -> tuple[np.ndarray, float]:
    """(curve, slack): the run is within ``slack`` in total variation, on each of two
    neighbouring inputs, of a mechanism with the curve (approximate Renyi DP)."""
    if isinstance(event, _dpe.ComposedDpEvent):
        total, slack = np.zeros_like(orders), 0.0
        for part in event.events:
            curve, extra = _curve(part, orders)
            total, slack = total + curve, slack + extra
        return total, slack
    if isinstance(event, ev.BudgetPart):  # a note on the event, not a mechanism
        return _curve(event.event, orders)
    if isinstance(event, _dpe.SelfComposedDpEvent):
        curve, slack = _curve(event.event, orders)
        return int(event.count) * curve, int(event.count) * slack
    if isinstance(event, ev.OneOfRelease):
        if not event.events:
            raise UnsupportedRenyiEvent("OneOfRelease needs at least one event")
        parts = [_curve(part, orders) for part in event.events]
        return np.max([c for c, _ in parts], axis=0), max(x for _, x in parts)
    if isinstance(event, ev.ApproximateDpRelease):
        # an (eps, delta)-indistinguishable pair is delta-close in total variation to an
        # eps-indistinguishable one (Kasiviswanathan and Smith 2014, Lemma 3.3; Dwork and
        # Roth 2014, Lemma 3.17); counted here at 2 eps, which covers either statement
        return _pure_curve(2.0 * float(event.epsilon), orders), float(event.delta)
    return _exact_curve(event, orders), 0.0


def _exact_curve(event, orders: np.ndarray) -> np.ndarray:
    if isinstance(event, _dpe.NoOpDpEvent):
        return np.zeros_like(orders)
    if isinstance(event, _dpe.GaussianDpEvent):
        mu = _gaussian_mu(event)
        curve = orders * mu * mu / 2.0
        if getattr(event, "secure", False):
            from .secure_release import TAU_PER_RELEASE

            curve = curve + (2.0 * orders - 1.0) * TAU_PER_RELEASE / (orders - 1.0)
        return curve
    if isinstance(event, _dpe.LaplaceDpEvent):
        return _laplace_curve(float(event.noise_multiplier), orders)
    if isinstance(event, _dpe.RandomizedResponseDpEvent):
        if int(event.num_buckets) != 2:
            raise UnsupportedRenyiEvent("randomized response is supported with 2 buckets")
        p = float(event.noise_parameter)
        return _pure_curve(math.log((2.0 - p) / p) if p > 0 else math.inf, orders)
    if isinstance(event, (ev.L2LaplaceRelease, ev.SecureLaplaceRelease, ev.DiscreteLaplaceRelease,
                          ev.ExponentialMechanismRelease)):
        return _pure_curve(float(event.epsilon), orders)
    if isinstance(event, ev.ObjectivePerturbationRelease):
        if event.noise != "gaussian":
            return _pure_curve(float(event.epsilon), orders)
        mu = float(event.sensitivity) / float(event.scale)
        shift = _log_rayleigh_mgf((orders - 1.0) * mu) / (orders - 1.0)
        return float(event.jacobian_epsilon) + mu * mu / 2.0 + shift
    raise UnsupportedRenyiEvent(f"no Renyi-DP curve for {type(event).__name__} (sampled releases are accounted "
                                "by their privacy-loss distribution; repeat-and-select needs full-batch runs)")


def renyi_curve_and_slack(event, orders=ORDERS) -> tuple[np.ndarray, float]:
    """``(rho, slack)``: on each of two replace-one neighbours the mechanism is within
    ``slack`` in total variation of one whose Renyi-DP curve is ``rho(lambda)`` at
    ``orders`` (each > 1); slack is 0 except for parts known only by an (epsilon, delta)."""
    orders = np.asarray(orders, dtype=np.float64)
    if np.any(orders <= 1.0):
        raise ValueError("Renyi orders must be > 1")
    return _curve(event, orders)


def renyi_curve(event, orders=ORDERS) -> np.ndarray:
    """The Renyi-DP curve ``rho(lambda)`` of ``event`` at ``orders`` (each > 1), replace-one
    (an event with slack, see :func:`renyi_curve_and_slack`, is refused)."""
    curve, slack = renyi_curve_and_slack(event, orders)
    if slack > 0:
        raise UnsupportedRenyiEvent("the event has an (epsilon, delta) part: use renyi_curve_and_slack")
    return curve
