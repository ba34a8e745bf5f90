"""sample_weight: per-example weights in [0, 1] on the problem, every algorithm, dperm.minimize
and the estimators (docs/estimators.md, "Sample weights").

Weights of ones reproduce the unweighted fit bit for bit; a zero weight removes a row's
contribution (the objective still divided by n); the event and the noise do not depend on
the weights (the sensitivity argument); weights outside [0, 1] are refused with a message
that quotes no value.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dperm
from dperm.algorithms import get
from dperm.algorithms.sgd import run_noisy_sgd
from dperm.privacy import PrivacyBudget
from dperm.problem import CustomLoss, ERMProblem

from test_catalogue import SPECS, data


def _weights(n, seed=3):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.0, 1.0, size=n)
    s[::7] = 0.0
    s[1::11] = 1.0
    return s


def _fit(name, sample_weight, matrix=None, seed=11):
    loss, reg, constraint, delta = SPECS[name]
    X, y = data(loss)
    problem = ERMProblem(X if matrix is None else matrix(X), y, loss, reg, constraint, sample_weight=sample_weight)
    return get(name).fit(problem, PrivacyBudget(1.0, delta), rng=seed)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_weights_of_ones_give_the_unweighted_fit_bit_for_bit(name):
    n = data(SPECS[name][0])[0].shape[0]
    plain, ones = _fit(name, None), _fit(name, np.ones(n))
    assert np.array_equal(plain.coef, ones.coef)
    assert repr(plain.event) == repr(ones.event) and plain.privacy_spent == ones.privacy_spent


# a net's argmax, and dp_gd_so stopped at w_0 by its vacuous tests at this n, may not move
MAY_NOT_MOVE = {"exponential_mechanism", "localization", "dp_gd_so"}


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_weights_leave_the_event_and_the_noise_unchanged(name):
    """The sensitivity is that of the unweighted problem (docs/estimators.md), so the
    event (every noise scale) and the budget spent are those of the unweighted fit, while
    the weights do change the model."""
    n = data(SPECS[name][0])[0].shape[0]
    plain, weighted = _fit(name, None), _fit(name, _weights(n))
    assert repr(plain.event) == repr(weighted.event)
    assert plain.privacy_spent == weighted.privacy_spent
    assert plain.hyperparameters == weighted.hyperparameters
    if name not in MAY_NOT_MOVE:
        assert not np.array_equal(plain.coef, weighted.coef)


@pytest.mark.parametrize("name", ["dp_sgd", "dp_svrg", "objective_perturbation", "noisy_gd"])
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_weighted_fits_agree_on_dense_and_csr(name):
    n = data(SPECS[name][0])[0].shape[0]
    s = _weights(n)
    np.testing.assert_allclose(_fit(name, s, sp.csr_matrix).coef, _fit(name, s).coef, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("intercept", [0.0, 0.5])
@pytest.mark.parametrize("kind", ["dense", "csr", "float32"])
def test_zero_weight_removes_the_row_from_the_gradient(kind, intercept):
    """sum over the kept rows of s_i grad f_i, divided by n: the weighted gradient times n
    equals the gradient of the problem without the zero-weight rows times its n."""
    X, y = data("logistic", n=60, seed=1)
    X = X * 1.3  # some rows above the bound: clipped per row, before weighting
    s = _weights(60)
    keep = s > 0
    convert = {"dense": lambda A: A, "csr": sp.csr_matrix, "float32": lambda A: A.astype(np.float32)}[kind]
    with warnings.catch_warnings():
        weighted = ERMProblem(convert(X), y, "logistic", ("l2", 0.1), intercept_scaling=intercept, sample_weight=s)
        kept = ERMProblem(convert(X[keep]), y[keep], "logistic", ("l2", 0.1), intercept_scaling=intercept,
                          sample_weight=s[keep])
    w = np.random.default_rng(0).normal(size=weighted.n_features)
    rtol = 1e-5 if kind == "float32" else 1e-12
    np.testing.assert_allclose(weighted.loss_gradient(w) * 60, kept.loss_gradient(w) * keep.sum(), rtol=rtol)
    np.testing.assert_allclose(weighted.loss_value(w) * 60, kept.loss_value(w) * keep.sum(), rtol=rtol)
    np.testing.assert_allclose(weighted.hessian(w) - 0.1 * np.eye(weighted.d),
                               (kept.hessian(w) - 0.1 * np.eye(weighted.d)) * keep.sum() / 60, rtol=rtol, atol=1e-12)
    v = np.arange(1.0, weighted.d + 1)
    np.testing.assert_allclose(weighted.hessian_vector(w, v) - 0.1 * v,
                               (kept.hessian_vector(w, v) - 0.1 * v) * keep.sum() / 60, rtol=rtol, atol=1e-12)
    # per-example gradients are the unweighted ones times s_i (a zero row for weight 0)
    plain = ERMProblem(convert(X), y, "logistic", ("l2", 0.1), intercept_scaling=intercept)
    np.testing.assert_allclose(weighted.per_example_gradients(w), plain.per_example_gradients(w) * s[:, None],
                               rtol=rtol, atol=1e-12)
    rows = np.array([0, 3, 7, 8])
    np.testing.assert_allclose(weighted.batch_loss_gradient(w, rows),
                               (plain.per_example_gradients(w, rows) * s[rows, None]).mean(axis=0), rtol=rtol)


def test_the_objective_is_divided_by_n_not_by_the_sum_of_the_weights():
    X, y = data("logistic", n=50)
    half = ERMProblem(X, y, "logistic", sample_weight=np.full(50, 0.5))
    plain = ERMProblem(X, y, "logistic")
    w = np.array([0.3, -0.2])
    assert half.loss_value(w) == 0.5 * plain.loss_value(w)
    np.testing.assert_array_equal(half.loss_gradient(w), 0.5 * plain.loss_gradient(w))


def test_compiled_sgd_kernel_applies_the_weights():
    """No noise, no regularizer: every weight 1/2 halves every gradient, which is a step of
    half the size (powers of two scale exactly)."""
    X, y = data("logistic", n=80)
    plain = ERMProblem(X, y, "logistic", constraint=("l2_ball", 5.0))
    half = ERMProblem(X, y, "logistic", constraint=("l2_ball", 5.0), sample_weight=np.full(80, 0.5))
    etas = np.full(40, 0.5)
    runs = [run_noisy_sgd(p, np.zeros(2), e, batch_size=8, sampling="without_replacement", sigma=0.0,
                          rng=np.random.default_rng(4), domain=p.constraint)[0]
            for p, e in ((half, etas), (plain, etas / 2))]
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-13, atol=1e-15)
    zero = ERMProblem(X, y, "logistic", constraint=("l2_ball", 5.0), sample_weight=np.zeros(80))
    w, _ = run_noisy_sgd(zero, np.zeros(2), etas, batch_size=8, sampling="poisson", sigma=0.0,
                         rng=np.random.default_rng(4), domain=zero.constraint)
    assert np.all(w == 0.0)


def test_custom_loss_weights_values_gradients_and_hessian_vectors():
    def value(w, X, y):
        return 0.5 * (X @ w - y) ** 2

    def gradient(w, X, y):
        return (X @ w - y)[:, None] * X

    def hessian_vector(w, v, X, y):
        return X.T @ (X @ v) / X.shape[0]

    loss = CustomLoss(value, gradient, lipschitz=10.0, smoothness=1.0, hessian_vector=hessian_vector, convex=True)
    X, y = data("huber", n=40)
    s = _weights(40)
    weighted = ERMProblem(X, y, loss, sample_weight=s)
    w, v = np.array([0.2, -0.4]), np.array([1.0, 2.0])
    assert weighted.loss_value(w) == pytest.approx(np.sum(s * value(w, X, y)) / 40, rel=1e-12)
    np.testing.assert_allclose(weighted.loss_gradient(w), (s[:, None] * gradient(w, X, y)).sum(axis=0) / 40,
                               rtol=1e-12)
    np.testing.assert_allclose(weighted.hessian_vector(w, v), X.T @ (s * (X @ v)) / 40, rtol=1e-6)


BAD = {
    "above one": lambda n: np.r_[np.ones(n - 1), 1.5],
    "negative": lambda n: np.r_[np.ones(n - 1), -0.25],
    "nan": lambda n: np.r_[np.ones(n - 1), np.nan],
    "inf": lambda n: np.r_[np.ones(n - 1), np.inf],
    "short": lambda n: np.ones(n - 1),
    "2-d": lambda n: np.ones((n, 2)),
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_bad_weights_are_a_one_line_error_quoting_no_value(bad):
    X, y = data("logistic", n=30)
    s = BAD[bad](30)
    entry_points = [
        lambda: ERMProblem(X, y, "logistic", sample_weight=s),
        lambda: dperm.minimize(X, y, epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), sample_weight=s),
        lambda: dperm.DPLogisticRegression(classes=[-1, 1]).fit(X, y, sample_weight=s),
        lambda: dperm.DPHuberRegressor().fit(X, y, sample_weight=s),
    ]
    if bad not in ("short", "2-d"):
        # every layer makes weights total: a weight outside [0, 1] is clamped into it, a
        # non-finite one is 0, and nothing is said (a refusal would tell whether such a
        # weight exists; docs/privacy.md, "Totality")
        clamped = np.clip(np.nan_to_num(s, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
        for cls, params in ((dperm.DPLogisticRegression, {"classes": [-1, 1]}), (dperm.DPHuberRegressor, {})):
            with warnings.catch_warnings():
                warnings.simplefilter("error", UserWarning)
                warnings.filterwarnings("ignore", category=dperm.NoiseDominatesWarning)
                got = cls(random_state=0, **params).fit(X, y, sample_weight=s)
            want = cls(random_state=0, **params).fit(X, y, sample_weight=clamped)
            np.testing.assert_array_equal(got.coef_, want.coef_)
        np.testing.assert_array_equal(ERMProblem(X, y, "logistic", sample_weight=s).sample_weight, clamped)
        kw = dict(epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            got = dperm.minimize(X, y, sample_weight=s, **kw)
        np.testing.assert_array_equal(got.coef, dperm.minimize(X, y, sample_weight=clamped, **kw).coef)
        return
    for call in entry_points:
        with pytest.raises(ValueError) as caught:
            call()
        message = str(caught.value)
        assert "\n" not in message
        assert "1.5" not in message and "-0.25" not in message  # the offending value is data


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_estimators_clamp_weights_above_one_into_the_privacy_range():
    X, y = data("logistic", n=30)
    got = dperm.DPLinearSVC(classes=[-1, 1], random_state=0).fit(X, y, sample_weight=np.full(30, 2.0))
    want = dperm.DPLinearSVC(classes=[-1, 1], random_state=0).fit(X, y, sample_weight=np.ones(30))
    np.testing.assert_array_equal(got.coef_, want.coef_)
    # the problem layer clamps too
    np.testing.assert_array_equal(ERMProblem(X, y, "logistic", sample_weight=np.full(30, 2.0)).sample_weight,
                                  np.ones(30))


def _blobs3(n=300):
    rng = np.random.default_rng(0)
    y = np.arange(n) % 3
    centres = np.array([[1.0, 0.0], [-0.5, 0.8], [-0.5, -0.8]])
    X = centres[y] + 0.3 * rng.normal(size=(n, 2))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True)), y


ESTIMATORS = [
    (dperm.DPLogisticRegression, dict(classes=[0, 1, 2]), "three"),
    (dperm.DPLinearSVC, dict(classes=[0, 1, 2]), "three"),
    (dperm.DPHuberRegressor, {}, "real"),
    (dperm.DPLinearRegression, {}, "real"),
    (dperm.DPRobustRegressor, {}, "real"),
    (dperm.DPGLMRegressor, {}, "unit"),
]


@pytest.mark.parametrize("cls, params, targets", ESTIMATORS, ids=[c.__name__ for c, _, _ in ESTIMATORS])
def test_estimators_take_sample_weight(cls, params, targets):
    X, labels = _blobs3()
    y = {"three": labels, "real": X[:, 0] - 0.5 * X[:, 1], "unit": (X[:, 0] + 1) / 2}[targets]
    s = _weights(len(y))

    def fit(sample_weight):
        return cls(epsilon=1.0, random_state=2, **params).fit(X, y, sample_weight=sample_weight)

    plain, ones, weighted = fit(None), fit(np.ones(len(y))), fit(s)
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    np.testing.assert_array_equal(plain.intercept_, ones.intercept_)
    assert repr(plain.event_) == repr(weighted.event_)  # the same mechanisms and noise
    assert plain.privacy_spent_ == weighted.privacy_spent_
    # the weights reach every fit (each one-vs-rest model moves)
    coef_plain, coef_weighted = np.atleast_2d(plain.coef_), np.atleast_2d(weighted.coef_)
    assert all(not np.array_equal(a, b) for a, b in zip(coef_plain, coef_weighted))


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_estimator_accepts_lists_pandas_and_a_scalar_weight():
    import pandas as pd

    X, y = data("logistic", n=40)
    est = dperm.DPLogisticRegression(classes=[-1, 1], random_state=0)
    reference = est.fit(X, y, sample_weight=np.full(40, 0.5)).coef_.copy()
    for s in ([0.5] * 40, pd.Series([0.5] * 40), 0.5):
        np.testing.assert_array_equal(est.fit(X, y, sample_weight=s).coef_, reference)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_all_zero_weights_fit_like_any_other():
    """Weights are private: all zeros (a fit on no data) release a noisy model instead of
    an error that would tell about them (tests/test_failure_paths.py checks the model)."""
    X, y = data("logistic", n=40)
    model = dperm.DPLogisticRegression(classes=[-1, 1], random_state=0).fit(X, y, sample_weight=np.zeros(40))
    assert np.all(np.isfinite(model.coef_))


DASK_ALGORITHMS = {  # a full-batch algorithm of each kind (Hessian, gradient, Hessian-vector), short runs
    "objective_perturbation": {},
    "noisy_gd": {"steps": 8},
    "output_perturbation": {"tolerance": 1e-10},
}


@pytest.mark.parametrize("name", sorted(DASK_ALGORITHMS))
@pytest.mark.parametrize("sparse_blocks", [False, True])
def test_weighted_fit_on_dask_equals_the_in_memory_one(name, sparse_blocks):
    da = pytest.importorskip("dask.array")
    X, y = data("logistic", n=120)
    X = X * 1.2  # some rows clipped, block by block
    s = _weights(120)
    dX = da.from_array(sp.csr_matrix(X) if sparse_blocks else X, chunks=(50, 2))
    common = dict(epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), algorithm=name, random_state=4,
                  **DASK_ALGORITHMS[name])
    with warnings.catch_warnings():
        memory = dperm.minimize(X, y, sample_weight=s, **common)
        for weights in (s, da.from_array(s, chunks=50)):
            on_dask = dperm.minimize(dX, da.from_array(y, chunks=50), sample_weight=weights, **common)
            np.testing.assert_allclose(on_dask.coef, memory.coef, rtol=1e-7, atol=1e-9)
            assert repr(on_dask.event) == repr(memory.event)


def test_dask_weights_are_checked_block_by_block():
    da = pytest.importorskip("dask.array")
    X, y = data("logistic", n=60)
    dX, dy = da.from_array(X, chunks=(20, 2)), da.from_array(y, chunks=20)
    kw = dict(epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), algorithm="noisy_gd", random_state=3)
    for bad in (np.r_[np.ones(59), 1.5], np.r_[np.ones(59), np.nan], np.r_[-0.25, np.ones(59)],
                np.r_[np.inf, np.ones(59)]):
        # mapped block by block as in memory (NaN, inf: 0; clamped into [0, 1]), nothing said
        clamped = np.clip(np.nan_to_num(bad, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            got = dperm.minimize(dX, dy, sample_weight=da.from_array(bad, chunks=20), **kw)
        want = dperm.minimize(dX, dy, sample_weight=da.from_array(clamped, chunks=20), **kw)
        np.testing.assert_allclose(got.coef, want.coef, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="sample_weight has 59 entries"):
        dperm.minimize(dX, dy, epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), sample_weight=np.ones(59))
    # the algorithms that fetch rows or score a net do so without the weights: refused
    # before any charge, and passed over by "auto"
    accountant = dperm.BudgetAccountant(10.0, 1e-3)
    for name in ("dp_sgd", "rrpsgd", "dp_svrg", "dp_svrg_pp", "exponential_mechanism", "localization"):
        with pytest.raises(NotImplementedError, match="sample_weight"):
            dperm.minimize(dX, dy, epsilon=1.0, delta=1e-5, regularizer=("l2", 0.1), algorithm=name,
                           sample_weight=np.ones(60), accountant=accountant)
    assert accountant.spent is None and not accountant.events
    from dperm.algorithms.auto import choose_algorithm
    from dperm.distributed import make_problem, supports

    weighted = make_problem(dX, dy, regularizer=("l2", 0.1), sample_weight=np.ones(60))
    assert supports(weighted, choose_algorithm(weighted, dperm.PrivacyBudget(1.0, 1e-5))[0])
    with pytest.raises(TypeError, match="Dask"):
        dperm.minimize(X, y, epsilon=1.0, delta=1e-5, sample_weight=da.from_array(np.ones(60), chunks=20))


def test_estimator_on_dask_takes_sample_weight():
    da = pytest.importorskip("dask.array")
    X, y = data("logistic", n=120)
    s = _weights(120)
    params = dict(classes=[-1, 1], random_state=1, solver="noisy_gd", solver_params={"steps": 8})
    memory = dperm.DPLogisticRegression(**params).fit(X, y, sample_weight=s)
    on_dask = dperm.DPLogisticRegression(**params).fit(da.from_array(X, chunks=(40, 2)), y, sample_weight=s)
    np.testing.assert_allclose(on_dask.coef_, memory.coef_, rtol=1e-7, atol=1e-9)


def test_replace_row_can_replace_a_weight_only():
    X, y = data("logistic", n=30)
    problem = ERMProblem(X, y, "logistic", sample_weight=_weights(30))
    neighbour = problem.replace_row(4, X[4], y[4], weight=0.0)
    assert neighbour.sample_weight[4] == 0.0
    assert np.array_equal(np.delete(neighbour.sample_weight, 4), np.delete(problem.sample_weight, 4))
    unweighted = ERMProblem(X, y, "logistic").replace_row(0, X[0], y[0], weight=0.5)
    assert unweighted.sample_weight[0] == 0.5 and np.all(unweighted.sample_weight[1:] == 1.0)
    assert ERMProblem(X, y, "logistic").astype(np.float32).sample_weight is None
    assert np.array_equal(problem.astype(np.float32).sample_weight, problem.sample_weight)


def test_private_search_passes_the_weights_to_its_runs():
    from dperm.model_selection import PrivateSearch

    X, y = data("logistic", n=200)

    def search(sample_weight, fraction=0.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return PrivateSearch(dperm.DPLogisticRegression(classes=[-1, 1]), epsilon=1.0, delta=1e-5, mean_runs=3,
                                 validation_fraction=fraction, random_state=0).fit(X, y, sample_weight=sample_weight)

    plain, ones, weighted = search(None, 0.25), search(np.ones(200), 0.25), search(_weights(200), 0.25)
    np.testing.assert_array_equal(plain.best_estimator_.coef_, ones.best_estimator_.coef_)
    assert plain.best_score_ == ones.best_score_
    assert repr(plain.event_) == repr(weighted.event_) and plain.privacy_spent_ == weighted.privacy_spent_
    assert not np.array_equal(plain.best_estimator_.coef_, weighted.best_estimator_.coef_)
    clamped = search(np.full(200, 2.0), 0.25)  # clamped into [0, 1]: the unweighted search
    np.testing.assert_array_equal(plain.best_estimator_.coef_, clamped.best_estimator_.coef_)


@pytest.mark.filterwarnings("default::UserWarning")  # the command line prints them (dperm: warning: ...)
def test_cli_fit_reads_the_weight_column_like_the_target(tmp_path, capsys):
    import json

    import pandas as pd

    from dperm.cli import main

    X, y = data("logistic", n=200)
    s = _weights(200)
    frame = pd.DataFrame(X, columns=["u", "v"]).assign(w=s, y=y.astype(int))
    frame.to_csv(tmp_path / "d.csv", index=False)
    common = ["fit", str(tmp_path / "d.csv"), "--target", "y", "--classes=-1,1", "--epsilon", "1",
              "--delta", "1e-5", "--seed", "3", "--data-norm", "1"]  # prepared rows: the estimator alone
    assert main([*common, "--sample-weight", "w", "--out", str(tmp_path / "m.json")]) == 0
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["feature_names"] == ["u", "v"] and model["sample_weight"] == "w"
    expected = dperm.DPLogisticRegression(epsilon=1, delta=1e-5, classes=[-1, 1], random_state=3)
    expected.fit(X, y.astype(int), sample_weight=s)
    np.testing.assert_allclose(model["coef"], expected.coef_.ravel(), rtol=1e-12)
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    capsys.readouterr()
    frame.assign(w=np.r_[s[:-1], 7.5]).to_csv(tmp_path / "bad.csv", index=False)
    # a weight above 1 is clamped to 1 (totality): the neighbour's fit, nothing said of it
    assert main(["fit", str(tmp_path / "bad.csv"), *common[2:], "--sample-weight", "w",
                 "--out", str(tmp_path / "x.json")]) == 0
    err = capsys.readouterr().err
    assert "7.5" not in err
    clamped = dperm.DPLogisticRegression(epsilon=1, delta=1e-5, classes=[-1, 1], random_state=3)
    clamped.fit(X, y.astype(int), sample_weight=np.r_[s[:-1], 1.0])
    np.testing.assert_allclose(json.loads((tmp_path / "x.json").read_text())["coef"], clamped.coef_.ravel(),
                               rtol=1e-12)
    assert main([*common, "--sample-weight", "nope", "--out", str(tmp_path / "x.json")]) == 2
    assert "no column 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("sparse", [False, True])
def test_compiled_svrg_kernel_weights_the_corrections(sparse):
    """One inner step, no noise, no regularizer, step 1, denominator 1: the move is the sum
    of the weighted corrections s_i (phi'(<x_i, w>) - phi'(<x_i, w~>)) x_i, with the
    snapshot slopes weighted as dp_svrg computes them (ERMProblem._slopes)."""
    from dperm.algorithms import _kernels

    X, y = data("logistic", n=100)
    s = _weights(100)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1), sample_weight=s)
    Xk = sp.csr_matrix(problem.X) if sparse else np.ascontiguousarray(problem.X)
    code, param = _kernels.loss_code(problem.loss)
    rows, counts = np.arange(100, dtype=np.int64).reshape(1, 100), np.array([100], dtype=np.int64)
    w_snap = np.array([0.3, -0.2])
    snap_slopes = np.ascontiguousarray(problem._slopes(problem.margins(w_snap)))
    w0 = w_snap + np.array([1e-3, -2e-3])
    w, w_sum, scales = w0.copy(), np.zeros(2), np.empty(1)
    args = (problem.y, _kernels.weights_of(problem), w, w_snap, np.zeros(2), snap_slopes, rows, counts,
            np.zeros((1, 2)), 1.0, np.array([1.0]), 1.0, code, param, 0.0, 0.0, 0, 0.0, w_sum,
            2.0 * problem.lipschitz, problem.constants.loss_smoothness, problem.data_norm, scales, 0.0)
    if sparse:
        _kernels.svrg_steps_csr(Xk.indptr, Xk.indices, Xk.data, *args)
    else:
        _kernels.svrg_steps_dense(Xk, *args)
    d1 = problem.loss.derivative(X @ w0, y) - problem.loss.derivative(X @ w_snap, y)
    np.testing.assert_allclose(w0 - w, X.T @ (s * d1), rtol=1e-9, atol=1e-15)
