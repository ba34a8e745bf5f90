"""Private feature selection by Kendall rank correlation (DPKendall).

Dick, Gillenwater and Joseph (2023), "Better private linear regression through better
private feature selection", Algorithm 1 (DPKendall): k rounds of the exponential
mechanism ("peeling"), each at epsilon / k. Round 1 scores every candidate column j by
its rank correlation with the target, ``|tau(X_j, y)|``; round i > 1 scores each column
not yet chosen by that minus the mean of ``|tau(X_j, X_s)|`` over the columns s chosen so
far (a column that repeats a chosen one scores lower). A chosen column is never drawn
again.

The statistic is Kendall's tau-a on the scale of the paper, the sum over the n (n - 1) / 2
pairs of rows of ``sgn(x_i - x_i') sgn(v_i - v_i')`` divided by ``n - 1`` (that is
``n tau / 2``), with n the table's number of rows (public). A pair where either value is
missing (not a finite number) or tied contributes 0. Replace-one sensitivity: one row is
in n - 1 pairs and each term moves by at most 2, so the statistic and its absolute value
move by at most 2; round 1's score has sensitivity 2, later rounds' 4 (the target term plus
the mean of the column terms). The paper states 3/2 and 3 for add-remove neighbours; this
project's relation is replace-one. Tau-b (scipy's default, ties corrected by a data
dependent denominator) would not have this sensitivity: the count is exact integer
arithmetic here, recovered from scipy's tau-b and the tie counts.

Rank statistics need no bounds, so the selection runs on the raw columns before the
preprocessing spends its per-column draws (:class:`~dperm.pipeline.DPPipeline`): the
preprocessing's budget then goes to the kept columns only. Pure epsilon-DP; the event is
the composition of the k exponential-mechanism draws.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..privacy import events as ev

__all__ = ["kendall_statistics", "kendall_select", "selection_event", "selection_size", "SELECTION_SHARE",
           "SELECTION_GAP", "SELECTION_MIN_KEPT", "SELECTION_MAX_FRACTION", "SENSITIVITY_FIRST",
           "SENSITIVITY_LATER"]

SENSITIVITY_FIRST = 2.0  # of |n tau / 2| under replace-one (see the module docstring)
SENSITIVITY_LATER = 4.0  # the target term plus the mean of the chosen columns' terms

# The default rule (docs/results.md, "Private feature selection", measured on the real tables):
SELECTION_SHARE = 0.2  # of epsilon, taken from the preprocessing's share (0.1 and 0.3 measured: worse)
SELECTION_GAP = 0.2  # the rank correlation a kept column should beat a useless one by (the rule's tau0)
SELECTION_MIN_KEPT = 3  # fewer kept columns lost signal spread over several (nmes1988, benefits, saratoga)
SELECTION_MAX_FRACTION = 0.25  # select only where at least 3/4 of the candidates go (at 1/2 it engaged on
# 8- and 9-column tables and lost: computers 0.646 -> 0.443 R^2, fair 0.719 -> 0.705)


def selection_size(n: int, columns: int, epsilon: float) -> int:
    """How many columns to keep, from public inputs only (n, the candidate columns, the
    selection's epsilon); 0: do not select.

    Each of the k rounds draws at ``epsilon / k`` with sensitivity 4, so a column whose
    score beats each other column's by ``n g / 2`` (``g`` a gap in tau) is drawn with
    probability at least 3/4 when ``(epsilon / k) (n g / 2) / 8 >= ln(3 (columns - 1))``
    (the exponential mechanism's bound, McSherry and Talwar 2007). k is the largest such
    count at ``g =`` :data:`SELECTION_GAP`; the selection runs (k > 0) only when k is at
    least :data:`SELECTION_MIN_KEPT` (fewer draws than that are affordable: the budget is
    too small for the selection to find the columns) and at most
    :data:`SELECTION_MAX_FRACTION` of the candidates (a budget large enough for more
    serves every column well). Measured in docs/results.md."""
    if not (isinstance(n, (int, np.integer)) and n > 1 and columns >= 2 and epsilon > 0):
        return 0
    k = int(math.floor(float(epsilon) * float(n) * SELECTION_GAP / (16.0 * math.log(3.0 * (columns - 1)))))
    return k if SELECTION_MIN_KEPT <= k <= SELECTION_MAX_FRACTION * columns else 0


def _pair_sum(x: np.ndarray, v: np.ndarray) -> int:
    """``sum_{i < i'} sgn(x_i - x_i') sgn(v_i - v_i')`` over the rows where both are finite,
    as an exact integer (scipy's tau-b times its tie-corrected denominator, rounded: the
    sum is an integer below 2^53 in magnitude for n < 10^8, and the float error is far
    below 1/2)."""
    from scipy import stats

    keep = np.isfinite(x) & np.isfinite(v)
    x, v = x[keep], v[keep]
    m = x.size
    if m < 2:
        return 0
    if m <= 64:  # small: the sum itself (scipy's p-value needs m > 2)
        return int(np.sum(np.triu(np.sign(x[:, None] - x[None, :]) * np.sign(v[:, None] - v[None, :]), 1)))

    def tied_pairs(values):
        _, counts = np.unique(values, return_counts=True)
        return int(np.sum(counts * (counts - 1) // 2))

    pairs = m * (m - 1) // 2
    tx, tv = tied_pairs(x), tied_pairs(v)
    if tx == pairs or tv == pairs:  # a constant column: every pair tied
        return 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # its p-value's arithmetic, unused
        warnings.simplefilter("ignore")
        tau = stats.kendalltau(x, v, variant="b", method="asymptotic").statistic
    if not np.isfinite(tau):
        return 0
    return int(round(float(tau) * math.sqrt(float(pairs - tx) * float(pairs - tv))))


def kendall_statistics(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``|n tau_a / 2|`` of each column of X against ``v`` (n the rows, public), NaN and
    ties contributing 0: replace-one sensitivity 2 (module docstring)."""
    X = np.asarray(X, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64).ravel()
    n = X.shape[0]
    scale = float(max(n - 1, 1))
    return np.asarray([abs(_pair_sum(X[:, j], v)) / scale for j in range(X.shape[1])], dtype=np.float64)


def selection_event(epsilon: float, k: int, columns: int):
    """The event of :func:`kendall_select` (public: epsilon, k and the column count): k
    exponential-mechanism draws at ``epsilon / k``, over ``columns``, ``columns - 1``, ...
    candidates."""
    per = float(epsilon) / int(k)
    return ev.composed([ev.ExponentialMechanismRelease(per, int(columns) - i) for i in range(int(k))])


def kendall_select(X: np.ndarray, v: np.ndarray, k: int, epsilon: float, rng=None, *, secure: bool | None = None
                   ) -> np.ndarray:
    """DPKendall (Dick, Gillenwater, Joseph 2023, Algorithm 1): the indices of ``k``
    columns of X, in the order drawn, chosen with ``epsilon`` (pure epsilon-DP,
    replace-one; the caller charges :func:`selection_event`).

    Parameters
    ----------
    X : (n, d) array of floats, NaN where a value is missing (any value: ranks only).
    v : (n,) array of floats, the target (NaN: missing; a label's code for a binary
        classifier: the absolute rank correlation does not depend on which class is 1).
    k : int, 1 <= k <= d.
    epsilon : float > 0.
    rng : None (the exact sampler, operating-system randomness) or a numpy Generator.
    """
    from ..privacy.mechanisms import exponential_select, secure_randomness

    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    k = int(k)
    if not 1 <= k <= d:
        raise ValueError(f"k must be between 1 and the number of columns ({d}), got {k}")
    secure = secure_randomness(rng) if secure is None else secure
    per = float(epsilon) / k
    label = kendall_statistics(X, v)
    scale = float(max(n - 1, 1))
    chosen: list[int] = []
    between = np.zeros(d)  # the sum over chosen s of |n tau(X_j, X_s) / 2|
    for i in range(k):
        if chosen:
            last = X[:, chosen[-1]]
            between += np.asarray([abs(_pair_sum(X[:, j], last)) / scale if j not in chosen else 0.0
                                   for j in range(d)])
            scores = label - between / len(chosen)
            sensitivity = SENSITIVITY_LATER
        else:
            scores = label.copy()
            sensitivity = SENSITIVITY_FIRST
        scores[chosen] = -np.inf  # peeling: a chosen column is not drawn again
        chosen.append(int(exponential_select(rng, scores, per, sensitivity, secure=secure)))
    return np.asarray(chosen, dtype=np.int64)
