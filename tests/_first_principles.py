"""Privacy loss computed from a mechanism's actual output distribution, from first principles.

The helpers here never call dperm's accountant, dp-accounting or any privacy argument: they
build the output law of a mechanism on two neighbouring datasets (enumerating the batches a
sampler can draw, or summing discrete noise exactly) and integrate the hockey-stick
divergence ``delta(eps) = sum (P - e^eps Q)_+`` directly. ``tests/test_accounting_vs_
mechanism.py`` checks every accounting route of dperm against them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats


def poisson_batches(n: int, q: float):
    """Every subset a Poisson sampler with rate q can draw from n rows, with its probability."""
    for size in range(n + 1):
        for subset in itertools.combinations(range(n), size):
            yield subset, q**size * (1.0 - q) ** (n - size)


def fixed_size_batches(n: int, b: int):
    """Every b-subset of n rows, each with probability 1 / C(n, b) (sampling without replacement)."""
    subsets = list(itertools.combinations(range(n), b))
    for subset in subsets:
        yield subset, 1.0 / len(subsets)


def batch_sum_law(values, batches) -> tuple[np.ndarray, np.ndarray]:
    """(centres, weights) of the law of the batch sum of 1-D per-row values before noise."""
    values = np.asarray(values, dtype=np.float64)
    law: dict[float, float] = {}
    for subset, weight in batches:
        centre = float(values[list(subset)].sum())
        law[centre] = law.get(centre, 0.0) + weight
    centres = np.array(sorted(law))
    return centres, np.array([law[c] for c in centres])


def gaussian_mixture_density(grid: np.ndarray, centres, weights, sigma: float) -> np.ndarray:
    return np.sum(np.asarray(weights)[:, None] * stats.norm.pdf(grid[None, :], np.asarray(centres)[:, None], sigma),
                  axis=0)


def integration_grid(centres, sigma: float, points: int = 20001, width: float = 14.0) -> np.ndarray:
    centres = np.asarray(centres, dtype=np.float64)
    return np.linspace(centres.min() - width * sigma, centres.max() + width * sigma, points)


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float, cell: float = 1.0) -> float:
    """``sum (p - e^eps q)_+ * cell`` of two densities (or pmfs, cell = 1) on one grid."""
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)) * cell)


def symmetric_hockey_stick(p: np.ndarray, q: np.ndarray, eps: float, cell: float = 1.0) -> float:
    """The larger of both orders: the neighbouring relation is symmetric."""
    return max(hockey_stick(p, q, eps, cell), hockey_stick(q, p, eps, cell))


def hockey_stick_curve(p: np.ndarray, q: np.ndarray, cell: float = 1.0):
    """``eps -> max of both orders of sum (p - e^eps q)_+ * cell``, from the privacy loss
    sorted once (many evaluations of one pair, as a bisection makes)."""
    one_way = []
    for a, b in ((p, q), (q, p)):
        a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
        keep = a > 0
        a, b = a[keep], b[keep]
        with np.errstate(divide="ignore"):
            loss = np.log(a) - np.log(b)  # +inf where b = 0
        order = np.argsort(loss)[::-1]
        loss, a, b = loss[order], a[order], b[order]
        one_way.append((-loss, np.concatenate([[0.0], np.cumsum(a)]), np.concatenate([[0.0], np.cumsum(b)])))

    def curve(eps: float) -> float:
        best = 0.0
        for negative_loss, mass_a, mass_b in one_way:
            count = int(np.searchsorted(negative_loss, -eps, side="left"))  # losses > eps
            best = max(best, (mass_a[count] - math.exp(eps) * mass_b[count]) * cell)
        return best

    return curve


def smallest_epsilon(delta_of_eps, delta: float, hi: float = 60.0) -> float:
    """The smallest eps >= 0 with ``delta_of_eps(eps) <= delta`` (bisection; the curve is
    non-increasing)."""
    if delta_of_eps(0.0) <= delta:
        return 0.0
    lo = 0.0
    while delta_of_eps(hi) > delta:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if delta_of_eps(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-5 * max(1.0, hi):
            break
    return hi


def discrete_gaussian_pmf(support: np.ndarray, centre: int, scale: int) -> np.ndarray:
    """N_Z(centre, scale^2) on ``support`` (integers), normalized over a support that holds
    all but a negligible tail."""
    logits = -((support - centre).astype(np.float64) ** 2) / (2.0 * float(scale) ** 2)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def renyi_divergence(p: np.ndarray, q: np.ndarray, order: float, cell: float = 1.0) -> float:
    """``log(sum p^a q^(1-a) cell) / (a - 1)`` of two densities on one grid."""
    mask = (p > 0) & (q > 0)
    log_terms = order * np.log(p[mask]) + (1.0 - order) * np.log(q[mask]) + math.log(cell)
    top = log_terms.max()
    return float((top + math.log(np.sum(np.exp(log_terms - top)))) / (order - 1.0))
