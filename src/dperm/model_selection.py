"""Hyperparameter selection under one total privacy budget, and a warning for the
non-private alternative (scikit-learn's search tools).

scikit-learn's ``GridSearchCV``, ``cross_val_score`` and the other tools of
``sklearn.model_selection`` fit a fresh copy of the estimator once per candidate and fold,
and each such fit of a dperm estimator spends its whole (epsilon, delta) on rows of the same
data set: k fits make the search (k epsilon, k delta)-DP at best, and the chosen candidate,
picked by exact (non-private) validation scores, is not covered at all. dperm's estimators
therefore warn (:class:`~dperm.privacy.budget.PrivacyWarning`) when fitted from inside
those tools without an accountant, and :class:`PrivateSearch` is the private alternative.

Selection method of :class:`PrivateSearch`: random stopping repeat-and-select (Papernot and
Steinke 2022, "Hyperparameter tuning with Renyi differential privacy", ICLR), with the
number of runs drawn from the logarithmic distribution (the truncated negative binomial of
shape 0). Each run fits one candidate drawn uniformly at random on a training part and
scores it on a disjoint validation part with a Laplace-noised count (accuracy for
classifiers, clipped squared error for regressors); only the best run's model, candidate
and noisy score are released. Why this method: it selects among any number of candidates
at a cost close to *twice* that of one run (for epsilon-DP runs, Papernot and Steinke's
Theorem 2; Liu and Talwar 2019 give three times), where composition over the candidates
would cost k times, and its accounting is exact in dp-accounting
(``RepeatAndSelectDpEvent`` under the RDP accountant). The exponential mechanism over
candidates would need every candidate fitted with a share of the budget first.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings

import numpy as np
from scipy.optimize import brentq
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from .privacy.budget import PrivacyBudget, PrivacyWarning
from .privacy.noise import laplace_noise, make_rng

__all__ = ["PrivateSearch", "selection_epsilon", "warn_if_model_selection"]

_SEARCH_PACKAGE = "sklearn.model_selection"


def _inside_sklearn_model_selection() -> bool:
    """Whether a caller on the stack belongs to ``sklearn.model_selection``.

    Reads module names of the call stack only (nothing of the data): every search or
    cross-validation tool of scikit-learn fits its estimator copies from that package, in
    this process or in a joblib worker.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(_SEARCH_PACKAGE):
            return True
        frame = frame.f_back
    return False


def warn_if_model_selection(estimator) -> None:
    """Warn (``PrivacyWarning``) when ``estimator.fit`` runs inside scikit-learn's search or
    cross-validation tools without an accountant: each of their fits spends the budget
    again. The message names only public values (the estimator's class and budget).
    With ``n_jobs > 1`` the fits, and so the warning, happen in joblib's worker
    processes, which may not show it."""
    if getattr(estimator, "accountant", None) is not None or not _inside_sklearn_model_selection():
        return
    name = type(estimator).__name__
    warnings.warn(
        f"{name} is fitted by scikit-learn's model selection (GridSearchCV, cross_val_score, ...): each "
        f"fit spends its own (epsilon={estimator.epsilon}, delta={estimator.delta}) on the same data, so k fits "
        "are only (k*epsilon, k*delta)-DP and the selection itself is not private. Use "
        f"dperm.model_selection.PrivateSearch({name}(), param_grid, epsilon=..., delta=...) to choose "
        "hyperparameters under one total budget.",
        PrivacyWarning,
        stacklevel=4,
    )


# ---------------------------------------------------------------------------- accounting
def _run_event(run_epsilon: float):
    """A DpEvent bounding one epsilon-DP run: binary randomized response with parameter
    epsilon is the dominating pair of every epsilon-DP mechanism (Kairouz, Oh, Viswanath
    2015), so its Renyi divergences bound the run's."""
    from dp_accounting import dp_event

    return dp_event.RandomizedResponseDpEvent(noise_parameter=2.0 / (math.exp(run_epsilon) + 1.0), num_buckets=2)


def selection_event(run_epsilon: float, mean_runs: float):
    """The DpEvent of the whole search: repeat-and-select of epsilon-DP runs, logarithmic
    number of runs (``shape=0``) of mean ``mean_runs``."""
    from dp_accounting import dp_event

    return dp_event.RepeatAndSelectDpEvent(_run_event(run_epsilon), float(mean_runs), 0.0)


def selection_epsilon(run_epsilon: float, mean_runs: float, delta: float) -> float:
    """epsilon(delta) of the search: the one accountant on :func:`selection_event` (its
    route for repeat-and-select: Renyi DP, replace-one)."""
    from .privacy.accountant import epsilon

    return epsilon(selection_event(run_epsilon, mean_runs), delta)


@functools.lru_cache(maxsize=64)  # ~14 accountant calls; searches repeat with the same budget
def _run_epsilon(epsilon: float, delta: float, mean_runs: float) -> float:
    """The largest per-run epsilon whose search is (epsilon, delta)-DP (bisection, 1e-4 relative)."""
    lo, hi = 0.0, epsilon  # the search costs at least one run
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if selection_epsilon(mid, mean_runs, delta) <= epsilon else (lo, mid)
    if lo == 0.0:
        raise ValueError(f"no per-run epsilon fits the budget ({epsilon}, {delta}); raise delta or epsilon")
    return lo


def _logarithmic_parameter(mean_runs: float) -> float:
    """p of numpy's logseries (P(K = k) proportional to p^k / k) with mean ``mean_runs``."""
    if mean_runs <= 1.0 + 1e-9:
        raise ValueError(f"mean_runs must be > 1, got {mean_runs}")
    return brentq(lambda p: -p / ((1.0 - p) * math.log1p(-p)) - mean_runs, 1e-12, 1.0 - 1e-15)


# ---------------------------------------------------------------------------- the search
class PrivateSearch(MetaEstimatorMixin, BaseEstimator):
    """Choose hyperparameters of a dperm estimator under one total (epsilon, delta).

    Random-stopping repeat-and-select (Papernot and Steinke 2022): draw the number of runs
    K from the logarithmic distribution of mean ``mean_runs`` (independent of the data);
    in each run fit a candidate drawn uniformly from ``param_grid`` with a pure
    ``epsilon_run``-DP budget on the training part and score it on the disjoint
    validation part with Laplace noise of scale ``1 / epsilon_run`` on the count of
    correct predictions (classifiers) or ``4 B^2 / epsilon_run`` on the sum of squared
    errors clipped to ``4 B^2``, B the label bound (regressors). A changed training row
    moves the fit (the score is a post-processing of it), a changed validation row the
    score only, so each run is ``epsilon_run``-DP. The best run's model, parameters and
    noisy score are released; K and the other runs are not.

    Parameters
    ----------
    estimator : dperm estimator
        Its ``epsilon`` and ``delta`` are replaced by the run budget (epsilon_run, 0); its
        solver must support pure DP (``objective_perturbation``, ``output_perturbation``
        and the solver chosen by ``"auto"`` for the convex linear estimators do).
    param_grid : dict or list of dicts, optional
        Candidates as for ``GridSearchCV``. Default: ``alpha`` at 1/9, 1/3, 1, 3 and 9
        times the ``alpha="auto"`` value of a run (public quantities only).
    epsilon : float, default=1.0
        Total epsilon of the whole search (all runs, the selection, the released model).
    delta : float, default=1e-5
        Total delta (> 0: the RDP accounting converts to (epsilon, delta)).
    mean_runs : float, optional
        Mean number of runs; default twice the number of candidates. The per-run epsilon
        depends little on it (about epsilon / 2 for delta = 1e-5).
    validation_fraction : float, default=0.2
        Share of rows (chosen by a random permutation, independent of the data) held out
        for the noisy scores; the released model is trained on the rest.
    random_state : None, int or numpy.random.Generator
        Source of the split, the number of runs, the candidates and all noise.

    Attributes
    ----------
    best_estimator_, best_params_, best_score_ :
        The released run: its fitted estimator, candidate and noisy validation score.
    run_epsilon_ : float
        The pure epsilon of each run.
    privacy_spent_ : PrivacyBudget
        The accounted (epsilon, delta) of the whole search (at most the budget).
    event_ : dp_accounting DpEvent
        ``RepeatAndSelectDpEvent`` describing the search.

    References
    ----------
    Papernot, Steinke. Hyperparameter tuning with Renyi differential privacy. ICLR 2022.
    Liu, Talwar. Private selection from private candidates. STOC 2019. Kairouz, Oh,
    Viswanath. The composition theorem for differential privacy. ICML 2015.
    """

    def __init__(self, estimator, param_grid=None, *, epsilon=1.0, delta=1e-5, mean_runs=None,
                 validation_fraction=0.2, random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.mean_runs = mean_runs
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def _candidates(self, n_train: int, n_features: int, run_epsilon: float) -> list[dict]:
        if self.param_grid is not None:
            candidates = list(ParameterGrid(self.param_grid))
            if not candidates:
                raise ValueError("param_grid has no candidate")
            return candidates
        from .defaults import estimator_alpha

        est = self.estimator
        d = n_features + (1 if getattr(est, "fit_intercept", False) else 0)
        base = estimator_alpha(est._loss(), n_train, d, run_epsilon, 0.0, data_norm=est._effective_norm(),
                               label_bound=float(getattr(est, "label_bound", 1.0)), constraint=est._constraint(),
                               solver=est.solver)
        return [{"alpha": base * factor} for factor in (1 / 9, 1 / 3, 1.0, 3.0, 9.0)]

    def _noisy_score(self, model, X, y, run_epsilon, rng) -> float:
        """Noisy validation score: Laplace on a count of replace-one sensitivity 1
        (classifiers) or on a sum of squared errors each clipped to 4 B^2 (regressors)."""
        m = X.shape[0]
        if is_classifier(model):
            correct = float(np.sum(model.predict(X) == y))
            return (correct + float(laplace_noise(rng, 1.0 / run_epsilon, 1)[0])) / m
        cap = 4.0 * float(getattr(model, "label_bound", 1.0)) ** 2
        errors = float(np.sum(np.minimum((model.predict(X) - np.asarray(y, dtype=float)) ** 2, cap)))
        return -(errors + float(laplace_noise(rng, cap / run_epsilon, 1)[0])) / m

    def fit(self, X, y):
        """Run the search on (X, y) and keep the best run (see the class docstring)."""
        budget = PrivacyBudget(self.epsilon, self.delta)
        if budget.delta <= 0:
            raise ValueError("PrivateSearch needs delta > 0 (its RDP accounting converts to (epsilon, delta))")
        if not 0.0 < float(self.validation_fraction) < 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction}")
        if hasattr(X, "tocsr"):
            X = X.tocsr()
        n = X.shape[0]
        n_val = int(round(float(self.validation_fraction) * n))
        if n_val < 1 or n - n_val < 2:
            raise ValueError(f"{n} rows are too few to hold out a validation fraction of {self.validation_fraction}")
        rng = make_rng(self.random_state)
        order = rng.permutation(n)
        val, train = order[:n_val], order[n_val:]
        y = np.asarray(y)
        X_train, y_train, X_val, y_val = X[train], y[train], X[val], y[val]

        n_candidates = len(list(ParameterGrid(self.param_grid))) if self.param_grid is not None else 5
        mean_runs = float(self.mean_runs) if self.mean_runs is not None else 2.0 * n_candidates
        run_epsilon = _run_epsilon(budget.epsilon, budget.delta, mean_runs)
        candidates = self._candidates(len(train), X.shape[1], run_epsilon)
        runs = int(rng.logseries(_logarithmic_parameter(mean_runs)))

        best = None
        for _ in range(runs):
            params = candidates[int(rng.integers(len(candidates)))]
            model = clone(self.estimator).set_params(**params, epsilon=run_epsilon, delta=0.0,
                                                     random_state=rng.integers(2**63))
            model.fit(X_train, y_train)
            score = self._noisy_score(model, X_val, y_val, run_epsilon, rng)
            if best is None or score > best[0]:
                best = (score, params, model)
        self.best_score_, self.best_params_, self.best_estimator_ = best
        self.run_epsilon_ = run_epsilon
        self.event_ = selection_event(run_epsilon, mean_runs)
        self.privacy_spent_ = PrivacyBudget(min(selection_epsilon(run_epsilon, mean_runs, budget.delta), budget.epsilon),
                                            budget.delta)
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def predict_proba(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def score(self, X, y, sample_weight=None):
        """The released model's ``score`` (not private: it reads X and y)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y, sample_weight=sample_weight)
