"""Risk and time of dp_sgd's batch choices on high-dimensional sparse data.

Run by hand (never in CI)::

    python benchmarks/bench_sparse_schedules.py --n 2e5 --d 2000 --mu 1e-4

Synthetic sparse logistic data (10 non-zeros a row, rows at norm <= 1, a dense true
weight vector scaled by ``--signal``), l2 regularization mu, epsilon = 1, delta = 1e-5,
seeds 0..repeats-1: the mean excess empirical risk ``F(w) - F*`` (F* from
``solve_reference``) and seconds of dp_sgd's default and of 64 epochs at other batches.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import scipy.sparse as sp

import dperm
from dperm.problem import ERMProblem, solve_reference


def sparse_logistic(n: int, d: int, nnz: int, signal: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    indptr = np.arange(0, n * nnz + 1, nnz)
    X = sp.csr_matrix((rng.standard_normal(n * nnz) / math.sqrt(nnz), rng.integers(0, d, n * nnz), indptr),
                      shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = (sp.diags(1.0 / np.maximum(norms, 1.0)) @ X).tocsr()
    y = np.where(X @ (signal * rng.standard_normal(d)) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=2e5)
    parser.add_argument("--d", type=int, default=2000)
    parser.add_argument("--mu", type=float, default=1e-4)
    parser.add_argument("--signal", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    n, d = int(args.n), args.d
    X, y = sparse_logistic(n, d, 10, args.signal)
    problem = ERMProblem(X, y, "logistic", ("l2", args.mu))
    best = solve_reference(problem).objective
    print(f"n={n} d={d} mu={args.mu}: F* = {best:.6g}, F(0) - F* = {problem.objective(np.zeros(problem.n_features)) - best:.4g}")
    root = round(math.sqrt(n))
    for label, batch in (("default", None), ("b = round(sqrt(n))", root), ("b = 4 sqrt(n)", 4 * root),
                         ("b = d", d), ("b = 10 sqrt(n)", 10 * root)):
        risks, seconds = [], []
        for seed in range(args.repeats):
            extra = {} if batch is None else {"batch_size": batch, "steps": math.ceil(64 * n / batch)}
            start = time.perf_counter()
            fit = dperm.minimize(X, y, loss="logistic", regularizer=("l2", args.mu), algorithm="dp_sgd", epsilon=1.0,
                                 delta=1e-5, random_state=seed, **extra)
            seconds.append(time.perf_counter() - start)
            risks.append(problem.objective(fit.coef) - best)
        h = fit.hyperparameters
        print(f"{label:>20} b={h['batch_size']:>6} T={h['steps']:>6} excess {np.mean(risks):.4g} "
              f"+- {np.std(risks) / math.sqrt(len(risks)):.2g}  {np.mean(seconds):.2f} s", flush=True)


if __name__ == "__main__":
    main()
