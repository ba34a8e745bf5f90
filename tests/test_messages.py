"""Messages of the privacy and algorithm layers: they name the real cause and never quote
data statistics; budgets print as asked when within rounding of it."""

import numpy as np
import pytest

import dperm
from dperm.algorithms import AssumptionError
from dperm.privacy import events as ev
from dperm.privacy.budget import BudgetAccountant, BudgetExceededError, PrivacyBudget


def test_squared_loss_without_bounded_domain_names_the_lipschitz_assumption():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) / 3
    with pytest.raises(AssumptionError) as info:
        # delta = 0: no catalogue algorithm (at delta > 0 the sufficient-statistics rule applies)
        dperm.minimize(X, X[:, 0], loss="squared", regularizer=("l2", 0.1), epsilon=1, delta=0.0)
    message = str(info.value)
    assert "not Lipschitz" in message and "('l2_ball', R)" in message
    assert "non-smooth" not in message  # the squared loss is smooth: that was the old, wrong cause


def test_privacy_budget_prints_as_asked_within_rounding():
    assert repr(PrivacyBudget(0.9999999999999964, 1e-5)) == "PrivacyBudget(epsilon=1, delta=1e-05)"
    assert str(PrivacyBudget(0.5, 0.0)) == "(epsilon=0.5, delta=0)"
    assert PrivacyBudget(0.9999999999999964, 1e-5).epsilon == 0.9999999999999964  # the certified value is kept


def test_budget_exceeded_says_which_parameter_and_by_how_much():
    accountant = BudgetAccountant(1.0, 1e-5)
    accountant.charge(ev.gaussian_release(4.0, 1.0))
    with pytest.raises(BudgetExceededError) as info:
        accountant.charge(ev.gaussian_release(1.0, 1.0))
    message = str(info.value)
    assert message.startswith("epsilon runs out") and "over its epsilon=1 by" in message
    zero_delta = BudgetAccountant(1.0, 0.0)
    with pytest.raises(BudgetExceededError, match="needs delta > 0"):
        zero_delta.charge(ev.gaussian_release(100.0, 1.0))


@pytest.mark.parametrize("y_kind", ["continuous", "many_integers"])
def test_a_classifier_on_a_regression_target_stops_before_any_charge(y_kind):
    from dperm import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * 0.3
    y = X @ [1.0, 2.0, 3.0] * 50.0 + 1000.1234567  # values of 4 digits and more: none in the message text
    if y_kind == "many_integers":
        y = np.round(y)  # integer-valued floats, a few hundred distinct values (a count, a price)
    accountant = BudgetAccountant(5.0, 1e-5)
    with pytest.raises(ValueError) as info:
        DPLogisticRegression(accountant=accountant).fit(X, y)
    message = str(info.value)
    assert "regression target" in message and "DPLinearRegression" in message and "classes=" in message
    assert "\n" not in message
    assert not any(f"{v:g}" in message for v in y[:20])  # no value of y quoted
    assert accountant.spent is None  # stopped before any charge
    # declared classes are the person's own statement: no second-guessing
    labels = np.arange(25)
    DPLogisticRegression(classes=labels, epsilon=5, random_state=0).fit(X, np.arange(300) % 25)
