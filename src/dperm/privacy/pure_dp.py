"""Composition of pure epsilon-DP releases: basic, advanced, and zCDP.

Each route is a valid upper bound; :func:`pure_composition_epsilon` returns the best.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["pure_composition_epsilon", "zcdp_epsilon"]


def zcdp_epsilon(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))``: rho-zCDP implies this epsilon at ``delta``
    (Bun and Steinke 2016, Proposition 1.3)."""
    if rho <= 0:
        return 0.0
    if delta <= 0:
        return math.inf
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def pure_composition_epsilon(releases: Sequence[tuple[float, int, bool]], delta: float = 0.0) -> float:
    """Total epsilon at ``delta`` of pure-DP releases ``(epsilon, count, bounded_range)``.

    Basic composition; with delta > 0 also advanced composition at the largest epsilon
    (Dwork, Rothblum, Vadhan 2010) and zCDP: an epsilon-DP release is ``epsilon^2 / 2``-zCDP,
    ``epsilon^2 / 8``-zCDP when it has bounded range like the exponential mechanism
    (Cesar and Rogers 2021). The smallest of the valid bounds.
    """
    releases = [(float(e), int(c), bool(b)) for e, c, b in releases]
    if not releases:
        return 0.0
    basic = sum(e * c for e, c, _ in releases)
    if delta <= 0:
        return basic
    k = sum(c for _, c, _ in releases)
    e0 = max(e for e, _, _ in releases)
    advanced = math.sqrt(2.0 * k * math.log(1.0 / delta)) * e0 + (k * e0 * math.expm1(e0) if e0 < 700 else math.inf)
    rho = sum(c * e * e / (8.0 if bounded else 2.0) for e, c, bounded in releases)
    return min(basic, advanced, zcdp_epsilon(rho, delta))
