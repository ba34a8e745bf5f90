"""`dperm fit` and `dperm predict` on a raw CSV: declarations, column roles, the private
pipeline of :func:`dperm.make_pipeline`, and the preprocessing kept in model.json.

Declarations (public, free) come from the command line (``--bounds col=lo:hi``,
``--categories col=a,b,c``, ``--y-bounds lo:hi``) and from a schema file (``--schema``,
JSON, format in docs/your-data.md). They are checked against the CSV's header before
any data is read and before anything is charged; an error names the option and the
column, never a value of the data.

Column roles: a declared column takes its declared role (``bounds`` or ``numeric``:
numeric; ``categories`` or ``categorical``: categorical); an undeclared column gets its
role from the schema rule of :mod:`dperm.preprocessing.schema` (a small charged release,
the same as in Python). The file is read by :mod:`dperm._tables`: one row per line, every
field text, a malformed line a row of missing values; the features go to the pipeline as
the file's text, and the pipeline's casts map each value by itself (a value outside its
column's domain is missing). No value of a row is refused (docs/privacy.md, "Totality").

Imported only by the `fit` and `predict` commands (start-up stays light: the heavy
imports are inside the functions).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Declarations", "parse_declarations", "read_features", "fit_pipeline", "preprocessing_record",
           "transform_for_predict", "declared_classes", "SCHEMA_KEYS"]

SCHEMA_KEYS = ("bounds", "categories", "numeric", "categorical", "y_bounds")


def _error(message: str):
    """A CLIError (bad input: one line, exit status 2)."""
    from .exceptions import CLIError

    return CLIError(message)


@dataclass
class Declarations:
    """Everything declared public about the table (free): numeric bounds, categories,
    column roles and the regression target's bounds."""

    bounds: dict = field(default_factory=dict)  # column -> (low, high)
    categories: dict = field(default_factory=dict)  # column -> list of str
    numeric: list = field(default_factory=list)  # declared numeric, bounds estimated privately
    categorical: list = field(default_factory=list)  # declared categorical, categories selected privately
    y_bounds: tuple | None = None

    @property
    def any(self) -> bool:
        return bool(self.bounds or self.categories or self.numeric or self.categorical or self.y_bounds)

    def numeric_columns(self) -> list:
        return list(self.bounds) + [c for c in self.numeric if c not in self.bounds]

    def categorical_columns(self) -> list:
        return list(self.categories) + [c for c in self.categorical if c not in self.categories]

    def columns(self) -> list:
        return self.numeric_columns() + self.categorical_columns()


def parse_range(text, option: str) -> tuple[float, float]:
    """'lo:hi' (or a JSON pair) -> (lo, hi), finite, lo < hi."""
    if isinstance(text, str):
        parts = text.split(":")
        if len(parts) != 2:
            raise _error(f"cannot parse {option} {text!r}: write LOW:HIGH, e.g. 0:100")
    else:
        parts = text
        if not isinstance(parts, (list, tuple)) or len(parts) != 2 or any(isinstance(v, bool) for v in parts):
            raise _error(f"{option} must be a pair [low, high] of numbers")
    try:
        low, high = (float(v) for v in parts)
    except (TypeError, ValueError):
        raise _error(f"cannot parse {option}: LOW and HIGH must be numbers, e.g. 0:100") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise _error(f"{option} must have finite LOW < HIGH")
    return low, high


def _split_column(text: str, option: str, example: str) -> tuple[str, str]:
    column, sep, value = text.partition("=")
    if not sep or not column or not value:
        raise _error(f"cannot parse {option} {text!r}: write COLUMN={example}")
    return column, value


def _add(mapping: dict, column: str, value, option: str) -> None:
    if column in mapping:
        raise _error(f"column {column!r} is declared twice ({option}, or the schema and the command line)")
    mapping[column] = value


def _load_schema(path: str) -> dict:
    if not Path(path).is_file():
        raise _error(f"schema file {path!r} not found")
    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _error(f"schema file {path!r} is not JSON") from None
    if not isinstance(schema, dict):
        raise _error(f"schema file {path!r} must hold a JSON object with keys among {', '.join(SCHEMA_KEYS)}")
    unknown = sorted(k for k in schema if k not in SCHEMA_KEYS)
    if unknown:
        raise _error(f"schema file {path!r} has unknown keys {unknown}; the keys are {', '.join(SCHEMA_KEYS)}")
    for key in ("bounds", "categories"):
        if not isinstance(schema.get(key, {}), dict):
            raise _error(f"schema key {key!r} must be an object: column -> value")
    for key in ("numeric", "categorical"):
        value = schema.get(key, [])
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise _error(f"schema key {key!r} must be a list of column names")
    return schema


def parse_declarations(args) -> Declarations:
    """The declarations of the command line and the schema file; syntax only (no data)."""
    declared = Declarations()
    schema = _load_schema(args.schema) if getattr(args, "schema", None) else {}
    for column, pair in schema.get("bounds", {}).items():
        _add(declared.bounds, column, parse_range(pair, f"the schema's bounds of {column!r}"), "bounds")
    for column, values in schema.get("categories", {}).items():
        if not isinstance(values, list) or not values or any(isinstance(v, (dict, list)) or v is None for v in values):
            raise _error(f"the schema's categories of {column!r} must be a non-empty list of values")
        _add(declared.categories, column, [str(v) for v in values], "categories")
    for text in getattr(args, "bounds", None) or []:
        column, value = _split_column(text, "--bounds", "LOW:HIGH, e.g. --bounds age=0:100")
        _add(declared.bounds, column, parse_range(value, f"--bounds {column}"), "--bounds")
    for text in getattr(args, "categories", None) or []:
        column, value = _split_column(text, "--categories", "A,B,C, e.g. --categories sex=female,male")
        values = [v.strip() for v in value.split(",")]
        if any(not v for v in values):
            raise _error(f"--categories {column}: a category is empty; write COLUMN=A,B,C")
        if len(set(values)) != len(values):
            raise _error(f"--categories {column}: a category is listed twice")
        _add(declared.categories, column, values, "--categories")
    declared.numeric = [c for c in dict.fromkeys(schema.get("numeric", []))]
    declared.categorical = [c for c in dict.fromkeys(schema.get("categorical", []))]
    both = sorted(set(declared.numeric_columns()) & set(declared.categorical_columns()))
    if both:
        raise _error(f"columns {both} are declared both numeric (bounds) and categorical (categories)")
    y = getattr(args, "y_bounds", None)
    if y is not None and "y_bounds" in schema:
        raise _error("the target's bounds are declared twice (--y-bounds and the schema's y_bounds)")
    if y is not None:
        declared.y_bounds = parse_range(y, "--y-bounds")
    elif "y_bounds" in schema:
        declared.y_bounds = parse_range(schema["y_bounds"], "the schema's y_bounds")
    return declared


def declared_classes(text: str | None):
    """The --classes values from the command line alone (public): numbers when every value
    reads as a number (``0,1`` -> 0, 1), ``True``/``False`` for ``true,false`` (any case),
    else the texts. The target's labels are matched to them by value (``1``, ``1.0`` and
    ``"1"`` are the class 1); a label matching none weighs 0 (docs/privacy.md, "Totality")."""
    if text is None:
        return None
    from .preprocessing.cast import canonical_label, real_value

    values = [v.strip() for v in text.replace(",", " ").split() if v.strip()]
    numbers = [real_value(v) for v in values]
    if values and not any(math.isnan(x) for x in numbers):
        return [canonical_label(x) for x in numbers]
    if values and all(v.lower() in ("true", "false") for v in values):
        return ["True" if v.lower() == "true" else "False" for v in values]
    return values


def present_labels(target):
    """The target column without its missing labels (undeclared classes: their rows weigh 0)."""
    from .preprocessing.cast import MISSING, label_column

    return target[label_column(target) != MISSING]


def label_set(target) -> list:
    """Undeclared classes: the target's canonical labels (1 and 1.0 one label), sorted by a
    public order of the labels; taken from the data and public by that choice (warned)."""
    from .preprocessing.cast import MISSING, label_column
    from .preprocessing.categorical import _order_key

    labels = set(label_column(target)) - {MISSING}
    if any(isinstance(v, str) for v in labels):
        labels = {str(v) for v in labels}  # one type: numbers beside texts are texts
    return sorted(labels, key=_order_key)


def check_against_header(declared: Declarations, header: list, label_columns: list, path: str) -> None:
    """Declared columns must be feature columns of the file (no data read yet)."""
    unknown = [c for c in declared.columns() if c not in header]
    if unknown:
        raise _error(f"declared columns {unknown} are not columns of {path!r}")
    labels = [c for c in declared.columns() if c in label_columns]
    if labels:
        raise _error(f"declared columns {labels} are the target or weight column, not features; declare the "
                     "target's bounds with --y-bounds")


def read_header(path: str) -> list:
    """The file's column names (its first line; public). dperm._tables states the rule."""
    from ._tables import TableError, read_header as header_of

    try:
        return header_of(path)
    except TableError as error:
        raise _error(str(error)) from None


def read_text(path: str, columns: list | None = None):
    """The file as text columns, one row per line, a malformed line a row of missing
    values (dperm._tables.read_table); never an error decided by a data row."""
    from ._tables import TableError, read_table

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

    from ._tables import numbers

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
    from ._tables import infer_types

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


def fit_pipeline(args, estimator, declared: Declarations, features, numeric: list, categorical: list, y,
                 regression: bool, sample_weight, ledger):
    """Fit dperm.make_pipeline(estimator) on the features; every check that needs no
    data is done before the pipeline charges anything. Returns the fitted pipeline."""
    from .pipeline import make_pipeline
    from .privacy.budget import PrivacyBudget

    undeclared_categorical = [c for c in categorical if c not in declared.categories]
    if undeclared_categorical and not args.delta > 0:
        raise _error(f"categorical columns {undeclared_categorical} have no declared categories: selecting them "
                     "privately needs --delta > 0; declare them with --categories COLUMN=A,B,C")
    undeclared = [c for c in features.columns if c not in numeric and c not in categorical]
    if undeclared and not args.delta > 0:
        raise _error(f"columns {undeclared[:10]} have no declared role; one released categorical would need "
                     "--delta > 0 to select its categories; give --delta, or declare their roles (--bounds, "
                     "--categories, or the schema's 'numeric' / 'categorical')")
    options = dict(epsilon=args.epsilon, delta=args.delta, accountant=ledger, random_state=args.seed,
                   numeric=numeric, categorical=categorical, bounds=dict(declared.bounds),
                   categories=dict(declared.categories), missing_indicator="auto", schema="private")
    if getattr(args, "summary", False):  # intervals: no all-zero indicator columns; rows scaled linearly
        options.update(missing_indicator=False, row_norm="scale")  # (per-unit rows, docs/inference.md)
    if regression:
        options["y_bounds"] = declared.y_bounds if declared.y_bounds is not None else "auto"
    elif declared.y_bounds is not None:
        raise _error("--y-bounds (or the schema's y_bounds) is for regression losses")
    pipe = make_pipeline(estimator, **options)
    if regression and declared.y_bounds is None:
        try:  # public inputs only (n, epsilon), before anything is charged
            pipe._check_target_feasible(pipe.steps[-1][1], features, PrivacyBudget(args.epsilon, args.delta))
        except ValueError as error:
            head = str(error).split(": declare")[0]
            raise _error(f"{head}: declare them with --y-bounds LOW:HIGH (e.g. the range the data's documentation "
                         "gives)") from None
    final_name = pipe.steps[-1][0]
    params = {} if sample_weight is None else {f"{final_name}__sample_weight": sample_weight}
    if ledger is not None:
        _check_ledger_affords(estimator, options, features, numeric, categorical, y, regression, final_name,
                              sample_weight is not None, ledger)
        ledger.begin_fit(f"dperm fit {Path(args.data).name}: private preprocessing and model")
    try:
        pipe.fit(features, y, **params)
    finally:
        if ledger is not None:
            ledger.end_fit()
    return pipe


def _stand_in(features, numeric: list, categorical: list, declared: Declarations):
    """A table of the features' shape and column roles holding no data: zeros in the
    numeric columns, a declared category (else one fixed text) in the categorical ones."""
    import numpy as np
    import pandas as pd

    n = len(features)
    columns = {}
    for c in features.columns:
        if c in categorical:
            columns[c] = np.full(n, declared.categories.get(c, ["?"])[0], dtype=object)
        else:  # numeric, or a role the fit releases privately (its cost is in the events either way)
            columns[c] = np.zeros(n)
    return pd.DataFrame(columns, columns=list(features.columns))


def _check_ledger_affords(estimator, options: dict, features, numeric, categorical, y, regression: bool,
                          final_name: str, weighted: bool, ledger) -> None:
    """Before the data is read: run the same pipeline on a stand-in of the table (public
    inputs only: the number of rows, the column roles, the declared values and labels)
    against a copy of the ledger, so that a fit the ledger cannot afford is refused with
    nothing charged. Its events are those of the real fit (they depend on the shape, the
    declarations and the budget), up to the number of categories the real selection
    releases; the real fit is still charged step by step, each step before it reads."""
    import warnings

    import numpy as np
    from sklearn.base import clone

    from .pipeline import make_pipeline
    from .privacy.budget import BudgetAccountant, BudgetExceededError

    scratch = BudgetAccountant(ledger.total)
    scratch._events, scratch._labels = list(ledger.events), [label for label, _ in ledger.history]
    scratch._spent_epsilon = ledger.spent_epsilon
    n = len(features)
    if regression:
        y0 = np.zeros(n)
    else:
        labels = estimator.get_params(deep=False).get("classes")
        y0 = np.resize(np.asarray(labels if labels is not None else np.unique(y), dtype=object), n)
    declared = Declarations(bounds=options["bounds"], categories=options["categories"])
    dry = make_pipeline(clone(estimator), **{**options, "accountant": scratch})
    params = {f"{final_name}__sample_weight": np.ones(n)} if weighted else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dry.fit(_stand_in(features, numeric, categorical, declared), y0, **params)
    except BudgetExceededError:
        raise
    except Exception:  # noqa: BLE001 - a stand-in the solver cannot take: the real charges still guard
        return


def preprocessing_record(pipe, declared: Declarations) -> dict:
    """model.json's preprocessing: the declared values and what the private steps
    released (PrivatePreprocessor.released_values), the budgets each step was given."""
    pre = pipe.steps[0][1]
    record = pre.released_values()
    record["declared"] = {"bounds": {c: list(v) for c, v in declared.bounds.items()},
                          "categories": {c: list(v) for c, v in declared.categories.items()}}
    return record


def transform_for_predict(model: dict, path: str):
    """The rows of ``path`` mapped by the model's preprocessing (a post-processing of the
    released values): the matrix the coefficients apply to."""
    from .exceptions import CLIError
    from .preprocessing import PrivatePreprocessor

    released = model["preprocessing"]
    try:
        pre = PrivatePreprocessor.from_released(released)
    except ValueError as error:
        raise CLIError(f"the model's preprocessing is damaged ({error})") from None
    columns = list(pre.feature_names_in_)
    header = read_header(path)
    absent = [c for c in columns if c not in header]
    if absent:
        raise CLIError(f"columns {absent} of the model are missing from {path!r}")
    frame = read_text(path, columns)  # the file's text; the model's casts map each value
    return pre.transform(frame[columns])
