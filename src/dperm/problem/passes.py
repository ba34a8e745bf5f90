"""Counting the reads of the data that a solver makes, for benchmarks and tests.

A *pass* is one read of all n rows of X; a read of m rows counts ``m / n`` of a pass (the
solvers' row samples), and a product that reads each block once for two BLAS calls (the
certified gradient's ``X_b w`` and ``X_b^T u_b`` on a cache-resident block) counts once.
``flops`` counts the floating-point operations of the products with X (multiply and add
counted apart), the dominant cost; the O(n) elementwise work is left out.

Nothing here is part of a fit's output: the counts are data-independent for a given
solver path only in aggregate, and no estimator stores or releases them (the number of
solver iterations must never be released). Use::

    with count_passes() as count:
        model.fit(X, y)
    print(count.passes, count.flops, count.by_kind)

Counting is process-wide and meant for one fit at a time (the benchmark's child process).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["PassCount", "count_passes", "record"]


@dataclass
class PassCount:
    """Passes over X (a read of m of n rows adds m / n), flops of the products with X, and
    both per kind of read (``matvec``, ``rmatvec``, ``hessian``, ``certified_gradient``,
    ``row_norms``, ``sample``, Dask kernel names)."""

    passes: float = 0.0
    flops: float = 0.0
    by_kind: dict = field(default_factory=dict)

    def add(self, kind: str, fraction: float, flops: float) -> None:
        self.passes += fraction
        self.flops += flops
        passes, total = self.by_kind.get(kind, (0.0, 0.0))
        self.by_kind[kind] = (passes + fraction, total + flops)


_active: list[PassCount] = []


@contextmanager
def count_passes():
    """Count the reads of X made inside the ``with`` block (see the module docstring)."""
    count = PassCount()
    _active.append(count)
    try:
        yield count
    finally:
        _active.remove(count)


def record(kind: str, fraction: float, flops: float = 0.0) -> None:
    """Add one read of ``fraction`` of the rows (and its flops) to every active counter:
    a no-op (one truth test) when none is."""
    if _active:
        for count in _active:
            count.add(kind, float(fraction), float(flops))
