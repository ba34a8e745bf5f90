"""Risk cost of linear-in-n dp_sgd schedules against the default (paper-ratio) schedule.

Run by hand (never in CI)::

    python benchmarks/bench_schedules.py --repeats 10 --epochs 16 64 --mu 1e-3
    python benchmarks/bench_schedules.py --repeats 10 --no-paper --schedules 64x1 16x4 8x8 --mu 1e-3

Logistic loss + (mu/2)||w||^2 on the training split of ADULT, BANK and CreditCard (rows at
norm 1), epsilon = 1, delta = 1e-5 (below 1/n on all three). For each schedule: mean excess
empirical risk ``F(w_priv) - F(w_hat)`` over the repeats (w_hat from ``solve_reference``),
its standard error, the ratio to the first schedule's mean (the paper-ratio schedule unless
``--no-paper``), per-example gradients and
median seconds. Repeat r uses seed r for every schedule.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dperm.algorithms.schedules import sgd_epochs_schedule, sgd_paper_ratio_schedule, sgd_steps_for_epochs
from dperm.algorithms.sgd import dp_sgd
from dperm.datasets import load_adult, load_bank, load_credit_card
from dperm.privacy.budget import PrivacyBudget
from dperm.problem import ERMProblem, solve_reference

DATASETS = {"ADULT": load_adult, "BANK": load_bank, "CreditCard": load_credit_card}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--epochs", nargs="*", type=float, default=[16.0, 64.0])
    parser.add_argument("--schedules", nargs="*", default=[],
                        help="EPOCHSxFACTOR: EPOCHS passes with batches of FACTOR * round(sqrt(n)) rows")
    parser.add_argument("--no-paper", action="store_true", help="skip the paper-ratio schedule")
    parser.add_argument("--mu", type=float, default=1e-3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    args = parser.parse_args(argv)
    budget = PrivacyBudget(args.epsilon, 1e-5)
    print(f"{'dataset':<11}{'schedule':<14}{'batch':>6}{'steps':>9}{'epochs':>8}{'excess risk':>13}{'s.e.':>10}"
          f"{'x first':>10}{'seconds':>9}", flush=True)
    for name in args.datasets:
        X, y = DATASETS[name](return_X_y=True)  # ADULT: its training split
        problem = ERMProblem(X, y, "logistic", ("l2", args.mu))
        best = solve_reference(problem).objective
        n = problem.n_samples
        schedules = [] if args.no_paper else [("paper ratio", sgd_paper_ratio_schedule(n))]
        schedules += [(f"{e:g} epochs", sgd_epochs_schedule(n, e)) for e in args.epochs]
        for spec in args.schedules:
            e, factor = (float(v) for v in spec.split("x"))
            b = min(n, round(factor * max(1, round(n**0.5))))
            schedules.append((f"{e:g} ep x{factor:g}", (b, sgd_steps_for_epochs(n, b, e))))
        base = None
        for label, (b, T) in schedules:
            risks, secs = [], []
            for r in range(args.repeats):
                t0 = time.perf_counter()
                fit = dp_sgd(problem, budget, rng=np.random.default_rng(r), batch_size=b, steps=T)
                secs.append(time.perf_counter() - t0)
                risks.append(problem.objective(fit.coef) - best)
            mean = statistics.fmean(risks)
            se = statistics.stdev(risks) / len(risks) ** 0.5 if len(risks) > 1 else float("nan")
            base = mean if base is None else base
            print(f"{name:<11}{label:<14}{b:>6}{T:>9}{b * T / n:>8.1f}{mean:>13.4g}{se:>10.2g}{mean / base:>10.2f}"
                  f"{statistics.median(secs):>9.2f}", flush=True)


if __name__ == "__main__":
    main()
