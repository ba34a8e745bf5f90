"""dperm.bench.scaling: measured error over growing n against the slope of the paper's bound."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dperm import theory
from dperm.bench.scaling import (
    ScalingConfig,
    choose_problem,
    fitted_slope,
    plot_scaling,
    run_scaling,
    scaling_command,
    slope_summary,
)

SMALL = (200, 400, 800)


def test_smoke_writes_csv_png_and_summary(tmp_path):
    calls = []
    report = scaling_command("output_perturbation", sizes=SMALL, repeats=2, out=tmp_path,
                             progress=lambda: calls.append(1))
    assert len(calls) == len(SMALL) * 2 == report.config.total_fits
    assert report.csv == tmp_path / "scaling_output_perturbation.csv" and report.csv.exists()
    assert report.png == tmp_path / "scaling_output_perturbation.png"
    assert report.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.read_csv(report.csv)
    assert list(frame["n"]) == list(SMALL)
    for column in ("measured", "measured_sem", "seconds", "bound", "bound_slope", "quantity", "problem"):
        assert column in frame.columns
    assert (frame["measured"] > 0).all() and (frame["bound"] > 0).all()
    assert frame["quantity"].iloc[0] == "excess empirical risk"
    summary = report.summary
    for key in ("measured_slope", "measured_slope_stderr", "predicted_slope", "predicted_slope_local", "seconds_total"):
        assert math.isfinite(summary[key])
    assert summary["predicted_slope"] == pytest.approx(-2.0)
    assert "measured slope" in report.text()
    record = json.loads(report.json.read_text())
    assert record["summary"]["algorithm"] == "output_perturbation"
    assert record["config"]["delta"] == 1e-5


def test_bound_column_is_theory_bound_for():
    frame = run_scaling(ScalingConfig("gd_output_perturbation", sizes=SMALL, repeats=1))
    row = frame.iloc[0]
    expected = theory.bound_for("gd_output_perturbation", n=int(row["n"]), d=10, epsilon=1.0, delta=1e-5,
                                strong_convexity=0.1, lipschitz=row["lipschitz"], smoothness=row["smoothness"])
    assert row["bound"] == pytest.approx(expected)
    assert row["bound_slope"] == pytest.approx(-2.0)


def test_fitted_slope_recovers_a_known_slope():
    rng = np.random.default_rng(3)
    n = np.geomspace(500, 64000, 8)
    values = 3.0 * n ** -1.5 * np.exp(0.05 * rng.standard_normal(n.size))
    fit = fitted_slope(n, values)
    assert fit.n_points == 8 and fit.dropped == 0
    assert abs(fit.slope + 1.5) < 3 * fit.stderr + 1e-12
    assert abs(fit.slope + 1.5) < 0.05
    assert 0 < fit.stderr < 0.05
    assert np.allclose(fit.predict(n), 3.0 * n ** -1.5, rtol=0.15)
    # exact power law: exact slope and intercept, no scatter
    exact = fitted_slope(pd.DataFrame({"n": n, "measured": 2.0 / n}))
    assert exact.slope == pytest.approx(-1.0, abs=1e-12)
    assert exact.intercept == pytest.approx(math.log(2.0), abs=1e-9)
    assert exact.stderr == pytest.approx(0.0, abs=1e-9) and exact.r_squared == pytest.approx(1.0)


def test_fitted_slope_edge_cases():
    two = fitted_slope([100, 200], [1.0, 0.25])
    assert two.slope == pytest.approx(-2.0) and math.isnan(two.stderr)
    with pytest.warns(UserWarning, match="non-positive"):
        fit = fitted_slope([100, 200, 400, 800], [1.0, -1e-9, 1 / 16, 1 / 64])
    assert fit.dropped == 1 and fit.slope == pytest.approx(-2.0)
    with pytest.raises(ValueError):
        fitted_slope([100, 100], [1.0, 2.0])
    with pytest.raises(ValueError):
        fitted_slope([100, 200], [1.0])


@pytest.mark.parametrize("algorithm, problem, setting, measure", [
    ("output_perturbation", "logistic_l2", "strongly_convex", "excess_risk"),
    ("gd_output_perturbation", "logistic_l2", "strongly_convex", "excess_risk"),
    ("dp_gd", "pl_least_squares", "pl", "excess_risk"),
    ("dp_svrg_pp", "logistic_ball", "convex", "excess_risk"),
    ("rrpsgd", "glm_sigmoid", "nonconvex", "grad_norm_sq"),
    ("dp_gld", "glm_sigmoid_l2", "nonconvex", "excess_risk"),
])
def test_auto_problem_meets_the_assumptions(algorithm, problem, setting, measure):
    kind, case = choose_problem(ScalingConfig(algorithm, sizes=SMALL, repeats=1))
    assert (kind, case.setting) == (problem, setting)
    frame = run_scaling(ScalingConfig(algorithm, sizes=(200, 400), repeats=1))
    assert (frame["problem"] == problem).all() and (frame["measure"] == measure).all()
    assert np.isfinite(frame["measured"]).all() and (frame["bound"] > 0).all()


def test_dp_gd_gets_a_public_pl_constant_and_the_pl_bound():
    frame = run_scaling(ScalingConfig("dp_gd", sizes=SMALL, repeats=1))
    hyper = json.loads(frame["hyperparameters"].iloc[0])
    assert hyper["regime"] == "pl" and hyper["output"] == "last" and hyper["pl_constant"] > 0
    assert (frame["strong_convexity"] == hyper["pl_constant"]).all()
    # forced non-convex problem: Theorem 6.3, squared gradient norm of a random iterate
    frame = run_scaling(ScalingConfig("dp_gd", sizes=SMALL, repeats=1, problem="glm_sigmoid"))
    assert frame["measure"].iloc[0] == "grad_norm_sq"
    assert json.loads(frame["hyperparameters"].iloc[0])["output"] == "random"


def test_refusals_and_validation():
    with pytest.raises(ValueError, match="population risk"):
        choose_problem(ScalingConfig("dp_fw_l2", sizes=SMALL))
    with pytest.raises(ValueError, match="unknown algorithm"):
        ScalingConfig("no_such_algorithm")
    with pytest.raises(ValueError, match="two distinct"):
        ScalingConfig(sizes=(100, 100))
    with pytest.raises(ValueError, match="problem"):
        ScalingConfig(problem="nonsense")
    with pytest.raises(ValueError, match="no synthetic problem"):  # a strongly convex-only bound
        choose_problem(ScalingConfig("output_perturbation", sizes=SMALL, problem="logistic_ball"))
    assert ScalingConfig(sizes=(400, 200, 400)).sizes == (200, 400)
    assert ScalingConfig("localization").resolved_delta() == 0.0
    assert ScalingConfig("dp_gd").resolved_delta() == 1e-5
    assert ScalingConfig("dp_gd", delta=1e-6).resolved_delta() == 1e-6


def test_runs_are_reproducible():
    config = ScalingConfig("gd_output_perturbation", sizes=SMALL, repeats=2, seed=7)
    columns = ["n", "measured", "measured_sem", "bound", "steps"]
    pd.testing.assert_frame_equal(run_scaling(config)[columns], run_scaling(config)[columns])


def test_plot_survives_a_non_positive_point(tmp_path):
    frame = run_scaling(ScalingConfig("output_perturbation", sizes=(200, 400, 800, 1600), repeats=1))
    frame.loc[1, "measured"] = -1e-9
    with pytest.warns(UserWarning, match="non-positive"):
        path = plot_scaling(frame, tmp_path / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_every_size_and_repeat_draws_independent_noise(monkeypatch):
    """The noise streams of all (n, repeat) fits differ, so the standard errors are honest
    (they used to reuse repeat r's stream at every n)."""
    import copy

    import dperm.bench.scaling as scaling

    real = scaling.registry.get("output_perturbation")
    first_draws = []

    class Recording:  # the registered algorithm, recording the first draws of each fit's stream
        def __getattr__(self, name):
            return getattr(real, name)

        def fit(self, problem, budget, rng, **kwargs):
            first_draws.append(tuple(copy.deepcopy(rng).standard_normal(4)))
            return real.fit(problem, budget, rng=rng, **kwargs)

    monkeypatch.setattr(scaling.registry, "get", lambda name: Recording())
    frame = run_scaling(ScalingConfig("output_perturbation", sizes=(200, 400, 800), repeats=3, seed=1))
    assert len(first_draws) == 9 and len(set(first_draws)) == 9
    assert "iterations" not in frame.columns and "gradient_evaluations" not in frame.columns


@pytest.mark.parametrize("algorithm", ["output_perturbation", "gd_output_perturbation"])
def test_measured_slope_matches_the_bound(algorithm):
    # Strongly convex logistic, fixed delta: both bounds are ~ 1/n^2 (Zhang et al. 2017, Theorem 2).
    config = ScalingConfig(algorithm, sizes=(1000, 2000, 4000, 8000, 16000), repeats=10)
    summary = slope_summary(run_scaling(config))
    assert summary["predicted_slope"] == pytest.approx(-2.0)
    assert abs(summary["measured_slope"] - summary["predicted_slope"]) < 0.2
    assert summary["measured_r_squared"] > 0.98


def test_dp_gd_pl_slope_matches_the_bound():
    # PL least squares: the bound is G^2 d log^2(n) log(1/delta) / (n eps)^2 (Wang, Ye, Xu 2017, Theorem 6.2).
    config = ScalingConfig("dp_gd", sizes=(1000, 2000, 4000, 8000, 16000), repeats=10)
    summary = slope_summary(run_scaling(config))
    assert -1.85 < summary["predicted_slope"] < -1.7
    assert abs(summary["measured_slope"] - summary["predicted_slope"]) < 0.3
