"""Intervals, standard errors and tests for private linear models (docs/inference.md).

- :mod:`~dperm.inference.mechanism`: the inference fit, noisy Newton steps with a released
  covariance (Avella-Medina, Bradshaw, Loh 2023), an event charged like any mechanism;
- :mod:`~dperm.inference.scaled`: least squares' default inference fit, a Huber fit at a
  multiple of a private residual scale, whose noise follows the errors' scale, not the
  declared bound on |y|;
- :mod:`~dperm.inference.table`: the coefficient table (a post-processing);
- :mod:`~dperm.inference.estimators`: ``conf_int`` / ``bse_`` / ``pvalues_`` / ``summary``
  on the estimators;
- :mod:`~dperm.inference.units`: the names and per-unit scales a pipeline hands over;
- :mod:`~dperm.inference.prediction`: prediction intervals for regression.
"""

from .mechanism import newton_inference, public_outlook
from .scaled import scaled_huber_inference
from .table import CoefficientTable, InferenceWarning

__all__ = ["newton_inference", "scaled_huber_inference", "public_outlook", "CoefficientTable", "InferenceWarning"]
