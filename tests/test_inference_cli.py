"""`dperm fit --summary` and `dperm predict --interval` (docs/inference.md): the table,
the intervals in model.json, prediction intervals that cover new observations, the
refusals with one clear line."""

import json

import numpy as np
import pandas as pd
import pytest

from dperm.cli import main

# the command line prints every warning as one line (dperm: warning: ...), which these tests
# read or compare: shown, not turned into errors by the configuration
pytestmark = pytest.mark.filterwarnings("default::UserWarning")


def _regression_csv(path, n=6000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2)) / np.sqrt(2)
    y = X @ [2.0, -1.0] + 0.5 + 0.5 * rng.standard_normal(n)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(path, index=False)
    return path


def test_fit_summary_writes_the_intervals_and_predict_interval_covers(tmp_path, capsys):
    data = _regression_csv(tmp_path / "train.csv")
    model = tmp_path / "model.json"
    code = main(["fit", str(data), "--target", "y", "--loss", "squared", "--epsilon", "4", "--data-norm", "1",
                 "--label-bound", "4", "--summary", "--seed", "1", "--out", str(model)])
    assert code == 0
    out = capsys.readouterr().out
    assert "std err" in out and "P>|z|" in out and "intervals only" in out and "\na " in out
    record = json.loads(model.read_text())["inference"]
    assert record["names"] == ["intercept", "a", "b"] and not record["refused"]
    lower, upper = np.array(record["lower"]), np.array(record["upper"])
    assert np.all((lower < [0.5, 2.0, -1.0]) & ([0.5, 2.0, -1.0] < upper))
    assert len(record["covariance"]) == 3 and record["residual_variance"] > 0
    fresh = _regression_csv(tmp_path / "new.csv", n=2000, seed=9)
    assert main(["predict", str(model), str(fresh), "--interval"]) == 0
    predictions = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert list(predictions.columns) == ["prediction", "lower", "upper"]
    truth = pd.read_csv(fresh)["y"].to_numpy()
    inside = np.mean((predictions["lower"] <= truth) & (truth <= predictions["upper"]))
    # 2000 new observations, nominal 95%: Binomial(2000, 0.95) is above 0.935 with probability > 0.999
    assert 0.935 < inside < 0.99


def test_interval_refused_for_a_classifier_and_summary_for_other_losses(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.7, 0.7, (3000, 2))
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(c=(X[:, 0] > 0).astype(int))
    frame.to_csv(tmp_path / "clf.csv", index=False)
    model = tmp_path / "m.json"
    assert main(["fit", str(tmp_path / "clf.csv"), "--target", "c", "--classes", "0,1", "--epsilon", "1",
                 "--data-norm", "1", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "clf.csv"), "--interval"]) == 2
    assert "--interval needs a regression model" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "clf.csv"), "--target", "c", "--classes", "0,1", "--epsilon", "1",
                 "--loss", "huberized_hinge", "--data-norm", "1", "--summary", "--out", str(model)]) == 2
    assert "--summary (intervals) runs with" in capsys.readouterr().err


def test_fit_summary_of_a_three_class_model_names_each_class(tmp_path, capsys):
    """`dperm fit --summary` on three declared classes: the multinomial model's table (class
    0 the reference, as statsmodels' MNLogit) with a row per class and feature, and the
    intervals in model.json under the same names."""
    rng = np.random.default_rng(2)
    n = 6000
    X = rng.uniform(-0.7, 0.7, (n, 2))
    logits = np.column_stack([np.zeros(n), 3 * X[:, 0], -3 * X[:, 1]])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    label = np.array([rng.choice(3, p=row / row.sum()) for row in p])
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": label}).to_csv(tmp_path / "three.csv", index=False)
    model = tmp_path / "m.json"
    code = main(["fit", str(tmp_path / "three.csv"), "--target", "c", "--classes", "0,1,2", "--epsilon", "4",
                 "--data-norm", "1", "--summary", "--seed", "3", "--out", str(model)])
    out = capsys.readouterr().out
    assert code == 0
    assert "std err" in out and "P>|z|" in out
    record = json.loads(model.read_text())["inference"]
    names = record["names"]
    assert names == ["1:intercept", "1:a", "1:b", "2:intercept", "2:a", "2:b"] and not record["refused"]
    assert all(f"\n{name} " in out for name in names)
    truth = np.array([0.0, 3.0, 0.0, 0.0, 0.0, -3.0])  # against class 0
    assert np.all((np.array(record["lower"]) < truth) & (truth < np.array(record["upper"])))
