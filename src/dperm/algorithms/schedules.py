"""Default schedules whose work grows linearly in n: pure functions of public inputs.

Every function here reads only public quantities (n, d, epsilon, delta, declared
constants, hyper-parameters), never the data, so any schedule it returns is a public
choice and costs no privacy.

``sgd_epochs_schedule``: DP-SGD with a batch of ``round(sqrt(n))`` rows (as the paper-ratio
default, Bassily, Smith, Thakurta 2014) run for a fixed number of *epochs* E, i.e.
``T = ceil(E n / b)`` steps and ``E n`` per-example gradients, instead of ``T = n^2 / b^2``
(``n^1.5`` gradients: 1000 epochs at n = 1e6). The trade-off and its measured cost are in
docs/performance.md.
"""

from __future__ import annotations

import math

__all__ = ["sgd_epochs_schedule", "sgd_paper_ratio_schedule"]


def _check_n(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def sgd_paper_ratio_schedule(n: int) -> tuple[int, int]:
    """(batch, steps) = ``(round(sqrt(n)), ceil(n^2 / b^2))``: the sampling rate q = b/n and
    the step count T keep the paper's ``q sqrt(T) = 1`` (T = n^2 at b = 1); ``b T`` grows
    as ``n^1.5``."""
    n = _check_n(n)
    b = max(1, round(math.sqrt(n)))
    return b, max(1, math.ceil(n * n / (b * b)))


def sgd_epochs_schedule(n: int, epochs: float) -> tuple[int, int]:
    """(batch, steps) = ``(round(sqrt(n)), ceil(epochs n / b))``: ``epochs * n`` per-example
    gradients (rounded up to whole steps), linear in n."""
    n = _check_n(n)
    if not (math.isfinite(epochs) and epochs > 0):
        raise ValueError(f"epochs must be a finite number > 0, got {epochs!r}")
    b = max(1, round(math.sqrt(n)))
    return b, max(1, math.ceil(epochs * n / b))
