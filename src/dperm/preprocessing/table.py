"""A whole table: numeric and categorical columns chosen by their declared types, each
block made private, the rows bounded with a public norm handed to the estimator."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array, check_is_fitted

from ..privacy import events as ev
from ..privacy.accountant import flatten
from ._base import PrivateTransformerMixin, spent_of
from .cast import MISSING, canonical_label, label_column, match_declared, real_column, real_value
from .categorical import PrivateOneHotEncoder, hash_buckets as _hash_buckets, names_levels
from .numeric import BASE_MEASURES, PrivateScaler
from .schema import (ROLE_CAP, check_schema, dtype_role, release_roles, role_epsilon, role_event, role_scale,
                     statistics_of)
from .._warnings import user_stacklevel

__all__ = ["PrivatePreprocessor", "ROW_NORMS"]

ROW_NORMS = ("normalize", "scale", "none")


def _is_numeric(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


_TRANSFORM_BLOCK_ELEMENTS = 1 << 18  # 2 MB of float64 a block of rows (measured: 0.5 s against 1.2-2.5 s
# for column-wise writes into the row-major output at 1e6 x 100)


class PrivatePreprocessor(PrivateTransformerMixin):
    """Private preprocessing of a raw table (pandas DataFrame or NumPy array).

    Each column's role (numeric, categorical, dropped) is its *schema*
    (:mod:`dperm.preprocessing.schema`): declared (``numeric=`` or ``bounds=``,
    ``categorical=``, ``categories=`` or ``candidates=``, ``drop=``; declaring one column
    never changes another's role), or, for the undeclared columns, taken from the dtypes
    when ``schema="dtypes"`` declares them public, or else released privately (the
    default, ``schema="private"``: a noisy count per column, about ``40 / n`` of epsilon a
    column). A NumPy array of numbers is all numeric by its type. After the schema every
    map is total: a value that is not a finite number in a numeric column is missing, an
    unhashable or missing label in a categorical one is missing, and no value raises.

    The output is ``[scaled numeric | missing indicators | one-hot blocks]``; its rows are
    then bounded, by ``row_norm``:

    - ``"normalize"`` (default): a constant 1 is appended and each row is divided by its
      norm, as the shipped schemas do (:mod:`dperm.datasets.uci`): every row has norm 1;
    - ``"scale"``: every row is divided by the public bound ``B = sqrt(sum of the
      blocks' bounds squared)``: norm at most 1;
    - ``"none"``: rows as they are, norm at most B.

    ``output_norm_`` is that public bound; :func:`dperm.make_pipeline` hands it to the
    estimator's ``data_norm``. The measurement behind the default is in
    docs/your-data.md.

    Parameters
    ----------
    numeric, categorical : None or list of column names (or indices for arrays)
        Declared column roles (free); the other columns keep their own rule.
    drop : None or list of column names
        Columns left out of the model (free).
    schema : {"private", "dtypes"}, default="private"
        The roles of undeclared columns: released privately (charged, within this
        step's epsilon), or from the dtypes, which you thereby declare public (the
        guarantee then holds among tables of those dtypes only; docs/privacy.md,
        "Totality").
    bounds : dict column -> (low, high), optional
        Declared numeric bounds (free); the other numeric columns are estimated privately.
    categories : dict column -> list, optional
        Declared categories (free).
    candidates : dict column -> list, optional
        Declared candidate lists (pure selection) for categorical columns.
    spread_quantile, spread_multiple, refine, base_measure : passed to :class:`PrivateScaler`
        (``base_measure="plausible"``, the default: the draws' public base measure favours
        the values real columns take; "uniform": the earlier draws).
    missing_indicator : "auto", bool, default="auto"
        "auto": an indicator for every numeric column of a DataFrame, whatever its dtype
        (a choice by dtype would follow the data: ``pd.read_csv`` reads an integer column
        with one missing value as float, so one row would add a column to the model);
        none for a NumPy array (NaN maps to the centre).
    min_frequency, max_categories, hash_buckets, selection : passed to
        :class:`PrivateOneHotEncoder`. With the defaults, a categorical column without a
        declared list maps every level not released by name to one of B public hash
        buckets (B from n and epsilon: none, 4, 8 or 16), and when the private selection of named levels would
        keep nearly nothing (its threshold above n/2, public inputs) it is skipped: the
        column is hashed only and its share of epsilon goes to the numeric columns.
    categorical_weight : float > 0, default=1.0
        A privately selected categorical column's share of epsilon relative to a
        privately estimated numeric column's.
    row_norm : {"normalize", "scale", "none"}, default="normalize"
    epsilon : float, default=1.0
        Split between the scaler and the encoder in proportion to the number of
        privately estimated columns each has.
    delta : float, default=0.0
        For the categorical columns without any declared list (stability histogram, which
        needs it) and for the numeric draws (composed by the accountant: more epsilon per
        draw); halved between the two when both are private.
    accountant, random_state : as for :class:`PrivateScaler`.

    Attributes
    ----------
    numeric_, categorical_ : the column names (or indices) of each role.
    scaler_, encoder_ : the fitted blocks (None when a role has no column).
    output_norm_ : float, the public row-norm bound of ``transform``'s output.
    n_features_out_ : int.
    event_, privacy_spent_ : the composed event of the blocks and its guarantee.
    """

    def __init__(self, *, numeric=None, categorical=None, bounds=None, categories=None, candidates=None, drop=None,
                 schema="private",
                 spread_quantile=0.5, spread_multiple=3.0, refine=True, missing_indicator="auto", min_frequency=0.001, max_categories=50, hash_buckets="auto", selection="auto",
                 categorical_weight=1.0,
                 row_norm="normalize", base_measure="plausible",
                 epsilon=1.0, delta=0.0, accountant=None, random_state=None):
        self.numeric = numeric
        self.categorical = categorical
        self.bounds = bounds
        self.categories = categories
        self.candidates = candidates
        self.drop = drop
        self.schema = schema
        self.spread_quantile = spread_quantile
        self.spread_multiple = spread_multiple
        self.refine = refine
        self.missing_indicator = missing_indicator
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.hash_buckets = hash_buckets
        self.selection = selection
        self.categorical_weight = categorical_weight
        self.row_norm = row_norm
        self.base_measure = base_measure
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    # ------------------------------------------------------------------- the schema
    @staticmethod
    def _frame(X) -> pd.DataFrame:
        """A DataFrame (or Dask DataFrame) of X's columns, without reading a value: a
        NumPy array or a list of rows becomes a DataFrame of objects (a value of any type
        is mapped later, by the column's cast)."""
        if isinstance(X, pd.DataFrame):
            return X
        from ..distributed import is_dask_collection

        if is_dask_collection(X):
            if not hasattr(X, "dtypes") or not hasattr(X, "map_partitions"):
                raise TypeError("PrivatePreprocessor takes a Dask DataFrame (not a Dask array: its columns have no "
                                "types); or a pandas DataFrame or a NumPy array")
            return X  # its statistics are counted chunk by chunk by the blocks
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError("PrivatePreprocessor takes a pandas DataFrame or a dense array, not a sparse matrix")
        array = np.asarray(X) if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
        if array.dtype.kind == "c":  # the array's type (public), not a value
            raise ValueError("Complex data not supported: PrivatePreprocessor takes real numbers and categories")
        if array.ndim != 2:
            raise ValueError(f"X must be 2-D (rows, columns), got {array.ndim} dimension(s)"
                             + (" (reshape a single column with X.reshape(-1, 1))" if array.ndim == 1 else ""))
        if array.shape[0] < 1:
            raise ValueError("X has 0 rows; at least 1 is required")
        return pd.DataFrame(array)

    def _is_numeric_array(self, X) -> bool:
        """A NumPy array of numbers with no declared categorical column: all numeric by its
        type (no value of it can be text), kept an array (no DataFrame copy)."""
        return (isinstance(X, np.ndarray) and X.dtype.kind in "fiub" and not self.categorical
                and not self.categories and not self.candidates and not self.drop)

    @staticmethod
    def _check_numeric_array(X) -> np.ndarray:
        """The array as float64; infinite values become missing (NaN), as the numeric cast
        maps them: no value can make the fit fail."""
        X = check_array(X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=1)
        with np.errstate(invalid="ignore"):
            if not np.isfinite(np.sum(X)) and np.isinf(X).any():
                X = np.where(np.isinf(X), np.nan, X)
        return X

    def _declared_roles(self, columns: list):
        """(numeric, categorical, dropped) from the declarations alone (public): numeric
        from ``numeric`` and ``bounds``, categorical from ``categorical``, ``categories``
        and ``candidates``, dropped from ``drop``. Errors say what to write."""
        def names(value, what):
            if value is None:
                return []
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise ValueError(f"{what} must be a list of column names, e.g. {what}=[{value!r}]")
            return list(dict.fromkeys(value))

        numeric = names(self.numeric, "numeric")
        numeric += [c for c in (self.bounds or {}) if c not in numeric]
        categorical = names(self.categorical, "categorical")
        for mapping in (self.categories, self.candidates):
            categorical += [c for c in (mapping or {}) if c not in categorical]
        dropped = names(self.drop, "drop")
        known = set(columns)
        unknown = [c for c in numeric + categorical + dropped if c not in known]
        if unknown:
            raise ValueError(f"columns not in X: {unknown} (X's columns are {list(columns)[:20]})")
        both = [c for c in numeric if c in categorical]
        if both:
            raise ValueError(f"columns {both} are declared both numeric (numeric= or bounds=) and categorical "
                             "(categorical=, categories= or candidates=); declare each column once")
        kept = [c for c in dropped if c in numeric or c in categorical]
        if kept:
            raise ValueError(f"columns {kept} are declared dropped and given a role; remove them from drop= or "
                             "from the other declarations")
        both = [c for c in (self.categories or {}) if c in (self.candidates or {})]
        if both:
            raise ValueError(f"columns {both} have both categories= and candidates=; give one of them")
        return numeric, categorical, dropped

    def _check_against_dtypes(self, frame, numeric, categorical) -> None:
        """With ``schema="dtypes"`` the dtypes are public: a declaration that contradicts
        them is refused before any charge, saying what to write."""
        for c in numeric:
            dtype = frame[c].dtype
            if dtype_role(dtype) != "numeric":
                raise ValueError(
                    f"column {c!r} is declared numeric (numeric= or bounds=) but its dtype is {dtype}, which "
                    f"schema='dtypes' makes categorical; convert it first (X[{c!r}] = pd.to_numeric(X[{c!r}], "
                    "errors='coerce')), declare it categorical instead, or use schema='private'")
        for c in categorical:
            dtype = frame[c].dtype
            values = (self.categories or {}).get(c) or (self.candidates or {}).get(c) or []
            if pd.api.types.is_bool_dtype(dtype):
                bad = [v for v in values if canonical_label(v) not in ("True", "False")]
                if bad:
                    raise ValueError(f"column {c!r} is boolean (dtype {dtype}): write its categories as "
                                     "[True, False] (or 'True', 'False')")
            elif dtype_role(dtype) == "numeric" and not pd.api.types.is_datetime64_any_dtype(dtype):
                bad = [v for v in values if not isinstance(canonical_label(v), (int, float))
                       and np.isnan(real_value(v))]
                if bad:
                    raise ValueError(f"column {c!r} holds numbers (dtype {dtype}): write its categories as numbers, "
                                     f"e.g. categories={{{c!r}: [1, 2, 3]}}")

    def _roles(self, frame):
        """(numeric, categorical) where they are public (declared, or by dtype with
        ``schema="dtypes"``); undeclared columns under ``schema="private"`` are in
        neither list (their roles are released by the fit)."""
        if isinstance(frame, np.ndarray):
            if self.bounds and any(not isinstance(c, (int, np.integer)) or not 0 <= c < frame.shape[1]
                                   for c in self.bounds):
                raise ValueError("bounds of a NumPy array are keyed by column index")
            return list(range(frame.shape[1])), []
        columns = list(frame.columns)
        numeric, categorical, dropped = self._declared_roles(columns)
        undeclared = [c for c in columns if c not in numeric and c not in categorical and c not in dropped]
        if check_schema(self.schema) == "dtypes":
            self._check_against_dtypes(frame, numeric, categorical)
            numeric = numeric + [c for c in undeclared if dtype_role(frame[c].dtype) == "numeric"]
            categorical = categorical + [c for c in undeclared if dtype_role(frame[c].dtype) == "categorical"]
        elif getattr(self, "_typed_numeric", False):
            numeric = numeric + undeclared  # a NumPy array of numbers: numeric by its type
        order = {c: i for i, c in enumerate(columns)}
        return sorted(numeric, key=order.get), sorted(categorical, key=order.get)

    def _undeclared(self, frame) -> list:
        """The columns whose role the fit releases privately (schema="private")."""
        if isinstance(frame, np.ndarray):
            return []
        numeric, categorical = self._roles(frame)
        dropped = self._declared_roles(list(frame.columns))[2]
        return [c for c in frame.columns if c not in numeric and c not in categorical and c not in dropped]

    def _indicator(self, frame: pd.DataFrame, numeric) -> bool | list:
        if self.missing_indicator == "auto":
            if not self._was_frame:
                return False
            return [True] * len(numeric)  # not by dtype: that can rest on one row (read_csv)
        return bool(self.missing_indicator)

    def _declared_categories(self):
        """Declared categories and candidates as canonical labels (cast.py), each value
        once (two values equal as labels, 1 and 1.0, are refused before any charge)."""
        out = []
        for name, mapping in (("categories", self.categories), ("candidates", self.candidates)):
            canonical = {}
            for c, values in (mapping or {}).items():
                if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                    raise ValueError(f"the {name} of column {c!r} must be a list, e.g. {name}={{{c!r}: ['a', 'b']}}")
                labels = [canonical_label(v) for v in values]
                if not labels or any(label == MISSING for label in labels) and len(labels) == 1:
                    raise ValueError(f"the {name} of column {c!r} must be a non-empty list of values")
                if len(set(labels)) != len(labels):
                    raise ValueError(f"the {name} of column {c!r} list a value twice (or two equal values, e.g. 1 "
                                     "and 1.0, or True and 'True'); list each value once")
                canonical[c] = labels
            out.append(canonical)
        return out

    # ------------------------------------------------------------------- the casts
    def _cast(self, frame, numeric, categorical, declared):
        """(numeric block, categorical block): each value mapped into its column's domain
        by itself (cast.py): numbers as float64 (anything else missing), categories as
        canonical labels matched onto the declared ones. Never raises on a value."""
        from ..distributed import is_dask_collection

        if is_dask_collection(frame):
            num = cat = None
            if numeric:
                meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in numeric})
                num = frame[numeric].map_partitions(
                    lambda part: pd.DataFrame({c: real_column(part[c]) for c in numeric}, index=part.index),
                    meta=meta)
            if categorical:
                meta = pd.DataFrame({c: pd.Series(dtype=object) for c in categorical})
                cat = frame[categorical].map_partitions(
                    lambda part: self._label_frame(part, categorical, declared), meta=meta)
            return num, cat
        num = self._numeric_block(frame, numeric) if numeric else None
        cat = self._label_frame(frame, categorical, declared) if categorical else None
        return num, cat

    @staticmethod
    def _numeric_block(frame, numeric) -> pd.DataFrame:
        """The numeric columns cast (cast.real_column) into one column-major float64 matrix,
        wrapped as a DataFrame without a copy: each column is written once, contiguously,
        and pandas takes the matrix as its one block (a frame built from a dict of columns
        stacks them again: a second copy of the data)."""
        values = np.empty((len(frame), len(numeric)), dtype=np.float64, order="F")
        for j, c in enumerate(numeric):
            values[:, j] = real_column(frame[c])
        return pd.DataFrame(values, index=frame.index, columns=list(numeric), copy=False)

    @staticmethod
    def _label_frame(frame, categorical, declared) -> pd.DataFrame:
        columns = {}
        for c in categorical:
            labels = label_column(frame[c])
            if declared.get(c) is not None:
                labels = match_declared(labels, declared[c])
            columns[c] = labels
        return pd.DataFrame(columns, index=frame.index, dtype=object)

    # ----------------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Release the undeclared columns' roles (schema="private"), then fit both blocks,
        each charging its event before it reads its columns."""
        self._check_budget()
        if self.row_norm not in ROW_NORMS:
            raise ValueError(f"row_norm must be one of {ROW_NORMS}, got {self.row_norm!r}")
        if self.base_measure not in BASE_MEASURES:
            raise ValueError(f"base_measure must be one of {BASE_MEASURES}, got {self.base_measure!r}")
        check_schema(self.schema)
        from ..distributed import is_dask_collection

        self._was_frame = isinstance(X, pd.DataFrame) or is_dask_collection(X)
        self._numeric_array = self._is_numeric_array(X) and self.numeric is None
        self._typed_numeric = isinstance(X, np.ndarray) and X.dtype.kind in "fiub"
        frame = X = self._check_numeric_array(X) if self._numeric_array else self._frame(X)
        columns = getattr(frame, "columns", None)
        if columns is not None and pd.Index(columns).has_duplicates:  # the schema, public: before any charge
            repeated = sorted({str(c) for c in pd.Index(columns)[pd.Index(columns).duplicated()]})
            raise ValueError(f"X has repeated column names {repeated[:10]}: a column must be named once")
        numeric, categorical = self._roles(frame)
        undeclared = self._undeclared(frame)
        if not numeric and not categorical and not undeclared:
            raise ValueError("X has 0 feature(s) (shape=(n, 0)) while a minimum of 1 is required: no column to "
                             "preprocess")
        bounds = self.bounds or {}
        cats, cands = self._declared_categories()
        if self._was_frame and not isinstance(frame, np.ndarray):
            self._check_bounds_keys(bounds, numeric)
        weight = self.categorical_weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.integer, np.floating)) or not (
                math.isfinite(weight) and weight > 0):
            # before any charge: a weight <= 0 gave the scaler more than the whole epsilon
            # (units below its column count) and failed in the encoder after the scaler's charge
            raise ValueError(f"categorical_weight must be a finite number > 0, got {weight!r}")
        weight = float(weight)
        # delta: to the category selection without lists (it needs it) and to the numeric
        # draws (their composition uses it), halved when both may be private. Undeclared
        # columns may be released either way: decided before anything is charged.
        histograms = sum(c not in cats and c not in cands for c in categorical) + len(undeclared)
        may_numeric = sum(c not in bounds for c in numeric) + len(undeclared)
        delta_numeric = float(self.delta) / (2 if histograms else 1) if may_numeric else 0.0
        delta_categorical = float(self.delta) - delta_numeric
        if histograms and not 0.0 < delta_categorical < 1.0:  # before anything is charged
            if undeclared:
                raise ValueError(
                    f"the columns {undeclared[:10]} have no declared role, and one released categorical would need "
                    "delta > 0 to select its categories; give delta, declare their roles (numeric=[...], "
                    "categories={column: [...]}), or declare the dtypes public (schema='dtypes')")
            raise ValueError(
                "selecting categories without a declared list (the stability histogram) needs delta > 0; "
                "declare the categories or candidates of every categorical column, or give delta")
        seed = self.random_state
        if isinstance(seed, np.random.Generator):  # the blocks draw from one stream, in order
            seeds = (seed, seed, seed)
        elif seed is None:
            seeds = (None, None, None)
        else:
            spawned = np.random.SeedSequence(int(seed)).spawn(3 if undeclared else 2)
            seeds = tuple(np.random.default_rng(s) for s in spawned)
            if len(seeds) == 2:
                seeds = seeds + (None,)
        # the role release (schema="private"): charged before any value is read
        epsilon = float(self.epsilon)
        events = []
        self.role_scale_ = None
        if undeclared:
            n = int(frame.shape[0].compute()) if is_dask_collection(frame) else int(frame.shape[0])  # public
            t, capped = role_scale(n, len(undeclared), epsilon)
            if capped:
                import warnings

                from ._base import PreprocessingNoiseWarning

                warnings.warn(
                    f"at n={n} rows the private roles of {len(undeclared)} undeclared column(s) would cost more than "
                    f"{ROLE_CAP:g} of the preprocessing's epsilon, so their noise is larger and a column may get the "
                    "wrong role: declare the roles (numeric=[...], categorical=[...]) or the dtypes public "
                    "(schema='dtypes')", PreprocessingNoiseWarning, stacklevel=user_stacklevel())
            role_ev = role_event(t, len(undeclared))
            self._charge(role_ev)
            events.append(role_ev)
            epsilon -= role_epsilon(t, len(undeclared))
            released = release_roles(statistics_of(frame, undeclared), t,
                                     seeds[2] if seed is not None else None)
            self.role_scale_ = t
            order = {c: i for i, c in enumerate(frame.columns)}
            numeric = sorted(numeric + [c for c, r in zip(undeclared, released) if r == "numeric"], key=order.get)
            categorical = sorted(categorical + [c for c, r in zip(undeclared, released) if r == "categorical"],
                                 key=order.get)
        # a private feature selection's unkept columns (dperm.pipeline, a released set) are dropped
        # where their role is numeric; every role is public or released by now
        numeric = [c for c in numeric if c not in getattr(self, "_unselected", ())]
        private_numeric = sum(c not in bounds for c in numeric)
        private_categorical = sum(c not in cats for c in categorical)
        units = private_numeric + weight * private_categorical
        selection = self._selection(frame, categorical, cats, cands, epsilon * weight * private_categorical / units
                                    if private_categorical else epsilon, delta_categorical)
        if selection == "never":  # the hashed columns' share goes to the other private columns
            private_categorical = sum(c in cands for c in categorical)
            units = private_numeric + weight * private_categorical
            if private_numeric:  # and the selection's delta to the numeric draws: without it the
                # encoder is pure (candidates' counts; hashing is a public map, no charge)
                delta_numeric, delta_categorical = float(self.delta), 0.0
        self.scaler_ = self.encoder_ = None
        indicator = False if self._numeric_array else self._indicator(frame, numeric)
        self.missing_columns_ = [c for c, flag in zip(numeric, indicator if isinstance(indicator, list)
                                                      else [indicator] * len(numeric)) if flag]
        if self._numeric_array:
            num_block, cat_block = frame, None
        else:
            num_block, cat_block = self._cast(frame, numeric, categorical, cats)
        if numeric:
            self.scaler_ = PrivateScaler(
                [bounds.get(c) for c in numeric], spread_quantile=self.spread_quantile,
                spread_multiple=self.spread_multiple, refine=self.refine, base_measure=self.base_measure,
                missing_indicator=False, delta=delta_numeric,
                epsilon=epsilon * private_numeric / units if private_numeric else epsilon, accountant=self.accountant,
                random_state=seeds[0]).fit(num_block)
            events.append(self.scaler_.event_)
        if categorical:
            self.encoder_ = PrivateOneHotEncoder(
                [cats.get(c) for c in categorical], candidates=[cands.get(c) for c in categorical],
                min_frequency=self.min_frequency, max_categories=self.max_categories,
                hash_buckets=self._buckets(frame), selection=selection,
                epsilon=epsilon * weight * private_categorical / units if private_categorical else epsilon,
                delta=delta_categorical,
                accountant=self.accountant, random_state=seeds[1]).fit(cat_block)
            events.append(self.encoder_.event_)
        self.numeric_, self.categorical_ = numeric, categorical
        self.dropped_ = [] if isinstance(frame, np.ndarray) else [
            c for c in frame.columns if c not in numeric and c not in categorical]
        self.event_ = ev.composed(events)
        # each block certified its own (epsilon, delta): basic composition of the parts, or
        # the one accountant's composition at the same total delta if that is smaller
        # (the role release, pure epsilon-DP, is added by basic composition, as the one
        # accountant adds it (schema.role_event): the blocks' part is computed as before)
        blocks_event = ev.composed(events[1:] if undeclared else events)
        parts = [b.privacy_spent_ for b in (self.scaler_, self.encoder_) if b is not None and b.privacy_spent_]
        self.privacy_spent_ = None
        if parts:
            total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
            joint = spent_of(blocks_event, total.delta - sum(d for _, d in flatten(blocks_event).approximate))
            self.privacy_spent_ = joint if joint.epsilon < total.epsilon else total
        if undeclared:
            roles = spent_of(events[0])
            self.privacy_spent_ = roles if self.privacy_spent_ is None else roles + self.privacy_spent_
        self.n_features_in_ = frame.shape[1] if self._numeric_array else len(frame.columns)
        if self._was_frame:
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        else:
            self._columns_in = list(frame.columns) if not self._numeric_array else list(range(frame.shape[1]))
        self._categories_in = cats
        self._set_row_bound()
        self.n_features_out_ = len(self.get_feature_names_out())
        return self

    def _selection(self, frame, categorical, cats, cands, epsilon, delta) -> str:
        """"always" or "never": whether the categorical columns without a declared list get
        the private selection of named levels, decided once for all of them (they share
        one noise scale) from public inputs: n, their count, the encoder's nominal
        epsilon and delta, and the bucket rule (:func:`~dperm.preprocessing.categorical.
        names_levels`); the roles it reads are declared or already released."""
        from ..distributed import is_dask_collection

        histograms = sum(c not in cats and c not in cands for c in categorical)
        if not histograms:
            return "always"
        n = int(frame.shape[0].compute()) if is_dask_collection(frame) else int(frame.shape[0])  # public
        buckets = self._buckets(frame)
        if not buckets:  # hashing only would encode nothing (an invalid value: the encoder says so)
            return "always"
        others = sum(c in cands for c in categorical)
        return "always" if names_levels(n, epsilon, delta, histograms, others, self.selection) else "never"

    def _buckets(self, frame):
        """``hash_buckets``, with "auto" resolved from n and this step's whole epsilon
        (public; :func:`~dperm.preprocessing.categorical.hash_buckets`)."""
        from ..distributed import is_dask_collection

        buckets = self.hash_buckets
        if isinstance(buckets, str) and buckets == "auto":
            n = int(frame.shape[0].compute()) if is_dask_collection(frame) else int(frame.shape[0])  # public
            return _hash_buckets(n, float(self.epsilon))
        return buckets

    @staticmethod
    def _check_bounds_keys(bounds, numeric) -> None:
        extra = [c for c in bounds if c not in numeric]
        if extra:
            raise ValueError(f"bounds names columns that are not numeric columns of X: {extra}")

    # ----------------------------------------------------------------------- transform
    def _input_frame(self, X):
        """X's columns as fit saw them: a DataFrame by column name (extra columns are
        ignored), an array or a DataFrame without those names by position."""
        frame = self._frame(X)
        expected = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else list(
            getattr(self, "_columns_in", range(self.n_features_in_)))
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = [c for c in expected if c not in frame.columns]
            if not missing:
                return frame[expected]
            if any(c in frame.columns for c in expected) or len(frame.columns) != len(expected):
                raise ValueError(f"X lacks the columns {missing}")
        if len(frame.columns) != len(expected):
            raise ValueError(f"X has {len(frame.columns)} features, but PrivatePreprocessor is expecting "
                             f"{len(expected)} features as input")
        frame = frame.copy(deep=False)
        frame.columns = expected  # by position
        return frame

    def transform(self, X):
        """Each row mapped by itself with the released values (the same casts as fit:
        a value outside its column's domain is missing), then bounded. Takes what fit
        took, by column name or by position (``predict(X.values)`` after a fit on X)."""
        check_is_fitted(self, "output_norm_")
        from ..distributed import is_dask_collection

        if is_dask_collection(X):
            frame = self._frame(X)
            names = list(self.get_feature_names_out())
            meta = pd.DataFrame({name: pd.Series(dtype=np.float64) for name in names})
            return frame.map_partitions(
                lambda part: pd.DataFrame(self.transform(part), index=part.index, columns=names), meta=meta)
        if self._numeric_array and isinstance(X, np.ndarray) and X.dtype.kind in "fiub":
            return self._transform_numeric_array(self._check_numeric_array(X))
        frame = self._input_frame(X)
        declared = {c: list(cats) for c, cats in zip(self.categorical_, self.encoder_.categories_)} \
            if self.encoder_ is not None else {}
        cat = self._cast(frame, [], self.categorical_, declared)[1] if self.categorical_ else None
        # one output matrix, each block written into its columns in place (no hstack copy)
        n = len(frame)
        p = len(self.numeric_) if self.scaler_ is not None else 0
        missing = [self.numeric_.index(c) for c in self.missing_columns_] if self.scaler_ is not None else []
        one_hot = self.encoder_._one_hot(cat) if self.encoder_ is not None else np.zeros((n, 0))
        width = p + len(missing) + one_hot.shape[1] + (1 if self.row_norm == "normalize" else 0)
        out = np.empty((n, width))
        columns = [real_column(frame[c]) for c in self.numeric_] if self.scaler_ is not None else []
        # casts of fit (views where float64)
        # Every step a block of rows at a time, while the block is in cache: written (column by
        # column into the whole row-major matrix would be strided writes), flagged, scaled,
        # its one-hot columns copied, then bounded: one pass over the output, not three.
        # Each step is per row (a row's norm is its own sum), so the values are those of
        # whole-matrix steps.
        rows = max(1, _TRANSFORM_BLOCK_ELEMENTS // max(1, width))
        first = p + len(missing)
        for start in range(0, n, rows):
            part = out[start:start + rows]
            if columns:
                block = part[:, :p]
                for j, column in enumerate(columns):
                    block[:, j] = column[start:start + rows]
                if missing:
                    part[:, p:first] = np.isnan(block[:, missing])
                self.scaler_._scale_into(block, block)
            part[:, first:first + one_hot.shape[1]] = one_hot[start:start + rows]
            if self.row_norm == "normalize":
                part[:, -1] = 1.0
                norms = np.sqrt(np.einsum("ij,ij->i", part, part))  # >= 1: the constant coordinate
                part /= norms[:, None]
            elif self.row_norm == "scale":
                part /= self._block_bound
        return out

    def _transform_numeric_array(self, X: np.ndarray) -> np.ndarray:
        """The all-numeric array path: one output matrix, filled and bounded in place."""
        n, p = X.shape
        if p != self.n_features_in_:
            raise ValueError(f"X has {p} features, but PrivatePreprocessor is expecting {self.n_features_in_} "
                             "features as input")
        out = np.empty((n, p + 1 if self.row_norm == "normalize" else p))
        self.scaler_._scale_into(X, out[:, :p])
        if self.row_norm == "normalize":
            out[:, p] = 1.0
            out /= np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]  # >= 1: the constant coordinate
        elif self.row_norm == "scale":
            out /= self._block_bound
        return out

    # ------------------------------------------------------------ released values
    def released_values(self) -> dict:
        """What this fit released, as plain JSON-able values: the column roles (public
        schema), each numeric column's centre and spread (declared or private draws),
        the columns with a missing indicator, each categorical column's categories
        (declared or privately selected), ``hash_buckets`` and ``hash_weight`` (the public
        bucket count of each column that has buckets and the value such a column writes;
        absent when none has), the row bound and the output's feature names.
        Nothing else computed from the data (no counts, no per-column statistics beyond
        the draws). :meth:`from_released` rebuilds a transform-only preprocessor from it.
        Needs a fit on a DataFrame with string column names."""
        check_is_fitted(self, "output_norm_")
        if not self._was_frame or not all(isinstance(c, str) for c in self.numeric_ + self.categorical_):
            raise ValueError("released_values needs a fit on a DataFrame with string column names")
        numeric = {}
        if self.scaler_ is not None:
            numeric = {c: [float(m), float(s)] for c, m, s in zip(self.numeric_, self.scaler_.centre_,
                                                                    self.scaler_.spread_)}
        categories, buckets = {}, {}
        if self.encoder_ is not None:
            categories = {c: [v.item() if hasattr(v, "item") else v for v in cats]
                          for c, cats in zip(self.categorical_, self.encoder_.categories_)}
            buckets = {c: int(b) for c, b in zip(self.categorical_, self.encoder_._column_buckets()) if b}
        kept = [c for c in self.feature_names_in_ if c in self.numeric_ or c in self.categorical_]  # not drop=
        record = {"columns": [str(c) for c in kept], "numeric": numeric,
                  "missing_indicator": list(self.missing_columns_), "categories": categories,
                  "row_norm": self.row_norm, "output_norm": float(self.output_norm_),
                  "features_out": [str(c) for c in self.get_feature_names_out()]}
        if buckets:  # only when a column has buckets (a fit without them writes what it always did)
            record["hash_buckets"] = buckets
            record["hash_weight"] = self.encoder_._bucket_weight()
        return record

    @classmethod
    def from_released(cls, released: dict) -> "PrivatePreprocessor":
        """A fitted, transform-only PrivatePreprocessor from :meth:`released_values`'s
        dict: ``transform`` maps rows exactly as the original fit's did (a post-processing
        of the released values; nothing is charged)."""
        try:
            columns = [str(c) for c in released["columns"]]
            numeric_values = dict(released["numeric"])
            categories = dict(released["categories"])
            missing = [str(c) for c in released["missing_indicator"]]
            row_norm = str(released["row_norm"])
            buckets = {str(c): int(b) for c, b in dict(released.get("hash_buckets") or {}).items()}
            weight = float(released.get("hash_weight", 1.0))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not the released values of a PrivatePreprocessor ({error!r})") from None
        numeric = [c for c in columns if c in numeric_values]
        categorical = [c for c in columns if c in categories]
        if len(numeric) + len(categorical) != len(columns) or any(c not in numeric for c in missing) or any(
                c not in categorical or b < 0 for c, b in buckets.items()) or not 0.0 < weight <= 1.0:
            raise ValueError("the released values' columns do not match their numeric and categorical parts")
        self = cls(numeric=numeric, categorical=categorical, row_norm=row_norm,
                   missing_indicator=bool(missing))
        if row_norm not in ROW_NORMS:
            raise ValueError(f"row_norm must be one of {ROW_NORMS}, got {row_norm!r}")
        self.numeric_, self.categorical_, self.missing_columns_ = numeric, categorical, missing
        self.scaler_ = self.encoder_ = None
        if numeric:
            pairs = np.asarray([numeric_values[c] for c in numeric], dtype=np.float64).reshape(len(numeric), 2)
            if not np.isfinite(pairs).all() or np.any(pairs[:, 1] <= 0):
                raise ValueError("every numeric column needs a finite centre and a positive spread")
            scaler = PrivateScaler()
            scaler.centre_, scaler.spread_ = pairs[:, 0].copy(), pairs[:, 1].copy()
            scaler.bounds_ = np.column_stack([scaler.centre_ - scaler.spread_, scaler.centre_ + scaler.spread_])
            scaler.n_features_in_ = len(numeric)
            scaler.feature_names_in_ = np.asarray(numeric, dtype=object)
            scaler.row_norm_bound_ = math.sqrt(len(numeric))
            self.scaler_ = scaler
        if categorical:
            encoder = PrivateOneHotEncoder()
            encoder.categories_ = [np.asarray(list(categories[c]), dtype=object) for c in categorical]
            encoder.buckets_ = [buckets.get(c, 0) for c in categorical]  # a model.json before buckets: none
            encoder.bucket_weight_ = weight
            encoder.n_features_in_ = len(categorical)
            encoder.feature_names_in_ = np.asarray(categorical, dtype=object)
            encoder.row_norm_bound_ = math.sqrt(len(categorical))
            self.encoder_ = encoder
        self._was_frame, self._numeric_array = True, False
        self.n_features_in_ = len(columns)
        self.feature_names_in_ = np.asarray(columns, dtype=object)
        self._set_row_bound()
        return self

    def _set_row_bound(self) -> None:
        """The public row bound of the output, from the column counts only."""
        bound_sq = 0.0
        if self.scaler_ is not None:
            bound_sq += self.scaler_.row_norm_bound_ ** 2 + len(self.missing_columns_)
        if self.encoder_ is not None:
            bound_sq += self.encoder_.row_norm_bound_ ** 2
        self._block_bound = math.sqrt(bound_sq)
        self.output_norm_ = self._block_bound if self.row_norm == "none" else 1.0

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "output_norm_")
        names = []
        if self.scaler_ is not None:
            names += [str(c) for c in self.numeric_] + [f"{c}_missing" for c in self.missing_columns_]
        if self.encoder_ is not None:
            names += list(self.encoder_.get_feature_names_out([str(c) for c in self.categorical_]))
        if self.row_norm == "normalize":
            names.append("constant")
        return np.asarray(names, dtype=object)
