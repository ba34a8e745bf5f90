"""Which algorithms a kind of data can run: dispatch by registration.

In-memory arrays run every algorithm of the catalogue. A data route that runs only some
(Dask collections: :mod:`dperm.distributed`) registers a check here when it is imported
(its problem objects cannot exist before), and ``algorithm="auto"``
(:mod:`dperm.algorithms.auto`) takes only the algorithms every registered check allows.
So the algorithms know nothing of Dask, and ``dperm.distributed`` depends on the
algorithms, never the reverse. A leaf: imports nothing of dperm.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["register_route", "runs_on"]

_CHECKS: list[Callable[[object, str], bool]] = []


def register_route(check: Callable[[object, str], bool]) -> None:
    """Register ``check(problem, algorithm_name) -> bool``: False where ``problem`` (of the
    route's own kind; True for any other) cannot run that algorithm. Idempotent."""
    if check not in _CHECKS:
        _CHECKS.append(check)


def runs_on(problem, algorithm: str) -> bool:
    """Whether ``algorithm`` can run on ``problem`` by every registered route's check."""
    return all(check(problem, algorithm) for check in _CHECKS)
