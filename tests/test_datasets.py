"""The shipped datasets: checksums, shapes, bounded norms, data-independent preprocessing."""

import numpy as np
import pandas as pd
import pytest

from dperm.datasets import DATASETS, load, load_adult, load_bank, load_wine, preprocess
from dperm.datasets import uci

SIZES = {"adult": 48842, "bank": 45211, "credit_card": 30000, "wine": 6497, "bike": 17379}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_loader_shapes_norms_and_labels(name):
    bunch = load(name, split="all")
    X, y = bunch.data, bunch.target
    assert X.shape == (SIZES[name], len(bunch.feature_names))
    assert bunch.feature_names[-1] == "intercept"
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
    if bunch.task == "binary":
        assert set(np.unique(y)) == {-1.0, 1.0}
    else:
        assert np.abs(y).max() <= bunch.label_bound
    assert "CC BY 4.0" in bunch.DESCR


def test_adult_official_split_and_counts():
    X, y = load_adult(split="train", return_X_y=True)
    Xt, yt = load_adult(split="test", return_X_y=True)
    assert X.shape[0] == 32561 and Xt.shape[0] == 16281
    assert (y == 1).sum() == 7841 and (yt == 1).sum() == 3846  # '>50K.' in the test file is handled


def test_seeded_split_partitions_the_data():
    train = load_bank(split="train", return_X_y=True)[0]
    test = load_bank(split="test", return_X_y=True)[0]
    assert train.shape[0] + test.shape[0] == 45211
    again = load_bank(split="train", return_X_y=True)[0]
    np.testing.assert_array_equal(train, again)


def test_data_norm_and_frames():
    X, _ = load_wine(return_X_y=True, data_norm=2.5)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 2.5)
    X, y = load_wine(return_X_y=True, as_frame=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    with pytest.raises(ValueError, match="split"):
        load_wine(split="validation")
    with pytest.raises(ValueError, match="unknown dataset"):
        load("iris")


def test_preprocessing_is_per_row():
    # a row's features do not depend on which other rows are loaded with it
    raw = load_adult(split="train").raw
    X_full, _, _ = preprocess(raw, uci._ADULT)
    X_half, _, _ = preprocess(raw.iloc[::2].reset_index(drop=True), uci._ADULT)
    np.testing.assert_array_equal(X_full[::2], X_half)


def test_checksums_are_verified(monkeypatch):
    monkeypatch.setitem(uci._SHA256, "winequality-red.csv.gz", "0" * 64)
    uci._read_bytes.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="corrupt"):
            uci._read_bytes("winequality-red.csv.gz")
    finally:
        uci._read_bytes.cache_clear()
