"""Non-convex benchmark: robust regression (WINE, BIKE, with outliers) and a non-convex GLM (ADULT).

Run by hand (never in CI):

    python benchmarks/bench_nonconvex.py                    # 3 repeats, all three problems
    python benchmarks/bench_nonconvex.py --quick            # 1 repeat

Problems (every loader's rows have unit L2 norm and an intercept column):

* **Robust regression**, WINE and BIKE (regression targets in [-1, 1], label_bound 1):
  Tukey's biweight loss (``"biweight"``) with constant ``c`` (``--biweight-c``, default
  1 label unit: the loss's default 4.685 assumes unit-scale residuals and would be
  nearly quadratic on labels in [-1, 1]) plus ``(lam/2)||w||^2``. On the *training*
  split, a fraction ``--outlier-fraction`` (default 10%) of the labels, drawn with a
  fixed seed (``--outlier-seed``), is replaced by the label bound farthest from the true
  label (``-1`` if ``y >= 0`` else ``+1``). The outliers are part of the private data
  set: the objective, the gradient norm and the excess risk are those of the
  contaminated training set. Test MSE is on the clean test split, next to non-private
  least squares, non-private Huber regression (scikit-learn ``HuberRegressor``,
  epsilon 1.35, scale estimated jointly) and the non-private biweight solution.
* **GLM**, ADULT with labels mapped to {0, 1}: the non-convex ``"sigmoid_squared"`` loss
  ``(sigmoid(<w, x>) - y)^2`` plus ``(lam/2)||w||^2``; test MSE of ``sigmoid(<w, x>)``
  and test accuracy (threshold 1/2).

Reference. ``F(w) - F(w_ref)`` uses the *non-private local solver* ``solve_reference``
started from ``w = 0`` (trust-region Newton-CG): a stationary point, not necessarily
the global minimum, so an "excess risk" can be negative.

Constraints (each algorithm gets the one it needs; the others run unconstrained):
``dp_fw_l2`` and ``dp_gd_so`` the L2 ball of radius ``ceil(||w_ref||_2)``, ``dp_fw_l1``
the L1 ball of radius ``ceil(||w_ref||_1)``. Choosing radii from the non-private
solution is a *benchmark convenience* (a deployment must fix them from public knowledge).

Algorithms run with their defaults; ``dp_gd`` is shown twice: default (last iterate; with
no public PL constant, as here, the non-convex theorem's T) and ``output="random"`` (the
same T and a random iterate). For ``dp_sosp`` and ``dp_gd_so`` the smallest Hessian eigenvalue at the
output (``dperm.utility.smallest_hessian_eigenvalue``, dense: d <= 109) and how many
repeats ended with status "found" are printed, with the alpha they used.

Privacy budget (epsilon, 1e-5) (delta below 1/n for every problem). Seconds: median of
the repeats (wall clock, privacy calibration included: dperm's accountant caches are
emptied before every timed fit unless ``--warm-accountant``; an untimed warm-up fit on
a subsample runs first); fits on float32 copies (``--dtype``), all measurements in
float64. Everything timed runs with ``--blas-threads`` BLAS threads, default 1: on the
shared 2-core machine OpenBLAS's default 2 threads made full-batch work ~10x slower
whenever another process was busy (see bench_convex.py).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from bench_convex import add_common_arguments, clear_accountant_caches  # shared with bench_convex (run from benchmarks/)
from scipy.special import expit
from sklearn.linear_model import HuberRegressor

import dperm
from dperm.datasets import load_adult, load_bike, load_wine
from dperm.problem import ERMProblem, solve_reference
from dperm.problem.losses import Biweight
from dperm.utility import gradient_norm, smallest_hessian_eigenvalue

PROBLEMS = ("wine", "bike", "adult_glm")
# (row label, algorithm, constraint kind, extra hyper-parameters)
RUNS = (
    ("dp_gd", "dp_gd", None, {}),
    ("dp_gd [output=random]", "dp_gd", None, {"output": "random"}),
    ("rrpsgd", "rrpsgd", None, {}),
    ("dp_gld", "dp_gld", None, {}),
    ("dp_fw_l2", "dp_fw_l2", "l2_ball", {}),
    ("dp_fw_l1", "dp_fw_l1", "l1_ball", {}),
    ("dp_sosp", "dp_sosp", None, {}),
    ("dp_gd_so", "dp_gd_so", "l2_ball", {}),
)
SECOND_ORDER = ("dp_sosp", "dp_gd_so")


def inject_outliers(y: np.ndarray, fraction: float, seed: int, bound: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Replace ``fraction`` of the labels by the label bound farthest from them."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y = np.array(y, dtype=np.float64, copy=True)
    y[idx] = np.where(y[idx] >= 0, -bound, bound)
    return y, idx


def load_problem(key: str, args):
    """(title, X, y, X_test, y_test, loss, kind)."""
    if key == "adult_glm":
        X, y = load_adult(split="train", return_X_y=True)
        Xt, yt = load_adult(split="test", return_X_y=True)
        return ("ADULT GLM (sigmoid_squared, labels {0,1})", X, (y + 1.0) / 2.0, Xt, (yt + 1.0) / 2.0,
                "sigmoid_squared", "glm")
    loader = {"wine": load_wine, "bike": load_bike}[key]
    X, y = loader(split="train", return_X_y=True)
    Xt, yt = loader(split="test", return_X_y=True)
    y_out, idx = inject_outliers(y, args.outlier_fraction, args.outlier_seed)
    title = (f"{key.upper()} robust regression (biweight c={args.biweight_c:g}; {len(idx)} of {len(y)} training "
             f"labels replaced by outliers at the label bound, seed {args.outlier_seed})")
    return title, X, y_out, Xt, yt, Biweight(args.biweight_c), "robust"


def test_metrics(kind: str, w, Xt, yt) -> tuple[float, float]:
    """(test MSE, test accuracy or NaN)."""
    scores = Xt @ w
    if kind == "glm":
        return float(np.mean((expit(scores) - yt) ** 2)), float(np.mean((scores > 0) == (yt > 0.5)))
    return float(np.mean((scores - yt) ** 2)), math.nan


def warm_up(X, y, loss, lam, dtype) -> None:
    rows = np.random.default_rng(0).choice(X.shape[0], size=min(2000, X.shape[0]), replace=False)
    for _, name, kind, hyper in RUNS:
        constraint = None if kind is None else (kind, 1.0)
        prob = ERMProblem(X[rows], y[rows], loss, ("l2", lam), constraint).astype(dtype)
        try:
            dperm.algorithms.get(name).fit(prob, dperm.PrivacyBudget(1.0, 1e-5), rng=0, **hyper)
        except ValueError:
            pass


def run_problem(key: str, args, dtype) -> dict:
    title, X, y, Xt, yt, loss, kind = load_problem(key, args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = ERMProblem(X, y, loss, ("l2", args.lam), data_norm=1.0, label_bound=1.0)
    t0 = time.perf_counter()
    reference = solve_reference(problem)
    ref_seconds = time.perf_counter() - t0
    radii = {"l2_ball": float(math.ceil(np.linalg.norm(reference.coef))),
             "l1_ball": float(math.ceil(np.abs(reference.coef).sum()))}
    fit_problems = {None: problem.astype(dtype)}
    for ck, radius in radii.items():
        fit_problems[ck] = ERMProblem(X, y, loss, ("l2", args.lam), (ck, radius), data_norm=1.0,
                                      label_bound=1.0).astype(dtype)

    baselines = []
    mse, acc = test_metrics(kind, reference.coef, Xt, yt)
    baselines.append(("non-private local solution (reference)", gradient_norm(problem, reference.coef), 0.0,
                      mse, acc, ref_seconds, smallest_hessian_eigenvalue(problem, reference.coef)))
    zero = np.zeros(problem.n_features)
    mse, acc = test_metrics(kind, zero, Xt, yt)
    baselines.append(("w = 0 (the common starting point)", gradient_norm(problem, zero),
                      problem.objective(zero) - reference.objective, mse, acc, 0.0, math.nan))
    if kind == "robust":
        t0 = time.perf_counter()
        ols = np.linalg.lstsq(X, y, rcond=None)[0]
        sec = time.perf_counter() - t0
        baselines.append(("least squares (non-private)", gradient_norm(problem, ols),
                          problem.objective(ols) - reference.objective, test_metrics(kind, ols, Xt, yt)[0],
                          math.nan, sec, math.nan))
        t0 = time.perf_counter()
        huber = HuberRegressor(epsilon=1.35, fit_intercept=False, max_iter=1000).fit(X, y).coef_
        sec = time.perf_counter() - t0
        baselines.append(("Huber, scikit-learn (non-private)", gradient_norm(problem, huber),
                          problem.objective(huber) - reference.objective, test_metrics(kind, huber, Xt, yt)[0],
                          math.nan, sec, math.nan))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm_up(X, y, loss, args.lam, dtype)
    cells = {}
    for eps in args.epsilons:
        budget = dperm.PrivacyBudget(eps, args.delta)
        for label, name, ck, hyper in RUNS:
            prob = fit_problems[ck]
            rec = {"seconds": [], "gnorm": [], "excess": [], "mse": [], "acc": [], "lmin": [], "found": 0, "alpha": []}
            try:
                for r in range(args.repeats):
                    if not args.warm_accountant:
                        clear_accountant_caches()
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fit = dperm.algorithms.get(name).fit(prob, budget, rng=args.seed + r, **hyper)
                    rec["seconds"].append(time.perf_counter() - t0)
                    w = fit.coef
                    rec["gnorm"].append(gradient_norm(problem, w))
                    rec["excess"].append(problem.objective(w) - reference.objective)
                    mse, acc = test_metrics(kind, w, Xt, yt)
                    rec["mse"].append(mse)
                    rec["acc"].append(acc)
                    if name in SECOND_ORDER:
                        rec["lmin"].append(smallest_hessian_eigenvalue(problem, w))
                        rec["found"] += fit.info.get("status") == "found"
                        rec["alpha"].append(fit.hyperparameters.get("alpha", math.nan))
            except (ValueError, OverflowError) as exc:
                rec = {"error": f"{type(exc).__name__}: {str(exc)[:90]}"}
            cells[(eps, label)] = rec
    return {"key": key, "title": title, "kind": kind, "n": problem.n_samples, "d": problem.n_features,
            "n_test": Xt.shape[0], "reference": reference, "radii": radii, "baselines": baselines, "cells": cells}


def _fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def print_table(res: dict, args) -> None:
    glm = res["kind"] == "glm"
    print()
    print(f"{res['title']}: n={res['n']}, d={res['d']}, test n={res['n_test']} (clean); + (lam/2)||w||^2, "
          f"lam={args.lam:g}; delta={args.delta:g}; repeats={args.repeats}; fits on {args.dtype}")
    ref = res["reference"]
    print(f"  reference: local solver from w=0 ({ref.method}, converged={ref.converged}), "
          f"F(w_ref)={ref.objective:.6f}; "
          f"radii: l2_ball {res['radii']['l2_ball']:g} = ceil(||w_ref||_2), "
          f"l1_ball {res['radii']['l1_ball']:g} = ceil(||w_ref||_1)")
    acc_head = f" {'test acc':>8}" if glm else ""
    header = (f"  {'method':<40} {'eps':>4} {'||grad F||':>10} {'F - F_ref':>10} {'test MSE':>9}{acc_head} "
              f"{'seconds':>8}  second-order (lambda_min, found, alpha)")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for name, g, ex, mse, acc, sec, lmin in res["baselines"]:
        acc_s = f" {_fmt(acc, '8.4f')}" if glm else ""
        extra = f"  lambda_min {lmin:.3e}" if not math.isnan(lmin) else ""
        print(f"  {name:<40} {'-':>4} {g:10.3e} {ex:10.3e} {mse:9.5f}{acc_s} {sec:8.4f}{extra}")
    for eps in args.epsilons:
        for label, name, ck, _ in RUNS:
            rec = res["cells"][(eps, label)]
            shown = label + (f" [{ck} {res['radii'][ck]:g}]" if ck else "")
            if "error" in rec:
                print(f"  {shown:<40} {eps!s:>4} {rec['error']}")
                continue
            acc_s = f" {np.mean(rec['acc']):8.4f}" if glm else ""
            extra = ""
            if name in SECOND_ORDER:
                extra = (f"  {np.mean(rec['lmin']):.3e}, {rec['found']}/{args.repeats}, "
                         f"{np.mean(rec['alpha']):.3g}")
            print(f"  {shown:<40} {eps!s:>4} {np.mean(rec['gnorm']):10.3e} {np.mean(rec['excess']):10.3e} "
                  f"{np.mean(rec['mse']):9.5f}{acc_s} {statistics.median(rec['seconds']):8.4f}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 1.0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lam", type=float, default=1e-3, help="l2 regularization strength")
    parser.add_argument("--biweight-c", type=float, default=1.0)
    parser.add_argument("--outlier-fraction", type=float, default=0.1)
    parser.add_argument("--outlier-seed", type=int, default=12345)
    add_common_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    dtype = np.dtype(args.dtype)
    if args.blas_threads > 0:  # applies until the process ends
        threadpool_limits(limits=args.blas_threads, user_api="blas")
    start = time.perf_counter()
    print(f"bench_nonconvex: problems={args.problems}, epsilons={args.epsilons}, repeats={args.repeats}, "
          f"lam={args.lam:g}, seed={args.seed}, dtype={args.dtype}, accountant caches "
          f"{'kept' if args.warm_accountant else 'cleared'} before each timed fit; BLAS threads "
          f"{args.blas_threads or 'default'}; "
          f"load average at start {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cores)")
    for key in args.problems:
        print_table(run_problem(key, args, dtype), args)
    print(f"\nF - F_ref, ||grad F|| and lambda_min are those of the training objective (outliers included); "
          f"means over repeats; seconds are medians.\ntotal {time.perf_counter() - start:.0f} s; "
          f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
