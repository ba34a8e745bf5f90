"""Default schedules whose work grows linearly in n: pure functions of public inputs.

Every function here reads only public quantities (n, d, epsilon, delta, declared
constants, hyper-parameters), never the data, so any schedule it returns is a public
choice and costs no privacy.

``sgd_default_schedule``: DP-SGD with a batch of ``round(sqrt(n))`` rows (as the paper-ratio
schedule, after Bassily, Smith, Thakurta 2014) run for at most ``DEFAULT_SGD_EPOCHS`` passes,
i.e. ``T = ceil(E n / b)`` steps and ``E n`` per-example gradients, instead of
``T = n^2 / b^2`` (``n^1.5`` gradients: 1000 epochs at n = 1e6). Fewer steps also need less
noise per step at the same budget. The measured risk cost is in docs/performance.md.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_SGD_EPOCHS", "sgd_default_schedule", "sgd_epochs_schedule", "sgd_paper_ratio_schedule", "sgd_steps_for_epochs"]

# dp_sgd's default number of passes over the data (see docs/performance.md for the measured
# risk cost against the paper-ratio schedule on ADULT, BANK and CreditCard).
DEFAULT_SGD_EPOCHS = 64.0


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
    b = max(1, round(math.sqrt(n)))
    return b, sgd_steps_for_epochs(n, b, epochs)


def sgd_steps_for_epochs(n: int, batch_size: int, epochs: float) -> int:
    """``ceil(epochs n / batch_size)``: the steps of ``epochs`` passes over n rows (at least 1)."""
    n = _check_n(n)
    if not (math.isfinite(epochs) and epochs > 0):
        raise ValueError(f"epochs must be a finite number > 0, got {epochs!r}")
    return max(1, math.ceil(epochs * n / batch_size))


def sgd_default_schedule(n: int, epochs: float = DEFAULT_SGD_EPOCHS) -> tuple[int, int]:
    """dp_sgd's default (batch, steps): the paper-ratio schedule capped at ``epochs`` passes,
    ``b = round(sqrt(n))``, ``T = min(ceil(n^2 / b^2), ceil(epochs n / b))``. Below
    ``n = epochs^2`` (4096 at 64 epochs) it is the paper-ratio schedule; above, ``epochs n``
    gradients instead of ``n^1.5``."""
    b, paper_steps = sgd_paper_ratio_schedule(n)
    return b, min(paper_steps, sgd_steps_for_epochs(n, b, epochs))
