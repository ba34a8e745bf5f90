"""Private linear classifiers and regressors in the scikit-learn idiom."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy.special import log_softmax, softmax
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from .._validation import check_bounds_pair
from ..algorithms import registry
from ..defaults import multinomial_auto_solver
from ..distributed import is_dask_collection
from ..privacy.accountant import epsilon as certified_epsilon
from ..privacy.budget import PrivacyBudget, PrivacyWarning
from ..privacy.events import composed
from ..privacy.mechanisms import charging
from ..problem.losses import Huber, HuberizedHinge, Logistic, Squared
from ..problem.multinomial import MultinomialLogistic, MultinomialProblem
from ..inference.estimators import InferenceMixin
from ._base import DPLinearModelMixin
from .._warnings import user_stacklevel

__all__ = ["DPLogisticRegression", "DPLinearSVC", "DPHuberRegressor", "DPLinearRegression", "MULTINOMIAL_SOLVERS",
           "SUFFICIENT_STATISTICS_SOLVERS"]

# The solvers of the multinomial fit: the full-batch mechanisms whose guarantee rests only
# on L, beta, mu and the convexity of the (vector-valued) problem (docs/estimators.md).
MULTINOMIAL_SOLVERS = tuple(sorted(MultinomialProblem.supported_algorithms))

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
        scaled down onto it, silently: a per-row map, and a warning would release
        whether one row was above the bound (docs/privacy.md, "Totality"). Never
        estimated from the data: to set it from public inputs, scale the rows
        (``make_pipeline(..., row_norm="scale")``, or the pipeline's private scaling of
        raw columns). A NaN or infinite
        entry of X (dense, float32, sparse, Dask) is a missing value imputed by 0, in
        ``fit`` and ``predict``, never an error: a refusal would depend on one row and
        release it (docs/privacy.md, "Totality"); impute first if 0 is not a sensible
        value for a feature.
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
        of ``y`` outside a declared set (NaN too) gives its row weight 0, without a word
        (an error would release the row; with Dask X, where a weight vector would change
        which solvers can run, it is read as the first declared class); a declared label
        absent from ``y`` is fine (its
        one-vs-rest model or its column of the multinomial model is fit all the same).
    class_weight : dict or None, default=None
        Declared (public) weights of the classes, ``{label: weight >= 0}``; labels left
        out weigh 1. Scaled into [0, 1] by the largest weight and multiplied into
        ``sample_weight`` (the guarantee is unchanged, docs/estimators.md). ``"balanced"``
        is refused: it needs the class counts, which are private.
"""

_INFERENCE_DOC = """
    inference : None, bool or dict, default=None
        True (or a dict of options of :func:`dperm.inference.newton_inference`): the whole
        budget goes to the inference fit, the unregularized, unconstrained model by noisy
        Newton steps with a released covariance (Avella-Medina, Bradshaw, Loh 2023), and
        the fitted estimator has ``conf_int(alpha)``, ``bse_``, ``pvalues_``, ``summary()``,
        ``f_test()`` and ``inference_`` (intercept first; K > 2 classes: the multinomial
        model, class 0 the reference, rows per other class), ``inference_spent_`` (the
        release used for the intervals only); ``alpha_`` is then 0. The intervals cover the sampling error
        and the privacy noise; where the released Hessian does not clear its noise they
        are refused (infinite) with an ``InferenceWarning`` (docs/inference.md). Least
        squares takes ``{"method": ...}``: ``"auto"`` (the default) or ``"scaled_huber"``, a
        Huber fit at ``tuning`` (default 3) private residual scales whose noise follows the
        errors' scale, not ``label_bound`` (:func:`dperm.inference.scaled_huber_inference`;
        the same coefficients for errors symmetric about 0), or ``"sufficient_statistics"``.
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
        one-vs-rest fit (one for a binary or multinomial fit).
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
        warnings.warn(_UNDECLARED_CLASSES, PrivacyWarning, stacklevel=user_stacklevel())
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


def outside_classes_weigh_zero(y, classes, sample_weight, declared: bool):
    """Totality (docs/privacy.md): a label outside the declared ``classes`` gets weight 0
    (and, in y, the first class, whose value is then irrelevant) instead of an error that
    would tell whether such a label exists. Each row by itself; nothing is said about it.
    Undeclared classes (taken from y) hold every label: nothing to do."""
    if not declared:
        return y, sample_weight
    inside = np.isin(y, classes)
    if inside.all():
        return y, sample_weight
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return np.where(inside, y, classes[0]), np.where(inside, weights, 0.0)


class _DPClassifier(ClassifierMixin, DPLinearModelMixin):
    _parameter_constraints: dict = {**DPLinearModelMixin._parameter_constraints, "classes": ["array-like", None],
                                    "class_weight": [dict, str, None]}

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
        class_weight=None,
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
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Fit privately. Binary: one fit with the whole budget. K > 2 classes, multinomial
        (``multi_class_ == "multinomial"``): one fit of the softmax loss with the whole
        budget. K > 2 classes, one-vs-rest: each of the K fits with budget
        (epsilon/K, delta/K), so the whole model is (epsilon, delta)-DP by basic
        composition (every row is used K times). K is the number of declared ``classes``
        (see the parameter).

        ``sample_weight``: per-example weights in [0, 1] (or None), passed to the fit (to
        every one-vs-rest fit); the guarantee is unchanged (docs/estimators.md). A weight
        that is NaN or infinite is 0, and every weight is clamped into [0, 1], each by
        itself and without a word (docs/privacy.md, "Totality")."""
        budget = self._budget()
        X, y = self._validate_xy(X, y)
        sample_weight = self._sample_weight(sample_weight, X)
        declared = self.classes is not None
        if declared:  # a label outside them (NaN too) gets weight 0, before any check of y's values
            self.classes_ = resolve_classes(self.classes, y[:0])
            if is_dask_collection(X):  # a weight vector would change which solvers run: the first class
                y = np.where(np.isin(y, self.classes_), y, self.classes_[0])
            else:
                y, sample_weight = outside_classes_weigh_zero(y, self.classes_, sample_weight, True)
        check_classification_targets(y)
        if not declared:  # the label set from y: public by that choice (warned)
            self.classes_ = resolve_classes(None, y)
        sample_weight = self._class_weighted(sample_weight, y)
        k = len(self.classes_)
        rng = self._rng()
        self.multi_class_ = "binary" if k == 2 else self._multi_class(X)
        if self.multi_class_ == "multinomial":
            return self._fit_multinomial(X, y, budget, rng, sample_weight=sample_weight)
        targets = [self.classes_[1]] if k == 2 else list(self.classes_)
        part = budget if k == 2 else budget.split(k)
        coefs, intercepts, fits = [], [], []
        for i, positive in enumerate(targets):
            y_signed = np.where(y == positive, 1.0, -1.0)
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

    def _multi_class(self, X) -> str:
        """"ovr" (the only scheme of this classifier's loss) for K > 2 classes."""
        return "ovr"

    def _fit_multinomial(self, X, y, budget: PrivacyBudget, rng, sample_weight=None):
        """One fit of the softmax loss over the K declared classes with the whole budget
        (:class:`~dperm.problem.multinomial.MultinomialProblem`; ``sample_weight`` in
        [0, 1] or None, validated by the problem); coef_ is (K, d)."""
        k = len(self.classes_)
        scaling = float(self.intercept_scaling) if self.fit_intercept else 0.0
        p = X.shape[1] + (scaling != 0)
        loss = MultinomialLogistic(k)
        problem = MultinomialProblem(
            X, np.searchsorted(self.classes_, y), k,
            self._regularizer(X.shape[0], p, budget, loss=loss, n_classes=k),
            self._constraint(),
            data_norm=self._effective_norm(),
            intercept_scaling=scaling,
            sample_weight=sample_weight,
        )
        if self.solver == "auto":
            self.solver_ = multinomial_auto_solver(budget.delta, strongly_convex=problem.strong_convexity > 0,
                                                   bounded=problem.constraint.bounded)
        else:
            self.solver_ = self.solver
        with charging(getattr(self, "accountant", None)):  # charged before the solver reads the data
            fit = registry.get(self.solver_).fit(problem, budget, rng=rng, **(self.solver_params or {}))
        return self._set_multinomial_fit(fit, fit.coef.reshape(p, k), X.shape[1], scaling)

    def _set_multinomial_fit(self, fit, W, n_features: int, scaling: float):
        """The fitted attributes of a multinomial fit from its (features + intercept) x
        classes weights ``W`` (the intercept row last, rescaled by ``scaling``)."""
        self.coef_ = np.ascontiguousarray(W[:n_features].T)
        self.intercept_ = W[-1] * scaling if self.fit_intercept else np.zeros(W.shape[1])
        self.fits_ = [fit]
        self.event_ = fit.event
        self.privacy_spent_ = fit.privacy_spent
        self._set_n_iter([fit])
        return self

    def decision_function(self, X):
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class DPLogisticRegression(InferenceMixin, _DPClassifier):
    __doc__ = (
        """Differentially private logistic regression.

    Binary labels (any two values): minimizes
    ``(1/n) sum log(1 + exp(-y <w, x>)) + (alpha/2) ||w||^2`` with a private solver of the
    catalogue. K > 2 classes: by default the multinomial (softmax) loss
    ``(1/n) sum [log sum_k exp(<w_k, x>) - <w_y, x>] + (alpha/2) ||W||_F^2`` fitted once with
    the whole budget, its constants ``L = sqrt(2) D`` and ``beta = D^2 / 2``
    (docs/estimators.md, "Multinomial logistic regression"); ``multi_class="ovr"`` fits
    one-vs-rest with the budget split K ways.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + _CLASSES_DOC
        + """
    multi_class : {"auto", "multinomial", "ovr"}, default="auto"
        How K > 2 classes are fit. ``"multinomial"``: one softmax fit with the whole
        budget, by one of the solvers ``MULTINOMIAL_SOLVERS`` (``"output_perturbation"``,
        ``"gd_output_perturbation"``, ``"noisy_gd"``; ``solver="auto"`` takes ``noisy_gd``,
        or output perturbation when delta = 0, see
        :func:`dperm.defaults.multinomial_auto_solver`); in-memory data only. ``"ovr"``: K
        binary fits, each with (epsilon/K, delta/K). ``"auto"``: multinomial when the solver and the input allow
        it, else one-vs-rest. Two classes: the one binary fit (the softmax over two
        classes is the logistic model). The scheme used is stored in ``multi_class_``
        (``"binary"``, ``"multinomial"`` or ``"ovr"``), a function of public inputs only.
"""
        + _INFERENCE_DOC
        + _CLASSIFIER_ATTRIBUTES_DOC
    )

    _parameter_constraints: dict = {
        **_DPClassifier._parameter_constraints, "multi_class": [StrOptions({"auto", "multinomial", "ovr"})],
        "inference": ["boolean", dict, None],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0, fit_intercept=True,
                 intercept_scaling=1.0, constraint=None, solver_params=None, random_state=None, classes=None,
                 accountant=None, multi_class="auto", class_weight=None, inference=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, fit_intercept, intercept_scaling, constraint,
                         solver_params, random_state, classes, accountant, class_weight)
        self.multi_class = multi_class
        self.inference = inference

    def _loss(self):
        return Logistic()

    def _multi_class(self, X) -> str:
        """The scheme for K > 2 classes, from public inputs only (the parameter, the solver
        name and the kind of input)."""
        supported = self.solver in ("auto", *MULTINOMIAL_SOLVERS) and not is_dask_collection(X)
        if self.multi_class == "auto":
            return "multinomial" if supported else "ovr"
        if self.multi_class == "multinomial" and not supported:
            if is_dask_collection(X):
                raise ValueError("multi_class='multinomial' has no Dask path yet; pass the data in memory or use "
                                 "multi_class='ovr'")
            registry.get(self.solver)  # a clear error for an unknown name
            raise ValueError(f"multi_class='multinomial' runs with the solvers {list(MULTINOMIAL_SOLVERS)} "
                             f"(got {self.solver!r}); choose one of them or multi_class='ovr'")
        return self.multi_class

    def predict_proba(self, X):
        """Class probabilities: the softmax of the scores for a multinomial model, the
        logistic of each score normalized to sum 1 for one-vs-rest."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1 - p, p])
        if getattr(self, "multi_class_", "ovr") == "multinomial":
            return softmax(scores, axis=1)
        p = 1.0 / (1.0 + np.exp(-scores))
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        if getattr(self, "multi_class_", "ovr") == "multinomial":
            return log_softmax(self.decision_function(X), axis=1)
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




def _real_targets(y) -> np.ndarray:
    """A regression target as float64, a value that is not a number NaN (each by itself:
    a numeric vector is cast as it is; an object vector value by value by the total cast
    of :func:`dperm.preprocessing.cast.real_column`, never an error quoting a value)."""
    y = np.asarray(y)
    if y.dtype.kind in "biuf":
        return y.astype(np.float64)
    from ..preprocessing.cast import real_column

    return real_column(np.asarray(y, dtype=object))


def _check_y_bounds(y_bounds) -> tuple[float, float] | None:
    """``(lo, hi)`` with finite lo < hi, or None; a clear error otherwise (before any budget
    is spent; no data involved)."""
    if y_bounds is None:
        return None
    return check_bounds_pair(y_bounds, "y_bounds")


_Y_BOUNDS_DOC = """
    y_bounds : tuple (lo, hi) or None, default=None
        Declared public bounds on the target, in its own units. Given: targets are clipped
        into [lo, hi] (silently: the bounds are the declaration), mapped affinely onto the
        model's target range (``[-label_bound, label_bound]``: centre ``(lo + hi)/2``,
        half-width ``(hi - lo)/2``), and ``predict`` maps back, so ``coef_``,
        ``intercept_`` and predictions are in the original units. None: targets are taken
        as they are, within ``[-label_bound, label_bound]`` (clamped into it, silently: a
        per-row map, and a warning would release whether one target was outside;
        docs/privacy.md, "Totality").
    """


class _DPRegressor(RegressorMixin, DPLinearModelMixin):
    _parameter_constraints: dict = {
        **DPLinearModelMixin._parameter_constraints,
        "label_bound": [Interval(Real, 0, None, closed="neither")],
        "y_bounds": [tuple, list, np.ndarray, None],
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
        y_bounds=None,
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
        self.y_bounds = y_bounds

    def _target_range(self) -> tuple[float, float]:
        """The interval the model's targets live in: ``[-label_bound, label_bound]``."""
        bound = float(self.label_bound)
        return -bound, bound

    def fit(self, X, y, sample_weight=None):
        """Fit privately with the whole budget.

        With ``y_bounds`` the targets are clipped into the declared bounds and mapped onto
        ``[-label_bound, label_bound]`` (predictions map back); without, targets beyond
        ``label_bound`` are clamped onto it, silently (a warning would tell whether one
        row's target crossed the bound): declare ``y_bounds`` to fit raw targets.
        When the public inputs (n, d, epsilon, delta, the declared bounds) say the privacy
        noise will dominate the fit, a :class:`~dperm.expectations.NoiseDominatesWarning`
        says so (:func:`dperm.expectations.noise_dominates`).

        A target that is not a finite number (NaN, +-inf; in an object vector, a value
        that does not cast to one) gives its row weight 0, or, with Dask X (where a weight
        vector would change which solvers can run), the middle of the target range: each
        row by itself, never an error (docs/privacy.md, "Totality").

        ``sample_weight``: per-example weights in [0, 1] (or None); the guarantee is
        unchanged (docs/estimators.md). NaN and infinite weights are 0, and every weight is
        clamped into [0, 1], without a word."""
        budget = self._budget()
        bounds = _check_y_bounds(self.y_bounds)
        X, y = self._validate_xy(X, y)
        sample_weight = self._sample_weight(sample_weight, X)
        y = _real_targets(y)  # a value that is not a number: NaN
        low, high = self._target_range()
        # totality (docs/privacy.md): a target that is not a finite number gets weight 0 (in
        # memory) or, on Dask data (where a weight vector would change which solvers can
        # run), the middle of the target range; each row by itself, nothing said
        missing = ~np.isfinite(y)
        if missing.any():
            y = np.where(missing, 0.5 * (low + high) if bounds is None else 0.5 * sum(bounds), y)
            if not is_dask_collection(X):
                sample_weight = np.where(missing, 0.0, 1.0 if sample_weight is None else sample_weight)
        if bounds is not None:
            lo, hi = bounds
            scale = (hi - lo) / (high - low)  # original units per model unit
            offset = lo - low * scale  # original = offset + scale * model
            y = low + (np.clip(y, lo, hi) - lo) / scale
            y = np.clip(y, low, high)  # rounding
        else:
            scale, offset = 1.0, 0.0
            # clamped into the model's target range, per row and silently: a warning shown for
            # one neighbour only would release one row (docs/privacy.md, "Totality")
            y = np.clip(y, low, high)
        if bounds is None:
            self._warn_if_loss_scale_mismatches()
        coef, intercept, fit = self._fit_binary(X, y, budget, self._rng(), label_bound=float(self.label_bound),
                                                sample_weight=sample_weight)
        self._set_target_map(coef, intercept, offset, scale)
        self._prediction_range = bounds  # declared (public): predictions are clipped into it
        self.fits_ = [fit]
        self.privacy_spent_ = fit.privacy_spent
        self.event_ = fit.event
        self._set_n_iter([fit], single=True)
        return self

    def _set_target_map(self, coef, intercept, offset: float, scale: float) -> None:
        """coef_ and intercept_ in the original units: ``offset + scale (X w + b)``."""
        self.coef_ = np.asarray(coef) * scale
        self.intercept_ = offset + scale * intercept

    def _warn_if_loss_scale_mismatches(self) -> None:
        """A robust loss's scale (Huber threshold, biweight c) set in target units far below
        ``label_bound``: raw targets then sit in its linear (Huber) or flat (biweight) part,
        and the fit can end worse than a constant (a biweight fit of raw diabetes targets:
        R^2 -4.7). Public parameters only."""
        loss = self._loss()
        scale = getattr(loss, "threshold", None)
        if scale is None:
            scale = getattr(loss, "c", None)
        if scale is None or float(self.label_bound) <= 2.0 * float(scale):
            return
        warnings.warn(
            f"label_bound={float(self.label_bound):g} is large against the {loss.name} loss's scale "
            f"({float(scale):g}, in target units): targets of that size fall where the loss is linear or flat, "
            "and the fit may predict worse than a constant. Declare the targets' bounds with y_bounds=(lo, hi), "
            "which maps them onto [-label_bound, label_bound] (keep label_bound near the loss's scale).",
            PrivacyWarning, stacklevel=user_stacklevel())

    def predict(self, X):
        """The linear predictions, clipped into the declared ``y_bounds`` when they were
        given at fit (a free post-processing: a target known to lie in them is never
        predicted outside, e.g. a negative wage)."""
        prediction = self._decision(X)
        bounds = getattr(self, "_prediction_range", None)
        if bounds is not None:
            prediction = np.clip(prediction, bounds[0], bounds[1])
        return prediction


class DPHuberRegressor(InferenceMixin, _DPRegressor):
    __doc__ = (
        """Differentially private robust linear regression with the Huber loss.

    Minimizes ``(1/n) sum huber_k(<w, x> - y) + (alpha/2) ||w||^2``; the Huber loss is
    k-Lipschitz on all of R^d, so no constraint set is needed. The default solver
    (``"auto"``) is objective perturbation (the catalogue's rule 2), the best candidate of
    the regression study (docs/results.md) with ``alpha="auto"``.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y| (in the model's units, after ``y_bounds``); larger
        labels are clamped to it, silently (a per-row map).
    threshold : float, default=1.0
        The Huber threshold k (in the model's units).
    """
        + _Y_BOUNDS_DOC
        + _INFERENCE_DOC
    )

    _parameter_constraints: dict = {
        **_DPRegressor._parameter_constraints, "threshold": [Interval(Real, 0, None, closed="neither")],
        "inference": ["boolean", dict, None],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, threshold=1.0, accountant=None, y_bounds=None,
                 inference=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant, y_bounds)
        self.threshold = threshold
        self.inference = inference

    def _loss(self):
        return Huber(float(self.threshold))


# The solvers of the exact squared loss without a constraint (no Lipschitz bound needed).
SUFFICIENT_STATISTICS_SOLVERS = ("adassp", "sufficient_statistics")


class DPLinearRegression(InferenceMixin, _DPRegressor):
    __doc__ = (
        """Differentially private least squares.

    ``solver="auto"`` (the default, chosen by the regression study of docs/results.md):
    objective perturbation of the squared loss made Lipschitz beyond the label bound,
    ``(1/n) sum huber_B(<w, x> - y) + (alpha/2) ||w||^2`` with ``B = label_bound`` (the
    squared loss ``r^2/2`` for residuals ``|r| <= B``, linear beyond), no constraint,
    ``alpha="auto"`` by :func:`dperm.defaults.estimator_alpha`. It was the best candidate
    on WINE, BIKE, diabetes and synthetic data at epsilon 0.1 to 4, ahead of AdaSSP.

    ``solver="adassp"`` or ``"sufficient_statistics"`` (Wang 2018): the exact squared loss,
    no constraint, through noisy ``X^T X`` and ``X^T y`` (delta > 0); ``alpha="auto"`` is
    then 0 (AdaSSP chooses its own ridge; SSP adds its public ridge). Any other solver of
    the catalogue: the exact squared loss, which is Lipschitz only on a bounded set, over
    the L2 ball of radius ``radius`` (the ``constraint`` parameter overrides).

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC
        + """
    label_bound : float, default=1.0
        Declared public bound on |y| (in the model's units, after ``y_bounds``); larger
        labels are clamped to it, silently (a per-row map).
    radius : float, default=1.0
        Radius of the L2-ball constraint of the solvers that need one.
    """
        + _Y_BOUNDS_DOC
        + _INFERENCE_DOC
    )

    _parameter_constraints: dict = {
        **_DPRegressor._parameter_constraints, "radius": [Interval(Real, 0, None, closed="neither")],
        "inference": ["boolean", dict, None],
    }

    def __init__(self, epsilon=1.0, delta=1e-5, solver="auto", alpha="auto", data_norm=1.0,
                 label_bound=1.0, fit_intercept=True, intercept_scaling=1.0, constraint=None,
                 solver_params=None, random_state=None, radius=1.0, accountant=None, y_bounds=None,
                 inference=None):
        super().__init__(epsilon, delta, solver, alpha, data_norm, label_bound, fit_intercept,
                         intercept_scaling, constraint, solver_params, random_state, accountant, y_bounds)
        self.radius = radius
        self.inference = inference

    def _inference_loss(self):
        return Squared()  # the intervals are for least squares' coefficients (statsmodels' OLS)

    def _loss(self):
        if self.solver == "auto":  # the study's default: the squared loss, linear beyond the label bound
            return Huber(float(self.label_bound))
        return Squared()

    def _constraint(self):
        if self.constraint is not None:
            return self.constraint
        if self.solver == "auto" or self.solver in SUFFICIENT_STATISTICS_SOLVERS:
            return None
        return ("l2_ball", float(self.radius))

    def _regularizer(self, n_samples, n_features, budget, label_bound=1.0, loss=None, n_classes=2):
        if self.solver in SUFFICIENT_STATISTICS_SOLVERS and isinstance(self.alpha, str) and self.alpha == "auto":
            self.alpha_ = 0.0  # AdaSSP picks its ridge from a private eigenvalue bound; SSP its public one
            return None
        return super()._regularizer(n_samples, n_features, budget, label_bound, loss, n_classes)
