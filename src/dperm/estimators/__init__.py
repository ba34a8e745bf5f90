"""scikit-learn estimators over the private algorithms."""

from .linear import DPHuberRegressor, DPLinearRegression, DPLinearSVC, DPLogisticRegression
from .nonconvex import DPGLMRegressor, DPRobustRegressor

__all__ = ["DPGLMRegressor", "DPHuberRegressor", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "DPRobustRegressor"]
