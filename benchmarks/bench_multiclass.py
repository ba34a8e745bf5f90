"""Multiclass benchmark: ``DPLogisticRegression`` multinomial (one softmax fit, the whole
budget) against one-vs-rest (K binary fits, each with epsilon/K and delta/K), at the same
total budget, for K = 3..7 classes.

Run by hand (never in CI):

    python benchmarks/bench_multiclass.py                      # WINE and synthetic, eps 1 and 0.1
    python benchmarks/bench_multiclass.py --repeats 5 --solvers output_perturbation noisy_gd

Data. WINE (red and white, the shipped loader's preprocessing: rows of unit norm) with the
quality grades 3..9 merged into K ordered bins (``WINE_BINS``), its fixed 80/20 split; and a
covertype-like synthetic mixture (``synthetic``): K Gaussian classes in 20 dimensions with
covertype's imbalanced class proportions, rows scaled to unit norm, 20000 train and 5000
test rows. Every estimator declares its classes and keeps its defaults
(``alpha="auto"``, ``solver="auto"``, an intercept feature), so the one-vs-rest column is
the library's former default and the multinomial column its new one. Test accuracy is the
mean over ``--repeats`` noise draws (seeds 0..repeats-1) with its standard deviation;
"majority" is the constant classifier of the training split's largest class, "sklearn" the
non-private multinomial ``LogisticRegression`` (default C = 1).

Target (issue "good models by default", item 4): multinomial better than one-vs-rest at
K = 3..7.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

# quality grade -> bin index, for each K (the extreme grades merged first: they are rare)
WINE_BINS = {
    3: {3: 0, 4: 0, 5: 0, 6: 1, 7: 2, 8: 2, 9: 2},
    4: {3: 0, 4: 0, 5: 1, 6: 2, 7: 3, 8: 3, 9: 3},
    5: {3: 0, 4: 0, 5: 1, 6: 2, 7: 3, 8: 4, 9: 4},
    6: {3: 0, 4: 1, 5: 2, 6: 3, 7: 4, 8: 5, 9: 5},
    7: {3: 0, 4: 1, 5: 2, 6: 3, 7: 4, 8: 5, 9: 6},
}
# class proportions of covertype (Blackard 1998), largest first after the first two
COVERTYPE_PROPORTIONS = np.array([0.365, 0.488, 0.062, 0.005, 0.016, 0.030, 0.035])


def wine(k: int):
    from dperm.datasets import load

    out = []
    for split in ("train", "test"):
        X, y = load("wine", split=split, return_X_y=True)
        grade = np.rint(y * 3.0 + 6.0).astype(int)  # the loader's target is (quality - 6) / 3
        out += [X, np.array([WINE_BINS[k][g] for g in grade])]
    return out


def synthetic(k: int, n_train: int = 20000, n_test: int = 5000, d: int = 20, separation: float = 1.5, seed: int = 0):
    rng = np.random.default_rng(seed + k)
    centres = rng.normal(size=(k, d))
    centres *= separation / np.linalg.norm(centres, axis=1, keepdims=True)
    proportions = COVERTYPE_PROPORTIONS[:k] / COVERTYPE_PROPORTIONS[:k].sum()
    y = rng.choice(k, size=n_train + n_test, p=proportions)
    X = centres[y] + rng.normal(size=(n_train + n_test, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _cell(accs) -> str:
    return f"{np.mean(accs):.4f} ± {np.std(accs):.4f}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--classes", type=int, nargs="+", default=[3, 4, 5, 6, 7])
    parser.add_argument("--datasets", nargs="+", default=["wine", "synthetic"])
    parser.add_argument("--solvers", nargs="*", default=[],
                        help="extra multinomial solvers to report beside solver='auto'")
    args = parser.parse_args(argv)

    from sklearn.linear_model import LogisticRegression

    from dperm.estimators import DPLogisticRegression

    warnings.simplefilter("ignore")  # clipping at the bound up to rounding; declared classes
    header = ["data", "K", "eps", "majority", "sklearn", "ovr", "multinomial", *args.solvers, "gain"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in args.datasets:
        for k in args.classes:
            Xtr, ytr, Xte, yte = wine(k) if name == "wine" else synthetic(k)
            majority = float(np.mean(yte == np.bincount(ytr).argmax()))
            sk = LogisticRegression(max_iter=2000).fit(Xtr, ytr).score(Xte, yte)
            for eps in args.epsilons:
                start = time.perf_counter()

                def run(multi_class, solver="auto"):
                    return [DPLogisticRegression(epsilon=eps, delta=args.delta, classes=list(range(k)), solver=solver,
                                                 multi_class=multi_class, random_state=seed).fit(Xtr, ytr).score(Xte, yte)
                            for seed in range(args.repeats)]

                ovr, multi = run("ovr"), run("multinomial")
                extra = [_cell(run("multinomial", solver)) for solver in args.solvers]
                row = [name, str(k), f"{eps:g}", f"{majority:.4f}", f"{sk:.4f}", _cell(ovr), _cell(multi), *extra,
                       f"{100 * (np.mean(multi) - np.mean(ovr)):+.2f} pt"]
                print("| " + " | ".join(row) + " |", flush=True)
                print(f"# {name} K={k} eps={eps:g}: {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
