"""Numeric columns: declared bounds or a private centre and spread, scaling into [-1, 1],
clipping, and missing values (an indicator; the fill is the centre)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted, validate_data

from ..privacy import events as ev
from ..privacy.accountant import calibrate
from ..privacy.budget import PrivacyBudget
from .._validation import check_bounds_pair
from ._base import PrivateTransformerMixin, is_dask as _is_dask, transform_partitions
from .quantiles import (centre_grid, effective_size, excess_counts, log_grid, quantile_event, range_level, rank_counts,
                        rank_error, round_grid, select_quantile, spread_counts, widening, off_centre_counts,
                        LEVEL_SWITCH, plausible_centres, plausible_spreads)
from .._warnings import user_stacklevel

__all__ = ["PrivateScaler", "METHODS", "private_range"]

METHODS = ("auto", "range", "median")
BASE_MEASURES = ("plausible", "uniform")

REFINE_POINTS = 64  # candidates of the second, linear stage
# A regression target's spread takes a public base measure favouring shorter spreads (a
# spread drawn far above the target's makes every prediction wrong by its scale, one below
# only shrinks them towards the median): -TARGET_SPREAD_SPAN eps n nats over the whole grid
# (a quarter of the spread's margin eps (n / 2) / 2 when every row is off the centre), at
# most TARGET_SPREAD_CAP nats. The cap keeps a zero-inflated target's spread: with 80% of
# the rows at the centre the margin is a fifth of that, and an uncapped span pulled the
# spread below the data in 9 of 20 draws at epsilon 1 (doctorvisits; 1 of 20 capped, the
# draws at epsilon 0.1 unchanged on every table: docs/results.md, "Zero-inflated targets")
TARGET_SPREAD_SPAN = 0.125
TARGET_SPREAD_CAP = 8.0
REACH_PRIOR = 1.0  # log-weight lost per grid step (26%) of a range's reach: a decade costs e^-10


class _InMemoryColumns:
    """Rank counts of the columns of a NumPy matrix: each column sorted once, its three
    draws' counts read off the sorted values."""

    def __init__(self, X: np.ndarray):
        self.X = X
        self._sorted = (None, None)  # (j, the sorted column without its missing values)
        self._buffer = None  # one column's space, reused: a fresh copy per column is a new mapping (page faults)

    def _column(self, j: int) -> np.ndarray:
        if self._sorted[0] != j:
            if self._buffer is None:
                self._buffer = np.empty(self.X.shape[0], dtype=np.float64)
            column = self._buffer
            column[...] = self.X[:, j]  # a contiguous copy sorts 3x faster than the strided view
            column.sort()  # NaNs sort last, and searchsorted finds the first
            # (a view of the buffer: read only by the counts of column j, before the next column)
            self._sorted = (j, column[: np.searchsorted(column, np.nan, side="left")])
        return self._sorted[1]

    def counts(self, j: int, candidates: np.ndarray, centre: float | None = None, side: int = 0):
        return _counts(self._column(j), candidates, centre, side)


def _counts(values, candidates, centre, side=0):
    if centre is None:
        return rank_counts(values, candidates)
    return off_centre_counts(values, centre, candidates) if side == 0 else excess_counts(values, centre, candidates,
                                                                                         side)


def _missing_inf(X: np.ndarray) -> np.ndarray:
    """``X`` with +-inf as NaN, a missing value (docs/privacy.md, "Totality": a refusal would
    tell whether some row holds one); a copy only when X holds one."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(X)
    if np.isfinite(total) or not np.isinf(X).any():  # a finite sum: no inf, and no temporary of X's size
        return X
    return np.where(np.isinf(X), np.nan, X)


def _partition_counts(part, candidates, centre, side=0):
    values = part.to_numpy(dtype=np.float64, na_value=np.nan)
    values = np.sort(values[np.isfinite(values)])  # +-inf is missing, as in memory
    return _counts(values, candidates, centre, side)


class _DaskColumns:
    """Rank counts of the columns of a Dask DataFrame, chunk by chunk: each partition
    counts its own rows below every candidate and the counts add up (nothing but the
    summed counts reaches the client, and those feed the mechanism)."""

    def __init__(self, frame):
        self.frame = frame

    def counts(self, j: int, candidates: np.ndarray, centre: float | None = None, side: int = 0):
        import dask

        parts = self.frame.iloc[:, j].to_delayed()
        results = dask.compute(*[dask.delayed(_partition_counts)(p, candidates, centre, side) for p in parts])
        below = sum(r[0] for r in results)
        at_or_below = sum(r[1] for r in results)
        return below, at_or_below, sum(r[2] for r in results)


_check_pair = check_bounds_pair


def private_range(counts, grid: np.ndarray, radii: np.ndarray, level: float, epsilon: float,
                  rng, n: int | None = None, centre_prior: np.ndarray | None = None) -> tuple[float, float, float]:
    """The three draws of a column's private range (Smith 2011's quantile mechanism):

    1. its centre, the private median over ``grid`` (the most robust draw: a candidate
       beyond the data is n/2 rows from the best);
    2. its upper reach, the private ``1 - level`` quantile of ``(x - centre)_+`` over
       ``radii`` (0 and positive values), and
    3. its lower reach, the same of ``(centre - x)_+``
       (:func:`~dperm.preprocessing.quantiles.excess_counts`).

    The range ``[centre - lower reach, centre + upper reach]`` is asymmetric (a skewed
    column gets a skewed range), its ends are the ``level`` and ``1 - level`` quantiles of
    a column whose centre is its median, and a column that is mostly one value (zeros)
    gets an upper reach among the other rows: it never collapses on ties. The reaches are
    on a grid relative to the centre, so a column of values 227-278 gets a range of its
    own width whatever its distance from 0.

    ``counts(candidates, centre, side)`` returns the rank counts of the column (centre
    None) or of its one-sided distances. ``n`` (public) caps the reaches' base measure
    (:data:`REACH_PRIOR` per grid step at most) so that its span stays below half the
    exponent gap ``epsilon (1/2 - level) n / 2`` of the shortest reach. ``centre_prior``: the
    public base measure of the centre's candidates (:func:`~dperm.preprocessing.quantiles.
    centre_grid`); with it, the reaches' candidates are 0 and the positive centre
    candidates (their weights plus the per-step decay). Each draw is ``epsilon``-DP
    (sensitivity 1); the later ones read the centre's release only (adaptive composition).
    Returns ``(centre, lower reach, upper reach)``.
    """
    centre = select_quantile(counts(grid, None, 0), 0.5, grid, epsilon, rng, centre_prior, grouped=True)
    # a public base measure decaying per grid step: among reaches that cover the same rows
    # (the grid is coarser than the column's top rows), the shortest. Its whole span is kept
    # below half the exponent gap of the shortest reach, 0 (about (1/2 - q) n rows short:
    # epsilon (1/2 - q) n / 2), so it breaks ties above the data and does not pull the
    # draw below it (public inputs: epsilon, level, n, the grid)
    step = REACH_PRIOR if n is None else min(REACH_PRIOR, 0.25 * epsilon * (0.5 - level) * n / radii.size)
    if centre_prior is None:
        prior = -step * np.arange(radii.size)
        upper = select_quantile(counts(radii, centre, +1), 1.0 - level, radii, epsilon, rng, prior)
        lower = select_quantile(counts(radii, centre, -1), 1.0 - level, radii, epsilon, rng, prior)
        return centre, lower, upper
    # with the centre grid, each reach ends on one of its candidates, at that candidate's
    # weight (plus the per-step decay): a mass of rows at a round value (the zeros of hours
    # worked, beyond a centre of 1285) is then exactly a candidate's reach. On the coarse
    # reach grid no candidate held such a level quantile (every reach left about 0.13 n rows
    # on one side or the other) and the lower end was drawn anywhere down to -1.7e7
    # (docs/results.md, "A mass of rows beyond the centre")
    reaches = []
    for side in (+1, -1):
        side_counts, candidates, prior = _side_reaches(counts, grid, centre_prior, centre, side, radii, step)
        reaches.append(select_quantile(side_counts, 1.0 - level, candidates, epsilon, rng, prior, grouped=True))
    upper, lower = reaches
    return centre, lower, upper


def _side_reaches(counts, grid: np.ndarray, grid_prior: np.ndarray, centre: float, side: int,
                  coarse: np.ndarray, step: float):
    """(counts, reaches, log base measure) of one range end's draw: the reaches from the
    released ``centre`` to the centre grid's candidates on ``side`` of it (0 first,
    increasing), each at its end's public weight minus ``step`` per step of the ``coarse``
    reach grid; the coarse reaches themselves where the centre is the grid's last candidate on
    that side. Public inputs only (the grid, its weights, the released centre)."""
    ends = grid[grid >= centre] if side > 0 else grid[grid <= centre][::-1]
    weights = grid_prior[grid >= centre] if side > 0 else grid_prior[grid <= centre][::-1]
    reaches = side * (ends - centre)
    keep = np.concatenate([[True], np.diff(reaches) > 0])  # strictly increasing, whatever the rounding
    reaches, weights = reaches[keep], weights[keep]
    if reaches.size < 2:  # a centre at the grid's end: the coarse reaches (a function of the centre only)
        return counts(coarse, centre, side), coarse, -step * np.arange(coarse.size)
    prior = weights - step * np.searchsorted(coarse, reaches, side="left")
    return counts(reaches, centre, side), reaches, prior


def range_bounds(centre: float, lower: float, upper: float, level: float, floor: float) -> tuple[float, float]:
    """``(centre - lower * f, centre + upper * f)`` with f = :func:`~dperm.preprocessing.
    quantiles.widening` ``(level)`` (the level-quantile reaches widened to about 1% and 99%
    of a normal column), never across 0 from a non-negative centre whose lower reach does
    not cross it (a column the private draws show positive stays positive), and at least
    ``floor`` wide (both reaches 0: every row at the centre). Post-processing of released
    values."""
    factor = widening(level)
    low, high = centre - lower * factor, centre + upper * factor
    if centre >= 0.0 and centre - lower >= 0.0:
        low = max(low, 0.0)
    if centre <= 0.0 and centre + upper <= 0.0:
        high = min(high, 0.0)
    if not high - low >= floor:
        low, high = centre - floor, centre + floor
    return low, high


class PrivateScaler(PrivateTransformerMixin):
    """Scale numeric columns into [-1, 1] with declared or private ranges.

    Each column is mapped by ``clip((x - centre) / spread, -1, 1)``. Declared bounds
    ``(low, high)`` cost nothing (centre their middle, spread their half-width). A column
    without declared bounds gets, by the exponential mechanism over a declared candidate
    grid (Smith 2011; :mod:`dperm.preprocessing.quantiles`; default
    :func:`~dperm.preprocessing.quantiles.log_grid`: 0 and +-1e-4 .. +-1e9, so no range
    needs to be known; the centre's candidates add round values between its points at a
    small public weight, :func:`~dperm.preprocessing.quantiles.centre_grid`, so that a
    column of calendar years has candidates inside it):

    the centre and spread (``method="auto"`` with ``range_switch=0``, the default; or
    ``method="median"``): the private median, refined on a round grid with ``refine``
    under ``method="median"`` only, and ``spread_multiple`` times the private
    ``spread_quantile`` of ``|x - centre|`` over the rows *off* the centre
    (:func:`~dperm.preprocessing.quantiles.off_centre_counts`: a column that is mostly
    zeros keeps the spread of its other rows, it never collapses on ties): two draws a
    column (three with ``refine``); or

    the asymmetric range (``method="range"``, or ``"auto"`` when the rows allow ends at
    the ``range_switch`` level or beyond), three draws a column (:func:`private_range`):
    the median, then the upper and lower reaches, the private ``1 - q`` quantiles of
    ``(x - centre)_+`` and ``(centre - x)_+``, at a level q chosen from public inputs (n
    and the draw's epsilon, :func:`~dperm.preprocessing.quantiles.range_level`: 1% when
    the budget allows, up to 25%). A skewed column gets a skewed range, widened to about
    1% / 99% of a normal column when q is larger (:func:`~dperm.preprocessing.
    quantiles.widening`), never below 0 from a non-negative centre and lower end
    (:func:`range_bounds`).

    Central quantiles are far from the data's edges in rank, which is what makes the
    exponential mechanism accurate over a wide grid; extreme quantiles at a small budget
    are not (the many candidates beyond the data score within ``q n`` of the best and
    take the draw): hence the level from the utility bound, and the centre and spread
    (margins of n/2 rows) below it.

    Missing values (NaN) map to 0 (the centre); with ``missing_indicator`` a 0/1 column
    per input column marks them (appended after the scaled columns). An infinite value is
    a missing one, in ``fit`` (it counts for no candidate of the draws) and in
    ``transform``: never refused, since a refusal would tell whether some row holds one
    (docs/privacy.md, "Totality").

    Parameters
    ----------
    bounds : None, (low, high), or a sequence of (low, high) or None per column
        Declared public bounds (free); None: estimated privately.
    method : {"auto", "range", "median"}, default="auto"
        The private estimate of an undeclared column (above). "auto": "range" when its
        ends can be drawn at the ``range_switch`` quantile level or beyond
        (:func:`~dperm.preprocessing.quantiles.range_level`, public inputs), else
        "median" without ``refine`` (two draws whose margins are n/2 rows).
    range_switch : float in [0, 0.5), default=0.0
        (``method="auto"``.) 0: always the centre and spread (measured better for a
        linear model's features on ADULT, BANK and CreditCard, docs/results.md); a
        regression target's range uses :data:`~dperm.preprocessing.quantiles.LEVEL_SWITCH`
        (0.15): skew-aware where the rows allow.
    spread_quantile : float, default=0.5
        (``method="median"``.)
    spread_multiple : float, default=3.0
    candidates : array-like or None
        The declared grid of the median (strictly increasing); None: ``centre_grid()``
        (``log_grid()`` and round values between its points, at a small public weight).
        The spread's grid is the positive part of the declared grid (None: of ``log_grid()``).
    refine : bool, default=True
        (``method="median"``.) Refine the median on a linear grid (three draws per
        column instead of two).
    missing_indicator : bool, default=False
    base_measure : {"plausible", "uniform"}, default="plausible"
        The public base measure of the centre and spread draws (``method="median"``, the
        default grid). "plausible": the values real columns take weigh more
        (:func:`~dperm.preprocessing.quantiles.plausible_centres`: the centre 0 an atom,
        magnitudes 1e-2 to 1e4, negatives a tenth; :func:`~dperm.preprocessing.quantiles.
        plausible_spreads`: half near the centre's scale, half broad), so that a draw with
        a tiny budget (many columns per row), which follows its base measure, keeps a 0/1
        column or a count apart instead of landing anywhere in +-1e9; where the data can
        move the draw, the utility bound grows by a few nats at most (docs/results.md,
        "Numeric columns at small budgets"). "uniform": the grid's own weights (the earlier
        draws). Public either way: the draws stay epsilon_draw-DP.
    epsilon : float, default=1.0
        The whole transformer's budget, shared equally by its draws. Unused when
        everything is declared.
    delta : float, default=0.0
        0: each of the k draws gets ``epsilon / k`` (basic composition, pure epsilon-DP).
        > 0: each gets the largest epsilon at which the one accountant certifies the k
        draws within (epsilon, delta) (they are bounded-range, so they compose as zCDP:
        1.6 times ``epsilon / k`` for 18 draws at ``delta = 1e-6``, 3.6 times for 90).
    accountant : BudgetAccountant or None
        Charged with ``event_`` before the data is read (else the active accountant).
    random_state : None, int or Generator
        None: every draw by the exact sampler with operating-system bits (production);
        a seed: NumPy's reproducible Gumbel-max draws (experiments).

    Attributes
    ----------
    centre_, spread_ : ndarray of shape (n_features,)
        Declared values and private draws only.
    method_ : str, the method used ("range" or "median"; public inputs only).
    level_ : float or None, the range's quantile level q (public inputs only).
    bounds_ : ndarray of shape (n_features, 2), ``centre_ -+ spread_``.
    row_norm_bound_ : float
        Public bound on the L2 norm of an output row, ``sqrt(n_features + n_indicators)``.
    event_, privacy_spent_ : the mechanism (composed exponential-mechanism draws) and its
        guarantee (pure epsilon-DP; None when all is declared).

    Privacy
    -------
    Replace-one: each draw is ``epsilon_draw``-DP (k draws, a public count); the fit is
    epsilon-DP by basic composition (``delta = 0``), or (epsilon, delta)-DP as the one
    accountant certifies for the k draws (``delta > 0``). ``transform`` maps each
    row by itself with the released values: a post-processing.

    References
    ----------
    Smith, A. Privacy-preserving statistical estimation with optimal convergence rates.
    STOC 2011. McSherry, F., Talwar, K. Mechanism design via differential privacy. FOCS 2007.
    """

    def __init__(self, bounds=None, *, method="auto", range_switch=0.0, spread_quantile=0.5, spread_multiple=3.0,
                 candidates=None, refine=True, missing_indicator=False, base_measure="plausible", epsilon=1.0,
                 delta=0.0, accountant=None, random_state=None):
        self.bounds = bounds
        self.method = method
        self.range_switch = range_switch
        self.spread_quantile = spread_quantile
        self.spread_multiple = spread_multiple
        self.candidates = candidates
        self.refine = refine
        self.missing_indicator = missing_indicator
        self.base_measure = base_measure
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    _shorter_spreads = False  # set by dperm.preprocessing.target for a regression target

    # ---------------------------------------------------------------- public planning
    def _declared_bounds(self, p: int) -> list:
        b = self.bounds
        if b is None:
            return [None] * p
        if len(b) == 2 and all(isinstance(v, numbers.Real) for v in b):
            return [_check_pair(b, "bounds")] * p
        if len(b) != p:
            raise ValueError(f"bounds has {len(b)} entries but X has {p} columns")
        return [None if pair is None else _check_pair(pair, f"bounds of column {j}") for j, pair in enumerate(b)]

    def _grids(self):
        """(the centre's candidates, the spread's radii, the centre's public log base measure or
        None): :func:`~dperm.preprocessing.quantiles.centre_grid` and the positive part of
        :func:`~dperm.preprocessing.quantiles.log_grid` by default, else the declared grid
        (uniform) and its positive part."""
        if self.candidates is None:
            grid, prior = centre_grid()
            coarse = log_grid()
            return grid, coarse[coarse > 0], prior
        grid = np.asarray(self.candidates, dtype=np.float64)
        if grid.ndim != 1 or grid.size < 2 or not np.isfinite(grid).all() or np.any(np.diff(grid) <= 0):
            raise ValueError("candidates must be a 1-d, finite, strictly increasing grid of at least 2 values")
        radii = grid[grid > 0]
        if radii.size < 2:
            raise ValueError("candidates must hold at least two positive values (the spread's grid)")
        return grid, radii, None

    def _plan(self, n: int, declared, grid, radii):
        """The method, its event and the draws' epsilon, from public inputs only:
        ``method="auto"`` takes the asymmetric range when its ends can be drawn at the
        ``range_switch`` quantile level or beyond (:func:`~dperm.preprocessing.quantiles.
        range_level`: enough rows for the draw's budget), else the centre and spread in
        two draws (their margins are n/2 rows: the robust choice at small budgets)."""
        method, refine = self.method, bool(self.refine)
        if method == "auto":
            event, eps = self._event(declared, grid, radii, "range", refine)
            if eps > 0 and range_level(n, eps, radii.size + 1) <= float(self.range_switch):
                return "range", False, event, eps
            method, refine = "median", False
        return (method, refine) + self._event(declared, grid, radii, method, refine)

    def _event(self, declared, grid, radii, method, refine):
        per_column = 3 if (method == "range" or refine) else 2
        draws = per_column * sum(d is None for d in declared)
        if draws == 0:
            return ev.NoOpDpEvent(), 0.0
        def make_event(eps):
            parts = []
            for pair in declared:
                if pair is None and method == "range":
                    parts.extend([quantile_event(eps, grid), quantile_event(eps, radii.size + 1),
                                  quantile_event(eps, radii.size + 1)])
                elif pair is None:
                    parts.append(quantile_event(eps, grid))
                    if refine:
                        parts.append(quantile_event(eps, REFINE_POINTS))
                    parts.append(quantile_event(eps, radii))
            return ev.composed(parts)

        budget = PrivacyBudget(float(self.epsilon), float(self.delta))
        if budget.delta == 0 or draws == 1:  # basic composition, exact for pure DP
            eps = budget.epsilon / draws
            return make_event(eps), eps
        # with delta > 0 the one accountant composes the bounded-range draws (zCDP, PLD):
        # the largest per-draw epsilon it certifies within (epsilon, delta)
        calibration = calibrate(lambda v: make_event(1.0 / v), budget)
        eps = 1.0 / calibration.noise
        return calibration.event, eps

    # ---------------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Estimate (or take) centre and spread; charges its event before reading X."""
        self._check_budget()
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        switch = self.range_switch
        if isinstance(switch, bool) or not isinstance(switch, numbers.Real) or not 0.0 <= switch < 0.5:
            raise ValueError(f"range_switch must be a number in [0, 0.5), got {switch!r}")
        q = self.spread_quantile
        if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.0 < q < 1.0:
            raise ValueError(f"spread_quantile must be in (0, 1), got {q!r}")
        if self.base_measure not in BASE_MEASURES:
            raise ValueError(f"base_measure must be one of {BASE_MEASURES}, got {self.base_measure!r}")
        k = self.spread_multiple
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (math.isfinite(k) and k > 0):
            raise ValueError(f"spread_multiple must be a finite number > 0, got {k!r}")
        if _is_dask(X):
            columns = _DaskColumns(X)
            p = len(X.columns)
            if all(isinstance(c, str) for c in X.columns):
                self.feature_names_in_ = np.asarray(X.columns, dtype=object)
            n = int(X.shape[0].compute())  # public under replace-one
        else:
            # scikit-learn's checks (shape, dtype, sparse): before any charge; an infinite
            # value is a missing one (totality, _missing_inf), never refused
            X = _missing_inf(validate_data(self, X, dtype=np.float64, ensure_all_finite=False))
            columns = _InMemoryColumns(X)
            n, p = X.shape
        if n < 1 or p < 1:
            raise ValueError("X must have at least one row and one column")
        declared = self._declared_bounds(p)
        grid, radii, centre_prior = self._grids()
        method, refine, event, eps = self._plan(n, declared, grid, radii)
        self.method_ = method  # public: n, epsilon, the grids, the declared columns
        self._warn_if_noisy(n, eps, grid.size if centre_prior is None else effective_size(centre_prior), method)
        self._charge(event, float(self.delta))
        rng = self._rng()
        centre, spread = np.empty(p), np.empty(p)
        level = range_level(n, eps, radii.size + 1) if eps > 0 else None
        reaches = np.concatenate([[0.0], radii])
        self.level_ = level  # public: n, the draws' epsilon, the grid's size
        # the centre and spread's public base measure (plausible_centres / plausible_spreads):
        # a feature's draws at a tiny budget land at the scales real columns take; a regression
        # target's scaler (_shorter_spreads, dperm.preprocessing.target) keeps its own measure
        plausible = (self.base_measure == "plausible" and self.candidates is None and not self._shorter_spreads
                     and method == "median")
        median_prior = plausible_centres(grid, centre_prior) if plausible else centre_prior
        for j in range(p):
            if declared[j] is not None:
                low, high = declared[j]
                centre[j], spread[j] = 0.5 * (low + high), 0.5 * (high - low)
                continue
            if method == "range":
                # an all-missing column still takes its draws (flat scores): the count is public
                drawn = private_range(lambda cands, c, side, j=j: columns.counts(j, cands, centre=c, side=side),
                                      grid, reaches, level, eps, rng, n, centre_prior)
                low, high = range_bounds(*drawn, level, floor=float(radii[0]))
                centre[j], spread[j] = 0.5 * (low + high), 0.5 * (high - low)
                continue
            # an all-missing column still takes its draws (flat scores): the count is public
            c = select_quantile(columns.counts(j, grid), 0.5, grid, eps, rng, median_prior, grouped=True)
            if refine:
                i = int(np.searchsorted(grid, c))
                fine = round_grid(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)], REFINE_POINTS)
                c = select_quantile(columns.counts(j, fine), 0.5, fine, eps, rng)
            centre[j] = c
            # the spread among the rows off the centre (off_centre_counts): no collapse on ties
            prior = plausible_spreads(radii, c) if plausible else None
            if self._shorter_spreads:  # a public base measure favouring shorter spreads (targets)
                span = min(TARGET_SPREAD_SPAN * eps * n, TARGET_SPREAD_CAP)
                prior = -min(REACH_PRIOR, span / radii.size) * np.arange(radii.size)
            spread[j] = float(self.spread_multiple) * select_quantile(columns.counts(j, radii, centre=c), float(q),
                                                                      radii, eps, rng, prior)
        self.centre_, self.spread_ = centre, spread
        self.bounds_ = np.column_stack([centre - spread, centre + spread])
        self.n_features_in_ = p  # (validate_data set it for in-memory input; a Dask frame's columns)
        self.row_norm_bound_ = math.sqrt(p + (p if self.missing_indicator else 0))
        return self

    @staticmethod
    def _warn_if_noisy(n: int, eps: float, grid_size: float, method: str = "range") -> None:
        """Public inputs only. The exponential mechanism's utility theorem (McSherry and
        Talwar 2007): with probability >= 0.9 a draw is within ``2 (ln m + ln 10) / eps``
        rows of rank of the best candidate (:func:`~dperm.preprocessing.quantiles.
        rank_error`). Warn when that is more than a quarter of the rows: a range end drawn
        at the quartile (or the median) may then fall outside the data."""
        if eps <= 0:
            return
        error = rank_error(eps, grid_size)
        if error > n / 4.0:
            import warnings

            from ._base import PreprocessingNoiseWarning

            warnings.warn(
                f"private bounds at n={n} rows with epsilon={eps:.3g} per draw will be mostly noise (a draw's "
                f"rank error can reach {error:.0f} rows, more than n/4): declare bounds for the numeric columns, "
                "give the preprocessing a larger share of the budget, or use fewer columns", PreprocessingNoiseWarning,
                stacklevel=user_stacklevel())

    # ---------------------------------------------------------------------- transform
    def transform(self, X):
        """Rows mapped one by one with the released centre and spread (a post-processing)."""
        check_is_fitted(self, "centre_")
        if _is_dask(X):
            return transform_partitions(self, X)
        X = _missing_inf(validate_data(self, X, dtype=np.float64, ensure_all_finite=False, reset=False))
        p = X.shape[1]
        out = np.empty((X.shape[0], 2 * p if self.missing_indicator else p))
        missing = self._scale_into(X, out[:, :p])
        if self.missing_indicator:
            out[:, p:] = missing
        return out

    def _scale_into(self, X: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``clip((X - centre) / spread, -1, 1)`` written into ``out`` (missing -> 0, the
        centre); returns the missing-value mask. ``X`` is a validated float matrix."""
        # a huge finite value (1e308) may overflow to +-inf before the clip maps it to the
        # bound: silenced, since a warning shown for one table only would tell a row apart
        with np.errstate(over="ignore"):
            np.subtract(X, self.centre_, out=out)  # NaN stays NaN until it maps to 0
            out /= self.spread_
        np.clip(out, -1.0, 1.0, out=out)
        missing = np.isnan(out)
        out[missing] = 0.0
        return missing

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "centre_")
        names = [f"x{j}" for j in range(self.n_features_in_)] if input_features is None else list(input_features)
        if self.missing_indicator:
            names = names + [f"{name}_missing" for name in names]
        return np.asarray(names, dtype=object)
