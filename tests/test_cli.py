"""The command line: demo (tiny), fit / predict round trip, the catalogue, errors."""

import json

import numpy as np
import pandas as pd
import pytest

from dperm.cli import main


def test_algorithms_lists_the_catalogue(capsys):
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    for name in ["output_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd"]:
        assert name in out


def test_demo_small(tmp_path, capsys):
    code = main(["demo", "--algorithms", "output_perturbation", "noisy_gd", "--epsilons", "1", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "non-private" in out and "output_perturbation" in out
    table = pd.read_csv(tmp_path / "demo.csv")
    assert len(table) == 3
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    private = table[table["algorithm"] != "non-private optimum"]
    assert (private["excess_risk"] > 0).all() and (private["test_accuracy"] > 0.7).all()


def test_fit_and_predict_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * 0.3
    label = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(target=label)
    frame.to_csv(tmp_path / "train.csv", index=False)
    model_path = tmp_path / "model.json"
    code = main(["fit", str(tmp_path / "train.csv"), "--target", "target", "--epsilon", "5", "--delta", "1e-5",
                 "--regularizer", "l2:0.01", "--seed", "0", "--out", str(model_path)])
    assert code == 0
    model = json.loads(model_path.read_text())
    assert model["epsilon"] <= 5 and model["delta"] == 1e-5
    assert model["classes"] == ["no", "yes"] and model["feature_names"] == ["a", "b", "c"]
    code = main(["predict", str(model_path), str(tmp_path / "train.csv"), "--out", str(tmp_path / "pred.csv")])
    assert code == 0
    pred = pd.read_csv(tmp_path / "pred.csv")["prediction"]
    assert (pred == label).mean() > 0.8


def test_cli_errors_are_clear(tmp_path, capsys):
    frame = pd.DataFrame({"a": [0.1, 0.2, 0.3], "y": [1, 2, 3]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(SystemExit, match="2 classes"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "y", "--epsilon", "1"])
    with pytest.raises(SystemExit, match="no column"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--epsilon", "1"])
    frame.assign(y=[1, -1, 1]).to_csv(tmp_path / "e.csv", index=False)
    assert main(["fit", str(tmp_path / "e.csv"), "--target", "y", "--epsilon", "-1"]) == 2
    assert "epsilon" in capsys.readouterr().err


def test_bench_scaling_writes_table_plot_and_summary(tmp_path, capsys):
    code = main(["bench", "scaling", "--algorithm", "output_perturbation", "--sizes", "300", "600", "1200",
                 "--repeats", "1", "--d", "3", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "measured slope" in out
    for suffix in ("csv", "png", "json"):
        assert (tmp_path / f"scaling_output_perturbation.{suffix}").exists()
    summary = json.loads((tmp_path / "scaling_output_perturbation.json").read_text())
    assert summary["summary"]["algorithm"] == "output_perturbation"
