"""Logistic regression at low epsilon (issue 24, item 4): ``DPLogisticRegression``'s default
against its other full-batch solvers and the default with half and twice ``alpha="auto"``,
on ADULT, BANK and CreditCard (shipped splits), eps 0.1 and 0.3, delta 1e-5, test accuracy
mean +- std over 3 seeds, and the gap to scikit-learn's default ``LogisticRegression`` in
points. Private Newton (``solver="dp_newton"``, Ganesh, Haghifam, Steinke, Thakurta 2023):
the double-noise mechanism (the paper's eigenvalue-shift coefficient c = 0.5, and c = 50, a
larger shift picked on the regression study, and ``eigenvalue_floor="stable"``) and its
noisy-Hessian variant, 15 steps, the
default's ``alpha="auto"`` as the l2 penalty. Run: ``python benchmarks/bench_logistic_low_epsilon.py``
(about 5 minutes on the shared machine, most of it noisy GD); ``--candidates`` runs only
the named ones (labels as printed, separated by semicolons), ``--datasets`` only some datasets.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

CANDIDATES = (("auto", None, None), ("objective_perturbation", None, None), ("output_perturbation", None, None),
              ("gd_output_perturbation", None, None), ("noisy_gd", None, None), ("auto", 2.0, None),
              ("auto", 0.5, None), ("dp_newton", None, None), ("dp_newton", None, {"mechanism": "noisy_hessian"}),
              ("dp_newton", None, {"trace_coefficient": 50.0}), ("dp_newton", None, {"eigenvalue_floor": "stable"}))


def label_of(solver, factor, solver_params) -> str:
    return (solver + ("" if factor is None else f", alpha x{factor:g}")
            + ("" if not solver_params else ", " + ", ".join(f"{k}={v}" for k, v in solver_params.items())))


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--candidates", default=None, help="semicolon-separated labels (as printed)")
    parser.add_argument("--datasets", default="adult,bank,credit_card")
    args = parser.parse_args(argv)
    wanted = None if args.candidates is None else {c.strip() for c in args.candidates.split(";")}
    from sklearn.linear_model import LogisticRegression

    from dperm.datasets import load
    from dperm.defaults import estimator_alpha
    from dperm.estimators import DPLogisticRegression
    from dperm.problem.losses import Logistic

    for name in args.datasets.split(","):
        Xtr, ytr = load(name, split="train", return_X_y=True)
        Xte, yte = load(name, split="test", return_X_y=True)
        sk = LogisticRegression().fit(Xtr, ytr).score(Xte, yte)
        print(f"{name}: n = {len(ytr)}, d = {Xtr.shape[1]}, scikit-learn {sk:.4f}", flush=True)
        for eps in (0.1, 0.3):
            for solver, factor, solver_params in CANDIDATES:
                label = label_of(solver, factor, solver_params)
                if wanted is not None and label not in wanted:
                    continue
                params = {} if solver_params is None else {"solver_params": solver_params}
                if factor is not None:  # the default's alpha (intercept column: row bound sqrt(2)) times factor
                    params["alpha"] = factor * estimator_alpha(Logistic(), Xtr.shape[0], Xtr.shape[1] + 1, eps, 1e-5,
                                                               data_norm=math.sqrt(2.0))
                scores, started = [], time.perf_counter()
                for seed in range(3):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = DPLogisticRegression(epsilon=eps, solver=solver, classes=[-1.0, 1.0], random_state=seed,
                                                     **params).fit(Xtr, ytr)
                    scores.append(model.score(Xte, yte))
                print(f"  eps={eps:<4g} {label:<28s} {np.mean(scores):.4f} +- {np.std(scores):.4f}  gap "
                      f"{100 * (sk - np.mean(scores)):+.2f} pts  ({(time.perf_counter() - started) / 3:.1f} s/fit)",
                      flush=True)


if __name__ == "__main__":
    main()
