"""Estimators with non-convex losses: Tukey-biweight robust regression and the
sigmoid-link GLM with squared loss (seed 004, Section 5)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtr

from ..problem.losses import Biweight, SigmoidSquared
from .linear import _COMMON_PARAMS_DOC, _DPRegressor

__all__ = ["DPRobustRegressor", "DPGLMRegressor"]


class DPRobustRegressor(_DPRegressor):
    __doc__ = (
        """Differentially private robust regression with Tukey's biweight loss.

    Minimizes ``(1/n) sum rho_c(<w, x> - y) + (alpha/2) ||w||^2`` with rho_c the biweight
    loss: bounded, so a few gross outliers cannot pull the fit, and non-convex, so the
    guarantee is on the privacy only; utility is a (near-)stationary point. The default
    solver (``"auto"``) is ``dp_gd`` (seed 000 Alg. 4 / seed 004 Alg. 4); any non-convex
    solver of the catalogue (``dp_gld``, ``rrpsgd``, ``dp_sosp``, ...) may be named.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y|; larger labels are clipped (with a warning).
    c : float, default=4.685
        The biweight constant (in label units): residuals beyond c have a flat loss.
    """
    )

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, c=4.685):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state)
        self.c = c

    def _loss(self):
        return Biweight(float(self.c))


class DPGLMRegressor(_DPRegressor):
    __doc__ = (
        """Differentially private generalized linear regression ``E[y | x] = s(<w, x>)``,
        fit by the non-convex squared loss ``(s(<w, x>) - y)^2``.

    ``s`` is the sigmoid (``link="sigmoid"``) or the standard normal CDF
    (``link="probit"``); targets are in [0, 1] (or, more generally, within
    ``label_bound``). ``predict`` returns ``s(<w, x> + b)``. The default solver
    (``"auto"``) is ``dp_gd``.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y|; larger targets are clipped (with a warning).
    link : {"sigmoid", "probit"}, default="sigmoid"
    """
    )

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, link="sigmoid"):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state)
        self.link = link

    def _loss(self):
        return SigmoidSquared(self.link)

    def predict(self, X):
        scores = self._decision(X)
        return expit(scores) if self.link == "sigmoid" else ndtr(scores)
