"""A regression pipeline's regime and target range (issue 30): chosen from public inputs
only, the intercept-only model where the model would be noise, a private range inside
declared target bounds."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.exceptions import InferenceWarning
from dperm.expectations import NoiseDominatesWarning
from dperm.pipeline import CONSTANT_TARGET_SHARE, regression_regime
from dperm.preprocessing.quantiles import centre_grid, rank_counts, scores_from_counts
from dperm.preprocessing.target import target_centre, within_declared
from dperm.privacy.budget import BudgetAccountant

pytestmark = pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")


def wages(n: int, seed: int = 0, columns: int = 11):
    """A small wage-like table: skewed positive target (median about 8), a few features."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, columns)), columns=[f"x{j}" for j in range(columns)])
    y = np.exp(2.0 + 0.3 * X["x0"].to_numpy() + 0.4 * rng.normal(size=n))
    return X, y


def neighbour(X, y):
    """Row 0 replaced by a far-away row (features and target)."""
    X2, y2 = X.copy(), y.copy()
    X2.iloc[0] = 1e6
    y2[0] = 1e9
    return X2, y2


def test_the_regime_is_a_function_of_public_inputs():
    """n, the columns, epsilon, delta and the estimator's parameters decide; the rule errs
    towards the model as the budget or the rows grow."""
    est = dperm.DPLinearRegression()
    assert regression_regime(est, 373, 11, 0.1, 1e-5) == "constant"
    assert regression_regime(est, 373, 11, 1.0, 1e-5) == "model"
    assert regression_regime(est, 20000, 11, 0.1, 1e-5) == "model"
    assert regression_regime(est, 3000, 3, 0.1, 1e-5) == "model"
    assert regression_regime(dperm.DPLogisticRegression(classes=[0, 1]), 50, 11, 0.01, 1e-5) == "model"
    assert_monotone_in_epsilon(lambda n, eps: regression_regime(est, n, 11, eps, 1e-5))


def assert_monotone_in_epsilon(regime_at) -> None:
    """A regime rule ``regime_at(n, epsilon)``: once "model", a larger epsilon stays "model"."""
    for n in (300, 1000, 3000, 10000):
        seen_model = False
        for eps in (0.01, 0.03, 0.1, 0.3, 1.0, 3.0):
            regime = regime_at(n, eps)
            assert not (seen_model and regime == "constant")
            seen_model = seen_model or regime == "model"


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
@pytest.mark.parametrize("y_bounds", ["auto", (0.0, 200.0)])
def test_neighbours_choose_the_same_regime_and_release_the_same_public_fields(epsilon, y_bounds):
    X, y = wages(373)
    X2, y2 = neighbour(X, y)
    fits = []
    for A, b in ((X, y), (X2, y2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=epsilon, random_state=4,
                                        y_bounds=y_bounds).fit(A, b)
        fits.append((model, sorted(str(w.message) for w in caught)))
    (a, wa), (b, wb) = fits
    assert a.regime_ == b.regime_
    assert (a.constant_ is None) == (b.constant_ is None)
    assert wa == wb  # the same warnings, word for word
    assert {k: v for k, v in a.budgets_.items()} == {k: v for k, v in b.budgets_.items()}
    assert a.privacy_spent_ == b.privacy_spent_
    assert repr(a.event_) == repr(b.event_)
    assert a.regime_ == ("constant" if epsilon == 0.1 else "model")


def test_the_constant_regime_predicts_the_private_median_drawn_with_the_whole_budget():
    """Issue 30: at n = 373, epsilon = 0.1 a target range drawn at half the target's share
    landed off the data (cps1985: R^2 = -4e15). The constant regime's one median draw with
    the whole epsilon lands within the data; predictions are that constant
    (post-processing)."""
    X, y = wages(373)
    inside = fair = 0
    for seed in range(10):
        acc = BudgetAccountant(0.1, 1e-5)
        with pytest.warns(NoiseDominatesWarning, match="private median"):
            model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=0.1, accountant=acc,
                                        random_state=seed).fit(X, y)
        assert model.regime_ == "constant"
        assert model.budgets_["y"].epsilon == pytest.approx(CONSTANT_TARGET_SHARE * 0.1)
        assert acc.spent.epsilon <= 0.1 * (1 + 1e-9)
        prediction = model.predict(X)
        np.testing.assert_array_equal(prediction, np.full(len(X), model.constant_))
        # predict reads nothing of X's values: the intercept-only model
        np.testing.assert_array_equal(model.predict(X * 0 + 7.0), prediction)
        # the released estimator is the intercept-only model (what dperm fit writes to model.json)
        final = model.steps[-1][1]
        assert not np.any(final.coef_) and final.intercept_ == model.constant_
        inside += np.quantile(y, 0.1) <= model.constant_ <= np.quantile(y, 0.9)
        fair += model.score(X, y) > -1.0
    assert inside >= 9 and fair >= 9


def test_the_constant_regime_spends_the_whole_budget_on_the_median_and_reads_nothing_else():
    """The unused preprocessing and model are fitted on a public stand-in (no row of the
    data): the ledger holds the median's draw alone, with the whole epsilon; two tables
    with the same header give the same preprocessing and estimator whatever their values
    (same seed), and the released estimator is still a fitted intercept-only model."""
    X, y = wages(373)
    other = pd.DataFrame(np.random.default_rng(9).normal(50.0, 9.0, size=X.shape), columns=X.columns)
    fits = []
    for A in (X, other):
        acc = BudgetAccountant(0.1, 1e-5)
        model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=0.1, accountant=acc, random_state=3)
        with pytest.warns(NoiseDominatesWarning, match="private median"):
            model.fit(A, y)
        assert model.regime_ == "constant"
        assert list(model.budgets_) == ["y"] and model.budgets_["y"].epsilon == pytest.approx(0.1)
        assert len(acc.history) == 1 and acc.history[0][0] == "target centre"
        assert 0.099 < acc.spent.epsilon <= 0.1 * (1 + 1e-9)  # (certified at delta: a little below 0.1)
        assert 0.099 < model.privacy_spent_.epsilon <= 0.1 * (1 + 1e-9)
        final = model.steps[-1][1]
        assert not np.any(final.coef_) and final.intercept_ == model.constant_
        np.testing.assert_array_equal(model.predict(A), np.full(len(A), model.constant_))
        fits.append(model)
    a, b = fits
    assert a.steps[0][1].released_values() == b.steps[0][1].released_values()
    assert a.constant_ == b.constant_  # the same y, the same seed: the median's draw alone reads the data
    # the stand-in model's width is the preprocessing's output width (model.json's coef)
    assert len(np.ravel(a.steps[-1][1].coef_)) == len(a.steps[0][1].get_feature_names_out())


def test_regime_model_keeps_the_model_and_bad_names_are_refused_before_any_charge():
    X, y = wages(373)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=0.1, random_state=0,
                                    regime="model").fit(X, y)
    assert model.regime_ == "model" and model.constant_ is None
    assert len(np.unique(model.predict(X))) > 1
    for bad in (dict(regime="linear"), dict(target_range="winsorized")):
        acc = BudgetAccountant(1.0, 1e-5)
        with pytest.raises(ValueError, match="regime|target_range"):
            dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=acc, **bad).fit(X, y)
        assert acc.spent is None or acc.spent.epsilon == 0


def test_the_constant_regime_warns_at_the_users_line():
    X, y = wages(373)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=0.1, random_state=0).fit(X, y)  # the user's line
    ours = [w for w in caught if issubclass(w.category, NoiseDominatesWarning)]
    assert len(ours) == 1  # once: the estimator's own warning is not repeated
    assert ours[0].filename == __file__


def test_a_regressor_whose_noise_dominates_warns_at_the_users_line():
    X = np.random.default_rng(0).normal(size=(60, 8)) / 3
    y = X[:, 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dperm.DPLinearRegression(epsilon=0.05, random_state=0).fit(X, y)  # the user's line
    ours = [w for w in caught if issubclass(w.category, NoiseDominatesWarning)]
    assert ours and ours[0].filename == __file__


def test_declared_bounds_get_a_private_range_inside_them():
    """A skewed target with its (min, max) declared: the model's map is a private range
    inside the bounds (not centred at their middle, far above most values), charged as the
    target's part; target_range="declared" keeps the bounds, free."""
    X, y = wages(3000, columns=3)
    bounds = (0.0, 10 * float(np.max(y)))
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, y_bounds=bounds).fit(X, y)
    low, high = model.y_bounds_
    assert bounds[0] <= low < high <= bounds[1]
    assert 0.5 * (low + high) < 0.2 * bounds[1]  # centred near the bulk of the values
    assert bounds[0] <= model.y_range_[0] < model.y_range_[1] <= bounds[1]
    assert "y" in model.budgets_
    prediction = model.predict(X)
    assert np.all((prediction >= model.y_range_[0]) & (prediction <= model.y_range_[1]))
    free = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, y_bounds=bounds,
                               target_range="declared").fit(X, y)
    assert free.y_bounds_ == bounds and "y" not in free.budgets_
    assert model.score(X, y) > free.score(X, y)


def test_inference_keeps_the_declared_target_bounds_by_default():
    """With intervals asked for, the default target_range maps the declared bounds (free):
    a private winsorization inside them would change the coefficients the intervals are
    for and take a share of the budget; target_range="private" still asks for it."""
    X, y = wages(3000, columns=3)
    bounds = (0.0, 10 * float(np.max(y)))
    with warnings.catch_warnings():  # 8 coefficients at n = 3000: the intervals' outlook warns (public inputs)
        warnings.simplefilter("ignore", InferenceWarning)
        model = dperm.make_pipeline(dperm.DPLinearRegression(inference=True), epsilon=1.0, random_state=0,
                                    y_bounds=bounds).fit(X, y)
        asked = dperm.make_pipeline(dperm.DPLinearRegression(inference=True), epsilon=1.0, random_state=0,
                                    y_bounds=bounds, target_range="private").fit(X, y)
    assert model.y_bounds_ == bounds and "y" not in model.budgets_
    assert model[-1].get_params()["y_bounds"] == bounds
    assert "y" in asked.budgets_ and asked.y_bounds_ != bounds


def test_within_declared_is_the_overlap_or_the_declared_bounds():
    assert within_declared((-5.0, 3.0), (0.0, 10.0)) == (0.0, 3.0)
    assert within_declared((20.0, 30.0), (0.0, 10.0)) == (0.0, 10.0)
    assert within_declared((1.0, 2.0), (0.0, 10.0)) == (1.0, 2.0)


def _centre_law(values, epsilon):
    """The exact output law of target_centre's draw (real arithmetic): the exponential
    mechanism over centre_grid with its base measure, utility the median's rank score."""
    grid, prior = centre_grid()
    scores = scores_from_counts(*rank_counts(np.sort(values), grid), 0.5)
    logits = prior + 0.5 * epsilon * scores
    logits -= logits.max()
    p = np.exp(logits)
    return grid, p / p.sum()


def test_target_centre_is_epsilon_dp_on_a_worst_case_pair():
    """Replace-one pairs of a small column, one value moved across the median and to a
    far-away value (and to NaN, left out): the draw's output laws are within e^epsilon of
    each other everywhere; the seeded draws follow the law."""
    epsilon = 0.7
    base = np.array([1.0, 2.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0])
    worst = 0.0
    for replacement in (-1e8, 0.0, 2.0, 4.0, 1e8, np.nan):
        other = base.copy()
        other[3] = replacement
        _, p = _centre_law(base[np.isfinite(base)], epsilon)
        _, q = _centre_law(other[np.isfinite(other)], epsilon)
        worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert worst <= epsilon + 1e-9
    assert worst > 0.5 * epsilon  # the pair is a hard one (the check can fail)
    grid, p = _centre_law(base, epsilon)
    draws = np.array([target_centre(base, epsilon, random_state=s)[0] for s in range(400)])
    # the law's mass below the median's neighbourhood against the draws'
    for cut in (1.5, 3.5, 9.0):
        expected = float(p[grid <= cut].sum())
        observed = float(np.mean(draws <= cut))
        assert abs(observed - expected) < 4.5 * math.sqrt(expected * (1 - expected) / draws.size) + 0.01


def test_target_centre_charges_its_event_before_reading_y():
    acc = BudgetAccountant(0.05, 0.0)
    with pytest.raises(dperm.BudgetExceededError):
        target_centre(np.arange(10.0), 0.1, accountant=acc, random_state=0)
    centre, event = target_centre(np.arange(100.0), 0.05, bounds=(10.0, 20.0), accountant=acc, random_state=0)
    assert 10.0 <= centre <= 20.0
    assert acc.spent.epsilon == pytest.approx(0.05)


def test_an_estimator_with_declared_y_bounds_predicts_inside_them():
    """Issue 30, cause 7: a wage is never predicted negative once (0, high) is declared."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 2
    y = np.clip(5 + 4 * X[:, 0] + rng.normal(size=3000), 0, 20)
    model = dperm.DPLinearRegression(epsilon=1.0, random_state=0, y_bounds=(0.0, 20.0)).fit(X, y)
    far = np.vstack([X, -50 * np.ones((1, 4)), 50 * np.ones((1, 4))])
    prediction = model.predict(far)
    assert prediction.min() >= 0.0 and prediction.max() <= 20.0
    raw = far @ model.coef_ + model.intercept_
    assert raw.min() < 0.0 or raw.max() > 20.0  # the clip did something
    np.testing.assert_allclose(prediction, np.clip(raw, 0.0, 20.0))


def test_dperm_fit_says_it_fitted_the_constant_and_regime_model_fits_the_model(tmp_path, capsys):
    """`dperm fit` at a public size where the model would be noise: its line says the
    intercept-only model (model.json's coefficients 0), and --regime model fits the model."""
    from dperm.cli import main

    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"age": rng.integers(18, 70, n).astype(float), "hours": rng.normal(40, 8, n)})
    frame["wage"] = 10 + 0.3 * frame["age"] + rng.normal(0, 3, n)
    data = tmp_path / "small.csv"
    frame.to_csv(data, index=False)
    lines = {}
    for regime in ("auto", "model"):
        out = tmp_path / f"{regime}.json"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["fit", str(data), "--target", "wage", "--loss", "squared", "--epsilon", "0.1",
                         "--seed", "0", "--regime", regime, "--out", str(out)]) == 0
        lines[regime] = capsys.readouterr().out
        coef = np.asarray(json.loads(out.read_text())["coef"])
        assert (not coef.any()) == (regime == "auto")
    assert "intercept-only model" in lines["auto"] and "objective_perturbation" not in lines["auto"]
    assert "objective_perturbation" in lines["model"] and "intercept-only" not in lines["model"]


@pytest.mark.parametrize("options, words", [
    (["--loss", "squared", "--data-norm", "1"], "--regime is for a fit through the private preprocessing"),
    (["--loss", "logistic", "--data-norm", "1", "--classes", "0,1"], "--regime is for a fit through the private"),
    (["--loss", "logistic", "--regime", "constant"], "give --classes")])
def test_dperm_fit_refuses_regime_where_it_has_no_meaning_before_any_charge(tmp_path, capsys, options, words):
    """--regime outside the private preprocessing (rows declared prepared), or a constant
    classifier without declared classes (its counts are over them): a clear error from the
    command line alone, nothing written to the ledger."""
    from dperm.cli import main

    data = tmp_path / "t.csv"
    data.write_text("x,y\n0.1,0\n0.2,1\n0.3,0\n")
    ledger = tmp_path / "ledger.json"
    assert main(["budget", str(ledger), "--epsilon", "1", "--delta", "1e-5"]) == 0
    regime = [] if "--regime" in options else ["--regime", "model"]
    status = main(["fit", str(data), "--target", "y", *options, *regime, "--epsilon", "1", "--accountant",
                   str(ledger), "--out", str(tmp_path / "m.json")])
    assert status != 0 and words in capsys.readouterr().err
    assert json.loads(ledger.read_text())["charges"] == []
