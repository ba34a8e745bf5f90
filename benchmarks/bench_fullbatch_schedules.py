"""Risk cost and time of the capped full-batch default schedules against the theorems' T.

Run by hand (never in CI)::

    python benchmarks/bench_fullbatch_schedules.py --repeats 20 --mu 1e-3

gd_output_perturbation (Zhang, Zheng, Mou, Wang 2017) with its default T (the theorem's T
capped where the bound's optimization term has fallen to its noise term,
``dperm.algorithms.schedules.gd_output_perturbation_capped_steps``) and with
``steps="theorem"``, on the training split of ADULT, BANK and CreditCard (rows at norm 1),
logistic loss + (mu/2)||w||^2, epsilon = 1, delta = 1e-5. The gradient-descent run is
deterministic, so each schedule runs once and its repeats redraw only the output noise
(seeds 0..repeats-1, the same for both schedules): mean excess empirical risk
``F(w_priv) - F(w_hat)`` with its standard error, the ratio to the theorem's mean, and
the mean ``F(w_T) - F(w_hat)`` of the un-noised iterate (the optimization part). The
seconds are the gradient-descent run; scikit-learn's lbfgs (``C = 1 / (n mu)``, default
tolerance, one run) is timed on the same data for scale.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dperm.algorithms.output_perturbation import gd_output_perturbation_steps, prepare_gd_output_perturbation
from dperm.datasets import load_adult, load_bank, load_credit_card
from dperm.privacy.budget import PrivacyBudget
from dperm.problem import ERMProblem, solve_reference

DATASETS = {"ADULT": load_adult, "BANK": load_bank, "CreditCard": load_credit_card}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--mu", type=float, default=1e-3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--schedules", nargs="+", default=["theorem", "default"],
                        help="'theorem', 'default', or a share of the cap rule (e.g. 0.3)")
    args = parser.parse_args(argv)
    from sklearn.linear_model import LogisticRegression

    budget = PrivacyBudget(args.epsilon, 1e-5)
    print(f"{'dataset':<11}{'schedule':<10}{'steps':>7}{'excess risk':>13}{'s.e.':>10}{'x theorem':>10}"
          f"{'opt. part':>11}{'seconds':>9}{'x sklearn':>10}", flush=True)
    for name in args.datasets:
        X, y = DATASETS[name](return_X_y=True)
        problem = ERMProblem(X, y, "logistic", ("l2", args.mu))
        best = solve_reference(problem).objective
        t0 = time.perf_counter()
        LogisticRegression(C=1.0 / (problem.n_samples * args.mu), fit_intercept=False).fit(X, y)
        sk = time.perf_counter() - t0
        base = None
        for label in args.schedules:
            steps = None if label == "default" else "theorem" if label == "theorem" else None
            if label not in ("default", "theorem"):
                eta = 1.0 / (args.mu + problem.smoothness)
                steps = gd_output_perturbation_steps(problem, budget, problem.lipschitz / args.mu, eta,
                                                     np.zeros(problem.n_features), share=float(label))[0]
                label = f"share {label}"
            t0 = time.perf_counter()
            prepared = prepare_gd_output_perturbation(problem, budget, steps=steps)
            seconds = time.perf_counter() - t0
            risks = [problem.objective(prepared.draw(problem, np.random.default_rng(r))) - best
                     for r in range(args.repeats)]
            mean = statistics.fmean(risks)
            se = statistics.stdev(risks) / len(risks) ** 0.5
            base = mean if base is None else base
            print(f"{name:<11}{label:<10}{prepared.hyperparameters['steps']:>7}{mean:>13.4g}{se:>10.2g}"
                  f"{mean / base:>10.3f}{problem.objective(prepared.point) - best:>11.3g}{seconds:>9.2f}"
                  f"{seconds / sk:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
