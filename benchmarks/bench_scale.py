"""Scale benchmark: time, peak memory and test accuracy of dperm's learners against peers.

Run by hand (never in CI), for example::

    python benchmarks/bench_scale.py --n 1e4 1e5 1e6 --d 20 100 --formats dense64 dense32 \
        --methods default objective_perturbation sklearn_lbfgs --threads 1 --out /tmp/scale.json

Sparse rows of issue 14 (CSR, n = 1e6, d = 1e4, 10 non-zeros a row; dp_sgd and dp_svrg)::

    python benchmarks/bench_scale.py --n 1e6 --d 10000 --formats csr --nnz 10 \
        --methods dp_sgd dp_svrg sklearn_lbfgs --timeout 900

(``--preset sparse`` runs exactly these). The grid of issue 33: the default estimator
(``DPLogisticRegression(epsilon=1.0)``, nothing else set), ``make_pipeline`` of it on the same
data as a DataFrame, and scikit-learn's ``LogisticRegression()`` default, at n = 1e5, 1e6, 4e6
and d = 20, 100, 1000, float64 and float32, with passes over X and flops of each dperm fit::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_scale.py --preset issue33 --repeats 3

(combinations whose data exceed ``--max-gb`` are skipped with a printed note; the pipeline,
which holds the DataFrame and its prepared copy beside X, where three times the data do).
float32 against float64 on the same values (one
process, warm, interleaved; the ratio of issue 26)::

    python benchmarks/bench_scale.py --paired-dtypes --n 1e6 4e6 --d 20 100 --repeats 4

 Every (method, format, n, d) runs in a fresh subprocess of its own, so its figures are
not disturbed by the runs before it:

* ``seconds``: wall time of ``fit`` alone (the data are generated before the clock starts;
  the numba kernels load from their disk cache inside it, as on a first call, unless
  ``--warm`` fits 2 000 rows first); ``cpu_seconds``: the process time of the same call
  (less sensitive to other processes on a shared machine; BLAS limited to ``--threads``
  through threadpoolctl as well as the environment);
* ``passes``, ``gflop``: reads of X (a read of m of n rows counts m / n) and the flops of the
  products with X during ``fit`` (:mod:`dperm.problem.passes`; dperm methods only);
* ``peak_rss``: the child's peak resident set during ``fit`` (``VmHWM`` of
  ``/proc/self/status``, reset through ``/proc/self/clear_refs`` just before ``fit``), the
  data and the interpreter with its libraries included; reported with ``data_bytes``
  (training matrix only), their ratio (``x data``) and ``fit+``, the memory ``fit`` added
  to what the process held before it (``peak_rss - rss_before``), over ``data_bytes``;
* ``accuracy``: on 20,000 held-out rows of the same generator;
* ``import_seconds``: ``import dperm`` in the child (cold process, warm file cache).

Data: ``X`` has rows drawn uniformly on the unit sphere (d coordinates N(0, 1), normalized;
generated in chunks directly in the target dtype, so generation peaks at the data's own
size), labels ``y = sign(2 sqrt(d) <w*, x> + logistic noise)`` for a fixed unit ``w*``.
``csr``: ``--nnz`` non-zeros a row at uniform positions, values as above, rows normalized.

Methods: ``estimator`` (``DPLogisticRegression(epsilon=1.0)``: every other parameter at its
default, the secure noise path included), ``pipeline`` (``make_pipeline(DPLogisticRegression(),
epsilon=1.0)`` on ``pandas.DataFrame(X)``, the private preprocessing included),
``sklearn_default`` (``LogisticRegression()``), ``default`` (``DPLogisticRegression()`` with
``solver="auto"`` and the settings below), any catalogue name
(``DPLogisticRegression(solver=name)``), ``sklearn_lbfgs`` (non-private
``LogisticRegression`` with the same penalty, ``C = 1 / (n alpha)``), ``diffprivlib``
(``diffprivlib.models.LogisticRegression``, same epsilon and data_norm; in its own virtual
environment, given by ``--diffprivlib-python``, since diffprivlib 0.6.6 does not import with
scikit-learn >= 1.8; make it with
``python3 -m venv /tmp/dpl && /tmp/dpl/bin/pip install "scikit-learn<1.8" diffprivlib==0.6.6``).
All private learners: epsilon = 1, delta = 1e-5, alpha = 1e-3, data_norm = 1, intercept fit.

The summary prints the ratio of each method's seconds to ``sklearn_lbfgs`` and to
``sklearn_default`` in the same run (same format, n, d; medians of ``--repeats`` runs,
interleaved, with their min-max spread), the pipeline's to the estimator's, and the
least-squares log-log slope of seconds in n; the load average before and after, and the
BLAS kernel (threadpoolctl) of the children.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

EPSILON, DELTA, ALPHA = 1.0, 1e-5, 1e-3
N_TEST = 20_000
_ROOT = Path(__file__).resolve().parents[1]


# -- child side: only numpy / scipy at module level (the diffprivlib venv has no dperm) ------
def _make_data(n: int, d: int, fmt: str, nnz: int, seed: int):
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    w_star = np.random.default_rng(12345).standard_normal(d)
    w_star /= np.linalg.norm(w_star)
    dtype = np.float32 if fmt == "dense32" else np.float64
    if fmt == "csr":
        k = min(nnz, d)
        cols = rng.integers(0, d, size=(n, k))
        vals = rng.standard_normal((n, k))
        vals /= np.linalg.norm(vals, axis=1, keepdims=True)
        X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
        X.sum_duplicates()
        margins = X @ w_star
    else:
        X = np.empty((n, d), dtype=dtype)
        margins = np.empty(n)
        chunk = max(1, (1 << 22) // d)
        for i in range(0, n, chunk):
            block = X[i : i + chunk]
            block[...] = rng.standard_normal(block.shape, dtype=dtype)
            block /= np.linalg.norm(block, axis=1, keepdims=True).astype(dtype)
            margins[i : i + chunk] = block @ w_star.astype(dtype)
    y = np.where(2.0 * math.sqrt(d) * margins + rng.logistic(size=n) > 0, 1.0, 0.0)
    return X, y


def _peak_reset() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def _prepare(method: str, n: int, diagnostics: dict):
    """The estimator of ``method``, its module imported (imports are not timed)."""
    if method == "sklearn_lbfgs":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0 / (n * ALPHA), max_iter=1000)
    if method == "sklearn_default":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression()
    if method == "diffprivlib":
        import warnings

        from diffprivlib.models import LogisticRegression

        warnings.simplefilter("ignore")
        return LogisticRegression(epsilon=EPSILON, data_norm=1.0, C=1.0 / (n * ALPHA), random_state=0)
    t0 = time.perf_counter()
    from dperm import DPLogisticRegression

    diagnostics["import_seconds"] = time.perf_counter() - t0
    if method == "estimator":
        return DPLogisticRegression(epsilon=1.0)
    if method == "pipeline":
        from dperm import make_pipeline

        return make_pipeline(DPLogisticRegression(), epsilon=1.0)
    return DPLogisticRegression(epsilon=EPSILON, delta=DELTA, alpha=ALPHA, data_norm=1.0, random_state=0,
                                solver="auto" if method == "default" else method)


def child(spec: dict) -> dict:
    import warnings

    import numpy as np

    n, d, fmt = spec["n"], spec["d"], spec["format"]
    X, y = _make_data(n, d, fmt, spec["nnz"], seed=spec["seed"])
    Xt, yt = _make_data(N_TEST, d, fmt, spec["nnz"], seed=spec["seed"] + 1)
    data_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if fmt == "csr" else X.nbytes
    out = {**spec, "data_bytes": int(data_bytes)}
    if spec["method"] == "pipeline":
        import pandas as pd

        columns = [f"x{j}" for j in range(d)]
        X, Xt = pd.DataFrame(X, columns=columns), pd.DataFrame(Xt, columns=columns)
    model = _prepare(spec["method"], n, out)
    warnings.simplefilter("ignore")
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:  # the diffprivlib venv: the environment variables alone
        limits, out["blas"] = None, "?"
    else:
        limits = threadpool_limits(spec["threads"])
        out["blas"] = ",".join(sorted({str(i.get("architecture", i.get("internal_api"))) for i in threadpool_info()
                                       if i.get("user_api") == "blas"}))
    if spec.get("warm"):  # compile / load what a first fit in a process loads, untimed
        from sklearn.base import clone

        clone(model).fit(X[:2000], y[:2000])
    counter = None
    if spec["method"] not in ("sklearn_lbfgs", "sklearn_default", "diffprivlib"):
        try:
            from dperm.problem.passes import count_passes

            counter = count_passes()
        except ImportError:  # a tree before the counter
            counter = None
    out["rss_before"] = _status_bytes("VmRSS")
    out["peak_reset"] = _peak_reset()
    count = counter.__enter__() if counter is not None else None
    c0, t0 = time.process_time(), time.perf_counter()
    model.fit(X, y)
    out["seconds"] = time.perf_counter() - t0
    out["cpu_seconds"] = time.process_time() - c0
    if counter is not None:
        counter.__exit__(None, None, None)
        out["passes"] = round(count.passes, 3)
        out["gflop"] = round(count.flops / 1e9, 3)
        out["passes_by_kind"] = {k: round(v[0], 3) for k, v in count.by_kind.items()}
    out["peak_rss"] = _status_bytes("VmHWM")
    if limits is not None:
        limits.unregister() if hasattr(limits, "unregister") else None
    estimator = model.steps[-1][1] if hasattr(model, "steps") else model
    if hasattr(estimator, "solver_"):
        out["solver"] = estimator.solver_
    out["accuracy"] = float(np.mean(np.asarray(model.predict(Xt)).ravel() == yt))
    return out


# -- parent side -------------------------------------------------------------------------
def _run_one(spec: dict, args) -> dict:
    python = args.diffprivlib_python if spec["method"] == "diffprivlib" else sys.executable
    if python is None:
        return {**spec, "error": "no --diffprivlib-python"}
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(args.threads)
    if spec["method"] != "diffprivlib":
        env["PYTHONPATH"] = str(Path(spec["src"]).resolve()) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([python, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                              env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {**spec, "error": f"timeout {args.timeout:g} s"}
    if proc.returncode != 0:
        return {**spec, "error": (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _slope(points):
    import numpy as np

    points = [(n, s) for n, s in points if s and s > 0]
    if len(points) < 2:
        return math.nan
    x, yv = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    return float(np.polyfit(x, yv, 1)[0])


def _median(rows, key="seconds"):
    good = sorted(r[key] for r in rows if key in r)
    return good[len(good) // 2] if good else None


def _spread(rows, key):
    good = [r[key] for r in rows if key in r]
    return f"{min(good):.2f}-{max(good):.2f}" if good else ""


def summarize(results: list[dict]) -> str:
    groups: dict[tuple, list] = {}
    for r in results:
        groups.setdefault((r["method"], r["format"], r["d"], r["n"]), []).append(r)
    lines = [f"{'method':<24}{'format':<9}{'d':>5}{'n':>9}{'wall s':>8}{'cpu s':>8}{'cpu min-max':>13}"
             f"{'x sk_lbfgs':>11}{'x sk_def':>9}{'x est':>7}{'passes':>8}{'Gflop':>8}{'peak GB':>8}{'acc':>7}"
             "  solver/error"]
    for (method, fmt, d, n), rows in sorted(groups.items()):
        sec, cpu = _median(rows), _median(rows, "cpu_seconds")
        key = "cpu_seconds" if cpu is not None else "seconds"
        mine = cpu if cpu is not None else sec

        def ratio(peer):
            ref = _median(groups.get((peer, fmt, d, n), []), key)
            return f"{mine / ref:.2f}" if mine and ref else ""

        r = next((x for x in rows if "seconds" in x), rows[0])
        if sec is None:
            lines.append(f"{method:<24}{fmt:<9}{d:>5}{n:>9}{'':>98}  {r.get('error')}")
            continue
        passes = f"{_median(rows, 'passes'):8.2f}" if "passes" in r else f"{'':>8}"
        gflop = f"{_median(rows, 'gflop'):8.1f}" if "gflop" in r else f"{'':>8}"
        lines.append(f"{method:<24}{fmt:<9}{d:>5}{n:>9}{sec:8.2f}{(cpu or 0):8.2f}{_spread(rows, key):>13}"
                     f"{ratio('sklearn_lbfgs'):>11}{ratio('sklearn_default'):>9}"
                     f"{ratio('estimator') if method == 'pipeline' else '':>7}{passes}{gflop}"
                     f"{r['peak_rss'] / 1e9:8.2f}{r['accuracy']:7.3f}  {r.get('solver', '')}")
    lines.append("(x columns: ratios of median cpu seconds, measured in this run, interleaved)")
    lines.append("")
    lines.append("log-log slope of seconds in n:")
    by_curve: dict[tuple, list] = {}
    for (method, fmt, d, n), rows in groups.items():
        by_curve.setdefault((method, fmt, d), []).append((n, _median(rows)))
    for key, points in sorted(by_curve.items()):
        lines.append(f"  {key[0]:<24}{key[1]:<9}d={key[2]:<5} slope {_slope(sorted(points)):.2f}")
    return "\n".join(lines)


def paired_dtypes(n: int, d: int, repeats: int, threads: int) -> dict:
    """float32 against float64 on the same values: X64 from the generator, X32 its cast (no
    other copy), both fitted by the default estimator in this one process, warm (a fit on
    2 000 rows of each first), interleaved (ABBA...) so both see the same load; min and
    median seconds and their ratios."""
    import statistics
    import warnings

    from threadpoolctl import threadpool_limits

    import numpy as np
    from dperm import DPLogisticRegression

    X64, y = _make_data(n, d, "dense64", 0, 0)
    X32 = X64.astype(np.float32)
    times = {"float64": [], "float32": []}
    with threadpool_limits(threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for X in (X64, X32):
            DPLogisticRegression(epsilon=EPSILON, delta=DELTA, classes=[0.0, 1.0],
                                 random_state=0).fit(X[:2000], y[:2000])
        for r in range(repeats):
            order = (("float64", X64), ("float32", X32)) if r % 2 == 0 else (("float32", X32), ("float64", X64))
            for name, X in order:
                t = time.perf_counter()
                DPLogisticRegression(epsilon=EPSILON, delta=DELTA, classes=[0.0, 1.0], random_state=0).fit(X, y)
                times[name].append(time.perf_counter() - t)
    out = {"n": n, "d": d, "repeats": repeats}
    for name, values in times.items():
        out[f"{name}_min_s"] = round(min(values), 3)
        out[f"{name}_median_s"] = round(statistics.median(values), 3)
    out["ratio_min"] = round(out["float32_min_s"] / out["float64_min_s"], 3)
    out["ratio_median"] = round(out["float32_median_s"] / out["float64_median_s"], 3)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--n", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    parser.add_argument("--d", nargs="+", type=int, default=[20, 100])
    parser.add_argument("--formats", nargs="+", default=["dense64", "dense32"], choices=["dense64", "dense32", "csr"])
    parser.add_argument("--methods", nargs="+", default=["default", "objective_perturbation", "dp_sgd", "dp_svrg",
                                                         "gd_output_perturbation", "sklearn_lbfgs"])
    parser.add_argument("--nnz", type=int, default=10, help="non-zeros per row of csr data")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="BLAS / numba threads of each child")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--src", nargs="+", default=[str(_ROOT / "src")],
                        help="dperm source tree(s) to put first on the path; several as LABEL=PATH run every dperm "
                             "method once per tree (interleaved, same load), reported as METHOD@LABEL")
    parser.add_argument("--diffprivlib-python", default=None)
    parser.add_argument("--out", help="append every run as a JSON line to this file")
    parser.add_argument("--max-gb", type=float, default=8.0,
                        help="skip a combination whose data (three times them for the pipeline) exceed this")
    parser.add_argument("--warm", action=argparse.BooleanOptionalAction, default=True,
                        help="fit 2 000 rows before the timed fit in each child (compiles and loads, untimed)")
    parser.add_argument("--preset", choices=["sparse", "issue33"],
                        help="sparse: CSR n = 1e6, d = 1e4, 10 non-zeros a row, dp_sgd, dp_svrg and scikit-learn "
                             "(replaces --n, --d, --formats, --nnz and --methods); issue33: the estimator, the "
                             "pipeline and LogisticRegression() at n = 1e5, 1e6, 4e6, d = 20, 100, 1000, float64 "
                             "and float32 (replaces --n, --d, --formats and --methods)")
    parser.add_argument("--paired-dtypes", action="store_true",
                        help="the default estimator on float64 data and on their float32 cast, in one process, "
                             "interleaved --repeats times (float32 / float64 time ratio; the dperm of --src)")
    args = parser.parse_args(argv)
    if args.paired_dtypes:
        sys.path.insert(0, args.src[0].split("=", 1)[-1])
        os.environ.setdefault("DPERM_WARMUP", "0")
        for n in (int(v) for v in args.n):
            for d in args.d:
                print(json.dumps(paired_dtypes(n, d, max(2, args.repeats), args.threads)), flush=True)
        return
    if args.preset == "issue33":
        args.n, args.d, args.formats = [1e5, 1e6, 4e6], [20, 100, 1000], ["dense64", "dense32"]
        args.methods = ["sklearn_default", "estimator", "pipeline"]
    if args.preset == "sparse":
        args.n, args.d, args.formats, args.nnz = [1e6], [10_000], ["csr"], 10
        args.methods = ["dp_sgd", "dp_svrg", "sklearn_lbfgs"]
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    trees = [tuple(item.split("=", 1)) if "=" in item else (None, item) for item in args.src]
    if len(trees) > 1 and any(label is None for label, _ in trees):
        parser.error("several --src trees need LABEL=PATH each")
    results = []
    print(f"load average before: {os.getloadavg()}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')!r} "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')!r}", flush=True)
    for n in (int(v) for v in args.n):
        for d in args.d:
            for fmt in args.formats:
                itemsize = 4 if fmt == "dense32" else 8
                data_gb = n * d * itemsize / 1e9 if fmt != "csr" else n * args.nnz * 12 / 1e9
                for r in range(args.repeats):  # interleaved: every method once per round
                    for method in args.methods:
                        held = 3.0 if method == "pipeline" else 1.0  # X, the DataFrame, the prepared copy
                        if data_gb * held > args.max_gb:
                            if r == 0:
                                print(f"skipped {method} {fmt} n={n} d={d}: {data_gb * held:.1f} GB of data held "
                                      f"> --max-gb {args.max_gb:g}", flush=True)
                            continue
                        peer = method in ("sklearn_lbfgs", "sklearn_default", "diffprivlib")
                        for label, src in trees[:1] if peer else trees:
                            spec = {"method": method, "format": fmt, "n": n, "d": d, "nnz": args.nnz, "seed": r,
                                    "threads": args.threads, "src": src, "warm": args.warm}
                            res = _run_one(spec, args)
                            if label and not peer:
                                res["method"] = f"{method}@{label}"
                            results.append(res)
                            print(json.dumps(res), flush=True)
                            if args.out:
                                with open(args.out, "a") as f:
                                    f.write(json.dumps(res) + "\n")
    print(f"load average after: {os.getloadavg()}", flush=True)
    print(summarize(results))


if __name__ == "__main__":
    main()
