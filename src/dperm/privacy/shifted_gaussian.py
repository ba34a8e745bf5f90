"""Privacy of a Gaussian release whose shift direction depends on the output.

Objective perturbation (Chaudhuri, Monteleoni, Sarwate 2011; Kifer, Smith, Thakurta 2012)
releases ``w = argmin F(w) + Lambda/(2n) ||w||^2 + <b, w>/n`` with ``b ~ N(0, sigma^2 I)``.
At an output w, the noise that produced it is ``b_D(w)`` on D and
``b_D'(w) = b_D(w) + Delta(w)`` on a replace-one neighbour D', with ``||Delta(w)|| <= Delta``
(twice the per-example gradient bound) but a *direction that depends on w*: the privacy
loss ``(2 <b, Delta(w)> + ||Delta(w)||^2) / (2 sigma^2)`` is not that of a Gaussian release
with a fixed shift, and the analytic Gaussian curve can understate delta by up to a factor 2.

For a generalized linear model ``Delta(w)`` lies in ``V = span{x, x'}`` (the two rows that
differ), a subspace of dimension k <= 2 fixed by the pair, so
``<b, Delta(w)> <= ||P_V b|| Delta`` with ``||P_V b|| / sigma ~ chi_k``. With
``mu = Delta / sigma`` the loss is at most ``mu R + mu^2 / 2`` with R ~ chi_k, and since the
hockey-stick divergence ``E[(1 - exp(eps - loss))_+]`` grows with the loss,

``delta(eps) <= E[(1 - exp(eps - mu R - mu^2/2))_+]``,

in closed form for k = 1 (twice the analytic Gaussian's) and k = 2 (Rayleigh R), below.
A further deterministic term (objective perturbation's Jacobian, ``epsilon_J``) shifts eps.
This is a valid upper bound (not the exact curve); it is what dperm calibrates to.
"""

from __future__ import annotations

import math

from scipy import optimize
from scipy.special import log_ndtr

__all__ = ["shifted_gaussian_delta", "shifted_gaussian_epsilon"]


def shifted_gaussian_delta(mu: float, epsilon: float, dimension: int = 2) -> float:
    """The bound on delta(epsilon) above, for a shift of norm <= mu (in noise standard
    deviations) confined to a subspace of ``dimension`` 1 or 2."""
    if mu <= 0:
        return 0.0
    r0 = max(0.0, (epsilon - mu * mu / 2.0) / mu)
    if dimension == 1:
        # 2 [Phi(-r0) - e^eps Phi(-r0 - mu)]
        first, second = log_ndtr(-r0), epsilon + log_ndtr(-r0 - mu)
        if second >= first:
            return 0.0
        return float(min(1.0, 2.0 * math.exp(first) * -math.expm1(second - first)))
    if dimension != 2:
        raise ValueError(f"dimension must be 1 or 2, got {dimension}")
    # e^{-r0^2/2} - e^eps [e^{-(r0+mu)^2/2} - mu sqrt(2 pi) Phi(-(r0+mu))]
    s = r0 + mu
    value = math.exp(-r0 * r0 / 2.0) - math.exp(epsilon - s * s / 2.0) * (1.0 - mu * math.sqrt(2.0 * math.pi) * _mills(s))
    return float(min(1.0, max(0.0, value)))


def _mills(s: float) -> float:
    """Phi(-s) e^{s^2/2}, computed stably (the Mills ratio times the normal density)."""
    return math.exp(log_ndtr(-s) + s * s / 2.0)


def shifted_gaussian_epsilon(mu: float, delta: float, dimension: int = 2) -> float:
    """The smallest epsilon >= 0 with ``shifted_gaussian_delta(mu, epsilon) <= delta``."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if shifted_gaussian_delta(mu, 0.0, dimension) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while shifted_gaussian_delta(mu, hi, dimension) > delta:
        hi *= 2.0
    eps = optimize.brentq(lambda e: shifted_gaussian_delta(mu, e, dimension) - delta, 0.0, hi, xtol=1e-14, rtol=1e-13)
    while shifted_gaussian_delta(mu, eps, dimension) > delta:  # round up to a certified value
        eps = eps * (1 + 1e-12) + 1e-15
    return float(eps)
