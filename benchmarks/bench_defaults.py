"""Defaults benchmark: ``DPLogisticRegression(epsilon)`` with every default (``alpha="auto"``)
against scikit-learn's default ``LogisticRegression`` and diffprivlib's
``LogisticRegression(epsilon, data_norm)``, on ADULT, BANK and CreditCard (test split).

Run by hand (never in CI):

    python benchmarks/bench_defaults.py                                  # dperm and scikit-learn only
    python benchmarks/bench_defaults.py --diffprivlib-python /path/to/venv/bin/python
    python benchmarks/bench_defaults.py --search                         # + dperm.model_selection.PrivateSearch

diffprivlib pins older scikit-learn releases than dperm, so it lives in its own virtual
environment: this script writes the data once to a temporary ``.npz`` file and runs itself
in that interpreter (``--worker``), which needs only numpy and diffprivlib. It reports
diffprivlib with its defaults (``C=1``) and with the best ``C`` of a grid chosen *on the
test split* (an oracle that favours diffprivlib).

Setting. The loaders' preprocessing (public per-row maps, rows of unit L2 norm, an
intercept column); ADULT's official split, BANK's and CreditCard's fixed 80% split.
dperm and diffprivlib both get ``data_norm=1``; dperm adds its intercept feature (row
norm sqrt 2), diffprivlib fits its intercept its own way. delta = 1e-5 for dperm
(diffprivlib's logistic regression is pure epsilon-DP). Accuracies are means over
``--repeats`` noise draws (seeds 0..repeats-1), with their standard deviation.

Targets (issue "good models by default"): at epsilon = 1 the default within 1 accuracy
point of scikit-learn's default and never below diffprivlib (defaults or best C); at
epsilon = 0.1 the gap reported and diffprivlib beaten.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

DATASETS = ("adult", "bank", "credit_card")
C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)


def _worker(npz_path: str, epsilons, repeats: int, cs) -> None:
    """Runs inside diffprivlib's interpreter: prints one JSON object of mean accuracies."""
    from diffprivlib.models import LogisticRegression

    warnings.filterwarnings("ignore")
    data = np.load(npz_path)
    out = {}
    for name in DATASETS:
        Xtr, ytr, Xte, yte = (data[f"{name}_{part}"] for part in ("Xtr", "ytr", "Xte", "yte"))
        for eps in epsilons:
            for C in cs:
                accs = [LogisticRegression(epsilon=eps, data_norm=1.0, C=C, random_state=seed).fit(Xtr, ytr).score(Xte, yte)
                        for seed in range(repeats)]
                out[f"{name}|{eps}|{C}"] = [float(np.mean(accs)), float(np.std(accs))]
    print(json.dumps(out))


def _diffprivlib(python: str, data: dict, epsilons, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, **{f"{name}_{k}": v for name, parts in data.items() for k, v in parts.items()})
        cmd = [python, os.path.abspath(__file__), "--worker", path, "--repeats", str(repeats),
               "--epsilons", *map(str, epsilons)]
        run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"the diffprivlib worker failed:\n{run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--diffprivlib-python", default=os.environ.get("DPERM_DIFFPRIVLIB_PYTHON"),
                        help="interpreter of a virtual environment with diffprivlib (or $DPERM_DIFFPRIVLIB_PYTHON)")
    parser.add_argument("--search", action="store_true", help="also run dperm.model_selection.PrivateSearch")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.epsilons, args.repeats, C_GRID)
        return

    from sklearn.linear_model import LogisticRegression

    from dperm.datasets import load
    from dperm.estimators import DPLogisticRegression

    data = {}
    for name in DATASETS:
        Xtr, ytr = load(name, split="train", return_X_y=True)
        Xte, yte = load(name, split="test", return_X_y=True)
        data[name] = {"Xtr": Xtr, "ytr": ytr, "Xte": Xte, "yte": yte}
    peer = None
    if args.diffprivlib_python:
        start = time.perf_counter()
        peer = _diffprivlib(args.diffprivlib_python, data, args.epsilons, args.repeats)
        print(f"# diffprivlib: {time.perf_counter() - start:.0f} s", file=sys.stderr)

    header = ["dataset", "n", "d", "eps", "sklearn", "dperm auto", "alpha_"]
    if args.search:
        header.append("dperm search")
    if peer is not None:
        header += ["dpl C=1", "dpl best C", "best C"]
    header += ["gap to sklearn"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, parts in data.items():
        Xtr, ytr, Xte, yte = parts["Xtr"], parts["ytr"], parts["Xte"], parts["yte"]
        sk = LogisticRegression().fit(Xtr, ytr).score(Xte, yte)
        for eps in args.epsilons:
            accs, alpha = [], None
            for seed in range(args.repeats):
                model = DPLogisticRegression(epsilon=eps, delta=args.delta, random_state=seed).fit(Xtr, ytr)
                accs.append(model.score(Xte, yte))
                alpha = model.alpha_
            row = [name, str(Xtr.shape[0]), str(Xtr.shape[1]), f"{eps:g}", f"{sk:.4f}",
                   f"{np.mean(accs):.4f} ± {np.std(accs):.4f}", f"{alpha:.2g}"]
            if args.search:
                from dperm.model_selection import PrivateSearch

                found = [PrivateSearch(DPLogisticRegression(), epsilon=eps, delta=args.delta, random_state=seed)
                         .fit(Xtr, ytr).score(Xte, yte) for seed in range(args.repeats)]
                row.append(f"{np.mean(found):.4f} ± {np.std(found):.4f}")
            if peer is not None:
                default = peer[f"{name}|{eps}|1.0"]
                best_c = max(C_GRID, key=lambda C: peer[f"{name}|{eps}|{C}"][0])
                best = peer[f"{name}|{eps}|{best_c}"]
                row += [f"{default[0]:.4f} ± {default[1]:.4f}", f"{best[0]:.4f} ± {best[1]:.4f}", f"{best_c:g}"]
            row.append(f"{100 * (np.mean(accs) - sk):+.2f} pt")
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
