"""Cost of the secure path per algorithm: wall time of one fit on ADULT with
``random_state=None`` (floating-point-safe releases from os.urandom) against a seed
(NumPy noise), for every algorithm whose releases take the secure path.

Run by hand (never in CI):

    python benchmarks/bench_secure_path.py [--repeats 3]

Prints the median seconds of each and their ratio; seeded and secure runs alternate so
that machine load hits both alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from dperm.algorithms import get
from dperm.datasets import load_adult
from dperm.privacy import PrivacyBudget
from dperm.problem import ERMProblem

# (algorithm, regularizer, constraint, extra parameters, delta): problems each accepts on ADULT
CASES = [
    ("output_perturbation", ("l2", 1e-3), None, {}, 1e-6),
    ("output_perturbation", ("l2", 1e-3), None, {}, 0.0),
    ("objective_perturbation", ("l2", 1e-3), None, {}, 1e-6),
    ("objective_perturbation", ("l2", 1e-3), None, {}, 0.0),
    ("noisy_gd", ("l2", 1e-3), None, {"max_steps": 200}, 1e-6),
    ("dp_accmd", None, ("l1_ball", 5.0), {"steps": 200}, 1e-6),
    ("dp_fw_l2", None, ("l2_ball", 5.0), {"max_steps": 200}, 1e-6),
    ("dp_gd", ("l2", 1e-3), None, {"steps": 200}, 1e-6),
    ("dp_svrg", ("l2", 1e-3), None, {"epochs": 2}, 1e-6),
    ("dp_sosp", ("l2", 1e-3), None, {"steps": 100}, 1e-6),
    ("dp_gd_so", None, ("l2_ball", 5.0), {"steps": 50}, 1e-6),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = load_adult(return_X_y=True)
    y = 2.0 * y - 1.0 if y.min() == 0 else y
    print(f"ADULT n={X.shape[0]} d={X.shape[1]}; epsilon 1; median of {args.repeats} fits (s)")
    print(f"{'algorithm':>24} {'delta':>6} {'seeded':>8} {'secure':>8} {'ratio':>6}")
    warnings.simplefilter("ignore")
    for name, reg, constraint, params, delta in CASES:
        budget = PrivacyBudget(1.0, delta)
        problem = ERMProblem(X, y, "logistic", reg, constraint)
        times = {"seeded": [], "secure": []}
        for repeat in range(args.repeats + 1):  # the first pair warms up (numba, caches)
            for kind, rng in (("seeded", repeat), ("secure", None)):
                t0 = time.perf_counter()
                get(name).fit(problem, budget, rng=rng, **params)
                if repeat:
                    times[kind].append(time.perf_counter() - t0)
        a, b = statistics.median(times["seeded"]), statistics.median(times["secure"])
        print(f"{name:>24} {delta:>6.0e} {a:>8.3f} {b:>8.3f} {b / a:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
