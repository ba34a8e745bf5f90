"""Hashed categories (issue 30): a level of a column without a declared list that is not
released by name maps to one of B public buckets, by a fixed hash of its canonical label.

The map is public and per row (no budget): the same in every process, for every
representation of one label, for a level first seen at transform time; nothing in the
output depends on another row; the budget a skipped selection leaves goes to the other
columns, and the pipeline's parts still add to exactly its epsilon."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.preprocessing import PrivatePreprocessor
from dperm.preprocessing.categorical import (HASHED_WEIGHT, PrivateOneHotEncoder, hash_bucket, hash_buckets,
                                             names_levels, noise_scale, selection_threshold)
from dperm.privacy import accountant as acc
from dperm.privacy import events as ev

# the private numeric draws at these small n warn from public inputs; not what is tested here
pytestmark = pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")

LABELS = ["yes", "no", "Austin", "", "<missing>", 0, 1, -7, 2.5, "1", "True", "é", 10**5000]

# Pinned: a saved model's buckets must never move (a change of hash, key or text form fails here)
PINNED = {("yes", 8): 4, ("no", 8): 0, ("Austin", 16): 15, (1, 8): 3, (2.5, 32): 28, ("True", 4): 0}


def test_the_bucket_is_pinned_and_in_range():
    got = {key: hash_bucket(*key) for key in PINNED}
    assert got == PINNED
    for label in LABELS:
        for buckets in (1, 2, 7, 32):
            assert 0 <= hash_bucket(label, buckets) < buckets


def test_the_bucket_is_the_same_in_another_process_whatever_its_hash_seed():
    here = [hash_bucket(label, 32) for label in LABELS]
    code = ("import sys; sys.set_int_max_str_digits(0) if hasattr(sys, 'set_int_max_str_digits') else None\n"
            "from dperm.preprocessing.categorical import hash_bucket\n"
            f"print([hash_bucket(v, 32) for v in {LABELS[:-1]!r} + [10**5000]])")
    # one other process with a fixed string-hash seed (this one's is random): Python's salted
    # hash() of a string would differ between them; the pinned values above fix the rest
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""})
    assert eval(out.stdout) == here


@pytest.mark.parametrize("same", [
    [1, 1.0, np.int64(1), np.float32(1.0), Decimal("1.0"), Fraction(2, 2), 1 + 0j, "1"],
    [True, np.bool_(True), "True"],
    [2.5, np.float64(2.5), Decimal("2.5"), Fraction(5, 2), "2.5"],
])
def test_equal_labels_share_a_bucket(same):
    # cast.py's canonical labels: 1, 1.0 and Decimal('1.0') are one label, True is the text
    # "True"; the text "1" (the command line reads text) hashes as the number 1
    for buckets in (8, 32, 1021):
        assert len({hash_bucket(v, buckets) for v in same}) == 1


def test_different_labels_spread_over_the_buckets():
    buckets = [hash_bucket(f"level {i}", 8) for i in range(800)]
    counts = np.bincount(buckets, minlength=8)
    assert counts.min() > 60 and counts.max() < 140  # 100 expected each


def test_the_number_of_buckets_follows_n_and_epsilon_only():
    assert [hash_buckets(n, 0.4) for n in (10, 562, 563, 999, 1000, 4000, 10**7)] == [0, 0, 4, 4, 8, 16, 16]
    assert [hash_buckets(n, 0.04) for n in (1000, 5624, 5625, 10**7)] == [0, 0, 4, 16]
    assert hash_buckets(10**6, 0.0) == 0


def _frame(n, rng, levels=("a", "b", "c")):
    return pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list(levels), n)})


def test_a_level_first_seen_at_transform_time_goes_to_its_bucket():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["a", "b"], 300)})
    enc = PrivateOneHotEncoder(hash_buckets=8, selection="never").fit(X)
    assert enc.event_ == ev.NoOpDpEvent() or isinstance(enc.event_, ev.NoOpDpEvent)
    out = enc.transform(pd.DataFrame({"c": ["a", "zzz", 1, 1.0, "1", None]}))
    assert out.shape == (6, 8)
    assert HASHED_WEIGHT == 0.5  # public, and saved with a model (released_values' hash_weight)
    # one entry per column, of the public weight: the row bound holds
    assert np.array_equal(np.count_nonzero(out, axis=1), np.ones(6)) and (out.max(axis=1) == HASHED_WEIGHT).all()
    for i, value in enumerate(["a", "zzz", 1, 1.0, "1", "<missing>"]):
        assert out[i, hash_bucket(value, 8)] == HASHED_WEIGHT
    names = list(enc.get_feature_names_out(["c"]))
    assert names == [f"c=<hash {k} of 8>" for k in range(1, 9)]


def test_named_levels_take_their_own_column_and_the_rest_their_bucket():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"c": rng.choice(["a", "b"], 4000)})
    enc = PrivateOneHotEncoder(hash_buckets=4, selection="always", epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    assert list(enc.categories_[0]) == ["a", "b"] and enc.buckets_ == [4]
    out = enc.transform(pd.DataFrame({"c": ["a", "b", "new"]}))
    assert out.shape == (3, 6)
    w = HASHED_WEIGHT  # the whole block of a column with buckets, named levels too
    assert out[0, 0] == w and out[1, 1] == w and out[2, 2 + hash_bucket("new", 4)] == w
    assert np.array_equal(np.count_nonzero(out, axis=1), np.ones(3))
    assert list(enc.get_feature_names_out(["c"]))[:3] == ["c=a", "c=b", "c=<hash 1 of 4>"]


def test_without_buckets_an_unknown_level_is_zeros_as_before():
    X = pd.DataFrame({"c": ["a"] * 50})
    enc = PrivateOneHotEncoder(categories=[["a"]], hash_buckets=8).fit(X)  # declared: no buckets
    assert enc.buckets_ == [0]
    assert enc.transform(pd.DataFrame({"c": ["b"]})).tolist() == [[0.0]]
    with pytest.raises(ValueError, match="hash_buckets"):
        PrivateOneHotEncoder(hash_buckets=-1, delta=1e-6).fit(X)


def test_the_selection_is_skipped_exactly_when_its_threshold_is_above_n_over_2():
    for n, epsilon, columns in [(300, 0.2, 3), (1200, 0.3, 3), (5000, 0.4, 2), (50000, 0.4, 2), (2000, 0.05, 1)]:
        t = noise_scale(epsilon / columns)
        expected = selection_threshold(t, 1e-6 / columns) <= n / 2
        assert names_levels(n, epsilon, 1e-6, columns) == expected
    assert not names_levels(300, 0.2, 1e-6, 3) and names_levels(50000, 0.4, 1e-6, 2)
    assert names_levels(300, 0.2, 1e-6, 3, selection="always") and not names_levels(10**6, 1, 1e-6, 1, selection="never")


def test_neighbours_release_the_same_fields_and_map_a_common_row_alike():
    # a rare level replaced by a level never seen: with the same seed, the released
    # categories, buckets and names are identical, and a row both tables hold maps alike
    rng = np.random.default_rng(2)
    X = _frame(400, rng, levels=("a", "b", "c", "d"))
    X.loc[0, "c"] = "rare"
    X2 = X.copy()
    X2.loc[0, "c"] = "other"  # (the numeric draws are noisy releases: x is kept, so they agree)
    for selection in ("auto", "always"):
        pres = [PrivatePreprocessor(epsilon=0.5, delta=1e-6, random_state=3, selection=selection,
                                    hash_buckets=4).fit(D)
                for D in (X, X2)]
        a, b = (p.released_values() for p in pres)
        assert a == b
        assert a["hash_buckets"] == {"c": 4}
        assert pres[0].encoder_.buckets_ == pres[1].encoder_.buckets_
        assert np.array_equal(pres[0].transform(X.iloc[1:]), pres[1].transform(X.iloc[1:]))
        # each row by itself: a row's output does not depend on the others in the batch
        alone = np.vstack([pres[0].transform(X.iloc[[i]]) for i in range(5)])
        assert np.array_equal(alone, pres[0].transform(X.iloc[:5]))


def test_hashed_columns_give_their_budget_to_the_numeric_columns_exactly():
    rng = np.random.default_rng(4)
    X = _frame(200, rng)
    pre = PrivatePreprocessor(numeric=["x"], categorical=["c"], epsilon=0.4, delta=1e-6, random_state=0,
                              hash_buckets=4).fit(X)
    assert pre.encoder_.selection == "never" and isinstance(pre.encoder_.event_, ev.NoOpDpEvent)
    assert pre.encoder_.privacy_spent_ is None
    assert pre.scaler_.epsilon == 0.4  # the whole preprocessing epsilon: nothing kept for the encoder
    assert pre.scaler_.delta == 1e-6 and pre.encoder_.delta == 0.0  # and its whole delta
    assert pre.privacy_spent_.delta <= 1e-6 and pre.privacy_spent_.epsilon <= 0.4 * (1 + 1e-12)
    assert list(pre.encoder_.categories_[0]) == [] and pre.encoder_.buckets_ == [4]
    # with the selection forced, the split is the old one
    forced = PrivatePreprocessor(numeric=["x"], categorical=["c"], epsilon=0.4, delta=1e-6, random_state=0,
                                 selection="always", hash_buckets=4).fit(X)
    assert forced.scaler_.epsilon == pytest.approx(0.2) and forced.encoder_.epsilon == pytest.approx(0.2)
    assert forced.scaler_.delta == forced.encoder_.delta == 5e-7
    # buckets off: the selection always runs, as before
    old = PrivatePreprocessor(numeric=["x"], categorical=["c"], epsilon=0.4, delta=1e-6, random_state=0,
                              hash_buckets=0).fit(X)
    assert old.encoder_.selection == "always" and old.encoder_.buckets_ == [0]


@pytest.mark.parametrize("regression", [False, True])
def test_a_pipeline_with_hashed_columns_spends_exactly_its_budget(regression):
    rng = np.random.default_rng(5)
    X = _frame(500, rng)
    X["d"] = rng.choice(["u", "v"], len(X))
    y = X["x"] + (X["c"] == "a") + rng.normal(0, 0.3, len(X)) if regression else (X["c"] == "a").astype(int)
    est = dperm.DPLinearRegression() if regression else dperm.DPLogisticRegression(classes=[0, 1])
    pipe = dperm.make_pipeline(est, epsilon=1.0, delta=1e-5, random_state=1, hash_buckets=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    pre = pipe.steps[0][1]
    assert pre.encoder_.selection == "never"
    assert math.fsum(b.epsilon for b in pipe.budgets_.values()) == pytest.approx(1.0, rel=1e-12)
    assert math.fsum(b.delta for b in pipe.budgets_.values()) <= 1e-5
    charged = ev.composed(list(pipe.accountant_.events))
    split = acc._split_epsilon(charged, 1e-5, None)
    assert split is not None and split <= 1.0 * (1 + 1e-12)
    # the preprocessing part is what its event certifies, and the encoder charged nothing
    part = pipe.budgets_[pipe.steps[0][0]]
    assert acc.epsilon(pre.event_, part.delta) == part.epsilon
    assert "c=<hash 1 of 4>" in list(pipe[:-1].get_feature_names_out())


def test_released_values_carry_the_buckets_and_load_back():
    rng = np.random.default_rng(6)
    X = _frame(200, rng)
    pre = PrivatePreprocessor(numeric=["x"], categorical=["c"], epsilon=0.4, delta=1e-6, random_state=0,
                              hash_buckets="auto").fit(X)
    assert pre.encoder_.buckets_ == [0]  # n epsilon = 80: none, and nothing about them in the record
    assert "hash_buckets" not in pre.released_values()
    pre = PrivatePreprocessor(numeric=["x"], categorical=["c"], epsilon=0.4, delta=1e-6, random_state=0,
                              hash_buckets=4).fit(X)
    record = pre.released_values()
    assert record["hash_buckets"] == {"c": 4} and record["hash_weight"] == HASHED_WEIGHT
    assert record["features_out"] == list(pre.get_feature_names_out())
    back = PrivatePreprocessor.from_released(record)
    new = pd.DataFrame({"x": [0.1, 2.0], "c": ["never seen", "b"]})
    assert np.array_equal(back.transform(new), pre.transform(new))
    assert list(back.get_feature_names_out()) == record["features_out"]
    old = dict(record, hash_buckets=None)  # a model.json from before buckets: levels outside are zeros
    old.pop("hash_buckets")
    assert PrivatePreprocessor.from_released(old).encoder_.buckets_ == [0]
    with pytest.raises(ValueError, match="released values"):
        PrivatePreprocessor.from_released(dict(record, hash_buckets={"x": 4}))
    with pytest.raises(ValueError, match="released values"):
        PrivatePreprocessor.from_released(dict(record, hash_weight=2.0))


def test_dperm_fit_writes_the_buckets_and_dperm_predict_maps_an_unseen_level_to_its_bucket(tmp_path):
    import json

    from dperm.cli import main

    rng = np.random.default_rng(7)
    n = 1500  # epsilon 2: the preprocessing's 0.8 and n give 8 buckets
    city = rng.choice(["paris", "lyon", "nice"], n, p=[0.5, 0.3, 0.2])
    age = rng.normal(40, 12, n).round()
    target = np.where((age - 40) / 12 + 1.5 * (city == "paris") - 0.7 + rng.normal(0, 0.3, n) > 0, "yes", "no")
    pd.DataFrame({"age": age, "city": city, "target": target}).to_csv(tmp_path / "train.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(tmp_path / "train.csv"), "--target", "target", "--classes", "no,yes", "--epsilon",
                     "2", "--seed", "0", "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    pre = model["preprocessing"]
    assert pre["hash_buckets"] == {"city": 8}
    assert [f for f in pre["features_out"] if f.startswith("city=<hash")] == [
        f"city=<hash {k} of 8>" for k in range(1, 9)]
    assert len(model["coef"]) == len(pre["features_out"])
    # predict: a level never seen, and one seen, through the rebuilt preprocessing
    new = pd.DataFrame({"age": [30.0, 50.0], "city": ["marseille", "lyon"]})
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    rows = pd.DataFrame(PrivatePreprocessor.from_released(pre).transform(new), columns=pre["features_out"])
    named = [f"city={level}" for level in pre["categories"]["city"]]
    bucket = f"city=<hash {hash_bucket('marseille', 8) + 1} of 8>"
    assert rows.loc[0, bucket] > 0 and (rows.loc[0, named] == 0).all()
    coef = np.asarray(model["coef"]).ravel()
    score = rows.to_numpy() @ coef + np.ravel(model.get("intercept", 0.0))[0]
    predicted = pd.read_csv(tmp_path / "p.csv")["prediction"].tolist()
    assert predicted == ["yes" if s > 0 else "no" for s in score]
