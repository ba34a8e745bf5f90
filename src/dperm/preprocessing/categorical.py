"""Categorical columns: declared categories (free), or the frequent categories selected
privately; one-hot encoding where a category outside the selection maps to zeros.

Two private selections, both on integer counts with exact discrete Laplace noise (the
geometric mechanism, Ghosh, Roughgarden, Sundararajan 2009; no floating-point attack):

- **over declared candidates** (``candidates``): noisy counts of every candidate, keep
  those whose noisy count reaches ``threshold``. Replace-one moves one row from one
  category to another: two counts change by one, an L1 change of 2, so noise of scale t
  (``P(k) ~ exp(-|k|/t)``) gives pure ``2/t``-DP (a
  :class:`~dperm.privacy.events.DiscreteLaplaceRelease` with sensitivity 2). The
  candidates must be distinct (a list with a value twice is refused before any charge:
  each copy would get its own noisy count of the same rows, and one replaced row would
  move k counts, a loss up to ``k/t + 1/t``).
- **with no list at all** (the stability-based histogram; Korolova, Kenthapadi, Mishra,
  Ntoulas 2009; Bun, Nissim, Stemmer 2016): noisy counts of the categories present,
  keep those reaching a threshold T. Replace-one changes two counts by one; a count that
  stays positive moves the release of its category by a factor at most ``e^(1/t)`` (the
  survival function of the noise satisfies ``P(N >= k) <= e^(1/t) P(N >= k + 1)``); a
  category that appears (count 0 -> 1) is released with probability
  ``P(1 + N >= T) = e^(-(T-1)/t) / (1 + e^(-1/t))`` and never on the other side. So the
  selection is ``(2/t, P(N >= T - 1))``-DP; T is the smallest threshold whose
  probability is at most the declared delta. Accounted as an
  :class:`~dperm.privacy.events.ApproximateDpRelease` (basic composition with the rest).
  ``tests/test_preprocessing.py`` checks both claims on the exact output distributions.

Only the selected categories are released (sorted), never their counts; without a list
each is labelled canonically (an integral number as an int: the counts merge 1, 1.0 and
True, and the label must not tell which of them the first row held). The cut to
``max_categories`` (the largest noisy counts) and the ``min_frequency`` floor (a higher
threshold) are post-processings of the release of the pairs (category, noisy count) above
the threshold, which has the same guarantee: where both neighbours hold the same
categories, the noisy count vector shifts by one in two coordinates (``e^(2/t)``); where a
category with one row disappears and another of positive count grows, the ratio is
``e^(1/t) / (1 - P(N >= T - 1))``, within ``e^(2/t)`` when that probability is at most
``1 - e^(-1/t)`` (the threshold is raised until it is); and a category that appears is released with
probability ``P(N >= T - 1)``, the delta. The cut breaks ties of noisy counts by a public
order of the categories (their sorted labels), never by the rows: an order of first
appearance is data, and with it one replaced row moved the cut's winner by a loss
well beyond ``2/t`` (``tests/test_review_privacy.py``).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted, validate_data

from ..privacy import events as ev
from ..privacy.exact_sampling import GeneratorSource, SecureRandom, discrete_laplace
from ._base import PrivateTransformerMixin, is_dask as _is_dask, transform_partitions
from .cast import MISSING, canonical_label, label_column
from .._warnings import user_stacklevel

__all__ = ["PrivateOneHotEncoder", "MISSING", "histogram_threshold", "noise_scale"]



def noise_scale(epsilon: float) -> int:
    """The integer scale t of the count noise for a selection of privacy epsilon:
    the smallest t with ``2 / t <= epsilon``."""
    return max(1, math.ceil(2.0 / float(epsilon) - 1e-12))


def release_probability(t: int, threshold: int) -> float:
    """``P(1 + N >= threshold)`` for N discrete Laplace of scale t: the delta of the
    stability histogram at that threshold."""
    m = threshold - 1
    if m <= 0:
        return 1.0
    return math.exp(-m / t) / (1.0 + math.exp(-1.0 / t))


def histogram_threshold(t: int, delta: float) -> int:
    """The smallest integer threshold T with ``P(1 + N >= T) <= delta``."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"the stability histogram needs 0 < delta < 1, got {delta}")
    m = max(1, math.ceil(t * math.log(1.0 / (delta * (1.0 + math.exp(-1.0 / t))))))
    while release_probability(t, m + 1) > delta:
        m += 1
    return m + 1


def _has_duplicates(values) -> bool:
    """Whether two entries of a declared list are equal as the counts see them (Python
    equality and hash: 1, 1.0 and True are one key of the counts)."""
    try:
        return len(set(values)) != len(values)
    except TypeError:  # unhashable entries: compared pairwise
        return any(a == b for i, a in enumerate(values) for b in values[i + 1:])


def _column_values(column) -> np.ndarray:
    """The column's canonical labels (cast.py): one label per class of equal values,
    missing (and unhashable) values as ``MISSING``; never raises."""
    return label_column(column)


def _category_counts(column, dask: bool) -> pd.Series:
    """Rows per value (missing values as ``MISSING``); a Dask column is counted chunk by
    chunk and the counts added (only the summed counts reach the mechanism)."""
    if not dask:
        return pd.Series(_column_values(column)).value_counts(sort=False)
    values = column.map_partitions(lambda part: pd.Series(_column_values(part), index=part.index, dtype=object),
                                   meta=(column.name, object))
    return values.value_counts().compute()


def _canonical(value):
    """One label per class of equal values, whatever representation the data held
    (:func:`dperm.preprocessing.cast.canonical_label`): the counts merge values equal in
    Python into one key named after the first row holding one of them, which is data."""
    return canonical_label(value)


def _sort_key(value):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            return ("", float(value))
        except OverflowError:  # an integer beyond the floats (10**400): beyond every float
            return ("", math.inf if value > 0 else -math.inf)
    return (type(value).__name__, str(value))


def _order_key(value):
    """A total order on the released labels that depends on the labels only (not on the
    rows): :func:`_sort_key`, then the label's repr (two large ints of one float)."""
    return (_sort_key(value), repr(value))


class PrivateOneHotEncoder(PrivateTransformerMixin):
    """One-hot encoding over declared categories or privately selected frequent ones.

    Per column: ``categories`` declared (free); else ``candidates`` declared (noisy
    counts over them, pure epsilon-DP); else the stability-based histogram over the
    values present ((epsilon, delta)-DP, needs ``delta > 0``). A value outside the
    selection encodes as all zeros; a missing value is the category ``MISSING``.

    Parameters
    ----------
    categories : None or a sequence (per column) of None or a list of categories
        Declared categories; None: selected privately.
    candidates : None or a sequence (per column) of None or a list
        Declared candidate lists for the pure selection (each value once: a list with two
        equal values is refused before any charge).
    min_frequency : float, default=0.001
        A post-processing: keep a category only if its noisy count is at least
        ``min_frequency * n`` (and, over candidates, at least ``3 t``, so that a
        candidate of count 0 is rarely kept).
    max_categories : int or None, default=50
        Keep at most this many per column (the largest noisy counts; a post-processing).
    epsilon : float, default=1.0
        Split equally among the privately selected columns.
    delta : float, default=0.0
        For the stability histogram, split equally among its columns.
    accountant, random_state : as for :class:`~dperm.preprocessing.PrivateScaler`.

    Attributes
    ----------
    categories_ : list of arrays, the released categories per column.
    row_norm_bound_ : float, ``sqrt(n_features)``: one 1 per column at most.
    event_, privacy_spent_ : the mechanism and its guarantee (None when all declared).
    """

    def __init__(self, categories=None, *, candidates=None, min_frequency=0.001, max_categories=50,
                 epsilon=1.0, delta=0.0, accountant=None, random_state=None):
        self.categories = categories
        self.candidates = candidates
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def _per_column(self, value, p: int, name: str) -> list:
        if value is None:
            return [None] * p
        if len(value) != p:
            raise ValueError(f"{name} has {len(value)} entries but X has {p} columns")
        return [None if v is None else list(v) for v in value]

    def _plan(self, p: int):
        declared = self._per_column(self.categories, p, "categories")
        candidates = self._per_column(self.candidates, p, "candidates")
        for j, values in enumerate(candidates):
            if values is not None and _has_duplicates(values):
                # two equal candidates get two independent noisy counts of the same rows:
                # one replaced row would move more than the two counts the event charges for
                raise ValueError(f"the candidates of column {j} list a value twice (or two equal values, "
                                 "e.g. 1 and 1.0); list each candidate once")
        modes = ["declared" if d is not None else ("candidates" if c is not None else "histogram")
                 for d, c in zip(declared, candidates)]
        private = sum(m != "declared" for m in modes)
        histograms = sum(m == "histogram" for m in modes)
        if private == 0:
            return declared, candidates, modes, ev.NoOpDpEvent(), 0, 0
        t = noise_scale(float(self.epsilon) / private)
        parts, threshold = [], 0
        if histograms:
            delta = float(self.delta)
            if not 0.0 < delta < 1.0:
                raise ValueError(
                    "selecting categories without a declared list (the stability histogram) needs delta > 0; "
                    "declare the categories or candidates of every categorical column, or give delta")
            threshold = histogram_threshold(t, delta / histograms)
            # the case "one category disappears, another grows" costs e^(1/t) / (1 - p):
            # within e^(2/t) when p <= 1 - e^(-1/t) (module docstring)
            while release_probability(t, threshold) > -math.expm1(-1.0 / t):
                threshold += 1
            parts += [ev.ApproximateDpRelease(2.0 / t, release_probability(t, threshold))] * histograms
        parts += [ev.DiscreteLaplaceRelease(scale=t, sensitivity=2)] * (private - histograms)
        return declared, candidates, modes, ev.composed(parts), t, threshold

    def fit(self, X, y=None):
        """Select (or take) the categories; charges its event before reading X."""
        self._check_budget()
        dask = _is_dask(X)
        if dask:
            frame, n, p = X, int(X.shape[0].compute()), len(X.columns)  # n is public under replace-one
            if all(isinstance(c, str) for c in X.columns):
                self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        else:  # scikit-learn's checks (shape, sparse, complex): before any charge
            frame = pd.DataFrame(validate_data(self, X, dtype=None, ensure_all_finite=False))
            n, p = frame.shape
        if n < 1 or p < 1:
            raise ValueError("X must have at least one row and one column")
        declared, candidates, modes, event, t, threshold = self._plan(p)
        if threshold > n / 4.0:
            import warnings

            from ._base import PreprocessingNoiseWarning

            warnings.warn(
                f"at n={n} rows and this epsilon the category selection keeps only categories with more than about "
                f"{threshold} rows (more than n/4): declare the categories (or candidates), or give the "
                "preprocessing a larger share of the budget", PreprocessingNoiseWarning, stacklevel=user_stacklevel())
        self._charge(event)
        rng = self._rng()
        source = SecureRandom() if rng is None else GeneratorSource(rng)
        selected = []
        for j in range(p):
            if modes[j] == "declared":
                selected.append(np.asarray(declared[j], dtype=object))
                continue
            counts = _category_counts(frame.iloc[:, j], dask)
            if modes[j] == "candidates":
                names = list(candidates[j])
                true = np.array([int(counts.get(c, 0)) for c in names], dtype=np.int64)
                floor = max(3 * t, self.min_frequency * n)
            else:  # labelled canonically: not by whichever equal value (1, 1.0, True) came first
                names = [_canonical(v) for v in counts.index]
                true = counts.to_numpy(dtype=np.int64)
                # in a public order (the counts come in the order of the values' first rows):
                # the max_categories cut breaks ties of noisy counts by this order
                order = sorted(range(len(names)), key=lambda i: _order_key(names[i]))
                names, true = [names[i] for i in order], true[order]
                floor = max(threshold, self.min_frequency * n)
            noisy = true + discrete_laplace(source, t, len(names)) if names else np.zeros(0, dtype=np.int64)
            keep = np.flatnonzero(noisy >= floor)
            if self.max_categories is not None and keep.size > self.max_categories:
                keep = keep[np.argsort(-noisy[keep], kind="stable")[: int(self.max_categories)]]
            # release the set only: sorted, no counts, no order by frequency
            chosen = sorted((names[i] for i in keep), key=_order_key)
            selected.append(np.asarray(chosen, dtype=object))
        self.categories_ = selected
        self.n_features_in_ = p
        self.row_norm_bound_ = math.sqrt(p)
        return self

    def transform(self, X):
        """One-hot rows over the released categories (unknown values: zeros)."""
        check_is_fitted(self, "categories_")
        if _is_dask(X):
            return transform_partitions(self, X)
        frame = pd.DataFrame(validate_data(self, X, dtype=None, ensure_all_finite=False, reset=False))
        return self._one_hot(frame)

    def _one_hot(self, frame: pd.DataFrame) -> np.ndarray:
        """The one-hot block of a frame holding this encoder's columns in order."""
        blocks = []
        for j, cats in enumerate(self.categories_):
            values = _column_values(frame.iloc[:, j])
            index = {canonical_label(c): i for i, c in enumerate(cats)}  # declared values matched by value
            codes = np.fromiter((index.get(v, -1) for v in values), dtype=np.int64, count=len(values))
            block = np.zeros((len(values), len(cats)))
            hit = codes >= 0
            block[np.flatnonzero(hit), codes[hit]] = 1.0
            blocks.append(block)
        return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "categories_")
        base = [f"x{j}" for j in range(self.n_features_in_)] if input_features is None else list(input_features)
        return np.asarray([f"{name}={c}" for name, cats in zip(base, self.categories_) for c in cats], dtype=object)
