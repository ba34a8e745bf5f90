"""Worst-case replace-one neighbouring datasets for the audit.

Every mechanism of dperm is calibrated to a sensitivity that assumes the worst
replace-one pair: one row whose loss gradient is ``+L`` in some direction replaced by one
whose gradient is ``-L`` in the same direction (``||grad l(w; z) - grad l(w; z')|| = 2L``).
An audit only tests the accounting where it is tight if its pair realises that worst
case, so the pair is built around a *canary* row ``x = data_norm e_1`` whose label is
flipped (y = +1 in D, y = -1 in D').

Which loss realises it: a margin loss ``phi(y <w, x>)`` has gradient
``phi'(y <w, x>) y x``; the canary's two gradients differ by ``2L`` only where both
labels see the full slope ``|phi'| = L_phi``. The huberized hinge (width h) has
``phi'(z) = -1`` for every ``z < 1 - h``: at margins ``|<w, x>| < 1 - h`` the canary's
gradient is exactly ``-y x``, so the gradients of D and D' differ by exactly
``2 data_norm e_1`` and the mean gradients by ``2L/n``, the sensitivity every gradient
method is calibrated to. The logistic loss cannot: its slopes at one margin are
``sigma(-m)`` and ``sigma(m)``, which sum to 1, so flipping a label (or the sign of x)
moves the gradient by ``data_norm``, half the bound, and an audit with it would miss a
mechanism whose noise is too small by up to a factor 2. (Flipping *both* the label and
the sign of x changes nothing: the loss depends on ``y x`` only.)

The other rows are either zero vectors (no gradient, no curvature: the canary alone
moves the output) or *anchor* rows along ``e_1`` with a common label that shift the
sum ``S = sum_i y_i <x_i, e_1>`` of the other rows; the exponential mechanism and
report-noisy-max need such a shift to put the two output distributions in the regime
where their privacy loss approaches epsilon (see :mod:`dperm.audit.families`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["NeighbourPair", "label_flip_pair", "swapped_row_pair"]


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two datasets of equal size that differ in exactly one row.

    Attributes
    ----------
    X, y : ndarray
        D: the canary row carries label +1.
    X_prime, y_prime : ndarray
        D': the same rows, the canary's label -1.
    index : int
        The row that differs.
    direction : ndarray of shape (d,)
        The unit vector along which the two datasets' gradients differ (e_1); an
        audit projects each released vector on it. On D the outputs lie further along
        it than on D'.
    """

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    index: int
    direction: np.ndarray

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def differing_rows(self) -> np.ndarray:
        """Indices of the rows where D and D' differ (exactly one for a valid pair)."""
        changed = np.any(self.X != self.X_prime, axis=1) | (self.y != self.y_prime)
        return np.flatnonzero(changed)


def label_flip_pair(n: int, d: int, *, data_norm: float = 1.0, offset: float = 0.0) -> NeighbourPair:
    """The canary pair: ``(data_norm e_1, +1)`` in D replaced by ``(data_norm e_1, -1)``.

    Parameters
    ----------
    n : int
        Rows in each dataset (at least 2, and enough for the anchor rows).
    d : int
        Dimension (at least 1).
    data_norm : float
        The declared bound on ``||x||``; the canary has exactly this norm, every row at
        most this norm.
    offset : float
        ``S = sum_i y_i <x_i, e_1>`` over the rows other than the canary, realised by
        ``ceil(|S| / data_norm)`` anchor rows ``(|S| / k) e_1`` with label ``sign(S)``;
        the remaining rows are zero vectors with alternating labels.

    Returns
    -------
    NeighbourPair
    """
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    n, d = int(n), int(d)
    data_norm = float(data_norm)
    if not (math.isfinite(data_norm) and data_norm > 0):
        raise ValueError(f"data_norm must be a finite number > 0, got {data_norm}")
    offset = float(offset)
    if not math.isfinite(offset):
        raise ValueError(f"offset must be finite, got {offset}")
    anchors = math.ceil(abs(offset) / data_norm - 1e-12) if offset != 0 else 0
    if anchors > n - 1:
        raise ValueError(f"offset {offset:g} needs {anchors} anchor rows of norm <= {data_norm:g}; n - 1 = {n - 1}")
    X = np.zeros((n, d))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X[0, 0] = data_norm
    y[0] = 1.0
    if anchors:
        X[1 : anchors + 1, 0] = abs(offset) / anchors
        y[1 : anchors + 1] = math.copysign(1.0, offset)
    y_prime = y.copy()
    y_prime[0] = -1.0
    direction = np.zeros(d)
    direction[0] = 1.0
    return NeighbourPair(X=X, y=y, X_prime=X.copy(), y_prime=y_prime, index=0, direction=direction)


def swapped_row_pair(n: int, d: int, *, data_norm: float = 1.0) -> NeighbourPair:
    """The worst pair for fixed-size batches under replace-one: every row is
    ``(data_norm e_1, +1)``, and D' flips the canary's label.

    In the linear regime every row's gradient is ``-y x``: on D all of them are
    ``-data_norm e_1``, so every batch sums to the same vector; on D' a batch that holds
    the canary has swapped one ``-data_norm e_1`` for ``+data_norm e_1``, a shift of
    ``2 data_norm``, twice the per-row bound. The pair of outputs is then add-or-remove
    Poisson sampling at twice the shift, which is what a fixed-size batch's accounting
    must cover (Poisson's replace-one pair covers only half of it).
    """
    pair = label_flip_pair(n, d, data_norm=data_norm)
    y = np.ones(pair.n_samples)
    X = np.zeros_like(pair.X)
    X[:, 0] = float(data_norm)
    y_prime = y.copy()
    y_prime[pair.index] = -1.0
    return NeighbourPair(X=X, y=y, X_prime=X.copy(), y_prime=y_prime, index=pair.index, direction=pair.direction)
