"""Shared machinery of the scikit-learn estimators: problem building, solver dispatch,
intercept handling and the privacy accounting of one-vs-rest."""

from __future__ import annotations

import inspect
import math
import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, is_classifier
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import (_check_sample_weight, check_consistent_length, check_is_fitted, column_or_1d,
                                      validate_data)

from .._validation import check_sample_weight, finite_features, non_numeric_columns_error

# scikit-learn >= 1.6 refuses all-zero weights unless told otherwise (older ones accept them)
_ALLOW_ZERO_WEIGHTS = ({"allow_all_zero_weights": True}
                       if "allow_all_zero_weights" in inspect.signature(_check_sample_weight).parameters else {})
from ..algorithms import registry
from ..algorithms.auto import choose_algorithm
from ..distributed import check_supported, estimators as dask_input, is_dask_collection, make_problem
from ..defaults import estimator_alpha
from ..expectations import NoiseDominatesWarning, noise_dominates
from .._sklearn_search import warn_if_model_selection
from .._warnings import user_stacklevel
from ..privacy.budget import BudgetAccountant, PrivacyBudget
from ..privacy.mechanisms import charging
from ..privacy.noise import make_rng

__all__ = ["DPLinearModelMixin", "check_categorical_target", "class_weights", "final_class_weights", "MAX_UNDECLARED_CLASSES"]

# More distinct labels than this, undeclared, look like a regression target (a forgotten
# regression loss), not a label set.
MAX_UNDECLARED_CLASSES = 20


def class_weights(class_weight, classes=None) -> np.ndarray | None:
    """The declared ``class_weight`` as one weight per class of ``classes`` (their order;
    labels absent from the dict weigh 1, as in scikit-learn), scaled into [0, 1] by the
    largest (the replace-one sensitivity needs weights <= 1); None for None. Public inputs
    only, so the pipeline calls it before any charge (``classes`` None: the values alone).
    ``"balanced"`` is refused: it needs the class counts, which are data."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        if class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is refused: it divides by the class counts, which are private (a "
                "statistic of the data, not covered by the fit's budget). Declare the weights as a dict from "
                "public knowledge (e.g. known class shares: {label: 1 / share}), or count the classes "
                "privately first (a noisy histogram, e.g. the discrete Laplace mechanism, at a share of the "
                "total budget) and pass weights computed from those noisy counts")
        raise ValueError(f"class_weight must be None or a dict {{label: weight}}, got {class_weight!r}")
    if not isinstance(class_weight, dict) or not class_weight:
        raise ValueError("class_weight must be None or a non-empty dict {label: weight >= 0}")
    values = np.asarray(list(class_weight.values()), dtype=float)
    if not np.all(np.isfinite(values) & (values >= 0)) or values.max() <= 0:
        raise ValueError("class_weight values must be finite numbers >= 0, at least one of them > 0")
    if classes is None:
        return None
    known = np.isin(np.asarray(list(class_weight), dtype=object), np.asarray(classes, dtype=object))
    if not known.all():  # never quote a label: undeclared classes come from y
        raise ValueError("class_weight names a label that is not one of the classes; declare the classes "
                         "(classes=[...]) and weigh only those")
    per_class = np.array([float(class_weight.get(c.item() if hasattr(c, "item") else c, 1.0)) for c in classes])
    return per_class / per_class.max()


def final_class_weights(estimator) -> np.ndarray | None:
    """An estimator's declared ``class_weight`` per declared class (:func:`class_weights`;
    None: no weights, or no declared classes), from its parameters alone: the pipeline
    calls it before any charge, so that ``"balanced"`` and malformed weights are refused
    before the preprocessing spends its share."""
    params = estimator.get_params(deep=False)
    if params.get("class_weight") is None:
        return None
    classes = params.get("classes")
    return class_weights(params["class_weight"], None if classes is None else np.unique(np.asarray(classes)))


def check_categorical_target(y, estimator: str = "the classifier") -> None:
    """Refuse a classification target that looks like a regression target: non-integer
    numbers, or more than ``MAX_UNDECLARED_CLASSES`` distinct values with no declared
    ``classes``. Input validation before any budget is charged, shown to the person
    running the fit: it describes the problem without quoting a value of y."""
    y = np.asarray(y)
    advice = ("for regression use DPLinearRegression or DPHuberRegressor (with a declared label_bound); for a "
              "classifier with that many classes declare them, e.g. classes=[...]")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y) & (y == np.round(y))):
        # scikit-learn's words first (its estimator checks look for them)
        raise ValueError(f"Unknown label type: continuous. {estimator} got a target with non-integer values, "
                         f"as a regression target has; {advice}")
    if len(np.unique(y)) > MAX_UNDECLARED_CLASSES:
        raise ValueError(f"{estimator} got a target with more than {MAX_UNDECLARED_CLASSES} distinct values and "
                         f"no declared classes, as a regression target has; {advice}")


class DPLinearModelMixin(BaseEstimator):
    """Base of dperm's linear estimators (not for direct use).

    Subclasses set ``_loss(self)`` (the loss object).
    The intercept is a constant feature ``intercept_scaling`` appended to every row;
    the learner's declared row norm is then ``sqrt(data_norm^2 + intercept_scaling^2)``,
    so the intercept is regularized and bounded like every other coordinate.
    """

    # scikit-learn's parameter validation, run at the start of every fit. Only the
    # parameters whose bad values would otherwise pass silently or fail late are listed
    # (epsilon and delta are checked by PrivacyBudget with privacy-specific messages;
    # alpha by _regularizer).
    _parameter_constraints: dict = {
        "data_norm": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "solver": [str],
        "solver_params": [dict, None],
        "accountant": [BudgetAccountant, None],
    }

    def _regularizer(self, n_samples: int, n_features: int, budget: PrivacyBudget, label_bound: float = 1.0,
                     loss=None, n_classes: int = 2):
        """("l2", alpha) for the fit of shape (n_samples, n_features) under ``budget``;
        ``alpha="auto"`` resolves by :func:`dperm.defaults.estimator_alpha` (public
        quantities only: the shape, the budget, the declared bounds, and for a multinomial
        ``loss`` the declared number of classes); stored in ``alpha_``."""
        if isinstance(self.alpha, str) and self.alpha == "auto":
            alpha = estimator_alpha(self._loss() if loss is None else loss, n_samples, n_features, budget.epsilon,
                                    budget.delta, data_norm=self._effective_norm(), label_bound=label_bound,
                                    constraint=self._constraint(), solver=self.solver, n_classes=n_classes)
        elif isinstance(self.alpha, str) or isinstance(self.alpha, bool):
            raise ValueError(f"alpha must be 'auto' or a finite number >= 0, got {self.alpha!r}")
        else:
            alpha = float(self.alpha)
            if not (math.isfinite(alpha) and alpha >= 0):
                raise ValueError(f"alpha must be 'auto' or a finite number >= 0, got {self.alpha}")
        self.alpha_ = alpha
        self._warn_if_noise_dominates(n_samples, n_features, budget, label_bound,
                                      self._loss() if loss is None else loss, n_classes, alpha)
        return ("l2", alpha) if alpha > 0 else None

    def _warn_if_noise_dominates(self, n_samples, n_features, budget, label_bound, loss, n_classes, alpha):
        """A NoiseDominatesWarning, once per fit, when the noise will dominate the model:
        computed from public inputs only (:func:`dperm.expectations.noise_dominates`),
        before the solver reads the data."""
        if getattr(self, "_noise_checked", False):
            return
        self._noise_checked = True
        message = noise_dominates(n_samples, n_features, budget.epsilon, budget.delta, loss=loss, alpha=alpha,
                                  data_norm=self._effective_norm(), label_bound=label_bound,
                                  constraint=self._constraint(), solver=self.solver, n_classes=n_classes)
        if message is not None:
            warnings.warn(f"{type(self).__name__}: {message}", NoiseDominatesWarning, stacklevel=user_stacklevel())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # NaN and infinite entries of X are taken, as missing values imputed by 0 (a refusal
        # would depend on one row: docs/privacy.md, "Totality"); scikit-learn's
        # check_estimators_nan_inf, which expects an error, is then skipped
        tags.input_tags.allow_nan = True
        # Fits are random by design (the noise is the privacy); with a fixed
        # random_state they are reproducible.
        tags.non_deterministic = False
        return tags

    def _constraint(self):
        return self.constraint

    def _solver_name(self, problem, budget) -> str:
        if self.solver == "auto":
            return choose_algorithm(problem, budget)[0]
        registry.get(self.solver)  # clear error for an unknown name
        return self.solver

    def _validate(self, X, y=None, reset=True):
        """X as a float matrix (float32 kept, CSR kept) whose NaN and infinite entries are 0,
        and y as a 1-D vector of X's length (its values unchecked: the fit maps them).

        The shape, the dtype and the lengths are public and checked (scikit-learn's
        errors); a value of X is never refused (docs/privacy.md, "Totality"): a NaN or
        infinite entry is a missing value, imputed by 0 without reading other rows
        (:func:`dperm._validation.finite_features`; no copy of a finite X)."""
        if is_dask_collection(X):  # X stays on the cluster, mapped block by block
            return dask_input.validate(self, X, y, reset=reset)
        kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset,
                      ensure_min_samples=2 if reset else 1, ensure_all_finite=False)
        try:
            X = validate_data(self, X, **kwargs)
        except ValueError as err:
            if "could not convert" in str(err):  # scikit-learn's message quotes a data value
                raise non_numeric_columns_error(X) from None
            raise
        X = finite_features(X)
        if y is None:
            return X
        y = column_or_1d(y, warn=True)  # (scikit-learn's _check_y, without its refusal of NaN)
        check_consistent_length(X, y)
        return X, y

    def _effective_norm(self) -> float:
        return math.hypot(float(self.data_norm), float(self.intercept_scaling)) if self.fit_intercept else float(self.data_norm)

    def _fit_binary(self, X, y_signed, budget: PrivacyBudget, rng, label_bound=1.0, sample_weight=None):
        """One private fit (the intercept as a constant column ``intercept_scaling`` of the
        problem, never copied into X); returns (coef, intercept, PrivateFit)."""
        scaling = float(self.intercept_scaling) if self.fit_intercept else 0.0
        problem = make_problem(  # a DaskERMProblem for Dask input
            X,
            y_signed,
            self._loss(),
            self._regularizer(X.shape[0], X.shape[1] + (scaling != 0), budget, label_bound),
            self._constraint(),
            data_norm=self._effective_norm(),
            label_bound=label_bound,
            intercept_scaling=scaling,
            sample_weight=sample_weight,
        )
        self.solver_ = self._solver_name(problem, budget)
        check_supported(problem, self.solver_)
        with charging(getattr(self, "accountant", None)):  # charged before the solver reads the data
            fit = registry.get(self.solver_).fit(problem, budget, rng=rng, **(self.solver_params or {}))
        if self.fit_intercept:
            return fit.coef[:-1], fit.coef[-1] * scaling, fit
        return fit.coef, 0.0, fit

    def _validate_xy(self, X, y):
        self._validate_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X, y = self._validate(X, y)
        if is_classifier(self) and getattr(self, "classes", None) is None and not is_dask_collection(y):
            check_categorical_target(y, type(self).__name__)
        return X, y

    @staticmethod
    def _sample_weight(sample_weight, X):
        """``sample_weight`` made total (docs/privacy.md, "Totality"): a number broadcast,
        each weight cast to a number (a value that is not one, NaN included, becomes 0)
        and clamped into [0, 1] (privacy: a record's weight may only shrink its
        influence), each by itself and without a message (a refusal would tell whether
        some weight is out of range); all zeros allowed. ``None`` stays ``None`` (an
        unweighted fit). With Dask data the weights are checked (shape, [0, 1]) block by
        block when the problem is built, never gathered."""
        if sample_weight is None:
            return None
        if is_dask_collection(X):
            return sample_weight
        if is_dask_collection(sample_weight):
            raise TypeError("sample_weight is a Dask collection but X is not; pass it in memory")
        from ..preprocessing.cast import real_column, real_value

        n = X.shape[0]
        if hasattr(sample_weight, "to_numpy"):
            sample_weight = sample_weight.to_numpy()
        raw = np.asarray(sample_weight)  # an array-like's own conversion (its type, not its values)
        if raw.dtype.kind not in "biuf":
            raw = np.asarray(sample_weight, dtype=object)
        if raw.ndim == 0:
            weights = np.full(n, real_value(raw.item()))
        else:
            if raw.ndim != 1 or raw.shape[0] != n:
                raise ValueError(f"sample_weight must be 1-D of length n_samples = {n}, got shape {raw.shape}")
            weights = real_column(raw)
        weights = np.clip(np.where(np.isnan(weights), 0.0, weights), 0.0, 1.0)
        return check_sample_weight(weights, n)

    def _class_weighted(self, sample_weight, y):
        """``sample_weight`` times the declared ``class_weight`` of each row's label, scaled
        into [0, 1] by the largest weight (labels absent from the dict weigh 1, as in
        scikit-learn; :func:`class_weights`). The weights are public (declared); each row's
        weight is a function of its own label, part of its private record, so the guarantee
        is that of ``sample_weight`` (docs/estimators.md, "Class weights")."""
        class_weight = getattr(self, "class_weight", None)
        per_class = class_weights(class_weight, self.classes_)
        if per_class is None:
            return sample_weight
        if is_dask_collection(y):
            raise ValueError("class_weight has no Dask path yet; pass the data in memory, or fold the weights "
                             "into sample_weight")
        weights = per_class[np.searchsorted(self.classes_, y)]
        return weights if sample_weight is None else weights * sample_weight

    def _budget(self) -> PrivacyBudget:
        budget = PrivacyBudget(self.epsilon, self.delta)
        self._noise_checked = False  # the noise warning is shown once per fit (_regularizer)
        warn_if_model_selection(self)  # every fit starts here: a search's fits each spend the budget
        return budget

    def _rng(self):
        # None stays None: the algorithms then take the production path (floating-point-
        # safe noise from the OS where they have one, OS entropy otherwise)
        return None if self.random_state is None else make_rng(self.random_state)

    def _set_n_iter(self, fits, *, single: bool = False) -> None:
        """``n_iter_`` = the public step counts of the fits, when the solvers have one.

        Only a step count fixed by the hyper-parameters (``hyperparameters["steps"]``) is
        released; a solver run to a tolerance has a data-dependent count, which would leak,
        so ``n_iter_`` is then not set. ``single``: one fit, an int (as scikit-learn's
        regressors); otherwise an array with one count per fit (as its classifiers).
        """
        steps = [fit.hyperparameters.get("steps") for fit in fits]
        if hasattr(self, "n_iter_"):
            del self.n_iter_
        if all(isinstance(s, (int, np.integer)) for s in steps):
            self.n_iter_ = int(steps[0]) if single else np.asarray(steps, dtype=np.int64)

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate(X, reset=False)
        scores = X @ self.coef_.T
        return np.asarray(scores) + self.intercept_
