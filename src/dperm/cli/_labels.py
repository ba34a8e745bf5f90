"""The labels of `dperm fit`: the declared classes (``--classes``, public), each row's
label matched to a declared class by itself, and the check that stops a classification
fit of what looks like a regression target."""

from __future__ import annotations

import math

from ..exceptions import CLIError
from ._defaults import MAX_UNDECLARED_CLASSES


def _declared_classes(text: str | None, target, column: str):
    """The --classes values in the type of the target column."""
    import pandas as pd

    if text is None:
        return None
    values = [v for v in text.replace(",", " ").split() if v]
    try:
        if target.dtype.kind == "b":
            return [{"true": True, "false": False}[v.lower()] for v in values]
        if target.dtype.kind in "iu":
            return [int(v) for v in values]
        if target.dtype.kind == "f":
            return [float(v) for v in values]
        return [str(v) for v in pd.Series(values, dtype=object)]
    except (ValueError, KeyError):
        raise CLIError(f"--classes must be values of the kind in column {column!r} (numbers), e.g. --classes 0,1") from None


def _label_key(text):
    """The class of equal labels a text belongs to, by itself: a True/False word (any
    case) its truth, a finite number its value (``1``, ``1.0``, `` 1 ``: one label),
    any other text itself; None for a missing value."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    text = str(text)
    if text.strip().lower() in ("true", "false"):
        return ("bool", text.strip().lower() == "true")
    try:
        number = float(text)
    except ValueError:
        return ("text", text)
    return ("number", number) if math.isfinite(number) else ("text", text)


def _match_classes(target, classes: list):
    """Each row's label mapped to the declared class it equals (``_label_key``), by
    itself; a label outside the classes (or missing) becomes None, which the pipeline
    gives weight 0. The column's dtype (which every row decides) plays no part."""
    import numpy as np

    index = {_label_key(str(c)): c for c in classes}
    values = target.to_numpy(dtype=object, na_value=None)
    return np.fromiter((index.get(_label_key(v)) for v in values), dtype=object, count=len(values))


def _weigh_out(y, classes, sample_weight, classification: bool):
    """The rows declared prepared (--data-norm): a label outside the classes (None) or a
    target that is not a number gets weight 0 (and a stand-in value), a weight that is not
    a number is 0, one outside [0, 1] clamped; each row by itself, as the pipeline does.
    The weights are always passed, so whether some row is out does not choose the
    estimator's path."""
    import numpy as np

    n = len(y)
    weight = np.ones(n) if sample_weight is None else np.clip(np.nan_to_num(sample_weight, nan=0.0), 0.0, 1.0)
    if classification:
        inside = np.array([v is not None for v in y], dtype=bool)
        y = np.asarray([v if ok else classes[0] for v, ok in zip(y, inside)])  # typed as the classes are
    else:
        inside = np.isfinite(y)
        y = np.where(inside, y, 0.0)
    return y, np.where(inside, weight, 0.0)


def _check_categorical(target, column: str, loss_name: str) -> None:
    """Stop a classification fit whose undeclared target looks like a regression target
    (non-integer numbers, or more than MAX_UNDECLARED_CLASSES distinct values): a forgotten
    --loss. Input validation before any charge, for the person running the fit; it quotes
    no value of the column."""
    non_integer = target.dtype.kind == "f" and not bool((target == target.round()).all())
    if non_integer or target.nunique() > MAX_UNDECLARED_CLASSES:
        what = "non-integer numbers" if non_integer else f"more than {MAX_UNDECLARED_CLASSES} distinct values"
        raise CLIError(f"column {column!r} has {what}, as a regression target has, and --loss {loss_name} is a "
                       "classification loss: for regression pass --loss squared or --loss huber (with "
                       "--y-bounds LOW:HIGH, the target's public range); for a classifier with that many classes declare them with --classes")


def declared_classes(text: str | None):
    """The --classes values from the command line alone (public): numbers when every value
    reads as a number (``0,1`` -> 0, 1), ``True``/``False`` for ``true,false`` (any case),
    else the texts. The target's labels are matched to them by value (``1``, ``1.0`` and
    ``"1"`` are the class 1); a label matching none weighs 0 (docs/privacy.md, "Totality")."""
    if text is None:
        return None
    from ..preprocessing.cast import canonical_label, real_value

    values = [v.strip() for v in text.replace(",", " ").split() if v.strip()]
    numbers = [real_value(v) for v in values]
    if values and not any(math.isnan(x) for x in numbers):
        return [canonical_label(x) for x in numbers]
    if values and all(v.lower() in ("true", "false") for v in values):
        return ["True" if v.lower() == "true" else "False" for v in values]
    return values


def present_labels(target):
    """The target column without its missing labels (undeclared classes: their rows weigh 0)."""
    from ..preprocessing.cast import MISSING, label_column

    return target[label_column(target) != MISSING]


def label_set(target) -> list:
    """Undeclared classes: the target's canonical labels (1 and 1.0 one label), sorted by a
    public order of the labels; taken from the data and public by that choice (warned)."""
    from ..preprocessing.cast import MISSING, label_column
    from ..preprocessing.categorical import _order_key

    labels = set(label_column(target)) - {MISSING}
    if any(isinstance(v, str) for v in labels):
        labels = {str(v) for v in labels}  # one type: numbers beside texts are texts
    return sorted(labels, key=_order_key)
