"""Raw tables through ``dperm.make_pipeline`` with its defaults (no declared bounds or
categories), against the non-private scikit-learn pipeline and dperm on the hand-made
schemas of ``dperm.datasets``; accuracy (classification) or R^2 (regression) on a test
split, and fit time. Run by hand:

    PYTHONPATH=src python benchmarks/bench_raw_data.py [--draws 3] [--epsilons 0.1 1 4] [--datasets ...]
        [--diffprivlib PATH/TO/venv-dpl/bin/python] [--plot docs/figures/raw_data.png]
    PYTHONPATH=src python benchmarks/bench_raw_data.py --table-in table.md --plot out.png   # plot a saved table
    PYTHONPATH=src python benchmarks/bench_raw_data.py --overhead 1e6 100   # pipeline against the model alone

Prints a Markdown table (docs/results.md, "Raw tables"). Every private figure is a mean
over ``--draws`` seeds; the test split is ADULT's official one, the shipped 80/20 split
for the other UCI tables and a stratified 70/30 split (seed 0) for scikit-learn's tables.

Columns: the non-private scikit-learn pipeline (imputer, standard scaler, one-hot,
LogisticRegression / LinearRegression); dperm.make_pipeline with its defaults on the raw
frame (nothing declared); dperm on the hand-made schemas (UCI tables) or, for
scikit-learn's tables, make_pipeline with the bounds their documentation publishes
(breast_cancer: the per-feature min and max of its DESCR; wine: its documented mean +- 2
SD); diffprivlib 0.6.6's natural pipeline given the same information, i.e. none
(``StandardScaler`` then ``LogisticRegression`` / ``LinearRegression``, epsilon halved
between them), run in its own virtualenv (it does not import with scikit-learn 1.9). Given
no bounds, diffprivlib computes them (and ``data_norm``) from the data with a
``PrivacyLeakWarning``: its figures are *not* private. It has no private encoder, so the
tables with string columns (ADULT, BANK) are left out for it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import dperm
from dperm.datasets import uci

UCI = {"adult": "binary", "bank": "binary", "credit_card": "binary", "wine": "regression", "bike": "regression"}
SKLEARN = {"breast_cancer": (load_breast_cancer, "binary"), "wine_sk": (load_wine, "multiclass"),
           "diabetes": (load_diabetes, "regression")}


def raw_split(name):
    if name in UCI:
        Xtr, ytr = uci.load_raw(name, split="train")
        Xte, yte = uci.load_raw(name, split="test")
        return Xtr, Xte, ytr.to_numpy(), yte.to_numpy(), UCI[name]
    loader, task = SKLEARN[name]
    X, y = loader(return_X_y=True, as_frame=True)
    strat = y if task != "regression" else None
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=strat)
    return Xtr, Xte, ytr.to_numpy(), yte.to_numpy(), task


def documented_bounds(name, columns):
    """Per-feature bounds published in a scikit-learn table's documentation (DESCR), in
    the order of its columns: breast_cancer's min and max, wine's mean +- 2 SD."""
    if name not in ("breast_cancer", "wine_sk"):
        return None
    descr = SKLEARN[name][0]().DESCR
    rows = []
    for line in descr.splitlines():
        match = re.match(r"^\s*([A-Za-z][^:]*):\s+([-\d.]+)\s+([-\d.]+)(?:\s+([-\d.]+)\s+([-\d.]+))?\s*$", line)
        if match:
            rows.append([float(v) for v in match.groups()[1:] if v is not None])
    if len(rows) != len(columns):
        raise RuntimeError(f"could not read {name}'s documented ranges")
    if name == "breast_cancer":
        return {c: (r[0], r[1]) for c, r in zip(columns, rows)}
    return {c: (r[2] - 2 * r[3], r[2] + 2 * r[3]) for c, r in zip(columns, rows)}


def sklearn_baseline(Xtr, Xte, ytr, yte, task):
    numeric = [c for c in Xtr.columns if pd.api.types.is_numeric_dtype(Xtr[c])]
    other = [c for c in Xtr.columns if c not in numeric]
    prep = ColumnTransformer([("num", sk_make_pipeline(SimpleImputer(), StandardScaler()), numeric),
                              ("cat", OneHotEncoder(handle_unknown="ignore"), other)])
    model = LinearRegression() if task == "regression" else LogisticRegression(max_iter=2000)
    start = time.perf_counter()
    fitted = sk_make_pipeline(prep, model).fit(Xtr, ytr)
    return fitted.score(Xte, yte), time.perf_counter() - start


def dperm_raw(Xtr, Xte, ytr, yte, task, epsilon, seed, **declared):
    if task == "regression":
        estimator = dperm.DPLinearRegression()
    else:
        estimator = dperm.DPLogisticRegression(classes=np.unique(np.concatenate([ytr, yte])))
    start = time.perf_counter()
    try:
        model = dperm.make_pipeline(estimator, epsilon=epsilon, random_state=seed, **declared).fit(Xtr, ytr)
    except ValueError as error:  # refused from public inputs (a regression target's bounds)
        if "y_bounds" not in str(error):
            raise
        return float("nan"), time.perf_counter() - start
    return model.score(Xte, yte), time.perf_counter() - start


_DIFFPRIVLIB = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import LinearRegression, LogisticRegression, StandardScaler
from sklearn.pipeline import Pipeline
data = np.load(sys.argv[1], allow_pickle=True)
task, epsilons, draws = sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
out = {}
for eps in epsilons:
    scores, times = [], []
    for seed in range(draws):
        model = (LinearRegression(epsilon=eps / 2, random_state=seed) if task == "regression"
                 else LogisticRegression(epsilon=eps / 2, random_state=seed))
        pipe = Pipeline([("scaler", StandardScaler(epsilon=eps / 2, random_state=seed)), ("model", model)])
        start = time.perf_counter()
        pipe.fit(data["Xtr"], data["ytr"])
        times.append(time.perf_counter() - start)
        scores.append(pipe.score(data["Xte"], data["yte"]))
    out[str(eps)] = [float(np.mean(scores)), float(np.mean(times))]
print(json.dumps(out))
"""


def diffprivlib_run(python, Xtr, Xte, ytr, yte, task, epsilons, draws):
    """diffprivlib's pipeline in its own interpreter; None for tables with string columns."""
    if python is None or not all(pd.api.types.is_numeric_dtype(Xtr[c]) for c in Xtr.columns):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, Xtr=Xtr.to_numpy(dtype=float), Xte=Xte.to_numpy(dtype=float), ytr=ytr, yte=yte)
        result = subprocess.run([python, "-c", _DIFFPRIVLIB, path, task, json.dumps(epsilons), str(draws)],
                                capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def dperm_schema(name, epsilon, seed):
    Xtr, ytr = uci.load(name, split="train", return_X_y=True)
    Xte, yte = uci.load(name, split="test", return_X_y=True)
    if UCI[name] == "regression":
        model = dperm.DPLinearRegression(epsilon=epsilon, random_state=seed)
    else:
        model = dperm.DPLogisticRegression(epsilon=epsilon, random_state=seed, classes=[-1.0, 1.0])
    start = time.perf_counter()
    model.fit(Xtr, ytr)
    return model.score(Xte, yte), time.perf_counter() - start


def _number(cell: str) -> float:
    match = re.match(r"\s*(-?[\d.]+)", cell)
    return float(match.group(1)) if match else float("nan")


def read_table(path) -> list[list[str]]:
    """The rows of a table this script printed."""
    rows = []
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0] not in ("dataset", "---"):
            rows.append(cells)
    return rows


def plot(rows, path) -> None:
    """Score against epsilon per dataset: dperm raw (defaults), dperm declared, the
    non-private scikit-learn pipeline (a line) and diffprivlib (leaky)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r[0] for r in rows))
    fig, axes = plt.subplots(2, (len(names) + 1) // 2, figsize=(3.2 * ((len(names) + 1) // 2), 6), squeeze=False)
    for ax, name in zip(axes.flat, names):
        mine = [r for r in rows if r[0] == name]
        eps = [float(r[4]) for r in mine]
        for column, label, style in ((5, "dperm raw", "o-"), (6, "dperm declared", "s--"),
                                     (7, "diffprivlib (leaks)", "x:")):
            values = [_number(r[column]) for r in mine]
            if not all(np.isnan(values)):
                ax.plot(eps, values, style, label=label)
        ax.axhline(_number(mine[0][3]), color="grey", lw=1, label="scikit-learn (non-private)")
        refused = [float(r[4]) for r in mine if r[5].startswith("refused")]
        if refused:
            ax.text(0.5, 0.5, "raw: refused at eps = " + ", ".join(f"{e:g}" for e in refused) + "\n(declare y_bounds)",
                    transform=ax.transAxes, ha="center", fontsize=8)
        low = 0.0 if mine[0][1] == "regression" else 0.2
        ax.set(xscale="log", title=f"{name} ({mine[0][1]})", xlabel="epsilon",
               ylabel="R^2" if mine[0][1] == "regression" else "accuracy", ylim=(low, 1.0))
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fullest = max(axes.flat[: len(names)], key=lambda a: len(a.get_lines()))
    fullest.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def overhead(n: int, d: int, repeats: int = 2) -> None:
    """The pipeline's time against the estimator's alone on the preprocessed rows, on
    n x d Gaussian numeric columns (production path, random_state=None); best of
    ``repeats``, after one small fit that compiles the kernels."""
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, size=(n, d))
    w = rng.normal(size=d)
    y = np.where(X @ w + rng.normal(size=n) > 3 * w.sum(), 1, 0)
    dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=1.0).fit(X[:2000], y[:2000])
    pre, est, pipe = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        rows = dperm.preprocessing.PrivatePreprocessor(epsilon=0.4, delta=1e-6).fit(X).transform(X)
        pre.append(time.perf_counter() - start)
        start = time.perf_counter()
        dperm.DPLogisticRegression(classes=[0, 1], epsilon=0.6).fit(rows, y)
        est.append(time.perf_counter() - start)
        start = time.perf_counter()
        dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=1.0).fit(X, y)
        pipe.append(time.perf_counter() - start)
    print(f"n={n} d={d}, best of {repeats}: preprocessing fit+transform {min(pre):.2f} s, estimator alone "
          f"{min(est):.2f} s, pipeline {min(pipe):.2f} s = {min(pipe) / min(est):.2f} x the estimator alone")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0, 4.0])
    parser.add_argument("--datasets", nargs="+", default=list(UCI) + list(SKLEARN))
    parser.add_argument("--diffprivlib", default=None, help="python of a venv with diffprivlib 0.6.6")
    parser.add_argument("--plot", default=None, help="write a PNG of the table")
    parser.add_argument("--table-in", default=None, help="plot a table printed by an earlier run")
    parser.add_argument("--overhead", nargs=2, type=float, metavar=("N", "D"), default=None,
                        help="time the pipeline against the estimator alone on N x D numeric rows")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.overhead:
        overhead(int(args.overhead[0]), int(args.overhead[1]))
        return
    if args.table_in:
        plot(read_table(args.table_in), args.plot)
        return
    rows = []
    warnings.simplefilter("ignore")
    print("| dataset | task | n train | sklearn (non-private) | eps | dperm raw, defaults | "
          "dperm declared (schema / documented bounds) | diffprivlib, same information (leaks) | time raw (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        Xtr, Xte, ytr, yte, task = raw_split(name)
        base, _ = sklearn_baseline(Xtr, Xte, ytr, yte, task)
        documented = documented_bounds(name, list(Xtr.columns))
        dpl = diffprivlib_run(args.diffprivlib, Xtr, Xte, ytr, yte, task, args.epsilons, args.draws)
        for eps in args.epsilons:
            raw = [dperm_raw(Xtr, Xte, ytr, yte, task, eps, s) for s in range(args.draws)]
            declared = "-"
            if name in UCI:
                runs = [dperm_schema(name, eps, s) for s in range(args.draws)]
                declared = f"{np.mean([r[0] for r in runs]):.3f} (schema)"
            elif documented is not None:
                runs = [dperm_raw(Xtr, Xte, ytr, yte, task, eps, s, bounds=documented) for s in range(args.draws)]
                declared = f"{np.mean([r[0] for r in runs]):.3f} (documented)"
            scores = [r[0] for r in raw]
            raw_text = ("refused: declare y_bounds" if np.isnan(scores).all()
                        else f"{np.mean(scores):.3f} (min {np.min(scores):.3f})")
            dpl_text = "-" if dpl is None else f"{dpl[str(eps)][0]:.3f}"
            cells = [name, task, str(len(Xtr)), f"{base:.3f}", f"{eps:g}", raw_text, declared, dpl_text,
                     f"{np.mean([r[1] for r in raw]):.2f}"]
            rows.append(cells)
            print("| " + " | ".join(cells) + " |", flush=True)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
