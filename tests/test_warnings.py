"""Warnings raised for the user name the user's line, not a line inside dperm or
scikit-learn, whatever the path that reached them (dperm._warnings.user_stacklevel)."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score

import dperm
from dperm._warnings import user_stacklevel
from dperm.exceptions import DataNormWarning, NoiseDominatesWarning, PreprocessingNoiseWarning, PrivacyWarning


def _data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    return X, np.where(X[:, 0] > 0, 1, 0)


def _here() -> int:
    """The line number of the caller's line."""
    return inspect.currentframe().f_back.f_lineno


def _only(caught, category):
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, [str(w.message) for w in caught]
    return found


def test_a_warning_of_an_estimators_fit_names_the_line_that_called_fit():
    X, y = _data(n=100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _here() + 1
        dperm.DPLogisticRegression(epsilon=0.05, random_state=0).fit(X, y)
    for w in _only(caught, NoiseDominatesWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_a_warning_deep_in_an_algorithm_names_the_line_that_called_minimize():
    X, y = _data(n=100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _here() + 1
        dperm.minimize(X, np.where(y > 0, 1.0, -1.0), regularizer=("l2", 0.1), epsilon=1.0, delta=0.05,
                       algorithm="noisy_gd", random_state=0)  # delta above 1/n: a PrivacyWarning
    for w in _only(caught, PrivacyWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_the_model_selection_warning_names_the_line_that_called_scikit_learn():
    X, y = _data(n=300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _here() + 1
        cross_val_score(dperm.DPLogisticRegression(epsilon=1.0, random_state=0), X, y, cv=2)
    found = [w for w in _only(caught, PrivacyWarning) if "model selection" in str(w.message)]
    assert found and all((w.filename, w.lineno) == (__file__, line) for w in found)


def test_user_stacklevel_counts_the_frames_inside_the_library():
    # called directly from a test (outside dperm): level 1, the line that warns
    with pytest.warns(UserWarning) as record:
        line = _here() + 1
        warnings.warn("here", UserWarning, stacklevel=user_stacklevel())
    assert (record[0].filename, record[0].lineno) == (__file__, line)


def test_rows_clipped_to_data_norm_say_nothing():
    # was a DataNormWarning: whether it showed told one row apart (docs/privacy.md, "Totality")
    X, y = _data(n=300)
    X[:10] *= 3.0  # rows above the declared data_norm=1: clipped, silently
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dperm.DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, DataNormWarning)]


def test_the_preprocessing_warning_names_the_line_that_called_the_pipelines_fit():
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=0.1, random_state=0,
                                   regime="model")  # the model's regime: its preprocessing reads the data
        line = _here() + 1
        pipe.fit(frame, (frame["a"] > 0).astype(int))
    for w in _only(caught, PreprocessingNoiseWarning):
        assert (w.filename, w.lineno) == (__file__, line)
