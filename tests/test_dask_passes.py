"""The default estimator on Dask data makes as many passes over the data as in memory,
and its Hessian blocks are formed as the in-memory Hessian is (product precision, the
rank-k update of the sqrt(phi'')-scaled rows)."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from dperm import DPLogisticRegression  # noqa: E402
from dperm.distributed.problem import DaskERMProblem  # noqa: E402
from dperm.problem.erm import ERMProblem  # noqa: E402

_DATA_METHODS = ("gradient", "certified_gradient", "hessian", "value_and_gradient", "hessian_vector", "loss_value",
                 "loss_gradient")


def _data(n=6000, d=5, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= rng.uniform(size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.arange(1.0, d + 1) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X.astype(dtype), y


def _count_passes(monkeypatch, fit):
    """Outermost calls of the ERMProblem methods that read X (in memory), map-reduces other
    than the checking pass (Dask)."""
    count, depth = [0], [0]

    def counted(f):
        def method(problem, *args, **kwargs):
            if depth[0] == 0 and not isinstance(problem, DaskERMProblem):
                count[0] += 1
            depth[0] += 1
            try:
                return f(problem, *args, **kwargs)
            finally:
                depth[0] -= 1
        return method

    for name in _DATA_METHODS:
        monkeypatch.setattr(ERMProblem, name, counted(getattr(ERMProblem, name)))
    reduce = DaskERMProblem._reduce

    def counted_reduce(problem, kernel, *args, **kwargs):
        if kernel.__name__ != "check_block":
            count[0] += 1
        return reduce(problem, kernel, *args, **kwargs)

    monkeypatch.setattr(DaskERMProblem, "_reduce", counted_reduce)
    result = fit()
    monkeypatch.undo()
    return count[0], result


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_default_estimator_makes_as_many_passes_on_dask_as_in_memory(monkeypatch, dtype):
    X, y = _data(dtype=dtype)

    def fit(X_, y_):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X_, y_)

    local_passes, local = _count_passes(monkeypatch, lambda: fit(X, y))
    dask_passes, remote = _count_passes(
        monkeypatch, lambda: fit(da.from_array(X, chunks=(1000, X.shape[1])), da.from_array(y, chunks=1000)))
    assert local.solver_ == remote.solver_ == "objective_perturbation"
    assert 3 <= local_passes == dask_passes
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("intercept", [0.0, 0.5])
def test_dask_hessian_blocks_match_the_in_memory_hessian(dtype, intercept):
    X, y = _data(n=3000, dtype=dtype)
    local = ERMProblem(X, y, regularizer=("l2", 1e-2), intercept_scaling=intercept)
    remote = DaskERMProblem(da.from_array(X, chunks=(700, X.shape[1])), y, regularizer=("l2", 1e-2),
                            intercept_scaling=intercept)
    w = np.linspace(-1.0, 1.0, local.n_features)
    for product in (None, np.float32):
        expected = local.hessian(w, dtype=product)
        got = remote.hessian(w, dtype=product)
        rtol = 1e-12 if (product is None and dtype == np.float64) else 2e-5
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())
    exact = local.astype(np.float64).hessian(w)
    assert np.abs(remote.hessian(w, dtype=np.float32) - exact).max() <= 1e-5 * np.abs(exact).max()
