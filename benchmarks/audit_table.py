"""The table of docs/audit.md: for each audited family, the epsilon lower bound of a
correct run and of a run with half the noise, against the claim.

Same audits (claims, runs, seeds) as the slow tests of tests/test_audit.py:

    PYTHONPATH=src python benchmarks/audit_table.py [--runs 4000]
"""

from __future__ import annotations

import argparse
import time

from dperm.audit import audit_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000, help="runs on each dataset (default 4000)")
    args = parser.parse_args()
    print("| family | claim (eps, delta) | lower bound, correct | separation | epsilon run at, half noise "
          "| lower bound, half noise | separation | caught | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for ok, bad in audit_suite(args.runs):
        algorithm, delta = ok.algorithm, ok.delta
        label = algorithm + ("" if algorithm != "output_perturbation" else (" (Gaussian)" if delta else " (L2-Laplace)"))
        print(f"| {label} | ({ok.epsilon:.4g}, {ok.delta:g}) | {ok.epsilon_lower_bound:.3f}"
              f"{' (VIOLATION)' if ok.violation else ''} | {ok.separation:.3f} | {bad.epsilon_run:.3f} "
              f"| {bad.epsilon_lower_bound:.3f} | {bad.separation:.3f} | {'yes' if bad.violation else 'NO'} "
              f"| {ok.seconds + bad.seconds:.0f} |", flush=True)
    print(f"\ntotal {time.perf_counter() - started:.0f} s, {args.runs} runs per dataset per audit")


if __name__ == "__main__":
    main()
