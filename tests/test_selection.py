"""Private feature selection (DPKendall, Dick, Gillenwater, Joseph 2023, Algorithm 1):
the exact rank statistic, its output law on worst-case neighbours against epsilon, the
pipeline's budget with it, its refusals before any charge, and totality on odd values."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.preprocessing import selection as S
from dperm.privacy import mechanisms
from dperm.privacy.budget import BudgetAccountant

pytestmark = pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning",
                                        "ignore::dperm.expectations.NoiseDominatesWarning")


def _brute_pair_sum(x, v):
    ok = np.isfinite(x) & np.isfinite(v)
    total = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        if ok[i] and ok[j]:
            total += int(np.sign(x[i] - x[j]) * np.sign(v[i] - v[j]))
    return total


@pytest.mark.parametrize("n", [2, 7, 40, 65, 300])
def test_the_statistic_is_the_exact_tau_a_pair_sum_with_ties_and_missing_values(n):
    """Ties and missing values count 0 (tau-a), on both of the statistic's paths (the
    direct sum at small n, scipy's tau-b times its tie-corrected denominator above)."""
    rng = np.random.default_rng(n)
    for _ in range(5 if n < 300 else 2):
        x = rng.integers(0, 5, n).astype(float)
        v = rng.integers(0, 4, n).astype(float)
        x[rng.random(n) < 0.15] = np.nan
        v[rng.random(n) < 0.1] = np.inf  # not a finite number: missing
        assert S._pair_sum(x, v) == _brute_pair_sum(x, v)
    assert S._pair_sum(np.full(n, 3.0), rng.normal(size=n)) == 0  # a constant column
    assert S._pair_sum(np.full(n, np.nan), rng.normal(size=n)) == 0  # all missing


def _law(X, y, k, epsilon, monkeypatch):
    """The exact output law of kendall_select on (X, y): the probability of each ordered
    selection, from the scores, epsilon and sensitivity the code passes to each draw of
    exponential_select (whose law is exp(eps u / (2 Delta)), normalized)."""
    d = X.shape[1]
    law = {}
    for order in itertools.permutations(range(d), k):
        log_p = [0.0]
        position = [0]

        def forced(rng, scores, eps, sensitivity, *, secure, monotone=False, multiplicities=None):
            assert not monotone and multiplicities is None
            w = eps * np.asarray(scores) / (2.0 * sensitivity)
            finite = np.isfinite(w)
            top = np.max(w[finite])
            log_z = top + math.log(float(np.sum(np.exp(w[finite] - top))))
            pick = order[position[0]]
            assert finite[pick]  # a chosen column is never drawn again
            log_p[0] += w[pick] - log_z
            position[0] += 1
            return pick

        monkeypatch.setattr(mechanisms, "exponential_select", forced)
        assert list(S.kendall_select(X, y, k, epsilon, np.random.default_rng(0))) == list(order)
        law[order] = log_p[0]
    total = math.log(sum(math.exp(v) for v in law.values()))
    assert abs(total) < 1e-9  # a law
    return law


def test_kendall_select_is_epsilon_dp_on_worst_case_neighbours(monkeypatch):
    """Every ordered selection's probability on replace-one neighbours (row 0 replaced),
    summed exactly, within e^epsilon; the worst pair found comes close to it (the
    sensitivities 2 and 4 are not loose by more than a factor 4)."""
    epsilon, k = 1.0, 2
    # built: columns 1 and 2 follow y except row 0, column 0 is weakly correlated; replacing
    # row 0's target moves the strong columns' scores up by 2 and the weak one's down by 2,
    # so the weak column's probability falls by nearly e^(epsilon / k)
    n = 30
    j = np.arange(1, n, dtype=float)
    weak = np.r_[50.0, np.where(j < 10, j, j[::-1])]
    X = np.column_stack([weak, np.r_[40.0, j], np.r_[40.0, j]])
    y, y2 = np.r_[-1.0, j], np.r_[41.0, j]
    pairs = [((X, y), (X.copy(), y2))]
    rng = np.random.default_rng(3)
    for _ in range(40):
        n, d = 6, 3
        X = rng.integers(0, 3, (n, d)).astype(float)
        y = rng.integers(0, 3, n).astype(float)
        X2, y2 = X.copy(), y.copy()
        X2[0] = rng.integers(-1, 4, d)
        y2[0] = rng.integers(-1, 4)
        if rng.random() < 0.3:
            X2[0, rng.integers(d)] = np.nan  # a missing value in the replaced row
        pairs.append(((X, y), (X2, y2)))
    worst = 0.0
    for (X, y), (X2, y2) in pairs:
        a, b = _law(X, y, k, epsilon, monkeypatch), _law(X2, y2, k, epsilon, monkeypatch)
        worst = max(worst, max(abs(a[o] - b[o]) for o in a))
    assert 0.4 * epsilon < worst <= epsilon * (1 + 1e-12)


def test_the_sampler_draws_the_first_round_by_its_scores():
    """The seeded draw (Gumbel-max) follows exp(eps u / 4) in round one: a column with a
    far larger rank correlation is drawn almost always, with equal ones about evenly."""
    rng = np.random.default_rng(0)
    n = 400
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.01 * rng.normal(size=n)
    picks = [int(S.kendall_select(X, y, 1, 2.0, np.random.default_rng(s))[0]) for s in range(200)]
    assert picks.count(0) >= 190
    secure = [int(S.kendall_select(X, y, 1, 2.0, None)[0]) for _ in range(20)]  # the exact sampler
    assert secure.count(0) >= 18


def test_selection_size_is_public_and_in_its_window():
    """From n, the candidate count and epsilon only: 0 (no selection) where the draws
    could not find 3 columns or where they could find more than a quarter of them."""
    assert S.selection_size(6875, 30, 0.2) == 3  # alcohol at epsilon = 1 (its selection's share 0.2)
    assert S.selection_size(11995, 31, 0.2) == 6  # happiness
    assert S.selection_size(3084, 13, 0.2) == 0  # nmes1988: k = 2, too few
    assert S.selection_size(13726, 14, 0.2) == 0  # rwm5yr: k = 9 of 14, more than a quarter
    assert S.selection_size(4381, 9, 0.2) == 0  # computers: k = 3 of 9
    assert S.selection_size(20000, 30, 0.02) == 0  # epsilon = 0.1: the draws would be noise
    assert S.selection_size(100, 30, 0.01) == 0
    for n in (1000, 5000, 20000, 100000, 10 ** 7):
        k = S.selection_size(n, 40, 0.2)
        assert k == 0 or S.SELECTION_MIN_KEPT <= k <= 10


def table(n=3000, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{j}" for j in range(d)])
    y = 3.0 * X["x0"].to_numpy() - 2.0 * X["x1"].to_numpy() + rng.normal(size=n)
    return X, y


def test_the_budget_adds_up_and_comes_out_of_the_preprocessing():
    X, y = table()
    acc = BudgetAccountant(1.0, 1e-5)
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=acc, random_state=0,
                                feature_selection=2).fit(X, y)
    assert set(model.selected_) == {"x0", "x1"}
    assert model.budgets_["select"].epsilon == pytest.approx(S.SELECTION_SHARE)
    assert model.budgets_["privatepreprocessor"].epsilon <= 0.4 - S.SELECTION_SHARE + 1e-9
    assert math.fsum(b.epsilon for b in model.budgets_.values()) <= 1.0 * (1 + 1e-12)
    assert math.fsum(b.delta for b in model.budgets_.values()) <= 1e-5 * (1 + 1e-12)
    assert acc.spent.epsilon <= 1.0 * (1 + 1e-9) and model.privacy_spent_.epsilon <= 1.0
    assert any("feature selection" in label for label, _ in acc.history)
    pre = model.steps[0][1]
    assert pre.numeric_ == ["x0", "x1"] and len(pre.get_feature_names_out()) == 5  # 2, 2 indicators, constant
    assert model.predict(X).shape == (len(X),)
    off = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0,
                              feature_selection="off").fit(X, y)
    assert off.selected_ is None and "select" not in off.budgets_ and len(off.steps[0][1].numeric_) == 12


def test_a_refit_does_not_carry_a_previous_selection():
    X, y = table()
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, feature_selection=2)
    model.fit(X, y)
    model.set_params(feature_selection="off").fit(X, y)
    assert len(model.steps[0][1].numeric_) == 12


@pytest.mark.parametrize("bad, match", [
    (dict(feature_selection="yes"), "feature_selection"),
    (dict(feature_selection=0), "feature_selection"),
    (dict(feature_selection=True), "feature_selection"),
    (dict(feature_selection=13), "more columns"),
    (dict(feature_selection=3, drop=["x0"], categorical=["x1"], feature_selection_dummy=None), None),
])
def test_bad_public_input_is_refused_before_any_charge(bad, match):
    X, y = table(n=500)
    bad = dict(bad)
    if "feature_selection_dummy" in bad:  # 10 candidates left: 11 is too many
        bad.pop("feature_selection_dummy")
        bad["feature_selection"] = 11
        match = "more columns"
    acc = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match=match):
        dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=acc, **bad).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0


def test_duplicate_column_names_are_refused_before_the_selection_charges():
    X, y = table(n=500)
    X.columns = [f"x{j}" for j in range(11)] + ["x0"]
    acc = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="duplicate column names"):
        dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=acc, feature_selection=3).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0


@pytest.mark.parametrize("case", ["array", "multiclass", "undeclared classes"])
def test_a_forced_selection_where_it_cannot_run_is_refused_before_any_charge(case):
    X, y = table(n=500)
    estimator = dperm.DPLinearRegression()
    if case == "array":
        X = X.to_numpy()
    elif case == "multiclass":
        estimator, y = dperm.DPLogisticRegression(classes=[0, 1, 2]), (np.arange(len(y)) % 3)
    else:
        estimator, y = dperm.DPLogisticRegression(), (y > 0).astype(int)
    acc = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="feature_selection=2 needs"):
        dperm.make_pipeline(estimator, epsilon=1.0, accountant=acc, feature_selection=2).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0


def odd_table(n=400, seed=1):
    """Missing values, ties, text in a numeric column, a constant and an all-missing column,
    a categorical column of text."""
    X, y = table(n=n, seed=seed)
    X = X.astype(object)
    X.loc[::7, "x2"] = np.nan
    X["x3"] = np.round(X["x3"].astype(float))  # ties
    X.loc[5, "x4"] = "not a number"
    X.loc[6, "x4"] = math.inf
    X["x5"] = 1.0
    X["x6"] = np.nan
    X["city"] = np.where(np.arange(n) % 2 == 0, "a", "b")
    return X, y


def test_odd_values_never_fail_and_a_text_column_is_kept():
    """Total on data: any value is a rank or missing; a column released categorical is
    kept whatever the selection (its rank correlation has no meaning)."""
    X, y = odd_table()
    y = y.astype(object)
    y[3] = "n/a"  # a target that does not parse: weight 0, out of the statistic
    for k in (1, 3):
        model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=k,
                                    feature_selection=k).fit(X, y)
        assert len(model.selected_) == k
        pre = model.steps[0][1]
        assert set(pre.numeric_) <= set(model.selected_)
        assert "city" in pre.categorical_ or "city" in model.selected_
        assert np.all(np.isfinite(model.predict(X)))


def test_binary_classifier_selects_by_its_label_code():
    X, y = table()
    labels = np.where(y > 0, "yes", "no")
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, random_state=0,
                                feature_selection=2).fit(X, labels)
    assert set(model.selected_) == {"x0", "x1"}


@pytest.mark.parametrize("seed", [0, 1])
def test_neighbours_release_the_same_public_fields(seed):
    """Row 0 replaced by a far-away row (text, infinities, a huge target): the same
    budgets, events and warnings; only the selection's draw and what follows may differ."""
    X, y = odd_table(seed=seed)
    X2, y2 = X.copy(), y.copy().astype(object)
    X2.iloc[0] = [1e300, "x", -math.inf, None, 7.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, "c"]
    y2[0] = 1e12
    fits = []
    for A, b in ((X, y), (X2, y2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=seed,
                                        feature_selection=3).fit(A, b)
        fits.append((model, sorted(str(w.message) for w in caught)))
    (a, wa), (b, wb) = fits
    assert wa == wb
    assert a.budgets_ == b.budgets_ and a.privacy_spent_ == b.privacy_spent_
    assert repr(a.event_) == repr(b.event_)
    assert len(a.selected_) == len(b.selected_) == 3


def test_with_public_dtypes_the_candidates_are_the_numeric_columns():
    """schema="dtypes": a text column is no candidate (k counts numeric columns only) and is
    kept; declared categorical and dropped columns are never candidates."""
    X, y = table(n=1500)
    X["city"] = np.where(np.arange(len(X)) % 3 == 0, "a", "b")
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, schema="dtypes",
                                feature_selection=2).fit(X, y)
    assert "city" not in model.selected_ and model.steps[0][1].categorical_ == ["city"]
    assert len(model.selected_) == 2
    acc = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="more columns than the 12"):
        dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=acc, schema="dtypes",
                            feature_selection=13).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0
