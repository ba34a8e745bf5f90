"""Dask benchmark: a private fit read block by block from a Zarr store or a Parquet
dataset on a LocalCluster, with the peak memory of every process, and the Dask-versus-NumPy
gradient pass.

Run by hand (never in CI); needs the extra: ``pip install -e '.[dask]'`` (and pyarrow for
Parquet).

    python benchmarks/bench_dask.py --n 2e6 4e6 8e6          # fit from Zarr at each n (scaling)
    python benchmarks/bench_dask.py --n 2e7                  # the 8 GB float32 case (d = 100)
    python benchmarks/bench_dask.py --n 4e6 --compare-numpy  # + NumPy vs Dask gradient pass
    python benchmarks/bench_dask.py --n 4e6 --formats zarr parquet --compare-numpy --cleanup
    python benchmarks/bench_dask.py --estimator --n 1e6 4e6 --dims 20 100 --memory-limit 1GiB --in-memory

``--estimator`` (issue 26): the default ``DPLogisticRegression(epsilon=1, classes=[-1, 1],
random_state=0)`` (objective perturbation, its certified tolerance, auto alpha, intercept)
at every n, d (``--dims``) and dtype (``--dtypes``: float32 and float64 Zarr stores of the
same values), from Zarr (``da.from_zarr``) and on blocks persisted in the workers'
memory (``--modes``; skipped where they would take more than 40% of a worker's memory
limit), each on a fresh cluster warmed by one small fit, and with ``--in-memory`` the
same fit on the NumPy array read from the store (one BLAS thread; the Dask fits' client
also runs with one BLAS thread, as the workers do). Reports seconds of the fit (wall, the
client's process time, and the workers' process time summed), passes over the data (client-side count: map-reduces other than the checking
pass on Dask; calls of the ERMProblem methods that read X in memory), rows per second
per pass, held-out accuracy (20 000 rows of the same generator), the certified
tolerance, and each worker's peak RSS.

Setting. X is n x d float32 (default d = 100), rows of L2 norm uniform in (0, 1] in
random directions, labels ``sign(<w*, x> + noise)``; written once, block by block (so
writing needs memory for one block only), under ``--store`` (default
/tmp/dperm_bench_dask) and reused by later runs with the same n, d and block size
(``--cleanup`` deletes what the run wrote). ``zarr``: uncompressed Zarr arrays X and y,
one chunk per block, read with ``da.from_zarr``. ``parquet``: one uncompressed, plain-encoded Parquet
file per block (columns ``x0 .. x{d-1}`` float32 and ``y``), read with
``dd.read_parquet`` and passed as a Dask DataFrame with ``y="y"`` (the same values as
the Zarr store). The fit is ``gd_output_perturbation`` (logistic loss,
``("l2", 1e-3)``, epsilon = 1, delta = 1e-8, ``--steps`` gradient steps, default 5):
building the problem makes one checking pass (for Parquet, Dask also counts the rows of
every partition, once), then one map-reduce over the blocks per step. The cluster is a
``LocalCluster`` of ``--workers`` processes with one thread each (default 2: the
machine's cores) and a ``--memory-limit`` per worker, a fresh one per format.

Measures. Seconds of the checking pass, per gradient pass (median over the steps) and of
the whole fit; rows per second of a gradient pass; peak RSS (VmHWM) of every
worker process and of the client, and the size of X. ``--compare-numpy``: the same
gradient at the same point on the same data in memory (``ERMProblem.gradient``, X read
from the Zarr store, or the Parquet files, into one NumPy array; one BLAS thread, like
each worker), against Dask over each format and Dask over blocks persisted in the
workers' memory; medians of ``--repeats`` passes each.

Timings on a shared machine are noisy: compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

import numpy as np


def _peak_rss_mb() -> float:
    """This process's peak RSS (Linux VmHWM). Not ``ru_maxrss``: a worker process
    inherits its parent's ``ru_maxrss`` across fork and exec; VmHWM starts afresh."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _blocks(n: int, d: int, block: int, seed: int = 0):
    """(start, X block float32, y block float64) for every block of the dataset: the same
    values for every format."""
    w_star = np.random.default_rng(seed).normal(size=d)
    w_star *= 4.0 / np.linalg.norm(w_star)
    for b, start in enumerate(range(0, n, block)):
        rng = np.random.default_rng([seed, b])
        m = min(block, n - start)
        X = rng.normal(size=(m, d))
        X *= (rng.uniform(0.0, 1.0, size=m) / np.linalg.norm(X, axis=1))[:, None]
        y = np.where(X @ w_star + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
        yield start, X.astype(np.float32) * np.float32(0.999), y  # rows within norm 1 after rounding


def write_store(path: str, n: int, d: int, block: int, seed: int = 0, dtype: str = "float32") -> tuple[str, str]:
    """X (float32, or float64 with ``dtype``: the same values) and y (float64) as
    uncompressed Zarr arrays, written block by block."""
    import zarr

    tag = "" if dtype == "float32" else "_f8"
    x_path, y_path = os.path.join(path, f"X_{n}_{d}_{block}{tag}.zarr"), os.path.join(path, f"y_{n}_{block}.zarr")
    done = os.path.join(path, f".done_{n}_{d}_{block}{tag}")
    if os.path.exists(done):
        return x_path, y_path
    os.makedirs(path, exist_ok=True)

    def create(p, shape, chunks, dtype):
        if hasattr(zarr, "create_array"):  # zarr 3
            return zarr.create_array(store=p, shape=shape, chunks=chunks, dtype=dtype, compressors=None,
                                     overwrite=True)
        return zarr.open_array(p, mode="w", shape=shape, chunks=chunks, dtype=dtype, compressor=None)

    zX = create(x_path, (n, d), (block, d), "f4" if dtype == "float32" else "f8")
    zy = create(y_path, (n,), (block,), "f8")
    for start, X, y in _blocks(n, d, block, seed):
        zX[start:start + len(y)] = X.astype(dtype)
        zy[start:start + len(y)] = y
    open(done, "w").close()
    return x_path, y_path


def write_parquet(path: str, n: int, d: int, block: int, seed: int = 0) -> str:
    """The same X and y as :func:`write_store`, one uncompressed Parquet file (one row
    group) per block, columns ``x0 .. x{d-1}`` (float32) and ``y`` (float64)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = os.path.join(path, f"Xy_{n}_{d}_{block}.parquet")
    done = os.path.join(path, f".done_parquet_{n}_{d}_{block}")
    if os.path.exists(done):
        return directory
    os.makedirs(directory, exist_ok=True)
    names = [f"x{j}" for j in range(d)] + ["y"]
    for b, (start, X, y) in enumerate(_blocks(n, d, block, seed)):
        table = pa.Table.from_arrays([pa.array(X[:, j]) for j in range(d)] + [pa.array(y)], names=names)
        # plain encoding: a dictionary of random floats only adds a page to read and decode
        pq.write_table(table, os.path.join(directory, f"part.{b:05d}.parquet"), compression="none",
                       use_dictionary=False, row_group_size=len(y))
    open(done, "w").close()
    return directory


def dask_input(fmt: str, paths):
    """``(X, y)`` for ``dperm``: Dask arrays from Zarr, or a Dask DataFrame and its
    target column's name from Parquet."""
    if fmt == "zarr":
        import dask.array as da

        return da.from_zarr(paths[0]), da.from_zarr(paths[1])
    import dask.dataframe as dd

    return dd.read_parquet(paths), "y"


def fit_from_store(client, fmt, paths, steps: int) -> dict:
    import dperm
    from dperm.distributed import make_problem

    X, y = dask_input(fmt, paths)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # delta below 1/n is checked; nothing else warns here
        problem = make_problem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0)
    check = time.perf_counter() - t0
    passes = []
    gradient = problem.gradient

    def timed(w):
        t = time.perf_counter()
        g = gradient(w)
        passes.append(time.perf_counter() - t)
        return g

    problem.gradient = timed  # instance attribute: times every pass the algorithm makes
    t1 = time.perf_counter()
    fit = dperm.algorithms.get("gd_output_perturbation").fit(
        problem, dperm.privacy.PrivacyBudget(1.0, 1e-8), rng=0, steps=steps)
    total = time.perf_counter() - t1
    n = problem.n_samples
    return {
        "check_pass_s": round(check, 3),
        "gradient_pass_s": round(statistics.median(passes), 3),
        "fit_s": round(total, 3),
        "rows_per_s": round(n / statistics.median(passes)),
        "coef_norm": round(float(np.linalg.norm(fit.coef)), 4),
    }


def _load_numpy(fmt: str, paths) -> tuple[np.ndarray, np.ndarray]:
    if fmt == "zarr":
        import zarr

        return zarr.open_array(paths[0], mode="r")[:], zarr.open_array(paths[1], mode="r")[:]
    import pyarrow.parquet as pq

    table = pq.read_table(paths)
    y = table.column("y").to_numpy()
    X = np.column_stack([table.column(name).to_numpy() for name in table.column_names if name != "y"])
    return X, y


def compare_numpy(client, stores: dict, repeats: int) -> dict:
    """Median seconds of one gradient pass: NumPy in memory, Dask over each format, Dask
    over blocks persisted in the workers (read from the first format)."""
    from threadpoolctl import threadpool_limits

    from dperm.distributed import make_problem
    from dperm.problem import ERMProblem

    first = next(iter(stores))
    X_np, y_np = _load_numpy(first, stores[first])
    w = np.full(X_np.shape[1], 0.01)
    out = {}
    with threadpool_limits(1):
        local = ERMProblem(X_np, y_np, "logistic", ("l2", 1e-3))
        local.gradient(w)
        out["numpy_s"] = statistics.median(_times(lambda: local.gradient(w), repeats))
    g0 = local.gradient(w)
    del local, X_np, y_np
    differences = []
    for fmt, paths in stores.items():
        from_store = make_problem(*dask_input(fmt, paths), "logistic", ("l2", 1e-3))
        from_store.gradient(w)
        out[f"dask_{fmt}_s"] = statistics.median(_times(lambda: from_store.gradient(w), repeats))
        differences.append(np.abs(from_store.gradient(w) - g0).max())
    X, y = dask_input(first, stores[first])
    if first == "parquet":
        from dperm.distributed.inputs import as_dask_xy

        X, y = as_dask_xy(X, y)
    Xp, yp = client.persist([X, y])
    in_memory = make_problem(Xp, yp, "logistic", ("l2", 1e-3))
    in_memory.gradient(w)
    out["dask_persisted_s"] = statistics.median(_times(lambda: in_memory.gradient(w), repeats))
    differences.append(np.abs(in_memory.gradient(w) - g0).max())
    out["max_gradient_difference"] = float(max(differences))
    for fmt in list(stores) + ["persisted"]:
        out[f"ratio_{fmt}"] = round(out[f"dask_{fmt}_s"] / out["numpy_s"], 3)
    del Xp, yp
    return {k: (round(v, 4) if isinstance(v, float) and not k.startswith("max") else v) for k, v in out.items()}


def test_rows(d: int, m: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """m held-out rows of the generator of :func:`_blocks` (same w*, a block index no
    stored dataset reaches)."""
    w_star = np.random.default_rng(seed).normal(size=d)
    w_star *= 4.0 / np.linalg.norm(w_star)
    rng = np.random.default_rng([seed, 10**9])
    X = rng.normal(size=(m, d))
    X *= (rng.uniform(0.0, 1.0, size=m) / np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ w_star + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X.astype(np.float32) * np.float32(0.999), y


_DATA_METHODS = ("gradient", "certified_gradient", "hessian", "value_and_gradient", "hessian_vector", "loss_value",
                 "loss_gradient")


class PassCounter:
    """Counts the passes over the data of one fit, on the client: for NumPy data, calls of
    the ERMProblem methods that read X (each one pass; a Newton step's Hessian reuses the
    margins of its gradient); for Dask data, map-reduces over the blocks other than the
    checking pass (each reads every block once)."""

    def __init__(self):
        self.count = 0
        self._saved = []

    def __enter__(self):
        from dperm.distributed.problem import DaskERMProblem
        from dperm.problem.erm import ERMProblem

        depth = [0]

        def counted(f):
            def method(problem, *args, **kwargs):
                if depth[0] == 0 and not isinstance(problem, DaskERMProblem):
                    self.count += 1  # outermost calls only (gradient calls loss_gradient)
                depth[0] += 1
                try:
                    return f(problem, *args, **kwargs)
                finally:
                    depth[0] -= 1
            return method

        for name in _DATA_METHODS:
            self._saved.append((ERMProblem, name, getattr(ERMProblem, name)))
            setattr(ERMProblem, name, counted(getattr(ERMProblem, name)))
        reduce = DaskERMProblem._reduce

        def counted_reduce(problem, kernel, *args, **kwargs):
            if kernel.__name__ != "check_block":
                self.count += 1
            return reduce(problem, kernel, *args, **kwargs)

        self._saved.append((DaskERMProblem, "_reduce", reduce))
        DaskERMProblem._reduce = counted_reduce
        return self

    def __exit__(self, *exc):
        for owner, name, f in reversed(self._saved):
            setattr(owner, name, f)


def _fit_default(X, y, X_test, y_test) -> dict:
    """``DPLogisticRegression(epsilon=1, classes=[-1, 1], random_state=0).fit(X, y)``:
    seconds, passes over the data, held-out accuracy, the tolerance it certified."""
    from dperm import DPLogisticRegression

    with warnings.catch_warnings(), PassCounter() as counter:
        warnings.simplefilter("ignore")
        t, cpu = time.perf_counter(), time.process_time()
        model = DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    return {"fit_s": round(seconds, 2), "client_cpu_s": round(cpu, 2), "passes": counter.count,
            "accuracy": round(float(np.mean(model.predict(X_test) == y_test)), 4),
            "tolerance": model.fits_[0].hyperparameters.get("tolerance") if hasattr(model, "fits_") else None,
            "solver": getattr(model, "solver_", None)}


def estimator_runs(args, cluster) -> list[dict]:
    """The default estimator at every (n, d, dtype): from Zarr on a fresh cluster, on
    blocks persisted in the workers (where they take at most 40% of a worker's memory
    limit), and in the client's memory (one BLAS thread; with ``--in-memory``)."""
    import dask.array as da
    from dask.distributed import Client, wait
    from threadpoolctl import threadpool_limits

    rows = []
    for n in (int(v) for v in args.n):
        for d in args.dims:
            X_test, y_test = test_rows(d)
            for dtype in args.dtypes:
                t = time.perf_counter()
                x_path, y_path = write_store(args.store, n, d, args.block, dtype=dtype)
                base = {"n": n, "d": d, "dtype": dtype, "block_rows": args.block,
                        "X_GB": round(n * d * np.dtype(dtype).itemsize / 1e9, 2),
                        "write_s": round(time.perf_counter() - t, 1)}
                for mode in ("zarr", "persisted"):
                    if mode not in args.modes:
                        continue
                    per_worker = n * d * np.dtype(dtype).itemsize / args.workers
                    if mode == "persisted" and per_worker > 0.4 * _bytes(args.memory_limit):
                        continue
                    with cluster() as c, Client(c) as client:
                        client.run(_warm_up)
                        _warm_up_workers(X_test, y_test)
                        X, y = da.from_zarr(x_path), da.from_zarr(y_path)
                        if mode == "persisted":
                            X, y = client.persist([X, y])
                            wait([X, y])
                        row = dict(base, mode=mode)
                        cpu = client.run(time.process_time)
                        # One BLAS thread in the client too, as in the NumPy fit: the sample
                        # stage's small products run there, and a threaded BLAS on cores the
                        # workers (and, on a shared machine, other jobs) hold spins (a 250 000 x 21
                        # float32 Hessian: 0.02 s of process time on one thread, 0.1-0.6 s on two).
                        with threadpool_limits(1):
                            row.update(_fit_default(X, y, X_test, y_test))
                        after = client.run(time.process_time)
                        row["worker_cpu_s"] = round(sum(after[k] - cpu[k] for k in after), 2)
                        row["rows_per_s_per_pass"] = round(n * row["passes"] / row["fit_s"])
                        row["worker_peak_rss_MB"] = sorted(round(v) for v in client.run(_peak_rss_mb).values())
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if "sync" in args.modes:
                    # Every task in this process (Dask's synchronous scheduler, blocks
                    # persisted here): the process time is all of the fit's work, the
                    # arithmetic, the graphs and the scheduling, whatever the machine's load.
                    import dask

                    X, y = dask.persist(da.from_zarr(x_path), da.from_zarr(y_path), scheduler="sync")
                    with dask.config.set(scheduler="sync"), threadpool_limits(1):
                        _warm_up_workers(X_test, y_test)
                        row = dict(base, mode="sync")
                        row.update(_fit_default(X, y, X_test, y_test))
                    del X, y
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if args.in_memory:
                    import zarr

                    X_np = zarr.open_array(x_path, mode="r")[:]
                    y_np = zarr.open_array(y_path, mode="r")[:]
                    with threadpool_limits(1):
                        row = dict(base, mode="numpy")
                        row.update(_fit_default(X_np, y_np, X_test, y_test))
                    del X_np, y_np
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def _warm_up_workers(X_test, y_test) -> None:
    """The default fit once on the cluster on the held-out rows (two blocks): the workers
    load every kernel and import its modules outside the timings."""
    import dask.array as da

    from dperm import DPLogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        half = len(y_test) // 2
        DPLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(
            da.from_array(X_test, chunks=(half, X_test.shape[1])), da.from_array(y_test, chunks=half))


def _bytes(limit: str) -> float:
    from dask.utils import parse_bytes

    return float(parse_bytes(limit))


def _warm_up() -> None:
    import dperm.distributed._chunks  # noqa: F401


def _warm_up_client() -> None:
    """The fit's client-side work once on tiny data (imports, compiled kernels), outside
    the timings: otherwise the first format measured pays it."""
    import dperm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dperm.minimize(X, np.sign(X[:, 0]) + (X[:, 0] == 0), regularizer=("l2", 1e-3),
                       algorithm="gd_output_perturbation", steps=2, epsilon=1.0, delta=1e-8, random_state=0)


def _times(f, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, nargs="+", default=[2e6])
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--block", type=int, default=250_000, help="rows per Zarr chunk and Dask block")
    parser.add_argument("--store", default="/tmp/dperm_bench_dask")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3GB", help="per worker")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare-numpy", action="store_true")
    parser.add_argument("--formats", nargs="+", choices=("zarr", "parquet"), default=["zarr"])
    parser.add_argument("--cleanup", action="store_true", help="delete the data this run wrote, at the end")
    parser.add_argument("--estimator", action="store_true",
                        help="the default estimator (DPLogisticRegression) instead of gd_output_perturbation")
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100], help="d values of --estimator")
    parser.add_argument("--dtypes", nargs="+", choices=("float32", "float64"), default=["float32", "float64"])
    parser.add_argument("--modes", nargs="+", choices=("zarr", "persisted", "sync"), default=["zarr", "persisted"],
                        help="sync: blocks persisted in this process, Dask's synchronous scheduler (process time)")
    parser.add_argument("--in-memory", action="store_true", help="--estimator: also the same fit on NumPy data")
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    def cluster():
        return LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                            memory_limit=args.memory_limit, dashboard_address=":0")

    _warm_up_client()
    if args.estimator:
        return estimator_runs(args, cluster)
    rows, written = [], []
    for n in (int(v) for v in args.n):
        stores = {}
        for fmt in args.formats:
            t = time.perf_counter()
            if fmt == "zarr":
                stores[fmt] = write_store(args.store, n, args.d, args.block)
            else:
                stores[fmt] = write_parquet(args.store, n, args.d, args.block)
            write_s = time.perf_counter() - t
            written += [stores[fmt]] if isinstance(stores[fmt], str) else list(stores[fmt])
            # A fresh cluster per n and format: every worker's peak RSS is that run's alone.
            with cluster() as c, Client(c) as client:
                client.run(_warm_up)  # imports on the workers, outside the timings
                row = {"n": n, "d": args.d, "format": fmt, "block_rows": args.block,
                       "X_GB": round(n * args.d * 4 / 1e9, 2), "write_s": round(write_s, 1)}
                row.update(fit_from_store(client, fmt, stores[fmt], args.steps))
                row["worker_peak_rss_MB"] = sorted(round(v) for v in client.run(_peak_rss_mb).values())
                row["client_peak_rss_MB"] = round(_peak_rss_mb())
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.compare_numpy:  # after the fits: it loads X into the client's memory
            with cluster() as c, Client(c) as client:
                client.run(_warm_up)
                row = {"n": n, "d": args.d, "compare": compare_numpy(client, stores, args.repeats)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.cleanup:
        import shutil

        for path in written:
            shutil.rmtree(path, ignore_errors=True)
        for n in (int(v) for v in args.n):
            for marker in (f".done_{n}_{args.d}_{args.block}", f".done_parquet_{n}_{args.d}_{args.block}"):
                if os.path.exists(os.path.join(args.store, marker)):
                    os.remove(os.path.join(args.store, marker))
    return rows


if __name__ == "__main__":
    main()
