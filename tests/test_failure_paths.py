"""Failure paths and messages (the privacy review of b85596c): no message quotes a data
value, all-zero weights release a model, custom losses run where the catalogue lists them."""

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm import DPLogisticRegression
from dperm.problem import CustomLoss


def _data(n=60, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X[:, 0] + 0.1 > 0, 1.0, -1.0)


def test_labels_outside_the_loss_domain_get_weight_zero_without_a_word():
    """Totality: a binary loss's label other than -1/+1 (or NaN) is no refusal (that would
    release the row) but a row of weight 0: the fit equals the one with those rows' weights
    0, and nothing is said."""
    import warnings

    X, y = _data()
    y = np.r_[y[:-4], [0.25, 3.0, 7.0, np.nan]]
    kw = dict(epsilon=1.0, delta=1e-5, random_state=0, regularizer=("l2", 0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = dperm.minimize(X, y, **kw)
    weights = np.r_[np.ones(len(y) - 4), np.zeros(4)]
    want = dperm.minimize(X, np.r_[y[:-4], np.ones(4)], sample_weight=weights, **kw)
    np.testing.assert_array_equal(got.coef, want.coef)


def test_a_string_column_names_the_column_not_a_value():
    frame = pd.DataFrame({"bill": [1.0, 2.0, 3.0, 4.0], "island": ["Torgersen", "Biscoe", "Dream", "Biscoe"]})
    with pytest.raises(ValueError, match=r"non-numeric columns \['island'\]") as err:
        DPLogisticRegression(classes=[-1, 1]).fit(frame, [1, -1, 1, -1])
    assert "Torgersen" not in str(err.value) and "Biscoe" not in str(err.value)
    with pytest.raises(ValueError, match="non-numeric entries") as err:
        DPLogisticRegression(classes=[-1, 1]).fit(frame.to_numpy(), [1, -1, 1, -1])
    assert "Torgersen" not in str(err.value)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_all_zero_weights_release_a_noisy_model():
    """A fit on all-zero weights is a fit on no data: it releases a model like any other
    (scikit-learn's 'at least one non-zero' error would tell about the weights)."""
    X, y = _data()
    model = DPLogisticRegression(classes=[-1, 1], random_state=0).fit(X, y, sample_weight=np.zeros(len(y)))
    assert np.all(np.isfinite(model.coef_)) and model.privacy_spent_.epsilon <= 1.0
    other = DPLogisticRegression(classes=[-1, 1], random_state=0).fit(X, -y, sample_weight=np.zeros(len(y)))
    np.testing.assert_array_equal(model.coef_, other.coef_)  # no data: the labels do not matter


def _custom_logistic():
    return CustomLoss(value=lambda w, X, y: np.logaddexp(0.0, -y * (X @ w)),
                      gradient=lambda w, X, y: (-y / (1.0 + np.exp(y * (X @ w))))[:, None] * X,
                      lipschitz=1.0, smoothness=0.25, convex=True)


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_dp_fw_l1_runs_a_custom_loss(delta):
    """dp_fw_l1 crashed on every CustomLoss ('float' object is not callable). With the
    logistic loss written as a custom one (declared gradient bound 1, rows of norm 1) the
    score sensitivity is the built-in's, so the seeded runs agree."""
    X, y = _data()
    kwargs = dict(constraint=("l1_ball", 1.0), algorithm="dp_fw_l1", epsilon=1.0, delta=delta, random_state=0)
    custom = dperm.minimize(X, y, loss=_custom_logistic(), **kwargs)
    builtin = dperm.minimize(X, y, loss="logistic", **kwargs)
    np.testing.assert_allclose(custom.coef, builtin.coef, rtol=1e-9, atol=1e-12)
    assert repr(custom.event) == repr(builtin.event)
