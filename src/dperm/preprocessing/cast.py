"""Total casts: every value of a column mapped into its role's domain, by itself.

Once a column's role is fixed (numeric or categorical, :mod:`dperm.preprocessing.schema`),
each value is mapped without reading any other row, and no value can raise: a value
outside the role's domain becomes missing. This is what makes a fit total on messy
tables (docs/privacy.md, "Totality"): nothing one row holds can make a fit fail, add or
drop a column, or appear in a message. The same idea as OpenDP's cast-and-impute
transformations (a cast whose failures map to a missing value, then an imputation).

- numeric: a finite real number (int, float, bool-free NumPy number, ``Decimal``,
  ``Fraction``, a complex with zero imaginary part, a string that Python's ``float``
  parses after stripping spaces) is kept; a date or time stamp becomes days since
  1970-01-01; everything else (text, ``inf``, ``10**400``, lists, bytes, ``True``) is
  missing (NaN);
- categorical: a canonical label per class of equal values: an integral real number is a
  Python ``int`` (``1``, ``1.0``, ``Decimal('1.0')``, ``Fraction(1)``, ``1+0j`` are one
  label), another finite real a ``float``, a boolean the text ``"True"`` / ``"False"``
  (as a CSV file writes it), a string itself; a missing value is
  :data:`~dperm.preprocessing.categorical.MISSING`, and so is a value that cannot be a
  label (unhashable: lists, dicts; NaN of any type).
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np
import pandas as pd

__all__ = ["MISSING", "real_value", "real_column", "role_statistic", "canonical_label", "label_column",
           "match_declared"]

MISSING = "<missing>"  # the category of a missing value (None, NaN); shared with categorical.py

_EPOCH = pd.Timestamp(0)
_DAY_NS = 86_400 * 10**9


def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (np.floating, np.datetime64, np.timedelta64)):
        return bool(np.isnat(value)) if not isinstance(value, np.floating) else bool(np.isnan(value))
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


def _days(value) -> float:
    try:
        stamp = pd.Timestamp(value)
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert(None)
        return (stamp - _EPOCH) / pd.Timedelta(days=1)
    except (ValueError, TypeError, OverflowError, pd.errors.OutOfBoundsDatetime):
        return math.nan


def real_value(value) -> float:
    """``value`` as a finite float, or NaN (missing, or outside the numeric domain).
    Never raises."""
    try:
        if isinstance(value, (bool, np.bool_)) or _is_missing(value):
            return math.nan
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return math.nan
            number = float(text)
        elif isinstance(value, (_dt.date, np.datetime64)):  # datetime is a date
            number = _days(value)
        elif isinstance(value, complex) or isinstance(value, np.complexfloating):
            number = float(value.real) if value.imag == 0 else math.nan
        elif isinstance(value, (numbers.Real, Decimal)):
            number = float(value)  # OverflowError for 10**400: caught below
        else:
            return math.nan
        return number if math.isfinite(number) else math.nan
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        return math.nan


def _is_datetime(dtype) -> bool:
    return pd.api.types.is_datetime64_any_dtype(dtype)


def real_column(column) -> np.ndarray:
    """A column (pandas Series, NumPy 1-D array) as float64, NaN where a value is missing
    or outside the numeric domain. A float64 column without infinite values is returned
    without a copy."""
    dtype = getattr(column, "dtype", None)
    if dtype is not None and _is_datetime(dtype):
        series = pd.Series(column)
        if getattr(series.dt, "tz", None) is not None:
            series = series.dt.tz_convert(None)
        stamps = series.astype("datetime64[ns]")
        out = ((stamps - _EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=np.float64, na_value=np.nan)
        return out
    if dtype is not None and not pd.api.types.is_bool_dtype(dtype) and (
            pd.api.types.is_float_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan) if isinstance(column, pd.Series) else \
            np.asarray(column, dtype=np.float64)
        if np.isinf(values).any():  # (one pass: NaN is not infinite; no masked copy of the column)
            values = np.where(np.isinf(values), np.nan, values)
        return values
    if dtype is not None and pd.api.types.is_bool_dtype(dtype):
        return np.full(len(column), np.nan)
    values = _objects(column)
    if len(values) > 64 and pd.api.types.infer_dtype(values, skipna=True) == "string":
        codes, uniques = pd.factorize(values, use_na_sentinel=True)  # each distinct text parsed once
        parsed = np.append(np.fromiter((real_value(v) for v in uniques), dtype=np.float64, count=len(uniques)),
                           np.nan)
        return parsed[codes]  # code -1 (missing) -> the appended NaN
    return np.fromiter((real_value(v) for v in values), dtype=np.float64, count=len(values))


def _numeric_dtype(dtype) -> bool:
    return dtype is not None and not pd.api.types.is_bool_dtype(dtype) and (
        pd.api.types.is_float_dtype(dtype) or pd.api.types.is_integer_dtype(dtype))


def _objects(column) -> np.ndarray:
    if isinstance(column, pd.Series):
        return column.to_numpy(dtype=object)  # (no na_value: pandas would test each value, and a
        # signalling Decimal NaN raises in that test)
    return np.asarray(column, dtype=object).ravel()


def role_statistic(column) -> int:
    """The schema's statistic of one column: the number of values that are finite numbers
    minus the number of present values that are not (missing values count for neither).
    Replace-one moves it by at most 2. The same value counts the same whatever the
    column's dtype (a neighbour's one value can change the dtype). Never raises."""
    dtype = getattr(column, "dtype", None)
    if dtype is not None and _is_datetime(dtype):
        return int(pd.Series(column).notna().sum())
    if _numeric_dtype(dtype):
        raw = column.to_numpy(dtype=np.float64, na_value=np.nan) if isinstance(column, pd.Series) else \
            np.asarray(column, dtype=np.float64)
        return int(np.count_nonzero(np.isfinite(raw))) - int(np.count_nonzero(np.isinf(raw)))
    if dtype is not None and pd.api.types.is_bool_dtype(dtype):
        return -int(pd.Series(column).notna().sum())
    finite = int(np.count_nonzero(~np.isnan(real_column(column))))
    present = sum(1 for v in _objects(column) if not _safe_missing(v))
    return finite - (present - finite)


def _safe_missing(value) -> bool:
    try:
        return _is_missing(value)
    except Exception:  # noqa: BLE001 - a value whose own methods fail is not missing
        return False


def canonical_label(value):
    """One label per class of equal values (module docstring); never raises."""
    try:
        if _is_missing(value):
            return MISSING
        if isinstance(value, (bool, np.bool_)):
            return "True" if value else "False"
        if isinstance(value, str):
            return str(value)
        if isinstance(value, (complex, np.complexfloating)):
            if value.imag != 0:
                return complex(value)
            value = value.real
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, Decimal) and not value.is_finite():
            return MISSING if value.is_nan() else float(value)
        if isinstance(value, (Fraction, Decimal)) and value == int(value):
            return int(value)  # exact, however large
        if isinstance(value, numbers.Real):
            number = float(value)
            if math.isnan(number):
                return MISSING
            return int(number) if number.is_integer() else number
        if isinstance(value, (np.datetime64, _dt.date)):
            return str(pd.Timestamp(value))
        hash(value)
        return value
    except Exception:  # noqa: BLE001 - unhashable, or a value whose methods fail: missing
        return MISSING


def label_column(column) -> np.ndarray:
    """A column as an object array of canonical labels (missing: ``MISSING``)."""
    if isinstance(column, pd.Series) and isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    values = _objects(column)
    return np.fromiter((canonical_label(v) for v in values), dtype=object, count=len(values))


def match_declared(labels: np.ndarray, declared: list) -> np.ndarray:
    """Canonical labels mapped onto declared categories (canonical too): a label is kept
    when declared; else a text that parses as a declared number becomes that number, and
    a number (or a boolean) whose text is a declared text becomes that text (``"1"`` for
    ``1``, ``"True"`` for ``True``: the command line's categories are text). Each value
    by itself: a post-processing of nothing but the row and the declaration."""
    known = set(declared)
    texts = {str(d): d for d in declared if isinstance(d, str)}
    numbers_ = {d for d in declared if isinstance(d, (int, float)) and not isinstance(d, bool)}
    cache: dict = {}

    def one(label):
        if label in known:
            return label
        if label in cache:
            return cache[label]
        out = label
        if isinstance(label, str) and numbers_:
            number = canonical_label(real_value(label))
            if number in numbers_:
                out = number
        elif not isinstance(label, str) and texts:
            out = texts.get(str(label), label)
        cache[label] = out
        return out

    return np.fromiter((one(v) for v in labels), dtype=object, count=len(labels))
