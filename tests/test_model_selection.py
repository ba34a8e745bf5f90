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
    _run_epsilon,
    selection_epsilon,
    warn_if_model_selection,
)
from dperm.privacy.budget import PrivacyWarning


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.arange(1, d + 1) + 0.2 * rng.normal(size=n) > 0, 1, 0)
    return X, y


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


def test_selection_accounting_is_about_twice_one_run_and_calibrates_to_the_budget():
    one = selection_epsilon(0.5, 10.0, 1e-5)
    assert 0.5 < one < 1.2  # Papernot-Steinke: about 2 epsilon for the logarithmic distribution
    assert selection_epsilon(0.25, 10.0, 1e-5) < one
    run = _run_epsilon(1.0, 1e-5, 10.0)
    assert selection_epsilon(run, 10.0, 1e-5) <= 1.0
    assert selection_epsilon(run * 1.01, 10.0, 1e-5) > 1.0


def test_logarithmic_parameter_has_the_requested_mean():
    p = _logarithmic_parameter(10.0)
    assert -p / ((1 - p) * math.log1p(-p)) == pytest.approx(10.0)
    draws = np.random.default_rng(0).logseries(p, size=200_000)
    assert draws.mean() == pytest.approx(10.0, rel=0.05)
    with pytest.raises(ValueError, match="mean_runs"):
        _logarithmic_parameter(1.0)


def test_private_search_releases_one_pure_run_within_the_budget():
    X, y = _data(n=600)
    search = PrivateSearch(DPLogisticRegression(), {"alpha": [0.003, 0.03]}, epsilon=2.0, random_state=1).fit(X, y)
    assert search.best_params_ in ({"alpha": 0.003}, {"alpha": 0.03})
    assert search.best_estimator_.delta == 0.0 and search.best_estimator_.epsilon == search.run_epsilon_
    assert search.privacy_spent_.epsilon <= 2.0 and search.privacy_spent_.delta == 1e-5
    assert type(search.event_).__name__ == "RepeatAndSelectDpEvent"
    assert search.predict(X).shape == (600,)
    assert search.score(X, y) > 0.7
    again = PrivateSearch(DPLogisticRegression(), {"alpha": [0.003, 0.03]}, epsilon=2.0, random_state=1).fit(X, y)
    np.testing.assert_array_equal(again.best_estimator_.coef_, search.best_estimator_.coef_)


def test_private_search_default_grid_and_regressors():
    X, _ = _data(n=400)
    y = np.clip(X @ np.ones(4) / 2, -1, 1)
    search = PrivateSearch(DPHuberRegressor(), epsilon=2.0, random_state=0).fit(X, y)
    assert set(search.best_params_) == {"alpha"} and search.best_params_["alpha"] > 0
    assert search.best_score_ <= 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(delta=0.0), "delta > 0"),
    (dict(validation_fraction=1.0), "validation_fraction"),
])
def test_private_search_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateSearch(DPLogisticRegression(), **kwargs).fit(*_data())
