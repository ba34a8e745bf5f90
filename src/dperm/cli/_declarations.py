"""The public declarations of `dperm fit` (free): ``--bounds col=lo:hi``,
``--categories col=a,b,c``, ``--y-bounds lo:hi`` and a schema file (``--schema``, JSON,
format in docs/your-data.md). Checked against the CSV's header before any data is read
and before anything is charged; an error names the option and the column, never a value
of the data."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ._console import _error


SCHEMA_KEYS = ("bounds", "categories", "numeric", "categorical", "y_bounds")


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


def check_against_header(declared: Declarations, header: list, label_columns: list, path: str) -> None:
    """Declared columns must be feature columns of the file (no data read yet)."""
    unknown = [c for c in declared.columns() if c not in header]
    if unknown:
        raise _error(f"declared columns {unknown} are not columns of {path!r}")
    labels = [c for c in declared.columns() if c in label_columns]
    if labels:
        raise _error(f"declared columns {labels} are the target or weight column, not features; declare the "
                     "target's bounds with --y-bounds")
