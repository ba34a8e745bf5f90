"""The Dask problem's hand-written pass graph: the combined rows are Dask's own reduction
of the same partial rows, bit for bit (one level and a tree of them); the row sample is
``X[::stride]`` whatever the chunking; the kernels that read a block a slice at a time give
the flags and sums of the whole block."""

import warnings
from dataclasses import replace

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from dperm.distributed import _chunks  # noqa: E402
from dperm.distributed.problem import DaskERMProblem  # noqa: E402
from dperm.problem.erm import ERMProblem  # noqa: E402


def _data(n, d, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= rng.uniform(0.2, 1.3, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)  # some rows above 1
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    return X.astype(dtype), y


def _problem(X, y, chunks, weights=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DaskERMProblem(da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=chunks),
                              "logistic", ("l2", 1e-3), data_norm=1.0, intercept_scaling=0.5,
                              sample_weight=None if weights is None else da.from_array(weights, chunks=chunks))


@pytest.mark.parametrize("blocks", [1, 5, 150])  # 150 blocks: two levels of combining tasks
def test_the_pass_graph_sums_as_dasks_reduction(blocks):
    X, y = _data(3000, 4)
    problem = _problem(X, y, chunks=-(-3000 // blocks))
    w = np.linspace(-1.0, 1.0, problem.n_features)
    layout = problem._layout
    # the previous construction: blockwise partial rows, Dask's sum over them
    partials = da.blockwise(_chunks.value_gradient_block, "ij", problem._features, "ij", problem.y, "i",
                            adjust_chunks={"i": 1, "j": problem.n_features + 1}, dtype=np.float64,
                            meta=np.empty((0, 0)), concatenate=True, w=w, layout=layout, value=True)
    split = max(2, min(partials.numblocks[0], 64))
    expected = partials.sum(axis=0, split_every=split).compute(scheduler="sync")
    got = problem._reduce(_chunks.value_gradient_block, problem.n_features + 1, w=w, layout=layout, value=True)
    assert got.tobytes() == np.asarray(expected, dtype=np.float64).tobytes()
    flags = problem._reduce(_chunks.check_block, _chunks.N_FLAGS, reduce="max", bound=problem.feature_norm,
                            binary=True, label_bound=1.0)
    assert flags[_chunks.FLAG_SCALED] == 1.0 and flags.sum() == 1.0


@pytest.mark.parametrize("chunks", [1000, 333, 2999])
@pytest.mark.parametrize("stride", [2, 7])
def test_the_row_sample_is_the_strided_rows_whatever_the_chunking(chunks, stride):
    X, y = _data(3000, 3, seed=1, dtype=np.float32)
    weights = np.random.default_rng(2).uniform(size=3000)
    problem = _problem(X, y, chunks, weights)
    sample = problem.row_sample(stride)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0, intercept_scaling=0.5,
                            sample_weight=weights).row_sample(stride)
    assert sample.n_samples == memory.n_samples == len(range(0, 3000, stride))
    np.testing.assert_array_equal(sample.y, memory.y)
    np.testing.assert_array_equal(sample.sample_weight, memory.sample_weight)
    np.testing.assert_array_equal(sample._features, memory._features)
    np.testing.assert_array_equal(sample._row_scale, memory._row_scale)
    assert sample._features.dtype == np.float32


def test_check_block_reads_slices_and_flags_what_the_last_slice_holds():
    d = 5
    rows = 3 * (_chunks._CHECK_ELEMENTS // d) + 17  # several slices and a short last one
    X, y = _data(rows, d, seed=3)
    X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)  # every row within 1/2
    kwargs = dict(bound=1.0, binary=True, label_bound=1.0)
    assert not _chunks.check_block(X, y, **kwargs).any()
    over = X.copy()
    over[-1] *= 4.0  # norm 2 > 1, in the last slice only
    assert _chunks.check_block(over, y, **kwargs)[0, _chunks.FLAG_SCALED] == 1.0
    for value, flag in ((np.nan, _chunks.FLAG_NAN_X), (np.inf, _chunks.FLAG_INF_X)):
        bad = X.copy()
        bad[-1, -1] = value
        flags = _chunks.check_block(bad, y, **kwargs)[0]
        assert flags[flag] == 1.0 and flags[_chunks.FLAG_SCALED] == 0.0


def test_sliced_kernels_give_the_whole_block_sums():
    """The float32 gradient kernel reads 1 MB slices (sums in float64): within float32
    rounding of the float64 gradient; the certified kernel's buffered casts change nothing."""
    X, y = _data(40_000, 12, seed=4, dtype=np.float32)
    X /= np.float32(1.5)
    layout = _chunks.Layout(loss=__import__("dperm.problem.losses", fromlist=["make_loss"]).make_loss("logistic"),
                            feature_bound=1.0, clip=True, intercept=0.5, label_bound=None,
                            compute_dtype=np.dtype(np.float32))
    w = np.linspace(-2.0, 2.0, 13)
    got = _chunks.value_gradient_block(X, y, w=w, layout=layout, value=True)[0]
    exact = _chunks.value_gradient_block(X.astype(np.float64), y, w=w,
                                         layout=replace(layout, compute_dtype=np.dtype(np.float64)), value=True)[0]
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-6 * len(y))
    layout64 = replace(layout, compute_dtype=np.dtype(np.float64))
    certified = _chunks.certified_gradient_block(X, y, w=w, layout=layout64)[0]
    # the unbuffered reference: each sub-block cast by itself
    from dperm.problem.erm import certificate_rows

    step, reference = certificate_rows(len(y), X.shape[1]), np.zeros(13)
    for start in range(0, len(y), step):
        b = _chunks._Block(X[start:start + step], y[start:start + step], layout64)
        reference += b.rmatvec(layout.loss.derivative(b.matvec(w), b.y))
    assert certified.tobytes() == reference.tobytes()
