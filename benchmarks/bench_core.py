"""Core benchmark: the core learners (and objective perturbation, the auto default) on ADULT against scikit-learn and diffprivlib.

Run by hand (never in CI):

    python benchmarks/bench_core.py [--repeats 5] [--diffprivlib-python /tmp/dpl/bin/python]

Prints, for epsilon in {0.1, 1}: seconds (median of repeats), excess empirical risk and
test accuracy (means), and the ratio of seconds to scikit-learn's non-private
LogisticRegression measured in the same run.

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8, so it runs in a separate
virtual environment with scikit-learn 1.7, made for example with

    python3 -m venv /tmp/dpl && /tmp/dpl/bin/pip install "scikit-learn<1.8" diffprivlib==0.6.6

and given by --diffprivlib-python; the data reach it through a temporary .npz file and
its timings come back as JSON (the subprocess start-up is not timed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

import dperm
from dperm.datasets import load_adult
from dperm.problem import ERMProblem, solve_reference

ALGORITHMS = ("output_perturbation", "objective_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd")

_DIFFPRIVLIB_SCRIPT = textwrap.dedent(
    """
    import json, sys, time, warnings
    import numpy as np
    from diffprivlib.models import LogisticRegression
    warnings.simplefilter("ignore")
    data = np.load(sys.argv[1])
    X, y, Xt, yt = data["X"], data["y"], data["Xt"], data["yt"]
    out = []
    for eps in json.loads(sys.argv[2]):
        for r in range(int(sys.argv[3])):
            t0 = time.perf_counter()
            clf = LogisticRegression(epsilon=eps, data_norm=1.0, C=float(sys.argv[4]),
                                     fit_intercept=False, random_state=r).fit(X, y)
            sec = time.perf_counter() - t0
            out.append({"epsilon": eps, "seconds": sec, "coef": clf.coef_.ravel().tolist(),
                        "accuracy": float(clf.score(Xt, yt))})
    print(json.dumps(out))
    """
)


def accuracy(coef, X, y) -> float:
    return float(np.mean(np.where(X @ coef > 0, 1.0, -1.0) == y))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mu", type=float, default=1e-3)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--diffprivlib-python", default="/tmp/dpl/bin/python")
    args = parser.parse_args()

    X, y = load_adult(split="train", return_X_y=True)
    Xt, yt = load_adult(split="test", return_X_y=True)
    n = X.shape[0]
    problem = ERMProblem(X, y, "logistic", ("l2", args.mu), data_norm=1.0)
    reference = solve_reference(problem)
    C = 1.0 / (n * args.mu)  # scikit-learn's C for (1/n) sum loss + (mu/2)||w||^2

    sk_times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        sk = LogisticRegression(C=C, fit_intercept=False, tol=1e-6, max_iter=1000).fit(X, y)
        sk_times.append(time.perf_counter() - t0)
    sk_seconds = statistics.median(sk_times)
    rows = [("sklearn LogisticRegression (non-private)", "-", sk_seconds,
             problem.objective(sk.coef_.ravel()) - reference.objective, accuracy(sk.coef_.ravel(), Xt, yt))]

    for eps in (0.1, 1.0):
        for name in ALGORITHMS:
            times, risks, accs = [], [], []
            for r in range(args.repeats):
                t0 = time.perf_counter()
                fit = dperm.algorithms.get(name).fit(problem, dperm.PrivacyBudget(eps, args.delta), rng=r)
                times.append(time.perf_counter() - t0)
                risks.append(fit.excess_risk(problem, reference))
                accs.append(accuracy(fit.coef, Xt, yt))
            rows.append((f"dperm {name}", eps, statistics.median(times), float(np.mean(risks)), float(np.mean(accs))))

    python = Path(args.diffprivlib_python)
    if python.exists():
        with tempfile.TemporaryDirectory() as tmp:
            np.savez(Path(tmp) / "adult.npz", X=X, y=y, Xt=Xt, yt=yt)
            script = Path(tmp) / "run.py"
            script.write_text(_DIFFPRIVLIB_SCRIPT)
            result = subprocess.run(
                [str(python), str(script), str(Path(tmp) / "adult.npz"), json.dumps([0.1, 1.0]), str(args.repeats), str(C)],
                capture_output=True, text=True, check=True,
            )
        runs = json.loads(result.stdout)
        for eps in (0.1, 1.0):
            sel = [r for r in runs if r["epsilon"] == eps]
            risks = [problem.objective(np.asarray(r["coef"])) - reference.objective for r in sel]
            rows.append(("diffprivlib LogisticRegression (objective perturbation, sklearn 1.7)", eps,
                         statistics.median(r["seconds"] for r in sel), float(np.mean(risks)),
                         float(np.mean([r["accuracy"] for r in sel]))))
    else:
        print(f"(diffprivlib skipped: no interpreter at {python}; see the module docstring)")

    print(f"ADULT: n={n}, d={X.shape[1]}, test n={Xt.shape[0]}, logistic + (mu/2)||w||^2, mu={args.mu:g}, "
          f"delta={args.delta:g}, repeats={args.repeats}; non-private test accuracy {accuracy(reference.coef, Xt, yt):.4f}")
    print(f"{'method':<72} {'eps':>5} {'seconds':>9} {'x sklearn':>9} {'excess risk':>12} {'test acc':>9}")
    for method, eps, sec, risk, acc in rows:
        print(f"{method:<72} {eps!s:>5} {sec:9.4f} {sec / sk_seconds:9.2f} {risk:12.3e} {acc:9.4f}")


if __name__ == "__main__":
    main()
