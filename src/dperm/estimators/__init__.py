"""scikit-learn estimators over the private algorithms."""

from .linear import DPHuberRegressor, DPLinearRegression, DPLinearSVC, DPLogisticRegression

__all__ = ["DPHuberRegressor", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression"]
