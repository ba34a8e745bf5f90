"""Private linear classifiers and regressors in the scikit-learn idiom."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets

from .._validation import DataNormWarning
from ..privacy.accountant import epsilon as certified_epsilon
from ..privacy.budget import PrivacyBudget, PrivacyWarning
from ..privacy.events import composed
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
        Source of the noise. None (the production path): floating-point-safe noise from
        the operating system where the solver has it (docs/privacy.md), OS entropy
        otherwise; a seed or a Generator: reproducible NumPy noise, for experiments.
    accountant : dperm.BudgetAccountant or None, default=None
        A total budget shared by several fits: each fit charges its events to it (composed
        exactly, refused with ``BudgetExceededError`` before the data is read when the
        total would be exceeded). Shared, not copied, by ``clone``.
"""


_CLASSES_DOC = """
    classes : array-like or None, default=None
        The label set, declared (public). The label set is part of the released model
        (``classes_``, the shape of ``coef_``, the per-class budget), so it must not come
        from the data: declare it. When None, it is taken from ``y`` with a
        ``PrivacyWarning`` (the label set is then treated as public, unprotected). A label
        of ``y`` outside a declared set is an error; a declared label absent from ``y`` is
        fine (its one-vs-rest model is fit all the same).
"""

_CLASSIFIER_ATTRIBUTES_DOC = """
    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn.
    privacy_spent_ : PrivacyBudget
        The guarantee of the fitted model (replace-one).
    solver_ : str
        The algorithm that ran (resolves ``solver="auto"``).
    fits_ : list of PrivateFit
        The solver outputs (algorithm, public hyper-parameters, privacy spent), one per
        one-vs-rest fit.
    n_iter_ : ndarray of shape (1,) or (n_classes,)
        The solvers' step counts, set only when the count is a public hyper-parameter
        (``hyperparameters["steps"]``); a count of a solver run to a tolerance depends on
        the data and is not released.
"""

_UNDECLARED_CLASSES = (
    "classes was not declared: the label set is taken from y and treated as public "
    "(it is released with the model, unprotected); declare it, e.g. classes=[0, 1]"
)


def resolve_classes(declared, y) -> np.ndarray:
    """The sorted label set: ``declared`` when given, else inferred from ``y`` with a
    PrivacyWarning. Errors never quote a label (labels are data)."""
    if declared is None:
        warnings.warn(_UNDECLARED_CLASSES, PrivacyWarning, stacklevel=3)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError("y has fewer than 2 distinct labels; a classifier needs samples of at least 2 classes")
        return classes
    raw = np.asarray(declared)
    if raw.ndim != 1:
        raise ValueError("classes must be a 1-d list of labels, e.g. classes=[0, 1]")
    classes = np.unique(raw)
    if len(classes) != len(raw):
        raise ValueError("classes declares a label twice; list each label once")
    if len(classes) < 2:
        raise ValueError("classes must declare at least 2 labels")
    if not np.all(np.isin(y, classes)):
        raise ValueError("y has a label outside the declared classes; add it to classes or drop those rows")
    return classes


class _DPClassifier(ClassifierMixin, DPLinearModelMixin):
    _parameter_constraints: dict = {**DPLinearModelMixin._parameter_constraints, "classes": ["array-like", None]}

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
        classes=None,
        accountant=None,
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
        self.classes = classes
        self.accountant = accountant

    def fit(self, X, y, sample_weight=None):
        """Fit privately. Binary: one fit with the whole budget. K > 2 classes:
        one-vs-rest, each of the K fits with budget (epsilon/K, delta/K), so the whole
        model is (epsilon, delta)-DP by basic composition (every row is used K times).
        K is the number of declared ``classes`` (see the parameter).

        ``sample_weight``: per-example weights in [0, 1] (or None), passed to every
        one-vs-rest fit; the guarantee is unchanged (docs/estimators.md)."""
        budget = self._budget()
        X, y = self._validate_xy(X, y)
        sample_weight = self._sample_weight(sample_weight, X)
        check_classification_targets(y)
        self.classes_ = resolve_classes(self.classes, y)
        k = len(self.classes_)
        rng = self._rng()
        targets = [self.classes_[1]] if k == 2 else list(self.classes_)
        part = budget if k == 2 else budget.split(k)
        coefs, intercepts, fits = [], [], []
        for i, positive in enumerate(targets):
            y_signed = np.where(y == positive, 1.0, -1.0)
            with warnings.catch_warnings():
                if i > 0:  # the same rows are clipped in every one-vs-rest fit: warn once
                    warnings.simplefilter("ignore", DataNormWarning)
                coef, intercept, fit = self._fit_binary(X, y_signed, part, rng, sample_weight=sample_weight)
            coefs.append(coef)
            intercepts.append(intercept)
            fits.append(fit)
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.asarray(intercepts)
        self.fits_ = fits
        # the K fits' events composed by the one accountant (each fit had budget / K)
        self.event_ = composed([f.event for f in fits])
        self.privacy_spent_ = PrivacyBudget(min(certified_epsilon(self.event_, budget.delta), budget.epsilon),
                                            budget.delta)
        self._set_n_iter(fits)
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
        + _CLASSES_DOC
        + _CLASSIFIER_ATTRIBUTES_DOC
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
        + _CLASSES_DOC
        + _CLASSIFIER_ATTRIBUTES_DOC
    )

    def _loss(self):
        return HuberizedHinge(0.5)


class _DPRegressor(RegressorMixin, DPLinearModelMixin):
    _parameter_constraints: dict = {
        **DPLinearModelMixin._parameter_constraints,
        "label_bound": [Interval(Real, 0, None, closed="neither")],
    }

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
        accountant=None,
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
        self.accountant = accountant

    def fit(self, X, y, sample_weight=None):
        """Fit privately with the whole budget; labels above ``label_bound`` are clipped.

        ``sample_weight``: per-example weights in [0, 1] (or None); the guarantee is
        unchanged (docs/estimators.md)."""
        budget = self._budget()
        X, y = self._validate_xy(X, y)
        sample_weight = self._sample_weight(sample_weight, X)
        y = np.asarray(y, dtype=np.float64)
        self._check_targets(y)
        coef, intercept, fit = self._fit_binary(X, y, budget, self._rng(), label_bound=float(self.label_bound),
                                                sample_weight=sample_weight)
        self.coef_ = coef
        self.intercept_ = intercept
        self.fits_ = [fit]
        self.privacy_spent_ = fit.privacy_spent
        self.event_ = fit.event
        self._set_n_iter([fit], single=True)
        return self

    def _check_targets(self, y: np.ndarray) -> None:
        """Raise ValueError for targets outside the loss's domain (none here)."""

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

    _parameter_constraints: dict = {
        **_DPRegressor._parameter_constraints, "threshold": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, threshold=1.0, accountant=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant)
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

    _parameter_constraints: dict = {
        **_DPRegressor._parameter_constraints, "radius": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, radius=1.0, accountant=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant)
        self.radius = radius

    def _loss(self):
        return Squared()

    def _constraint(self):
        return ("l2_ball", float(self.radius)) if self.constraint is None else self.constraint
