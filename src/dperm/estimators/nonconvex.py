"""Estimators with non-convex losses: Tukey-biweight robust regression and the
sigmoid-link GLM with squared loss (Wang, Chen, Xu 2019, Section 5)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit, ndtr
from sklearn.utils._param_validation import Interval, StrOptions

from ..problem.losses import Biweight, SigmoidSquared
from .linear import _COMMON_PARAMS_DOC, _DPRegressor

__all__ = ["DPRobustRegressor", "DPGLMRegressor"]


class DPRobustRegressor(_DPRegressor):
    __doc__ = (
        """Differentially private robust regression with Tukey's biweight loss.

    Minimizes ``(1/n) sum rho_c(<w, x> - y) + (alpha/2) ||w||^2`` with rho_c the biweight
    loss: bounded, so a few gross outliers cannot pull the fit, and non-convex, so the
    guarantee is on the privacy only; utility is a (near-)stationary point. The default
    solver (``"auto"``) is ``dp_gd`` (Wang, Ye, Xu 2017, Alg. 4; Wang, Chen, Xu 2019,
    Alg. 4); any non-convex solver of the catalogue (``dp_gld``, ``rrpsgd``, ``dp_sosp``,
    ...) may be named.

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

    _parameter_constraints: dict = {**_DPRegressor._parameter_constraints, "c": [Interval(Real, 0, None, closed="neither")]}

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
    (``link="probit"``); targets must be in [0, 1] (a probability or a rate; others are
    an error, since ``s`` cannot reach them). ``predict`` returns ``s(<w, x> + b)``. The
    default solver (``"auto"``) is ``dp_gd``.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y| (the targets are in [0, 1], so 1 is the natural bound).
    link : {"sigmoid", "probit"}, default="sigmoid"
    """
    )

    _parameter_constraints: dict = {**_DPRegressor._parameter_constraints, "link": [StrOptions({"sigmoid", "probit"})]}

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, link="sigmoid"):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state)
        self.link = link

    def _loss(self):
        return SigmoidSquared(self.link)

    def _check_targets(self, y: np.ndarray) -> None:
        if np.any((y < 0) | (y > 1)):  # no value quoted: targets are data
            raise ValueError("DPGLMRegressor needs targets in [0, 1] (its link maps onto (0, 1)); rescale y first")

    def predict(self, X):
        scores = self._decision(X)
        return expit(scores) if self.link == "sigmoid" else ndtr(scores)
