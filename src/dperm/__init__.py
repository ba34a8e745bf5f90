"""dperm: differentially private empirical risk minimization.

Every algorithm of the DP-ERM literature behind one API, with its noise calibrated
exactly for the mechanism that runs (replace-one neighbouring relation).

>>> import dperm
>>> fit = dperm.minimize(X, y, loss="logistic", regularizer=("l2", 0.1),
...                      algorithm="gd_output_perturbation", epsilon=1.0, delta=1e-5)
"""

from . import algorithms, audit, losses, privacy, problem, theory, utility
from .api import minimize
from .estimators import (
    DPGLMRegressor,
    DPHuberRegressor,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRobustRegressor,
)
from .privacy.budget import BudgetAccountant, PrivacyBudget
from .problem.erm import DataNormWarning, ERMProblem
from .problem.reference import solve_reference
from .result import PrivateFit

__version__ = "0.1.0"

__all__ = [
    "algorithms", "audit", "losses", "privacy", "problem", "theory", "utility", "minimize",
    "DPGLMRegressor", "DPHuberRegressor", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "DPRobustRegressor",
    "BudgetAccountant", "PrivacyBudget", "DataNormWarning", "ERMProblem", "solve_reference",
    "PrivateFit", "__version__",
]
