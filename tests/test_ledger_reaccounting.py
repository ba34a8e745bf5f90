"""Saved ledgers are re-accounted on load by the current accountant: a ledger that holds
fixed-size-batch fits charged under the old (Poisson) accounting is shown overspent, with
a warning, and refuses further charges."""

import json

import pytest

from dperm.privacy import events as ev
from dperm.privacy.accountant import calibrate, epsilon
from dperm.privacy.budget import BudgetAccountant, BudgetExceededError, PrivacyBudget, PrivacyWarning


def _poisson_calibrated_fixed_batch_event(n=1000, b=100, steps=200, eps=1.0, delta=1e-5):
    """The event an old dperm charged for a fixed-size-batch run: noise calibrated as if
    the batches were Poisson, recorded as sampled without replacement."""
    sigma = calibrate(lambda x: ev.repeated(ev.PoissonSampledDpEvent(b / n, ev.gaussian_release(x, 2.0)), steps),
                      PrivacyBudget(eps, delta)).noise
    return ev.repeated(ev.SampledWithoutReplacementDpEvent(n, b, ev.gaussian_release(sigma, 2.0)), steps)


def test_an_old_ledger_is_reaccounted_on_load(tmp_path):
    event = _poisson_calibrated_fixed_batch_event()
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"epsilon": 1.0, "delta": 1e-5,
                                "charges": [{"label": "dp_sgd", "event": ev.describe(event)}]}))
    with pytest.warns(PrivacyWarning, match="overspent"):
        ledger = BudgetAccountant.load(path)
    assert ledger.spent_epsilon == pytest.approx(epsilon(event, 1e-5))
    assert ledger.spent_epsilon > 1.05  # the corrected accounting of what was run
    assert ledger.remaining_epsilon == 0.0
    with pytest.raises(BudgetExceededError):
        ledger.charge(ev.gaussian_release(100.0, 1.0))
    ledger.save(path)  # saved again as it is: the charges are kept, nothing is lost
    assert len(json.loads(path.read_text())["charges"]) == 1


def test_a_ledger_within_its_total_loads_silently(tmp_path):
    ledger = BudgetAccountant(2.0, 1e-5)
    ledger.charge(ev.gaussian_release(5.0, 1.0), "a")
    ledger.save(tmp_path / "l.json")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = BudgetAccountant.load(tmp_path / "l.json")
    assert again.spent_epsilon == pytest.approx(ledger.spent_epsilon)
    assert again.history == ledger.history
