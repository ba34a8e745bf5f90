"""The catalogue: metadata of every algorithm and the checks of its assumptions.

Each algorithm is a function ``fit(problem, budget, *, rng, **hyper) -> PrivateFit``
registered here with what it assumes, what it guarantees and where it comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["AlgorithmInfo", "AutoRule", "AssumptionError", "register", "get", "names", "list_algorithms", "check_assumptions",
           "strongly_convex_smooth"]


from ..exceptions import AssumptionError  # defined in the leaf, re-exported here


# Requirement name -> (predicate on (problem, budget), what to tell the user).
_REQUIREMENTS: dict[str, tuple[Callable, str]] = {
    "convex": (lambda p, b: p.is_convex, "a convex loss (got the non-convex {loss})"),
    "strongly_convex": (
        lambda p, b: p.strong_convexity > 0,
        "a strongly convex objective: add an l2 or elastic-net regularizer with mu > 0",
    ),
    "smooth": (lambda p, b: p.is_smooth, "a smooth loss (the {loss} loss is not smooth)"),
    "lipschitz": (
        lambda p, b: math.isfinite(p.lipschitz),
        "a Lipschitz loss: the {loss} loss is Lipschitz only on a bounded set; add a "
        "bounded constraint such as ('l2_ball', R)",
    ),
    "bounded_domain": (
        lambda p, b: p.effective_constraint() is not None,
        "a bounded domain: add a constraint such as ('l2_ball', R) or a strongly convex "
        "regularizer",
    ),
    "bounded_constraint": (
        lambda p, b: p.constraint.bounded,
        "a bounded constraint set C such as ('l2_ball', R)",
    ),
    "approximate_dp": (
        lambda p, b: b.delta > 0,
        "delta > 0: it gives (epsilon, delta)-DP only",
    ),
    "pure_dp": (lambda p, b: b.delta == 0, "delta = 0: it gives epsilon-DP only"),
    "smooth_regularizer": (
        lambda p, b: p.regularizer.is_smooth,
        "a smooth regularizer (no l1 part)",
    ),
    "unconstrained": (lambda p, b: not p.constraint.bounded, "an unconstrained problem"),
    "compiled_loss": (
        lambda p, b: not getattr(p, "_custom", False),
        "a built-in loss: its compiled per-example kernels serve the built-in losses only "
        "(a custom loss runs with noisy_gd, dp_gd, dp_gld or dp_fw_l2)",
    ),
    "squared_loss": (
        lambda p, b: getattr(p.loss, "name", None) == "squared" and not getattr(p, "_custom", False),
        "the squared loss (least squares): it releases the sufficient statistics X^T X and X^T y",
    ),
    "margin_loss": (
        lambda p, b: not getattr(p, "_custom", False),
        "a built-in margin (GLM) loss: its accounting rests on the structure phi(<w, x>, y) "
        "(rank-one per-example Hessians, loss values bounded through the margin), which a "
        "custom loss does not declare",
    ),
}


@dataclass(frozen=True)
class AutoRule:
    """When ``algorithm="auto"`` takes this algorithm: rules are tried by ascending
    ``priority``; the first whose ``condition(problem, budget)`` holds and whose
    algorithm's assumptions the problem meets is taken. Conditions read only declared
    properties, the shape (n, d) and the budget, never the data."""

    priority: int
    condition: Callable
    reason: str


@dataclass(frozen=True)
class AlgorithmInfo:
    """One entry of the catalogue: the algorithm, its metadata, its assumptions, its
    ``solver="auto"`` rule and its paper's utility bound (``bound``, from
    :mod:`dperm.theory`, None where the papers give none)."""

    name: str
    fit: Callable
    setting: str  # "convex", "strongly convex", "non-convex"
    guarantee: str  # "epsilon", "(epsilon, delta)", "epsilon or (epsilon, delta)"
    source: str  # e.g. "Zhang, Zheng, Mou, Wang 2017 Alg. 1"
    paper: str
    requires: tuple[str, ...] = ()
    gradient_complexity: str = ""
    summary: str = ""
    auto: AutoRule | None = None
    extra: dict = field(default_factory=dict)

    @property
    def bound(self):
        """The paper's bound (:class:`dperm.theory.AlgorithmBound`), or None."""
        from .. import theory

        return theory.BOUNDS.get(self.name)

    @property
    def gradient_complexity_bound(self):
        from .. import theory

        return theory.GRADIENT_COMPLEXITIES.get(self.name)

    def as_row(self) -> dict:
        return {
            "name": self.name,
            "setting": self.setting,
            "guarantee": self.guarantee,
            "requires": ", ".join(self.requires),
            "source": self.source,
            "paper": self.paper,
            "gradient complexity": self.gradient_complexity,
            "summary": self.summary,
        }


def strongly_convex_smooth(p, b) -> bool:
    """Convex smooth loss and a strongly convex objective (a condition of several
    algorithms' ``AutoRule``)."""
    return p.is_convex and p.is_smooth and p.strong_convexity > 0


_REGISTRY: dict[str, AlgorithmInfo] = {}


def register(name: str, **meta) -> Callable[[Callable], Callable]:
    """Decorator registering ``fit`` under ``name`` with its metadata."""
    unknown = set(meta.get("requires", ())) - set(_REQUIREMENTS)
    if unknown:
        raise ValueError(f"unknown requirements {sorted(unknown)}")

    def wrap(fit: Callable) -> Callable:
        _REGISTRY[name] = AlgorithmInfo(name=name, fit=fit, **meta)
        return fit

    return wrap


def get(name: str) -> AlgorithmInfo:
    """The catalogue entry of ``name``; a clear error listing the names otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose one of {names()}") from None


def auto_rules() -> list[AlgorithmInfo]:
    """The registered algorithms that ``algorithm="auto"`` may choose, by priority."""
    return sorted((info for info in _REGISTRY.values() if info.auto is not None), key=lambda i: i.auto.priority)


def names() -> list[str]:
    return sorted(_REGISTRY)


def list_algorithms() -> list[AlgorithmInfo]:
    """Every registered algorithm, sorted by name."""
    return [_REGISTRY[k] for k in names()]


def check_assumptions(info: AlgorithmInfo, problem, budget) -> None:
    """Raise :class:`AssumptionError` naming every assumption the problem violates."""
    failures = []
    proven = getattr(problem, "supported_algorithms", None)  # a problem class proven for these only
    if proven is not None and info.name not in proven:
        failures.append(f"a problem it is proven for ({type(problem).__name__} runs with {sorted(proven)} only)")
    for req in info.requires:
        predicate, message = _REQUIREMENTS[req]
        if not predicate(problem, budget):
            failures.append(message.format(loss=problem.loss.name))
    if failures:
        raise AssumptionError(
            f"{info.name} ({info.source}) needs " + "; and ".join(failures) + "."
        )
