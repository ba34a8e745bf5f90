"""Intervals, standard errors and tests for private linear models (docs/inference.md).

- :mod:`~dperm.inference.mechanism`: the inference fit, noisy Newton steps with a released
  covariance (Avella-Medina, Bradshaw, Loh 2023), an event charged like any mechanism;
- :mod:`~dperm.inference.table`: the coefficient table (a post-processing);
- :mod:`~dperm.inference.estimators`: ``conf_int`` / ``bse_`` / ``pvalues_`` / ``summary``
  on the estimators;
- :mod:`~dperm.inference.units`: the names and per-unit scales a pipeline hands over;
- :mod:`~dperm.inference.prediction`: prediction intervals for regression.
"""

from .mechanism import newton_inference, public_outlook
from .table import CoefficientTable, InferenceWarning

__all__ = ["newton_inference", "public_outlook", "CoefficientTable", "InferenceWarning"]
