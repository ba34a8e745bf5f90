"""class_weight of the classifiers: public weights scaled into [0, 1] and multiplied into
sample_weight; "balanced" refused with the reason."""

import numpy as np
import pytest

from dperm import DPLinearSVC, DPLogisticRegression



def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.3, "yes", "no")
    X = rng.normal(size=(n, 3)) * 0.2 + np.where(y == "yes", 0.2, -0.2)[:, None]
    return X, y


@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC])
def test_a_dict_is_scaled_by_its_largest_value_and_multiplied_into_sample_weight(cls):
    X, y = _data()
    s = np.linspace(0.2, 1.0, len(y))
    weighted = cls(classes=["no", "yes"], class_weight={"no": 1.0, "yes": 4.0}, random_state=0).fit(
        X, y, sample_weight=s)
    expected = np.where(y == "yes", 1.0, 0.25) * s  # 4 -> 1, 1 -> 1/4
    same = cls(classes=["no", "yes"], random_state=0).fit(X, y, sample_weight=expected)
    np.testing.assert_array_equal(weighted.coef_, same.coef_)
    assert weighted.fits_[0].event == same.fits_[0].event  # the mechanism is unchanged
    # labels left out weigh 1, and the scale does not matter
    left_out = cls(classes=["no", "yes"], class_weight={"yes": 0.5}, random_state=0).fit(X, y)
    scaled = cls(classes=["no", "yes"], class_weight={"yes": 5.0, "no": 10.0}, random_state=0).fit(X, y)
    np.testing.assert_array_equal(left_out.coef_, scaled.coef_)


def test_multiclass_weights_reach_every_fit():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 600)
    X = np.array([[0.5, 0], [0, 0.5], [-0.5, -0.5]])[y] + rng.normal(size=(600, 2)) * 0.1
    weighted = DPLogisticRegression(classes=[0, 1, 2], class_weight={2: 2.0}, random_state=0).fit(X, y)
    same = DPLogisticRegression(classes=[0, 1, 2], random_state=0).fit(X, y, sample_weight=np.where(y == 2, 1, .5))
    np.testing.assert_array_equal(weighted.coef_, same.coef_)


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_balanced_is_refused_with_the_reason_and_a_way_out():
    X, y = _data()
    with pytest.raises(ValueError) as info:
        DPLogisticRegression(class_weight="balanced").fit(X, y)
    message = str(info.value)
    assert "class counts" in message and "private" in message and "noisy" in message and "dict" in message


@pytest.mark.parametrize("class_weight, match", [
    ({"maybe": 1.0}, "not one of the classes"),
    ({"yes": -1.0}, ">= 0"),
    ({"yes": 0.0, "no": 0.0}, "> 0"),
    ({}, "non-empty dict"),
    ("heavy", "None or a dict"),
])
def test_bad_class_weights_are_clear_errors_that_quote_no_label(class_weight, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match) as info:
        DPLogisticRegression(classes=["no", "yes"], class_weight=class_weight).fit(X, y)
    assert "maybe" not in str(info.value)
