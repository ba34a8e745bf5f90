"""Private quantiles: the exponential mechanism over a declared, finite candidate grid.

The mechanism (Smith 2011, "Privacy-preserving statistical estimation with optimal
convergence rates", STOC, Section 3; McSherry and Talwar 2007 for the exponential
mechanism with a base measure): to release the q-quantile of a column x_1..x_n, score each
candidate c of a declared grid c_1 < ... < c_m by

    ``u(c) = -max(0, #{i : x_i < c} - q n, q n - #{i : x_i <= c})``

(the number of rows between c and the quantile; Smith's ``-| #{x_i < c} - q n |`` with
ties counted, so that a value held by many rows scores 0 when it is the quantile)

and draw c with probability proportional to ``exp(epsilon u(c) / 2)``. Smith's algorithm
is the same mechanism with the uniform (Lebesgue) base measure on a declared interval;
here the base measure is the counting measure on the grid, which lets the grid be
log-spaced over many orders of magnitude (:func:`log_grid`), so no range needs to be
known in advance.

Privacy (replace-one). Replacing one row changes each count ``#{i : x_i < c}`` by at most
one, so every score moves by at most one: the utility has sensitivity 1 and the draw is
epsilon-DP (and epsilon-bounded-range), an
:class:`~dperm.privacy.events.ExponentialMechanismRelease`. The grid and n are public
(n is public under replace-one). ``tests/test_preprocessing.py`` checks the claim on the
mechanism's exact output probabilities for every replace-one pair of small columns.

Without a seed the draw goes through the exact sampler of
:func:`dperm.privacy.mechanisms.exponential_select` (integer arithmetic, uniform bits from
the operating system); with a seed, NumPy's Gumbel-max draw.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import events as ev
from ..privacy.mechanisms import exponential_select

__all__ = ["log_grid", "linear_grid", "round_grid", "quantile_scores", "private_quantile", "quantile_event", "SENSITIVITY",
           "rank_counts", "spread_counts", "scores_from_counts", "select_quantile"]


SENSITIVITY = 1.0  # replace-one sensitivity of the rank score


def log_grid(low_exponent: int = -4, high_exponent: int = 9, per_decade: int = 10) -> np.ndarray:
    """A symmetric log-spaced grid: 0 and ``+-10^k`` for k from ``low_exponent`` to
    ``high_exponent`` in steps of ``1 / per_decade``. The default spans 1e-4 to 1e9
    (263 points, adjacent points 26% apart): public, declared once for every column."""
    if not (isinstance(per_decade, (int, np.integer)) and per_decade >= 1 and high_exponent > low_exponent):
        raise ValueError("log_grid needs high_exponent > low_exponent and per_decade >= 1")
    positive = 10.0 ** np.linspace(low_exponent, high_exponent, (high_exponent - low_exponent) * per_decade + 1)
    return np.concatenate([-positive[::-1], [0.0], positive])


def linear_grid(low: float, high: float, points: int = 64) -> np.ndarray:
    """``points`` equally spaced candidates from ``low`` to ``high`` (both included)."""
    if not (math.isfinite(low) and math.isfinite(high) and high > low and points >= 2):
        raise ValueError("linear_grid needs finite low < high and points >= 2")
    return np.linspace(float(low), float(high), int(points))


def round_grid(low: float, high: float, points: int = 64) -> np.ndarray:
    """The multiples of a power of ten between ``low`` and ``high``, at most ``points``
    of them (at least ``points / 10``): a linear grid that holds the round values
    (integers, tenths, ...) where discrete columns live, so that a column of integers
    can have its median exactly."""
    if not (math.isfinite(low) and math.isfinite(high) and high > low and points >= 2):
        raise ValueError("round_grid needs finite low < high and points >= 2")
    exponent = math.ceil(math.log10((high - low) / points))
    step = 10.0 ** exponent
    first, last = math.ceil(low / step), math.floor(high / step)
    if last - first + 1 > points:  # rounding at the edges: one more decade
        exponent += 1
        step = 10.0 ** exponent
        first, last = math.ceil(low / step), math.floor(high / step)
    values = np.arange(first, last + 1, dtype=np.float64) * step
    if exponent < 0:
        values = np.round(values, -exponent)
    return values if values.size >= 2 else linear_grid(low, high, points)


def _check_grid(candidates) -> np.ndarray:
    grid = np.asarray(candidates, dtype=np.float64)
    if grid.ndim != 1 or grid.size < 2 or not np.isfinite(grid).all() or np.any(np.diff(grid) <= 0):
        raise ValueError("candidates must be a 1-d, finite, strictly increasing grid of at least 2 values")
    return grid


def quantile_scores(sorted_values: np.ndarray, q: float, candidates: np.ndarray) -> np.ndarray:
    """``-max(0, #{x_i < c} - q n, q n - #{x_i <= c})`` for every candidate c: minus the
    number of rows between c and the q-quantile, 0 when c *is* a q-quantile (with ties,
    a value held by many rows is the quantile when the rank q n falls among its rows:
    the median of a column of integers is an integer). ``sorted_values`` sorted, NaNs
    removed by the caller; n = ``len(sorted_values)``. Each count moves by at most one
    when a row is replaced (or added / removed, as a missing value becomes present), and
    so does ``q n`` (by q), so the score has sensitivity 1."""
    return scores_from_counts(*rank_counts(sorted_values, candidates), q)


def rank_counts(sorted_values: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(#{x < c}, #{x <= c}, n)`` per candidate: what the score needs, and what a chunk
    of a Dask column contributes (the counts of the chunks add up)."""
    below = np.searchsorted(sorted_values, candidates, side="left")
    at_or_below = np.searchsorted(sorted_values, candidates, side="right")
    return below, at_or_below, int(sorted_values.size)


def spread_counts(sorted_values: np.ndarray, centre: float, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`rank_counts` of ``|x - centre|`` at the radii r, from the sorted column
    itself: ``#{|x - c| < r} = #{x < c + r} - #{x <= c - r}`` and ``#{|x - c| <= r} =
    #{x <= c + r} - #{x < c - r}`` (no second sort). Each row still counts by its own
    value only (the interval ends are rounded once, for every row alike), so every count
    moves by at most one when a row is replaced."""
    high, low = centre + radii, centre - radii
    below = np.searchsorted(sorted_values, high, side="left") - np.searchsorted(sorted_values, low, side="right")
    at_or_below = np.searchsorted(sorted_values, high, side="right") - np.searchsorted(sorted_values, low, side="left")
    return below, at_or_below, int(sorted_values.size)


def scores_from_counts(below, at_or_below, n: int, q: float) -> np.ndarray:
    """:func:`quantile_scores` from the counts of :func:`rank_counts` (summed over chunks)."""
    rank = q * n
    return -np.maximum(0.0, np.maximum(np.asarray(below) - rank, rank - np.asarray(at_or_below)))


def quantile_event(epsilon: float, candidates) -> ev.ExponentialMechanismRelease:
    """The event of one private quantile (public: epsilon and the grid size)."""
    return ev.ExponentialMechanismRelease(float(epsilon), int(np.size(candidates)))


def private_quantile(values, q: float, candidates, epsilon: float, rng=None) -> float:
    """One epsilon-DP draw of the ``q``-quantile of ``values`` among ``candidates``.

    Parameters
    ----------
    values : 1-d array of floats, no NaN (the private column).
    q : float in [0, 1].
    candidates : 1-d increasing array, declared (public).
    epsilon : float > 0, the draw's privacy parameter.
    rng : None or numpy Generator. None: the exact sampler with operating-system bits.

    Returns
    -------
    float
        A candidate. The caller charges :func:`quantile_event` ``(epsilon, candidates)``
        before calling (the draw itself charges nothing).
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    grid = _check_grid(candidates)
    column = np.sort(np.asarray(values, dtype=np.float64))
    return select_quantile(rank_counts(column, grid), q, grid, epsilon, rng)


def select_quantile(counts, q: float, candidates, epsilon: float, rng=None) -> float:
    """The draw of :func:`private_quantile` from counts already taken (``rank_counts``,
    summed over the chunks of a Dask column)."""
    grid = _check_grid(candidates)
    scores = scores_from_counts(*counts, float(q))
    index = exponential_select(rng, scores, float(epsilon), SENSITIVITY, secure=rng is None)
    return float(grid[index])
