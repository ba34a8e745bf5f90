"""Synthetic generators: shapes, determinism, bounded norms, label domains, ground truth."""

import math
import warnings

import numpy as np
import pytest

from dperm.datasets.synthetic import (
    make_classification_problem,
    make_glm,
    make_pl_problem,
    make_robust_regression,
    make_saddle_problem,
)
from dperm.problem.erm import ERMProblem
from dperm.problem.losses import Biweight, SigmoidSquared

GENERATORS = {
    "glm": lambda **kw: make_glm(200, 5, **kw),
    "glm_probit": lambda **kw: make_glm(200, 5, link="probit", **kw),
    "robust": lambda **kw: make_robust_regression(200, 5, **kw),
    "pl": lambda **kw: make_pl_problem(200, 6, rank=3, **kw),
    "saddle": lambda **kw: make_saddle_problem(40, 3, **kw),
    "classification": lambda **kw: make_classification_problem(200, 5, **kw),
}


def _norms(X):
    return np.maximum(np.linalg.norm(X, axis=1), np.sqrt(np.einsum("ij,ij->i", X, X)))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_shapes_determinism_and_norms(name):
    make = GENERATORS[name]
    b = make(random_state=3)
    X, y = b.data, b.target
    assert X.ndim == 2 and y.shape == (X.shape[0],) and X.dtype == np.float64
    assert len(b.feature_names) == X.shape[1]
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    # row norms: <= data_norm exactly, and on the sphere up to rounding
    assert np.all(_norms(X) <= b.data_norm)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), b.data_norm, rtol=1e-12)
    # same int seed / same generator state -> identical output; another seed differs
    again = make(random_state=3)
    np.testing.assert_array_equal(X, again.data)
    np.testing.assert_array_equal(y, again.target)
    X_g, y_g = make(random_state=np.random.default_rng(3), return_X_y=True)
    X_h, y_h = make(random_state=np.random.default_rng(3), return_X_y=True)
    np.testing.assert_array_equal(X_g, X_h)
    np.testing.assert_array_equal(y_g, y_h)
    assert not np.array_equal(X, make(random_state=4).data)
    # the problem layer never clips a generated row or label
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = b.get("loss", "squared")
        problem = ERMProblem(X, y, loss, data_norm=b.data_norm, label_bound=b.label_bound)
    np.testing.assert_array_equal(problem.X.toarray() if hasattr(problem.X, "toarray") else problem.X,
                                  X.toarray() if hasattr(X, "toarray") else X)  # no row was scaled
    np.testing.assert_array_equal(problem.y, y)


@pytest.mark.parametrize("data_norm", [0.3, 1.0, 7.5])
def test_data_norm_is_respected(data_norm):
    for X in (
        make_glm(300, 4, data_norm=data_norm, random_state=0).data,
        make_glm(300, 4, data_norm=data_norm, intercept=True, random_state=0).data,
        make_robust_regression(300, 4, data_norm=data_norm, random_state=0).data,
        make_pl_problem(300, 7, rank=2, data_norm=data_norm, random_state=0).data,
        make_saddle_problem(20, 4, data_norm=data_norm, random_state=0).data,
        make_classification_problem(300, 4, data_norm=data_norm, intercept=True, random_state=0).data,
    ):
        assert np.all(_norms(X) <= data_norm)
        assert np.all(np.linalg.norm(X, axis=1) >= data_norm * (1 - 1e-12))


def test_intercept_column():
    b = make_glm(50, 4, intercept=True, data_norm=2.0, random_state=1)
    assert b.feature_names[-1] == "intercept"
    np.testing.assert_allclose(b.data[:, -1], 2.0 / math.sqrt(2.0), rtol=1e-12)
    c = make_classification_problem(50, 4, intercept=True, random_state=1)
    assert c.feature_names[-1] == "intercept" and c.coef_true[-1] == 0.0
    assert np.all(c.data[:, -1] > 0)


@pytest.mark.parametrize("link", ["sigmoid", "probit"])
def test_glm_labels_and_truth(link):
    b = make_glm(500, 6, link=link, noise=0.3, scale=2.0, random_state=5)
    assert b.task == "regression" and b.label_bound == 1.0
    assert np.all((b.target >= 0.0) & (b.target <= 1.0))
    assert np.any(b.target == 0.0) or np.any(b.target == 1.0)  # noise 0.3 hits the clip
    assert np.linalg.norm(b.coef_true) <= 1.0
    np.testing.assert_allclose(b.coef_scaled, 2.0 * b.coef_true)
    # noise-free: labels are the link of the scaled margins, zero sigmoid-squared loss
    clean = make_glm(500, 6, link=link, noise=0.0, scale=2.0, random_state=5)
    np.testing.assert_array_equal(clean.data, b.data)  # X and w* do not depend on noise
    np.testing.assert_array_equal(clean.coef_true, b.coef_true)
    assert np.all((clean.target > 0.0) & (clean.target < 1.0))
    problem = ERMProblem(clean.data, clean.target, SigmoidSquared(link=link))
    assert problem.objective(clean.coef_scaled) < 1e-28
    np.testing.assert_allclose(problem.gradient(clean.coef_scaled), 0.0, atol=1e-14)
    assert problem.objective(np.zeros(6)) > 1e-4


@pytest.mark.parametrize("fraction, n", [(0.0, 100), (0.1, 100), (0.25, 37), (0.29, 100), (1.0, 13)])
def test_robust_outlier_fraction_exact(fraction, n):
    b = make_robust_regression(n, 3, outlier_fraction=fraction, label_bound=0.8, random_state=2)
    k = round(fraction * n)
    assert b.outliers.shape == (k,) and len(np.unique(b.outliers)) == k
    assert np.all(np.diff(b.outliers) > 0)
    assert b.outlier_mask.sum() == k and np.all(b.outlier_mask[b.outliers])
    assert np.all(np.abs(b.target) <= 0.8)
    margins = b.data @ b.coef_true
    assert np.all(np.abs(margins) <= 0.8 + 1e-12)
    inliers = ~b.outlier_mask
    np.testing.assert_array_equal(b.target[inliers], b.target_clean[inliers])
    # outlier_scale = 2 (default): every outlier sits at the opposite label bound
    np.testing.assert_array_equal(b.target[b.outliers], -np.where(margins[b.outliers] >= 0, 1.0, -1.0) * 0.8)
    assert np.all(np.abs(b.target[b.outliers] - margins[b.outliers]) >= 0.8)


def test_robust_truth_recovered_from_inliers():
    b = make_robust_regression(2000, 4, outlier_fraction=0.2, noise=0.05, random_state=0)
    inl = ~b.outlier_mask
    w, *_ = np.linalg.lstsq(b.data[inl], b.target[inl], rcond=None)
    assert np.linalg.norm(w - b.coef_true) < 0.1
    w_all, *_ = np.linalg.lstsq(b.data, b.target, rcond=None)
    assert np.linalg.norm(w_all - b.coef_true) > 3 * np.linalg.norm(w - b.coef_true)  # outliers hurt
    small = make_robust_regression(50, 3, outlier_fraction=0.5, outlier_scale=0.1, noise=0.0, random_state=1)
    m = small.data @ small.coef_true
    np.testing.assert_allclose(np.abs(small.target - m)[small.outliers], 0.1, rtol=1e-12)


@pytest.mark.parametrize("n, d, rank", [(200, 6, 3), (50, 5, 1), (30, 10, 9), (4, 8, 4)])
def test_pl_constant_is_exact(n, d, rank):
    b = make_pl_problem(n, d, rank=rank, noise=0.3, random_state=7)
    X, y = b.data, b.target
    assert b.rank == rank and np.linalg.matrix_rank(X) == rank
    eig = np.sort(np.linalg.eigvalsh(X.T @ X / n))[::-1]
    np.testing.assert_allclose(b.pl_constant, eig[rank - 1], rtol=1e-9)
    np.testing.assert_allclose(b.smoothness, eig[0], rtol=1e-9)
    np.testing.assert_allclose(b.singular_values**2 / n, eig[:rank], rtol=1e-9)
    assert abs(eig[rank]) < 1e-12 * eig[0]  # not strongly convex
    assert b.pl_constant > 1e-3

    problem = ERMProblem(X, y, "squared", label_bound=b.label_bound)
    F = problem.objective
    np.testing.assert_allclose(F(b.coef_min_norm), b.optimal_value, rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(problem.gradient(b.coef_min_norm)) < 1e-12
    np.testing.assert_allclose(b.coef_min_norm, np.linalg.pinv(X) @ y, atol=1e-8)

    rng = np.random.default_rng(0)
    for scale in (0.01, 1.0, 10.0):
        W = scale * rng.standard_normal((50, d))
        for w in W:
            gap = F(w) - b.optimal_value
            g = problem.gradient(w)
            assert gap >= -1e-13
            assert 0.5 * g @ g >= b.pl_constant * gap * (1 - 1e-9) - 1e-14
    # the constant is the best one: equality along the smallest nonzero singular direction
    _, _, Vt = np.linalg.svd(X)
    w = b.coef_min_norm + 0.7 * Vt[rank - 1]
    g = problem.gradient(w)
    np.testing.assert_allclose(0.5 * g @ g, b.pl_constant * (F(w) - b.optimal_value), rtol=1e-7)
    # moving along the null space changes nothing
    np.testing.assert_allclose(F(b.coef_min_norm + 3.0 * Vt[-1]), b.optimal_value, rtol=1e-10, atol=1e-14)


def test_pl_default_rank():
    assert make_pl_problem(10, 6, random_state=0).rank == 3
    assert make_pl_problem(2, 9, random_state=0).rank == 2
    assert make_pl_problem(10, 2, random_state=0).rank == 1


@pytest.mark.parametrize("n, d, c", [(8, 2, 1.5), (4, 2, 1.0), (40, 3, 1.5), (22, 5, 2.0)])
def test_saddle_is_strict(n, d, c):
    b = make_saddle_problem(n, d, c=c, random_state=11)
    assert isinstance(b.loss, Biweight) and b.loss.c == c
    assert np.all(np.abs(b.target) <= b.label_bound)
    problem = ERMProblem(b.data, b.target, b.loss, data_norm=b.data_norm, label_bound=b.label_bound)
    w0 = b.saddle_point
    np.testing.assert_array_equal(w0, np.zeros(d))
    assert np.linalg.norm(problem.gradient(w0)) < 1e-10
    H = problem.hessian(w0)
    eig = np.linalg.eigvalsh(H)
    np.testing.assert_allclose(eig, b.hessian_eigenvalues, atol=1e-12)
    assert eig[0] < -1e-3  # strictly negative curvature
    assert eig[-1] > 1e-3  # and positive curvature: a saddle, not a maximum
    if (n // 2) - (n // 4) >= d - 1:
        assert np.all(eig[1:] > 1e-3)  # nondegenerate
    np.testing.assert_allclose(problem.objective(w0), b.objective_value)
    # escaping: F decreases along the negative-curvature direction, increases along the top one
    v = b.escape_direction
    np.testing.assert_allclose(H @ v, eig[0] * v, atol=1e-12)
    for t in (1e-2, -1e-2):
        assert problem.objective(t * v) < problem.objective(w0)
    top = np.linalg.eigh(H)[1][:, -1]
    assert problem.objective(1e-2 * top) > problem.objective(w0)


def test_classification_labels_and_bayes_accuracy():
    b = make_classification_problem(20000, 6, separation=1.0, random_state=0)
    assert b.task == "binary"
    assert set(np.unique(b.target)) == {-1.0, 1.0}
    np.testing.assert_array_equal(b.target_names, [-1.0, 1.0])
    np.testing.assert_allclose(np.linalg.norm(b.coef_true), 1.0, rtol=1e-12)
    np.testing.assert_allclose(b.bayes_accuracy, 0.8413447460685429)
    accuracy = np.mean(np.sign(b.data @ b.coef_true) == b.target)
    assert abs(accuracy - b.bayes_accuracy) < 0.015
    assert abs(np.mean(b.target == 1.0) - 0.5) < 0.02
    well = make_classification_problem(2000, 3, separation=4.0, random_state=0)
    assert np.mean(np.sign(well.data @ well.coef_true) == well.target) > 0.99
    ERMProblem(b.data[:100], b.target[:100], "logistic")  # labels accepted by the logistic loss


BAD = [
    (make_glm, (0, 3), {}, "n_samples"),
    (make_glm, (10, 0), {}, "n_features"),
    (make_glm, (10, 3), {"link": "logit"}, "link"),
    (make_glm, (10, 3), {"noise": -0.1}, "noise"),
    (make_glm, (10, 3), {"scale": 0.0}, "scale"),
    (make_glm, (10, 3), {"data_norm": 0.0}, "data_norm"),
    (make_glm, (10, 3), {"data_norm": math.inf}, "data_norm"),
    (make_glm, (10, 1), {"intercept": True}, "intercept"),
    (make_glm, (10, 3), {"random_state": -1}, "random_state"),
    (make_robust_regression, (10, 3), {"outlier_fraction": 1.5}, "outlier_fraction"),
    (make_robust_regression, (10, 3), {"outlier_fraction": -0.1}, "outlier_fraction"),
    (make_robust_regression, (10, 3), {"outlier_fraction": math.nan}, "outlier_fraction"),
    (make_robust_regression, (10, 3), {"outlier_scale": 0.0}, "outlier_scale"),
    (make_robust_regression, (10, 3), {"label_bound": -1.0}, "label_bound"),
    (make_robust_regression, (0, 3), {}, "n_samples"),
    (make_pl_problem, (10, 1), {}, "n_features"),
    (make_pl_problem, (10, 4), {"rank": 4}, "rank"),
    (make_pl_problem, (10, 4), {"rank": 0}, "rank"),
    (make_pl_problem, (2, 6), {"rank": 3}, "rank"),
    (make_pl_problem, (0, 4), {}, "n_samples"),
    (make_saddle_problem, (7, 2), {}, "even"),
    (make_saddle_problem, (2, 2), {}, "n_samples"),
    (make_saddle_problem, (8, 1), {}, "n_features"),
    (make_saddle_problem, (8, 2), {"c": 3.0}, "sqrt"),
    (make_saddle_problem, (8, 2), {"c": -1.0}, "c"),
    (make_classification_problem, (0, 2), {}, "n_samples"),
    (make_classification_problem, (10, 0), {}, "n_features"),
    (make_classification_problem, (10, 2), {"separation": -1.0}, "separation"),
]


@pytest.mark.parametrize("make, args, kwargs, match", BAD, ids=[f"{m.__name__}-{t}" for m, _, _, t in BAD])
def test_bad_arguments_raise_value_error(make, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(*args, **kwargs)


def test_bad_types_raise_type_error():
    with pytest.raises(TypeError, match="n_samples"):
        make_glm(10.5, 3)
    with pytest.raises(TypeError, match="random_state"):
        make_glm(10, 3, random_state="seed")
    with pytest.raises(TypeError, match="rank"):
        make_pl_problem(10, 4, rank=1.5)
