"""Convex constraint sets C: projection, linear minimization oracle, vertices, norms.

The sizes of C (its largest L2 norm, its diameter) are public: algorithms use them for
step sizes, for Lipschitz bounds of losses that are only Lipschitz on a bounded set, and
for nets of the exponential mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Constraint",
    "Unconstrained",
    "L2Ball",
    "L1Ball",
    "Box",
    "make_constraint",
    "project_l1_ball",
]


def _check_radius(radius) -> float:
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)):
        raise TypeError(f"constraint radius must be a number, got {radius!r}")
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"constraint radius must be a finite number > 0, got {radius}")
    return radius


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto ``{w : ||w||_1 <= radius}`` by sorting.

    Duchi, Shalev-Shwartz, Singer, Chandra (2008), Figure 1: O(d log d).
    """
    a = np.abs(v)
    if a.sum() <= radius:
        return np.array(v, dtype=float, copy=True)
    u = np.sort(a)[::-1]
    cumulative = np.cumsum(u) - radius
    index = np.arange(1, u.size + 1)
    rho = np.nonzero(u * index > cumulative)[0][-1]
    theta = cumulative[rho] / (rho + 1.0)
    return np.sign(v) * np.maximum(a - theta, 0.0)


class Constraint:
    """Base class of constraint sets; ``Unconstrained`` is R^d."""

    bounded: bool = True

    def project(self, w: np.ndarray) -> np.ndarray:
        """Euclidean projection onto C."""
        raise NotImplementedError

    def lmo(self, g: np.ndarray) -> np.ndarray:
        """Linear minimization oracle: a point of argmin_{s in C} <g, s>."""
        raise NotImplementedError

    def l2_radius(self, dim: int) -> float:
        """max_{w in C} ||w||_2."""
        raise NotImplementedError

    def diameter(self, dim: int) -> float:
        """L2 diameter of C (twice the radius for these centrally symmetric sets)."""
        return 2.0 * self.l2_radius(dim)

    def minkowski_norm(self, w: np.ndarray) -> float:
        """Gauge of C at w: the smallest t >= 0 with w in t C."""
        raise NotImplementedError

    def contains(self, w: np.ndarray, tol: float = 1e-9) -> bool:
        return self.minkowski_norm(w) <= 1.0 + tol


class Unconstrained(Constraint):
    """C = R^d."""

    bounded = False

    def project(self, w):
        return np.array(w, dtype=float, copy=True)

    def lmo(self, g):
        raise ValueError("the linear minimization oracle needs a bounded constraint set")

    def l2_radius(self, dim):
        return math.inf

    def minkowski_norm(self, w):
        return 0.0

    def __repr__(self):
        return "Unconstrained()"


@dataclass(frozen=True)
class L2Ball(Constraint):
    """``{w : ||w||_2 <= radius}``."""

    radius: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "radius", _check_radius(self.radius))

    def project(self, w):
        norm = float(np.linalg.norm(w))
        scale = 1.0 if norm <= self.radius else self.radius / norm
        return np.asarray(w, dtype=float) * scale

    def lmo(self, g):
        norm = float(np.linalg.norm(g))
        if norm == 0.0:
            return np.zeros_like(g, dtype=float)
        return -self.radius * np.asarray(g, dtype=float) / norm

    def l2_radius(self, dim):
        return self.radius

    def minkowski_norm(self, w):
        return float(np.linalg.norm(w)) / self.radius


@dataclass(frozen=True)
class L1Ball(Constraint):
    """``{w : ||w||_1 <= radius}``, the convex hull of the 2d vertices ``+-radius e_j``."""

    radius: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "radius", _check_radius(self.radius))

    def project(self, w):
        return project_l1_ball(np.asarray(w, dtype=float), self.radius)

    def lmo(self, g):
        j = int(np.argmax(np.abs(g)))
        s = np.zeros(np.shape(g), dtype=float)
        s[j] = -self.radius * (1.0 if g[j] >= 0 else -1.0)
        return s

    def vertices(self, dim: int) -> np.ndarray:
        """The 2d vertices ``+radius e_j`` (rows 0..d-1) and ``-radius e_j`` (rows d..2d-1)."""
        eye = np.eye(dim) * self.radius
        return np.vstack([eye, -eye])

    def l2_radius(self, dim):
        return self.radius

    def minkowski_norm(self, w):
        return float(np.abs(w).sum()) / self.radius


@dataclass(frozen=True)
class Box(Constraint):
    """``{w : ||w||_inf <= radius}``."""

    radius: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "radius", _check_radius(self.radius))

    def project(self, w):
        return np.clip(np.asarray(w, dtype=float), -self.radius, self.radius)

    def lmo(self, g):
        return -self.radius * np.where(np.asarray(g) >= 0, 1.0, -1.0)

    def vertices(self, dim: int) -> np.ndarray:
        if dim > 20:
            raise ValueError(f"the box has 2**{dim} vertices; refusing to list more than 2**20")
        grid = ((np.arange(2**dim)[:, None] >> np.arange(dim)) & 1).astype(float)
        return self.radius * (2.0 * grid - 1.0)

    def l2_radius(self, dim):
        return self.radius * math.sqrt(dim)

    def minkowski_norm(self, w):
        return float(np.max(np.abs(w), initial=0.0)) / self.radius


def make_constraint(spec) -> Constraint:
    """Parse ``None``, ``("l2_ball", R)``, ``("l1_ball", R)``, ``("box", R)`` or pass a
    :class:`Constraint` through."""
    if spec is None:
        return Unconstrained()
    if isinstance(spec, Constraint):
        return spec
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], str):
        table = {"l2_ball": L2Ball, "l1_ball": L1Ball, "box": Box}
        if spec[0] in table:
            return table[spec[0]](spec[1])
    raise ValueError(
        f"unknown constraint {spec!r}; use None, ('l2_ball', R), ('l1_ball', R) or ('box', R)"
    )
