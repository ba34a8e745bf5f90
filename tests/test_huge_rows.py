"""Rows far above the declared data_norm (entries beyond float32's range, up to float64's
largest value) are clipped before any cast or product: every finite input fits."""

import warnings

import numpy as np
import pytest

from dperm import DPLogisticRegression
from dperm.problem.erm import ERMProblem, _row_norms


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("value", [1e39, 1e200])
def test_row_norms_finite_for_every_row_with_a_finite_norm(value):
    X = np.array([[value, -value, 1.0], [3.0, 4.0, 0.0]])
    norms = _row_norms(X)
    assert norms[1] == 5.0
    assert norms[0] == pytest.approx(value * np.sqrt(2.0), rel=1e-12)


def test_rows_beyond_float64s_norm_range_are_clipped_onto_the_bound():
    top = np.finfo(np.float64).max
    X = np.array([[top, -top, 0.0], [3.0, 4.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = ERMProblem(X, np.array([1.0, -1.0]), data_norm=2.0)
    rows = problem.X
    assert np.linalg.norm(rows[0]) == pytest.approx(2.0, rel=1e-12) and np.linalg.norm(rows[0]) <= 2.0
    np.testing.assert_allclose(rows[0], [np.sqrt(2.0), -np.sqrt(2.0), 0.0], rtol=1e-12)
    np.testing.assert_allclose(rows[1], [1.2, 1.6, 0.0], rtol=1e-12)


@pytest.mark.parametrize("value", [1e39, 1e200, np.finfo(np.float64).max])
def test_default_fit_with_a_huge_row_equals_the_fit_on_the_clipped_row(value):
    # Before: the float32 Hessian of the default solver overflowed ("array must not
    # contain infs or NaNs") after the budget was charged.
    X, y = _data()
    X[3, 1], X[5, 0] = value, -value
    clipped = X.copy()
    for i in (3, 5):  # the declared row bound with the intercept column is 1 for the features
        row = clipped[i] / np.max(np.abs(clipped[i]))
        clipped[i] = row / np.linalg.norm(row)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        huge = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
        ref = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(clipped, y)
    assert np.all(np.isfinite(huge.coef_))
    np.testing.assert_allclose(huge.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


def test_problem_with_a_huge_row_keeps_its_rows_within_the_bound():
    X, y = _data(n=50)
    X[0, 0] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = ERMProblem(X, y, regularizer=("l2", 0.1))
    assert np.all(_row_norms(problem.X) <= 1.0)
    H = problem.hessian(np.zeros(problem.n_features), dtype=np.float32)
    assert np.all(np.isfinite(H))
    assert np.all(np.isfinite(problem.gradient(np.ones(problem.n_features))))


def test_float32_row_at_the_top_of_float32_range():
    X, y = _data()
    X = X.astype(np.float32)
    X[2, 0] = np.finfo(np.float32).max
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    assert np.all(np.isfinite(fit.coef_))


def test_dask_fit_with_a_huge_row():
    da = pytest.importorskip("dask.array")
    X, y = _data()
    X[3, 1] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
        fit = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(
            da.from_array(X, chunks=(150, 4)), da.from_array(y, chunks=150))
    assert np.all(np.isfinite(fit.coef_))
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
