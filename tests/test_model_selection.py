"""Private hyperparameter selection and the warning for scikit-learn's (non-private) search tools."""

import math
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

from dperm.estimators import DPHuberRegressor, DPLogisticRegression
from dperm.model_selection import (
    PrivateSearch,
    _logarithmic_parameter,
    pure_run_event,
    selection_epsilon,
    warn_if_model_selection,
)
from dperm.privacy import events as ev
from dperm.privacy.budget import BudgetAccountant, PrivacyWarning


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.arange(1, d + 1) + 0.2 * rng.normal(size=n) > 0, 1, 0)
    return X, y


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_cross_val_score_and_grid_search_warn_and_name_the_private_alternative():
    X, y = _data()
    with pytest.warns(PrivacyWarning, match=r"PrivateSearch\(DPLogisticRegression\(\)"):
        cross_val_score(DPLogisticRegression(random_state=0), X, y, cv=2)
    with pytest.warns(PrivacyWarning, match="k fits are only"):
        GridSearchCV(DPLogisticRegression(random_state=0), {"alpha": [0.01, 0.1]}, cv=2).fit(X, y)


def test_a_plain_fit_does_not_warn():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        DPLogisticRegression(random_state=0, classes=np.unique(y)).fit(X, y)  # a declared label set: public


class _Estimator:
    epsilon, delta = 1.0, 1e-5

    def __init__(self, accountant=None):
        self.accountant = accountant


def _call_as(module_name, estimator):
    """Call warn_if_model_selection from a function whose module is ``module_name``."""
    namespace = {"__name__": module_name, "warn": warn_if_model_selection}
    exec("def fit(est):\n    warn(est)\n", namespace)
    namespace["fit"](estimator)


def test_detection_reads_the_calling_package_and_respects_an_accountant():
    with pytest.warns(PrivacyWarning):
        _call_as("sklearn.model_selection._validation", _Estimator())
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        _call_as("sklearn.model_selection._validation", _Estimator(accountant=object()))
        _call_as("mypackage.tuning", _Estimator())


def test_selection_accounting_is_about_twice_one_run():
    one = selection_epsilon(pure_run_event(0.5), 10.0, 1e-5)
    assert 0.5 < one < 1.2  # Papernot-Steinke: about 2 epsilon for the logarithmic distribution
    assert selection_epsilon(pure_run_event(0.25), 10.0, 1e-5) < one
    # a run that is one of several candidates costs what its worst candidate costs
    worse, better = ev.gaussian_release(1.0, 0.5), ev.gaussian_release(2.0, 0.5)
    assert selection_epsilon(ev.OneOfRelease([better, worse]), 10.0, 1e-5) == selection_epsilon(worse, 10.0, 1e-5)
    assert selection_epsilon(better, 10.0, 1e-5) < selection_epsilon(worse, 10.0, 1e-5)


def test_logarithmic_parameter_has_the_requested_mean():
    p = _logarithmic_parameter(10.0)
    assert -p / ((1 - p) * math.log1p(-p)) == pytest.approx(10.0)
    draws = np.random.default_rng(0).logseries(p, size=200_000)
    assert draws.mean() == pytest.approx(10.0, rel=0.05)
    with pytest.raises(ValueError, match="mean_runs"):
        _logarithmic_parameter(1.0)


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_private_search_runs_gaussian_fits_and_stays_within_the_budget():
    X, y = _data(n=600)
    search = PrivateSearch(DPLogisticRegression(), {"alpha": [0.003, 0.03]}, epsilon=2.0, random_state=1).fit(X, y)
    assert search.best_params_ in ({"alpha": 0.003}, {"alpha": 0.03})
    model = search.best_estimator_
    assert model.delta == 1e-5 == search.run_delta_ and model.epsilon == search.run_epsilon_
    assert 0.5 < search.run_epsilon_ < 2.0
    assert search.privacy_spent_.epsilon <= 2.0 and search.privacy_spent_.delta == 1e-5
    assert type(search.event_).__name__ == "RepeatAndSelectDpEvent"
    # the run event holds, for each candidate, the fit's own event: the one the released fit ran
    candidates = search.event_.event.events
    assert any(model.event_ in run.events for run in candidates)
    assert search.predict(X).shape == (600,)
    assert search.score(X, y) > 0.7
    again = PrivateSearch(DPLogisticRegression(), {"alpha": [0.003, 0.03]}, epsilon=2.0, random_state=1).fit(X, y)
    np.testing.assert_array_equal(again.best_estimator_.coef_, model.coef_)


def test_private_search_run_budget_is_the_largest_that_fits():
    from dperm.model_selection import _largest_feasible

    make = lambda e: (None, ev.gaussian_release(1.0 / e, 1.0))  # noqa: E731  noise shrinks as epsilon grows
    run_epsilon, (_, event) = _largest_feasible(make, 1.0, 1e-5, 10.0)
    assert selection_epsilon(event, 10.0, 1e-5) <= 1.0
    assert selection_epsilon(make(run_epsilon * 1.01)[1], 10.0, 1e-5) > 1.0


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_private_search_charges_its_accountant_once_and_composes_with_other_fits():
    X, y = _data(n=400)
    ledger = BudgetAccountant(epsilon=5.0, delta=1e-4)
    DPLogisticRegression(epsilon=1.0, delta=1e-5, accountant=ledger, random_state=0).fit(X, y)
    PrivateSearch(DPLogisticRegression(), {"alpha": [0.01, 0.1]}, epsilon=2.0, random_state=0, accountant=ledger).fit(X, y)
    assert len(ledger.events) == 2
    # basic composition across the Renyi route, each part at half the ledger's delta (5e-5 > 1e-5)
    assert 2.0 < ledger.spent_epsilon <= 3.0


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_held_out_scores_take_the_larger_not_the_sum():
    X, y = _data(n=600)
    train_scored = PrivateSearch(DPLogisticRegression(), {"alpha": [0.01]}, epsilon=1.0, random_state=0).fit(X, y)
    held_out = PrivateSearch(DPLogisticRegression(), {"alpha": [0.01]}, epsilon=1.0, validation_fraction=0.25,
                             random_state=0).fit(X, y)
    assert held_out.run_epsilon_ > train_scored.run_epsilon_
    assert type(held_out.event_.event.events[0]).__name__ == "OneOfRelease"


def test_private_search_default_grid_and_regressors():
    X, _ = _data(n=400)
    y = np.clip(X @ np.ones(4) / 2, -1, 1)
    search = PrivateSearch(DPHuberRegressor(), epsilon=2.0, random_state=0).fit(X, y)
    assert set(search.best_params_) == {"alpha"} and search.best_params_["alpha"] > 0
    assert search.best_score_ <= 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(delta=0.0), "delta > 0"),
    (dict(validation_fraction=1.0), "validation_fraction"),
    (dict(validation_fraction=-0.1), "validation_fraction"),
])
def test_private_search_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateSearch(DPLogisticRegression(), **kwargs).fit(*_data())


class _DataDependentSolver(DPLogisticRegression):
    """A broken estimator whose mechanism depends on the data (never do this)."""

    def fit(self, X, y):
        if np.any(np.asarray(X) != 0):
            self.solver = "output_perturbation"
        return super().fit(X, y)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_a_run_whose_mechanism_differs_from_the_planned_one_is_refused():
    X, y = _data(n=300)
    with pytest.raises(RuntimeError, match="planned"):
        PrivateSearch(_DataDependentSolver(classes=[0, 1]), {"alpha": [0.01]}, epsilon=1.0, random_state=0).fit(X, y)


def test_without_a_seed_runs_take_the_secure_path_and_the_score_is_an_exact_integer_mechanism():
    X, y = _data(n=300)
    search = PrivateSearch(DPLogisticRegression(classes=[0, 1]), {"alpha": [0.01]}, epsilon=2.0).fit(X, y)
    assert search.best_estimator_.random_state is None
    run = search.event_.event.events[0]
    score = run.events[-1]
    assert type(score).__name__ == "DiscreteLaplaceRelease" and score.sensitivity == 1
    assert search.best_score_ * 300 == pytest.approx(round(search.best_score_ * 300))  # an integer count + noise


class _RunWarns(DPLogisticRegression):
    """Warns in every run on the data (not on the stand-in zeros): the run-warning path."""

    def fit(self, X, y, sample_weight=None):
        if np.any(np.asarray(X)):
            warnings.warn("a run's warning", UserWarning)
        return super().fit(X, y, sample_weight=sample_weight)


def test_private_search_says_a_run_warning_once_per_fit():
    X, y = _data(n=600)
    X = X * 3.0  # every row above data_norm=1: each run clips them, silently
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = PrivateSearch(_RunWarns(classes=[0, 1]), {"alpha": [0.003, 0.03]}, epsilon=2.0,
                               mean_runs=6, random_state=1).fit(X, y)
    said = [w for w in caught if str(w.message) == "a run's warning"]
    assert len(said) == 1, [str(w.message) for w in caught]  # was once per run
    assert not [w for w in caught if "data_norm" in str(w.message)]  # clipping says nothing
    assert hasattr(search, "best_estimator_")


def test_private_search_warns_once_when_every_run_is_dominated_by_noise():
    from dperm import NoiseDominatesWarning

    X, y = _data(n=200, d=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PrivateSearch(DPLogisticRegression(classes=[0, 1]), epsilon=0.1, random_state=0).fit(X, y)
    noise = [str(w.message) for w in caught if issubclass(w.category, NoiseDominatesWarning)]
    assert len(noise) == 1 and noise[0].startswith("PrivateSearch: every candidate's run"), noise
    X, y = _data(n=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)  # a run budget with signal: no warning
        PrivateSearch(DPLogisticRegression(classes=[0, 1]), {"alpha": [0.003, 0.03]}, epsilon=2.0,
                      random_state=1).fit(X, y)
