"""Table 3 of Zhang et al. (IJCAI 2017): the typed-in paper figures, the shared output-perturbation path,
a tiny resumable run, the summary and the plots."""

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dperm.algorithms import registry
from dperm.bench import table3
from dperm.bench.table3 import (
    PAPER_DATASETS,
    PAPER_MUS,
    PAPER_TABLE3,
    Table3Config,
    paper_table3,
    plot_table3,
    run_table3,
    summarize,
)
from dperm.privacy import PrivacyBudget, PrivacyWarning

PAPER_TEXT = Path(__file__).resolve().parent / "data" / "zhang_zheng_mou_wang_2017_table3.txt"

SMALL = dict(datasets=("wine",), epsilons=(1.0,), max_rows=500, n_jobs=1,
             algorithms=("gd_output_perturbation", "dp_sgd", "objective_perturbation"))


def test_paper_table_has_every_cell():
    frame = paper_table3()
    assert len(PAPER_TABLE3) == len(frame) == 5 * 2 * 4
    assert list(dict.fromkeys(frame["dataset"])) == list(PAPER_DATASETS)
    for dataset, group in frame.groupby("dataset"):
        assert tuple(sorted(set(group["mu"]))) == PAPER_MUS[dataset]
        assert sorted(group["epsilon"]) == [0.1, 0.1, 0.5, 0.5, 1.0, 1.0, 2.0, 2.0]
    assert not frame.duplicated(["dataset", "mu", "epsilon"]).any()
    numbers = frame[["out_gd_error", "dp_sgd_error", "out_gd_seconds", "dp_sgd_seconds"]].to_numpy()
    assert np.all(numbers > 0)
    # the paper's claim: Out-GD beats DP-SGD in error in every cell
    assert (frame["out_gd_error"] < frame["dp_sgd_error"]).all()


def test_paper_table_matches_the_paper_text():
    lines = PAPER_TEXT.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Dataset\t"))
    names = {"BANK": "bank", "ADULT": "adult", "CreditCard": "credit_card", "WINE": "wine", "BIKE": "bike"}
    parsed, dataset, mu = [], None, None
    for line in lines[start + 2:]:
        if line.startswith("Table 3"):
            break
        fields = [re.sub(r"</?b>", "", f).strip() for f in line.split("\t")]
        if len(fields) < 7:
            continue
        dataset = names.get(fields[0], dataset)
        mu = float(fields[1]) if fields[1] else mu
        parsed.append((dataset, mu, *map(float, fields[2:7])))
    assert parsed == [tuple(row) for row in PAPER_TABLE3]


@pytest.mark.parametrize("mu, name", [(0.0, "gd_output_perturbation"), (0.5, "gd_output_perturbation"),
                                      (0.5, "output_perturbation")])
def test_shared_optimisation_reproduces_the_registered_fit(mu, name):
    config = Table3Config(datasets=("wine",), mus={"wine": (mu,)}, max_rows=400)
    spec = config.problem_specs()[0]
    _, problem = table3._problems(spec)
    budget = PrivacyBudget(0.5, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        prepared = table3._SHARED[name](problem, budget)
        for seed in (1, 2):
            fit = registry.get(name).fit(problem, budget, rng=np.random.default_rng(seed))
            shared = table3._release(prepared, problem, np.random.default_rng(seed))
            np.testing.assert_array_equal(shared, fit.coef)
    assert prepared.hyperparameters == fit.hyperparameters


def test_small_run_is_resumable_and_summarized(tmp_path):
    calls = []
    config = Table3Config(repeats=3, other_repeats=2, **SMALL)
    frame = run_table3(config, tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, calls[-1][1]) and calls[-1][0] == calls[-1][1] == 2 * 3 + 2 * 3 + 2
    ok = frame[frame["status"] == "ok"]
    assert ok.groupby(["mu", "algorithm"]).size().to_dict() == {
        (0.0, "dp_sgd"): 3, (0.0, "gd_output_perturbation"): 3,
        (0.5, "dp_sgd"): 3, (0.5, "gd_output_perturbation"): 3, (0.5, "objective_perturbation"): 2,
    }
    na = frame[frame["status"] == "n/a"]
    assert list(zip(na["mu"], na["algorithm"])) == [(0.0, "objective_perturbation")]  # mu = 0 is constrained
    assert np.isfinite(ok["excess_risk"]).all() and (ok["excess_risk"] > -1e-9).all()
    # the shared optimisation: equal recorded shared time within a cell, distinct noise
    outgd = ok[ok["algorithm"] == "gd_output_perturbation"]
    assert (outgd.groupby("mu")["shared_seconds"].nunique() == 1).all()
    assert outgd.groupby("mu")["excess_risk"].nunique().min() == 3

    lines = (tmp_path / "runs.csv").read_text().splitlines()
    with open(tmp_path / "runs.csv", "a") as handle:  # a run killed in mid-write
        handle.write("wine,huber(1),0.5,none,500,500,13,1.0")
    calls.clear()
    again = run_table3(config, tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 0)]
    assert (tmp_path / "runs.csv").read_text().splitlines() == lines
    pd.testing.assert_frame_equal(again, frame)

    calls.clear()
    more = run_table3(Table3Config(repeats=4, other_repeats=2, **SMALL), tmp_path,
                      progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (4, 4)  # one new repeat per (mu, paper method)
    assert len(more) == len(frame) + 4

    text = summarize(more, tmp_path)
    assert (tmp_path / "table3.md").read_text().strip() == text.strip()
    for column in ["Out-GD error", "DP-SGD error", "paper Out-GD", "paper DP-SGD", "Out-GD s", "DP-SGD s",
                   "paper Out-GD s", "paper DP-SGD s", "best (all algorithms)", "objective_perturbation"]:
        assert column in text
    assert "0.1713" in text and "3.0972" in text  # the paper's WINE, mu = 0, epsilon = 1 figures
    assert "n/a" in text and "±" in text

    paths = plot_table3(more, tmp_path)
    assert [p.name for p in paths] == ["table3_error.png", "table3_runtime.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_runs_in_worker_processes(tmp_path):
    config = Table3Config(datasets=("wine",), epsilons=(2.0,), mus={"wine": (0.5,)}, max_rows=300,
                          algorithms=("gd_output_perturbation", "dp_sgd"), repeats=2, n_jobs=2, backend="loky")
    frame = run_table3(config, tmp_path)
    assert (frame["status"] == "ok").sum() == 4
    single = run_table3(dataclasses.replace(config, n_jobs=1), tmp_path / "single")
    key = ["algorithm", "repeat"]
    pd.testing.assert_series_equal(  # the same numbers whatever the scheduling
        frame.sort_values(key)["excess_risk"].reset_index(drop=True),
        single.sort_values(key)["excess_risk"].reset_index(drop=True))


def test_unknown_names_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset"):
        run_table3(Table3Config(datasets=("iris",)), tmp_path)
    with pytest.raises(ValueError, match="unknown algorithm"):
        run_table3(Table3Config(datasets=("wine",), algorithms=("nope",)), tmp_path)


def test_bad_configs_are_rejected():
    for repeats in (-1, 0):  # zero runs of the paper's methods would print an empty table
        with pytest.raises(ValueError, match="repeats must be an integer >= 1"):
            Table3Config(repeats=repeats)
    with pytest.raises(ValueError, match="epsilons"):
        Table3Config(epsilons=(0.0,))
    with pytest.raises(ValueError, match="radius"):
        Table3Config(radius=0.0)


@pytest.mark.filterwarnings("default::UserWarning")  # the command line prints them (dperm: warning: ...)
def test_cli_bench_table3(tmp_path, capsys):
    cli = pytest.importorskip("dperm.cli")
    if not hasattr(cli, "cmd_bench_table3"):
        pytest.skip("the `dperm bench table3` subcommand is not wired yet")
    code = cli.main(["bench", "table3", "--datasets", "wine", "--epsilons", "1", "--repeats", "2",
                     "--algorithms", "gd_output_perturbation", "dp_sgd", "--max-rows", "400", "--n-jobs", "1",
                     "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "bench table3" in out and "WINE" in out
    assert (tmp_path / "runs.csv").exists() and (tmp_path / "table3.md").exists()
    assert (tmp_path / "table3_error.png").exists() and (tmp_path / "table3_runtime.png").exists()


def test_assumption_errors_raised_inside_a_fit_mark_the_cell_na(tmp_path, monkeypatch):
    def picky(problem, budget, *, rng=None):
        raise registry.AssumptionError("picky needs something this problem lacks")

    info = registry.AlgorithmInfo(name="picky", fit=picky, setting="convex", guarantee="(epsilon, delta)",
                                  source="test", paper="test")
    monkeypatch.setitem(registry._REGISTRY, "picky", info)
    config = Table3Config(datasets=("wine",), epsilons=(1.0,), mus={"wine": (0.5,)}, max_rows=300, n_jobs=1,
                          algorithms=("gd_output_perturbation", "picky"), repeats=2, other_repeats=3)
    frame = run_table3(config, tmp_path)
    picky_rows = frame[frame["algorithm"] == "picky"]
    assert list(picky_rows["status"]) == ["n/a"] * 3 and sorted(picky_rows["repeat"]) == [0, 1, 2]
    assert "n/a" in summarize(frame)


def _synthetic_runs(datasets, algorithms):
    rows = []
    for dataset in datasets:
        for mu in PAPER_MUS[dataset]:
            for eps in (0.1, 0.5, 1.0, 2.0):
                for algorithm in algorithms:
                    for repeat in range(2):
                        rows.append({"dataset": dataset, "mu": mu, "epsilon": eps, "algorithm": algorithm,
                                     "status": "ok", "excess_risk": 0.1 / eps + 0.01 * repeat,
                                     "cpu_seconds": 0.5 + repeat, "seconds": 0.5, "repeat": repeat})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("datasets", [("wine",), PAPER_DATASETS])
def test_plot_legends_are_never_cut_off(tmp_path, monkeypatch, datasets):
    """`dperm bench table3 --datasets wine` used to cut the legend off its one panel."""
    from matplotlib.figure import Figure

    checked = []
    save = Figure.savefig

    def checking_savefig(fig, *args, **kwargs):
        renderer = fig.canvas.get_renderer()
        fig.canvas.draw()
        # what is saved: the figure, or its tight bounding box when asked for
        box = fig.get_tightbbox(renderer) if kwargs.get("bbox_inches") == "tight" else None
        bounds = fig.bbox if box is None else box.transformed(fig.dpi_scale_trans)
        for legend in [*fig.legends, *[ax.get_legend() for ax in fig.axes if ax.get_legend()]]:
            extent = legend.get_window_extent(renderer)
            assert extent.x0 >= bounds.x0 - 1 and extent.x1 <= bounds.x1 + 1, (extent, bounds)
            assert extent.y0 >= bounds.y0 - 1 and extent.y1 <= bounds.y1 + 1, (extent, bounds)
            checked.append(legend)
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", checking_savefig)
    algorithms = ["gd_output_perturbation", "dp_sgd", *[n for n in registry.names()
                                                        if n not in ("gd_output_perturbation", "dp_sgd")][:10]]
    plot_table3(_synthetic_runs(datasets, algorithms), tmp_path)
    assert len(checked) == 2
