"""Per-chunk kernels of the Dask problem: what one worker computes on one row block.

Each kernel sees one block of rows ``X_b`` (dense ndarray or SciPy sparse) and the
matching labels ``y_b``, and returns one small float64 row (a partial sum); the client
adds the rows of all blocks. A block's partial sum never leaves the reduction: only the
total (the full-batch quantity the algorithm asked for) reaches the client. Every kernel
first applies the row-norm clip of :func:`clip_block`, so the declared ``data_norm``
holds on each block whatever the source holds.

Module-level functions only: the process-based workers of ``dask.distributed`` pickle
them by reference.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..problem.erm import _row_norms

# Columns of the row returned by :func:`check_block`.
FLAG_NAN_X, FLAG_INF_X, FLAG_BAD_Y, FLAG_BAD_LABEL, FLAG_LABEL_OVER, FLAG_SCALED, FLAG_CLEARLY = range(7)
N_FLAGS = 7


def _dense_or_csr(X):
    return sp.csr_matrix(X) if sp.issparse(X) else X


def clip_block(X, bound: float):
    """Rows of one block with ``||x_i|| > bound`` scaled onto the sphere of radius bound.

    The arithmetic of :func:`dperm.problem.erm.clip_rows` (factor ``1 - 4 eps`` so that
    rounding keeps the scaled rows at or below the bound), so a Dask fit sees bit-for-bit
    the rows of the in-memory fit; no count is kept and nothing is warned here (the
    client warns once, without counts, from :func:`check_block`'s flags).
    """
    X = _dense_or_csr(X)
    norms = _row_norms(X)
    over = norms > bound
    if not over.any():
        return X
    eps = np.finfo(X.dtype).eps
    scale = np.where(over, bound / np.where(over, norms, 1.0) * (1 - 4 * eps), 1.0).astype(X.dtype)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X)
    return X * scale[:, None]


def check_block(X, y, *, bound: float, binary: bool, label_bound: float) -> np.ndarray:
    """Seven 0/1 flags of one block (see the ``FLAG_*`` names): non-finite features,
    non-finite labels, labels outside {-1, +1} (binary losses), labels above the declared
    bound (real labels), rows above ``data_norm`` (any, and clearly above rounding).

    Flags, not counts: the client combines them with ``max`` and reports only whether a
    condition occurred anywhere.
    """
    X = _dense_or_csr(X)
    data = X.data if sp.issparse(X) else X
    flags = np.zeros((1, N_FLAGS))
    finite = np.isfinite(data)
    if not finite.all():
        flags[0, FLAG_NAN_X] = float(np.isnan(data).any())
        flags[0, FLAG_INF_X] = float(np.isinf(data).any())
        return flags  # norms are meaningless on a block with NaN / inf
    y = np.asarray(y, dtype=np.float64)
    if not np.isfinite(y).all():
        flags[0, FLAG_BAD_Y] = 1.0
        return flags
    if binary:
        flags[0, FLAG_BAD_LABEL] = float((~np.isin(y, (-1.0, 1.0))).any())
    else:
        flags[0, FLAG_LABEL_OVER] = float((np.abs(y) > label_bound * (1 + 1e-12)).any())
    norms = _row_norms(X)
    eps = np.finfo(X.dtype).eps
    flags[0, FLAG_SCALED] = float((norms > bound).any())
    flags[0, FLAG_CLEARLY] = float((norms > bound * (1.0 + 8 * eps)).any())
    return flags


def _prepared(X, y, bound, clip, label_bound):
    X = _dense_or_csr(X)
    if clip:
        X = clip_block(X, bound)
    y = np.asarray(y, dtype=np.float64)
    if label_bound is not None:
        y = np.clip(y, -label_bound, label_bound)
    return X, y


def _margins(X, w):
    return np.asarray(X @ w.astype(X.dtype, copy=False), dtype=np.float64).ravel()


def _xt(X, v):
    return np.asarray(X.T @ v.astype(X.dtype, copy=False), dtype=np.float64).ravel()


def margins_block(X, *, w, bound, clip) -> np.ndarray:
    """``<w, x_i>`` for the (clipped) rows of the block."""
    X = _dense_or_csr(X)
    return _margins(clip_block(X, bound) if clip else X, w)


def value_gradient_block(X, y, *, w, loss, bound, clip, label_bound, value: bool) -> np.ndarray:
    """``[sum_i phi'(<w, x_i>, y_i) x_i, sum_i phi(<w, x_i>, y_i)]`` over the block, as
    one row of length d + 1 (the last entry 0 unless ``value``)."""
    X, y = _prepared(X, y, bound, clip, label_bound)
    a = _margins(X, w)
    out = np.empty((1, X.shape[1] + 1))
    out[0, :-1] = _xt(X, loss.derivative(a, y))
    out[0, -1] = float(np.sum(loss.value(a, y))) if value else 0.0
    return out


def value_block(X, y, *, w, loss, bound, clip, label_bound) -> np.ndarray:
    """``sum_i phi(<w, x_i>, y_i)`` over the block, as a 1 x 1 array."""
    X, y = _prepared(X, y, bound, clip, label_bound)
    return np.array([[float(np.sum(loss.value(_margins(X, w), y)))]])


def hessian_vector_block(X, y, *, w, v, loss, bound, clip, label_bound) -> np.ndarray:
    """``sum_i phi''(<w, x_i>, y_i) <x_i, v> x_i`` over the block, as a 1 x d row."""
    X, y = _prepared(X, y, bound, clip, label_bound)
    curvature = loss.curvature(_margins(X, w), y)
    return _xt(X, curvature * _margins(X, v))[None, :]


def hessian_block(X, y, *, w, loss, bound, clip, label_bound) -> np.ndarray:
    """``sum_i phi''(<w, x_i>, y_i) x_i x_i^T`` over the block, flattened to 1 x d^2
    (in the block's precision, as :meth:`ERMProblem.hessian` forms it)."""
    X, y = _prepared(X, y, bound, clip, label_bound)
    curvature = loss.curvature(_margins(X, w), y)
    if sp.issparse(X):
        H = np.asarray((X.T @ sp.diags(curvature) @ X).todense())
    else:
        H = X.T @ (X * curvature.astype(X.dtype)[:, None])
    return np.asarray(H, dtype=np.float64).reshape(1, -1)
