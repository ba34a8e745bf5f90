"""Regularizers r(w): value, gradient of the smooth part, proximal operator, constants.

A regularizer is data-independent, so it never contributes to a sensitivity; it does
contribute strong convexity ``mu`` and smoothness to the objective ``F``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Regularizer", "NoRegularizer", "L2", "L1", "ElasticNet", "make_regularizer"]


def _check_strength(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def soft_threshold(v: np.ndarray, threshold: float) -> np.ndarray:
    """Proximal operator of ``threshold * ||.||_1``."""
    return np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)


class Regularizer:
    """Base class. ``r(w) = l1 ||w||_1 + (l2 / 2) ||w||_2^2`` covers every case here."""

    l1: float = 0.0
    l2: float = 0.0

    @property
    def strong_convexity(self) -> float:
        """mu such that r is mu-strongly convex."""
        return self.l2

    @property
    def smoothness(self) -> float:
        """Lipschitz constant of the gradient of the smooth part."""
        return self.l2

    @property
    def is_smooth(self) -> bool:
        """Whether r is differentiable (no l1 part)."""
        return self.l1 == 0.0

    def value(self, w: np.ndarray) -> float:
        out = 0.0
        if self.l1:
            out += self.l1 * float(np.abs(w).sum())
        if self.l2:
            out += 0.5 * self.l2 * float(w @ w)
        return out

    def smooth_gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the smooth (l2) part."""
        return self.l2 * w

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """argmin_u  step * r(u) + ||u - v||^2 / 2."""
        u = soft_threshold(v, step * self.l1) if self.l1 else np.array(v, dtype=np.float64, copy=True)
        if self.l2:
            u /= 1.0 + step * self.l2
        return u

    def nonsmooth_prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """Proximal operator of the l1 part only (the l2 part is handled as smooth)."""
        return soft_threshold(v, step * self.l1) if self.l1 else v

    def subgradient_distance(self, w: np.ndarray, smooth_grad: np.ndarray) -> float:
        """min over subgradients s of the l1 part of ||smooth_grad + s||: the optimality gap."""
        if not self.l1:
            return float(np.linalg.norm(smooth_grad))
        g = np.where(
            w != 0,
            smooth_grad + self.l1 * np.sign(w),
            np.sign(smooth_grad) * np.maximum(np.abs(smooth_grad) - self.l1, 0.0),
        )
        return float(np.linalg.norm(g))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(l1={self.l1}, l2={self.l2})"


class NoRegularizer(Regularizer):
    """r = 0."""


@dataclass(frozen=True, repr=False)
class L2(Regularizer):
    """``r(w) = (mu / 2) ||w||^2``: mu-strongly convex."""

    mu: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "mu", _check_strength("l2 strength mu", self.mu))

    @property
    def l2(self) -> float:  # type: ignore[override]
        return self.mu


@dataclass(frozen=True, repr=False)
class L1(Regularizer):
    """``r(w) = lam ||w||_1`` (proximal, not smooth)."""

    lam: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "lam", _check_strength("l1 strength lam", self.lam))

    @property
    def l1(self) -> float:  # type: ignore[override]
        return self.lam


@dataclass(frozen=True, repr=False)
class ElasticNet(Regularizer):
    """``r(w) = lam (ratio ||w||_1 + (1 - ratio)/2 ||w||^2)``, as in scikit-learn."""

    lam: float = 0.0
    ratio: float = 0.5

    def __post_init__(self):
        object.__setattr__(self, "lam", _check_strength("elastic-net strength lam", self.lam))
        ratio = _check_strength("elastic-net ratio", self.ratio)
        if ratio > 1:
            raise ValueError(f"elastic-net ratio must be in [0, 1], got {ratio}")
        object.__setattr__(self, "ratio", ratio)

    @property
    def l1(self) -> float:  # type: ignore[override]
        return self.lam * self.ratio

    @property
    def l2(self) -> float:  # type: ignore[override]
        return self.lam * (1.0 - self.ratio)


def make_regularizer(spec) -> Regularizer:
    """Parse ``None``, ``("l2", mu)``, ``("l1", lam)``, ``("elastic_net", lam, ratio)``
    or pass a :class:`Regularizer` through."""
    if spec is None:
        return NoRegularizer()
    if isinstance(spec, Regularizer):
        return spec
    if isinstance(spec, (tuple, list)) and spec and isinstance(spec[0], str):
        kind, *args = spec
        table = {"l2": (L2, 1), "l1": (L1, 1), "elastic_net": (ElasticNet, 2)}
        if kind in table and len(args) == table[kind][1]:
            return table[kind][0](*args)
    raise ValueError(
        f"unknown regularizer {spec!r}; use None, ('l2', mu), ('l1', lam) or "
        "('elastic_net', lam, ratio)"
    )
