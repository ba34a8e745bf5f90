"""What a pipeline hands the coefficient table: the feature names its transformers give
the model's columns, and, for numeric columns mapped linearly, the spread that turns a
coefficient into one per unit of the original column. Released values only (the
scaler's centre and spread are declared or released), so free."""

from __future__ import annotations

import numpy as np

__all__ = ["feature_names", "unit_divisors"]


def feature_names(transformers) -> list | None:
    """The names of the columns the final estimator sees, or None when a step has none."""
    try:
        return [str(n) for n in transformers.get_feature_names_out()]
    except (AttributeError, ValueError, TypeError):
        return None


def unit_divisors(transformers, names: list | None) -> dict:
    """``{feature name: divisor}`` with ``coef / divisor`` the coefficient per unit of the
    original column, for the numeric columns whose map is linear within their bounds:
    a lone :class:`~dperm.preprocessing.PrivateScaler` (``(x - centre) / spread``,
    clipped to [-1, 1]), or a lone :class:`~dperm.preprocessing.PrivatePreprocessor`
    with ``row_norm="none"`` (the same) or ``"scale"`` (then divided by the public block
    bound). ``row_norm="normalize"`` divides each row by its own norm, which is not
    linear in a column: no per-unit rows (docs/inference.md)."""
    from ..preprocessing import PrivatePreprocessor, PrivateScaler

    steps = [step for _, step in getattr(transformers, "steps", [])]
    if len(steps) != 1 or names is None:
        return {}
    step = steps[0]
    if isinstance(step, PrivateScaler):
        spreads = np.asarray(step.spread_, dtype=np.float64)
        return {names[j]: float(spreads[j]) for j in range(len(spreads))}
    if isinstance(step, PrivatePreprocessor) and step.scaler_ is not None and step.row_norm in ("none", "scale"):
        factor = _block_bound(step) if step.row_norm == "scale" else 1.0
        spreads = np.asarray(step.scaler_.spread_, dtype=np.float64)
        return {names[j]: float(spreads[j]) * factor for j in range(len(spreads))}
    return {}


def _block_bound(step) -> float:
    """The public bound ``row_norm="scale"`` divides by (its blocks' bounds, from the
    column counts: :class:`~dperm.preprocessing.PrivatePreprocessor`)."""
    total = step.scaler_.row_norm_bound_ ** 2 + len(step.missing_columns_)
    if step.encoder_ is not None:
        total += step.encoder_.row_norm_bound_ ** 2
    return float(np.sqrt(total))
