"""`dperm fit` / `dperm predict` on a raw CSV (issue 23, item 3): the private
preprocessing of dperm.make_pipeline, declarations (free), model.json's released values,
one ledger charge, and bad declarations stopped before anything is charged."""

import json

import numpy as np
import pandas as pd
import pytest

import dperm
from dperm.cli import main
from dperm.privacy.events import from_description

# the command line prints every warning as one line (dperm: warning: ...), which these tests
# read: shown, not turned into errors by the configuration
pytestmark = pytest.mark.filterwarnings("default::UserWarning")

CLASSES = ["no", "yes"]


def _raw(n=1500, seed=0):
    """A raw table: a string column (with missing values), an integer column, a numeric
    column with missing values and a string target."""
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 12, n).round()
    city = rng.choice(["paris", "lyon", "nice"], n, p=[0.5, 0.3, 0.2]).astype(object)
    income = rng.lognormal(10, 0.5, n)
    score = (age - 40) / 12 + 1.5 * (city == "paris") - 0.7
    target = np.where(score + rng.normal(0, 0.3, n) > 0, "yes", "no")
    frame = pd.DataFrame({"age": age, "city": city, "income": income, "target": target})
    frame.loc[::9, "income"] = np.nan
    frame.loc[::13, "city"] = np.nan
    return frame


def _write(frame, path):
    frame.to_csv(path, index=False)
    return str(path)


def _error_line(capsys, code):
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("dperm: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("dperm: error: "), err
    return lines[0]


def _fit(data, out, *extra, epsilon="2", seed="0"):
    return main(["fit", str(data), "--target", "target", "--classes", "no,yes", "--epsilon", epsilon,
                 "--seed", seed, "--out", str(out), *extra])


def test_a_raw_csv_fits_and_predicts_through_the_same_pipeline_as_make_pipeline(tmp_path):
    frame = _raw()
    train = _write(frame, tmp_path / "train.csv")
    assert _fit(train, tmp_path / "m.json", "--bounds", "age=0:100") == 0
    model = json.loads((tmp_path / "m.json").read_text())
    pre = model["preprocessing"]
    assert pre["columns"] == ["age", "city", "income"]
    assert set(pre["numeric"]) == {"age", "income"} and set(pre["categories"]) == {"city"}
    assert pre["missing_indicator"] == ["age", "income"]  # every numeric column: not chosen from the data
    assert len(model["coef"]) == len(pre["features_out"])
    # new rows: an unseen category, missing values
    test = _raw(n=400, seed=1).drop(columns="target")
    test.loc[0, "city"] = "marseille"
    test.loc[[1, 2], "age"] = np.nan
    _write(test, tmp_path / "test.csv")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "test.csv"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    predicted = pd.read_csv(tmp_path / "p.csv")["prediction"]
    assert predicted.notna().all()
    # the same fit in Python: dperm.make_pipeline with the same declarations and seed (the
    # undeclared columns' roles released by the same rule)
    pipe = dperm.make_pipeline(dperm.DPLogisticRegression(classes=CLASSES), epsilon=2.0, delta=1e-5,
                               random_state=0, bounds={"age": (0.0, 100.0)})
    pipe.fit(pd.read_csv(train).drop(columns="target"), frame["target"])
    np.testing.assert_allclose(model["coef"], pipe.steps[-1][1].coef_.ravel(), rtol=1e-10)
    assert model["epsilon"] == pytest.approx(pipe.privacy_spent_.epsilon)
    assert predicted.tolist() == list(pipe.predict(pd.read_csv(tmp_path / "test.csv")))
    # and it learned: well above the majority class on its own rows
    assert main(["predict", str(tmp_path / "m.json"), train, "--out", str(tmp_path / "q.csv")]) == 0
    accuracy = (pd.read_csv(tmp_path / "q.csv")["prediction"] == frame["target"]).mean()
    assert accuracy > max((frame["target"] == "yes").mean(), (frame["target"] == "no").mean()) + 0.1


def test_unseen_category_maps_to_zeros_and_missing_values_as_in_the_fit(tmp_path):
    from dperm.preprocessing import PrivatePreprocessor

    train = _write(_raw(), tmp_path / "train.csv")
    assert _fit(train, tmp_path / "m.json", "--categories", "city=paris,lyon,nice") == 0
    model = json.loads((tmp_path / "m.json").read_text())
    pre = PrivatePreprocessor.from_released(model["preprocessing"])
    rows = pd.DataFrame({"age": [30.0, np.nan], "city": ["marseille", np.nan], "income": [np.nan, 2e4]})
    out = pd.DataFrame(pre.transform(rows), columns=model["preprocessing"]["features_out"])
    assert (out[[c for c in out.columns if c.startswith("city=")]] == 0).all().all()
    assert out.loc[0, "income_missing"] > 0 and out.loc[1, "age_missing"] > 0
    assert out.loc[0, "income"] == 0 and out.loc[1, "age"] == 0  # the released centre: 0 after scaling


def test_declared_bounds_and_categories_are_honoured_and_free(tmp_path):
    train = _write(_raw(), tmp_path / "train.csv")
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "5"]) == 0
    assert _fit(train, tmp_path / "m.json", "--bounds", "age=0:100", "--bounds", "income=0:200000",
                "--categories", "city=paris,lyon,nice", "--accountant", ledger) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    pre = model["preprocessing"]
    assert pre["numeric"] == {"age": [50.0, 50.0], "income": [100000.0, 100000.0]}  # centre, half-width
    assert pre["categories"] == {"city": ["paris", "lyon", "nice"]}
    assert pre["declared"] == {"bounds": {"age": [0.0, 100.0], "income": [0.0, 200000.0]},
                               "categories": {"city": ["paris", "lyon", "nice"]}}
    # free: no budget for the preprocessing, the whole epsilon to the model
    assert set(model["budgets"]) == {"dplogisticregression"}
    assert model["budgets"]["dplogisticregression"]["epsilon"] == pytest.approx(2.0)
    charges = json.load(open(ledger))["charges"]
    assert len(charges) == 1
    assert "Quantile" not in json.dumps(charges) and "DiscreteLaplace" not in json.dumps(charges)
    # a private column costs: the preprocessing takes its share
    assert _fit(train, tmp_path / "n.json", "--bounds", "age=0:100") == 0
    budgets = json.loads((tmp_path / "n.json").read_text())["budgets"]
    assert budgets["privatepreprocessor"]["epsilon"] > 0
    assert budgets["dplogisticregression"]["epsilon"] < 2.0


def test_a_schema_file_declares_the_same_as_the_command_line(tmp_path):
    train = _write(_raw(), tmp_path / "train.csv")
    schema = {"bounds": {"age": [0, 100]}, "categories": {"city": ["paris", "lyon", "nice"]}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    assert _fit(train, tmp_path / "a.json", "--schema", str(tmp_path / "schema.json")) == 0
    assert _fit(train, tmp_path / "b.json", "--bounds", "age=0:100", "--categories", "city=paris,lyon,nice") == 0
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads((tmp_path / "b.json").read_text())
    # roles: a column of numbers declared categorical is one-hot over its text
    frame = _raw().assign(zone=lambda f: np.arange(len(f)) % 3 + 1)
    _write(frame, tmp_path / "z.csv")
    (tmp_path / "roles.json").write_text(json.dumps({"categories": {"zone": [1, 2, 3]}, "numeric": ["income"]}))
    assert _fit(tmp_path / "z.csv", tmp_path / "z.json", "--schema", str(tmp_path / "roles.json")) == 0
    pre = json.loads((tmp_path / "z.json").read_text())["preprocessing"]
    assert pre["categories"]["zone"] == ["1", "2", "3"] and "zone" not in pre["numeric"]


def test_neighbouring_csvs_give_model_files_that_differ_only_in_noisy_values(tmp_path):
    frame = _raw(n=1200)
    neighbour = frame.copy()  # replace-one: one row changed in every column
    neighbour.loc[0, ["age", "city", "income", "target"]] = [
        95.0, "nice" if frame.loc[0, "city"] != "nice" else "lyon", 1e6,
        "yes" if frame.loc[0, "target"] == "no" else "no"]
    models = []
    for data, name in [(frame, "a"), (neighbour, "b")]:
        path = _write(data, tmp_path / f"{name}.csv")
        assert _fit(path, tmp_path / f"{name}.json", "--bounds", "age=0:100", seed="7") == 0
        models.append(json.loads((tmp_path / f"{name}.json").read_text()))
    a, b = models
    assert "seed" not in json.dumps(a)
    assert {k for k in a if a[k] != b[k]} <= {"coef", "intercept", "preprocessing"}
    pre_a, pre_b = a["preprocessing"], b["preprocessing"]
    # only the private draws (and the privately selected categories, with the names they give) may differ
    assert {k for k in pre_a if pre_a[k] != pre_b[k]} <= {"numeric", "categories", "features_out"}
    assert pre_a["numeric"]["age"] == pre_b["numeric"]["age"] == [50.0, 50.0]  # declared: identical


def test_a_regression_on_a_raw_target_predicts_in_its_units(tmp_path):
    frame = _raw(n=2000)
    frame["target"] = 300.0 + 5.0 * (frame["age"] - 40) + 80.0 * (frame["city"] == "paris")
    _write(frame, tmp_path / "r.csv")
    args = ["fit", str(tmp_path / "r.csv"), "--target", "target", "--loss", "squared", "--epsilon", "4",
            "--seed", "1", "--bounds", "age=0:100", "--categories", "city=paris,lyon,nice"]
    assert main([*args, "--y-bounds", "0:700", "--out", str(tmp_path / "d.json")]) == 0
    model = json.loads((tmp_path / "d.json").read_text())
    assert model["y_bounds"] == [0.0, 700.0] and model["y_bounds_declared"] is True and "y" not in model["budgets"]
    assert main(["predict", str(tmp_path / "d.json"), str(tmp_path / "r.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    predicted = pd.read_csv(tmp_path / "p.csv")["prediction"].to_numpy()
    r2 = 1 - np.mean((predicted - frame["target"]) ** 2) / np.var(frame["target"])
    assert r2 > 0.5, r2
    # without --y-bounds they are estimated privately, at a share of the budget
    assert main([*args, "--out", str(tmp_path / "e.json")]) == 0
    model = json.loads((tmp_path / "e.json").read_text())
    assert model["y_bounds_declared"] is False and model["budgets"]["y"]["epsilon"] > 0


def test_the_ledger_is_charged_once_per_fit_with_the_whole_composition(tmp_path):
    train = _write(_raw(), tmp_path / "train.csv")
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "3"]) == 0
    # each fit's delta well below the ledger's: their (epsilon, delta) parts add their deltas
    fit = ["--accountant", ledger, "--delta", "1e-6"]
    assert _fit(train, tmp_path / "m.json", *fit, epsilon="1") == 0
    charges = json.load(open(ledger))["charges"]
    assert len(charges) == 1
    from dperm.privacy.accountant import epsilon as certified

    model = json.loads((tmp_path / "m.json").read_text())
    event = from_description(charges[0]["event"])
    assert certified(event, 1e-6) == pytest.approx(model["epsilon"], rel=1e-9)
    assert _fit(train, tmp_path / "n.json", *fit, epsilon="1") == 0
    assert len(json.load(open(ledger))["charges"]) == 2
    # the third does not fit: refused before anything is charged
    code = _fit(train, tmp_path / "o.json", *fit, epsilon="2")
    assert code == 2 and not (tmp_path / "o.json").exists()
    assert len(json.load(open(ledger))["charges"]) == 2


def test_an_all_numeric_csv_goes_through_the_private_preprocessing_unless_data_norm_is_declared(tmp_path):
    frame = _raw().drop(columns="city").dropna()
    train = _write(frame, tmp_path / "n.csv")
    assert _fit(train, tmp_path / "p.json") == 0
    assert "preprocessing" in json.loads((tmp_path / "p.json").read_text())
    assert _fit(train, tmp_path / "d.json", "--data-norm", "1") == 0
    assert "preprocessing" not in json.loads((tmp_path / "d.json").read_text())
    assert _fit(train, tmp_path / "e.json", "--preprocessing", "none") == 0
    assert json.loads((tmp_path / "e.json").read_text())["data_norm"] == 1.0


BAD = [
    (["--bounds", "height=0:2"], "not columns of"),
    (["--bounds", "age=0-100"], "LOW:HIGH"),
    (["--bounds", "age=100:0"], "LOW < HIGH"),
    (["--bounds", "age=0:x"], "must be numbers"),
    (["--bounds", "=0:1"], "COLUMN="),
    (["--bounds", "age=0:100", "--bounds", "age=0:90"], "declared twice"),
    (["--bounds", "age=0:100", "--categories", "age=a,b"], "both numeric"),
    (["--categories", "city=paris,,lyon"], "empty"),
    (["--bounds", "target=0:1"], "target or weight"),
    (["--y-bounds", "0:1"], "regression"),
    (["--y-bounds", "1"], "LOW:HIGH"),
    (["--data-norm", "1", "--bounds", "age=0:100"], "drop --data-norm"),
    (["--preprocessing", "none", "--bounds", "age=0:100"], "do not apply"),
    (["--preprocessing", "private", "--data-norm", "1"], "--data-norm"),
    (["--delta", "0"], "--delta > 0"),
    (["--schema", "SCHEMA"], "unknown keys"),
]


@pytest.mark.parametrize("extra, expected", BAD, ids=[" ".join(e) for e, _ in BAD])
def test_bad_declarations_stop_before_any_charge_in_one_line(tmp_path, capsys, extra, expected):
    frame = _raw()
    frame.loc[3, "city"] = "x31337"  # a value that must never be quoted
    train = _write(frame, tmp_path / "train.csv")
    (tmp_path / "schema.json").write_text(json.dumps({"bounds": {"age": [0, 1]}, "ranges": {}}))
    extra = [str(tmp_path / "schema.json") if e == "SCHEMA" else e for e in extra]
    ledger = str(tmp_path / "ledger.json")
    assert main(["budget", ledger, "--epsilon", "5"]) == 0
    capsys.readouterr()
    line = _error_line(capsys, _fit(train, tmp_path / "m.json", *extra, "--accountant", ledger))
    assert expected in line, line
    assert "31337" not in line and "paris" not in line
    assert not (tmp_path / "m.json").exists()
    assert json.load(open(ledger))["charges"] == []


def test_a_missing_target_column_and_a_missing_model_column_are_one_line_errors(tmp_path, capsys):
    train = _write(_raw(), tmp_path / "train.csv")
    line = _error_line(capsys, main(["fit", train, "--target", "label", "--epsilon", "1",
                                     "--out", str(tmp_path / "m.json")]))
    assert "no column 'label'" in line and not (tmp_path / "m.json").exists()
    assert _fit(train, tmp_path / "m.json", "--bounds", "age=0:100") == 0
    _write(_raw().drop(columns=["income", "target"]), tmp_path / "t.csv")
    capsys.readouterr()
    line = _error_line(capsys, main(["predict", str(tmp_path / "m.json"), str(tmp_path / "t.csv")]))
    assert "'income'" in line and "missing from" in line
    bad = _raw().drop(columns="target").astype({"age": object})
    bad.loc[4, "age"] = "ancient"
    _write(bad, tmp_path / "u.csv")
    # a value outside its column's domain is missing (totality), at predict time as at fit
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "u.csv"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    assert "ancient" not in capsys.readouterr().err
    missing = bad.copy()
    missing.loc[4, "age"] = np.nan
    _write(missing, tmp_path / "v.csv")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "v.csv"), "--out",
                 str(tmp_path / "q.csv")]) == 0
    assert pd.read_csv(tmp_path / "p.csv").equals(pd.read_csv(tmp_path / "q.csv"))


def test_labels_targets_and_weights_are_total_on_the_private_route(tmp_path, capsys):
    """A label outside --classes, a missing label, a weight above 1 or not a number, a
    regression target that is not a number: each was refused before any charge, which
    made the refusal a release about the row (issue 29). Now each row's label, target and
    weight is mapped by itself (weight 0, or clamped into [0, 1]); neighbours with the same
    seed write the same structure and nothing about the row."""
    frame = _raw().assign(w=0.5)
    base = _write(frame, tmp_path / "base.csv")
    neighbours = []
    for column, value in (("target", "maybe"), ("target", np.nan), ("w", 7.5), ("w", "heavy"), ("w", np.nan)):
        bad = frame.astype({column: object})
        bad.loc[5, column] = value
        neighbours.append(_write(bad, tmp_path / f"n{len(neighbours)}.csv"))
    records = []
    for data in [base, *neighbours]:
        out = tmp_path / "m.json"
        assert _fit(data, out, "--sample-weight", "w") == 0
        model = json.loads(out.read_text())
        records.append((model["preprocessing"]["features_out"], model["epsilon"], model["classes"],
                        model["sample_weight"]))
        err = capsys.readouterr().err
        assert "maybe" not in err and "7.5" not in err and "heavy" not in err
    assert all(r == records[0] for r in records)
    assert records[0][2] == ["no", "yes"] and "w" not in json.loads(out.read_text())["preprocessing"]["columns"]
    # a regression target that does not parse weighs 0 too
    reg = _raw().assign(value=np.linspace(0, 10, 1500)).drop(columns="target")
    reg_bad = reg.astype({"value": object})
    reg_bad.loc[3, "value"] = "42.5 (approx)"
    shapes = []
    for name, table in (("r.csv", reg), ("s.csv", reg_bad)):
        path = _write(table, tmp_path / name)
        assert main(["fit", path, "--target", "value", "--loss", "squared", "--y-bounds", "0:10", "--epsilon", "2",
                     "--seed", "0", "--out", str(tmp_path / "r.json")]) == 0
        shapes.append(json.loads((tmp_path / "r.json").read_text())["preprocessing"]["features_out"])
    assert shapes[0] == shapes[1] and "approx" not in capsys.readouterr().err


def test_a_column_mixing_numbers_and_text_gets_its_role_by_the_schema_rule(tmp_path, capsys):
    """One row must not flip a column's role (and the model's structure) between
    neighbouring tables. The command line refused an undeclared column holding numbers
    and text, which made the refusal itself a release about one row (issue 29). Now the
    role comes from the schema rule (a small charged release, the same as in Python): a
    column of numbers with one text value stays numeric, the text value is missing, and
    the neighbours release the same structure."""
    frame = _raw()
    train = _write(frame, tmp_path / "a.csv")
    frame["age"] = frame["age"].astype(object)
    frame.loc[7, "age"] = "unknown"
    neighbour = _write(frame, tmp_path / "b.csv")
    models = []
    for data, out in ((train, "ma.json"), (neighbour, "mb.json")):
        assert _fit(data, tmp_path / out) == 0
        models.append(json.load(open(tmp_path / out)))
    err = capsys.readouterr().err
    assert "unknown" not in err
    a, b = (m["preprocessing"] for m in models)
    assert a["features_out"] == b["features_out"] and set(a["numeric"]) == {"age", "income"}
    assert models[0]["epsilon"] == models[1]["epsilon"]
    # declared categorical (the schema's 'categorical'), the same table fits with age as a category
    (tmp_path / "schema.json").write_text(json.dumps({"categorical": ["age"]}))
    assert _fit(neighbour, tmp_path / "m.json", "--schema", str(tmp_path / "schema.json")) == 0
    assert "age" in json.load(open(tmp_path / "m.json"))["preprocessing"]["categories"]


def test_a_bound_on_a_text_column_makes_it_numeric_with_its_text_missing(tmp_path):
    """A declaration is obeyed whatever the values (they are data, the declaration is
    public): --bounds on a column of text makes it numeric, every text value missing."""
    train = _write(_raw(), tmp_path / "train.csv")
    assert _fit(train, tmp_path / "m.json", "--bounds", "city=0:1") == 0
    pre = json.load(open(tmp_path / "m.json"))["preprocessing"]
    assert "city" in pre["numeric"] and "city" not in pre["categories"]


def test_predict_to_a_closed_pipe_stops_quietly(tmp_path):
    """`dperm predict model.json big.csv --out - | head -1`: the reader goes away; the
    command stops without an error message, with a SIGPIPE death's status (141)."""
    import os
    import subprocess
    import sys

    train = _write(_raw(), tmp_path / "train.csv")
    assert _fit(train, tmp_path / "m.json", "--bounds", "age=0:100") == 0
    big = pd.concat([_raw(n=1500, seed=s).drop(columns="target") for s in range(40)], ignore_index=True)
    _write(big, tmp_path / "big.csv")
    env = dict(os.environ, DPERM_WARMUP="0", PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen([sys.executable, "-m", "dperm.cli", "predict", str(tmp_path / "m.json"),
                                str(tmp_path / "big.csv"), "--out", "-"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout.readline().strip() == b"prediction"
    process.stdout.close()  # the reader goes away
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141, err
    assert b"error" not in err.lower(), err
