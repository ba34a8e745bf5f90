"""Dask benchmark: a private fit read block by block from a Zarr store on a LocalCluster,
with the peak memory of every process, and the Dask-versus-NumPy gradient pass.

Run by hand (never in CI); needs the extra: ``pip install -e '.[dask]'``.

    python benchmarks/bench_dask.py --n 2e6 4e6 8e6          # fit from Zarr at each n (scaling)
    python benchmarks/bench_dask.py --n 2e7                  # the 8 GB float32 case (d = 100)
    python benchmarks/bench_dask.py --n 4e6 --compare-numpy  # + NumPy vs Dask gradient pass

Setting. X is n x d float32 (default d = 100), rows of L2 norm uniform in (0, 1] in
random directions, labels ``sign(<w*, x> + noise)``; written once to an uncompressed
Zarr store (``--store``, default /tmp/dperm_bench_dask) block by block, so writing needs
memory for one block only, and reused by later runs with the same n, d and block size.
The fit is ``gd_output_perturbation`` (logistic loss, ``("l2", 1e-3)``, epsilon = 1,
delta = 1e-8, ``--steps`` gradient steps, default 5) through ``dperm.minimize`` on
``da.from_zarr``: one checking pass when the problem is built, then one map-reduce over
the blocks per step. The cluster is a ``LocalCluster`` of ``--workers`` processes with
one thread each (default 2: the machine's cores) and a ``--memory-limit`` per worker.

Measures. Seconds of the checking pass, per gradient pass (median over the steps) and of
the whole fit; rows per second of a gradient pass; peak RSS (VmHWM) of every
worker process and of the client, and the size of X. ``--compare-numpy``: the same
gradient at the same point on the same data in memory (``ERMProblem.gradient``, X read
from the store into one NumPy array; one BLAS thread, like each worker), against Dask
over the store and Dask over blocks persisted in the workers' memory; medians of
``--repeats`` passes each.

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


def write_store(path: str, n: int, d: int, block: int, seed: int = 0) -> tuple[str, str]:
    """X (float32) and y (float64) as uncompressed Zarr arrays, written block by block."""
    import zarr

    x_path, y_path = os.path.join(path, f"X_{n}_{d}_{block}.zarr"), os.path.join(path, f"y_{n}_{block}.zarr")
    done = os.path.join(path, f".done_{n}_{d}_{block}")
    if os.path.exists(done):
        return x_path, y_path
    os.makedirs(path, exist_ok=True)
    w_star = np.random.default_rng(seed).normal(size=d)
    w_star *= 4.0 / np.linalg.norm(w_star)

    def create(p, shape, chunks, dtype):
        if hasattr(zarr, "create_array"):  # zarr 3
            return zarr.create_array(store=p, shape=shape, chunks=chunks, dtype=dtype, compressors=None,
                                     overwrite=True)
        return zarr.open_array(p, mode="w", shape=shape, chunks=chunks, dtype=dtype, compressor=None)

    zX = create(x_path, (n, d), (block, d), "f4")
    zy = create(y_path, (n,), (block,), "f8")
    for b, start in enumerate(range(0, n, block)):
        rng = np.random.default_rng([seed, b])
        m = min(block, n - start)
        X = rng.normal(size=(m, d))
        X *= (rng.uniform(0.0, 1.0, size=m) / np.linalg.norm(X, axis=1))[:, None]
        y = np.where(X @ w_star + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
        zX[start:start + m] = X.astype(np.float32) * np.float32(0.999)  # keep rows within norm 1 after rounding
        zy[start:start + m] = y
    open(done, "w").close()
    return x_path, y_path


def fit_from_store(client, x_path, y_path, steps: int) -> dict:
    import dask.array as da

    import dperm
    from dperm.distributed import make_problem

    X, y = da.from_zarr(x_path), da.from_zarr(y_path)
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


def compare_numpy(client, x_path, y_path, repeats: int) -> dict:
    import dask.array as da
    import zarr
    from threadpoolctl import threadpool_limits

    from dperm.distributed import make_problem
    from dperm.problem import ERMProblem

    X_np, y_np = zarr.open_array(x_path, mode="r")[:], zarr.open_array(y_path, mode="r")[:]
    w = np.full(X_np.shape[1], 0.01)
    out = {}
    with threadpool_limits(1):
        local = ERMProblem(X_np, y_np, "logistic", ("l2", 1e-3))
        local.gradient(w)
        out["numpy_s"] = statistics.median(_times(lambda: local.gradient(w), repeats))
    from_store = make_problem(da.from_zarr(x_path), da.from_zarr(y_path), "logistic", ("l2", 1e-3))
    from_store.gradient(w)
    out["dask_zarr_s"] = statistics.median(_times(lambda: from_store.gradient(w), repeats))
    Xp, yp = client.persist([da.from_zarr(x_path), da.from_zarr(y_path)])
    in_memory = make_problem(Xp, yp, "logistic", ("l2", 1e-3))
    in_memory.gradient(w)
    out["dask_persisted_s"] = statistics.median(_times(lambda: in_memory.gradient(w), repeats))
    g0, g1, g2 = local.gradient(w), from_store.gradient(w), in_memory.gradient(w)
    out["max_gradient_difference"] = float(max(np.abs(g0 - g1).max(), np.abs(g0 - g2).max()))
    out["ratio_zarr"] = round(out["dask_zarr_s"] / out["numpy_s"], 3)
    out["ratio_persisted"] = round(out["dask_persisted_s"] / out["numpy_s"], 3)
    del Xp, yp
    return {k: (round(v, 4) if isinstance(v, float) and not k.startswith("max") else v) for k, v in out.items()}


def _warm_up() -> None:
    import dperm.distributed._chunks  # noqa: F401


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
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    rows = []
    for n in (int(v) for v in args.n):
        t = time.perf_counter()
        x_path, y_path = write_store(args.store, n, args.d, args.block)
        write_s = time.perf_counter() - t
        # A fresh cluster per n: every worker's peak RSS is that run's alone.
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          memory_limit=args.memory_limit, dashboard_address=":0") as cluster, Client(cluster) as client:
            client.run(_warm_up)  # imports on the workers, outside the timings
            row = {"n": n, "d": args.d, "block_rows": args.block, "X_GB": round(n * args.d * 4 / 1e9, 2),
                   "write_s": round(write_s, 1)}
            row.update(fit_from_store(client, x_path, y_path, args.steps))
            # Peaks of the out-of-core fit, before the comparison loads X into memory.
            row["worker_peak_rss_MB"] = sorted(round(v) for v in client.run(_peak_rss_mb).values())
            row["client_peak_rss_MB"] = round(_peak_rss_mb())
            if args.compare_numpy:
                row.update(compare_numpy(client, x_path, y_path, args.repeats))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
