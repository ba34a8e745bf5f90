"""Private linear regression, side by side on the same splits (issue 24).

Candidates: sufficient-statistics perturbation (SSP) and AdaSSP (Wang 2018, Alg. 1 and
2; AdaSSP with the paper's union bound on the Gram noise and with the sharp Gaussian
bound), objective perturbation and noisy GD on the Huber loss (threshold 1, equal to the
squared loss for residuals below 1, the ridge-like problem those need: the squared loss
is not Lipschitz without a constraint), output perturbation and noisy GD on the squared
loss over the unit ball (the old ``DPLinearRegression`` default and its noisy-GD
alternative), private Newton (``dp_newton``, Ganesh, Haghifam, Steinke, Thakurta 2023: the
double-noise mechanism on the unconstrained squared and Huber losses, and its noisy-Hessian
variant on the squared loss; 15 steps, the authors' shares; "c=50": the eigenvalue-shift
coefficient raised from the paper's 0.5, a value picked on these same splits; "stable floor":
``eigenvalue_floor="stable"``, dperm's public lower bound on the shift), the estimators' defaults as they
stand, and scikit-learn's
``LinearRegression``. Test R^2, mean and standard deviation over the draws.

Data (every row of norm <= 1, targets in [-1, 1], declared ``data_norm = label_bound = 1``):
WINE and BIKE (shipped prepared splits, an intercept column inside the row), scikit-learn's
diabetes (an intercept column appended, rows scaled to norm 1, the target mapped from the
declared range [0, 350] to [-1, 1]; a fixed 80/20 split), and synthetic linear data
(``make_linear`` below: d = 10 with the intercept column, n = 1e3 ... 1e6, 20000 test rows).

Run: ``python benchmarks/bench_regression.py`` (the study of docs/results.md, about 10-20
minutes on a loaded 2-core machine) or ``--quick`` (2 draws, n <= 1e4, two epsilons: a
minute or two). ``--plot docs/figures/regression.png`` draws the figure, ``--json`` saves
the numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np

EPSILONS = (0.1, 1.0, 4.0)
DELTA = 1e-5
# Full-batch noisy GD takes thousands of passes at n >= 1e5 (minutes a fit on the shared
# machine): those cells are left out of the study and marked "not run".
SLOW = ("noisy GD (Huber)", "noisy GD (ball 1)")
SLOW_ABOVE = 20000


def prepared(X: np.ndarray) -> np.ndarray:
    """Rows with an intercept column appended, scaled to norm 1 (a per-row public map)."""
    Z = np.hstack([X, np.ones((X.shape[0], 1))])
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def make_linear(n: int, d: int = 10, seed: int = 0, n_test: int = 20000):
    """Synthetic linear data: Gaussian features and an intercept column, rows scaled to
    norm 1; ``y = clip(<w*, z> + 0.2 N(0, 1), -1, 1)`` with ``||w*|| = 0.4 sqrt(d)`` (signal
    std about 0.4). The same w* for every n (seed 0); train and test rows from seed."""
    w = np.random.default_rng(12345).normal(size=d)
    w *= 0.4 * np.sqrt(d) / np.linalg.norm(w)
    rng = np.random.default_rng(seed)

    def draw(m):
        Z = prepared(rng.normal(size=(m, d - 1)))
        return Z, np.clip(Z @ w + 0.2 * rng.normal(size=m), -1.0, 1.0)

    return (*draw(n), *draw(n_test))


def load_splits(quick: bool):
    from sklearn.datasets import load_diabetes

    from dperm.datasets import load_bike, load_wine

    out = {}
    for name, loader in (("WINE", load_wine), ("BIKE", load_bike)):
        Xtr, ytr = loader(split="train", return_X_y=True)
        Xte, yte = loader(split="test", return_X_y=True)
        out[name] = (Xtr, ytr, Xte, yte)
    X, y = load_diabetes(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(round(0.8 * len(y)))
    Z, t = prepared(X), np.clip(y / 175.0 - 1.0, -1.0, 1.0)  # declared range [0, 350]
    out["diabetes"] = (Z[order[:cut]], t[order[:cut]], Z[order[cut:]], t[order[cut:]])
    for n in ((1000, 10000) if quick else (1000, 10000, 100000, 1000000)):
        out[f"synthetic n={n:.0e}"] = make_linear(n)
    return out


def candidates():
    """name -> fit(X, y, epsilon, seed) returning a prediction function."""
    import dperm
    from dperm.algorithms import get
    from dperm.privacy import PrivacyBudget
    from dperm.problem import ERMProblem

    def algorithm(name, loss="squared", **hyper):
        def fit(X, y, eps, seed):
            problem = ERMProblem(X, y, loss, None, None, data_norm=1.0, label_bound=1.0)
            coef = get(name).fit(problem, PrivacyBudget(eps, DELTA), rng=seed, **hyper).coef
            return lambda Z: Z @ coef
        return fit

    def estimator(cls, **params):
        def fit(X, y, eps, seed):
            model = cls(epsilon=eps, delta=DELTA, random_state=seed, **params).fit(X, y)
            return model.predict
        return fit

    return {
        "SSP": algorithm("sufficient_statistics"),
        "AdaSSP (paper bound)": algorithm("adassp", noise_bound="paper"),
        "AdaSSP": algorithm("adassp"),
        "AdaSSP, shares .1/.45/.45": algorithm("adassp", shares=(0.1, 0.45, 0.45)),
        "objective pert. (Huber)": estimator(dperm.DPHuberRegressor, fit_intercept=False,
                                             solver="objective_perturbation"),
        "noisy GD (Huber)": estimator(dperm.DPHuberRegressor, fit_intercept=False, solver="noisy_gd"),
        "output pert. (ball 1)": estimator(dperm.DPLinearRegression, fit_intercept=False, solver="output_perturbation",
                                           constraint=("l2_ball", 1.0)),
        "noisy GD (ball 1)": estimator(dperm.DPLinearRegression, fit_intercept=False, solver="noisy_gd",
                                       constraint=("l2_ball", 1.0)),
        "private Newton (squared)": algorithm("dp_newton"),
        "private Newton (Huber)": algorithm("dp_newton", loss="huber"),
        "private Newton c=50 (squared)": algorithm("dp_newton", trace_coefficient=50.0),
        "private Newton c=50 (Huber)": algorithm("dp_newton", loss="huber", trace_coefficient=50.0),
        "private Newton stable floor (squared)": algorithm("dp_newton", eigenvalue_floor="stable"),
        "private Newton stable floor (Huber)": algorithm("dp_newton", loss="huber", eigenvalue_floor="stable"),
        "private Newton noisy-Hessian (squared)": algorithm("dp_newton", mechanism="noisy_hessian"),
        "DPLinearRegression()": estimator(dperm.DPLinearRegression),
        "DPLinearRegression(fit_intercept=False)": estimator(dperm.DPLinearRegression, fit_intercept=False),
        "DPHuberRegressor()": estimator(dperm.DPHuberRegressor),
    }


def r2(y, p) -> float:
    return float(1.0 - np.mean((y - p) ** 2) / np.var(y))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 draws, n <= 1e4, eps 0.1 and 1")
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--only", default=None, help="comma-separated dataset names (prefixes)")
    parser.add_argument("--methods", default=None, help="comma-separated candidate names")
    parser.add_argument("--json", default=None, help="save the results here")
    parser.add_argument("--plot", default=None, help="save the figure here (PNG)")
    parser.add_argument("--from-json", default=None, help="no fits: print and plot saved results")
    parser.add_argument("--timing", action="store_true",
                        help="only time one fit at n = 1e6, d = 100 (800 MB of float64) against scikit-learn")
    args = parser.parse_args(argv)
    if args.timing:
        timing()
        return
    if args.from_json:
        with open(args.from_json) as fh:
            results = json.load(fh)
        epsilons = tuple(sorted({r["epsilon"] for r in results if r["epsilon"] is not None}))
        print(markdown(results, epsilons))
        if args.plot:
            plot(results, epsilons, args.plot)
        return
    from sklearn.linear_model import LinearRegression

    draws = args.draws or (2 if args.quick else 5)
    epsilons = (0.1, 1.0) if args.quick else EPSILONS
    splits = load_splits(args.quick)
    if args.only:
        keep = [s.strip() for s in args.only.split(",")]
        splits = {k: v for k, v in splits.items() if any(k.startswith(p) for p in keep)}
    methods = candidates()
    if args.methods:
        methods = {k: v for k, v in methods.items() if k in args.methods.split(",")}
    results = []
    for data_name, (Xtr, ytr, Xte, yte) in splits.items():
        ols = r2(yte, LinearRegression().fit(Xtr, ytr).predict(Xte))
        results.append(dict(dataset=data_name, method="scikit-learn OLS", epsilon=None, mean=ols, std=0.0, seconds=0.0))
        print(f"{data_name}: n = {len(ytr)}, d = {Xtr.shape[1]}, OLS test R^2 = {ols:.3f}", flush=True)
        for eps in epsilons:
            for method, fit in methods.items():
                if method in SLOW and len(ytr) > SLOW_ABOVE:
                    continue
                scores, started = [], time.perf_counter()
                for seed in range(draws):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores.append(r2(yte, fit(Xtr, ytr, eps, seed)(Xte)))
                seconds = (time.perf_counter() - started) / draws
                row = dict(dataset=data_name, method=method, epsilon=eps, mean=float(np.mean(scores)),
                           std=float(np.std(scores)), seconds=seconds)
                results.append(row)
                print(f"  eps={eps:<4g} {method:<40s} {row['mean']:9.3f} +- {row['std']:.3f}   ({seconds:.2f} s/fit)",
                      flush=True)
    print()
    print(markdown(results, epsilons))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    if args.plot:
        plot(results, epsilons, args.plot)


def timing(n: int = 1_000_000, d: int = 100, repeats: int = 2) -> None:
    """Wall-clock seconds of one fit at n = 1e6, d = 100 (best of ``repeats``): scikit-learn's
    ``LinearRegression`` against ``DPLinearRegression`` (default, AdaSSP, SSP) at eps = 1."""
    import dperm
    from sklearn.linear_model import LinearRegression

    X, y, _, _ = make_linear(n, d, n_test=10)
    fits = {
        "scikit-learn LinearRegression()": lambda: LinearRegression().fit(X, y),
        "DPLinearRegression() (default)": lambda: dperm.DPLinearRegression(epsilon=1.0, random_state=0).fit(X, y),
        "DPLinearRegression(solver='adassp')": lambda: dperm.DPLinearRegression(
            epsilon=1.0, solver="adassp", random_state=0).fit(X, y),
        "DPLinearRegression(solver='sufficient_statistics')": lambda: dperm.DPLinearRegression(
            epsilon=1.0, solver="sufficient_statistics", random_state=0).fit(X, y),
    }
    base = None
    for name, fit in fits.items():
        best = math.inf
        for _ in range(repeats):
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit()
            best = min(best, time.perf_counter() - started)
        base = best if base is None else base
        print(f"{name:<55s} {best:7.2f} s  ({best / base:.2f} x scikit-learn)", flush=True)


def markdown(results, epsilons) -> str:
    datasets = list(dict.fromkeys(r["dataset"] for r in results))
    methods = list(dict.fromkeys(r["method"] for r in results if r["epsilon"] is not None))
    lines = []
    for data_name in datasets:
        ols = next(r["mean"] for r in results if r["dataset"] == data_name and r["epsilon"] is None)
        lines.append(f"**{data_name}** (scikit-learn OLS {ols:.3f})\n")
        lines.append("| method | " + " | ".join(f"eps = {e:g}" for e in epsilons) + " |")
        lines.append("|---|" + "---|" * len(epsilons))
        for method in methods:
            cells = []
            for eps in epsilons:
                row = [r for r in results
                       if r["dataset"] == data_name and r["method"] == method and r["epsilon"] == eps]
                cells.append(f"{row[0]['mean']:.3f} +- {row[0]['std']:.3f}" if row and abs(row[0]["mean"]) < 1e3
                             else (f"{row[0]['mean']:.1e}" if row else "not run"))
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(results, epsilons, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in results))
    methods = list(dict.fromkeys(r["method"] for r in results if r["epsilon"] is not None))
    cols = 4
    rows = -(-len(datasets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, data_name in zip(axes.ravel(), datasets):
        ols = next(r["mean"] for r in results if r["dataset"] == data_name and r["epsilon"] is None)
        for i, method in enumerate(methods):
            pts = [(r["epsilon"], r["mean"], r["std"]) for r in results
                   if r["dataset"] == data_name and r["method"] == method]
            if pts:
                e, m, s = map(np.array, zip(*pts))
                ax.errorbar(e, np.maximum(m, -0.5), yerr=s, marker="osd^v<>ph*X"[i % 11], ms=3, capsize=2,
                            color=plt.cm.tab20(i % 20), ls="-" if i % 2 == 0 else "--", label=method)
        ax.axhline(ols, color="black", ls="--", lw=1, label="scikit-learn OLS")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_xscale("log")
        ax.set_ylim(-0.5, 1.0)
        ax.set_title(data_name, fontsize=9)
        ax.set_xlabel("epsilon (delta = 1e-5)")
        ax.set_ylabel("test R^2 (clipped at -0.5)")
    for ax in axes.ravel()[len(datasets):]:
        ax.axis("off")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
