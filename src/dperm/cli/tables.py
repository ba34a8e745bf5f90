"""Reading the tables of `dperm fit` and `dperm predict` (through the total CSV reader of
:mod:`dperm._tables`: one row per line, a malformed line a row of missing values) and the
model file; the column roles of a raw table (docs/your-data.md): a declared column takes
its declared role, an undeclared one is numeric when every value is a number, categorical
when none is; a column that mixes both, or has fewer than two values, is refused before
anything is charged (declare its role). Every numeric column gets a missing-value
indicator. Heavy imports stay inside the functions."""

from __future__ import annotations

import json
from pathlib import Path

from ..exceptions import CLIError
from ._console import _error
from ._declarations import Declarations


def _read_csv(path: str, what: str = "data file"):
    """The file typed column by column as pandas.read_csv would type it, read by the
    total reader of dperm._tables (one row per line, a malformed line a row of missing
    values)."""
    from .._tables import TableError, infer_types, read_table

    try:
        return infer_types(read_table(path, what=what))
    except TableError as error:
        raise CLIError(str(error)) from None


def _numeric_features(frame, columns, path: str):
    """The feature columns as numbers (rows declared prepared: --data-norm): the total
    cast of dperm._tables.numbers, a value that is not a finite number missing."""
    import pandas as pd

    from .tables import _as_numbers

    return pd.DataFrame({c: _as_numbers(frame[c]) for c in columns}, columns=list(columns), index=frame.index)


def _columns_with_missing(frame) -> list:
    return [c for c in frame.columns if frame[c].isna().any()]


def _read_model(path: str) -> dict:
    if not Path(path).is_file():
        raise CLIError(f"model file {path!r} not found")
    try:
        model = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise CLIError(f"{path!r} is not a model written by `dperm fit` (not JSON)") from None
    missing = [k for k in ("coef", "feature_names") if not isinstance(model, dict) or k not in model]
    if missing:
        raise CLIError(f"{path!r} is not a model written by `dperm fit` (no {', '.join(missing)})")
    return model


def read_header(path: str) -> list:
    """The file's column names (its first line; public). dperm._tables states the rule."""
    from .._tables import TableError, read_header as header_of

    try:
        return header_of(path)
    except TableError as error:
        raise _error(str(error)) from None


def read_text(path: str, columns: list | None = None):
    """The file as text columns, one row per line, a malformed line a row of missing
    values (dperm._tables.read_table); never an error decided by a data row."""
    from .._tables import TableError, read_table

    try:
        return read_table(path, columns)
    except TableError as error:
        raise _error(str(error)) from None


def _is_number_kind(series) -> bool:
    return series.dtype.kind in "iuf"


def _as_numbers(series):
    """The column as floats by the total cast of dperm._tables.numbers: a value that is
    not a finite decimal number is missing (NaN), decided value by value, never an error."""
    import numpy as np
    import pandas as pd

    from .._tables import numbers

    if _is_number_kind(series):
        values = series.to_numpy(dtype=float, copy=True)
        values[~np.isfinite(values)] = np.nan
        return pd.Series(values, index=series.index, name=series.name)
    return numbers(series)


def read_features(path: str, declared: Declarations, label_columns: list):
    """(frame, features, numeric, categorical): the whole file, and its feature columns
    as the file's text (missing stays missing). ``numeric`` and ``categorical`` are the
    declared roles; the other feature columns get theirs from the schema rule of
    :mod:`dperm.preprocessing.schema` (the same as in Python): a small charged release per
    column, inside the preprocessing's budget. No value is refused: once the roles are
    fixed, a value outside its column's domain is missing (docs/privacy.md, "Totality").
    The file is read by dperm._tables (one row per line, a malformed line a row of missing
    values); ``frame`` types each column as pandas.read_csv would, for the label and
    weight columns' checks where the label set is not declared."""
    from .._tables import infer_types

    text = read_text(path)
    frame = infer_types(text)
    columns = [c for c in text.columns if c not in label_columns]
    # the file's text, column by column: a value's representation never depends on the
    # other rows (pandas' type guess would read 75001 as a number in one table and as the
    # text "75001" in its neighbour with a word in that column)
    features = text[columns].copy()
    numeric = [c for c in columns if c in declared.numeric_columns()]
    categorical = [c for c in columns if c in declared.categorical_columns()]
    return frame, features, numeric, categorical
