"""A pipeline spends at most its budget, with no margin kept back (issue 33): each step is a
part of the budget, the one accountant certifies the whole for at most the sum of the
parts (basic composition, docs/privacy.md), and the estimator gets exactly what the parts
before it leave."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.privacy import accountant as acc
from dperm.privacy import events as ev
from dperm.privacy.budget import BudgetAccountant


def _table(n: int, rng, categorical: bool = True):
    frame = pd.DataFrame({"age": rng.normal(45, 12, n), "income": rng.lognormal(10, 0.5, n),
                          "score": rng.uniform(0, 1, n)})
    if categorical:
        frame["city"] = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    return frame


CONFIGS = [
    # (name, estimator, epsilon, delta, pipeline options, regression)
    ("roles-private-delta", lambda: dperm.DPLogisticRegression(classes=[0, 1]), 1.0, 1e-5, {}, False),
    ("dtypes-small-epsilon", lambda: dperm.DPLogisticRegression(classes=[0, 1]), 0.1, 1e-6, {"schema": "dtypes"}, False),
    ("pure-everything", lambda: dperm.DPLogisticRegression(classes=[0, 1]), 1.0, 0.0,
     {"categories": {"city": ["a", "b", "c"]}, "numeric": ["age", "income", "score"]}, False),
    ("declared-bounds", lambda: dperm.DPLogisticRegression(classes=[0, 1]), 2.0, 1e-5,
     {"bounds": {"age": (0, 100)}, "schema": "dtypes"}, False),
    ("gaussian-model", lambda: dperm.DPLogisticRegression(classes=[0, 1], solver="dp_gd"), 1.0, 1e-5, {}, False),
    pytest.param(("sampled-model", lambda: dperm.DPLogisticRegression(classes=[0, 1], solver="dp_sgd"), 1.0, 1e-5,
                  {"schema": "dtypes"}, False), marks=pytest.mark.slow, id="sampled-model"),
    ("regression-target", lambda: dperm.DPLinearRegression(), 1.0, 1e-5, {}, True),
    ("regression-pure", lambda: dperm.DPHuberRegressor(), 3.0, 0.0,
     {"categories": {"city": ["a", "b", "c"]}, "numeric": ["age", "income", "score"]}, True),
    ("regression-dtypes", lambda: dperm.DPLinearRegression(), 0.3, 1e-6, {"schema": "dtypes"}, True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=[c[0] if isinstance(c, tuple) else c.id for c in CONFIGS])
def test_the_pipeline_spends_exactly_its_budget_and_never_more(config):
    name, make, epsilon, delta, options, regression = config
    rng = np.random.default_rng(len(name))
    X = _table(600, rng)
    y = X["age"] / 10 + rng.normal(0, 1, len(X)) if regression else (X["age"] > 45).astype(int)
    pipe = dperm.make_pipeline(make(), epsilon=epsilon, delta=delta, random_state=1, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    parts = pipe.budgets_
    # the parts add up to the whole budget: nothing kept back ...
    assert math.fsum(b.epsilon for b in parts.values()) == pytest.approx(epsilon, rel=1e-12)
    assert math.fsum(b.delta for b in parts.values()) <= delta
    # ... and what is certified for the whole is at most that
    assert pipe.privacy_spent_.epsilon <= epsilon
    assert pipe.accountant_.spent.epsilon <= epsilon
    charged = ev.composed(list(pipe.accountant_.events))
    split = acc._split_epsilon(charged, delta, None)
    assert split is not None and split <= epsilon * (1 + 1e-12)
    # every part of the ledger is what the pipeline deducted for its step
    for step, budget in parts.items():
        if step == pipe.steps[-1][0]:
            continue
        event = pipe.steps[0][1].event_ if step != "y" else None
        if event is not None:
            assert acc.epsilon(event, budget.delta) == budget.epsilon


def test_a_shared_ledger_with_earlier_charges_takes_the_pipeline_at_its_budget():
    rng = np.random.default_rng(5)
    X = _table(500, rng)
    y = (X["age"] > 45).astype(int)
    ledger = BudgetAccountant(3.0, 2e-5)
    earlier = [ev.gaussian_release(8.0, 2.0), ev.ExponentialMechanismRelease(0.2)]
    for event in earlier:
        ledger.charge(event, "earlier")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=1.0, delta=1e-5,
                                   accountant=ledger, random_state=0).fit(X, y)
    assert pipe.privacy_spent_.epsilon <= 1.0
    # the ledger composes the earlier charges (outside any part) at the delta left over
    assert ledger.spent.epsilon <= acc.epsilon(ev.composed(earlier), 1e-5) + 1.0 + 1e-9
    parts = {e.part for e in ledger.events if isinstance(e, ev.BudgetPart)}
    assert parts == {0, 1}
