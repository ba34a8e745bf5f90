"""The command line: demo (tiny), fit / predict round trip, the catalogue, errors, help,
progress and warnings."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from dperm import DPLogisticRegression
from dperm.cli import build_parser, main


def _error_line(capsys, code, expected=2):
    """The run failed with ``expected`` status and exactly one line on stderr, no traceback."""
    err = capsys.readouterr().err
    assert code == expected, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("dperm: warning: ")]
    assert len(lines) == 1 and lines[-1].startswith("dperm"), err
    assert "Traceback" not in err
    return lines[-1]


def _labelled(tmp_path, n=500, seed=0, name="train.csv"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.3
    label = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(target=label)
    frame.to_csv(tmp_path / name, index=False)
    return tmp_path / name, frame


def test_algorithms_lists_the_catalogue_in_80_columns(capsys):
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    for name in ["output_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd", "dp_svrg_pp"]:
        assert name in out  # whole names, not folded into narrow cells
    assert main(["algorithms", "dp_sgd"]) == 0
    detail = capsys.readouterr().out
    assert "paper:" in detail and max(len(line) for line in detail.splitlines()) <= 80


def test_demo_small(tmp_path, capsys):
    code = main(["demo", "--algorithms", "output_perturbation", "noisy_gd", "--epsilons", "1", "--out", str(tmp_path)])
    assert code == 0
    captured = capsys.readouterr()
    assert "non-private" in captured.out and "output_perturbation" in captured.out
    assert max(len(line) for line in captured.out.splitlines()) <= 80
    # not a terminal: one progress line per finished fit on stderr
    assert "demo: private fits on ADULT: 1/2 done" in captured.err and "2/2 done" in captured.err
    table = pd.read_csv(tmp_path / "demo.csv")
    assert len(table) == 3
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    private = table[table["algorithm"] != "non-private optimum"]
    assert (private["excess_risk"] > 0).all() and (private["test_accuracy"] > 0.7).all()
    assert sorted(os.listdir(tmp_path)) == ["demo.csv", "demo.png"]  # no temporary files left


def test_fit_and_predict_round_trip(tmp_path):
    train, frame = _labelled(tmp_path)
    model_path = tmp_path / "model.json"
    code = main(["fit", str(train), "--target", "target", "--epsilon", "5", "--delta", "1e-5", "--classes", "no,yes",
                 "--regularizer", "l2:0.01", "--seed", "0", "--out", str(model_path)])
    assert code == 0
    model = json.loads(model_path.read_text())
    assert model["epsilon"] <= 5 and model["delta"] == 1e-5
    assert model["classes"] == ["no", "yes"] and model["feature_names"] == ["a", "b", "c"]
    # data-dependent solver bookkeeping is never written
    assert "iterations" not in model and "gradient_evaluations" not in model
    code = main(["predict", str(model_path), str(train), "--out", str(tmp_path / "pred.csv")])
    assert code == 0
    pred = pd.read_csv(tmp_path / "pred.csv")["prediction"]
    assert (pred == frame["target"]).mean() > 0.8


def test_fit_has_the_estimators_intercept(tmp_path):
    # imbalanced classes, centred features: without an intercept a model predicts at 0.5
    rng = np.random.default_rng(0)
    n = 3000
    y = (rng.random(n) < 0.85).astype(int)
    X = rng.normal(size=(n, 2)) * 0.2
    X -= X.mean(axis=0)
    pd.DataFrame(X, columns=["u", "v"]).assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    args = ["fit", str(tmp_path / "d.csv"), "--target", "y", "--classes", "0,1", "--epsilon", "2", "--delta", "1e-5",
            "--seed", "3"]
    assert main([*args, "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    estimator = DPLogisticRegression(epsilon=2, delta=1e-5, classes=[0, 1], random_state=3).fit(X, y)
    np.testing.assert_allclose(model["coef"], estimator.coef_.ravel(), rtol=1e-12)
    assert model["intercept"] == pytest.approx(estimator.intercept_[0]) and model["intercept"] > 0
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert (pd.read_csv(tmp_path / "p.csv")["prediction"] == y).mean() > 0.8
    assert main([*args, "--no-intercept", "--out", str(tmp_path / "n.json")]) == 0
    assert json.loads((tmp_path / "n.json").read_text())["intercept"] == 0.0


def test_fit_multiclass_and_declared_classes(tmp_path, capsys):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 1500)
    X = np.array([[0.5, 0], [0, 0.5], [-0.5, -0.5]])[y] + rng.normal(size=(1500, 2)) * 0.1
    pd.DataFrame(X, columns=["u", "v"]).assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "y", "--classes", "0,1,2", "--epsilon", "30",
                 "--seed", "0", "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    assert np.asarray(model["coef"]).shape == (3, 2) and len(model["intercept"]) == 3
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert (pd.read_csv(tmp_path / "p.csv")["prediction"] == y).mean() > 0.8
    capsys.readouterr()
    # a label outside the declared set: one line, exit 2, the label not quoted
    pd.DataFrame(X, columns=["u", "v"]).assign(y=np.where(np.arange(1500) == 7, 987654, y)).to_csv(
        tmp_path / "e.csv", index=False)
    line = _error_line(capsys, main(["fit", str(tmp_path / "e.csv"), "--target", "y", "--classes", "0,1,2",
                                     "--epsilon", "1", "--out", str(tmp_path / "x.json")]))
    assert "outside the declared classes" in line and "987654" not in line


def test_undeclared_classes_warn_in_one_line(tmp_path, capsys):
    train, _ = _labelled(tmp_path)
    frame = pd.read_csv(train)
    frame[["a", "b", "c"]] *= 10  # rows far above --data-norm 1: a DataNormWarning too
    frame.to_csv(train, index=False)
    assert main(["fit", str(train), "--target", "target", "--epsilon", "1", "--out", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line]
    assert any("--classes was not given" in line and "treated as public" in line for line in warnings)
    assert any("data_norm" in line for line in warnings)
    assert all(line.startswith("dperm: warning: ") for line in warnings), err
    assert ".py:" not in err


def test_output_paths_are_checked_before_any_data_is_read(tmp_path, capsys):
    missing_data = str(tmp_path / "not-there.csv")  # the output check must come first
    line = _error_line(capsys, main(["fit", missing_data, "--target", "y", "--epsilon", "1",
                                     "--out", str(tmp_path / "nodir" / "m.json")]))
    assert "nodir" in line and "does not exist" in line
    line = _error_line(capsys, main(["predict", str(tmp_path / "m.json"), missing_data,
                                     "--out", str(tmp_path / "nodir" / "p.csv")]))
    assert "nodir" in line
    (tmp_path / "afile").write_text("x")
    for command in (["demo"], ["bench", "scaling"], ["bench", "table3"]):
        line = _error_line(capsys, main([*command, "--out", str(tmp_path / "afile")]))
        assert "afile" in line and "is a file" in line


def test_missing_files_are_one_line_errors(tmp_path, capsys):
    train, _ = _labelled(tmp_path)
    line = _error_line(capsys, main(["fit", str(tmp_path / "nope.csv"), "--target", "y", "--epsilon", "1",
                                     "--out", str(tmp_path / "m.json")]))
    assert "not found" in line
    line = _error_line(capsys, main(["predict", str(tmp_path / "nope.json"), str(train)]))
    assert "model file" in line and "not found" in line
    (tmp_path / "bad.json").write_text("{not json")
    line = _error_line(capsys, main(["predict", str(tmp_path / "bad.json"), str(train)]))
    assert "not a model" in line
    (tmp_path / "d.csv").write_text("")
    assert "cannot read" in _error_line(capsys, main(["fit", str(tmp_path / "d.csv"), "--target", "y",
                                                      "--epsilon", "1", "--out", str(tmp_path / "m.json")]))


def test_missing_values(tmp_path, capsys):
    train, frame = _labelled(tmp_path)
    holes = frame.copy()
    holes.loc[5, "target"] = np.nan
    holes.to_csv(tmp_path / "t.csv", index=False)
    line = _error_line(capsys, main(["fit", str(tmp_path / "t.csv"), "--target", "target", "--epsilon", "1",
                                     "--out", str(tmp_path / "m.json")]))
    assert "'target'" in line and "missing values" in line
    assert main(["fit", str(train), "--target", "target", "--classes", "no,yes", "--epsilon", "5",
                 "--seed", "0", "--out", str(tmp_path / "m.json")]) == 0
    holes = frame.drop(columns="target")
    holes.loc[[2, 9], "b"] = np.nan
    holes.to_csv(tmp_path / "x.csv", index=False)
    capsys.readouterr()
    line = _error_line(capsys, main(["predict", str(tmp_path / "m.json"), str(tmp_path / "x.csv")]))
    assert "'b'" in line and "--on-missing empty" in line
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "x.csv"), "--on-missing", "empty",
                 "--out", str(tmp_path / "p.csv")]) == 0
    pred = pd.read_csv(tmp_path / "p.csv")["prediction"]
    assert pred.isna().tolist() == [i in (2, 9) for i in range(len(frame))]


def test_cli_errors_are_clear(tmp_path, capsys):
    frame = pd.DataFrame({"a": [0.1, 0.2, 0.3], "y": [1, 1, 1]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = ["--out", str(tmp_path / "m.json")]
    assert "fewer than 2" in _error_line(capsys, main(["fit", str(tmp_path / "d.csv"), "--target", "y",
                                                        "--epsilon", "1", *out]))
    assert "no column" in _error_line(capsys, main(["fit", str(tmp_path / "d.csv"), "--target", "label",
                                                     "--epsilon", "1", *out]))
    frame.assign(y=[1, -1, 1]).to_csv(tmp_path / "e.csv", index=False)
    assert "epsilon" in _error_line(capsys, main(["fit", str(tmp_path / "e.csv"), "--target", "y",
                                                   "--epsilon", "-1", *out]))
    line = _error_line(capsys, main(["fit", str(tmp_path / "e.csv"), "--target", "y", "--epsilon", "1",
                                     "--constraint", "l2_ball:ten", *out]))
    assert "--constraint l2_ball:10" in line  # the hint in the command line's syntax
    line = _error_line(capsys, main(["fit", str(tmp_path / "e.csv"), "--target", "y", "--epsilon", "1",
                                     "--intercept-scaling", "0", *out]))
    assert "intercept_scaling" in line
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("command", [["demo"], ["bench", "table3"], ["bench", "scaling"]])
@pytest.mark.parametrize("repeats", ["0", "-3"])
def test_repeats_must_be_positive(command, repeats, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*command, "--repeats", repeats, "--out", str(tmp_path)])
    line = _error_line(capsys, stop.value.code)
    assert "--repeats" in line and ">= 1" in line
    assert os.listdir(tmp_path) == []


def test_internal_failure_is_one_line_with_status_1(monkeypatch, capsys):
    import dperm.cli

    def broken(args):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(dperm.cli, "cmd_algorithms", broken)
    line = _error_line(capsys, main(["algorithms"]), expected=1)
    assert "internal error" in line and "boom second line" in line


def _subparsers(parser, prefix=()):
    import argparse

    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _subparsers(child, (*prefix, name))


def test_help_gives_every_option_a_meaning_and_a_default(capsys):
    for prefix, parser in _subparsers(build_parser()):
        text = parser.format_help()
        assert parser.description, prefix
        for action in parser._actions:
            if not action.option_strings or action.dest in ("help", "version"):
                continue
            help_text = parser._get_formatter()._expand_help(action) if action.help else ""
            assert help_text, (prefix, action.dest)
            assert "default" in help_text or action.required, (prefix, action.dest, help_text)
        assert "usage:" in text
    fit_help = build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    assert "pure epsilon-DP" in " ".join(fit_help.split())
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    import dperm

    assert capsys.readouterr().out.strip() == f"dperm {dperm.__version__}"


def test_bench_scaling_writes_table_plot_and_summary(tmp_path, capsys):
    code = main(["bench", "scaling", "--algorithm", "output_perturbation", "--sizes", "300", "600", "1200",
                 "--repeats", "1", "--d", "3", "--out", str(tmp_path)])
    assert code == 0
    captured = capsys.readouterr()
    assert "measured slope" in captured.out
    assert max(len(line) for line in captured.out.splitlines()) <= 80
    assert "3/3 done" in captured.err  # progress lines when stderr is not a terminal
    for suffix in ("csv", "png", "json"):
        assert (tmp_path / f"scaling_output_perturbation.{suffix}").exists()
    summary = json.loads((tmp_path / "scaling_output_perturbation.json").read_text())
    assert summary["summary"]["algorithm"] == "output_perturbation"


def test_fits_charged_to_a_ledger_compose_and_stop_at_its_total(tmp_path, capsys):
    data, _ = _labelled(tmp_path)
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "2", "--delta", "1e-5"]) == 0
    common = ["fit", str(data), "--target", "target", "--delta", "1e-6", "--classes", "no,yes", "--accountant", ledger]
    assert main(common + ["--epsilon", "0.8", "--out", str(tmp_path / "m1.json")]) == 0
    assert main(common + ["--epsilon", "0.8", "--out", str(tmp_path / "m2.json")]) == 0
    capsys.readouterr()
    assert main(["budget", ledger]) == 0
    shown = capsys.readouterr().out
    assert "2 fit(s) charged" in shown
    spent = float(shown.split("spent epsilon=")[1].split()[0])
    assert spent < 1.6  # composed, not 0.8 + 0.8
    code = main(common + ["--epsilon", "1.5", "--out", str(tmp_path / "m3.json")])
    assert "epsilon runs out" in _error_line(capsys, code)
    assert not (tmp_path / "m3.json").exists()
    assert json.load(open(ledger))["charges"].__len__() == 2  # the refused fit recorded nothing
    assert "no ledger" in _error_line(capsys, main(["budget", str(tmp_path / "missing.json")]))


def test_audit_subcommand_reports_a_lower_bound_below_the_claim(capsys):
    assert main(["audit", "output_perturbation", "--runs", "300"]) == 0
    out = capsys.readouterr().out
    assert "epsilon lower bound" in out and "below the claim" in out
    assert "no audit scenario" in _error_line(capsys, main(["audit", "dp_svrg_pp", "--runs", "10"]))


def _fit_in_a_process(args):
    from dperm.cli import main as cli_main

    return cli_main(args)


def test_concurrent_fits_on_one_ledger_lose_no_charge(tmp_path):
    import multiprocessing

    data, _ = _labelled(tmp_path, n=200)
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "10", "--delta", "1e-5"]) == 0
    runs = [["fit", str(data), "--target", "target", "--epsilon", "0.5", "--delta", "1e-6", "--classes", "no,yes",
             "--accountant", ledger, "--out", str(tmp_path / f"m{i}.json")] for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert pool.map(_fit_in_a_process, runs) == [0, 0, 0, 0]
    assert len(json.load(open(ledger))["charges"]) == 4  # before the lock, concurrent saves lost charges
