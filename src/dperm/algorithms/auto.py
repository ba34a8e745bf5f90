"""``algorithm="auto"``: choose an algorithm of the catalogue from the problem's properties.

The rules are read top to bottom; the first whose condition holds, whose algorithm is
registered and whose assumptions the problem and budget meet is taken. The order comes
from the papers' utility bounds and from measurement (ADULT, logistic loss, see
docs/algorithms.md): at the same budget, objective and output perturbation reach the
lowest excess risk on strongly convex smooth problems; the proximal variance-reduced
method handles an l1 part; gradient methods cover the rest.

=====  ===============================================================  =========================
rule   problem (and budget)                                              algorithm
=====  ===============================================================  =========================
1      non-convex loss                                                   ``dp_gd``
2      strongly convex, smooth loss and regularizer, no constraint        ``objective_perturbation``
3      strongly convex, smooth loss                                       ``output_perturbation``
4      l1 part, strongly convex, smooth loss, delta > 0, inner noise      ``dp_svrg``
       within the Prox-SVRG contraction (``dp_svrg_plan``)
5      L1-ball constraint, d > n, smooth loss, delta > 0                  ``dp_fw_l1``
6      convex, smooth loss, bounded constraint, d > n, delta > 0          ``dp_accmd``
7      convex, smooth loss                                                ``gd_output_perturbation``
8      convex, bounded domain, delta > 0                                  ``noisy_gd``
9      convex, bounded domain, delta = 0, small d                         ``exponential_mechanism``
=====  ===============================================================  =========================

The choice never reads the data: only the declared loss, regularizer, constraint, the
shape (n, d) and the budget.
"""

from __future__ import annotations

from typing import Callable

from ..problem.constraints import L1Ball
from .registry import AssumptionError, check_assumptions, get, names

__all__ = ["AUTO_RULES", "choose_algorithm"]


def _strongly_convex_smooth(p, b) -> bool:
    return p.is_convex and p.is_smooth and p.strong_convexity > 0


def _svrg_contracts(p, b) -> bool:
    """dp_svrg's default plan keeps its inner noise within what the Prox-SVRG contraction
    tolerates (otherwise it warns and may drift; the next rules take over)."""
    from .svrg import dp_svrg_plan

    try:
        return b.delta > 0 and dp_svrg_plan(p, b).noise_term < 1.0
    except ValueError:
        return False


AUTO_RULES: tuple[tuple[str, Callable, str], ...] = (
    ("dp_gd", lambda p, b: not p.is_convex, "non-convex loss: noisy gradient descent"),
    (
        "objective_perturbation",
        lambda p, b: _strongly_convex_smooth(p, b) and p.regularizer.is_smooth and not p.constraint.bounded,
        "strongly convex, smooth, unconstrained: objective perturbation",
    ),
    (
        "output_perturbation",
        lambda p, b: _strongly_convex_smooth(p, b) and p.regularizer.is_smooth,
        "strongly convex and smooth: output perturbation of the minimizer",
    ),
    (
        "dp_svrg",
        lambda p, b: _strongly_convex_smooth(p, b) and not p.regularizer.is_smooth and _svrg_contracts(p, b),
        "strongly convex with an l1 part: proximal DP-SVRG",
    ),
    (
        "dp_fw_l1",
        lambda p, b: p.is_smooth and isinstance(p.constraint, L1Ball) and p.n_features > p.n_samples,
        "L1-ball constraint in high dimension: private Frank-Wolfe over the vertices",
    ),
    (
        "dp_accmd",
        lambda p, b: p.is_convex and p.is_smooth and p.constraint.bounded and p.n_features > p.n_samples,
        "bounded constraint in high dimension: accelerated mirror descent",
    ),
    (
        "gd_output_perturbation",
        lambda p, b: p.is_convex and p.is_smooth and p.regularizer.is_smooth,
        "convex and smooth: output-perturbation gradient descent",
    ),
    ("noisy_gd", lambda p, b: p.is_convex, "convex, possibly non-smooth: noisy projected gradient descent"),
    ("exponential_mechanism", lambda p, b: p.is_convex, "convex, pure DP, small dimension: exponential mechanism"),
)


def choose_algorithm(problem, budget) -> tuple[str, str]:
    """The catalogue name chosen for ``problem`` and ``budget``, and why.

    Raises :class:`AssumptionError` when no algorithm of the catalogue applies (for
    example a non-smooth loss, no bounded domain and no strong convexity).
    """
    available = set(names())
    for name, condition, reason in AUTO_RULES:
        if name not in available or not condition(problem, budget):
            continue
        try:
            check_assumptions(get(name), problem, budget)
        except AssumptionError:
            continue
        return name, reason
    raise AssumptionError(
        "no algorithm of the catalogue applies to this problem and budget "
        f"(loss {problem.loss.name}, regularizer {problem.regularizer!r}, constraint {problem.constraint!r}, "
        f"delta {budget.delta}); a non-smooth loss needs a bounded constraint and delta > 0, or a "
        "strongly convex regularizer."
    )
