"""Categorical columns: declared categories (free), or the frequent categories selected
privately, and public hash buckets for the levels not released by name; one-hot encoding.

**Hash buckets** (columns without a declared list; issue 30). A level not in the released
selection maps to one of B buckets of its column: bucket ``blake2b(text, key=HASH_KEY)
mod B`` of the text of its canonical label (:func:`hash_bucket`; :mod:`.cast`'s labels,
so ``1``, ``1.0`` and ``Decimal('1')`` are one label, and ``True`` is the text
``"True"``). The hash is fixed and keyed by a public constant, never Python's salted
``hash``, so a level lands in the same bucket in every process, in ``dperm predict``,
and when it is first seen at transform time. B is public: :func:`hash_buckets` of n
(public under replace-one) and the preprocessing's epsilon; 0 (no buckets) where the
model's noise would swamp them. Privacy: the map from a row's value to its bucket is a
fixed function of that value alone, computed without reading any other row: a *stable
transformation* of stability 1 (one replaced row changes one output row), so composing
it with the released selection and the model costs nothing and releases nothing; the
output's width (named levels plus B per column) and its feature names
(``column=<hash k of B>``) are functions of the released selection and public inputs.
The row bound is unchanged: each row holds one entry per column, in a named level's
column or in a bucket's, of value 1, or ``HASHED_WEIGHT`` (0.5, public) in a column with
buckets (such a column's entry is in every row; at 1 it diluted the numeric columns after
the row normalization). When the selection would keep nearly nothing (its threshold above
n/2, public inputs: :func:`names_levels`) it is skipped: the column is hashed only,
nothing is charged for it, and its share of epsilon goes to the other private columns
(:class:`~dperm.preprocessing.PrivatePreprocessor`: to the numeric ones).

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

**The selections.** Only the selected categories are released (sorted), never their counts; without a list
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

import hashlib
import math
import numbers
from decimal import Decimal

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted, validate_data

from ..privacy import events as ev
from ..privacy.exact_sampling import GeneratorSource, SecureRandom, discrete_laplace
from ._base import PrivateTransformerMixin, is_dask as _is_dask, transform_partitions
from .cast import MISSING, canonical_label, label_column
from .._warnings import user_stacklevel

__all__ = ["PrivateOneHotEncoder", "MISSING", "histogram_threshold", "noise_scale", "hash_bucket", "hash_buckets",
           "selection_threshold", "names_levels", "SELECTIONS"]

SELECTIONS = ("auto", "always", "never")

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


HASH_KEY = b"dperm.categorical.hash.v1"  # the fixed, public key of the bucket hash (never change it:
# a saved model's buckets would move)
MIN_BUCKETS, MAX_BUCKETS = 4, 16
HASHED_WEIGHT = 0.5  # the value of a column with buckets (named level or bucket) in its one-hot
# block: every row holds one such entry per column, which dilutes the numeric columns after
# the row normalization; measured on the real-tables suite (docs/results.md, "Hashed
# categories"): 0.5 against 1 and 0.3 (saratoga R^2 0.305 / 0.360 / 0.382, chile accuracy
# 0.744 / 0.765 / 0.780, titanic 0.786 / 0.773 / 0.718)


def _hash_text(label) -> str:
    """The text a canonical label (cast.py) is hashed as: an int or a float as its decimal
    text (``1``, ``1.0``, ``Decimal('1')`` are the label ``1``, hashed as ``"1"``; the
    command line's text ``"1"`` lands in the same bucket; an int beyond 2000 bits as its
    hex text), a string itself (``True`` is
    the label ``"True"``), a complex number its text; any other type only its type's name,
    so that no address or salted ``repr`` enters the hash (a non-integral ``Decimal`` or
    ``Fraction`` label hashes as its nearest float's text)."""
    if isinstance(label, str):
        return label
    if isinstance(label, bool):  # not produced by canonical_label; kept total
        return "True" if label else "False"
    if isinstance(label, int):
        # beyond 2000 bits (about 600 digits, under the smallest int-to-text digit limit
        # Python allows) the hex text, which has no limit: the same whatever the setting
        return repr(label) if label.bit_length() <= 2000 else hex(label)
    if isinstance(label, (float, complex)):
        return repr(label)
    if isinstance(label, (numbers.Real, Decimal)):  # a Decimal('2.5') or Fraction(5, 2) label: as 2.5
        try:
            return repr(float(label))
        except (ValueError, TypeError, OverflowError, ArithmeticError):
            pass
    return f"<{type(label).__name__}>"


def hash_bucket(value, buckets: int) -> int:
    """The bucket (0-based) of ``value`` among ``buckets``: BLAKE2b (8 bytes, the fixed key
    ``HASH_KEY``) of the UTF-8 text of its canonical label, little-endian, modulo
    ``buckets``. The same in every process and on every machine (never Python's salted
    ``hash``); a public map of the value alone."""
    text = _hash_text(canonical_label(value))
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, key=HASH_KEY).digest()
    return int.from_bytes(digest, "little") % int(buckets)


def hash_buckets(n: int, epsilon: float) -> int:
    """The public number of buckets of a column without a declared list, from n and the
    preprocessing's epsilon, by ``m = n epsilon``: none below 225 (the selection alone, as
    without buckets: the model's noise would swamp what buckets add), 4 up to 400, 8 up to
    1600, 16 above (``MIN_BUCKETS`` to ``MAX_BUCKETS``: the power of two at most
    ``sqrt(m) / 2.5``, none where that is below 6). At the pipeline's default share
    (``epsilon = 0.4`` of a total 1): none below 563 rows, 4 up to 1000, 8 up to 4000,
    16 above; at a total of 0.1: none below 5625 rows. Measured on the real-tables suite
    (docs/results.md, "Hashed categories"): each bucket is a column of the model, and
    below these sizes the extra columns cost the estimator more noise than they bring
    (at a total of 0.1, 4 buckets took wages1's R^2 from -0.005 to -0.34); above 16,
    ADULT's 8 text columns with 32 buckets each took the model from 46 to 302 columns
    and the fit 40% more time, for no accuracy."""
    m = max(int(n), 1) * max(float(epsilon), 0.0)
    if m < 225.0:
        return 0
    return MIN_BUCKETS if m < 400.0 else (8 if m < 1600.0 else MAX_BUCKETS)


def _bucket_codes(labels: np.ndarray, buckets: int) -> np.ndarray:
    """The bucket of each canonical label, each distinct label hashed once."""
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), use_na_sentinel=False)
    table = np.fromiter((hash_bucket(u, buckets) for u in uniques), dtype=np.int64, count=len(uniques))
    return table[codes]


def selection_threshold(t: int, delta: float) -> int:
    """The stability histogram's threshold at noise scale t and per-column delta: the
    smallest with release probability at most ``delta``, raised until the case "one
    category disappears, another grows" stays within ``e^(2/t)`` (module docstring)."""
    threshold = histogram_threshold(t, delta)
    while release_probability(t, threshold) > -math.expm1(-1.0 / t):
        threshold += 1
    return threshold


def names_levels(n: int, epsilon: float, delta: float, histograms: int, others: int = 0,
                 selection: str = "auto") -> bool:
    """Whether the columns without a declared list get a private selection of named
    levels (public inputs only: n, the encoder's epsilon and delta, its column counts).
    ``"auto"``: not when the threshold at an equal split over ``histograms + others``
    columns is above n/2: then only a level held by most rows could be named, one level a
    column at most, and the selection's budget buys nearly nothing (those columns are
    hashed only, and their budget goes to the rest). n/2 rather than n/4: measured on
    the real-tables suite (docs/results.md, "Hashed categories"), titanic's threshold of
    0.37 n names its sex and class levels (hashing only merged two classes), islr_wage's
    0.59 n would name one level in 4 of 6 columns and costs the numeric draws more."""
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    if histograms == 0 or selection == "always":
        return True
    if selection == "never":
        return False
    if not 0.0 < float(delta) < 1.0 or not float(epsilon) > 0:
        return True  # the encoder refuses these itself, with its message
    t = noise_scale(float(epsilon) / (histograms + others))
    return selection_threshold(t, float(delta) / histograms) <= n / 2.0


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
    hash_buckets : "auto", int >= 0, default="auto"
        Per column without a declared list, the number B of public buckets that a level
        not released by name maps to (:func:`hash_bucket`: a fixed hash of its canonical
        label, the same in every process; a level first seen at transform time goes to its
        bucket too). "auto": :func:`hash_buckets` of n and epsilon (0, or 4 to 32). 0: no
        buckets (such a level encodes as zeros). Columns with declared categories or candidates have no
        buckets (a value outside the list encodes as zeros).
    selection : {"auto", "always", "never"}, default="auto"
        Whether the columns without a declared list get the private selection of named
        levels (the stability histogram) before the buckets: "always"; "never" (hashed
        only, nothing charged for them); "auto": not when its threshold is above n/2
        (public inputs, :func:`names_levels`), and their share of epsilon then goes to the
        other privately selected columns. Without buckets (``hash_buckets=0``), "auto"
        always selects.
    accountant, random_state : as for :class:`~dperm.preprocessing.PrivateScaler`.

    Attributes
    ----------
    categories_ : list of arrays, the released categories per column.
    buckets_ : list of int, the public number of hash buckets per column (0: none).
    bucket_weight_ : float, the value a column with buckets writes (``HASHED_WEIGHT``,
        0.5; 1 in the other columns).
    row_norm_bound_ : float, ``sqrt(n_features)``: one entry of at most 1 per column (a
        named level or a bucket).
    event_, privacy_spent_ : the mechanism and its guarantee (None when nothing is charged).
    """

    def __init__(self, categories=None, *, candidates=None, min_frequency=0.001, max_categories=50,
                 hash_buckets="auto", selection="auto", epsilon=1.0, delta=0.0, accountant=None,
                 random_state=None):
        self.categories = categories
        self.candidates = candidates
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.hash_buckets = hash_buckets
        self.selection = selection
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

    def _buckets(self, n: int) -> int:
        """The public bucket count of a column without a list (before any charge)."""
        value = self.hash_buckets
        if isinstance(value, str) and value == "auto":
            return hash_buckets(n, float(self.epsilon))
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"hash_buckets must be 'auto' or an integer >= 0, got {value!r}")
        return int(value)

    def _plan(self, p: int, n: int):
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
        buckets = self._buckets(n)
        histograms = sum(m == "histogram" for m in modes)
        others = sum(m == "candidates" for m in modes)
        selection = self.selection if buckets else "always"  # without buckets, hashing only would encode nothing
        if histograms and not names_levels(n, float(self.epsilon), float(self.delta), histograms, others,
                                           selection):
            # hashed only: a public per-row map, nothing charged; the budget goes to the rest
            modes = ["hashed" if m == "histogram" else m for m in modes]
            histograms = 0
        self.buckets_ = [buckets if m in ("histogram", "hashed") else 0 for m in modes]
        self.bucket_weight_ = HASHED_WEIGHT
        private = histograms + others
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
            threshold = selection_threshold(t, delta / histograms)
            parts += [ev.ApproximateDpRelease(2.0 / t, release_probability(t, threshold))] * histograms
        parts += [ev.DiscreteLaplaceRelease(scale=t, sensitivity=2)] * others
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
        declared, candidates, modes, event, t, threshold = self._plan(p, n)
        if threshold > n / 4.0 and not any(self.buckets_):
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
            if modes[j] == "hashed":  # no level named: every level goes to its bucket
                selected.append(np.asarray([], dtype=object))
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

    def _bucket_weight(self) -> float:
        """The public value of a column with buckets (``HASHED_WEIGHT`` unless a loaded
        model says otherwise)."""
        return float(getattr(self, "bucket_weight_", HASHED_WEIGHT))

    def _column_buckets(self) -> list:
        """The bucket count per column (0 for each column of a fit before buckets existed)."""
        return list(getattr(self, "buckets_", None) or [0] * len(self.categories_))

    def _one_hot(self, frame: pd.DataFrame) -> np.ndarray:
        """The one-hot block of a frame holding this encoder's columns in order: per column
        its named levels, then its buckets; a row's label sets its named level's column if
        it has one, else its bucket's (when the column has buckets), else nothing."""
        blocks = []
        for j, (cats, buckets) in enumerate(zip(self.categories_, self._column_buckets())):
            values = _column_values(frame.iloc[:, j])
            index = {canonical_label(c): i for i, c in enumerate(cats)}  # declared values matched by value
            codes = np.fromiter((index.get(v, -1) for v in values), dtype=np.int64, count=len(values))
            if buckets:
                rest = np.flatnonzero(codes < 0)
                if rest.size:
                    codes[rest] = len(cats) + _bucket_codes(values[rest], buckets)
            block = np.zeros((len(values), len(cats) + buckets))
            hit = codes >= 0
            block[np.flatnonzero(hit), codes[hit]] = self._bucket_weight() if buckets else 1.0
            blocks.append(block)
        return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))

    def get_feature_names_out(self, input_features=None):
        """``column=level`` per named level, then ``column=<hash k of B>`` (k from 1) per bucket."""
        check_is_fitted(self, "categories_")
        base = [f"x{j}" for j in range(self.n_features_in_)] if input_features is None else list(input_features)
        names = []
        for name, cats, buckets in zip(base, self.categories_, self._column_buckets()):
            names += [f"{name}={c}" for c in cats]
            names += [f"{name}=<hash {k + 1} of {buckets}>" for k in range(buckets)]
        return np.asarray(names, dtype=object)
