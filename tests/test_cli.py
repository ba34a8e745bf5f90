"""The command line: demo (tiny), fit / predict round trip, the catalogue, errors, help,
progress and warnings."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dperm import DPLogisticRegression
from dperm.cli import build_parser, main

# the command line prints every warning as one line (dperm: warning: ...), which these tests
# read: shown, not turned into errors by the configuration
pytestmark = pytest.mark.filterwarnings("default::UserWarning")


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
            "--seed", "3", "--data-norm", "1"]  # rows declared prepared: the estimator alone
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
                 "--seed", "0", "--data-norm", "1", "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    assert np.asarray(model["coef"]).shape == (3, 2) and len(model["intercept"]) == 3
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert (pd.read_csv(tmp_path / "p.csv")["prediction"] == y).mean() > 0.8
    capsys.readouterr()
    # a label outside the declared set weighs 0 (totality, issue 29; it was a refusal, which
    # told whether such a label exists): the fit goes through and quotes nothing
    pd.DataFrame(X, columns=["u", "v"]).assign(y=np.where(np.arange(1500) == 7, 987654, y)).to_csv(
        tmp_path / "e.csv", index=False)
    assert main(["fit", str(tmp_path / "e.csv"), "--target", "y", "--classes", "0,1,2",
                 "--epsilon", "1", "--out", str(tmp_path / "x.json")]) == 0
    assert "987654" not in capsys.readouterr().err


def test_undeclared_classes_warn_in_one_line(tmp_path, capsys):
    train, _ = _labelled(tmp_path)
    frame = pd.read_csv(train)
    frame[["a", "b", "c"]] *= 10  # rows far above --data-norm 1: clipped, without a word
    frame.to_csv(train, index=False)
    assert main(["fit", str(train), "--target", "target", "--epsilon", "1", "--data-norm", "1",
                 "--out", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line]
    assert any("--classes was not given" in line and "treated as public" in line for line in warnings)
    assert not any("data_norm" in line for line in warnings)  # a clip warning would tell rows apart
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
    # the private route: a missing label weighs 0 (totality, issue 29; it was refused)
    assert main(["fit", str(tmp_path / "t.csv"), "--target", "target", "--epsilon", "1",
                 "--out", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["classes"] == ["no", "yes"]
    # the prepared-rows route (--data-norm) still refuses it: its rows are declared ready
    line = _error_line(capsys, main(["fit", str(tmp_path / "t.csv"), "--target", "target", "--epsilon", "1",
                                     "--data-norm", "1", "--out", str(tmp_path / "m.json")]))
    assert "'target'" in line and "missing values" in line
    assert main(["fit", str(train), "--target", "target", "--classes", "no,yes", "--epsilon", "5",
                 "--seed", "0", "--data-norm", "1", "--out", str(tmp_path / "m.json")]) == 0
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


# ----------------------------------------------------------------------------- issue 25
def _regression_csv(tmp_path, n=400, integer=False):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 3)) * 0.3
    y = X @ [1.0, 2.0, 3.0] * 80.0 + 1000.5  # four-digit values: none can appear in a message by chance
    if integer:
        y = np.round(y)
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y).to_csv(tmp_path / "reg.csv", index=False)
    return tmp_path / "reg.csv", y


@pytest.mark.parametrize("integer", [False, True])
def test_a_forgotten_loss_stops_before_any_charge_and_suggests_a_regression_loss(tmp_path, capsys, integer):
    data, y = _regression_csv(tmp_path, integer=integer)
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "5"]) == 0
    capsys.readouterr()
    code = main(["fit", str(data), "--target", "y", "--epsilon", "1", "--accountant", ledger,
                 "--out", str(tmp_path / "m.json")])
    line = _error_line(capsys, code)
    assert "--loss squared" in line and "--loss huber" in line and "--classes" in line
    assert not any(f"{v:g}" in line for v in y)  # no value of the column quoted
    assert not (tmp_path / "m.json").exists()
    assert json.load(open(ledger))["charges"] == []  # nothing charged
    # the regression loss it suggests runs
    assert main(["fit", str(data), "--target", "y", "--loss", "huber", "--y-bounds", "0:2000", "--epsilon", "1",
                 "--out", str(tmp_path / "r.json")]) == 0


def test_the_noise_warning_reaches_the_command_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 6)) * 0.3
    pd.DataFrame(X, columns=list("abcdef")).assign(y=(X[:, 0] > 0).astype(int)).to_csv(tmp_path / "s.csv",
                                                                                       index=False)
    assert main(["fit", str(tmp_path / "s.csv"), "--target", "y", "--classes", "0,1", "--epsilon", "0.1",
                 "--out", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    noise = [line for line in err.splitlines() if "noise will likely dominate" in line]
    assert len(noise) == 1 and noise[0].startswith("dperm: warning: ") and "n=150 rows" in noise[0]
    # with the regularizer named on the command line too
    assert main(["fit", str(tmp_path / "s.csv"), "--target", "y", "--classes", "0,1", "--epsilon", "0.1",
                 "--regularizer", "l2:0.5", "--out", str(tmp_path / "m.json")]) == 0
    assert "noise will likely dominate" in capsys.readouterr().err


def test_piped_progress_writes_a_line_at_most_every_tenth_or_30_seconds(capsys, monkeypatch):
    from dperm.cli import _console as cli

    with cli._Progress("audit", total=8000) as bar:  # stderr is not a terminal under pytest
        for done in range(1, 8001):
            bar.update(done, 8000)
    lines = capsys.readouterr().err.splitlines()
    assert 2 <= len(lines) <= 11 and lines[-1].startswith("dperm: audit: 8000/8000 done"), lines
    clock = iter(range(0, 10_000, 7))  # 7 s per unit, total unknown: a line every 30 s
    monkeypatch.setattr(cli.time, "monotonic", lambda: float(next(clock)))
    with cli._Progress("table3", total=None) as bar:
        for done in range(1, 101):
            bar.update(done)
    lines = capsys.readouterr().err.splitlines()
    assert 20 <= len(lines) <= 26, lines  # 700 s / 30 s


def test_predict_out_dash_is_standard_output(tmp_path, capsys, monkeypatch):
    train, _ = _labelled(tmp_path)
    assert main(["fit", str(train), "--target", "target", "--classes", "no,yes", "--epsilon", "5", "--seed", "0",
                 "--out", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    assert main(["predict", str(tmp_path / "m.json"), str(train), "--out", "-"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "prediction" and len(out.splitlines()) == 501
    assert not (tmp_path / "-").exists()


def test_write_errors_name_the_path_given_not_the_temporary_file(tmp_path, capsys, monkeypatch):
    import tempfile

    train, _ = _labelled(tmp_path)
    out = str(tmp_path / "x.json")

    def refused(prefix="", suffix="", dir=None):  # as /proc does: the temporary file cannot be made
        raise FileNotFoundError(2, "No such file or directory", os.path.join(dir, f"{prefix}qh3yvd20{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    line = _error_line(capsys, main(["fit", str(train), "--target", "target", "--classes", "no,yes",
                                     "--epsilon", "1", "--out", out]))
    assert line.endswith(out) and "qh3yvd20" not in line and ".x.json." not in line


def test_one_default_delta_for_the_command_line_and_the_estimators(tmp_path, capsys):
    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    assert fit.get_default("delta") == DPLogisticRegression().delta == 1e-5
    assert "default: 1e-05" in " ".join(fit.format_help().split())
    train, _ = _labelled(tmp_path)
    assert main(["fit", str(train), "--target", "target", "--classes", "no,yes", "--epsilon", "1", "--seed", "0",
                 "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    api = DPLogisticRegression(epsilon=1, classes=["no", "yes"], random_state=0).fit(
        pd.read_csv(train)[["a", "b", "c"]].to_numpy(), pd.read_csv(train)["target"].to_numpy())
    assert model["delta"] == api.privacy_spent_.delta and model["solver"] == api.solver_
    readme = " ".join((Path(dperm_root()) / "README.md").read_text().split())
    assert "`--delta` defaults to 1e-5, as in the estimators" in readme


def dperm_root():
    return Path(__file__).resolve().parents[1]


def test_model_json_has_every_public_hyperparameter_to_refit_and_nothing_else_from_the_data(tmp_path):
    train, frame = _labelled(tmp_path)
    neighbour = frame.copy()
    neighbour.loc[0, ["a", "b", "c", "target"]] = [0.9, -0.9, 0.1, "yes" if frame.loc[0, "target"] == "no" else "no"]
    neighbour.to_csv(tmp_path / "neighbour.csv", index=False)
    models = []
    for data, name in [(train, "m.json"), (tmp_path / "neighbour.csv", "n.json")]:
        assert main(["fit", str(data), "--target", "target", "--classes", "no,yes", "--epsilon", "2",
                     "--seed", "4", "--data-norm", "1", "--out", str(tmp_path / name)]) == 0
        models.append(json.loads((tmp_path / name).read_text()))
    model = models[0]
    for key in ("alpha", "solver", "data_norm", "label_bound", "classes", "fit_intercept", "intercept_scaling",
                "requested", "regularizer", "constraint", "loss", "epsilon", "delta"):
        assert key in model, key
    assert model["alpha"] > 0 and model["requested"] == {"epsilon": 2.0, "delta": 1e-5}
    assert "seed" not in json.dumps(model)  # the seed would let anyone subtract the noise
    # the same fit again from the file's public hyper-parameters (and the seed the person kept)
    again = DPLogisticRegression(epsilon=model["requested"]["epsilon"], delta=model["requested"]["delta"],
                                 alpha=model["alpha"], solver=model["solver"], data_norm=model["data_norm"],
                                 classes=model["classes"], fit_intercept=model["fit_intercept"],
                                 intercept_scaling=model["intercept_scaling"], random_state=4)
    again.fit(frame[["a", "b", "c"]].to_numpy(), frame["target"].to_numpy())
    np.testing.assert_allclose(model["coef"], again.coef_.ravel(), rtol=1e-12)
    # replace-one neighbours: only the noisy model differs
    differing = {k for k in model if models[0][k] != models[1][k]}
    assert differing <= {"coef", "intercept"}, differing


def test_a_fit_that_fails_after_its_charge_is_still_in_the_ledger(tmp_path, capsys, monkeypatch):
    from dperm.estimators.linear import _DPClassifier

    data, _ = _labelled(tmp_path)
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "5"]) == 0
    original = _DPClassifier.fit

    def fails_after_the_charge(self, *args, **kwargs):
        original(self, *args, **kwargs)  # charged, the mechanism has run on the data
        raise MemoryError("the machine ran out of memory")

    monkeypatch.setattr(_DPClassifier, "fit", fails_after_the_charge)
    code = main(["fit", str(data), "--target", "target", "--classes", "no,yes", "--epsilon", "1",
                 "--accountant", ledger, "--out", str(tmp_path / "m.json")])
    assert code == 1 and "internal error" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()
    assert len(json.load(open(ledger))["charges"]) == 1  # spent, although nothing was written


def test_demo_plot_gives_each_panel_its_own_legend(tmp_path, monkeypatch):
    import matplotlib.figure

    from dperm.bench.demo import plot_demo

    table = pd.DataFrame({"algorithm": ["non-private optimum", "a", "a", "b", "b"],
                          "epsilon": [np.inf, 0.5, 1.0, 0.5, 1.0], "excess_risk": [0, 0.1, 0.05, 0.2, 0.1],
                          "test_accuracy": [0.85, 0.8, 0.82, 0.78, 0.8], "seconds": [1, 1, 1, 1, 1]})
    figures = []
    save = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (figures.append(fig),
                                                                                    save(fig, *a, **k)))
    plot_demo(table, tmp_path / "demo.png")
    risk, accuracy = figures[0].axes
    assert risk.get_legend() is not None and accuracy.get_legend() is not None
    assert [t.get_text() for t in risk.get_legend().get_texts()] == ["a", "b"]


def test_model_json_records_the_constraint_the_fit_used(tmp_path):
    """The squared loss's default fit runs unconstrained (objective perturbation of the
    linearized squared loss); model.json said 'l2_ball:1' whatever ran."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) / 3
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["t"] = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=400)
    frame.to_csv(tmp_path / "reg.csv", index=False)
    for extra, expected in (([], None), (["--constraint", "l2_ball:2"], "l2_ball:2.0")):
        out = tmp_path / "r.json"
        assert main(["fit", str(tmp_path / "reg.csv"), "--target", "t", "--loss", "squared", "--y-bounds=-3:3",
                     "--epsilon", "1", "--seed", "0", "--out", str(out), *extra]) == 0
        model = json.loads(out.read_text())
        assert model["constraint"] == expected, model["constraint"]
