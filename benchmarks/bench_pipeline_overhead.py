"""The pipeline's own cost (issue 33's target: ``make_pipeline`` on a DataFrame at most 1.3x
the estimator on the prepared array).

Run by hand (never in CI)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_pipeline_overhead.py --n 1e6 --d 100
    PYTHONPATH=/tmp/base/src python benchmarks/bench_pipeline_overhead.py ...   # another tree

Data: bench_scale.py's generator (rows on the unit sphere, logistic labels), as
``pandas.DataFrame(X)``. In one process, one BLAS thread, after a small warm-up fit, process
seconds of: ``make_pipeline(DPLogisticRegression(), epsilon=1.0).fit(frame, y)``; the
estimator with the pipeline's own budget and row bound on the pipeline's prepared array
(``pipe[0].transform(frame)``); the default estimator on the raw X. Prints both ratios.
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
    with threadpool_limits(1):
        dperm.make_pipeline(dperm.DPLogisticRegression(), epsilon=1.0).fit(frame.iloc[:3000], y[:3000])
        pipe = dperm.make_pipeline(dperm.DPLogisticRegression(), epsilon=1.0)
        start = time.process_time()
        pipe.fit(frame, y)
        pipeline = time.process_time() - start
        prepared = pipe[0].transform(frame)
        est = pipe[-1]
        start = time.process_time()
        dperm.DPLogisticRegression(epsilon=est.epsilon, delta=est.delta, data_norm=est.data_norm).fit(prepared, y)
        on_prepared = time.process_time() - start
        start = time.process_time()
        dperm.DPLogisticRegression(epsilon=1.0).fit(X, y)
        on_raw = time.process_time() - start
    print(f"dperm {dperm.__file__}\nn={n} d={d}: pipeline {pipeline:.2f} s; estimator on the prepared array "
          f"({prepared.shape[1]} columns) {on_prepared:.2f} s: {pipeline / on_prepared:.2f}x; estimator on raw X "
          f"{on_raw:.2f} s: {pipeline / on_raw:.2f}x")


if __name__ == "__main__":
    main()
