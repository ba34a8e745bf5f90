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
from .categorical import PrivateOneHotEncoder
from .numeric import PrivateScaler

__all__ = ["PrivatePreprocessor", "ROW_NORMS"]

ROW_NORMS = ("normalize", "scale", "none")


def _is_numeric(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


class PrivatePreprocessor(PrivateTransformerMixin):
    """Private preprocessing of a raw table (pandas DataFrame or NumPy array).

    Column types are the table's *schema* and are treated as public: numeric dtypes go to
    a :class:`PrivateScaler`, the others (object, string, category, bool) to a
    :class:`PrivateOneHotEncoder`, unless ``numeric`` / ``categorical`` name the columns.
    A NumPy array of numbers is all numeric. (Declare the dtypes when they could reveal
    something, e.g. an integer column that pandas read as float because of a missing
    value.)

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
        Declared column roles; None: from the dtypes. Other columns are dropped.
    bounds : dict column -> (low, high), optional
        Declared numeric bounds (free); the other numeric columns are estimated privately.
    categories : dict column -> list, optional
        Declared categories (free).
    candidates : dict column -> list, optional
        Declared candidate lists (pure selection) for categorical columns.
    spread_quantile, spread_multiple, refine : passed to :class:`PrivateScaler`.
    missing_indicator : "auto", bool, default="auto"
        "auto": an indicator for every numeric column of a DataFrame, whatever its dtype
        (a choice by dtype would follow the data: ``pd.read_csv`` reads an integer column
        with one missing value as float, so one row would add a column to the model);
        none for a NumPy array (NaN maps to the centre).
    min_frequency, max_categories : passed to :class:`PrivateOneHotEncoder`.
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

    def __init__(self, *, numeric=None, categorical=None, bounds=None, categories=None, candidates=None,
                 spread_quantile=0.5, spread_multiple=3.0, refine=True, missing_indicator="auto", min_frequency=0.001, max_categories=50, categorical_weight=1.0,
                 row_norm="normalize",
                 epsilon=1.0, delta=0.0, accountant=None, random_state=None):
        self.numeric = numeric
        self.categorical = categorical
        self.bounds = bounds
        self.categories = categories
        self.candidates = candidates
        self.spread_quantile = spread_quantile
        self.spread_multiple = spread_multiple
        self.refine = refine
        self.missing_indicator = missing_indicator
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.categorical_weight = categorical_weight
        self.row_norm = row_norm
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
        if isinstance(X, pd.DataFrame):
            return X
        from ..distributed import is_dask_collection

        if is_dask_collection(X):
            if not hasattr(X, "dtypes") or not hasattr(X, "map_partitions"):
                raise TypeError("PrivatePreprocessor takes a Dask DataFrame (not a Dask array: its columns have no "
                                "types); or a pandas DataFrame or a NumPy array")
            return X  # its statistics are counted chunk by chunk by the blocks
        array = check_array(X, dtype=None, ensure_all_finite="allow-nan", ensure_min_samples=1)
        return pd.DataFrame(array)

    def _is_numeric_array(self, X) -> bool:
        """A NumPy array of numbers with no declared roles: all numeric, kept an array (no
        DataFrame copy of a large matrix)."""
        return (isinstance(X, np.ndarray) and X.dtype.kind in "fiub" and self.numeric is None
                and self.categorical is None)

    @staticmethod
    def _check_numeric_array(X) -> np.ndarray:
        return check_array(X, dtype=np.float64, ensure_all_finite="allow-nan", ensure_min_samples=1)

    def _roles(self, frame):
        if isinstance(frame, np.ndarray):
            if self.bounds and any(not isinstance(c, (int, np.integer)) or not 0 <= c < frame.shape[1]
                                   for c in self.bounds):
                raise ValueError("bounds of a NumPy array are keyed by column index")
            return list(range(frame.shape[1])), []
        columns = list(frame.columns)
        if self.numeric is None and self.categorical is None:
            numeric = [c for c in columns if _is_numeric(frame[c].dtype)]
            categorical = [c for c in columns if c not in numeric]
        else:
            numeric = list(self.numeric or [])
            categorical = list(self.categorical or [])
            unknown = [c for c in numeric + categorical if c not in columns]
            if unknown:
                raise ValueError(f"columns not in X: {unknown}")
            if set(numeric) & set(categorical):
                raise ValueError("a column cannot be both numeric and categorical")
        for mapping, name, role in ((self.bounds, "bounds", numeric), (self.categories, "categories", categorical),
                                    (self.candidates, "candidates", categorical)):
            extra = [c for c in (mapping or {}) if c not in role]
            if extra:
                raise ValueError(f"{name} names columns that are not {('numeric' if name == 'bounds' else 'categorical')}"
                                 f" columns of X: {extra}")
        return numeric, categorical

    def _indicator(self, frame: pd.DataFrame, numeric) -> bool | list:
        if self.missing_indicator == "auto":
            if not self._was_frame:
                return False
            return [True] * len(numeric)  # not by dtype: that can rest on one row (read_csv)
        return bool(self.missing_indicator)

    # ----------------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Fit both blocks, each charging its event before it reads its columns."""
        self._check_budget()
        if self.row_norm not in ROW_NORMS:
            raise ValueError(f"row_norm must be one of {ROW_NORMS}, got {self.row_norm!r}")
        from ..distributed import is_dask_collection

        self._was_frame = isinstance(X, pd.DataFrame) or is_dask_collection(X)
        self._numeric_array = self._is_numeric_array(X)
        frame = X = self._check_numeric_array(X) if self._numeric_array else self._frame(X)
        numeric, categorical = self._roles(frame)
        if not numeric and not categorical:
            raise ValueError("X has 0 feature(s) (shape=(n, 0)) while a minimum of 1 is required: no column to "
                             "preprocess")
        bounds, cats, cands = self.bounds or {}, self.categories or {}, self.candidates or {}
        private_numeric = sum(c not in bounds for c in numeric)
        private_categorical = sum(c not in cats for c in categorical)
        weight = self.categorical_weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.integer, np.floating)) or not (
                math.isfinite(weight) and weight > 0):
            # before any charge: a weight <= 0 gave the scaler more than the whole epsilon
            # (units below its column count) and failed in the encoder after the scaler's charge
            raise ValueError(f"categorical_weight must be a finite number > 0, got {weight!r}")
        weight = float(weight)
        units = private_numeric + weight * private_categorical
        # delta: to the category selection without lists (it needs it) and to the numeric
        # draws (their composition uses it), halved when both are private
        histograms = sum(c not in cats and c not in cands for c in categorical)
        delta_numeric = float(self.delta) / (2 if histograms else 1) if private_numeric else 0.0
        delta_categorical = float(self.delta) - delta_numeric
        if histograms and not 0.0 < delta_categorical < 1.0:  # before the scaler charges anything
            raise ValueError(
                "selecting categories without a declared list (the stability histogram) needs delta > 0; "
                "declare the categories or candidates of every categorical column, or give delta")
        seed = self.random_state
        if isinstance(seed, np.random.Generator):  # two blocks draw from one stream, in order
            seeds = (seed, seed)
        elif seed is None:
            seeds = (None, None)
        else:
            spawned = np.random.SeedSequence(int(seed)).spawn(2)
            seeds = tuple(np.random.default_rng(s) for s in spawned)
        self.scaler_ = self.encoder_ = None
        events = []
        indicator = False if self._numeric_array else self._indicator(frame, numeric)
        self.missing_columns_ = [c for c, flag in zip(numeric, indicator if isinstance(indicator, list)
                                                      else [indicator] * len(numeric)) if flag]
        if numeric:
            self.scaler_ = PrivateScaler(
                [bounds.get(c) for c in numeric], spread_quantile=self.spread_quantile,
                spread_multiple=self.spread_multiple, refine=self.refine,
                missing_indicator=False, delta=delta_numeric,
                epsilon=self.epsilon * private_numeric / units if private_numeric else self.epsilon, accountant=self.accountant,
                random_state=seeds[0]).fit(frame if self._numeric_array else frame[numeric])
            events.append(self.scaler_.event_)
        if categorical:
            self.encoder_ = PrivateOneHotEncoder(
                [cats.get(c) for c in categorical], candidates=[cands.get(c) for c in categorical],
                min_frequency=self.min_frequency, max_categories=self.max_categories,
                epsilon=self.epsilon * weight * private_categorical / units if private_categorical else self.epsilon,
                delta=delta_categorical,
                accountant=self.accountant, random_state=seeds[1]).fit(frame[categorical])
            events.append(self.encoder_.event_)
        self.numeric_, self.categorical_ = numeric, categorical
        self.event_ = ev.composed(events)
        # each block certified its own (epsilon, delta): basic composition of the two, or
        # the one accountant's composition at the same total delta if that is smaller
        parts = [b.privacy_spent_ for b in (self.scaler_, self.encoder_) if b is not None and b.privacy_spent_]
        self.privacy_spent_ = None
        if parts:
            total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
            joint = spent_of(self.event_, total.delta - sum(d for _, d in flatten(self.event_).approximate))
            self.privacy_spent_ = joint if joint.epsilon < total.epsilon else total
        self.n_features_in_ = frame.shape[1] if self._numeric_array else len(frame.columns)
        if self._was_frame:
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        self._set_row_bound()
        self.n_features_out_ = len(self.get_feature_names_out())
        return self

    # ----------------------------------------------------------------------- transform
    def transform(self, X):
        """Each row mapped by itself with the released values, then bounded."""
        check_is_fitted(self, "output_norm_")
        from ..distributed import is_dask_collection

        if is_dask_collection(X):
            frame = self._frame(X)
            names = list(self.get_feature_names_out())
            meta = pd.DataFrame({name: pd.Series(dtype=np.float64) for name in names})
            return frame.map_partitions(
                lambda part: pd.DataFrame(self.transform(part), index=part.index, columns=names), meta=meta)
        if self._numeric_array and self._is_numeric_array(X):
            return self._transform_numeric_array(self._check_numeric_array(X))
        frame = self._frame(X)
        if len(frame.columns) != self.n_features_in_:
            raise ValueError(f"X has {len(frame.columns)} features, but PrivatePreprocessor is expecting "
                             f"{self.n_features_in_} features as input")
        if self._was_frame and isinstance(X, pd.DataFrame):
            missing = [c for c in self.feature_names_in_ if c not in frame.columns]
            if missing:
                raise ValueError(f"X lacks the columns {missing}")
        blocks = []
        if self.scaler_ is not None:
            blocks.append(self.scaler_.transform(frame[self.numeric_]))
            if self.missing_columns_:
                blocks.append(frame[self.missing_columns_].isna().to_numpy(dtype=np.float64))
        if self.encoder_ is not None:
            blocks.append(self.encoder_.transform(frame[self.categorical_]))
        if self.row_norm == "normalize":
            blocks.append(np.ones((len(frame), 1)))
        out = blocks[0] if len(blocks) == 1 else np.hstack(blocks)
        if self.row_norm == "normalize":
            norms = np.sqrt(np.einsum("ij,ij->i", out, out))  # >= 1: the constant coordinate
            out /= norms[:, None]
        elif self.row_norm == "scale":
            out /= self._block_bound
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
        (declared or privately selected), the row bound and the output's feature names.
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
        categories = {}
        if self.encoder_ is not None:
            categories = {c: [v.item() if hasattr(v, "item") else v for v in cats]
                          for c, cats in zip(self.categorical_, self.encoder_.categories_)}
        return {"columns": [str(c) for c in self.feature_names_in_], "numeric": numeric,
                "missing_indicator": list(self.missing_columns_), "categories": categories,
                "row_norm": self.row_norm, "output_norm": float(self.output_norm_),
                "features_out": [str(c) for c in self.get_feature_names_out()]}

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
        except (KeyError, TypeError) as error:
            raise ValueError(f"not the released values of a PrivatePreprocessor ({error!r})") from None
        numeric = [c for c in columns if c in numeric_values]
        categorical = [c for c in columns if c in categories]
        if len(numeric) + len(categorical) != len(columns) or any(c not in numeric for c in missing):
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
