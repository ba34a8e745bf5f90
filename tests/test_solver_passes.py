"""The objective-perturbation solver's row-sample warm start (issue 33): what it certifies,
that it changes only the path (the released point is within the certified tolerance of
the exact minimizer either way), its pass counts, and the same passes on Dask."""

import importlib
import warnings

import numpy as np
import pytest

from dperm import DPLogisticRegression
from dperm.problem.erm import ERMProblem
from dperm.problem.passes import count_passes

op = importlib.import_module("dperm.algorithms.objective_perturbation")


def _data(n=6000, d=5, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= rng.uniform(size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.arange(1.0, d + 1) * 3 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X.astype(dtype), y


@pytest.fixture
def small_samples(monkeypatch):
    """The sample stage on test-sized data: stride 4 from 1 000 rows on."""
    monkeypatch.setattr(op, "_SAMPLE_MIN_ROWS", 1000)
    monkeypatch.setattr(op, "_SAMPLE_KEPT_ROWS", 250)
    monkeypatch.setattr(op, "_SAMPLE_STRIDE", 4)


def test_sample_stride_is_a_function_of_n_and_d_only():
    assert op.sample_stride(99_999, 10) == 1
    assert op.sample_stride(100_000, 20) == 5
    assert op.sample_stride(1_000_000, 100) == 16
    assert op.sample_stride(4_000_000, 20) == 16
    assert op.sample_stride(100_000, 100) == 5
    # large d: steps by CG preconditioned with the sample's Hessian, a sample of >= 8 d rows
    assert op.sample_stride(100_000, 1000) == 12
    assert op.sample_stride(1_000_000, 1000) == 16
    assert op.sample_stride(100_000, 2000) == 6
    assert op.sample_stride(100_000, 7000) == 1


@pytest.mark.filterwarnings("ignore::dperm.exceptions.DataNormWarning")
def test_preconditioned_cg_steps_certify_the_tolerance_without_a_hessian_on_all_rows(small_samples, monkeypatch):
    """Large d (here lowered to 5): the steps on all rows are CG on Hessian-vector products
    preconditioned by the sample's Hessian; no Hessian is formed on all rows, the
    certificate is the same check, and the point lands within gamma / mu_J of the one the
    dense Newton path finds."""
    X, y = _data(n=8000, d=8)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0, intercept_scaling=0.5)
    linear = np.random.default_rng(2).normal(size=problem.n_features) * 2.0 / problem.n_samples
    ridge, gamma = 0.5 / problem.n_samples, 1e-9
    monkeypatch.setattr(op, "_PCG_MIN_D", 5)
    formed = []  # the number of rows of every Hessian formed
    original = ERMProblem.hessian
    monkeypatch.setattr(ERMProblem, "hessian", lambda self, w, dtype=None: (formed.append(self.n_samples),
                                                                            original(self, w, dtype))[1])
    with count_passes() as pcg:
        w_p, residual_p, _ = op._solve_perturbed(problem, ridge, linear, gamma)
    assert 0 < residual_p <= gamma
    grad, bound = problem.astype(np.float64).certified_gradient(w_p)
    assert np.linalg.norm(grad + ridge * w_p + linear) + bound <= gamma * (1 + 1e-9)
    assert formed and set(formed) == {2000}  # the sample's (every 4th row), never all 8000 rows
    assert pcg.by_kind["matvec"][0] >= 1  # the Hessian-vector products read all rows
    monkeypatch.setattr(op, "_PCG_MIN_D", 10**9)
    w_n, residual_n, _ = op._solve_perturbed(problem, ridge, linear, gamma)
    assert residual_n <= gamma
    assert np.linalg.norm(w_p - w_n) <= 2.0 * gamma / (1e-3 + ridge)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sample_warm_start_certifies_the_tolerance_and_lands_on_the_same_minimizer(small_samples, dtype):
    X, y = _data(dtype=dtype)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0, intercept_scaling=0.5)
    linear = np.random.default_rng(1).normal(size=problem.n_features) * 2.0 / problem.n_samples
    ridge, gamma = 0.5 / problem.n_samples, 1e-9
    mu_J = 1e-3 + ridge
    assert op.sample_stride(problem.n_samples, problem.n_features) == 4
    with count_passes() as sampled:
        w_s, residual_s, _ = op._solve_perturbed(problem, ridge, linear, gamma)
    assert "sample" not in sampled.by_kind  # in memory the sample is a view: no gather
    assert 0 < residual_s <= gamma
    # the certificate is the released check: recompute it independently at w_s
    grad, bound = problem.astype(np.float64).certified_gradient(w_s)
    assert np.linalg.norm(grad + ridge * w_s + linear) + bound <= gamma * (1 + 1e-9)
    # the sample's reads count as 1/4 of a pass each: some kinds have fractional totals
    assert any(not float(passes).is_integer() for passes, _ in sampled.by_kind.values())
    with pytest.MonkeyPatch.context() as mp, count_passes() as unsampled:
        mp.setattr(op, "_SAMPLE_MIN_ROWS", 10**9)
        w_f, residual_f, _ = op._solve_perturbed(problem, ridge, linear, gamma)
    assert residual_f <= gamma
    assert all(float(passes).is_integer() for passes, _ in unsampled.by_kind.values())
    # both within gamma / mu_J of the exact minimizer of J
    assert np.linalg.norm(w_s - w_f) <= 2.0 * gamma / mu_J


def test_pass_counter_sees_the_sample_stage_as_fractions_of_a_pass(small_samples):
    X, y = _data(n=8000)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0)
    with count_passes() as count:
        op._solve_perturbed(problem, 1e-4, np.zeros(problem.n_features), 1e-9)
    full = count.by_kind["certified_gradient"][0]
    assert full >= 1.0 and float(full).is_integer()  # every certified gradient reads all rows
    assert count.by_kind["hessian"][0] % 0.25 == 0.0
    assert count.passes == pytest.approx(sum(p for p, _ in count.by_kind.values()))
    assert count.flops > 0


def test_output_perturbation_uses_the_certified_newton_solver(small_samples):
    from dperm.algorithms.output_perturbation import prepare_output_perturbation
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem.reference import solve_reference

    X, y = _data(n=5000)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-2), data_norm=1.0, intercept_scaling=0.5)
    prepared = prepare_output_perturbation(problem, PrivacyBudget(1.0, 1e-6))
    tol = prepared.hyperparameters["tolerance"]
    grad, bound = problem.astype(np.float64).certified_gradient(prepared.point)
    assert np.linalg.norm(grad) + bound <= tol * (1 + 1e-12)
    reference = solve_reference(problem, tol=1e-12).coef
    assert np.linalg.norm(prepared.point - reference) <= 2 * tol / 1e-2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sample_stage_on_dask_makes_the_in_memory_passes(small_samples, dtype):
    da = pytest.importorskip("dask.array")
    X, y = _data(n=6000, dtype=dtype)

    def fit(X_, y_):
        with warnings.catch_warnings(), count_passes() as count:
            warnings.simplefilter("ignore")
            model = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X_, y_)
        return count, model

    local_count, local = fit(X, y)
    remote_count, remote = fit(da.from_array(X, chunks=(1000, X.shape[1])), da.from_array(y, chunks=1000))
    assert local.solver_ == remote.solver_ == "objective_perturbation"
    # Dask gathers the sample once (a read of every block); every other read is the same:
    # the sample stage in memory on the gathered rows, each full pass a map-reduce
    assert remote_count.by_kind.pop("sample") == (1.0, 0.0)
    names = {"certified_gradient_block": "certified_gradient", "hessian_block": "hessian",
             "value_gradient_block": "gradient"}
    remote_passes: dict = {}
    for kind, (passes, _) in remote_count.by_kind.items():
        remote_passes[names.get(kind, kind)] = remote_passes.get(names.get(kind, kind), 0.0) + passes
    local_passes = {kind: passes for kind, (passes, _) in local_count.by_kind.items() if kind != "row_norms"}
    remote_passes.pop("check_block")  # Dask's checking pass, the in-memory row norms
    assert remote_passes == pytest.approx(local_passes)
    assert local_passes["certified_gradient"] >= 1 and not float(local_passes["hessian"]).is_integer()
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-8)
