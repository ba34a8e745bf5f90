"""The intervals in model.json and the prediction intervals of ``dperm predict
--interval``: plain JSON-able values, post-processings of the released model."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = ["inference_record", "prediction_intervals", "check_level"]


def inference_record(estimator, names=None) -> dict:
    """The coefficient table (intercept first) with the covariance of the coefficients
    and, for least squares, the residual variance (both in the target's units), as plain
    values; ``names`` replaces the feature names."""
    table = estimator.inference_
    record = table.to_dict()
    if names is not None:
        block = (["intercept"] if estimator.fit_intercept else []) + [str(n) for n in names]
        if getattr(estimator, "multi_class_", None) == "multinomial":  # per class but the reference
            block = [f"{c}:{n}" for c in estimator.classes_[1:] for n in block]
        record["names"] = block
    record["intercept_first"] = bool(estimator.fit_intercept)
    record["covariance"] = None if table.refused else np.asarray(table.covariance).tolist()
    variance = estimator.fits_[0].info.get("residual_variance")
    scale = getattr(estimator, "_inference_scale", 1.0)
    record["residual_variance"] = None if variance is None or table.refused else float(variance) * scale * scale
    return record


def check_level(level) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval's level must be in (0, 1), e.g. 0.95; got {level:g}")
    return level


def prediction_intervals(record: dict, X: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` of the level-``level`` prediction interval of a new observation
    at each row of X (the model's features): ``x^T b -+ z sqrt(x^T Cov x + s^2)`` with
    ``x = (1, features)`` when there is an intercept. Needs a least-squares model's
    residual variance (``DPLinearRegression``); infinite when the intervals were refused."""
    level = check_level(level)
    if record.get("residual_variance") is None and not record.get("refused"):
        raise ValueError("prediction intervals need the residual variance, which the least-squares model releases "
                         "(fit with --loss squared --summary); this model has coefficient intervals only")
    X = np.asarray(X, dtype=np.float64)
    design = np.column_stack([np.ones(X.shape[0]), X]) if record.get("intercept_first") else X
    coef = np.asarray([float(v) for v in record["coef"]])
    centre = design @ coef
    if record.get("refused") or record.get("covariance") is None:
        return np.full_like(centre, -np.inf), np.full_like(centre, np.inf)
    cov = np.asarray(record["covariance"], dtype=np.float64)
    spread = np.sqrt(np.einsum("ij,jk,ik->i", design, cov, design) + float(record["residual_variance"]))
    half = norm.ppf(0.5 + level / 2.0) * spread
    return centre - half, centre + half
