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
shape 0). Each run fits one candidate drawn uniformly at random with the estimator's own
mechanism (Gaussian for an (epsilon, delta) budget) and scores it with a Laplace-noised
count (accuracy for classifiers, clipped squared error for regressors); only the best run's
model, candidate and noisy score are released. Why this method: it selects among any
number of candidates at a cost close to *twice* that of one run in Renyi DP (Papernot and
Steinke's Theorem 2; Liu and Talwar 2019 give three times for (epsilon, delta) runs), where
composition over the candidates would cost k times. Its accounting is exact: the runs'
Renyi curves come from their events (:mod:`dperm.privacy.renyi`), each computed from public
inputs before any data is read, and the theorem's transform is dp-accounting's. The
exponential mechanism over candidates would need every candidate fitted with a share of
the budget first.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from dp_accounting import dp_event as _dpe
from scipy.optimize import brentq
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils.validation import check_is_fitted

from .expectations import NoiseDominatesWarning
from .privacy import events as ev
from .privacy.budget import PrivacyBudget, PrivacyWarning
from .privacy.mechanisms import charge, charging
from .privacy.exact_sampling import GeneratorSource, SecureRandom, discrete_laplace
from .privacy.noise import make_rng
from .preprocessing.cast import MISSING, canonical_label, label_column, match_declared, real_column
from ._sklearn_search import warn_if_model_selection  # noqa: F401  (used by every fit; re-exported here)
from ._warnings import user_stacklevel

__all__ = ["PrivateSearch", "selection_epsilon", "warn_if_model_selection"]

# ---------------------------------------------------------------------------- accounting
def selection_event(run_event, mean_runs: float):
    """The DpEvent of the whole search: repeat-and-select of runs described by
    ``run_event`` (a :class:`~dperm.privacy.events.OneOfRelease` of the candidates' runs),
    logarithmic number of runs (``shape=0``) of mean ``mean_runs``."""
    return ev.RepeatAndSelectDpEvent(run_event, float(mean_runs), 0.0)


def selection_epsilon(run_event, mean_runs: float, delta: float) -> float:
    """epsilon(delta) of the search: the one accountant on :func:`selection_event` (its
    route for repeat-and-select: Renyi DP, replace-one)."""
    from .privacy.accountant import epsilon

    return epsilon(selection_event(run_event, mean_runs), delta)


def pure_run_event(run_epsilon: float):
    """A DpEvent bounding any pure ``run_epsilon``-DP run: binary randomized response, the
    dominating pair of every epsilon-DP mechanism (Kairouz, Oh, Viswanath 2015)."""
    return _dpe.RandomizedResponseDpEvent(noise_parameter=2.0 / (math.exp(run_epsilon) + 1.0), num_buckets=2)


def _largest_feasible(plan, epsilon: float, delta: float, mean_runs: float):
    """The largest run epsilon in (0, epsilon] whose search (``plan(e)`` gives its run event)
    is (epsilon, delta)-DP: bisection to 1e-3 relative, returning the certified point."""
    lo, hi, best = 0.0, float(epsilon), None
    while hi - lo > 1e-3 * hi:
        mid = 0.5 * (lo + hi)
        planned = plan(mid)
        if selection_epsilon(planned[-1], mean_runs, delta) <= epsilon:
            lo, best = mid, planned
        else:
            hi = mid
    if best is None:
        raise ValueError(f"no run budget fits the total ({epsilon}, {delta}); raise epsilon or delta")
    return lo, best


def _logarithmic_parameter(mean_runs: float) -> float:
    """p of numpy's logseries (P(K = k) proportional to p^k / k) with mean ``mean_runs``."""
    if mean_runs <= 1.0 + 1e-9:
        raise ValueError(f"mean_runs must be > 1, got {mean_runs}")
    return brentq(lambda p: -p / ((1.0 - p) * math.log1p(-p)) - mean_runs, 1e-12, 1.0 - 1e-15)


# ---------------------------------------------------------------------------- the search
# The noisy score is an integer (a count of correct predictions, or a sum of clipped
# squared errors in units of cap / _SCORE_UNITS) plus discrete Laplace noise: exact integer
# arithmetic (no floating-point attack). Its scale, per unit of sensitivity: a thousandth of
# the scored rows (0.14 accuracy points of standard deviation), and at least what keeps the
# score's pure epsilon at a tenth of the total budget. Public: row count and budget only.
_SCORE_NOISE_SHARE = 1e-3
_SCORE_BUDGET_SHARE = 0.1
_SCORE_UNITS = 1024
# a regressor's score moves by at most one cap (_SCORE_UNITS units) between neighbours,
# plus one unit for the rounding and one for the correctly rounded float sum (math.fsum)
_REGRESSION_SENSITIVITY = _SCORE_UNITS + 2


def _parameter_grid(param_grid):
    # imported here: sklearn.model_selection costs a tenth of a second, and every
    # estimator imports this module (for warn_if_model_selection), `dperm fit` included
    from sklearn.model_selection import ParameterGrid

    return ParameterGrid(param_grid)


def _is_pipeline(estimator) -> bool:
    from .pipeline import DPPipeline

    return isinstance(estimator, DPPipeline)


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def _objects(values) -> np.ndarray:
    """A 1-D column as an object array (a Series by its values), never by a value's type."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object)
    values = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    return values.ravel() if values.ndim > 1 else values


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a label whose comparison fails is no class: a miss
        return False


def _hits(model, predicted, truth) -> int:
    """The rows whose prediction is their label, labels compared as the fit matches them
    (canonical by value, text matched to declared classes, :mod:`dperm.preprocessing.cast`):
    a label that is no class is a miss, decided by that row alone, and nothing raises."""
    final = model.steps[-1][1] if _is_pipeline(model) else model
    predicted = label_column(_objects(predicted))
    truth = label_column(_objects(truth))
    classes = getattr(final, "classes", None)
    if classes is not None:
        truth = match_declared(truth, [canonical_label(c) for c in classes])
    return int(sum(1 for p, t in zip(predicted, truth) if t is not MISSING and _same(p, t)))


class PrivateSearch(MetaEstimatorMixin, BaseEstimator):
    """Choose hyperparameters of a dperm estimator under one total (epsilon, delta).

    Random-stopping repeat-and-select (Papernot and Steinke 2022): draw the number of runs
    K from the logarithmic distribution of mean ``mean_runs`` (independent of the data);
    in each run fit a candidate drawn uniformly from ``param_grid`` with the run budget
    ``(run_epsilon_, run_delta_)`` (the estimator's own mechanism, Gaussian when delta > 0)
    and score it with discrete Laplace noise on the count of correct predictions
    (classifiers) or on the sum of squared errors clipped to ``4 B^2``, B the label bound,
    in integer units of ``4 B^2 / 1024`` (regressors). The best run's model, parameters and
    noisy score are released; K and the other runs are not. With ``random_state=None``
    every run takes its estimator's floating-point-safe path where it has one and the
    score noise comes from the operating system's secure source (the number of runs and
    the candidates, independent of the data, from NumPy seeded by OS entropy).

    Accounting, all from public inputs and before any data is read: each candidate's run
    is described by its event (the fit's event, computed by fitting a copy of the
    estimator on a stand-in of zeros with the same shape and label set: an event depends
    only on the shape, the declared bounds, the budget and the hyperparameters), plus the
    score's :class:`~dperm.privacy.events.DiscreteLaplaceRelease`. A run that draws its candidate uniformly is a
    :class:`~dperm.privacy.events.OneOfRelease` of them, whose Renyi curve is the worst
    candidate's (:mod:`dperm.privacy.renyi`); the search is the
    ``RepeatAndSelectDpEvent`` of that run (``event_``), and ``run_epsilon_`` is the
    largest value whose search is within the budget. Scores on the training rows
    (``validation_fraction=0``, the default) compose with the fit (a run's curve is the
    sum); on a disjoint held-out part a changed row moves either the fit or the score,
    so a run's curve is the larger of the two.

    Parameters
    ----------
    estimator : dperm estimator
        Its ``epsilon``, ``delta``, ``random_state`` and ``accountant`` are set by the search.
    param_grid : dict or list of dicts, optional
        Candidates as for ``GridSearchCV``. Default: ``alpha`` at 1/9, 1/3, 1, 3 and 9
        times the ``alpha="auto"`` value of a run (public quantities only).
    epsilon : float, default=1.0
        Total epsilon of the whole search (all runs, the selection, the released model).
    delta : float, default=1e-5
        Total delta (> 0: the Renyi accounting converts to (epsilon, delta)). Each run's
        fit is given the same delta as its own calibration target.
    mean_runs : float, optional
        Mean number of runs; default twice the number of candidates.
    validation_fraction : float, default=0.0
        Share of rows (chosen by a random permutation, independent of the data) held out
        for the noisy scores; 0 scores each run on its own training rows (differential
        privacy bounds the overfitting this could reward).
    random_state : None, int or numpy.random.Generator
        Source of the split, the number of runs, the candidates and all noise.
    accountant : BudgetAccountant, optional
        Charged once with ``event_`` before any run; the runs themselves charge nothing.

    Attributes
    ----------
    best_estimator_, best_params_, best_score_ :
        The released run: its fitted estimator, candidate and noisy validation score.
    run_epsilon_, run_delta_ : float
        The budget each run's fit is calibrated to.
    privacy_spent_ : PrivacyBudget
        The accounted (epsilon, delta) of the whole search (at most the budget).
    event_ : dp_accounting DpEvent
        ``RepeatAndSelectDpEvent`` describing the search.

    References
    ----------
    Papernot, Steinke. Hyperparameter tuning with Renyi differential privacy. ICLR 2022.
    Liu, Talwar. Private selection from private candidates. STOC 2019. Mironov. Renyi
    differential privacy. CSF 2017.
    """

    def __init__(self, estimator, param_grid=None, *, epsilon=1.0, delta=1e-5, mean_runs=None,
                 validation_fraction=0.0, random_state=None, accountant=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.mean_runs = mean_runs
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.accountant = accountant

    # ------------------------------------------------------------------ planning (public inputs only)
    def _candidates(self, n_train: int, n_features: int, run_budget: PrivacyBudget) -> list[dict]:
        if self.param_grid is not None:
            candidates = list(_parameter_grid(self.param_grid))
            if not candidates:
                raise ValueError("param_grid has no candidate")
            return candidates
        if _is_pipeline(self.estimator):
            raise ValueError("PrivateSearch over a pipeline needs a param_grid (with step-prefixed names, e.g. "
                             "{'dplogisticregression__alpha': [...]})")
        from .defaults import estimator_alpha

        est = self.estimator
        d = n_features + (1 if getattr(est, "fit_intercept", False) else 0)
        base = estimator_alpha(est._loss(), n_train, d, run_budget.epsilon, run_budget.delta,
                               data_norm=est._effective_norm(), label_bound=float(getattr(est, "label_bound", 1.0)),
                               constraint=est._constraint(), solver=est.solver)
        return [{"alpha": base * factor} for factor in (1 / 9, 1 / 3, 1.0, 3.0, 9.0)]

    def _run(self, params: dict, run_budget: PrivacyBudget, seed):
        return clone(self.estimator).set_params(**params, epsilon=run_budget.epsilon, delta=run_budget.delta,
                                                random_state=seed, accountant=None)

    def _score_event(self, m_score: int) -> ev.DiscreteLaplaceRelease:
        """The noisy score's event (public: the scored row count and the budget)."""
        sensitivity = 1 if is_classifier(self.estimator) else _REGRESSION_SENSITIVITY
        per_unit = max(_SCORE_NOISE_SHARE * m_score, 1.0 / (_SCORE_BUDGET_SHARE * float(self.epsilon)))
        return ev.DiscreteLaplaceRelease(scale=math.ceil(sensitivity * per_unit), sensitivity=sensitivity)

    def _plan(self, run_epsilon: float, stand_in, m_train: int, m_score: int, n_features: int, held_out: bool):
        """Candidates and the run event at ``run_epsilon``, from public inputs only: each
        candidate's fit event comes from a fit on ``stand_in`` (zeros of the training shape,
        labels cycling through the label set)."""
        run_budget = PrivacyBudget(run_epsilon, float(self.delta))
        candidates = self._candidates(m_train, n_features, run_budget)
        score = self._score_event(m_score)
        seed = None if self.random_state is None else 0  # the secure path, where the runs take it
        fits, runs, noise = [], [], []
        for params in candidates:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("ignore", PrivacyWarning)  # stand-in fits: no data, nothing to warn about
                warnings.simplefilter("always", NoiseDominatesWarning)  # public inputs: kept, said once by fit
                fits.append(self._run(params, run_budget, seed).fit(*stand_in).event_)
            noise.append(next((str(w.message) for w in caught if issubclass(w.category, NoiseDominatesWarning)),
                              None))
            for w in caught:
                if not issubclass(w.category, NoiseDominatesWarning):
                    warnings.warn(w.message, stacklevel=user_stacklevel())
            runs.append(ev.OneOfRelease([fits[-1], score]) if held_out else ev.composed([fits[-1], score]))
        return candidates, fits, noise, ev.OneOfRelease(runs)  # the run event last (_largest_feasible)

    def _stand_in(self, X, m_train: int, y):
        """Zeros of the training rows' shape, container and dtype (the solver choice may depend
        on them), labels cycling through the label set: public inputs only. A DataFrame's
        stand-in keeps its columns and their types (the schema), zeros in the numeric ones,
        a declared category (else one fixed text) in the others."""
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            return self._frame_stand_in(X, m_train, y)
        n_features = X.shape[1]
        dtype = X.dtype if getattr(X, "dtype", None) in (np.float32, np.float64) else np.float64
        # np.zeros maps the zero page: reading it costs no memory
        X0 = sp.csr_matrix((m_train, n_features), dtype=dtype) if sp.issparse(X) else np.zeros((m_train, n_features), dtype)
        return X0, self._stand_in_labels(m_train, y)

    def _stand_in_labels(self, m_train: int, y):
        if not is_classifier(self.estimator):
            return np.zeros(m_train)
        final = self.estimator.steps[-1][1] if _is_pipeline(self.estimator) else self.estimator
        declared = getattr(final, "classes", None)
        labels = np.asarray(declared) if declared is not None else np.unique(y)  # the label set is public
        return np.resize(labels, m_train)

    def _frame_stand_in(self, X, m_train: int, y):
        import pandas as pd

        declared = {}
        if _is_pipeline(self.estimator):
            for _, step in self.estimator.steps[:-1]:
                declared.update(getattr(step, "categories", None) or {})
        columns = {}
        for c in X.columns:
            dtype = X[c].dtype
            if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
                # pd.array, not np.zeros: nullable dtypes (Int64, Float64) are pandas extension dtypes
                columns[c] = pd.array(np.zeros(m_train), dtype=dtype)
            else:
                columns[c] = np.full(m_train, list(declared.get(c, ["?"]))[0], dtype=object)
        return pd.DataFrame(columns, columns=list(X.columns)), self._stand_in_labels(m_train, y)

    def _noisy_score(self, model, X, y, event: ev.DiscreteLaplaceRelease, source) -> float:
        """The integer score plus discrete Laplace noise, back in score units (per row)."""
        m = X.shape[0]
        if is_classifier(model):
            units = _hits(model, model.predict(X), y)  # replace-one sensitivity 1
            sign, per_unit = 1.0, 1.0
        else:
            cap = 4.0 * float(getattr(model, "label_bound", 1.0)) ** 2
            # each row's term in [0, cap] whatever it holds: a target that is not a finite
            # number (weight 0 in the fit) scores 0, as a map of that row alone
            squared = np.minimum((model.predict(X) - real_column(_objects(y))) ** 2, cap)
            errors = math.fsum(np.where(np.isnan(squared), 0.0, squared).tolist())
            units = int(round(errors / cap * _SCORE_UNITS))
            sign, per_unit = -1.0, cap / _SCORE_UNITS
        noisy = units + int(discrete_laplace(source, event.scale, 1)[0])
        return sign * noisy * per_unit / m

    def fit(self, X, y, sample_weight=None):
        """Run the search on (X, y) and keep the best run (see the class docstring).

        ``sample_weight``: per-example weights in [0, 1] (or None), passed to every run's
        fit (on its training rows); the noisy score stays unweighted (a count of correct
        predictions, or a sum of clipped errors, on the scoring rows). The accounting is
        unchanged (docs/estimators.md)."""
        budget = PrivacyBudget(self.epsilon, self.delta)
        if budget.delta <= 0:
            raise ValueError("PrivateSearch needs delta > 0 (its Renyi accounting converts to (epsilon, delta))")
        fraction = float(self.validation_fraction)
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction}")
        if hasattr(X, "tocsr"):
            X = X.tocsr()
        if _is_pipeline(self.estimator):
            from .pipeline import check_searchable

            check_searchable(self.estimator, X)  # before anything is charged
            if sample_weight is not None:
                raise NotImplementedError("PrivateSearch over a pipeline takes no sample_weight yet")
        n, n_features = X.shape
        n_val = int(round(fraction * n))
        if (fraction > 0 and n_val < 1) or n - n_val < 2:
            raise ValueError(f"{n} rows are too few to hold out a validation fraction of {self.validation_fraction}")
        if sample_weight is not None:
            sample_weight = self.estimator._sample_weight(sample_weight, X)
        rng = make_rng(self.random_state)
        y = np.asarray(y)
        s_train = sample_weight
        if n_val:
            order = rng.permutation(n)
            val, train = order[:n_val], order[n_val:]
            X_train, y_train, X_score, y_score = _rows(X, train), y[train], _rows(X, val), y[val]
            if sample_weight is not None:
                s_train = sample_weight[train]
        else:
            X_train, y_train, X_score, y_score = X, y, X, y
        m_train, m_score = X_train.shape[0], X_score.shape[0]

        n_candidates = len(list(_parameter_grid(self.param_grid))) if self.param_grid is not None else 5
        mean_runs = float(self.mean_runs) if self.mean_runs is not None else 2.0 * n_candidates
        p_runs = _logarithmic_parameter(mean_runs)
        stand_in = self._stand_in(X_train, m_train, y_train)
        run_epsilon, (candidates, planned, noise, run_event) = _largest_feasible(
            lambda e: self._plan(e, stand_in, m_train, m_score, n_features, n_val > 0),
            budget.epsilon, budget.delta, mean_runs)
        if all(noise):  # public inputs only, before any run reads the data
            warnings.warn(f"PrivateSearch: every candidate's run (each with epsilon={run_epsilon:.3g} of the "
                          f"search's {budget.epsilon:g}): {noise[0]}", NoiseDominatesWarning,
                          stacklevel=user_stacklevel())
        self.event_ = selection_event(run_event, mean_runs)
        with charging(self.accountant):  # before any run reads the data
            charge(self.event_, label="PrivateSearch")
        run_budget = PrivacyBudget(run_epsilon, budget.delta)
        score_event = self._score_event(m_score)
        secure = self.random_state is None  # production: secure sources throughout
        source = SecureRandom() if secure else GeneratorSource(rng)

        best = None
        # The runs fit the same rows again and again: their warnings (public-input ones such
        # as a tolerance not reached) are said once per search, after the runs (the noise
        # warning was said above, from public inputs).
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            best = self._runs(int(rng.logseries(p_runs)), candidates, planned, run_budget, secure, rng, s_train,
                              X_train, y_train, X_score, y_score, score_event, source)
        said = set()
        for w in caught:
            key = (w.category, str(w.message))
            if key not in said and not issubclass(w.category, NoiseDominatesWarning):
                said.add(key)
                warnings.warn(w.message, stacklevel=user_stacklevel())
        self.best_score_, self.best_params_, self.best_estimator_ = best
        self.run_epsilon_, self.run_delta_ = run_epsilon, budget.delta
        self.privacy_spent_ = PrivacyBudget(min(selection_epsilon(run_event, mean_runs, budget.delta), budget.epsilon),
                                            budget.delta)
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        return self

    def _runs(self, count, candidates, planned, run_budget, secure, rng, s_train, X_train, y_train, X_score,
              y_score, score_event, source):
        """The ``count`` runs of the search; returns (score, params, model) of the best."""
        best = None
        for _ in range(count):
            pick = int(rng.integers(len(candidates)))
            params = candidates[pick]
            seed = None if secure else rng.integers(2**63)
            weights = {} if s_train is None else {"sample_weight": s_train}
            model = self._run(params, run_budget, seed).fit(X_train, y_train, **weights)
            if model.event_ != planned[pick]:  # the accounting covers the planned mechanism only
                raise RuntimeError(f"{type(model).__name__} ran another mechanism than the one planned from "
                                   "the data's shape; please report this")
            score = self._noisy_score(model, X_score, y_score, score_event, source)
            if best is None or score > best[0]:
                best = (score, params, model)
        return best

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
