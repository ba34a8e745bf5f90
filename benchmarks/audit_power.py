"""How many runs the audit needs: the probability that ``dperm.audit`` catches a run
with half the noise, and where its bound sits for a correct run, per family.

The audit scenarios of :mod:`dperm.audit.families` are built so that each family's
projected output has a law known in closed form (a Gaussian shift, a Laplace shift, a
Bernoulli-subsampled Gaussian mixture, a two- or three-point Gibbs law). This script
samples those laws directly (no mechanism runs: milliseconds per audit) and applies the
audit's statistics (threshold chosen on a quarter of the runs, Clopper-Pearson bound
on the rest, confidence 0.95) ``--reps`` times per run count.

    PYTHONPATH=src python benchmarks/audit_power.py [--reps 200] [--runs 1000 2000 4000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from dperm.audit import SUITE, FAMILIES, choose_threshold, evaluate_threshold
from dperm.audit.core import SELECTION_SHARE
from dperm.audit.families import N_SAMPLES, _SGD_BATCH, _objective_noise_epsilon, _OBJECTIVE_MU, _OBJECTIVE_SHARES, _tail_offset
from dperm.audit.halving import gdp_mu, poisson_gaussian_noise_multiplier


def _gaussian(shift):
    return lambda rng, N: (rng.normal(shift, 1.0, N), rng.normal(0.0, 1.0, N))


def _noisy_gd_factor(T: int) -> float:
    """Separation of the average of w_0..w_{T-1} relative to that of w_T (linear regime)."""
    return (T - 1) * T / (2.0 * math.sqrt(T) * math.sqrt((T - 1) * T * (2 * T - 1) / 6.0))


def _gibbs(logits_d, logits_d_prime, values):
    def probs(logits):
        p = np.exp(logits - logits.max())
        return p / p.sum()
    p, q = probs(logits_d), probs(logits_d_prime)
    return lambda rng, N: (rng.choice(values, N, p=p), rng.choice(values, N, p=q))


def law(algorithm: str, eps: float, delta: float, eps_run: float):
    """A sampler ``(rng, N) -> (outputs on D, outputs on D')`` of the projected output."""
    if algorithm in ("gd_output_perturbation", "dp_gd") or (algorithm == "output_perturbation" and delta > 0):
        return _gaussian(gdp_mu(eps_run, delta))
    if algorithm == "output_perturbation":  # L2-Laplace in d = 1: Laplace, shift 1, scale 1/eps
        return lambda rng, N: (rng.laplace(1.0, 1.0 / eps_run, N), rng.laplace(0.0, 1.0 / eps_run, N))
    if algorithm == "noisy_gd":
        return _gaussian(gdp_mu(eps_run, delta) * _noisy_gd_factor(10))
    if algorithm == "objective_perturbation":
        eps_b = _objective_noise_epsilon(eps_run, N_SAMPLES, _OBJECTIVE_MU, 1.0)
        return _gaussian(gdp_mu(eps_b, (1.0 - _OBJECTIVE_SHARES["output_share"]) * delta))
    if algorithm == "dp_sgd":
        q = _SGD_BATCH / N_SAMPLES
        z = poisson_gaussian_noise_multiplier(eps_run, q, 1, delta)

        def sample(rng, N):
            return (rng.binomial(1, q, N) + z * rng.standard_normal(N),
                    -rng.binomial(1, q, N) + z * rng.standard_normal(N))
        return sample
    S = _tail_offset(eps)
    if algorithm == "exponential_mechanism":
        j = np.array([-1.0, 0.0, 1.0])
        return _gibbs(eps_run * (S + 1) * j / 4, eps_run * (S - 1) * j / 4, j)
    if algorithm == "dp_fw_l1":
        return _gibbs(np.array([0.0, eps_run * (S + 1) / 2]), np.array([0.0, eps_run * (S - 1) / 2]), np.array([-1.0, 1.0]))
    raise ValueError(algorithm)


def audit_bounds(sampler, runs: int, delta: float, reps: int, rng) -> np.ndarray:
    out = np.empty(reps)
    k = int(runs * SELECTION_SHARE)
    for r in range(reps):
        d, dp = sampler(rng, runs)
        test = choose_threshold(d[:k], dp[:k], delta)
        out[r] = evaluate_threshold(test, d[k:], dp[k:], delta).epsilon
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--runs", type=int, nargs="+", default=[1000, 2000, 4000])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| family (claim) | runs | P(caught), half noise | P(bound > claim), correct | bound, correct: median / 99th pct |")
    print("|---|---|---|---|---|")
    for algorithm, eps, delta in SUITE:
        eps_half = FAMILIES[algorithm].halving(eps, delta)
        name = f"{algorithm} ({eps:g}, {delta:g})"
        for runs in args.runs:
            caught = audit_bounds(law(algorithm, eps, delta, eps_half), runs, delta, args.reps, rng)
            correct = audit_bounds(law(algorithm, eps, delta, eps), runs, delta, args.reps, rng)
            print(f"| {name} | {runs} | {np.mean(caught > eps):.3f} | {np.mean(correct > eps):.3f} "
                  f"| {np.median(correct):.3f} / {np.percentile(correct, 99):.3f} |", flush=True)


if __name__ == "__main__":
    main()
