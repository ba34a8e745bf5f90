"""The public noise warning (dperm.expectations): where it appears, where it does not, and
that it is computed from public inputs only, before the data is read."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.preprocessing import Normalizer

import dperm
from dperm import DPHuberRegressor, DPLinearSVC, DPLogisticRegression, NoiseDominatesWarning
from dperm.expectations import SIGNAL_TO_NOISE_THRESHOLD, noise_dominates, signal_to_noise


def _unit_rows(loader):
    X, y = loader(return_X_y=True)
    return Normalizer().fit_transform(X), y


@pytest.mark.parametrize("loader", [load_wine, load_breast_cancer])
def test_small_tables_at_epsilon_0_1_warn_and_the_model_is_degenerate(loader):
    X, y = _unit_rows(loader)
    with pytest.warns(NoiseDominatesWarning, match="noise will likely dominate") as record:
        model = DPLogisticRegression(epsilon=0.1, classes=np.unique(y), random_state=0).fit(X, y)
    assert len([w for w in record if issubclass(w.category, NoiseDominatesWarning)]) == 1  # once per fit
    message = str(record[0].message)
    assert f"n={X.shape[0]} rows" in message and "epsilon=0.1" in message and "more rows" in message
    # what the warning is about: no better than the majority class
    majority = max(np.mean(y == c) for c in np.unique(y))
    assert np.mean(model.predict(X) == y) <= majority + 0.05


class _StopBeforeTheData(Exception):
    pass


@pytest.mark.parametrize("name", ["adult", "bank"])
def test_the_shipped_tables_at_epsilon_1_do_not_warn(name, monkeypatch):
    from dperm import datasets
    from dperm.estimators import _base

    X, y = getattr(datasets, f"load_{name}")(split="train", return_X_y=True)

    def stop(*args, **kwargs):  # the problem is built after the warning: stop there, no fit needed
        raise _StopBeforeTheData

    monkeypatch.setattr(_base, "make_problem", stop)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatesWarning)
        with pytest.raises(_StopBeforeTheData):
            DPLogisticRegression(epsilon=1.0, classes=np.unique(y), random_state=0).fit(X, y)
    # and at a tenth of the rows and epsilon = 0.1 the same table would warn
    assert noise_dominates(X.shape[0] // 10, X.shape[1] + 1, 0.1, 1e-5, data_norm=np.sqrt(2)) is not None


def test_the_warning_reads_no_data(monkeypatch):
    """Equal messages on two unrelated data sets of one shape, and raised before the
    problem (the data) is built."""
    from dperm.estimators import _base

    rng = np.random.default_rng(0)
    messages = []
    monkeypatch.setattr(_base, "make_problem", lambda *a, **k: (_ for _ in ()).throw(_StopBeforeTheData()))
    for X, y in [(rng.normal(size=(150, 6)) * 0.1, rng.integers(0, 2, 150)),
                 (rng.normal(size=(150, 6)) * 9.0, np.arange(150) % 2)]:
        with pytest.warns(NoiseDominatesWarning) as record, pytest.raises(_StopBeforeTheData):
            DPLinearSVC(epsilon=0.2, classes=[0, 1]).fit(X, y)
        messages.append(str(record[0].message))
    assert messages[0] == messages[1]


def test_regressors_warn_too_and_the_estimate_grows_with_n_epsilon():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 10)) * 0.3
    with pytest.warns(NoiseDominatesWarning, match="DPHuberRegressor"):
        DPHuberRegressor(epsilon=0.1, random_state=0).fit(X, X[:, 0])
    small = signal_to_noise(1000, 10, 0.5, 1e-5, loss="huber")
    assert signal_to_noise(2000, 10, 0.5, 1e-5, loss="huber") > small
    assert signal_to_noise(1000, 10, 1.0, 1e-5, loss="huber") > small
    assert signal_to_noise(1000, 20, 0.5, 1e-5, loss="huber") < small
    assert signal_to_noise(1000, 10, 0.5, 1e-5, alpha=0.0) == np.inf  # nothing to say without alpha


def test_public_signature_for_other_modules():
    # the call the private preprocessing makes: public inputs, a message or None
    message = noise_dominates(178, 14, 0.1, 1e-5, loss="logistic", alpha="auto", data_norm=1.0, label_bound=1.0)
    assert isinstance(message, str) and f"below {SIGNAL_TO_NOISE_THRESHOLD:g}" in message
    assert noise_dominates(30000, 20, 1.0, 1e-5, loss="logistic", alpha="auto", data_norm=1.0,
                           label_bound=1.0) is None
    assert issubclass(dperm.NoiseDominatesWarning, UserWarning)
    assert noise_dominates(178, 14, 0.1, 1e-5, loss="multinomial", n_classes=3) is not None
