"""Issue 30: the classifier's constant-regime threshold, measured on the suite.

For each classification table of ``bench_real_tables``, each epsilon and seed, fits the
raw pipeline twice (``regime="model"`` and ``regime="constant"``) and records the public
signal-to-noise estimate (``dperm.preprocessing.labels.classifier_signal_to_noise``) with
both accuracies, so that any threshold's result is read off: a table goes constant where
its estimate is below the threshold. Run by hand (the suite's packages installed)::

    PYTHONPATH=src python benchmarks/study_classifier_regime.py --epsilons 0.1 0.3 1 --seeds 3 --json out.json
    python benchmarks/study_classifier_regime.py --report out.json --thresholds 0.095 0.15 0.2 0.3 0.4 0.55
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_real_tables as suite  # noqa: E402


def run(epsilons, seeds: int):
    import dperm
    from dperm.preprocessing.labels import classifier_signal_to_noise

    rows = []
    for name, spec in suite.TABLES.items():
        if spec[1] != "clf":
            continue
        Xtr, Xte, ytr, yte, task = suite.load(name, 20000)
        reference = suite.sklearn_score(Xtr, Xte, ytr, yte, task)
        majority = float(max(yte.mean(), 1 - yte.mean()))
        for epsilon in epsilons:
            snr = classifier_signal_to_noise(dperm.DPLogisticRegression(classes=[0, 1]), len(ytr), Xtr.shape[1],
                                             epsilon, 1e-5)
            accuracy = {}
            for regime in ("model", "constant"):
                scores = []
                for seed in range(seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=epsilon,
                                                    delta=1e-5, random_state=seed, regime=regime).fit(Xtr, ytr)
                    scores.append(model.score(Xte, yte))
                accuracy[regime] = float(np.mean(scores))
            rows.append(dict(table=name, eps=epsilon, snr=snr, sklearn=reference, majority=majority, **accuracy))
            print(f"{name:15s} eps={epsilon:g} estimate={snr:.3f} majority={majority:.3f} "
                  f"model={accuracy['model']:.3f} constant={accuracy['constant']:.3f}", flush=True)
    return rows


def report(rows, thresholds) -> None:
    signal = {r["table"] for r in rows if r["sklearn"] - r["majority"] >= 0.02}
    print(f"{len(signal)} tables with signal (scikit-learn at least 2 points over the majority)")
    print("| epsilon | threshold | constant | above the majority | at least the majority - 1 pt "
          "| sum of (accuracy - majority), pt |")
    print("|---|---|---|---|---|---|")
    for epsilon in sorted({r["eps"] for r in rows}):
        cells = [r for r in rows if r["eps"] == epsilon and r["table"] in signal]
        for threshold in thresholds:
            scores = [r["constant"] if r["snr"] < threshold else r["model"] for r in cells]
            above = sum(s > r["majority"] + 1e-9 for r, s in zip(cells, scores))
            near = sum(s >= r["majority"] - 0.01 for r, s in zip(cells, scores))
            constant = sum(r["snr"] < threshold for r in cells)
            excess = 100 * float(np.sum([s - r["majority"] for r, s in zip(cells, scores)]))
            print(f"| {epsilon:g} | {threshold:g} | {constant} | {above} | {near} | {excess:.1f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None, help="a --json file to read instead of running")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.095, 0.15, 0.2, 0.3, 0.4, 0.55])
    args = parser.parse_args(argv)
    if args.report:
        rows = json.load(open(args.report))
    else:
        rows = run(args.epsilons, args.seeds)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(rows, out, indent=1)
    report(rows, args.thresholds)


if __name__ == "__main__":
    main()
