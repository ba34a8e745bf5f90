"""``algorithm="auto"``: choose an algorithm of the catalogue from the problem's properties.

Each algorithm's rule is part of its registry entry (``register(..., auto=AutoRule(...))``
in its module); they are read by priority, and the first whose condition holds and whose
assumptions the problem and budget meet is taken. The order comes
from the papers' utility bounds and from measurement (ADULT, logistic loss, see
docs/algorithms.md): at the same budget, objective and output perturbation reach the
lowest excess risk on strongly convex smooth problems; the proximal variance-reduced
method handles an l1 part; gradient methods cover the rest.

=====  ===============================================================  =========================
rule   problem (and budget)                                              algorithm
=====  ===============================================================  =========================
0      squared loss, no constraint, no l1 part, delta > 0                 ``adassp``
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
shape (n, d) and the budget. A data route that runs only some algorithms (Dask) registers
its check in :mod:`dperm._routes`; this module imports no route.
"""

from __future__ import annotations

from typing import Callable

from .._routes import runs_on
from .registry import AssumptionError, auto_rules, check_assumptions, get, strongly_convex_smooth
from .svrg import svrg_contracts  # noqa: F401  (its rule's condition, re-exported where it was)

__all__ = ["auto_table", "choose_algorithm", "strongly_convex_smooth", "svrg_contracts"]


def auto_table() -> tuple[tuple[str, Callable, str], ...]:
    """(name, condition, reason) of every rule, in the order they are tried."""
    return tuple((info.name, info.auto.condition, info.auto.reason) for info in auto_rules())


def choose_algorithm(problem, budget) -> tuple[str, str]:
    """The catalogue name chosen for ``problem`` and ``budget``, and why.

    Raises :class:`AssumptionError` when no algorithm of the catalogue applies (for
    example a non-smooth loss, no bounded domain and no strong convexity).
    """
    for name, condition, reason in auto_table():
        if not (runs_on(problem, name) and condition(problem, budget)):  # Dask data: only a Dask path
            continue
        try:
            check_assumptions(get(name), problem, budget)
        except AssumptionError:
            continue
        return name, reason
    raise AssumptionError("no algorithm of the catalogue applies: " + _missing(problem, budget))


def _missing(problem, budget) -> str:
    """The assumption that rules out every algorithm, named after its real cause."""
    import math

    loss = problem.loss.name
    if not math.isfinite(problem.lipschitz):
        return (f"the {loss} loss is not Lipschitz on an unbounded domain (its gradient grows with "
                "||w||), and every private algorithm needs a bound on the per-example gradient; add a "
                "bounded constraint such as ('l2_ball', R)")
    if problem.effective_constraint() is None:
        return (f"the {loss} loss is not smooth and the problem has no bounded domain; add a bounded "
                "constraint such as ('l2_ball', R), or an l2 regularizer with mu > 0")
    if budget.delta == 0:
        return (f"with delta = 0 (pure DP) the {loss} loss needs a small dimension (exponential "
                "mechanism) or a smooth loss; give delta > 0")
    return f"loss {loss}, regularizer {problem.regularizer!r}, constraint {problem.constraint!r}, delta {budget.delta:g}"
