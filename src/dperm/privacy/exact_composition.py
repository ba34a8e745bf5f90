"""The exact privacy profile of pure releases composed with full-batch Gaussian releases.

A pure epsilon-DP release is dominated by the randomized-response pair of epsilon, whose
privacy loss is +epsilon with probability ``e^eps / (1 + e^eps)`` and -epsilon otherwise
(Kairouz, Oh, Viswanath 2015, Theorem 3.3: its k-fold composition is the exact worst case
of k adaptive epsilon-DP releases), and full-batch Gaussian releases compose into one
mu-GDP pair (Dong, Roth, Su 2019). The composition of dominating pairs dominates the
adaptive composition (Dong, Roth, Su 2019, Theorem 4), so with the pure releases grouped
by their epsilon (counts k_j) the privacy loss is ``L = sum_j (2 B_j - k_j) eps_j + G``,
B_j ~ Binomial(k_j, e^eps_j / (1 + e^eps_j)) independent, G the Gaussian pair's loss, and

    delta(eps) = E[(1 - e^(eps - L))_+] = sum_b P(b) g(eps - l(b)),
    g(a) = Phi(-a/mu + mu/2) - e^a Phi(-a/mu - mu/2)   (mu = 0: (1 - e^a)_+),

a finite sum over the lattice of the B_j. It is exact for these pairs, so no
privacy-loss distribution of the same pairs (a pessimistic discretization) certifies
less: the accountant takes it instead of the PLD when the lattice is small.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.special import expit, gammaln, log_ndtr

__all__ = ["exact_epsilon", "exact_delta", "LATTICE_LIMIT"]

LATTICE_LIMIT = 20000  # lattice points: at most ~1 ms per delta evaluation


def _lattice(pure: Sequence[tuple[float, int, bool]]):
    """(losses, log probabilities) of the summed randomized-response losses, or None when
    the lattice exceeds LATTICE_LIMIT points."""
    if math.prod(int(c) + 1 for _, c, _ in pure) > LATTICE_LIMIT:
        return None
    losses, logp = np.zeros(1), np.zeros(1)
    for eps, count, _ in pure:
        k = np.arange(int(count) + 1, dtype=np.float64)
        log_binomial = gammaln(count + 1.0) - gammaln(k + 1.0) - gammaln(count - k + 1.0)
        # log P(B = k), P(+eps) = e^eps / (1 + e^eps), computed without overflow
        log_up, log_down = -np.logaddexp(0.0, -eps), -np.logaddexp(0.0, eps)
        lp = log_binomial + k * log_up + (count - k) * log_down
        losses = (losses[:, None] + ((2.0 * k - count) * eps)[None, :]).ravel()
        logp = (logp[:, None] + lp[None, :]).ravel()
    return losses, logp


def _delta_on(losses: np.ndarray, logp: np.ndarray, mu: float, eps: float) -> float:
    a = eps - losses
    if mu <= 0:
        mask = a < 0
        return float(np.sum(np.exp(logp[mask]) * -np.expm1(a[mask])))
    first = log_ndtr(-a / mu + mu / 2.0)
    second = a + log_ndtr(-a / mu - mu / 2.0)
    terms = np.exp(logp + first) * -np.expm1(np.minimum(second - first, 0.0))
    return float(np.sum(terms))


def exact_delta(pure: Sequence[tuple[float, int, bool]], mu: float, eps: float) -> float | None:
    """delta(eps) of the pure releases ``(epsilon, count, bounded_range)`` composed with a
    mu-GDP release, exactly (None when the lattice is too large)."""
    lattice = _lattice(pure)
    return None if lattice is None else min(1.0, _delta_on(*lattice, mu, eps))


def exact_epsilon(pure: Sequence[tuple[float, int, bool]], mu: float, delta: float, upper: float) -> float | None:
    """The smallest epsilon whose exact delta is at most ``delta`` (to a relative 1e-9,
    rounded up; the delta aimed at is ``delta (1 - 1e-9)``, far above the sum's rounding),
    searched below ``upper`` (a certified epsilon, e.g. basic composition's). None when the
    lattice is too large."""
    lattice = _lattice(pure)
    if lattice is None or not math.isfinite(upper):
        return None
    target = delta * (1.0 - 1e-9)

    def excess(eps: float) -> float:
        return _delta_on(*lattice, mu, eps) - target

    if excess(0.0) <= 0:
        return 0.0
    if excess(upper) > 0:
        return None
    lo, hi = 0.0, upper
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi
