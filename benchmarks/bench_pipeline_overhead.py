"""The pipeline's own cost (issue 33's target: ``make_pipeline`` on a DataFrame at most 1.3x
the estimator on the prepared array).

Run by hand (never in CI)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_pipeline_overhead.py --n 1e6 --d 100
    PYTHONPATH=/tmp/base/src python benchmarks/bench_pipeline_overhead.py ...   # another tree

Data: bench_scale.py's generator (rows on the unit sphere, logistic labels), as
``pandas.DataFrame(X)``. In one process, one BLAS thread, after a small warm-up fit, process
seconds of: ``make_pipeline(DPLogisticRegression(), epsilon=1.0).fit(frame, y)``; the
estimator with the pipeline's own budget and row bound on the pipeline's prepared array
(``pipe[0].transform(frame)``), and on that array without its missing-value indicator
columns (what the indicators cost the solver); the default estimator on the raw X; and
the process seconds of the preprocessing's exponential-mechanism draws inside the
pipeline's fit (the exact sampler, ``dperm.privacy``). Prints the ratios.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--parts", type=int, default=0,
                        help="instead: the preprocessor alone, this many seeded fits and transforms (process "
                             "seconds, min and median; seeded draws, so without the exact sampler)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from threadpoolctl import threadpool_limits

    import dperm

    n, d = int(args.n), args.d
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    y = (2 * np.sqrt(d) * X @ w + rng.logistic(size=n) > 0).astype(int)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(d)])
    if args.parts:
        return _parts(frame, args.parts)
    from dperm.preprocessing import quantiles

    draws = [0.0]
    select = quantiles.exponential_select

    def timed_select(*a, **k):  # the preprocessing's exponential-mechanism draws (privacy/)
        t = time.process_time()
        try:
            return select(*a, **k)
        finally:
            draws[0] += time.process_time() - t

    with threadpool_limits(1):
        dperm.make_pipeline(dperm.DPLogisticRegression(), epsilon=1.0).fit(frame.iloc[:3000], y[:3000])
        pipe = dperm.make_pipeline(dperm.DPLogisticRegression(), epsilon=1.0)
        quantiles.exponential_select = timed_select
        start = time.process_time()
        pipe.fit(frame, y)
        pipeline = time.process_time() - start
        quantiles.exponential_select = select
        prepared = pipe[0].transform(frame)
        est = pipe[-1]
        start = time.process_time()
        dperm.DPLogisticRegression(epsilon=est.epsilon, delta=est.delta, data_norm=est.data_norm).fit(prepared, y)
        on_prepared = time.process_time() - start
        # the same without the missing-value indicators (all 0 here, but whether a column has
        # missing values is data: the pipeline keeps them): what the indicators cost the solver
        names = list(pipe[0].get_feature_names_out())
        keep = [j for j, name in enumerate(names) if not str(name).endswith("_missing")]
        narrow = np.ascontiguousarray(prepared[:, keep])
        del prepared
        start = time.process_time()
        dperm.DPLogisticRegression(epsilon=est.epsilon, delta=est.delta, data_norm=est.data_norm).fit(narrow, y)
        on_narrow = time.process_time() - start
        del narrow
        start = time.process_time()
        dperm.DPLogisticRegression(epsilon=1.0).fit(X, y)
        on_raw = time.process_time() - start
    print(f"dperm {dperm.__file__}\nn={n} d={d}: pipeline {pipeline:.2f} s (its exponential-mechanism draws "
          f"{draws[0]:.2f} s); estimator on the prepared array ({len(names)} columns) {on_prepared:.2f} s: "
          f"{pipeline / on_prepared:.2f}x; without the indicators ({len(keep)} columns) {on_narrow:.2f} s "
          f"(indicators cost {on_prepared / on_narrow:.2f}x); estimator on raw X {on_raw:.2f} s: {pipeline / on_raw:.2f}x")


def _parts(frame, repeats: int) -> None:
    """``PrivatePreprocessor(epsilon=0.5, delta=1e-6, random_state=0)``'s fit and transform
    on the frame, ``repeats`` times each, one BLAS thread, process seconds."""
    from threadpoolctl import threadpool_limits

    import dperm
    from dperm.preprocessing.table import PrivatePreprocessor

    times = {"fit": [], "transform": []}
    with threadpool_limits(1):
        pre = PrivatePreprocessor(epsilon=0.5, delta=1e-6, random_state=0)
        for _ in range(repeats):
            start = time.process_time()
            pre.fit(frame)
            times["fit"].append(time.process_time() - start)
            start = time.process_time()
            out = pre.transform(frame)
            times["transform"].append(time.process_time() - start)
            del out
    print(f"dperm {dperm.__file__}\n" + "; ".join(
        f"{k} min {min(v):.2f} s, median {float(np.median(v)):.2f} s" for k, v in times.items()))


if __name__ == "__main__":
    main()
