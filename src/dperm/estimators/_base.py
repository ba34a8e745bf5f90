"""Shared machinery of the scikit-learn estimators: problem building, solver dispatch,
intercept handling and the privacy accounting of one-vs-rest."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..algorithms import registry
from ..algorithms.auto import choose_algorithm
from ..defaults import estimator_alpha
from ..model_selection import warn_if_model_selection
from ..privacy.budget import PrivacyBudget
from ..privacy.noise import make_rng
from ..problem.erm import ERMProblem

__all__ = ["DPLinearModelMixin"]


def _augment(X, scaling: float):
    """Append the constant intercept feature ``scaling`` as the last column."""
    if scaling == 0:
        return X
    column = np.full((X.shape[0], 1), scaling, dtype=X.dtype)
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(column)], format="csr")
    return np.hstack([X, column])


class DPLinearModelMixin(BaseEstimator):
    """Base of dperm's linear estimators (not for direct use).

    Subclasses set ``_loss(self)`` (the loss object).
    The intercept is a constant feature ``intercept_scaling`` appended to every row;
    the learner's declared row norm is then ``sqrt(data_norm^2 + intercept_scaling^2)``,
    so the intercept is regularized and bounded like every other coordinate.
    """

    def _regularizer(self, n_samples: int, n_features: int, budget: PrivacyBudget, label_bound: float = 1.0):
        """("l2", alpha) for the fit of shape (n_samples, n_features) under ``budget``;
        ``alpha="auto"`` resolves by :func:`dperm.defaults.estimator_alpha` (public
        quantities only: the shape, the budget, the declared bounds); stored in ``alpha_``."""
        if isinstance(self.alpha, str) and self.alpha == "auto":
            alpha = estimator_alpha(self._loss(), n_samples, n_features, budget.epsilon, budget.delta,
                                    data_norm=self._effective_norm(), label_bound=label_bound,
                                    constraint=self._constraint(), solver=self.solver)
        elif isinstance(self.alpha, str) or isinstance(self.alpha, bool):
            raise ValueError(f"alpha must be 'auto' or a finite number >= 0, got {self.alpha!r}")
        else:
            alpha = float(self.alpha)
            if not (math.isfinite(alpha) and alpha >= 0):
                raise ValueError(f"alpha must be 'auto' or a finite number >= 0, got {self.alpha}")
        self.alpha_ = alpha
        return ("l2", alpha) if alpha > 0 else None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
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
        kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset, ensure_min_samples=2 if reset else 1)
        if y is None:
            return validate_data(self, X, **kwargs)

        return validate_data(self, X, y, y_numeric=False, **kwargs)

    def _effective_norm(self) -> float:
        return math.hypot(float(self.data_norm), float(self.intercept_scaling)) if self.fit_intercept else float(self.data_norm)

    def _fit_binary(self, X, y_signed, budget: PrivacyBudget, rng, label_bound=1.0):
        """One private fit on augmented X; returns (coef, intercept, PrivateFit)."""
        scaling = float(self.intercept_scaling) if self.fit_intercept else 0.0
        problem = ERMProblem(
            _augment(X, scaling),
            y_signed,
            self._loss(),
            self._regularizer(X.shape[0], X.shape[1] + (scaling != 0), budget, label_bound),
            self._constraint(),
            data_norm=self._effective_norm(),
            label_bound=label_bound,
        )
        self.solver_ = self._solver_name(problem, budget)
        fit = registry.get(self.solver_).fit(problem, budget, rng=rng, **(self.solver_params or {}))
        if self.fit_intercept:
            return fit.coef[:-1], fit.coef[-1] * scaling, fit
        return fit.coef, 0.0, fit

    def _validate_xy(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        return self._validate(X, y)

    def _budget(self) -> PrivacyBudget:
        budget = PrivacyBudget(self.epsilon, self.delta)
        warn_if_model_selection(self)  # every fit starts here: a search's fits each spend the budget
        return budget

    def _rng(self):
        return make_rng(self.random_state)

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate(X, reset=False)
        scores = X @ self.coef_.T
        return np.asarray(scores) + self.intercept_
