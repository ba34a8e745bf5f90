"""dperm.preprocessing: each transformer is a private mechanism with an event, charged like
a fit; declared values are free; only noisy statistics depend on the data; and the
privacy claims hold on the mechanisms' exact output distributions."""

import itertools
import warnings
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dperm.privacy import events as ev
from dperm.privacy.accountant import epsilon as certified_epsilon
from dperm.privacy.budget import BudgetAccountant, BudgetExceededError
from dperm.preprocessing import PrivateOneHotEncoder, PrivatePreprocessor, PrivateScaler
from dperm.preprocessing.categorical import histogram_threshold, noise_scale, release_probability
from dperm.preprocessing.quantiles import SENSITIVITY, quantile_scores


def _em_probabilities(column, q, grid, eps):
    scores = quantile_scores(np.sort(np.asarray(column, dtype=float)), q, grid)
    logits = eps * scores / (2 * SENSITIVITY)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_quantile_mechanism_log_ratio_on_every_replace_one_pair(q):
    """Exhaustive: every column of 4 values from a 4-value domain, every replace-one
    neighbour; the exact output probabilities' log-ratio never exceeds epsilon."""
    eps, domain = 0.7, [0.0, 1.0, 2.0, 3.0]
    grid = np.array([-0.5, 0.5, 1.5, 2.5, 3.5])
    worst = 0.0
    for column in itertools.product(domain, repeat=4):
        p = _em_probabilities(column, q, grid, eps)
        for value in domain:
            neighbour = (value,) + column[1:]
            p2 = _em_probabilities(neighbour, q, grid, eps)
            worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(p2)))))
    assert worst <= eps * (1 + 1e-12)
    assert worst > 0.4 * eps  # the pairs reach the bound's order: the check is not vacuous


def test_spread_draw_log_ratio_on_every_replace_one_pair():
    """The spread's scores as the scaler computes them (counts read off the sorted column
    at centre -+ r, :func:`spread_counts`): exhaustive, as above, radii on and between
    the distances, so ties are exercised."""
    from dperm.preprocessing.quantiles import scores_from_counts, spread_counts

    eps, c = 0.9, 1.0
    radii = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    worst = 0.0
    for column in itertools.product([0.0, 1.0, 2.0, 3.0], repeat=4):
        for value in [0.0, 1.0, 2.0, 3.0]:
            probs = []
            for col in (column, (value,) + column[1:]):
                scores = scores_from_counts(*spread_counts(np.sort(np.array(col)), c, radii), 0.5)
                logits = eps * scores / 2
                probs.append(np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum())
            worst = max(worst, float(np.max(np.abs(np.log(probs[0]) - np.log(probs[1])))))
    assert 0.4 * eps < worst <= eps * (1 + 1e-12)


def _discrete_laplace_survival(t, k):
    """P(N >= k) for N with P(j) ~ exp(-|j|/t), exactly (closed forms on both sides)."""
    r = math.exp(-1.0 / t)
    if k >= 1:
        return r ** k / (1 + r)
    return 1.0 - r ** (1 - k) / (1 + r)  # 1 - P(N <= k - 1) = 1 - P(N >= 1 - k)


@pytest.mark.parametrize("t,delta", [(2, 1e-3), (3, 1e-2)])
def test_stability_histogram_delta_on_exact_output_distributions(t, delta):
    """Replace-one moves one row from category a to b. For every pair of counts, the
    exact distribution of the released set is within (2/t, delta) of its neighbour's."""
    threshold = histogram_threshold(t, delta)
    eps = 2.0 / t

    def law(counts):
        probs = [(_discrete_laplace_survival(t, threshold - c) if c > 0 else 0.0) for c in counts]
        return {S: math.prod(p if s else 1 - p for p, s in zip(probs, S))
                for S in itertools.product([0, 1], repeat=len(counts))}

    worst = 0.0
    for ca, cb in itertools.product(range(0, threshold + 4), repeat=2):
        if ca == 0:
            continue
        P, Q = law((ca, cb)), law((ca - 1, cb + 1))
        for A, B in ((P, Q), (Q, P)):
            worst = max(worst, sum(max(0.0, A[S] - math.exp(eps) * B[S]) for S in A))
    assert worst <= release_probability(t, threshold) * (1 + 1e-9)
    assert release_probability(t, threshold) <= delta
    assert worst > 0  # a category appears: the delta is used


def test_noise_scale_never_exceeds_the_epsilon_asked():
    for eps in (0.01, 0.3, 1.0, 2.0, 5.0):
        assert 2.0 / noise_scale(eps) <= eps or noise_scale(eps) == 1


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(np.int64),
        "income": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(10, 1, n)),
        "city": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
    })


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_scaler_event_spend_and_accountant():
    X = _frame()[["age", "income"]]
    acc = BudgetAccountant(1.0)
    scaler = PrivateScaler(method="median", epsilon=0.6, accountant=acc, random_state=0).fit(X)
    leaves = scaler.event_.events
    assert len(leaves) == 6 and all(isinstance(e, ev.ExponentialMechanismRelease) for e in leaves)
    assert all(e.epsilon == pytest.approx(0.1) for e in leaves)
    assert scaler.privacy_spent_.epsilon == pytest.approx(0.6) and scaler.privacy_spent_.delta == 0
    assert acc.spent.epsilon == pytest.approx(0.6)
    out = scaler.transform(X)
    assert np.all(np.abs(out) <= 1) and not np.isnan(out).any()


def test_declared_values_are_free():
    X = _frame()
    acc = BudgetAccountant(1.0)
    pre = PrivatePreprocessor(bounds={"age": (0, 100), "income": (0, 1e6)}, categories={"city": ["a", "b", "c"]},
                              accountant=acc, random_state=0).fit(X)
    assert isinstance(pre.event_, ev.NoOpDpEvent) and pre.privacy_spent_ is None
    assert acc.spent is None and not acc.events
    assert list(pre.encoder_.categories_[0]) == ["a", "b", "c"]
    assert pre.scaler_.centre_[0] == 50 and pre.scaler_.spread_[0] == 50


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_budget_exceeded_before_reading_the_data():
    acc = BudgetAccountant(0.1)
    X = _frame()[["age"]]
    with pytest.raises(BudgetExceededError):
        PrivateScaler(epsilon=0.5, accountant=acc).fit(X)
    assert acc.spent is None


def test_unseen_category_is_zeros_and_missing_is_indicated():
    X = _frame()
    pre = PrivatePreprocessor(categories={"city": ["a", "b"]}, bounds={"age": (0, 100), "income": (0, 1e6)},
                              row_norm="none").fit(X)
    test = pd.DataFrame({"age": [30], "income": [np.nan], "city": ["zzz"]})
    out = pre.transform(test)
    names = list(pre.get_feature_names_out())
    # every numeric column gets its indicator, the integer one too: a choice by dtype would
    # rest on single rows (read_csv turns an integer column with one missing value to float)
    assert names == ["age", "income", "age_missing", "income_missing", "city=a", "city=b"]
    assert out[0, names.index("income_missing")] == 1 and out[0, names.index("income")] == 0
    assert out[0, names.index("age_missing")] == 0
    assert out[0, names.index("city=a")] == 0 and out[0, names.index("city=b")] == 0
    assert pre.output_norm_ == pytest.approx(math.sqrt(2 + 2 + 1))


def test_missing_indicators_do_not_follow_the_dtype():
    """Neighbouring tables read by pandas: one missing value turns an integer column to
    float; the released structure (feature names, row bound) must not change."""
    X = _frame()
    X["age"] = X["age"].astype(np.int64)
    X2 = X.copy()
    X2["age"] = X2["age"].astype(np.float64)
    X2.loc[0, "age"] = np.nan
    kwargs = dict(categories={"city": ["a", "b"]}, bounds={"age": (0, 100), "income": (0, 1e6)})
    one, two = PrivatePreprocessor(**kwargs).fit(X), PrivatePreprocessor(**kwargs).fit(X2)
    assert list(one.get_feature_names_out()) == list(two.get_feature_names_out())
    assert one.output_norm_ == two.output_norm_


@pytest.mark.parametrize("row_norm", ["normalize", "scale", "none"])
@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_rows_within_the_public_bound(row_norm):
    X = _frame()
    pre = PrivatePreprocessor(row_norm=row_norm, delta=1e-6, random_state=1).fit(X)
    norms = np.linalg.norm(pre.transform(X), axis=1)
    assert np.all(norms <= pre.output_norm_ * (1 + 1e-12))


def _fitted(obj) -> dict:
    out = {}
    for key, value in vars(obj).items():
        if key.endswith("_") and not key.startswith("__"):
            out[key] = value
    return out


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_replace_one_neighbours_differ_only_in_noisy_statistics():
    """Same seed on neighbouring frames: every fitted attribute is identical except the
    released noisy statistics (and what is computed from them)."""
    X = _frame(n=400, seed=3)
    X2 = X.copy()
    X2.loc[0, ["age", "income", "city"]] = [5000, 1e9, "new-city"]
    noisy = {"centre_", "spread_", "bounds_", "categories_", "n_features_out_"}
    fits = [PrivatePreprocessor(delta=1e-6, random_state=7).fit(A) for A in (X, X2)]
    first, second = _fitted(fits[0]), _fitted(fits[1])
    assert first.keys() == second.keys()
    for key in first:
        if key in noisy or key in ("scaler_", "encoder_"):
            continue
        assert repr(first[key]) == repr(second[key]), key
    for block in ("scaler_", "encoder_"):
        a, b = _fitted(first[block]), _fitted(second[block])
        for key in a:
            if key not in noisy:
                assert repr(a[key]) == repr(b[key]), (block, key)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_unseeded_fits_draw_through_the_exact_samplers(monkeypatch):
    import dperm.privacy.secure_release as sr
    import dperm.preprocessing.categorical as cat

    calls = {"em": 0, "laplace": []}
    real_em = sr.secure_exponential_mechanism

    def em(*args, **kwargs):
        calls["em"] += 1
        return real_em(*args, **kwargs)

    real_dl = cat.discrete_laplace

    def dl(source, scale, size):
        calls["laplace"].append(type(source).__name__)
        return real_dl(source, scale, size)

    monkeypatch.setattr(sr, "secure_exponential_mechanism", em)
    monkeypatch.setattr(cat, "discrete_laplace", dl)
    # selection="always": the category selection runs (hashing only would skip its draw)
    pre = PrivatePreprocessor(delta=1e-6, random_state=None, selection="always").fit(_frame())
    draws = 3 if pre.scaler_.method_ == "range" else 2  # "auto": public inputs choose
    assert calls["em"] == 2 * draws  # two numeric columns
    assert calls["laplace"] == ["SecureRandom"]


def test_histogram_needs_delta_and_candidates_are_pure():
    X = _frame()[["city"]]
    with pytest.raises(ValueError, match="delta"):
        PrivateOneHotEncoder(epsilon=1.0).fit(X)
    enc = PrivateOneHotEncoder(candidates=[["a", "b", "c", "d"]], epsilon=0.5, random_state=0).fit(X)
    assert isinstance(enc.event_, ev.DiscreteLaplaceRelease) and enc.event_.epsilon <= 0.5
    assert enc.privacy_spent_.delta == 0
    assert "d" not in set(enc.categories_[0])
    enc = PrivateOneHotEncoder(epsilon=0.5, delta=1e-6, random_state=0).fit(X)
    assert isinstance(enc.event_, ev.ApproximateDpRelease) and enc.privacy_spent_.delta <= 1e-6


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_clone_and_pickle():
    pre = PrivatePreprocessor(delta=1e-6, random_state=0)
    assert clone(pre).get_params() == pre.get_params()
    X = _frame()
    pre.fit(X)
    again = pickle.loads(pickle.dumps(pre))
    np.testing.assert_array_equal(again.transform(X), pre.transform(X))


def test_noisy_statistics_warning_from_public_inputs():
    from dperm.preprocessing import PreprocessingNoiseWarning

    small = pd.DataFrame(np.random.default_rng(0).normal(size=(100, 20)))
    with pytest.warns(PreprocessingNoiseWarning, match="n=100"):
        PrivateScaler(epsilon=0.5, random_state=0).fit(small)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PreprocessingNoiseWarning)
        PrivateScaler(epsilon=1.0, random_state=0).fit(_frame(n=20000)[["age"]])


def test_integer_column_gets_its_integer_median():
    """The tie-aware score and the round refinement grid: a column of integers whose
    median is held by many rows gets that integer as its centre (at a large epsilon)."""
    rng = np.random.default_rng(0)
    column = rng.choice([3, 4, 5, 6, 7, 8], size=5000, p=[0.02, 0.05, 0.3, 0.45, 0.15, 0.03]).astype(float)
    scaler = PrivateScaler(method="median", epsilon=300.0, random_state=0).fit(column[:, None])
    assert scaler.centre_[0] == 6.0
    assert scaler.spread_[0] == 3.0  # 3 x the median of |x - 6| over the rows off 6, which is 1


@pytest.mark.parametrize("make", [lambda: PrivateScaler(epsilon=5.0, random_state=0),
                                  lambda: PrivateOneHotEncoder(epsilon=5.0, delta=1e-6, random_state=0),
                                  lambda: PrivatePreprocessor(epsilon=5.0, delta=1e-6, random_state=0)])
def test_scikit_learn_estimator_checks(make):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed = [r["check_name"] for r in check_estimator(make(), on_fail=None) if r["status"] == "failed"]
    assert failed == []


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_delta_lets_the_accountant_compose_the_draws():
    """With delta > 0 each draw gets more than epsilon / k, and the one accountant still
    certifies the k draws within (epsilon, delta)."""
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(2000, 6)))
    pure = PrivateScaler(method="median", epsilon=0.3, random_state=0).fit(X)
    composed = PrivateScaler(method="median", epsilon=0.3, delta=1e-6, random_state=0).fit(X)
    per_draw = [e.epsilon for e in composed.event_.events]
    assert len(per_draw) == 18 and min(per_draw) > 1.5 * 0.3 / 18
    assert certified_epsilon(composed.event_, 1e-6) <= 0.3 * (1 + 1e-9)
    assert composed.privacy_spent_.delta == 1e-6 and composed.privacy_spent_.epsilon <= 0.3 * (1 + 1e-9)
    assert pure.privacy_spent_.epsilon == pytest.approx(0.3)


def test_spread_counts_equal_the_counts_of_the_distances():
    from dperm.preprocessing.quantiles import log_grid, rank_counts, spread_counts

    rng = np.random.default_rng(5)
    values = np.sort(np.concatenate([rng.integers(-5, 6, 500).astype(float), rng.normal(0, 100, 500)]))
    radii = log_grid()[log_grid() > 0]
    for centre in (0.0, 1.0, 2.5):
        a = rank_counts(np.sort(np.abs(values - centre)), radii)
        b = spread_counts(values, centre, radii)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]
