"""`dperm fit` on raw CSV files: the private preprocessing (the default) against the
rows used as they are with `--data-norm 1` (what the README's command did before), on
scikit-learn's breast_cancer and wine and dperm's raw CreditCard and WINE tables.

Each table is written to CSV as a person would have it, split 70/30 with a fixed
permutation; every cell is the mean test accuracy (R^2 for WINE's quality) over
``--seeds`` noise draws, through the command line itself (``dperm.cli.main``).

    python benchmarks/bench_cli_raw.py --seeds 5 --epsilons 1 4

The figures are in docs/your-data.md ("The command line").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd


def _tables(max_rows: int):
    from sklearn.datasets import load_breast_cancer, load_wine

    from dperm.datasets.uci import load_raw

    bc = load_breast_cancer(as_frame=True)
    wine = load_wine(as_frame=True)
    yield "breast_cancer", bc.data.assign(y=bc.target), "classification", "0,1"
    yield "sklearn wine", wine.data.assign(y=wine.target), "classification", "0,1,2"
    X, y = load_raw("credit_card", split="all")
    yield "CreditCard (raw)", X.assign(y=y.to_numpy()).iloc[:max_rows], "classification", "0,1"
    X, y = load_raw("wine", split="all")
    yield "WINE quality (raw)", X.assign(y=y.to_numpy()).iloc[:max_rows], "regression", None


def _run(argv) -> int:
    from dperm.cli import main

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return main(argv)


def _score(folder: Path, test: pd.DataFrame, task: str) -> float:
    from sklearn.metrics import r2_score

    assert _run(["predict", str(folder / "m.json"), str(folder / "test.csv"), "--out", str(folder / "p.csv")]) == 0
    pred = pd.read_csv(folder / "p.csv")["prediction"]
    if task == "classification":
        return float((pred.to_numpy() == test["y"].to_numpy()).mean())
    return float(r2_score(test["y"], pred))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0])
    parser.add_argument("--max-rows", type=int, default=10000)
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, frame, task, classes in _tables(options.max_rows):
            order = np.random.default_rng(0).permutation(len(frame))
            cut = int(0.7 * len(frame))
            train, test = frame.iloc[order[:cut]], frame.iloc[order[cut:]]
            train.to_csv(folder / "train.csv", index=False)
            test.drop(columns="y").to_csv(folder / "test.csv", index=False)
            baseline = (float(test["y"].value_counts(normalize=True).get(train["y"].mode()[0], 0.0))
                        if task == "classification" else 0.0)
            for eps in options.epsilons:
                for mode, extra in (("private preprocessing (default)", []), ("--data-norm 1", ["--data-norm", "1"])):
                    scores, start = [], time.perf_counter()
                    for seed in range(options.seeds):
                        argv = ["fit", str(folder / "train.csv"), "--target", "y", "--epsilon", str(eps),
                                "--seed", str(seed), "--out", str(folder / "m.json"), *extra]
                        if task == "classification":
                            argv += ["--classes", classes]
                        else:
                            argv += ["--loss", "squared"]
                        code = _run(argv)
                        scores.append(_score(folder, test, task) if code == 0 else float("nan"))
                    rows.append({"table": name, "n_train": len(train), "epsilon": eps, "mode": mode,
                                 "score": float(np.nanmean(scores)), "min": float(np.nanmin(scores)),
                                 "majority / R2=0": baseline,
                                 "seconds per fit": (time.perf_counter() - start) / options.seeds})
                    print(json.dumps(rows[-1]), flush=True)
    print(pd.DataFrame(rows).to_string(index=False, float_format="%.3f"))


if __name__ == "__main__":
    main()
