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

import functools
import math

import numpy as np

from ..privacy import events as ev
from ..privacy.mechanisms import exponential_select

__all__ = ["log_grid", "linear_grid", "round_grid", "quantile_scores", "private_quantile", "quantile_event", "SENSITIVITY",
           "rank_counts", "spread_counts", "excess_counts", "off_centre_counts", "LEVEL_SWITCH", "scores_from_counts", "select_quantile", "rank_error",
           "range_level", "widening", "LEVEL_MIN", "LEVEL_MAX", "LEVEL_TARGET", "LEVEL_MARGIN", "centre_grid",
           "effective_size", "SUBGRID_POINTS", "SUBGRID_MASS", "plausible_centres", "plausible_spreads", "HOME_DECADES",
           "PLAUSIBLE_RATE", "NEGATIVE_COST", "ZERO_MASS", "SPREAD_HOME", "SPREAD_RATE", "SPREAD_NEAR", "SPREAD_MASS"]


SENSITIVITY = 1.0  # replace-one sensitivity of the rank score


def log_grid(low_exponent: int = -4, high_exponent: int = 9, per_decade: int = 10) -> np.ndarray:
    """A symmetric log-spaced grid: 0 and ``+-10^k`` for k from ``low_exponent`` to
    ``high_exponent`` in steps of ``1 / per_decade``. The default spans 1e-4 to 1e9
    (263 points, adjacent points 26% apart): public, declared once for every column."""
    if not (isinstance(per_decade, (int, np.integer)) and per_decade >= 1 and high_exponent > low_exponent):
        raise ValueError("log_grid needs high_exponent > low_exponent and per_decade >= 1")
    positive = 10.0 ** np.linspace(low_exponent, high_exponent, (high_exponent - low_exponent) * per_decade + 1)
    return np.concatenate([-positive[::-1], [0.0], positive])


SUBGRID_POINTS = 600  # round values (calendar years: step 1) between two adjacent points of the log grid, at most
SUBGRID_MASS = 0.25  # their base measure together, in points of the log grid (a 0.22-nat cost overall)


@functools.lru_cache(maxsize=4)
def _centre_grid(low_exponent: int, high_exponent: int, per_decade: int, points: int,
                 mass: float) -> tuple[np.ndarray, np.ndarray]:
    grid = log_grid(low_exponent, high_exponent, per_decade)
    values, weights = [grid[:1]], [np.zeros(1)]
    for low, high in zip(grid[:-1], grid[1:]):
        inner = round_grid(low, high, points)
        inner = inner[(inner > low) & (inner < high)]
        if inner.size:
            values.append(inner)
            weights.append(np.full(inner.size, math.log(mass / inner.size)))
        values.append(np.array([high]))
        weights.append(np.zeros(1))
    values, weights = np.concatenate(values), np.concatenate(weights)
    values.flags.writeable = weights.flags.writeable = False  # shared by every fit (cached)
    return values, weights


def centre_grid(low_exponent: int = -4, high_exponent: int = 9, per_decade: int = 10,
                points: int = SUBGRID_POINTS, mass: float = SUBGRID_MASS) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of a column's centre (its private median) and their public base
    measure (log-weights): the points of :func:`log_grid` (weight 1 each) and, between
    two adjacent ones, up to ``points`` round values (:func:`round_grid`) sharing the
    weight ``mass``.

    Why: a column whose values all lie between two adjacent log-grid points (calendar
    years 2000-2015 between 1995 and 2512, 26% apart) has no candidate inside it, so
    every candidate scores n/2 rows from the median and the draw is uniform over the grid
    (a year centred at -6e6: the column is lost). The round values (2000, 2010, ...) put
    candidates inside the data; their small weight keeps the mechanism's cost over the
    log grid's at ``ln(1 + mass)`` nats (a round value must beat the nearest grid point by
    ``2 ln(points / mass) / epsilon`` rows of rank to take the draw over it). The weights
    are public (a base measure, McSherry and Talwar 2007): the draw stays epsilon-DP.
    """
    return _centre_grid(int(low_exponent), int(high_exponent), int(per_decade), int(points), float(mass))


# The plausible base measure of a feature's centre and spread (issue 30, docs/results.md,
# "Numeric columns at small budgets"): public constants, the same for every table.
HOME_DECADES = (-2.0, 4.0)  # |centre| in [1e-2, 1e4]: no cost
PLAUSIBLE_RATE = 1.0  # log-weight lost per decade outside the home decades (0.1 a grid step)
NEGATIVE_COST = math.log(10.0)  # a negative centre weighs a tenth of its positive mirror
ZERO_MASS = 0.3  # the centre 0 weighs this fraction of the whole base measure (an atom)
SPREAD_HOME = (-2.0, 4.0)  # the spread's broad part: r in [1e-2, 1e4] x max(|centre|, 1) at no cost
SPREAD_RATE = 1.0  # log-weight lost per decade outside the broad part's home
SPREAD_NEAR = 0.5  # the concentrated part: radii within half a decade of max(|centre|, 1)
SPREAD_MASS = 0.5  # its weight in the mixture


def _outside(log10_values: np.ndarray, home: tuple[float, float]) -> np.ndarray:
    return np.maximum(0.0, home[0] - log10_values) + np.maximum(0.0, log10_values - home[1])


def plausible_centres(candidates, base=None, rate: float | None = None, home: tuple[float, float] | None = None,
                      negative: float | None = None, zero: float | None = None) -> np.ndarray:
    """A public base measure (log-weights) over a centre's candidates that favours the
    values real columns take: ``base`` (the candidates' own log-weights, e.g.
    :func:`centre_grid`'s) plus ``-rate`` per decade of ``|c|`` outside ``10^home``
    (counted in steps of a tenth of a decade, the log grid's, so that the round values
    between two grid points share one weight), ``-negative`` for ``c < 0``, and the
    candidate 0 an atom holding the fraction ``zero`` of the whole measure. From the
    candidate values only (public): the draw stays epsilon-DP (McSherry and Talwar 2007's
    base measure).

    Why: when a column's draw has a tiny budget (many columns per row), its scores differ
    by a few nats at most and the draw follows the base measure; uniform over
    ``log_grid()``, that is a centre anywhere in +-1e9 (a 0/1 column centred at 200). Under
    this measure such a draw lands on 0 or at a human scale instead, and with the spread's
    (:func:`plausible_spreads`) a 0/1 column or a count keeps its two values apart. At
    larger budgets the data outweigh it: the cost in the utility bound is at most
    ``rate`` x (decades outside) + ``negative`` + ``ln(1 / (1 - zero))`` nats."""
    rate = PLAUSIBLE_RATE if rate is None else float(rate)
    home = HOME_DECADES if home is None else home
    negative = NEGATIVE_COST if negative is None else float(negative)
    zero = ZERO_MASS if zero is None else float(zero)
    values = np.asarray(candidates, dtype=np.float64)
    log_prior = np.zeros(values.shape) if base is None else np.array(base, dtype=np.float64)
    at_zero = values == 0
    cost = np.where(at_zero, 0.0, _outside(np.where(at_zero, 0.0, _tenths(np.where(at_zero, 1.0, values))), home))
    log_prior = log_prior - rate * cost - negative * (values < 0)
    if at_zero.any() and 0.0 < zero < 1.0:
        others = float(np.sum(np.exp(log_prior[~at_zero])))
        log_prior[at_zero] = math.log(zero / (1.0 - zero) * others)
    return log_prior


def _tenths(values: np.ndarray) -> np.ndarray:
    """log10 |v| floored to a tenth of a decade (the log grid's step; 0 -> -inf)."""
    with np.errstate(divide="ignore"):
        return np.floor(np.log10(np.abs(values)) * 10.0 + 1e-9) / 10.0


def plausible_spreads(radii, centre: float, rate: float | None = None, home: tuple[float, float] | None = None,
                      near: float | None = None, mass: float | None = None) -> np.ndarray:
    """A public base measure (log-weights) over a spread's radii given the released
    centre, a mixture: with weight ``1 - mass``, ``-rate`` per decade of r outside
    ``10^home x max(|centre|, 1)`` (normalized); with weight ``mass``, uniform over the
    radii within ``near`` decades of ``max(|centre|, 1)``. A function of the grid and a
    released value only (adaptive composition): the draw stays epsilon-DP; against the
    first part alone it costs at most ``ln(1 / (1 - mass))`` nats in the utility bound.

    Why: a spread drawn far above a column's maps all its values to one (the column is
    lost: a 0/1 column with spread 2.4e5), one drawn below keeps an indicator of the
    values above the centre; at small budgets the draw follows the base measure, and this
    one keeps it at the centre's scale, or near 1 for a centre at 0 (a 0/1 column, a
    count), while the broad part lets the data move it where the budget allows."""
    rate = SPREAD_RATE if rate is None else float(rate)
    home = SPREAD_HOME if home is None else home
    near = SPREAD_NEAR if near is None else float(near)
    mass = SPREAD_MASS if mass is None else float(mass)
    scale = float(_tenths(np.array([max(abs(float(centre)), 1.0)]))[0]) if math.isfinite(centre) else 0.0
    decades = _tenths(np.asarray(radii, dtype=np.float64)) - scale
    broad = np.exp(-rate * _outside(decades, home))
    weights = (1.0 - mass) * broad / broad.sum()
    close = np.abs(decades) <= near + 1e-9
    if mass > 0 and close.any():
        weights = weights + mass * close / np.count_nonzero(close)
    return np.log(weights / weights.max())


def effective_size(log_prior) -> float:
    """The number of candidates of weight 1 with the same total base measure as
    ``log_prior`` (its total over its largest weight): what enters the utility bound
    (:func:`rank_error`) in place of the candidate count."""
    log_prior = np.asarray(log_prior, dtype=np.float64)
    top = float(np.max(log_prior))
    return float(np.sum(np.exp(log_prior - top)))


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
    of a Dask column contributes (the counts of the chunks add up).

    The same counts as two ``searchsorted`` of every candidate, for less: the candidates
    (increasing) below the smallest value count 0 rows and those above the largest n, with
    no search; of the others, ``#{x <= c}`` is ``#{x < c}`` except where c is itself a
    value (checked at the position found), and only those are searched again. (The
    centre's grid has 59 195 candidates, about 18 000 within a column scaled to [-1, 1].)"""
    n = int(sorted_values.size)
    candidates = np.asarray(candidates)
    below = np.zeros(candidates.shape, dtype=np.intp)
    if n == 0:
        return below, below.copy(), 0
    first = int(np.searchsorted(candidates, sorted_values[0], side="left"))  # candidates[:first] < every value
    last = int(np.searchsorted(candidates, sorted_values[-1], side="right"))  # candidates[last:] > every value
    inner = candidates[first:last]
    below[first:last] = np.searchsorted(sorted_values, inner, side="left")
    below[last:] = n
    at_or_below = below.copy()
    found = below[first:last]
    ties = np.flatnonzero(sorted_values[np.minimum(found, n - 1)] == inner)  # found < n for every inner candidate
    if ties.size:
        at_or_below[first + ties] = np.searchsorted(sorted_values, inner[ties], side="right")
    return below, at_or_below, n


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


def excess_counts(sorted_values: np.ndarray, centre: float, radii: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`rank_counts` of the one-sided distances ``(x - centre)_+`` (``side = +1``) or
    ``(centre - x)_+`` (``side = -1``) at the radii r >= 0, read off the sorted column
    (``centre`` a released value, public). Rows on the other side of the centre count as
    distance 0, so a column with most rows at the centre (zeros) still has an upper
    distance quantile among the others. Each row counts by its own value only, so every
    count moves by at most one when a row is replaced: the score has sensitivity 1."""
    radii = np.asarray(radii, dtype=np.float64)
    n = int(sorted_values.size)
    if side > 0:  # (x - c)_+ < r  <=>  x < c + r (r > 0); never for r = 0
        below = np.where(radii > 0, np.searchsorted(sorted_values, centre + radii, side="left"), 0)
        at_or_below = np.searchsorted(sorted_values, centre + radii, side="right")
    else:  # (c - x)_+ < r  <=>  x > c - r (r > 0); <= r  <=>  x >= c - r
        below = np.where(radii > 0, n - np.searchsorted(sorted_values, centre - radii, side="right"), 0)
        at_or_below = n - np.searchsorted(sorted_values, centre - radii, side="left")
    return below, at_or_below, n


def off_centre_counts(sorted_values: np.ndarray, centre: float, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`spread_counts` of the rows *off* the centre only: ``(#{0 < |x - c| < r},
    #{0 < |x - c| <= r}, #{x != c})`` at radii r > 0 (``centre`` released, public).

    The spread is then a quantile of the distances of the rows that are not at the centre,
    so a column with more than half its rows at one value (zeros) keeps a spread of the
    others: it never collapses on ties. The score :func:`scores_from_counts` at level r
    keeps sensitivity 1: replacing one row moves each count, and the count N of rows off
    the centre, by at most one, and ``below - r N`` and ``r N - at_or_below`` by at most
    ``max(1, r, 1 - r) = 1`` (a row leaving the centre for a distance below a radius moves
    a count and N together: ``1 - r``; for one above it: ``r``). Checked on the draw's
    output law for every replace-one pair of small columns (tests/test_preprocessing.py)."""
    below, at_or_below, n = spread_counts(sorted_values, centre, radii)
    ties = int(np.searchsorted(sorted_values, centre, side="right") - np.searchsorted(sorted_values, centre, side="left"))
    return np.asarray(below) - ties, np.asarray(at_or_below) - ties, n - ties


def rank_error(epsilon: float, grid_size: int, failure: float = 0.1) -> float:
    """The exponential mechanism's utility bound (McSherry and Talwar 2007, Theorem 6 as
    stated by Dwork and Roth 2014, Theorem 3.11): with probability at least ``1 - failure``
    the draw's score is within ``2 (ln m + ln(1/failure)) / epsilon`` of the best of the m
    candidates (sensitivity 1): the rank error, in rows, of one private quantile. Public
    inputs only."""
    return 2.0 * (math.log(grid_size) + math.log(1.0 / failure)) / float(epsilon)


LEVEL_MIN = 0.01  # the most extreme quantile level a range end is drawn at
LEVEL_MAX = 0.25  # the least extreme (the quartiles): at smaller budgets a range is noise
LEVEL_TARGET = 0.01  # the level a range is widened to cover (see :func:`widening`)
LEVEL_MARGIN = 1.5  # rows of rank margin per row of utility-bound error
LEVEL_SWITCH = 0.15  # above this level a regression target's asymmetric range gives way to the centre and
# spread (0.1 until the reaches ended on the centre grid's candidates; 0.15 measured better on the suite's
# 27 regression tables at epsilon 0.1 to 4, raw and declared; 0.2 and 0.25 lost: docs/results.md)


def range_level(n: int, epsilon: float, grid_size: int) -> float:
    """The quantile level q of a range's ends, from public inputs only: the smallest level
    whose rank margin ``q n`` exceeds :data:`LEVEL_MARGIN` times the draw's rank error
    (:func:`rank_error`), within ``[LEVEL_MIN, LEVEL_MAX]``. A candidate beyond the data
    scores ``-q n``; below that margin the many candidates outside the data take the draw
    (the failure of fixed extreme levels at small budgets, docs/your-data.md). Large n or
    epsilon: the 1% and 99% quantiles; small: towards the quartiles."""
    if n <= 0:
        return LEVEL_MAX
    return float(min(LEVEL_MAX, max(LEVEL_MIN, LEVEL_MARGIN * rank_error(epsilon, grid_size) / float(n))))


def widening(level: float, target: float = LEVEL_TARGET) -> float:
    """The factor by which a range between the ``level`` and ``1 - level`` quantiles is
    widened about its middle to cover the ``target`` and ``1 - target`` quantiles of a
    normal column: ``z(1 - target) / z(1 - level)`` (1 at the target level; 3.45 for the
    quartiles). Public."""
    from statistics import NormalDist

    if level <= target:
        return 1.0
    z = NormalDist().inv_cdf
    return float(z(1.0 - target) / z(1.0 - level))


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


def select_quantile(counts, q: float, candidates, epsilon: float, rng=None, log_prior=None,
                    grouped: bool = False) -> float:
    """The draw of :func:`private_quantile` from counts already taken (``rank_counts``,
    summed over the chunks of a Dask column). ``log_prior``: a public base measure
    (McSherry and Talwar 2007), log-weights per candidate added to ``epsilon u / 2``: the
    draw stays epsilon-DP (the weights do not depend on the data).

    ``grouped``: the same law drawn in two steps, for long grids
    (:func:`centre_grid`): each run of adjacent candidates of equal weighted score is one
    outcome of weight ``(run length) x exp(epsilon u / 2)``, drawn by the exponential
    mechanism, then a candidate uniformly within the run (the exact integer sampler, or
    ``rng``). A candidate c of a run R is drawn with probability ``P(R) / |R|``, exactly
    its probability in one draw over all candidates: the output law, and so the guarantee,
    is that of the one draw; the sampler works on as many outcomes as there are runs
    (about the distinct values of the column in the grid's span, plus the grid points)."""
    grid = _check_grid(candidates)
    scores = scores_from_counts(*counts, float(q))
    if log_prior is not None:  # as a data-independent offset of the scores
        scores = scores + (2.0 * SENSITIVITY / float(epsilon)) * np.asarray(log_prior, dtype=np.float64)
    if not grouped:
        index = exponential_select(rng, scores, float(epsilon), SENSITIVITY, secure=rng is None)
        return float(grid[index])
    starts = np.concatenate([[0], np.flatnonzero(np.diff(scores) != 0) + 1])
    lengths = np.diff(np.concatenate([starts, [scores.size]]))
    # the run's weight is its length times a candidate's, exactly (not a log-length added to
    # the score: the secure sampler's rate is a little below epsilon / 2, so that would weigh
    # a run by its length to a power below 1, and the runs depend on the data)
    run = exponential_select(rng, scores[starts], float(epsilon), SENSITIVITY, secure=rng is None,
                             multiplicities=lengths)
    from ..privacy.exact_sampling import GeneratorSource, SecureRandom

    source = SecureRandom() if rng is None else GeneratorSource(rng)
    offset = int(source.integers(np.array([lengths[run]]))[0]) if lengths[run] > 1 else 0
    return float(grid[starts[run] + offset])
