"""Argument checks shared by the bound functions."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .._validation import check_positive

# validation and helpers
# --------------------------------------------------------------------------------------


def _at_least_one(name: str, value: Any) -> float:
    value = check_positive(name, value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _n(n: Any) -> float:
    return _at_least_one("n", n)


def _d(d: Any) -> float:
    return _at_least_one("d", d)


def _pos(name: str, value: Any) -> float:
    return check_positive(name, value)


def _delta(delta: Any, *, required: bool) -> float:
    """delta in [0, 1); with ``required`` (an (epsilon, delta)-DP bound) delta in (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {delta!r}")
    delta = float(delta)
    if math.isnan(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if required and delta == 0.0:
        raise ValueError(
            "this is an (epsilon, delta)-DP bound: delta must be in (0, 1), got 0 "
            "(use an epsilon-DP bound for delta = 0)"
        )
    return delta


def _probability(name: str, value: Any) -> float:
    value = check_positive(name, value)
    if value >= 1:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def _strong_convexity(mu: Any, beta: Any) -> tuple[float, float]:
    """mu > 0, beta > 0 and mu <= beta (a beta-smooth function is at most beta-strongly convex)."""
    mu = _pos("strong_convexity", mu)
    beta = _pos("smoothness", beta)
    if mu > beta:
        raise ValueError(
            f"strong_convexity ({mu}) cannot exceed smoothness ({beta}): a beta-smooth "
            "function is at most beta-strongly convex"
        )
    return mu, beta


def _lg(x: float) -> float:
    """The log factor of an order-of-magnitude bound: ``max(1, ln x)``."""
    return max(1.0, math.log(x)) if x > 0 else 1.0


# --------------------------------------------------------------------------------------
