"""Estimators with non-convex losses: Tukey-biweight robust regression and the
sigmoid-link GLM with squared loss (Wang, Chen, Xu 2019, Section 5)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit, ndtr
from sklearn.utils._param_validation import Interval, StrOptions

from ..problem.losses import Biweight, SigmoidSquared
from .linear import _COMMON_PARAMS_DOC, _Y_BOUNDS_DOC, _DPRegressor

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
        Declared public bound on |y|; larger labels are clamped to it, silently (a
        per-row map).
    c : float, default=4.685
        The biweight constant (in label units): residuals beyond c have a flat loss.
    """
        + _Y_BOUNDS_DOC
    )

    _parameter_constraints: dict = {**_DPRegressor._parameter_constraints, "c": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, c=4.685, accountant=None,
                 y_bounds=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant, y_bounds)
        self.c = c

    def _loss(self):
        return Biweight(float(self.c))


class DPGLMRegressor(_DPRegressor):
    __doc__ = (
        """Differentially private generalized linear regression ``E[y | x] = s(<w, x>)``,
        fit by the non-convex squared loss ``(s(<w, x>) - y)^2``.

    ``s`` is the sigmoid (``link="sigmoid"``) or the standard normal CDF
    (``link="probit"``); targets are in [0, 1] (a probability or a rate; ``s`` cannot
    reach others: without ``y_bounds`` a target outside [0, 1] is clipped into it, silently
    and never refused, since a warning or a refusal would depend on one row). ``predict`` returns ``s(<w, x> + b)``. The
    default solver (``"auto"``) is ``dp_gd``.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y| (the targets are in [0, 1], so 1 is the natural bound).
    link : {"sigmoid", "probit"}, default="sigmoid"
    y_bounds : tuple (lo, hi) or None, default=None
        Declared public bounds on the target, in its own units. Given: targets are clipped
        into [lo, hi] (silently: the bounds are the declaration) and mapped affinely onto
        [0, 1], and ``predict`` returns ``lo + (hi - lo) s(<w, x> + b)``. None: targets are
        taken in [0, 1] (others clamped into it, silently: docs/privacy.md, "Totality").
    """
    )

    _parameter_constraints: dict = {**_DPRegressor._parameter_constraints, "link": [StrOptions({"sigmoid", "probit"})]}

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, link="sigmoid", accountant=None, y_bounds=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant, y_bounds)
        self.link = link

    def _loss(self):
        return SigmoidSquared(self.link)

    def _target_range(self) -> tuple[float, float]:
        return 0.0, 1.0

    def _set_target_map(self, coef, intercept, offset: float, scale: float) -> None:
        # the link is not affine: coef_ and intercept_ stay in link units, predict maps back
        self.coef_, self.intercept_ = np.asarray(coef), intercept
        self.y_offset_, self.y_scale_ = float(offset), float(scale)

    def predict(self, X):
        scores = self._decision(X)
        mean = expit(scores) if self.link == "sigmoid" else ndtr(scores)
        return self.y_offset_ + self.y_scale_ * mean if hasattr(self, "y_offset_") else mean
