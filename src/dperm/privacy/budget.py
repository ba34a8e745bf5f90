"""Privacy budgets as small immutable value objects, and an accountant that refuses to overspend.

The neighbouring relation is replace-one throughout dperm: datasets of equal size that
differ in one row.
"""

from __future__ import annotations

import math
import numbers
import threading
import warnings
from dataclasses import dataclass

__all__ = ["PrivacyBudget", "BudgetAccountant", "PrivacyWarning", "BudgetExceededError"]


class PrivacyWarning(UserWarning):
    """A privacy setting that is valid but likely not what was meant."""


class BudgetExceededError(RuntimeError):
    """Spending would take a BudgetAccountant past its total budget."""


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class PrivacyBudget:
    """An (epsilon, delta) differential-privacy guarantee; delta = 0 is pure epsilon-DP.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    delta : float, default 0
        In [0, 1).
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        eps = _real("epsilon", self.epsilon)
        delta = _real("delta", self.delta)
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {eps}")
        if not (math.isfinite(delta) and 0.0 <= delta < 1.0):
            raise ValueError(f"delta must be a number in [0, 1), got {delta}")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)

    @property
    def is_pure(self) -> bool:
        """Whether this is pure epsilon-DP (delta = 0)."""
        return self.delta == 0.0

    def __add__(self, other: "PrivacyBudget") -> "PrivacyBudget":
        """Basic (sequential) composition."""
        if not isinstance(other, PrivacyBudget):
            return NotImplemented
        return PrivacyBudget(self.epsilon + other.epsilon, min(self.delta + other.delta, math.nextafter(1.0, 0.0)))

    def split(self, parts: int) -> "PrivacyBudget":
        """The per-part budget of ``parts`` equal parts under basic composition."""
        if isinstance(parts, bool) or not isinstance(parts, numbers.Integral) or parts < 1:
            raise ValueError(f"parts must be an integer >= 1, got {parts!r}")
        return PrivacyBudget(self.epsilon / parts, self.delta / parts)

    def scale(self, fraction: float) -> "PrivacyBudget":
        """(fraction * epsilon, fraction * delta) for 0 < fraction <= 1."""
        fraction = _real("fraction", fraction)
        if not (0.0 < fraction <= 1.0):
            raise ValueError(f"fraction must be in (0, 1], got {fraction}")
        return PrivacyBudget(self.epsilon * fraction, self.delta * fraction)

    def check_delta(self, n: int) -> None:
        """Warn when delta >= 1/n: such a delta permits publishing a whole row."""
        if self.delta > 0 and self.delta >= 1.0 / n:
            warnings.warn(
                f"delta={self.delta:g} is not below 1/n={1.0 / n:g}; such a delta permits "
                "releasing a whole row. Choose delta much smaller than 1/n.",
                PrivacyWarning,
                stacklevel=3,
            )

    def __str__(self) -> str:
        return f"(epsilon={self.epsilon:g}, delta={self.delta:g})"


class BudgetAccountant:
    """Tracks spending against a total budget under basic composition; thread-safe.

    Parameters
    ----------
    total : PrivacyBudget
        The most that may be spent.
    """

    _RELATIVE_SLACK = 1e-12  # float rounding of sums of equal splits

    def __init__(self, total: PrivacyBudget):
        if not isinstance(total, PrivacyBudget):
            raise TypeError(f"total must be a PrivacyBudget, got {total!r}")
        self.total = total
        self._lock = threading.Lock()
        self._epsilon = 0.0
        self._delta = 0.0
        self._history: list[tuple[str, PrivacyBudget]] = []

    def _fits(self, budget: PrivacyBudget) -> bool:
        eps_ok = self._epsilon + budget.epsilon <= self.total.epsilon * (1 + self._RELATIVE_SLACK)
        delta_ok = self._delta + budget.delta <= self.total.delta * (1 + self._RELATIVE_SLACK)
        return eps_ok and delta_ok

    def can_spend(self, budget: PrivacyBudget) -> bool:
        with self._lock:
            return self._fits(budget)

    def spend(self, budget: PrivacyBudget, label: str = "") -> None:
        """Record ``budget`` as spent, or raise BudgetExceededError and record nothing."""
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
        with self._lock:
            if not self._fits(budget):
                raise BudgetExceededError(
                    f"spending {budget} on top of (epsilon={self._epsilon:g}, delta={self._delta:g}) "
                    f"would exceed the total {self.total}"
                )
            self._epsilon += budget.epsilon
            self._delta += budget.delta
            self._history.append((label, budget))

    @property
    def spent_epsilon(self) -> float:
        return self._epsilon

    @property
    def spent_delta(self) -> float:
        return self._delta

    @property
    def spent(self) -> PrivacyBudget | None:
        """What has been spent, or None before the first spend."""
        with self._lock:
            return PrivacyBudget(self._epsilon, self._delta) if self._history else None

    @property
    def remaining_epsilon(self) -> float:
        return max(0.0, self.total.epsilon - self._epsilon)

    @property
    def remaining_delta(self) -> float:
        return max(0.0, self.total.delta - self._delta)

    @property
    def history(self) -> tuple[tuple[str, PrivacyBudget], ...]:
        with self._lock:
            return tuple(self._history)

    def __repr__(self) -> str:
        return f"BudgetAccountant(total={self.total}, spent=(epsilon={self._epsilon:g}, delta={self._delta:g}))"
