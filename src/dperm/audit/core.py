"""``dperm.audit.audit``: a black-box epsilon lower bound for one mechanism family."""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from .families import SUITE, family
from .stats import ThresholdTest, choose_threshold, evaluate_threshold

__all__ = ["AuditResult", "audit", "audit_suite", "run_mechanism"]


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    algorithm : str
        The catalogue name audited.
    epsilon, delta : float
        The claim audited: the smaller of the budget asked for and the one the runs
        certified (``fit.privacy_spent``).
    epsilon_run : float
        The epsilon the mechanism was run at (``epsilon`` unless mis-calibrated).
    epsilon_lower_bound : float
        Lower bound on the mechanism's true epsilon at ``delta``, valid with probability
        ``confidence`` (over the audit's randomness) for the pair and test used.
    confidence : float
    runs : int
        Runs on each of D and D' (a quarter choose the test, the rest evaluate it).
    test : ThresholdTest
        The chosen test and its counts on the evaluation runs.
    spread : tuple of float
        Standard deviation of the projected outputs on D and on D'.
    separation : float
        ``(mean on D - mean on D') / sqrt((var_D + var_D') / 2)``: a black-box view of the
        signal-to-noise ratio (for a Gaussian output, the mu of mu-GDP; halving the
        noise doubles it).
    seconds : float
        Wall time of the runs and statistics.
    """

    algorithm: str
    epsilon: float
    delta: float
    epsilon_run: float
    epsilon_lower_bound: float
    confidence: float
    runs: int
    test: ThresholdTest
    spread: tuple
    separation: float
    seconds: float

    @property
    def violation(self) -> bool:
        """True when the lower bound exceeds the claim: the claim is refuted at this
        confidence (a privacy bug, or a deliberately mis-calibrated run)."""
        return self.epsilon_lower_bound > self.epsilon

    def summary(self) -> dict:
        """A JSON-ready description."""
        return {
            "algorithm": self.algorithm,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "epsilon_run": self.epsilon_run,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "confidence": self.confidence,
            "runs_per_side": self.runs,
            "false_positive_rate": self.test.false_positive_rate,
            "false_negative_rate": self.test.false_negative_rate,
            "violation": self.violation,
            "separation": self.separation,
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        run = "" if self.epsilon_run == self.epsilon else f" (run at epsilon {self.epsilon_run:.4g})"
        verdict = "VIOLATION" if self.violation else "ok"
        return (f"{self.algorithm}: epsilon >= {self.epsilon_lower_bound:.3f} (confidence {self.confidence:g}) "
                f"vs claim ({self.epsilon:.4g}, {self.delta:g}){run}: {verdict}")


@contextlib.contextmanager
def _single_numba_thread():
    """Each run is microseconds of work: numba's parallel launch (milliseconds under
    load) would dominate it. The audit parallelizes over nothing; restore afterwards."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def run_mechanism(algorithm: str, scenario, epsilon: float, delta: float, runs: int, seed: int,
                  progress: Callable[[int, int], None] | None = None):
    """Run ``algorithm`` ``runs`` times on each dataset of ``scenario.pair``.

    Each run is a fresh call of the catalogue function with its own Generator
    (``numpy.random.default_rng([seed, side, i])``: independent streams). Returns the
    projected outputs on D and D' and the budget the runs certified.
    """
    from ..algorithms import get
    from ..privacy.budget import PrivacyBudget
    from ..problem.erm import ERMProblem

    fit = get(algorithm).fit
    pair = scenario.pair
    budget = PrivacyBudget(epsilon, delta)
    scores = np.empty((2, runs))
    spent_eps, spent_delta = 0.0, 0.0
    with _single_numba_thread():
        for side, (X, y) in enumerate(((pair.X, pair.y), (pair.X_prime, pair.y_prime))):
            problem = ERMProblem(X, y, scenario.loss, scenario.regularizer, scenario.constraint,
                                 data_norm=scenario.data_norm)
            for i in range(runs):
                result = fit(problem, budget, rng=np.random.default_rng([seed, side, i]), **scenario.hyperparameters)
                scores[side, i] = float(np.asarray(result.coef) @ pair.direction)
                spent_eps = max(spent_eps, result.privacy_spent.epsilon)
                spent_delta = max(spent_delta, result.privacy_spent.delta)
                if progress is not None:
                    progress(side * runs + i + 1, 2 * runs)
    return scores[0], scores[1], (spent_eps, spent_delta)


def _separation(on_d: np.ndarray, on_d_prime: np.ndarray) -> float:
    gap = float(np.mean(on_d) - np.mean(on_d_prime))
    pooled = math.sqrt((float(np.var(on_d)) + float(np.var(on_d_prime))) / 2.0)
    if pooled > 0:
        return gap / pooled
    return 0.0 if gap == 0 else math.copysign(math.inf, gap)


def _check_runs(runs) -> int:
    if isinstance(runs, bool) or int(runs) != runs or runs < 20:
        raise ValueError(f"runs must be an integer >= 20, got {runs!r}")
    return int(runs)


# Share of the runs that choose the test. Choosing needs only the rough location of the
# best threshold; the bound's precision grows with the evaluation runs. Simulated on the
# suite's laws (benchmarks/audit_power.py), a quarter catches half the noise of
# noisy_gd in 150 of 150 audits at 4000 runs, where a half missed 4.
SELECTION_SHARE = 0.25


def audit(
    algorithm: str,
    epsilon: float,
    delta: float = 0.0,
    *,
    runs: int = 4000,
    miscalibrated: bool = False,
    epsilon_run: float | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> AuditResult:
    """Black-box lower bound on the epsilon of one of dperm's mechanisms.

    Runs the catalogue algorithm ``runs`` times on each of two worst-case replace-one
    neighbours D and D' (:mod:`dperm.audit.families`), projects every released vector
    on the direction in which they differ, chooses on a quarter of the runs the threshold
    test with the largest bound, and evaluates it on the other three quarters: with ``FPR+`` and
    ``FNR+`` one-sided Clopper-Pearson upper bounds (each at ``1 - (1 - confidence)/2``),

        ``epsilon >= max(log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+))``

    holds with probability at least ``confidence`` (Jagielski, Ullman, Oprea 2020;
    Nasr et al. 2021). The mechanism sees only public inputs and its own seed; nothing
    of its internals is read except ``fit.coef`` and ``fit.privacy_spent``.

    Parameters
    ----------
    algorithm : str
        A catalogue name with an audit scenario: ``output_perturbation`` (Gaussian when
        delta > 0, L2-Laplace when delta = 0), ``gd_output_perturbation``,
        ``objective_perturbation``, ``noisy_gd``, ``dp_gd``, ``dp_sgd`` (Poisson batches),
        ``dp_sgd_fixed_batch`` (dp_sgd with fixed-size batches on the swapped-row pair),
        ``exponential_mechanism``, ``dp_fw_l1``.
    epsilon, delta : float
        The claim to audit. The mechanism runs at this budget unless mis-calibrated.
    runs : int
        Runs on each dataset (default 4000: at the suite's claims, a run with half the
        claim's noise was caught in every simulated audit, see docs/audit.md).
    miscalibrated : bool
        Run at the epsilon at which the family's noise is half the claim's
        (:mod:`dperm.audit.halving`), and audit against the claim: a sound audit must
        then report ``violation``.
    epsilon_run : float, optional
        Run at this epsilon instead (overrides ``miscalibrated``).
    confidence : float
        Confidence of the lower bound (default 0.95).
    seed : int
        Seeds every run (reproducible audits).
    progress : callable, optional
        Called as ``progress(done, total)`` after every run.

    Returns
    -------
    AuditResult

    Notes
    -----
    A lower bound is evidence, not proof, in one direction only. A bound above the
    claim refutes the claim (at the stated confidence): the implementation, its
    accounting or its sensitivity is wrong. A bound below the claim proves nothing:
    it holds for this pair, this test and this many runs, and a tight audit of an
    (epsilon, delta) claim needs events of probability near delta, far beyond a few
    thousand runs. What it does show is that the mechanism's noise is not grossly
    smaller than the claim needs, since the same audit catches half the noise.

    References
    ----------
    Jagielski, Ullman, Oprea. Auditing differentially private machine learning: how
    private is private SGD? NeurIPS 2020. Nasr, Song, Thakurta, Papernot, Carlini.
    Adversary instantiation: lower bounds for differentially private machine learning.
    IEEE S&P 2021. Kairouz, Oh, Viswanath. The composition theorem for differential
    privacy. ICML 2015 (the hypothesis-testing characterization).
    """
    fam = family(algorithm)
    epsilon, delta = float(epsilon), float(delta)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    runs = _check_runs(runs)
    if epsilon_run is None:
        epsilon_run = fam.halving(epsilon, delta) if miscalibrated else epsilon
    epsilon_run = float(epsilon_run)
    if not (math.isfinite(epsilon_run) and epsilon_run > 0):
        raise ValueError(f"epsilon_run must be a finite number > 0, got {epsilon_run}")
    started = time.perf_counter()
    scenario = fam.build(epsilon, delta, epsilon_run)
    on_d, on_d_prime, (spent_eps, spent_delta) = run_mechanism(fam.algorithm, scenario, epsilon_run, delta, runs,
                                                               seed, progress)
    claim_eps, claim_delta = min(epsilon, spent_eps), min(delta, spent_delta)
    k = int(runs * SELECTION_SHARE)
    chosen = choose_threshold(on_d[:k], on_d_prime[:k], claim_delta, confidence)
    test = evaluate_threshold(chosen, on_d[k:], on_d_prime[k:], claim_delta, confidence)
    return AuditResult(
        algorithm=algorithm,
        epsilon=claim_eps,
        delta=claim_delta,
        epsilon_run=epsilon_run,
        epsilon_lower_bound=test.epsilon,
        confidence=confidence,
        runs=runs,
        test=test,
        spread=(float(np.std(on_d)), float(np.std(on_d_prime))),
        separation=_separation(on_d, on_d_prime),
        seconds=time.perf_counter() - started,
    )


def audit_suite(runs: int = 4000, *, seeds: tuple = (1, 2), progress: Callable[[str], None] | None = None) -> Iterator[tuple]:
    """Every family of :data:`dperm.audit.SUITE` at its claim, correct and with half the
    noise: the slow tests' audits (same seeds) and the table of docs/audit.md.

    Yields ``(correct, half_noise)`` :class:`AuditResult` pairs as they complete;
    ``progress(label)`` is called before each audit.
    """
    for algorithm, epsilon, delta in SUITE:
        pair = []
        for seed, miscalibrated in zip(seeds, (False, True)):
            if progress is not None:
                progress(f"{algorithm} ({epsilon:g}, {delta:g}){' half noise' if miscalibrated else ''}")
            pair.append(audit(algorithm, epsilon, delta, runs=runs, seed=seed, miscalibrated=miscalibrated))
        yield tuple(pair)
