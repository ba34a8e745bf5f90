"""Issue 30: private ranges that fit real columns (asymmetric, no collapse on ties, levels
from public inputs), the regression target's range, and shares that follow the declared
columns. The privacy of each new score is checked on the draw's exact output law over
every replace-one pair of small columns."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.preprocessing import PrivateScaler
from dperm.preprocessing.quantiles import (LEVEL_MAX, LEVEL_MIN, excess_counts, off_centre_counts, range_level,
                                           scores_from_counts, widening)


def _law(scores, eps):
    logits = eps * np.asarray(scores, dtype=np.float64) / 2.0
    p = np.exp(logits - logits.max())
    return p / p.sum()


def _worst_log_ratio(counts_of, level, eps):
    worst = 0.0
    values = [0.0, 1.0, 2.0, 3.0]
    for column in itertools.product(values, repeat=4):
        for value in values:
            laws = [_law(scores_from_counts(*counts_of(np.sort(np.array(col))), level), eps)
                    for col in (column, (value,) + column[1:])]
            worst = max(worst, float(np.max(np.abs(np.log(laws[0]) - np.log(laws[1])))))
    return worst


@pytest.mark.parametrize("level", [0.5, 0.8])
def test_off_centre_spread_draw_on_every_replace_one_pair(level):
    """The spread among the rows off the centre: its count N moves with the data, and the
    draw is still eps-DP (exact output probabilities, ties at the centre exercised)."""
    eps, radii = 0.9, np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    worst = _worst_log_ratio(lambda col: off_centre_counts(col, 1.0, radii), level, eps)
    assert 0.25 * eps < worst <= eps * (1 + 1e-12)


@pytest.mark.parametrize("side", [+1, -1])
@pytest.mark.parametrize("level", [0.75, 0.99])
def test_one_sided_reach_draw_on_every_replace_one_pair(side, level):
    eps, radii = 0.9, np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    worst = _worst_log_ratio(lambda col: excess_counts(col, 1.0, radii, side), level, eps)
    assert 0.25 * eps < worst <= eps * (1 + 1e-12)


def test_excess_and_off_centre_counts_equal_direct_counts():
    rng = np.random.default_rng(1)
    values = np.sort(rng.integers(0, 6, 200).astype(float))
    radii = np.array([0.0, 0.5, 1.0, 2.0, 7.0])
    for side in (+1, -1):
        distance = np.maximum(side * (values - 2.0), 0.0)
        below, at, n = excess_counts(values, 2.0, radii, side)
        assert n == values.size
        np.testing.assert_array_equal(below, [(distance < r).sum() for r in radii])
        np.testing.assert_array_equal(at, [(distance <= r).sum() for r in radii])
    off = np.abs(values[values != 2.0] - 2.0)
    below, at, n = off_centre_counts(values, 2.0, radii[1:])
    assert n == off.size
    np.testing.assert_array_equal(below, [(off < r).sum() for r in radii[1:]])
    np.testing.assert_array_equal(at, [(off <= r).sum() for r in radii[1:]])


def test_levels_follow_public_inputs():
    assert range_level(10**7, 1.0, 132) == LEVEL_MIN
    assert range_level(100, 0.01, 132) == LEVEL_MAX
    levels = [range_level(n, 0.05, 132) for n in (500, 2000, 8000, 32000)]
    assert levels == sorted(levels, reverse=True) and levels[0] > levels[-1]
    assert widening(LEVEL_MIN) == 1.0 and widening(0.25) == pytest.approx(3.45, abs=0.01)


def _table(n, rng):
    return np.column_stack([
        rng.integers(227, 279, n).astype(float),  # far from 0, narrow
        np.where(rng.random(n) < 0.7, 0.0, rng.exponential(5.0, n)),  # zero-inflated
        np.exp(rng.normal(2.0, 1.5, n)),  # skewed, positive
    ])


def test_ranges_fit_narrow_zero_inflated_and_skewed_columns():
    """With a budget that allows it, the asymmetric range: the narrow column's range
    lies near its data, the zero-inflated column's does not collapse and does not go
    below 0, the skewed column's upper reach is longer than its lower."""
    rng = np.random.default_rng(0)
    X = _table(20000, rng)
    scaler = PrivateScaler(epsilon=30.0, range_switch=0.1, random_state=0).fit(X)
    assert scaler.method_ == "range"
    (lo0, hi0), (lo1, hi1), (lo2, hi2) = scaler.bounds_
    assert 200 <= lo0 <= 230 and 275 <= hi0 <= 350
    assert lo1 == 0.0 and hi1 > 5.0
    assert lo2 > -0.5 * np.median(X[:, 2]) and hi2 - np.median(X[:, 2]) > 3 * (np.median(X[:, 2]) - lo2)


def test_small_budget_falls_back_to_centre_and_spread_without_collapse():
    rng = np.random.default_rng(0)
    X = _table(750, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = PrivateScaler(epsilon=0.6, delta=1e-6, range_switch=0.1, random_state=0).fit(X)
    assert scaler.method_ == "median" and len(scaler.event_.events) == 2 * 3
    assert PrivateScaler(epsilon=300.0, random_state=0).fit(X).method_ == "median"  # features: range_switch 0
    assert 200 <= scaler.centre_[0] <= 300 and scaler.spread_[0] < 200
    assert scaler.spread_[1] > 1.0  # 70% zeros: the spread of the others, not 0


def test_declaring_columns_gives_budget_back_to_the_model():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(2000, 4)), columns=list("abcd"))
    y = (X["a"] > 0).astype(int).to_numpy()
    make = lambda **kw: dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=1.0,
                                            random_state=0, **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        none = make()
        half = make(bounds={"a": (-4, 4), "b": (-4, 4)})
    assert half.budgets_["privatepreprocessor"].epsilon == pytest.approx(
        0.5 * none.budgets_["privatepreprocessor"].epsilon, rel=0.02)
    assert half.budgets_["dplogisticregression"].epsilon > none.budgets_["dplogisticregression"].epsilon


def test_regression_target_range_positive_and_predictions_clipped():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=5000), "b": rng.normal(size=5000)})
    y = np.exp(1.0 + 0.8 * X["a"].to_numpy() + 0.3 * rng.normal(size=5000))  # positive, skewed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0).fit(X, y)
    low, high = model.y_bounds_
    assert low > -0.5 * np.median(y) and high > np.median(y)  # negative only by the private centre and reach
    prediction = model.predict(X)
    assert prediction.min() >= low and prediction.max() <= high
    assert model.score(X, y) > 0.2


def test_the_share_follows_the_header_and_declarations_not_the_dtypes():
    """One row's value can turn a column of numbers into an object column (a ``"?"``): the
    preprocessing's share, which sets every noise scale downstream, must not move with it
    (it did: the estimated fraction read the dtypes of undeclared columns)."""
    from dperm.preprocessing import PrivatePreprocessor
    from dperm.preprocessing.shares import estimated_fraction

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50), "c": rng.choice(["p", "q"], 50)})
    neighbour = X.astype(object)
    neighbour.loc[7, "b"] = "?"
    step = PrivatePreprocessor(bounds={"a": (-4, 4)})
    assert estimated_fraction(step, X) == estimated_fraction(step, neighbour) == pytest.approx(2 / 3)
    assert estimated_fraction(step, X.to_numpy()) == 1.0  # positions: no column named "a"
    assert estimated_fraction(PrivatePreprocessor(bounds={"a": (-4, 4)}, drop=["c"]), X) == pytest.approx(0.5)
