"""Issue 30: how many numeric columns the raw pipeline loses to its private draws.

Fits the suite's raw pipeline (``bench_real_tables``: nothing declared, delta 1e-5) per
table, epsilon and seed, and from the same fit reports

* its score (R^2 or accuracy), as ``bench_real_tables`` computes it;
* the **0/1 losses**: for every numeric column whose training values are exactly {0, 1},
  0 and 1 mapped through the released ``scaler_.centre_`` and ``scaler_.spread_``; a pair
  (column, seed) is lost when the two map within 0.05 of each other;
* the **lost columns**: numeric columns with at least two distinct training values whose
  scaled training values have a standard deviation below 0.05 (a constant column).

Run by hand (the suite's packages installed, as for ``bench_real_tables``):

    PYTHONPATH=src python benchmarks/study_numeric_columns.py --tables loanapp alcohol \
        --epsilons 1 0.1 --seeds 2 [--json out.json] [--preprocessing KEY=VALUE ...]
    python benchmarks/study_numeric_columns.py --report after.json --before before.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_real_tables as suite  # noqa: E402


def _parse(values):
    out = {}
    for item in values:
        key, value = item.split("=", 1)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def fit_one(Xtr, Xte, ytr, yte, task, eps, seed, options):
    import dperm

    estimator = dperm.DPLinearRegression() if task == "reg" else dperm.DPLogisticRegression(classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dperm.make_pipeline(estimator, epsilon=eps, delta=1e-5, random_state=seed, **options)
        model.fit(Xtr, ytr)
        score = float(model.score(Xte, yte))
    prep = model.steps[0][1]
    # the non-private model on the private preprocessing's output (the signal it keeps)
    from sklearn.linear_model import LogisticRegression, Ridge

    Ztr, Zte = prep.transform(Xtr), prep.transform(Xte)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = (Ridge(alpha=1e-3) if task == "reg" else LogisticRegression(C=100.0, max_iter=2000))
        oracle = float(oracle.fit(Ztr, ytr).score(Zte, yte))
    scaler = getattr(prep, "scaler_", None)
    binary = binary_lost = lost = nonconstant = 0
    if scaler is not None:
        for j, column in enumerate(prep.numeric_):
            values = pd.to_numeric(Xtr[column], errors="coerce").to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            distinct = np.unique(values)
            if distinct.size < 2:
                continue
            c, s = float(scaler.centre_[j]), float(scaler.spread_[j])
            scaled = np.clip((values - c) / s, -1, 1)
            nonconstant += 1
            lost += bool(np.std(scaled) < 0.05)
            if distinct.size == 2 and distinct[0] == 0 and distinct[1] == 1:
                binary += 1
                zero, one = np.clip((np.array([0.0, 1.0]) - c) / s, -1, 1)
                binary_lost += bool(abs(one - zero) < 0.05)
    return {"score": score, "oracle": oracle, "binary": binary, "binary_lost": binary_lost, "columns": nonconstant, "lost": lost}


def run(names, epsilons, seeds, max_rows, options):
    rows = []
    for name in names:
        start = time.perf_counter()
        Xtr, Xte, ytr, yte, task = suite.load(name, max_rows)
        row = {"table": name, "task": task, "n": len(Xtr), "d": Xtr.shape[1], "fits": {}}
        for eps in epsilons:
            fits = [fit_one(Xtr, Xte, ytr, yte, task, eps, seed, options) for seed in range(seeds)]
            row["fits"][f"{eps:g}"] = fits
        rows.append(row)
        print(f"{name:14s} {task} n={row['n']:5d} d={row['d']:3d} " + "  ".join(
            f"eps={k}: score {np.mean([f['score'] for f in v]):.3f} 01-lost "
            f"{sum(f['binary_lost'] for f in v)}/{sum(f['binary'] for f in v)} lost "
            f"{sum(f['lost'] for f in v)}/{sum(f['columns'] for f in v)}" for k, v in row["fits"].items())
            + f" ({time.perf_counter() - start:.0f} s)", flush=True)
    return rows


def report(rows, before=None):
    prior = {r["table"]: r for r in (before or [])}
    epsilons = sorted({k for r in rows for k in r["fits"]}, key=float, reverse=True)
    head = "| table | n | d | " + " | ".join(f"score@{e} | 0/1 lost@{e} | lost@{e}" for e in epsilons) + " |"
    print(head)
    print("|" + "---|" * (3 + 3 * len(epsilons)))
    totals = {e: np.zeros(4, dtype=int) for e in epsilons}
    totals_before = {e: np.zeros(4, dtype=int) for e in epsilons}

    def cell(fits):
        return (np.mean([f["score"] for f in fits]), sum(f["binary_lost"] for f in fits),
                sum(f["binary"] for f in fits), sum(f["lost"] for f in fits), sum(f["columns"] for f in fits))

    for r in rows:
        parts = []
        for e in epsilons:
            s, bl, b, lo, co = cell(r["fits"][e])
            totals[e] += [bl, b, lo, co]
            text = [f"{s:.3f}", f"{bl}/{b}", f"{lo}/{co}"]
            if r["table"] in prior and e in prior[r["table"]]["fits"]:
                s0, bl0, b0, lo0, co0 = cell(prior[r["table"]]["fits"][e])
                totals_before[e] += [bl0, b0, lo0, co0]
                text = [f"{s0:.3f} -> {s:.3f}", f"{bl0} -> {bl}/{b}", f"{lo0} -> {lo}/{co}"]
            parts.extend(text)
        print(f"| {r['table']} | {r['n']} | {r['d']} | " + " | ".join(parts) + " |")
    for e in epsilons:
        t, t0 = totals[e], totals_before[e]
        line = f"eps={e}: 0/1 lost {t[0]}/{t[1]}, columns lost {t[2]}/{t[3]}"
        if before:
            line += f" (before: {t0[0]}/{t0[1]}, {t0[2]}/{t0[3]})"
        print(line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-rows", type=int, default=20000)
    parser.add_argument("--preprocessing", nargs="*", default=[], metavar="KEY=VALUE",
                        help="options of make_pipeline (the preprocessor's), for a study")
    parser.add_argument("--set", nargs="*", default=[], metavar="MODULE.NAME=VALUE",
                        help="a module constant of dperm set for the run (a study's variant), e.g. "
                             "dperm.preprocessing.quantiles.ZERO_MASS=0.2")
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None)
    parser.add_argument("--before", default=None)
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            rows = json.load(f)
        before = None
        if args.before:
            with open(args.before) as f:
                before = json.load(f)
        report(rows, before)
        return
    import importlib

    for item in args.set:
        target, value = item.split("=", 1)
        module, name = target.rsplit(".", 1)
        setattr(importlib.import_module(module), name, json.loads(value))
    names = args.tables or list(suite.TABLES)
    rows = run(names, args.epsilons, args.seeds, args.max_rows, _parse(args.preprocessing))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    report(rows)


if __name__ == "__main__":
    main()
