"""User-defined losses: per-example value, gradient and Hessian-vector callables with
declared constants.

A :class:`CustomLoss` is any loss ``f(w; x, y)``, not only a margin loss. Its constants
(L, beta, rho) are *declared* by the user as public bounds over C and the declared data
domain; dperm cannot check them, so it enforces the one that privacy rests on: every
per-example gradient is clipped to norm ``lipschitz`` before it is averaged (silently: a
warning would tell whether one row's gradient was above the bound, docs/privacy.md,
"Totality"; a row whose gradient is not finite contributes 0), so the replace-one
sensitivity ``2 L / n`` of the mean gradient holds whatever the callables return. Smoothness and curvature declarations
enter only step sizes and the assumptions checks.

Clipping keeps the sensitivity of a *gradient release*, but not properties of the loss
(a clipped field is not monotone or co-coercive when the declared L is too low), so the
mechanisms whose sensitivity rests on convexity or smoothness refuse a custom loss before
reading the data: output and GD output perturbation, objective perturbation, the
exponential mechanism, localization, dp_sosp and dp_gd_so; the compiled per-example loops
(dp_sgd, dp_svrg, dp_svrg_pp, rrpsgd) need a built-in loss. The gradient-release methods
(noisy_gd, dp_gd, dp_gld, dp_fw_l2, dp_fw_l1, dp_accmd) accept a custom loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["CustomLoss", "LipschitzWarning"]


from ..exceptions import LipschitzWarning  # defined in the leaf, re-exported here


@dataclass(frozen=True, eq=False)
class CustomLoss:
    """A loss ``f(w; x, y)`` given by callables, with declared public constants.

    Parameters
    ----------
    value : callable ``(w, X, y) -> ndarray (m,)``
        Per-example losses of the m rows of X (dense array or CSR matrix).
    gradient : callable ``(w, X, y) -> ndarray (m, d)``
        Per-example gradients in w.
    lipschitz : float
        Declared bound L on ``||grad f(w; x, y)||`` over C and the data domain
        (``||x|| <= data_norm``, ``|y| <= label_bound``). Enforced by clipping.
    smoothness : float
        Declared bound beta on the Lipschitz constant of ``grad f(.; x, y)``; ``inf``
        for a non-smooth loss.
    hessian_vector : callable ``(w, v, X, y) -> ndarray (d,)``, optional
        Mean over the rows of the Hessian of f at w times v. Without it, central
        differences of the mean gradient are used (step ``1e-6 max(1, ||w||)``).
    hessian_lipschitz : float
        Declared bound rho on the Lipschitz constant of the Hessian (default ``inf``).
    convex : bool
        Whether ``f(.; x, y)`` is convex for every admissible (x, y).
    name : str
        A name for reports.
    """

    value: Callable
    gradient: Callable
    lipschitz: float
    smoothness: float = math.inf
    hessian_vector: Callable | None = None
    hessian_lipschitz: float = math.inf
    convex: bool = False
    name: str = "custom"

    binary = False

    def __post_init__(self):
        if not (callable(self.value) and callable(self.gradient)):
            raise TypeError("value and gradient must be callables (w, X, y) -> array")
        if self.hessian_vector is not None and not callable(self.hessian_vector):
            raise TypeError("hessian_vector must be a callable (w, v, X, y) -> array or None")
        for field in ("lipschitz", "smoothness", "hessian_lipschitz"):
            number = getattr(self, field)
            if isinstance(number, bool) or not isinstance(number, (int, float)) or math.isnan(number) or number <= 0:
                raise ValueError(f"{field} must be a number > 0 (inf allowed for smoothness and hessian_lipschitz)")
        if not math.isfinite(self.lipschitz):
            raise ValueError("lipschitz must be finite: it is the bound the per-example gradients are clipped to")

    @property
    def smooth(self) -> bool:
        return math.isfinite(self.smoothness)

    def check_labels(self, y: np.ndarray) -> None:  # any real labels; the callables judge
        return None

    # -- evaluation used by ERMProblem -----------------------------------------
    def per_example_values(self, w, X, y) -> np.ndarray:
        values = np.asarray(self.value(w, X, y), dtype=np.float64)
        if values.shape != (X.shape[0],):
            raise ValueError(f"custom loss value must return shape ({X.shape[0]},), got {values.shape}")
        return values

    def clipped_gradients(self, w, X, y) -> np.ndarray:
        """Per-example gradients, each clipped to norm ``lipschitz``; a row whose gradient
        has a NaN or infinite entry gets the zero gradient. Both maps are per-row and
        silent: a warning or an error would depend on one row (docs/privacy.md, "Totality")."""
        grads = np.asarray(self.gradient(w, X, y), dtype=np.float64)
        if grads.shape != (X.shape[0], w.shape[0]):  # the callable's contract: public, not data
            raise ValueError(f"custom loss gradient must return shape ({X.shape[0]}, {w.shape[0]}), got {grads.shape}")
        bad = ~np.isfinite(grads).all(axis=1)
        if bad.any():
            grads[bad] = 0.0
        norms = np.linalg.norm(grads, axis=1)
        over = norms > self.lipschitz
        if over.any():
            grads[over] *= (self.lipschitz / norms[over])[:, None]
        return grads

    def mean_hessian_vector(self, w, v, X, y, weights=None) -> np.ndarray:
        """Mean over the rows of (s_i times) the Hessian at w times v. With per-example
        weights s the user's ``hessian_vector`` (an unweighted mean) does not apply, and
        central differences of the weighted mean gradient are used."""
        if self.hessian_vector is not None and weights is None:
            return np.asarray(self.hessian_vector(w, v, X, y), dtype=np.float64)
        h = 1e-6 * max(1.0, float(np.linalg.norm(w)))

        def mean_gradient(point):
            grads = np.asarray(self.gradient(point, X, y), dtype=np.float64)
            return (grads if weights is None else grads * weights[:, None]).mean(axis=0)

        return (mean_gradient(w + h * v) - mean_gradient(w - h * v)) / (2 * h)

    def __repr__(self) -> str:
        return f"CustomLoss(name={self.name!r}, lipschitz={self.lipschitz}, smoothness={self.smoothness}, convex={self.convex})"
