"""Raw tables through ``dperm.make_pipeline`` with its defaults (no declared bounds or
categories), against the non-private scikit-learn pipeline and dperm on the hand-made
schemas of ``dperm.datasets``; accuracy (classification) or R^2 (regression) on a test
split, and fit time. Run by hand:

    PYTHONPATH=src python benchmarks/bench_raw_data.py [--draws 3] [--epsilons 0.1 1 4] [--datasets ...]

Prints a Markdown table (docs/results.md, "Raw tables"). Every dperm figure is a mean
over ``--draws`` seeds; the test split is ADULT's official one, the shipped 80/20 split
for the other UCI tables and a stratified 70/30 split (seed 0) for scikit-learn's tables.
"""

from __future__ import annotations

import argparse
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


def sklearn_baseline(Xtr, Xte, ytr, yte, task):
    numeric = [c for c in Xtr.columns if pd.api.types.is_numeric_dtype(Xtr[c])]
    other = [c for c in Xtr.columns if c not in numeric]
    prep = ColumnTransformer([("num", sk_make_pipeline(SimpleImputer(), StandardScaler()), numeric),
                              ("cat", OneHotEncoder(handle_unknown="ignore"), other)])
    model = LinearRegression() if task == "regression" else LogisticRegression(max_iter=2000)
    start = time.perf_counter()
    fitted = sk_make_pipeline(prep, model).fit(Xtr, ytr)
    return fitted.score(Xte, yte), time.perf_counter() - start


def dperm_raw(Xtr, Xte, ytr, yte, task, epsilon, seed):
    if task == "regression":
        estimator = dperm.DPLinearRegression()
    else:
        estimator = dperm.DPLogisticRegression(classes=np.unique(np.concatenate([ytr, yte])))
    start = time.perf_counter()
    model = dperm.make_pipeline(estimator, epsilon=epsilon, random_state=seed).fit(Xtr, ytr)
    return model.score(Xte, yte), time.perf_counter() - start


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0, 4.0])
    parser.add_argument("--datasets", nargs="+", default=list(UCI) + list(SKLEARN))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print("| dataset | task | n train | sklearn (non-private) | eps | dperm raw, defaults | dperm schema | time raw (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        Xtr, Xte, ytr, yte, task = raw_split(name)
        base, _ = sklearn_baseline(Xtr, Xte, ytr, yte, task)
        for eps in args.epsilons:
            raw = [dperm_raw(Xtr, Xte, ytr, yte, task, eps, s) for s in range(args.draws)]
            schema = "-"
            if name in UCI:
                runs = [dperm_schema(name, eps, s) for s in range(args.draws)]
                schema = f"{np.mean([r[0] for r in runs]):.3f}"
            scores = [r[0] for r in raw]
            print(f"| {name} | {task} | {len(Xtr)} | {base:.3f} | {eps:g} | {np.mean(scores):.3f} "
                  f"(min {np.min(scores):.3f}) | {schema} | {np.mean([r[1] for r in raw]):.2f} |", flush=True)


if __name__ == "__main__":
    main()
