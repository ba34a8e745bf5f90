"""The full-batch path of ``ERMProblem`` without copies of X: the intercept as a virtual
constant column, blockwise Gram matrices, float32 data computed in float64 block by block.

Each quantity is checked against the same problem built from an explicitly augmented
(copied) matrix, and the memory claims with ``tracemalloc`` (NumPy reports its buffers).
"""

import math
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dperm.problem import ERMProblem
from dperm.problem import erm as erm_module
from dperm.problem.passes import count_passes


def _data(n, d, seed=0, sparse=False, dtype=np.float64, labels="binary"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparse:
        X *= rng.random((n, d)) < 0.4
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = (X / np.where(norms > 0, norms, 1.0) * rng.uniform(0.1, 0.9, size=(n, 1))).astype(dtype)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if labels == "binary" else rng.uniform(-1.0, 1.0, n)
    return (sp.csr_matrix(X) if sparse else X), y


def _augmented(X, s):
    column = np.full((X.shape[0], 1), s, dtype=X.dtype)
    return sp.hstack([X, sp.csr_matrix(column)], format="csr") if sp.issparse(X) else np.hstack([X, column])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", ["logistic", "huber", "biweight"])
def test_intercept_column_matches_an_explicit_column(loss, dtype, sparse):
    labels = "binary" if loss == "logistic" else "real"
    X, y = _data(120, 6, seed=1, sparse=sparse, dtype=dtype, labels=labels)
    s, R = 0.7, math.hypot(1.0, 0.7)
    virtual = ERMProblem(X, y, loss, ("l2", 0.1), data_norm=R, intercept_scaling=s)
    explicit = ERMProblem(_augmented(X, s), y, loss, ("l2", 0.1), data_norm=R)
    # no row is above the bound: nothing copied
    assert np.shares_memory(virtual._features.data, X.data) if sparse else virtual._features is X
    assert virtual.n_features == explicit.n_features == 7
    assert virtual.constants == explicit.constants
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    rng = np.random.default_rng(2)
    rows = rng.choice(120, size=17, replace=False)
    for _ in range(2):
        w, v = rng.normal(size=7), rng.normal(size=7)
        np.testing.assert_allclose(virtual.margins(w), explicit.margins(w), rtol=rtol, atol=1e-6 * (dtype == np.float32))
        assert virtual.objective(w) == pytest.approx(explicit.objective(w), rel=rtol)
        np.testing.assert_allclose(virtual.gradient(w), explicit.gradient(w), rtol=rtol, atol=rtol * 1e-2)
        np.testing.assert_allclose(virtual.hessian_vector(w, v), explicit.hessian_vector(w, v), rtol=rtol,
                                   atol=rtol * 1e-2)
        np.testing.assert_allclose(virtual.hessian(w), explicit.hessian(w), rtol=rtol, atol=rtol * 1e-2)
        np.testing.assert_allclose(virtual.batch_loss_gradient(w, rows), explicit.batch_loss_gradient(w, rows),
                                   rtol=rtol, atol=rtol * 1e-2)
        np.testing.assert_allclose(virtual.per_example_gradients(w, rows), explicit.per_example_gradients(w, rows),
                                   rtol=rtol, atol=rtol * 1e-2)
    # the materialized matrix (for the per-example kernels) is the explicit one
    Xv = virtual.X.toarray() if sparse else virtual.X
    Xe = explicit.X.toarray() if sparse else explicit.X
    np.testing.assert_array_equal(Xv, Xe)


def test_intercept_clips_the_features_to_the_rest_of_the_bound():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    s, R = 1.0, math.hypot(1.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        p = ERMProblem(X, np.array([1.0, -1.0, 1.0]), data_norm=R, intercept_scaling=s)
    rows = p.X
    assert np.linalg.norm(rows, axis=1).max() <= R
    np.testing.assert_array_equal(rows[:, 2], s)  # the constant column itself is never scaled
    np.testing.assert_allclose(rows[0, :2], [0.6, 0.8], rtol=1e-14)
    assert p.replace_row(1, [0.0, 0.5], -1.0).X[1].tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("s", [1.0, -2.0, math.inf])
def test_intercept_scaling_must_fit_under_the_data_norm(s):
    X, y = _data(10, 3)
    with pytest.raises(ValueError, match="intercept_scaling"):
        ERMProblem(X, y, data_norm=1.0, intercept_scaling=s)


@pytest.mark.parametrize("loss", ["logistic", "sigmoid_squared"])
def test_blockwise_hessian_equals_the_dense_formula(loss, monkeypatch):
    """Several blocks of rows, convex (rank-k updates of sqrt-scaled rows) and
    non-convex (negative curvature: general products) losses."""
    monkeypatch.setattr(erm_module, "_BLOCK_ELEMENTS", 64)  # blocks of 256 rows: 4 blocks
    X, y = _data(1000, 5, seed=3)
    if loss == "sigmoid_squared":
        y = (y > 0).astype(float)
    p = ERMProblem(X, y, loss, ("l2", 0.01), data_norm=1.5, intercept_scaling=0.5)
    w = np.random.default_rng(4).normal(size=6) * 3
    curv = p.loss.curvature(p.margins(w), p.y)
    if loss == "sigmoid_squared":
        assert (curv < 0).any()
    Xa = _augmented(X, 0.5)
    expected = Xa.T @ (curv[:, None] * Xa) / 1000 + 0.01 * np.eye(6)
    np.testing.assert_allclose(p.hessian(w), expected, rtol=1e-12, atol=1e-15)


def test_float64_compute_on_float32_data_shares_the_data(monkeypatch):
    monkeypatch.setattr(erm_module, "_BLOCK_ELEMENTS", 40)  # several blocks of 10 rows
    X, y = _data(95, 4, seed=5, dtype=np.float32)
    p32 = ERMProblem(X, y, "logistic", ("l2", 0.1), data_norm=1.2, intercept_scaling=0.6)
    p64 = p32.astype(np.float64)
    assert p64._features is p32._features and p64._features.dtype == np.float32
    assert p64.astype(np.float64) is p64
    exact = ERMProblem(X.astype(np.float64), y, "logistic", ("l2", 0.1), data_norm=1.2, intercept_scaling=0.6)
    w = np.random.default_rng(6).normal(size=5)
    # the same float32 values in float64 arithmetic: agreement to float64 rounding
    np.testing.assert_allclose(p64.gradient(w), exact.gradient(w), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(p64.hessian(w), exact.hessian(w), rtol=1e-13, atol=1e-16)
    assert p64.objective(w) == pytest.approx(exact.objective(w), rel=1e-14)
    # the float32 arithmetic is measurably coarser (what astype(float64) is for)
    assert np.abs(p32.gradient(w) - exact.gradient(w)).max() > 1e-12


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_full_batch_methods_allocate_no_copy_of_x(dtype, monkeypatch):
    """Gradient, Hessian-vector product, Hessian and float64-compute gradient of a problem
    with an intercept allocate at most a fifth of X beyond vectors of length n (blocks of
    128 kB here, for a small X)."""
    monkeypatch.setattr(erm_module, "_BLOCK_ELEMENTS", 1 << 14)
    n, d = 20000, 60
    X, y = _data(n, d, seed=7, dtype=dtype)
    p = ERMProblem(X, y, "logistic", ("l2", 0.01), data_norm=1.5, intercept_scaling=1.0)
    p64 = p.astype(np.float64)
    w, v = np.full(d + 1, 0.1), np.full(d + 1, -0.2)
    p.gradient(w)  # warm any lazy imports outside the measurement
    for call in (lambda: p.gradient(w), lambda: p.hessian_vector(w, v), lambda: p.hessian(w),
                 lambda: p64.gradient(w), lambda: p64.hessian(w)):
        tracemalloc.start()
        call()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak - 8 * 8 * n < 0.2 * X.nbytes, (call, peak, X.nbytes)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_rows_above_the_bound_are_scaled_without_a_copy(sparse):
    X, y = _data(200, 5, seed=8)
    X[:100] /= np.linalg.norm(X[:100], axis=1, keepdims=True)  # at the bound, up to rounding
    X[100] *= 3.0 / np.linalg.norm(X[100])  # clearly above it
    X = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        p = ERMProblem(X, y, "logistic", ("l2", 0.1), data_norm=1.0)
    assert np.shares_memory(p._features.data, X.data) if sparse else p._features is X
    clipped = p.X.toarray() if sparse else p.X
    assert np.linalg.norm(clipped, axis=1).max() <= 1.0 + 1e-15
    explicit = ERMProblem(p.X, y, "logistic", ("l2", 0.1), data_norm=1.0)
    w, v = np.random.default_rng(9).normal(size=(2, 5))
    np.testing.assert_allclose(p.gradient(w), explicit.gradient(w), rtol=1e-12)
    np.testing.assert_allclose(p.hessian(w), explicit.hessian(w), rtol=1e-12)
    np.testing.assert_allclose(p.hessian_vector(w, v), explicit.hessian_vector(w, v), rtol=1e-12)
    np.testing.assert_allclose(p.per_example_gradients(w), explicit.per_example_gradients(w), rtol=1e-12)


def test_input_check_makes_no_temporary_of_x_size():
    from dperm._validation import check_matrix

    X = np.random.default_rng(10).standard_normal((20000, 50)).astype(np.float32)
    tracemalloc.start()
    check_matrix(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.05 * X.nbytes
    huge = np.full((3, 2), 1e308)  # the sum overflows; the values are finite
    assert check_matrix(huge) is huge
    for bad in (np.nan, np.inf):  # a non-finite value: 0 (totality), in a copy (the caller's X untouched)
        Y = X.copy()
        Y[5, 3] = bad
        Z = check_matrix(Y)
        assert Z[5, 3] == 0.0 and Z.dtype == np.float32 and not np.isfinite(Y[5, 3])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float32_product_hessian_is_the_hessian_to_float32_accuracy(dtype):
    """The Newton directions' Hessian (float32 block products), intercept border and
    virtual row scales included."""
    X, y = _data(700, 8, seed=11, dtype=dtype)
    X[:5] *= 4.0  # rows above the bound: scaled virtually
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        p = ERMProblem(X, y, "logistic", ("l2", 0.01), data_norm=1.2, intercept_scaling=0.6)
    w = np.random.default_rng(12).normal(size=9)
    exact = p.astype(np.float64).hessian(w)
    fast = p.hessian(w, dtype=np.float32)
    np.testing.assert_allclose(fast, exact, rtol=0, atol=1e-6 * np.abs(exact).max())
    np.testing.assert_array_equal(fast, fast.T)


def test_gradient_and_hessian_at_one_point_read_the_margins_once(monkeypatch):
    X, y = _data(300, 5, seed=13)
    p = ERMProblem(X, y, "logistic", ("l2", 0.01), data_norm=1.5, intercept_scaling=0.5)
    calls = []
    original = ERMProblem._matvec
    monkeypatch.setattr(ERMProblem, "_matvec", lambda self, v, rows=None: calls.append(1) or original(self, v, rows))
    p.gradient(np.zeros(6))  # X 0 = 0: no pass
    p.hessian(np.zeros(6))
    assert calls == []
    w = np.full(6, 0.3)
    with count_passes() as count:
        p.gradient(w)  # one read of X: X w and X^T u block by block (X w kept)
        p.hessian(w)
        p.hessian_vector(w, w)  # its X v is a pass of its own; X w is remembered
    assert len(calls) == 1
    assert count.by_kind == {"gradient": (1.0, 4.0 * 300 * 5), "hessian": (1.0, 300 * 5 * 6.0),
                             "matvec": (1.0, 2.0 * 300 * 5), "rmatvec": (1.0, 2.0 * 300 * 5)}
    np.testing.assert_allclose(p.margins(w), X @ w[:5] + 0.5 * w[5], rtol=1e-14)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_certified_gradient_bounds_its_rounding_error(dtype, sparse):
    """The float64 gradient is within the stated bound of the gradient computed in extended
    precision on the same stored values (row scales and intercept included)."""
    X, y = _data(3000, 7, seed=14, sparse=sparse, dtype=dtype)
    X = X.multiply(3.0).tocsr() if sparse else X * dtype(3.0)  # every row above the bound: scaled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        p = ERMProblem(X, y, "logistic", ("l2", 0.02), data_norm=1.3, intercept_scaling=0.4)
    w = np.random.default_rng(15).normal(size=8) * 5
    grad, bound = p.certified_gradient(w)
    np.testing.assert_allclose(grad, p.astype(np.float64).gradient(w), rtol=1e-12, atol=1e-15)
    # extended-precision reference on the rows the model sees
    rows = np.empty((3000, 8), dtype=np.longdouble)
    rows[:, :7] = (X.toarray() if sparse else X).astype(np.longdouble) * p._row_scale.astype(np.longdouble)[:, None]
    rows[:, 7] = np.longdouble(0.4)  # the intercept column in float64 (p.X holds it in the data's dtype)
    a = rows @ w.astype(np.longdouble)
    z = np.asarray(y, dtype=np.longdouble) * a
    slopes = -np.asarray(y, dtype=np.longdouble) / (1 + np.exp(z))
    reference = rows.T @ slopes / len(y) + np.longdouble(0.02) * w.astype(np.longdouble)
    error = float(np.linalg.norm((grad.astype(np.longdouble) - reference).astype(np.float64)))
    assert error <= bound
    assert bound < 1e-13  # a few hundred units of roundoff of L, not a vacuous bound


def test_objective_perturbation_certifies_with_the_rounding_bound(monkeypatch):
    """The released point's residual includes the rounding bound: a bound above the
    tolerance makes the fit refuse (nothing released)."""
    from dperm.algorithms import get
    from dperm.privacy.budget import PrivacyBudget

    X, y = _data(400, 4, seed=16)
    p = ERMProblem(X, y, "logistic", ("l2", 0.05))
    fit = get("objective_perturbation").fit(p, PrivacyBudget(1.0, 1e-6), rng=0)
    assert fit.hyperparameters["tolerance"] == pytest.approx(max(1e-4 / 400, 64 * 2.0**-53 * 20))
    monkeypatch.setattr(erm_module, "gradient_rounding_bound", lambda *args: 1.0)
    with pytest.raises(RuntimeError, match="did not reach the tolerance"):
        get("objective_perturbation").fit(p, PrivacyBudget(1.0, 1e-6), rng=0)
