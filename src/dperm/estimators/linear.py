"""Private linear classifiers and regressors in the scikit-learn idiom."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets

from ..privacy.budget import PrivacyBudget
from ..problem.losses import Huber, HuberizedHinge, Logistic, Squared
from ._base import DPLinearModelMixin

__all__ = ["DPLogisticRegression", "DPLinearSVC", "DPHuberRegressor", "DPLinearRegression"]

_COMMON_PARAMS_DOC = """
    epsilon : float, default=1.0
        Privacy parameter epsilon (> 0) of the whole fit.
    delta : float, default=1e-5
        Privacy parameter delta in [0, 1); 0 asks for pure epsilon-DP (solvers that need
        delta > 0 then refuse). Should be well below 1/n_samples.
    solver : str, default="auto"
        A name of the algorithm catalogue (``dperm.algorithms.names()``) whose
        assumptions the loss meets; ``"auto"`` chooses from the problem's properties
        (strong convexity, smoothness, constraint, d versus n, delta) by the table of
        :mod:`dperm.algorithms.auto`; the choice is stored in ``solver_``.
    alpha : "auto" or float, default="auto"
        l2 regularization strength mu of ``(mu/2) ||w||^2`` (the intercept included).
        ``"auto"`` picks it from public quantities only (n, d, epsilon, delta, the
        declared bounds, the loss's Lipschitz constant) by the excess-risk trade-off of
        private ERM (Chaudhuri et al. 2011; Bassily et al. 2014; Zhang et al. 2017):
        ``4 L_phi D^2 sqrt(ln(1.25/delta)) / (n epsilon m)`` for the default solvers,
        D the row-norm bound with the intercept, m the target margin (4 for
        classifiers, ``label_bound`` for regressors); see
        :func:`dperm.defaults.auto_alpha`. The value used is stored in ``alpha_``.
    data_norm : float, default=1.0
        Declared public bound on the L2 norm of each row of X; rows above it are
        clipped (with a warning). Never estimated from the data.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling``; the learner's row-norm bound
        becomes ``sqrt(data_norm^2 + intercept_scaling^2)``.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    constraint : None or tuple, default=None
        Constraint set C, e.g. ``("l2_ball", 10.0)``.
    solver_params : dict, optional
        Hyper-parameters passed to the solver (defaults: its theorem's prescriptions).
    random_state : None, int or numpy.random.Generator
        Source of the noise; None draws from OS entropy.
"""


class _DPClassifier(ClassifierMixin, DPLinearModelMixin):
    def __init__(
        self,
        epsilon=1.0,
        delta=1e-5,
        solver="auto",
        alpha="auto",
        data_norm=1.0,
        fit_intercept=True,
        intercept_scaling=1.0,
        constraint=None,
        solver_params=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.alpha = alpha
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.constraint = constraint
        self.solver_params = solver_params
        self.random_state = random_state

    def fit(self, X, y):
        """Fit privately. Binary: one fit with the whole budget. K > 2 classes:
        one-vs-rest, each of the K fits with budget (epsilon/K, delta/K), so the whole
        model is (epsilon, delta)-DP by basic composition (every row is used K times)."""
        budget = self._budget()
        X, y = self._validate_xy(X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(f"need samples of at least 2 classes, got only {self.classes_.tolist()}")
        rng = self._rng()
        targets = [self.classes_[1]] if k == 2 else list(self.classes_)
        part = budget if k == 2 else budget.split(k)
        coefs, intercepts, fits = [], [], []
        for positive in targets:
            y_signed = np.where(y == positive, 1.0, -1.0)
            coef, intercept, fit = self._fit_binary(X, y_signed, part, rng)
            coefs.append(coef)
            intercepts.append(intercept)
            fits.append(fit)
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.asarray(intercepts)
        self.fits_ = fits
        spent_eps = sum(f.privacy_spent.epsilon for f in fits)
        spent_delta = min(sum(f.privacy_spent.delta for f in fits), budget.delta)
        self.privacy_spent_ = PrivacyBudget(min(spent_eps, budget.epsilon), spent_delta)
        self.n_iter_ = np.asarray([f.iterations for f in fits])
        return self

    def decision_function(self, X):
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class DPLogisticRegression(_DPClassifier):
    __doc__ = (
        """Differentially private logistic regression.

    Minimizes ``(1/n) sum log(1 + exp(-y <w, x>)) + (alpha/2) ||w||^2`` with a private
    solver of the catalogue; binary labels may be any two values, K > 2 classes are fit
    one-vs-rest with the budget split K ways.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn.
    privacy_spent_ : PrivacyBudget
        The guarantee of the fitted model (replace-one).
    solver_ : str
        The algorithm that ran (resolves ``solver="auto"``).
    fits_ : list of PrivateFit
        The solver outputs (hyper-parameters used, noise calibration).
    """
    )

    def _loss(self):
        return Logistic()

    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1 - p, p])
        p = 1.0 / (1.0 + np.exp(-scores))
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class DPLinearSVC(_DPClassifier):
    __doc__ = (
        """Differentially private linear SVM with the huberized hinge loss (width 0.5).

    The huberized hinge (Chaudhuri et al. 2011) is the smooth surrogate of the hinge
    loss that output-perturbation and gradient methods need (beta_phi = 1/(2h)).

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
    )

    def _loss(self):
        return HuberizedHinge(0.5)


class _DPRegressor(RegressorMixin, DPLinearModelMixin):
    def __init__(
        self,
        epsilon=1.0,
        delta=1e-5,
        solver="auto",
        alpha="auto",
        data_norm=1.0,
        label_bound=1.0,
        fit_intercept=True,
        intercept_scaling=1.0,
        constraint=None,
        solver_params=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.alpha = alpha
        self.data_norm = data_norm
        self.label_bound = label_bound
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.constraint = constraint
        self.solver_params = solver_params
        self.random_state = random_state

    def fit(self, X, y):
        """Fit privately with the whole budget; labels above ``label_bound`` are clipped."""
        budget = self._budget()
        X, y = self._validate_xy(X, y)
        y = np.asarray(y, dtype=np.float64)
        coef, intercept, fit = self._fit_binary(X, y, budget, self._rng(), label_bound=float(self.label_bound))
        self.coef_ = coef
        self.intercept_ = intercept
        self.fits_ = [fit]
        self.privacy_spent_ = fit.privacy_spent
        self.n_iter_ = fit.iterations
        return self

    def predict(self, X):
        return self._decision(X)


class DPHuberRegressor(_DPRegressor):
    __doc__ = (
        """Differentially private robust linear regression with the Huber loss.

    Minimizes ``(1/n) sum huber_k(<w, x> - y) + (alpha/2) ||w||^2``; the Huber loss is
    k-Lipschitz on all of R^d, so no constraint set is needed.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y|; larger labels are clipped (with a warning).
    threshold : float, default=1.0
        The Huber threshold k.
    """
    )

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, threshold=1.0):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state)
        self.threshold = threshold

    def _loss(self):
        return Huber(float(self.threshold))


class DPLinearRegression(_DPRegressor):
    __doc__ = (
        """Differentially private least squares on a bounded set.

    The squared loss is Lipschitz only on a bounded set, so a constraint is required:
    by default the L2 ball of radius ``radius`` (the ``constraint`` parameter overrides).

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y|; larger labels are clipped (with a warning).
    radius : float, default=1.0
        Radius of the default L2-ball constraint.
    """
    )

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, radius=1.0):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state)
        self.radius = radius

    def _loss(self):
        return Squared()

    def _constraint(self):
        return ("l2_ball", float(self.radius)) if self.constraint is None else self.constraint
