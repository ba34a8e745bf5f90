"""A classification pipeline's constant regime (issue 30): chosen from public inputs only;
where the model would be noise, the declared classes' counts are released with the whole
budget (discrete Laplace, replace-one L1 sensitivity 2) and the released majority class is
predicted."""

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.expectations import NoiseDominatesWarning
from dperm.preprocessing.labels import (CLASSIFIER_CONSTANT_SNR, class_counts, classifier_regime,
                                       classifier_signal_to_noise, count_noise_scale, release_class_counts,
                                       released_frequencies)
from dperm.privacy import events as ev
from dperm.privacy.accountant import epsilon as certified_epsilon
from dperm.privacy.budget import BudgetAccountant
from dperm.privacy.exact_sampling import GeneratorSource, discrete_laplace
from test_regimes import assert_monotone_in_epsilon

pytestmark = pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")


def table(n: int, seed: int = 0, columns: int = 9, classes=(0, 1)):
    """A small table with a weak linear signal; the first class is the majority (about 70%)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, columns)), columns=[f"x{j}" for j in range(columns)])
    score = X["x0"].to_numpy() + rng.normal(size=n)
    cuts = np.quantile(score, np.linspace(0.7, 1.0, len(classes))[:-1])
    y = np.asarray(classes, dtype=object)[np.searchsorted(cuts, score)]
    return X, (y.astype(int) if all(isinstance(c, int) for c in classes) else y)


def fit(X, y, estimator=None, **options):
    estimator = estimator if estimator is not None else dperm.DPLogisticRegression(classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatesWarning)
        return dperm.make_pipeline(estimator, **options).fit(X, y)


# ------------------------------------------------------------------ the public rule
def test_the_regime_is_a_function_of_public_inputs():
    """n, the columns, epsilon, delta and the estimator's parameters decide; undeclared
    classes or inference keep the model; more rows or budget never go back to the constant."""
    est = dperm.DPLogisticRegression(classes=[0, 1])
    assert classifier_regime(est, 923, 9, 0.1, 1e-5) == "constant"  # creditcard_aer at epsilon 0.1
    assert classifier_regime(est, 923, 9, 1.0, 1e-5) == "model"
    assert classifier_regime(est, 20000, 9, 0.1, 1e-5) == "model"
    assert classifier_regime(dperm.DPLogisticRegression(), 923, 9, 0.1, 1e-5) == "model"  # label set from data
    assert classifier_regime(dperm.DPLogisticRegression(classes=[0, 1], inference=True), 923, 9, 0.1, 1e-5) == "model"
    assert classifier_regime(dperm.DPLinearRegression(), 100, 9, 0.01, 1e-5) == "model"
    assert classifier_regime(dperm.DPLinearSVC(classes=[0, 1]), 300, 30, 0.1, 1e-5) == "constant"
    # one-vs-rest at K classes: each fit at epsilon / K, so lower than the binary estimate
    ovr = dperm.DPLogisticRegression(classes=[0, 1, 2], multi_class="ovr")
    assert classifier_signal_to_noise(ovr, 3000, 9, 1.0, 1e-5) < classifier_signal_to_noise(est, 3000, 9, 1.0, 1e-5)
    assert math.isfinite(classifier_signal_to_noise(dperm.DPLogisticRegression(classes=[0, 1, 2]), 3000, 9, 1.0,
                                                    1e-5))
    assert_monotone_in_epsilon(lambda n, eps: classifier_regime(est, n, 9, eps, 1e-5))
    assert 0 < CLASSIFIER_CONSTANT_SNR < 1


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_neighbours_choose_the_same_regime_and_release_the_same_public_fields(epsilon):
    X, y = table(600)
    X2, y2 = X.copy(), y.copy()
    X2.iloc[0] = 1e6
    y2[0] = 1 - y2[0]
    fits = []
    for A, b in ((X, y), (X2, y2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=epsilon,
                                        random_state=4).fit(A, b)
        fits.append((model, sorted(str(w.message) for w in caught)))
    (a, wa), (b, wb) = fits
    assert a.regime_ == b.regime_ == ("constant" if epsilon == 0.1 else "model")
    assert wa == wb
    assert a.budgets_ == b.budgets_
    assert a.privacy_spent_ == b.privacy_spent_
    assert repr(a.event_) == repr(b.event_)
    assert (a.class_frequencies_ is None) == (b.class_frequencies_ is None) == (epsilon == 1.0)


# ------------------------------------------------------------- the count release
def _discrete_laplace_law(t: int, support: np.ndarray) -> np.ndarray:
    """P(N = k) = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|k|/t}, exactly normalized over Z."""
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * np.exp(-np.abs(support) / t)


@pytest.mark.parametrize("epsilon", [0.1, 0.7, 2.0])
def test_the_count_release_is_epsilon_dp_on_a_worst_case_pair(epsilon):
    """Replace-one: a row moves from class a to class b (weight 1 to weight 1, the largest
    move), on counts where the rounding of fractional weights sits on its boundary. The
    output law of the noisy count vector (the product of the coordinates' discrete Laplace
    laws, enumerated over a window holding every region of the ratio) is within
    e^epsilon of its neighbour's everywhere, and the bound is attained (the check can fail)."""
    t = count_noise_scale(epsilon)
    event = ev.DiscreteLaplaceRelease(scale=t, sensitivity=2)
    assert 2.0 / t <= epsilon and certified_epsilon(event, 0.0) <= epsilon * (1 + 1e-12)
    # three classes; other rows of weight 0.5 put class 0's sum on the rounding boundary
    codes = np.array([0, 0, 0, 1, 2, 2])
    weights = np.array([1.0, 0.5, 1.0, 1.0, 0.25, 1.0])
    other = codes.copy()
    other[0] = 2
    c, c2 = class_counts(codes, weights, 3), class_counts(other, weights, 3)
    assert np.abs(c - c2).sum() == 2
    window = np.arange(-6 * t - 10, 6 * t + 12)
    worst = 0.0
    for outcome in itertools.product(window[::max(1, t // 4)], repeat=3):
        o = np.asarray(outcome)
        p = np.prod(_discrete_laplace_law(t, o - c))
        q = np.prod(_discrete_laplace_law(t, o - c2))
        worst = max(worst, abs(math.log(p) - math.log(q)))
    assert worst <= 2.0 / t + 1e-9
    assert worst >= 2.0 / t - 1e-9  # attained: a weaker mechanism would fail here
    # the release is the counts plus the sampler's draws (its law, checked by test_exact_sampling)
    noisy, released = release_class_counts(codes, weights, 3, epsilon, GeneratorSource(np.random.default_rng(5)))
    assert released == event
    np.testing.assert_array_equal(noisy - c, discrete_laplace(GeneratorSource(np.random.default_rng(5)), t, 3))


def test_rounded_weighted_counts_move_by_at_most_two_in_l1():
    """Any replace-one move (class and weight in [0, 1], fractional weights next to
    rounding boundaries) changes the rounded counts by at most 2 in L1, one per class."""
    rng = np.random.default_rng(0)
    grid = np.array([0.0, 0.25, 0.5, 0.5 - 2.0 ** -21, 0.5 + 2.0 ** -21, 0.75, 1.0, 1e-9, 1 - 1e-9])
    worst = 0
    for _ in range(3000):
        n = int(rng.integers(1, 7))
        codes = rng.integers(0, 3, n)
        weights = rng.choice(grid, n)
        other_codes, other_weights = codes.copy(), weights.copy()
        other_codes[0], other_weights[0] = rng.integers(0, 3), rng.choice(grid)
        diff = class_counts(codes, weights, 3) - class_counts(other_codes, other_weights, 3)
        assert np.abs(diff).max() <= 1 and np.abs(diff).sum() <= 2
        worst = max(worst, int(np.abs(diff).sum()))
    assert worst == 2
    np.testing.assert_array_equal(class_counts(np.array([0, 1, 1, 2]), np.ones(4), 3), [1, 2, 1])


def test_released_frequencies_are_a_post_processing_in_the_open_simplex():
    p = released_frequencies(np.array([-5, 10, 3]))
    np.testing.assert_allclose(p, np.array([0.5, 10.5, 3.5]) / 14.5)
    assert np.all(p > 0) and p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(released_frequencies(np.array([-3, -7])), [0.5, 0.5])


# --------------------------------------------------------------- the pipeline
def test_the_constant_regime_spends_the_whole_budget_on_the_counts_and_reads_nothing_else():
    """The ledger holds the count release alone, with the whole epsilon; two tables with the
    same header give the same preprocessing whatever their values (a public stand-in); the
    predictions are the released majority for every row, the probabilities the released
    frequencies, and the estimator is a fitted model with coef_ 0."""
    X, y = table(600)
    other = pd.DataFrame(np.random.default_rng(9).normal(50.0, 9.0, size=X.shape), columns=X.columns)
    fits = []
    for A in (X, other):
        acc = BudgetAccountant(0.1, 1e-5)
        model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=0.1, accountant=acc,
                                    random_state=3)
        with pytest.warns(NoiseDominatesWarning, match="class frequencies"):
            model.fit(A, y)
        assert model.regime_ == "constant" and model.constant_ is None
        assert list(model.budgets_) == ["y"] and model.budgets_["y"].epsilon == pytest.approx(0.1)
        assert len(acc.history) == 1 and acc.history[0][0] == "class counts"
        assert 0.099 < acc.spent.epsilon <= 0.1 * (1 + 1e-9)
        p = model.class_frequencies_
        majority = model.classes_[int(np.argmax(p))]
        np.testing.assert_array_equal(model.predict(A), np.full(len(A), majority))
        np.testing.assert_array_equal(model.predict(A * 0 + 7.0), model.predict(A))
        np.testing.assert_allclose(model.predict_proba(A), np.tile(p, (len(A), 1)))
        final = model.steps[-1][1]
        assert not np.any(final.coef_)
        assert len(np.ravel(final.coef_)) == len(model.steps[0][1].get_feature_names_out())
        fits.append(model)
    a, b = fits
    assert a.steps[0][1].released_values() == b.steps[0][1].released_values()
    np.testing.assert_array_equal(a.class_frequencies_, b.class_frequencies_)  # the same y, the same seed


def test_the_released_majority_is_the_majority_and_weights_count():
    """At epsilon 0.1 (noise scale 20) over 600 rows, 70% in class 0: the released majority is
    class 0 on all seeds; a label outside the declared classes and a weight-0 row count 0."""
    X, y = table(600)
    majorities = [fit(X, y, epsilon=0.1, random_state=s).predict(X.iloc[:1])[0] for s in range(8)]
    assert majorities == [0] * 8
    flipped = 1 - y
    assert fit(X, flipped, epsilon=0.1, random_state=0).predict(X.iloc[:1])[0] == 1
    # class 1's rows with weight 0 and labels outside the classes: class 0 alone is counted
    weight = np.where(flipped == 1, 0.0, 1.0)
    labelled = np.where(flipped == 1, 7, flipped)
    for yy, params in ((flipped, {"dplogisticregression__sample_weight": weight}), (labelled, {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoiseDominatesWarning)
            model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=0.1,
                                        random_state=0).fit(X, yy, **params)
        assert model.predict(X.iloc[:1])[0] == 0 and model.class_frequencies_[0] > 0.9


def test_declared_class_weights_weigh_the_counts_and_balanced_is_refused_before_any_charge():
    """The counts weigh each row by its class's declared weight, scaled into [0, 1] as the
    model's fit scales it (a class-weighted intercept-only model); ``"balanced"`` and a
    label outside the classes are refused before anything is charged, in either regime."""
    X, y = table(600)  # about 70% class 0
    weighted = dperm.DPLogisticRegression(classes=[0, 1], class_weight={0: 1.0, 1: 5.0})
    model = fit(X, y, estimator=weighted, epsilon=0.1, random_state=0, regime="constant")
    share = np.mean(y == 1)
    expected = 5 * share / (5 * share + (1 - share))  # 0.2 x class 0's rows against class 1's
    assert model.predict(X.iloc[:1])[0] == 1
    assert model.class_frequencies_[1] == pytest.approx(expected, abs=0.1)
    assert fit(X, y, epsilon=0.1, random_state=0, regime="constant").class_frequencies_[1] == pytest.approx(
        share, abs=0.1)
    for class_weight in ("balanced", {0: 1.0, 2: 3.0}, {0: -1.0}):
        for regime in ("constant", "model"):
            acc = BudgetAccountant(1.0, 1e-5)
            estimator = dperm.DPLogisticRegression(classes=[0, 1], class_weight=class_weight)
            with pytest.raises(ValueError, match="class_weight"):
                fit(X, y, estimator=estimator, epsilon=1.0, accountant=acc, regime=regime)
            assert acc.spent is None or acc.spent.epsilon == 0


@pytest.mark.parametrize("estimator", [dperm.DPLogisticRegression(classes=["a", "b", "c"]),
                                       dperm.DPLogisticRegression(classes=["a", "b", "c"], multi_class="ovr"),
                                       dperm.DPLinearSVC(classes=["a", "b", "c"])])
def test_multiclass_intercepts_give_the_released_frequencies(estimator):
    X, y = table(500, classes=("a", "b", "c"))
    model = fit(X, y, estimator=estimator, epsilon=0.1, random_state=1, regime="constant")
    p = model.class_frequencies_
    assert model.regime_ == "constant" and p.shape == (3,)
    np.testing.assert_array_equal(model.predict(X), np.full(len(X), np.array(["a", "b", "c"])[np.argmax(p)]))
    if hasattr(model.steps[-1][1], "predict_proba"):
        np.testing.assert_allclose(model.predict_proba(X), np.tile(p, (len(X), 1)))


def test_regime_model_keeps_the_model_and_constant_needs_declared_classes():
    X, y = table(600)
    model = fit(X, y, epsilon=0.1, random_state=0, regime="model")
    assert model.regime_ == "model" and model.class_frequencies_ is None
    assert np.any(model.steps[-1][1].coef_)
    assert len(np.unique(model.predict_proba(X)[:, 1])) > 1
    for estimator in (dperm.DPLogisticRegression(), dperm.DPLogisticRegression(classes=[0, 1], inference=True)):
        acc = BudgetAccountant(1.0, 1e-5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="declared classes"):
                dperm.make_pipeline(estimator, epsilon=1.0, accountant=acc, regime="constant").fit(X, y)
        assert acc.spent is None or acc.spent.epsilon == 0


def test_the_constant_regime_warns_once_at_the_users_line():
    X, y = table(600)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=0.1, random_state=0).fit(X, y)
    ours = [w for w in caught if issubclass(w.category, NoiseDominatesWarning)]
    assert len(ours) == 1 and "majority class" in str(ours[0].message)
    assert ours[0].filename == __file__


def test_dperm_fit_and_predict_keep_working_on_the_constant_classifier(tmp_path):
    """model.json of the constant regime (coefficients 0, the intercept of the released
    frequencies) predicts the released majority for every row through `dperm predict`."""
    from dperm.cli import main

    X, y = table(600, columns=4)
    frame = X.assign(label=y)
    data = tmp_path / "small.csv"
    frame.to_csv(data, index=False)
    out, predictions = tmp_path / "m.json", tmp_path / "p.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(data), "--target", "label", "--loss", "logistic", "--classes", "0,1",
                     "--epsilon", "0.1", "--seed", "0", "--out", str(out)]) == 0
        assert main(["predict", str(out), str(data), "--out", str(predictions)]) == 0
    record = json.loads(out.read_text())
    assert not np.asarray(record["coef"]).any()
    predicted = pd.read_csv(predictions).iloc[:, -1].to_numpy()
    assert len(predicted) == len(frame) and len(np.unique(predicted)) == 1


def test_dperm_fit_names_the_constant_classifier_and_regime_model_fits_the_model(tmp_path, capsys):
    """The closing line says what was released (the majority of noisy class counts, not
    a regression's median), and --regime model fits the model on the command line."""
    from dperm.cli import main

    X, y = table(600, columns=4)
    data = tmp_path / "small.csv"
    X.assign(label=y).to_csv(data, index=False)
    base = ["fit", str(data), "--target", "label", "--loss", "logistic", "--classes", "0,1", "--epsilon", "0.1",
            "--seed", "0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*base, "--out", str(tmp_path / "c.json")]) == 0
        line = capsys.readouterr().out
        assert main([*base, "--regime", "model", "--out", str(tmp_path / "m.json")]) == 0
    assert "the released majority class" in line and "median" not in line
    assert np.asarray(json.loads((tmp_path / "m.json").read_text())["coef"]).any()
