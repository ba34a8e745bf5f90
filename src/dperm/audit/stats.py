"""The statistics of a black-box privacy audit: Clopper-Pearson bounds on a threshold
test's error rates and the epsilon lower bound they imply.

An (epsilon, delta)-DP mechanism M satisfies, for every neighbouring pair (D, D') and
every event S, ``P[M(D) in S] <= e^eps P[M(D') in S] + delta`` and the same with D and D'
exchanged. For the test "guess D when the output lands in S", with false-positive rate
``FPR = P[M(D') in S]`` and false-negative rate ``FNR = P[M(D) not in S]``, this reads
(Kairouz, Oh, Viswanath 2015)::

    eps >= log((1 - delta - FNR) / FPR)   and   eps >= log((1 - delta - FPR) / FNR).

An audit replaces FPR and FNR by one-sided Clopper-Pearson upper confidence bounds,
each at level ``alpha / 2`` so that both hold together with probability at least
``1 - alpha`` (a union bound); the resulting epsilon is then a lower bound on the true
epsilon with confidence ``1 - alpha`` (Jagielski, Ullman, Oprea 2020; Nasr, Song,
Thakurta, Papernot, Carlini 2021).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "epsilon_lower_bound",
    "ThresholdTest",
    "choose_threshold",
    "evaluate_threshold",
]


def _check_confidence(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return confidence


def clopper_pearson_upper(successes, trials, confidence: float):
    """One-sided Clopper-Pearson upper bound on a binomial proportion.

    The largest p with ``P[Binomial(trials, p) <= successes] >= 1 - confidence``, that is
    the ``confidence`` quantile of ``Beta(successes + 1, trials - successes)`` (1 when
    every trial succeeded). Exact: the true p lies below it with probability at least
    ``confidence``, whatever p is. Vectorized over ``successes`` and ``trials``.
    """
    confidence = _check_confidence(confidence)
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must lie between 0 and trials")
    full = k >= n
    bound = stats.beta.ppf(confidence, k + 1.0, np.where(full, 1.0, n - k))
    return np.where(full, 1.0, bound)


def clopper_pearson_lower(successes, trials, confidence: float):
    """One-sided Clopper-Pearson lower bound: the ``1 - confidence`` quantile of
    ``Beta(successes, trials - successes + 1)`` (0 when there is no success)."""
    confidence = _check_confidence(confidence)
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must lie between 0 and trials")
    none = k <= 0
    bound = stats.beta.ppf(1.0 - confidence, np.where(none, 1.0, k), n - k + 1.0)
    return np.where(none, 0.0, bound)


def epsilon_lower_bound(false_positives, false_negatives, negatives, positives, delta: float,
                        confidence: float = 0.95):
    """Epsilon lower bound, with confidence ``confidence``, from a threshold test's counts.

    Parameters
    ----------
    false_positives : int or array of int
        Runs on D' (``negatives`` of them) the test assigned to D.
    false_negatives : int or array of int
        Runs on D (``positives`` of them) the test assigned to D'.
    negatives, positives : int
        Numbers of runs on D' and on D.
    delta : float
        The delta of the claim being audited.
    confidence : float
        Joint confidence; each rate gets a one-sided Clopper-Pearson upper bound at
        ``1 - (1 - confidence) / 2``.

    Returns
    -------
    float or ndarray
        ``max(0, log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+))`` with
        ``FPR+``, ``FNR+`` the upper bounds (0 where neither logarithm is positive).
    """
    confidence = _check_confidence(confidence)
    delta = float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    each = 1.0 - (1.0 - confidence) / 2.0
    fpr = clopper_pearson_upper(false_positives, negatives, each)
    fnr = clopper_pearson_upper(false_negatives, positives, each)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.log(np.maximum(1.0 - delta - fnr, 0.0)) - np.log(fpr)
        second = np.log(np.maximum(1.0 - delta - fpr, 0.0)) - np.log(fnr)
    best = np.fmax(np.nan_to_num(first, nan=0.0, neginf=0.0), np.nan_to_num(second, nan=0.0, neginf=0.0))
    best = np.maximum(best, 0.0)
    return float(best) if best.ndim == 0 else best


@dataclass(frozen=True)
class ThresholdTest:
    """The test "guess D when ``sign * score > threshold``", and its counts on a sample.

    ``false_positives`` counts runs on D' above the threshold, ``false_negatives`` runs
    on D at or below it; ``epsilon`` is :func:`epsilon_lower_bound` of those counts.
    """

    threshold: float
    sign: float
    false_positives: int
    false_negatives: int
    negatives: int
    positives: int
    epsilon: float

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.negatives

    @property
    def false_negative_rate(self) -> float:
        return self.false_negatives / self.positives


def _as_scores(name: str, scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if scores.size == 0 or not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} must be a non-empty array of finite numbers")
    return scores


def choose_threshold(scores_d, scores_d_prime, delta: float, confidence: float = 0.95) -> ThresholdTest:
    """The threshold test with the largest epsilon lower bound on this sample.

    Every distinct score, in both orientations (``sign = +1``: large scores point to D;
    ``-1``: small ones do), is a candidate; all are scored at once from sorted arrays.
    Choosing on a sample and bounding on the same sample would be optimistic (the
    maximum over many tests is not a confidence bound): use it on held-out runs, and
    :func:`evaluate_threshold` on fresh ones.
    """
    pos = _as_scores("scores_d", scores_d)
    neg = _as_scores("scores_d_prime", scores_d_prime)
    best = None
    for sign in (1.0, -1.0):
        p, q = np.sort(sign * pos), np.sort(sign * neg)
        candidates = np.unique(np.concatenate([p, q]))
        false_neg = np.searchsorted(p, candidates, side="right")  # D runs <= t
        false_pos = q.size - np.searchsorted(q, candidates, side="right")  # D' runs > t
        eps = epsilon_lower_bound(false_pos, false_neg, q.size, p.size, delta, confidence)
        i = int(np.argmax(eps))
        if best is None or eps[i] > best.epsilon:
            best = ThresholdTest(float(candidates[i]), sign, int(false_pos[i]), int(false_neg[i]), q.size, p.size,
                                 float(eps[i]))
    return best


def evaluate_threshold(test: ThresholdTest, scores_d, scores_d_prime, delta: float,
                       confidence: float = 0.95) -> ThresholdTest:
    """The counts and epsilon lower bound of a fixed test on fresh runs (a valid bound
    when the test was chosen without them)."""
    pos = test.sign * _as_scores("scores_d", scores_d)
    neg = test.sign * _as_scores("scores_d_prime", scores_d_prime)
    false_neg = int(np.count_nonzero(pos <= test.threshold))
    false_pos = int(np.count_nonzero(neg > test.threshold))
    eps = epsilon_lower_bound(false_pos, false_neg, neg.size, pos.size, delta, confidence)
    return ThresholdTest(test.threshold, test.sign, false_pos, false_neg, neg.size, pos.size, float(eps))
