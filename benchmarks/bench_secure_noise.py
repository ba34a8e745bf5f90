"""Cost of the floating-point-safe releases against today's NumPy noise.

Run by hand (never in CI):

    python benchmarks/bench_secure_noise.py [--repeats 50]

For d in {100, 1000, 10000} prints the median seconds of one release:
``values + rng.normal(0, sigma, d)`` against :func:`secure_gaussian_release` (os.urandom
source, and a seeded GeneratorSource to separate sampling from the randomness source),
and the L2-Laplace sampler against :func:`secure_laplace_release`; then one
``output_perturbation`` fit on ADULT and the ratio
``(fit + secure release - NumPy release) / fit``: the time a single-release fit would take
on the secure path, relative to today's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dperm
from dperm.datasets import load_adult
from dperm.privacy.exact_sampling import GeneratorSource, SecureRandom
from dperm.privacy.noise import l2_laplace_noise
from dperm.privacy.secure_release import secure_gaussian_release, secure_laplace_release
from dperm.problem import ERMProblem


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    secure, seeded = SecureRandom(), GeneratorSource(0)
    sigma, sensitivity, epsilon = 3.73, 1.0, 1.0

    print(f"{'d':>6} {'numpy normal':>13} {'secure gauss':>13} {'seeded exact':>13} "
          f"{'l2-laplace':>11} {'secure lap':>11}   (ms, median of {args.repeats})")
    for d in (100, 1000, 10_000):
        values = rng.normal(size=d)
        cells = [
            median_seconds(lambda: values + rng.normal(0.0, sigma, d), args.repeats),
            median_seconds(lambda: secure_gaussian_release(values, sigma, sensitivity, source=secure), args.repeats),
            median_seconds(lambda: secure_gaussian_release(values, sigma, sensitivity, source=seeded), args.repeats),
            median_seconds(lambda: values + l2_laplace_noise(rng, d, sensitivity / epsilon), args.repeats),
            median_seconds(lambda: secure_laplace_release(values, epsilon, sensitivity, source=secure), args.repeats),
        ]
        print(f"{d:>6} " + " ".join(f"{1e3 * c:>13.3f}" if i < 3 else f"{1e3 * c:>11.3f}" for i, c in enumerate(cells)))

    X, y = load_adult(return_X_y=True)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=1.0)
    algorithm = dperm.algorithms.get("output_perturbation")
    budget = dperm.PrivacyBudget(1.0, 1e-5)
    fit_seconds = median_seconds(lambda: algorithm.fit(problem, budget, rng=0), max(3, args.repeats // 10))
    d = X.shape[1]
    values = rng.normal(size=d)
    numpy_release = median_seconds(lambda: values + rng.normal(0.0, sigma, d), args.repeats)
    secure_release = median_seconds(lambda: secure_gaussian_release(values, sigma, sensitivity, source=secure),
                                    args.repeats)
    ratio = (fit_seconds + secure_release - numpy_release) / fit_seconds
    print(f"\nADULT output_perturbation fit (d = {d}): {1e3 * fit_seconds:.1f} ms; secure release "
          f"{1e3 * secure_release:.2f} ms vs {1e3 * numpy_release:.3f} ms: secure fit / today's fit = {ratio:.3f}")


if __name__ == "__main__":
    main()
