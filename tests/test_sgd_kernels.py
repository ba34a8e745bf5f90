"""The compiled SGD kernels: the ``grid`` rounding of the batch sum, and the lazy noise of
sparse data against the dense noise (the same deterministic part, the same law)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dperm.algorithms import _kernels

SQUARED = 3  # loss code: phi'(a, y) = a - y, so the iterates are affine in the noise


def _sparse_data(n=40, d=12, nnz=2, seed=0):
    rng = np.random.default_rng(seed)
    cols = np.stack([rng.choice(d, nnz, replace=False) for _ in range(n)])
    vals = rng.uniform(-1, 1, (n, nnz)) / np.sqrt(nnz)
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sort_indices()
    return X, rng.uniform(-1, 1, n)


_UNWEIGHTED = np.empty(0)  # the kernels' "no sample weights"


def _batches(n, K, b, seed=1):
    rng = np.random.default_rng(seed)
    rows = np.stack([rng.choice(n, b, replace=False) for _ in range(K)]).astype(np.int64)
    return rows, np.full(K, b, dtype=np.int64)


def _dense_csr_run(X, y, w0, rows, counts, noise, sigma, etas, denom, l2, grid=0.0):
    w = w0.copy()
    _kernels.sgd_steps_csr(X.indptr, X.indices, X.data, y, _UNWEIGHTED, w, rows, counts, sigma * noise, etas, denom,
                           SQUARED, 0.0, l2, 0.0, 0, 0.0, np.zeros(len(w)), grid)
    return w


def _lazy_run(X, y, w0, rows, counts, normals, sigma, etas, denom, l2, grid=0.0):
    w = w0.copy()
    used = _kernels.sgd_steps_csr_lazy(X.indptr, X.indices, X.data, y, _UNWEIGHTED, w, rows, counts, normals, sigma,
                                       etas, denom, SQUARED, 0.0, l2, grid)
    return w, used


@pytest.mark.parametrize("sparse", [False, True])
def test_grid_zero_is_the_plain_step_and_grid_rounds_the_sum_before_the_noise(sparse):
    X, y = _sparse_data(n=30, d=6, nnz=3)
    Xd = np.ascontiguousarray(X.toarray())
    rows, counts = _batches(30, 1, 7)
    w0 = np.linspace(-0.5, 0.5, 6)
    noise = np.random.default_rng(3).standard_normal((1, 6))
    sigma, eta, denom, grid = 0.7, 0.3, 7.0, 0.25

    def step(grid_value):
        w = w0.copy()
        args = (y, _UNWEIGHTED, w, rows, counts, sigma * noise, np.array([eta]), denom, SQUARED, 0.0, 0.0, 0.0, 0, 0.0,
                np.zeros(6), grid_value)
        if sparse:
            _kernels.sgd_steps_csr(X.indptr, X.indices, X.data, *args)
        else:
            _kernels.sgd_steps_dense(Xd, *args)
        return w

    batch = Xd[rows[0]]
    total = batch.T @ (batch @ w0 - y[rows[0]])  # the batch's gradient sum, squared loss
    expected = w0 - eta * (total + sigma * noise[0]) / denom
    np.testing.assert_allclose(step(0.0), expected, rtol=1e-12, atol=1e-14)
    rounded = np.rint(total / grid) * grid
    assert not np.allclose(rounded, total)  # the test sees the rounding
    np.testing.assert_allclose(step(grid), w0 - eta * (rounded + sigma * noise[0]) / denom, rtol=1e-12, atol=1e-14)
    # what the step adds on top of the noise is a multiple of the grid in every coordinate
    sums = (w0 - step(grid)) * denom / eta - sigma * noise[0]
    np.testing.assert_allclose(sums / grid, np.rint(sums / grid), atol=1e-9)


@pytest.mark.parametrize("l2,etas", [
    (0.0, np.full(60, 0.2)),
    (0.5, 0.8 / np.sqrt(np.arange(1, 61))),
    (0.5, 1.0 / (0.5 * np.arange(1, 61))),  # 1 / (mu t): the first factor 1 - eta l2 is 0
    (9.0, np.full(300, 0.1)),  # factor 0.1: the product underflows, a new segment mid-block
])
@pytest.mark.parametrize("grid", [0.0, 0.05])
def test_lazy_noise_has_the_dense_deterministic_part(l2, etas, grid):
    """Without noise the lazy kernel is the dense one: the closed form of the skipped
    shrink factors is exact up to rounding."""
    X, y = _sparse_data()
    rows, counts = _batches(X.shape[0], len(etas), 2)
    w0 = np.linspace(-1, 1, X.shape[1])
    dense = _dense_csr_run(X, y, w0, rows, counts, np.zeros((len(etas), X.shape[1])), 0.0, etas, 2.0, l2, grid)
    lazy, _ = _lazy_run(X, y, w0, rows, counts, np.zeros(10**4), 0.0, etas, 2.0, l2, grid)
    np.testing.assert_allclose(lazy, dense, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("l2,etas", [
    (0.0, np.full(40, 0.3)),
    (0.5, 1.0 / (0.5 * np.arange(1, 41))),
    (9.0, np.full(260, 0.1)),
])
def test_lazy_noise_has_the_dense_law(l2, etas):
    """Same batches, 4000 noise draws each: the final iterates of the lazy and the dense
    kernel have the same mean, variances and covariances (squared loss: the iterate is
    Gaussian, so these moments are its whole law). Fixed seeds: deterministic."""
    X, y = _sparse_data()
    d, K, runs = X.shape[1], len(etas), 4000
    rows, counts = _batches(X.shape[0], K, 2)
    w0 = np.linspace(-1, 1, d)
    sigma, denom = 0.8, 2.0
    rng = np.random.default_rng(11)
    needed = _kernels.lazy_normals_needed(X.indptr, rows, counts, etas, l2, d)
    dense = np.array([_dense_csr_run(X, y, w0, rows, counts, rng.standard_normal((K, d)), sigma, etas, denom, l2)
                      for _ in range(runs)])
    lazy, used = [], []
    for _ in range(runs):
        w, u = _lazy_run(X, y, w0, rows, counts, rng.standard_normal(needed), sigma, etas, denom, l2)
        lazy.append(w)
        used.append(u)
    lazy = np.array(lazy)
    assert max(used) <= needed
    assert max(used) < K * d / 2  # far fewer normals than the dense K x d
    se = np.sqrt((dense.var(0) + lazy.var(0)) / runs)
    assert np.all(np.abs(dense.mean(0) - lazy.mean(0)) < 4.5 * se)
    ratio = lazy.var(0) / dense.var(0)
    assert np.all(np.abs(ratio - 1) < 0.15), ratio  # s.e. of the ratio about 0.03
    c_dense, c_lazy = np.cov(dense.T), np.cov(lazy.T)
    scale = np.sqrt(np.outer(np.diag(c_dense), np.diag(c_dense)))
    assert np.all(np.abs(c_dense - c_lazy) / scale < 0.1)  # correlations agree within 0.1 (s.e. about 0.02)


def test_run_noisy_sgd_takes_the_lazy_kernel_for_sparse_data_without_projection():
    """The driver: CSR data, no projection, no l1, last iterate only -> the lazy kernel
    (within one block of 512 steps the batches are those of the dense run, which draws its
    noise after them; with noise 1e-12 the iterates agree to 1e-9), and no average is
    returned; with an average asked for, the dense kernel."""
    from dperm.algorithms.sgd import run_noisy_sgd
    from dperm.problem.erm import ERMProblem

    X, y = _sparse_data(n=60, d=15, nnz=3)
    problem = ERMProblem(X, np.where(y > 0, 1.0, -1.0), "logistic", ("l2", 0.2))
    kw = dict(batch_size=6, sampling="poisson", sigma=1e-12, domain=None)
    etas = 0.5 / np.sqrt(np.arange(1, 501))
    lazy, none = run_noisy_sgd(problem, np.zeros(15), etas, rng=np.random.default_rng(5), average=False, **kw)
    dense, average = run_noisy_sgd(problem, np.zeros(15), etas, rng=np.random.default_rng(5), **kw)
    assert none is None and average is not None
    assert np.linalg.norm(dense) > 0.1
    np.testing.assert_allclose(lazy, dense, rtol=0, atol=1e-9)
