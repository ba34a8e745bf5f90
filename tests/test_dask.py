"""Fits on Dask data (dperm.distributed) on a two-worker LocalCluster: the same
coefficients as the in-memory fit with one random_state, checks and clipping block by
block, nothing data-dependent in errors and warnings."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason="the Dask tests need the optional extra: pip install -e '.[dask]'")
distributed = pytest.importorskip("dask.distributed", reason="the Dask tests need the optional extra: pip install -e '.[dask]'")

import dperm  # noqa: E402
from dperm.algorithms.nonconvex_gd import LangevinStepWarning  # noqa: E402
from dperm.algorithms.svrg import SVRGNoiseWarning  # noqa: E402
from dperm.distributed import SUPPORTED_ALGORITHMS, UNSUPPORTED_ALGORITHMS, DaskERMProblem, make_problem  # noqa: E402
from dperm.problem import ERMProblem  # noqa: E402

# A problem each supported algorithm's assumptions accept, and short runs (each step
# is one scheduler round trip).
SPECS = {
    "output_perturbation": ("logistic", ("l2", 0.1), None, {"tolerance": 1e-10}),
    "objective_perturbation": ("logistic", ("l2", 0.1), None, {}),
    "gd_output_perturbation": ("logistic", ("l2", 0.1), None, {"steps": 8}),
    "noisy_gd": ("logistic", ("l2", 0.1), None, {"steps": 8}),
    "dp_gd": ("sigmoid_squared", ("l2", 0.01), None, {"steps": 8}),
    "dp_fw_l2": ("biweight", None, ("l2_ball", 1.0), {"steps": 8}),
    "dp_fw_l1": ("biweight", None, ("l1_ball", 1.0), {"steps": 8}),
    "dp_accmd": ("logistic", None, ("l1_ball", 2.0), {"steps": 8}),
    "dp_sgd": ("logistic", ("l2", 0.1), None, {"steps": 520, "batch_size": 30}),  # 2 rounds (512 + 8 steps)
    "dp_gld": ("sigmoid_squared", ("l2", 0.1), None, {"steps": 10}),
    "dp_sosp": ("biweight", ("l2", 0.01), None, {"max_steps": 10}),
    "dp_gd_so": ("biweight", None, ("l2_ball", 1.0), {"steps": 10}),
    "rrpsgd": ("sigmoid_squared", ("l2", 0.01), None, {"max_steps": 520, "batch_size": 20}),
    # 3 epochs of 200 steps: one snapshot map-reduce and one fetch of rows per epoch
    "dp_svrg": ("logistic", ("elastic_net", 0.1, 0.5), None, {"epochs": 3, "inner_steps": 200, "batch_size": 20}),
    # epochs of 2 x 300 and 4 x 300 steps: the second spans two rounds (512 + 88 steps)
    "dp_svrg_pp": ("logistic", ("l2", 0.01), None, {"epochs": 2, "inner_steps": 150, "batch_size": 20}),
    # pure DP; a coarse net (about 4e4 points at d = 3) keeps the scoring pass short
    "exponential_mechanism": ("logistic", None, ("l2_ball", 1.0), {"delta": 0.0, "alpha": 0.05}),
    "localization": ("logistic", ("l2", 0.1), None, {"delta": 0.0, "alpha": 0.05}),
}
BLOCK = 150


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def data(loss, n=600, d=3, seed=0, dtype=np.float64):
    """Rows of norm up to 1.3 (some are clipped to data_norm = 1) and labels for the loss."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) / rng.uniform(0.2, 1.3, size=(n, 1))
    if loss == "logistic":
        y = np.where(X @ np.array([2.0, -1.0, 0.5])[:d] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    elif loss == "sigmoid_squared":
        y = (X[:, 0] > 0).astype(float)
    else:
        y = np.clip(X @ np.array([0.5, -0.3, 0.2])[:d] + 0.05 * rng.normal(size=n), -1, 1)
    return X.astype(dtype), y


def on_dask(client, X, y):
    Xd = da.from_array(X, chunks=(BLOCK, -1), asarray=not sp.issparse(X))
    yd = da.from_array(y, chunks=BLOCK)
    return client.persist([Xd, yd])  # in the workers' memory, as a user of a cluster would


def fit_both(client, name, X=None, y=None, **extra):
    loss, reg, constraint, hyper = SPECS[name]
    if X is None:
        X, y = data(loss)
    kwargs = dict(loss=loss, regularizer=reg, constraint=constraint, algorithm=name, epsilon=1.0, delta=1e-5,
                  random_state=7)
    kwargs.update(hyper, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangevinStepWarning)  # dp_gld at 8 steps: short on purpose
        warnings.simplefilter("ignore", SVRGNoiseWarning)  # dp_svrg at n = 600: the run, not its accuracy
        local = dperm.minimize(X, y, **kwargs)
        Xd, yd = on_dask(client, X, y)
        remote = dperm.minimize(Xd, yd, **kwargs)
    return local, remote


@pytest.mark.parametrize("name", SUPPORTED_ALGORITHMS)
def test_same_coefficients_as_in_memory(client, name):
    local, remote = fit_both(client, name)
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-9)
    assert remote.privacy_spent == local.privacy_spent and remote.event == local.event
    assert remote.hyperparameters == local.hyperparameters


def test_float32_and_sparse_blocks_agree_with_in_memory(client):
    X, y = data("logistic", dtype=np.float32)
    # Both solves stop at ||grad J|| <= tolerance: they agree to ~tolerance / mu.
    local, remote = fit_both(client, "objective_perturbation", X, y, tolerance=1e-12)
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-9)
    X, y = data("logistic")
    X[np.abs(X) < 0.3] = 0.0
    local, remote = fit_both(client, "noisy_gd", sp.csr_matrix(X), y)
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sampling,sparse", [("poisson", True), ("without_replacement", False)])
def test_dp_sgd_batches_are_the_in_memory_batches(client, sampling, sparse):
    """The client draws each round's batches from the fit's generator exactly as the
    in-memory run does, then fetches their rows from the blocks: same coefficients,
    bit for bit (dense and CSR blocks), and the same accounting."""
    X, y = data("logistic")
    X[np.abs(X) < 0.2] = 0.0
    local, remote = fit_both(client, "dp_sgd", sp.csr_matrix(X) if sparse else X, y, sampling=sampling)
    np.testing.assert_array_equal(remote.coef, local.coef)
    assert remote.privacy_spent == local.privacy_spent and remote.event == local.event


@pytest.mark.parametrize("name", ["dp_svrg", "dp_svrg_pp"])
def test_dp_svrg_on_sparse_blocks_fetches_the_in_memory_batches(client, name):
    """CSR blocks, rows above the bound: the inner batches are the in-memory run's, their
    rows come with their slopes at the snapshot, and the snapshot gradient is one
    map-reduce (the same sum in another order)."""
    X, y = data("logistic")
    X[np.abs(X) < 0.2] = 0.0
    local, remote = fit_both(client, name, sp.csr_matrix(X), y, sampling="without_replacement")
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-12)
    assert remote.event == local.event


@pytest.mark.parametrize("solver,params", [("dp_svrg", {"epochs": 2, "inner_steps": 100}),
                                           ("exponential_mechanism", {"alpha": 0.1})])
@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_estimator_with_intercept_column_on_dask(client, solver, params):
    """The virtual intercept column reaches the rows dp_svrg fetches and the rows that
    score the exponential mechanism's net."""
    X, y = data("logistic", d=2)
    kwargs = dict(solver=solver, solver_params=params, data_norm=1.0, epsilon=1.0, random_state=3)
    if solver == "exponential_mechanism":
        kwargs.update(delta=0.0, alpha=1.0)
    estimator = dperm.DPLogisticRegression(**kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SVRGNoiseWarning)
        local = estimator.fit(X, y)
        coef, intercept = local.coef_.copy(), local.intercept_
        remote = estimator.fit(*on_dask(client, X, y))
    assert remote.solver_ == solver
    np.testing.assert_allclose(remote.coef_, coef, rtol=0, atol=1e-12)
    np.testing.assert_allclose(remote.intercept_, intercept, rtol=0, atol=1e-12)


def test_exponential_mechanism_scores_without_a_compiled_loss(client, monkeypatch):
    """A margin loss without a compiled kernel is scored by products ``X W^T`` in memory
    and block by block alike: the same point of the net is drawn."""
    from dperm.algorithms import _kernels

    def no_kernel(loss):
        raise ValueError("no compiled kernel")

    monkeypatch.setattr(_kernels, "loss_code", no_kernel)
    local, remote = fit_both(client, "exponential_mechanism")
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-12)
    problem = make_problem(*on_dask(client, *data("logistic")), constraint=("l2_ball", 1.0), data_norm=2.0)
    points = np.random.default_rng(0).normal(size=(7, 3))
    expected = ERMProblem(*data("logistic"), constraint=("l2_ball", 1.0), data_norm=2.0)
    np.testing.assert_allclose(problem.mean_losses_at_points(points),
                               [expected.loss_value(p) for p in points], rtol=1e-13)


@pytest.mark.parametrize("intercept", [0.0, 0.5])
def test_full_batch_quantities_match_in_memory(client, intercept):
    """Rows above the bound (some are) scaled virtually, the intercept column virtual:
    every quantity equals the in-memory problem's to rounding."""
    X, y = data("logistic")
    norm = float(np.hypot(1.0, intercept))  # as the estimators declare it
    with warnings.catch_warnings():
        local = ERMProblem(X, y, "logistic", ("l2", 0.1), data_norm=norm, intercept_scaling=intercept)
        remote = make_problem(*on_dask(client, X, y), "logistic", ("l2", 0.1), data_norm=norm,
                              intercept_scaling=intercept)
    assert isinstance(remote, DaskERMProblem)
    d = 4 if intercept else 3
    assert (remote.n_samples, remote.n_features) == (600, d)
    assert remote.constants == local.constants
    w, v = np.array([0.3, -0.2, 0.1, 0.4])[:d], np.array([1.0, 2.0, -1.0, 0.5])[:d]
    np.testing.assert_allclose(remote.gradient(w), local.gradient(w), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(remote.objective(w), local.objective(w), rtol=1e-13)
    value, grad = remote.value_and_gradient(w)
    np.testing.assert_allclose((value, *grad), (local.objective(w), *local.gradient(w)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(remote.hessian_vector(w, v), local.hessian_vector(w, v), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(remote.hessian(w), local.hessian(w), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(remote.margins(w).compute(), local.margins(w), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(remote.X.compute(), local.X, rtol=1e-15, atol=0)
    low = remote.astype(np.float32)
    np.testing.assert_allclose(low.gradient(w), local.astype(np.float32).gradient(w), rtol=1e-5, atol=1e-7)


def test_rows_above_data_norm_are_clipped_block_by_block_silently(client):
    X, y = data("logistic")
    over = np.linalg.norm(X, axis=1) > 1.0
    assert 0 < over.sum() < len(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would tell whether one row is above the bound
        problem = make_problem(*on_dask(client, X, y), data_norm=1.0)
    # every row the gradient sees is within the bound: the gradient at w = e_1 with a
    # linear loss part would exceed it otherwise; compare with the clipped in-memory rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        local = ERMProblem(X, y, data_norm=1.0)
    w = np.array([1.0, 1.0, 1.0])
    np.testing.assert_allclose(problem.gradient(w), local.gradient(w), rtol=1e-13)
    assert not np.allclose(problem.gradient(w), ERMProblem(X, y, data_norm=2.0).gradient(w))


def test_labels_above_label_bound_are_clipped_silently(client):
    X, y = data("squared")
    y = y.copy()
    y[5] = 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problem = make_problem(*on_dask(client, X, y), "squared", constraint=("l2_ball", 1.0), data_norm=2.0)
    local = ERMProblem(X, np.clip(y, -1, 1), "squared", constraint=("l2_ball", 1.0), data_norm=2.0)
    w = np.array([0.2, 0.1, -0.3])
    np.testing.assert_allclose(problem.gradient(w), local.gradient(w), rtol=1e-13)


def test_bad_input_is_refused_without_naming_data(client):
    X, y = data("logistic")
    bad = y.copy()
    bad[400] = 7.0  # one bad label in the third block
    with pytest.raises(ValueError, match=r"needs labels in \{-1, \+1\}") as info:
        make_problem(*on_dask(client, X, bad))
    assert "7" not in str(info.value)
    # totality: a NaN or infinite feature is 0 and a real label that is not finite is 0,
    # block by block (docs/privacy.md); a binary label that is NaN is still refused
    for value in (np.nan, np.inf, -np.inf):
        Xn = X.copy()
        Xn[599, 1] = value  # in the last block only
        want = X.copy()
        want[599, 1] = 0.0
        with warnings.catch_warnings():
            p = make_problem(*on_dask(client, Xn, y))
            memory = ERMProblem(want, y)
        np.testing.assert_allclose(p.gradient(np.ones(3)), memory.gradient(np.ones(3)), rtol=1e-12)
        yn = y.copy()
        yn[3] = value
        with warnings.catch_warnings():
            p = make_problem(*on_dask(client, X, yn), loss="squared")
        np.testing.assert_array_equal(np.asarray(p.y.compute()), np.where(np.arange(len(y)) == 3, 0.0, y))
    yn = y.copy()
    yn[3] = np.nan
    with pytest.raises(ValueError, match=r"needs labels in \{-1, \+1\}"):
        make_problem(*on_dask(client, X, yn))
    with pytest.raises(ValueError, match="y has 599 entries but X has 600 rows"):
        make_problem(da.from_array(X, chunks=(BLOCK, -1)), y[:-1])
    with pytest.raises(TypeError, match="y is a Dask collection but X is not"):
        make_problem(X, da.from_array(y, chunks=BLOCK))


def test_every_registered_algorithm_declares_its_dask_status():
    names = set(dperm.algorithms.names())
    assert names == set(SUPPORTED_ALGORITHMS) | set(UNSUPPORTED_ALGORITHMS)
    assert not set(SUPPORTED_ALGORITHMS) & set(UNSUPPORTED_ALGORITHMS)


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_algorithm_without_a_dask_path_is_refused_and_auto_passes_it_over(client, monkeypatch):
    """An algorithm without a Dask path (none today: one is taken out of the table) is
    refused with its reason, and algorithm="auto" takes the next rule instead."""
    import dperm.distributed as dist

    from dperm.algorithms.auto import choose_algorithm
    from dperm.privacy.budget import PrivacyBudget

    X, y = data("logistic")
    budget = PrivacyBudget(1.0, 1e-5)
    spec = dict(loss="logistic", regularizer=("elastic_net", 1.0, 0.5), data_norm=2.0)
    Xd, yd = on_dask(client, X, y)
    local, remote = make_problem(X, y, **spec), make_problem(Xd, yd, **spec)
    assert choose_algorithm(local, budget)[0] == choose_algorithm(remote, budget)[0] == "dp_svrg"
    monkeypatch.setattr(dist, "SUPPORTED_ALGORITHMS", tuple(a for a in SUPPORTED_ALGORITHMS if a != "dp_svrg"))
    monkeypatch.setitem(dist.UNSUPPORTED_ALGORITHMS, "dp_svrg", "a test's reason")
    with pytest.raises(NotImplementedError, match=r"dp_svrg has no Dask path \(a test's reason\)"):
        dperm.minimize(Xd, yd, algorithm="dp_svrg", epsilon=1.0, delta=1e-5, **spec)
    with pytest.raises(NotImplementedError, match="dp_svrg has no Dask path"):
        dperm.DPLogisticRegression(solver="dp_svrg", data_norm=2.0).fit(Xd, yd)
    chosen = choose_algorithm(remote, budget)[0]
    assert chosen != "dp_svrg" and chosen in dist.SUPPORTED_ALGORITHMS
    assert choose_algorithm(local, budget)[0] == "dp_svrg"  # in memory, unchanged


def test_column_chunks_are_merged_into_whole_rows(client):
    X, y = data("logistic", d=3)
    Xd = da.from_array(X, chunks=(BLOCK, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        problem = make_problem(Xd, y)
    assert problem.X.chunks[1] == (3,)
    assert problem.y.chunks[0] == problem.X.chunks[0]


def test_dask_dataframe_with_a_target_column_or_series(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = data("logistic")
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    ddf = dd.from_pandas(frame, npartitions=4)
    kwargs = dict(regularizer=("l2", 0.1), algorithm="objective_perturbation", epsilon=1.0, delta=1e-5,
                  data_norm=2.0, random_state=3)
    local = dperm.minimize(X, y, **kwargs)
    by_name = dperm.minimize(ddf, "label", **kwargs)
    by_series = dperm.minimize(ddf[["a", "b", "c"]], ddf["label"], **kwargs)
    np.testing.assert_allclose(by_name.coef, local.coef, rtol=0, atol=1e-9)
    np.testing.assert_allclose(by_series.coef, local.coef, rtol=0, atol=1e-9)
    with pytest.raises(TypeError, match=r"columns \['s'\] are not"):
        make_problem(ddf.assign(s="x"), "label")
    with pytest.raises(ValueError, match="not a column"):
        make_problem(ddf, "nope")


def test_parquet_dataset_with_its_label_column(client, tmp_path):
    """A Parquet dataset read with dd.read_parquet, the target named by column: Dask's
    optimizer merges the partitions of the label column read alone (fewer, larger
    partitions than the table's), which made to_dask_array(lengths=True) fail."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    X, y = data("logistic")
    frame = pd.DataFrame(X.astype(np.float32), columns=["a", "b", "c"]).assign(label=y)
    for k, begin in enumerate(range(0, len(y), BLOCK)):
        frame.iloc[begin:begin + BLOCK].to_parquet(tmp_path / f"part.{k}.parquet")
    kwargs = dict(regularizer=("l2", 0.1), algorithm="gd_output_perturbation", steps=10, epsilon=1.0,
                  delta=1e-5, data_norm=2.0, random_state=5)
    remote = dperm.minimize(dd.read_parquet(str(tmp_path)), "label", **kwargs)
    local = dperm.minimize(X.astype(np.float32), y, **kwargs)
    # float32 products summed in another order: agreement to float32 rounding
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-6)


def test_zarr_store_read_block_by_block(client, tmp_path):
    zarr = pytest.importorskip("zarr")
    X, y = data("logistic")
    zX = zarr.open_array(str(tmp_path / "X.zarr"), mode="w", shape=X.shape, chunks=(BLOCK, 3), dtype="f8")
    zX[:] = X
    zy = zarr.open_array(str(tmp_path / "y.zarr"), mode="w", shape=y.shape, chunks=(BLOCK,), dtype="f8")
    zy[:] = y
    kwargs = dict(regularizer=("l2", 0.1), algorithm="gd_output_perturbation", steps=10, epsilon=1.0,
                  delta=1e-5, data_norm=2.0, random_state=5)
    remote = dperm.minimize(da.from_zarr(str(tmp_path / "X.zarr")), da.from_zarr(str(tmp_path / "y.zarr")), **kwargs)
    local = dperm.minimize(X, y, **kwargs)
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_process_workers_give_the_same_coefficients():
    """Kernels and losses travel to worker processes by pickling."""
    X, y = data("logistic")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        local, remote = fit_both(c, "noisy_gd", X, y)
    np.testing.assert_allclose(remote.coef, local.coef, rtol=0, atol=1e-12)


# DPLinearRegression's default is objective perturbation, solved to a tolerance: a tight one
# makes the Dask and in-memory minimizers agree to 1e-9 despite their summation orders
@pytest.mark.parametrize("estimator", [dperm.DPLogisticRegression(random_state=1, multi_class="ovr"),
                                       dperm.DPLinearRegression(random_state=1, solver_params={"tolerance": 1e-12})],
                         ids=lambda e: type(e).__name__)
@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_estimators_fit_dask_input_like_numpy(client, estimator):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3)) / 2
    if isinstance(estimator, dperm.DPLogisticRegression):
        y = np.array(["a", "b", "c"])[rng.integers(0, 3, 600)]  # one-vs-rest, string labels
    else:
        y = np.clip(X @ np.array([1.0, -0.5, 0.2]), -1, 1)
    with warnings.catch_warnings():
        local = estimator.fit(X, y)
        coef, intercept, solver = local.coef_.copy(), local.intercept_, local.solver_
        Xd = client.persist(da.from_array(X, chunks=(BLOCK, -1)))
        remote = estimator.fit(Xd, da.from_array(y, chunks=BLOCK))
    assert remote.solver_ == solver and remote.n_features_in_ == 3
    np.testing.assert_allclose(remote.coef_, coef, rtol=0, atol=1e-9)
    np.testing.assert_allclose(remote.intercept_, intercept, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(remote.predict(Xd), remote.predict(X))
    with pytest.raises(ValueError, match="X has 2 features"):
        remote.predict(Xd[:, :2])


def test_in_memory_fits_do_not_import_dask():
    """The core install stays lean: only Dask input imports Dask."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, dperm; dperm.minimize(np.eye(3)[:, :2] * 0.5, np.array([1., -1, 1]), "
            "regularizer=('l2', 1.0), algorithm='output_perturbation', epsilon=1.0); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'zarr')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
