"""Privacy budgets as small immutable value objects, and a ledger that refuses to overspend.

The neighbouring relation is replace-one throughout dperm: datasets of equal size that
differ in one row.

This module is data: a :class:`PrivacyBudget` is a value, a :class:`BudgetAccountant`
records the events charged to it. What those events compose to is computed by the one
accountant, :mod:`dperm.privacy.accountant`, which imports :class:`PrivacyBudget` from here
and registers its composition with the ledger when it is imported (``dperm.privacy``
imports it before any ledger exists); this module never imports the accountant.
"""

from __future__ import annotations

import math
import os
import numbers
import threading
import warnings
from dataclasses import dataclass

__all__ = ["PrivacyBudget", "BudgetAccountant", "PrivacyWarning", "BudgetExceededError"]


from ..exceptions import BudgetExceededError, PrivacyWarning  # defined in the leaf, re-exported here
from .._warnings import user_stacklevel


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
                stacklevel=user_stacklevel(),
            )

    def __str__(self) -> str:
        return f"(epsilon={_display(self.epsilon)}, delta={_display(self.delta)})"

    def __repr__(self) -> str:
        return f"PrivacyBudget(epsilon={_display(self.epsilon)}, delta={_display(self.delta)})"


def _display(value: float) -> str:
    """``value`` shortened to 12 significant digits, the precision of a certified budget
    (0.9999999999999964 prints as 1); the stored value is unchanged."""
    return format(float(f"{value:.12g}"), "g") if value != 0 else "0"


# epsilon(event, delta) and flatten(event) of the one accountant, registered by
# dperm.privacy.accountant when it is imported (see the module docstring)
_composition: dict = {}


def register_composition(epsilon, flatten) -> None:
    """Let every ledger compose its charges with ``epsilon(event, delta)`` and describe a
    shortfall with ``flatten(event)``: called once, by :mod:`dperm.privacy.accountant`."""
    _composition.update(epsilon=epsilon, flatten=flatten)


def _accountant(name: str):
    try:
        return _composition[name]
    except KeyError:  # only when this file was loaded outside its package
        raise RuntimeError("the accountant is not loaded: import dperm.privacy before charging a ledger") from None


class BudgetAccountant:
    """A total privacy budget that fits are charged to, composed exactly; thread-safe.

    Every fit given ``accountant=`` charges the event of its mechanism
    (:mod:`dperm.privacy.events`) here before it reads the data; the accountant composes
    the events of all charges with the one exact accountant
    (:func:`dperm.privacy.accountant.epsilon`: Gaussian DP, PLD, pure/zCDP), not by adding
    epsilons, and refuses (``BudgetExceededError``, nothing recorded) a charge whose
    composition would exceed the total.

    Parameters
    ----------
    epsilon : float or PrivacyBudget
        The total epsilon (or the whole total budget).
    delta : float, default 0
        The total delta; every composition is certified at this delta.

    Examples
    --------
    >>> acc = BudgetAccountant(1.0, 1e-5)
    >>> # DPLogisticRegression(epsilon=0.5, delta=1e-5, accountant=acc).fit(X, y)  # doctest: +SKIP
    >>> acc.remaining  # doctest: +SKIP
    """

    def __init__(self, epsilon, delta: float = 0.0):
        self.total = epsilon if isinstance(epsilon, PrivacyBudget) else PrivacyBudget(epsilon, delta)
        self._lock = threading.Lock()
        self._events: list = []
        self._labels: list[str] = []
        self._spent_epsilon = 0.0

    def __deepcopy__(self, memo):
        # One ledger, shared: scikit-learn's clone deep-copies parameters, and a copied
        # accountant would let GridSearchCV's clones spend the same budget again.
        return self

    def __copy__(self):
        return self

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _composed_epsilon(self, events) -> float:
        from .events import composed

        return _accountant("epsilon")(composed(events), self.total.delta) if events else 0.0

    def _check_event(self, event):
        from dp_accounting.dp_event import DpEvent

        if not isinstance(event, DpEvent):
            raise TypeError(f"event must be a DpEvent, got {event!r}")

    def can_afford(self, event) -> bool:
        """Whether charging ``event`` would keep the composition within the total."""
        self._check_event(event)
        with self._lock:
            return self._composed_epsilon(self._events + [event]) <= self.total.epsilon * (1 + self._RELATIVE_SLACK)

    _RELATIVE_SLACK = 1e-12

    def charge(self, event, label: str = "") -> PrivacyBudget:
        """Compose ``event`` with every earlier charge, or raise BudgetExceededError and
        record nothing. Returns what is spent in total afterwards."""
        self._check_event(event)
        with self._lock:
            total_epsilon = self._composed_epsilon(self._events + [event])
            if not total_epsilon <= self.total.epsilon * (1 + self._RELATIVE_SLACK):
                if self.total.delta == 0 and math.isinf(total_epsilon):
                    raise BudgetExceededError(
                        "this fit needs delta > 0 but the accountant's total delta is 0: "
                        "create the accountant with a delta, or fit with delta=0")
                if math.isinf(total_epsilon):
                    from .events import composed

                    flat = _accountant("flatten")(composed(self._events + [event]))
                    needed = sum(d for _, d in flat.approximate)
                    raise BudgetExceededError(
                        f"delta runs out: the charged mechanisms known by one (epsilon, delta) guarantee need "
                        f"delta={needed:.3g} together, over the accountant's delta={self.total.delta:g} by "
                        f"{needed - self.total.delta:.3g}; fit with a smaller delta or give the accountant more")
                raise BudgetExceededError(
                    f"epsilon runs out: with this fit the total would be epsilon={total_epsilon:.6g} at the "
                    f"accountant's delta={self.total.delta:g}, over its epsilon={self.total.epsilon:g} by "
                    f"{total_epsilon - self.total.epsilon:.3g} (remaining: {self.total.epsilon - self._spent_epsilon:.6g})")
            self._events.append(event)
            self._labels.append(label)
            self._spent_epsilon = min(total_epsilon, self.total.epsilon)
            return PrivacyBudget(self._spent_epsilon, self.total.delta) if self._spent_epsilon > 0 else None

    @property
    def spent(self) -> PrivacyBudget | None:
        """What the charges compose to (at the total delta), or None before the first."""
        with self._lock:
            if not self._events or self._spent_epsilon <= 0:
                return None
            return PrivacyBudget(self._spent_epsilon, self.total.delta)

    @property
    def spent_epsilon(self) -> float:
        return self._spent_epsilon

    @property
    def remaining_epsilon(self) -> float:
        """The epsilon left at the total delta (composition is not additive: a further
        charge is checked by composing it, see :meth:`can_afford`)."""
        return max(0.0, self.total.epsilon - self._spent_epsilon)

    @property
    def remaining(self) -> PrivacyBudget | None:
        left = self.remaining_epsilon
        return PrivacyBudget(left, self.total.delta) if left > 0 else None

    def save(self, path) -> None:
        """Write the ledger (total budget and every charged event) to a JSON file, atomically."""
        import json
        import os
        import tempfile

        from .events import describe

        with self._lock:
            data = {"epsilon": self.total.epsilon, "delta": self.total.delta,
                    "charges": [{"label": label, "event": describe(event)}
                                for label, event in zip(self._labels, self._events)]}
        directory = os.path.dirname(os.path.abspath(path))
        with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp") as handle:
            json.dump(data, handle, indent=1)
        os.replace(handle.name, path)

    @classmethod
    def load(cls, path) -> "BudgetAccountant":
        """The accountant saved by :meth:`save`, its charges composed again by the current
        accountant (so a ledger written by an older dperm is re-accounted with today's
        routes). Where they now compose to more than the total -- a ledger holding
        fixed-size-batch fits charged before dperm 0.1.1 accounted them correctly -- the
        ledger is loaded as it is, its spend shown in full, a :class:`PrivacyWarning` says
        so, and every further charge is refused."""
        import json

        from .events import from_description

        with open(path) as handle:
            data = json.load(handle)
        accountant = cls(data["epsilon"], data["delta"])
        charges = [(from_description(c["event"]), c.get("label", "")) for c in data["charges"]]
        for event, _ in charges:
            accountant._check_event(event)
        accountant._events = [event for event, _ in charges]
        accountant._labels = [label for _, label in charges]
        total = accountant._composed_epsilon(accountant._events)
        accountant._spent_epsilon = total
        if not total <= accountant.total.epsilon * (1 + cls._RELATIVE_SLACK):
            warnings.warn(
                f"the ledger {os.fspath(path)!r} is overspent: its charges compose to epsilon={total:.6g} at "
                f"delta={accountant.total.delta:g}, over its total epsilon={accountant.total.epsilon:g} (they were "
                "charged under an accounting that understated them, e.g. fixed-size batches before dperm 0.1.1); "
                "no further charge is possible", PrivacyWarning, stacklevel=user_stacklevel())
        return accountant

    @property
    def events(self) -> tuple:
        with self._lock:
            return tuple(self._events)

    @property
    def history(self) -> tuple[tuple[str, object], ...]:
        with self._lock:
            return tuple(zip(self._labels, self._events))

    def __repr__(self) -> str:
        return (f"BudgetAccountant(total={self.total}, spent=(epsilon={self._spent_epsilon:.6g}, "
                f"delta={self.total.delta:g}), charges={len(self._events)})")
