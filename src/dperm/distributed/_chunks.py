"""Per-block kernels of the Dask problem: what one worker computes on one row block.

Each kernel sees one block of stored feature rows ``F`` (dense ndarray or SciPy sparse)
and the matching labels ``y``, and returns one small float64 row (a partial sum); Dask
adds the rows of all blocks on the workers and the client receives the total only. A
block's partial sum never reaches the client or the output.

The arithmetic is that of :class:`dperm.problem.ERMProblem` on the block: rows above
the feature bound are scaled onto it virtually (a factor per row applied to ``F v`` and
``F^T u``, computed as :func:`dperm.problem.erm.row_scales` does, silently as it does:
:func:`check_block`'s flags only decide whether a map joins the graph), the constant
intercept column ``s`` is added virtually, and products run in the compute precision.

Module-level functions only: process-based workers pickle them by reference.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .._validation import finite_features
from ..problem.erm import _row_norms, clip_factors

# Columns of the row returned by :func:`check_block`.
FLAG_NAN_X, FLAG_INF_X, FLAG_BAD_Y, FLAG_BAD_LABEL, FLAG_LABEL_OVER, FLAG_SCALED, FLAG_CLEARLY, FLAG_BAD_WEIGHT = range(8)
N_FLAGS = 8

# Elements per slice of a block that the checking pass reads at a time (64 KB as float64).
_CHECK_ELEMENTS = 1 << 13


@dataclass(frozen=True)
class Layout:
    """What every kernel needs besides the block: public constants of the problem."""

    loss: object  # a built-in MarginLoss
    feature_bound: float  # bound on ||x_i|| of the stored features (rows above are scaled)
    clip: bool  # whether some row is above it (else no norms are computed)
    intercept: float  # the virtual constant column s (0: none)
    label_bound: float | None  # clip |y| to it (real labels above the bound), or None
    compute_dtype: np.dtype

    def __dask_tokenize__(self):
        # Distributed's client hashes every task of a graph it is given; the default hash of
        # a dataclass pickles its fields (the loss object), once per block and pass.
        return ("dperm.Layout", repr(self.loss), self.feature_bound, self.clip, self.intercept,
                self.label_bound, np.dtype(self.compute_dtype).str)


def _csr(F):
    return sp.csr_matrix(F) if sp.issparse(F) else F


def row_scale(F, bound: float):
    """Factors bringing the rows of F above ``bound`` onto the sphere of that radius (1
    elsewhere), or None when no row is above it: the arithmetic of
    :func:`dperm.problem.erm.row_scales` (the factor ``1 - 4 eps`` of F's precision keeps
    the scaled rows at or below the bound after rounding)."""
    norms = _row_norms(F)
    over = norms > bound
    if not over.any():
        return None
    return clip_factors(F, bound, norms, np.finfo(F.dtype).eps)


def finite_block(F):
    """The block with every NaN or infinite feature 0 (the in-memory map,
    :func:`dperm._validation.finite_features`: a copy only of a block that needs it)."""
    return finite_features(_csr(F))


def finite_labels(y):
    """Real labels of one block made finite, each by itself: a NaN or infinite label is 0,
    the middle of the label range (in memory such a row gets weight 0; on Dask data a
    weight vector would change which solvers can run)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(np.isfinite(y), y, 0.0)


def clamped_weights(s):
    """Sample weights of one block mapped into [0, 1], each by itself: NaN and +-inf are 0
    (as :func:`dperm._validation.check_sample_weight` maps them in memory)."""
    s = np.asarray(s, dtype=np.float64)
    return np.clip(np.where(np.isfinite(s), s, 0.0), 0.0, 1.0)


def check_block(F, y, s=None, *, bound: float, binary: bool, label_bound: float) -> np.ndarray:
    """Eight 0/1 flags of one block (the ``FLAG_*`` names): NaN or infinite features,
    non-finite labels, labels outside {-1, +1} (binary losses), labels above the declared
    bound (real labels), rows above ``bound``, sample weights ``s`` (when given) outside
    [0, 1] or not finite. ``FLAG_CLEARLY`` is kept at 0 (the layout is stable): no
    warning is made from the data.

    Flags, not counts: the client combines them with ``max``; they decide only whether a
    per-row map is added to the graph, never a message.
    """
    F = _csr(F)
    flags = np.zeros((1, N_FLAGS))
    if s is not None:
        s = np.asarray(s, dtype=np.float64)
        flags[0, FLAG_BAD_WEIGHT] = float(not np.all((s >= 0) & (s <= 1)))  # NaN fails both
    y = np.asarray(y, dtype=np.float64)
    if not np.isfinite(y).all():
        flags[0, FLAG_BAD_Y] = 1.0
    # Dense blocks are read a slice of rows at a time: a worker's allocator returns every
    # large temporary to the system (Dask's MALLOC_TRIM_THRESHOLD_), so a block-sized one
    # costs its page faults on every pass; every flag is an "any" over rows, and a row's
    # norm depends on that row only, so the flags are those of the whole block.
    step = max(1, _CHECK_ELEMENTS // max(1, F.shape[1]))
    parts = [F] if sp.issparse(F) else [F[start : start + step] for start in range(0, max(1, F.shape[0]), step)]
    finite = True
    for part in parts:
        data = part.data if sp.issparse(part) else part
        if not np.isfinite(data).all():
            finite = False
            flags[0, FLAG_NAN_X] = max(flags[0, FLAG_NAN_X], float(np.isnan(data).any()))
            flags[0, FLAG_INF_X] = max(flags[0, FLAG_INF_X], float(np.isinf(data).any()))
    if not finite or flags[0, FLAG_BAD_Y]:
        return flags  # norms are meaningless on a block with NaN / inf
    if binary:
        flags[0, FLAG_BAD_LABEL] = float((~np.isin(y, (-1.0, 1.0))).any())
    else:
        flags[0, FLAG_LABEL_OVER] = float((np.abs(y) > label_bound).any())  # clamped, as in memory
    for part in parts:
        if (_row_norms(part) > bound).any():
            flags[0, FLAG_SCALED] = 1.0
            break
    return flags


def labels(y, layout: Layout) -> np.ndarray:
    """The block's labels in float64, clipped to the declared bound when some exceed it."""
    y = np.asarray(y, dtype=np.float64)
    return y if layout.label_bound is None else np.clip(y, -layout.label_bound, layout.label_bound)


class _Block:
    """One block with the problem's virtual row scales, intercept column and sample weights."""

    def __init__(self, F, y, layout: Layout, weights=None, buffer=None):
        from ..problem.erm import _scaled_rows, unsafe_to_scale_virtually

        F = _csr(F)
        self.scale = row_scale(F, layout.feature_bound) if layout.clip else None
        if unsafe_to_scale_virtually(self.scale, layout.feature_bound):  # clipped before the cast and the products
            F, self.scale = _scaled_rows(F, self.scale), None
        if F.dtype == layout.compute_dtype:
            self.F = F
        elif buffer is not None and not sp.issparse(F):  # the cast into the caller's buffer: no new allocation
            self.F = buffer[: F.shape[0]]
            self.F[...] = F
        else:
            self.F = F.astype(layout.compute_dtype)
        self.y = labels(y, layout)
        self.s = layout.intercept
        self.k = F.shape[1]
        self.d = self.k + (1 if self.s else 0)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)

    def weigh(self, values):
        """``s_i * values_i`` with the block's sample weights (unchanged when unweighted)."""
        return values if self.weights is None else values * self.weights

    def matvec(self, v):
        out = np.asarray(self.F @ v[: self.k].astype(self.F.dtype, copy=False), dtype=np.float64).ravel()
        if self.scale is not None:
            out *= self.scale
        if self.s:
            out += self.s * v[self.k]
        return out

    def rmatvec(self, u):
        out = np.zeros(self.d)
        uf = u if self.scale is None else u * self.scale
        out[: self.k] = np.asarray(self.F.T @ uf.astype(self.F.dtype, copy=False), dtype=np.float64).ravel()
        if self.s:
            out[self.k] = self.s * float(u.sum())
        return out


def value_gradient_block(F, y, s=None, *, w, layout: Layout, value: bool) -> np.ndarray:
    """``[sum_i s_i phi'(<w, x_i>, y_i) x_i, sum_i s_i phi(<w, x_i>, y_i)]`` over the block
    (``s`` the block's sample weights, 1 when None), one row of length d + 1 (the last
    entry 0 unless ``value``)."""
    from ..problem.erm import _BLOCK_ELEMENTS

    # A slice of rows at a time (1 MB in the compute precision, the in-memory gradient's
    # blocks), each slice's margins and then its share of X^T u while it is in cache: one
    # read of the block, and every temporary small (a block-sized one costs its page
    # faults on every pass in a Dask worker, whose allocator trims eagerly). The slices'
    # sums are added in float64.
    F, rows = _csr(F), F.shape[0]
    step = max(1, _BLOCK_ELEMENTS // max(1, F.shape[1]))
    dense = not sp.issparse(F)
    buffer = (np.empty((min(step, rows), F.shape[1]), dtype=layout.compute_dtype)
              if dense and F.dtype != layout.compute_dtype else None)
    y = np.asarray(y)
    out = np.zeros((1, F.shape[1] + (1 if layout.intercept else 0) + 1))
    for start in range(0, max(rows, 1), step):
        part = slice(start, min(rows, start + step))
        b = _Block(F[part], y[part], layout, None if s is None else np.asarray(s)[part], buffer)
        a = b.matvec(w)
        out[0, :-1] += b.rmatvec(b.weigh(layout.loss.derivative(a, b.y)))
        if value:
            out[0, -1] += float(np.sum(b.weigh(layout.loss.value(a, b.y))))
    return out


def certified_gradient_block(F, y, s=None, *, w, layout: Layout) -> np.ndarray:
    """``sum_i s_i phi'(<w, x_i>, y_i) x_i`` over the block in float64, summed over
    sub-blocks of :func:`~dperm.problem.erm.certificate_rows` rows in sequence (each
    converted to float64 exactly on its own: no float64 copy of the block), so that each
    coordinate is a sum of ``certificate_accumulation(rows)`` terms: the in-memory
    certified gradient's arithmetic on the block. ``layout.compute_dtype`` is float64."""
    from ..problem.erm import certificate_rows

    rows = F.shape[0]
    step = certificate_rows(rows, F.shape[1])
    out = np.zeros((1, F.shape[1] + (1 if layout.intercept else 0)))
    # One float64 buffer for every sub-block's exact cast (a C-contiguous slice of it is laid
    # out as a fresh copy, so the products are the same): a fresh copy per sub-block is a
    # new mapping and its page faults in a Dask worker, whose allocator trims eagerly.
    buffer = None if sp.issparse(F) else np.empty((min(step, rows), F.shape[1]), dtype=np.float64)
    for start in range(0, rows, step):
        part = slice(start, min(rows, start + step))
        b = _Block(F[part], np.asarray(y)[part], layout, None if s is None else np.asarray(s)[part], buffer)
        out[0] += b.rmatvec(b.weigh(layout.loss.derivative(b.matvec(w), b.y)))
    return out


def value_block(F, y, s=None, *, w, layout: Layout) -> np.ndarray:
    """``sum_i s_i phi(<w, x_i>, y_i)`` over the block, as a 1 x 1 array."""
    b = _Block(F, y, layout, s)
    return np.array([[float(np.sum(b.weigh(layout.loss.value(b.matvec(w), b.y))))]])


def hessian_vector_block(F, y, s=None, *, w, v, layout: Layout) -> np.ndarray:
    """``sum_i s_i phi''(<w, x_i>, y_i) <x_i, v> x_i`` over the block, a 1 x d row."""
    b = _Block(F, y, layout, s)
    return b.rmatvec(b.weigh(layout.loss.curvature(b.matvec(w), b.y)) * b.matvec(v))[None, :]


def hessian_block(F, y, s=None, *, w, layout: Layout, product_dtype=None) -> np.ndarray:
    """``sum_i s_i phi''(<w, x_i>, y_i) x_i x_i^T`` over the block, flattened to 1 x d^2, as
    :meth:`ERMProblem.hessian` forms it: with ``product_dtype`` (float32 for Newton
    directions) the dense block's margins in its stored precision (no converted copy) and
    its products in that precision; a convex loss's block as ``B^T B`` with ``B`` the rows
    scaled by ``sqrt(phi'')`` (a symmetric rank-k update, half the flops of a general
    product), a sub-block of rows at a time in one buffer."""
    from ..problem.erm import _BLOCK_ELEMENTS

    dense = not sp.issparse(F)
    if product_dtype is not None and dense:
        layout = replace(layout, compute_dtype=np.dtype(F.dtype))
    b = _Block(F, y, layout, s)
    curv = b.weigh(layout.loss.curvature(b.matvec(w), b.y))
    k, d = b.k, b.d
    H = np.zeros((d, d))
    if b.s:
        H[:k, k] = H[k, :k] = b.s * b.rmatvec(curv)[:k]
        H[k, k] = b.s * b.s * float(curv.sum())
    c = curv if b.scale is None else curv * b.scale**2
    if sp.issparse(b.F):
        H[:k, :k] = (b.F.T @ sp.diags(c.astype(b.F.dtype)) @ b.F).toarray()
    elif bool(np.all(c >= 0)):
        dtype = np.dtype(b.F.dtype if product_dtype is None else product_dtype)
        root = np.sqrt(c).astype(dtype)
        rows = b.F.shape[0]
        step = max(256, 4 * _BLOCK_ELEMENTS // max(1, k))
        buffer = np.empty((min(step, rows), k), dtype=dtype)
        for start in range(0, rows, step):
            part = b.F[start : start + step]
            B = buffer[: part.shape[0]]
            if part.dtype == dtype:
                np.multiply(part, root[start : start + step, None], out=B)
            else:
                B[...] = part
                B *= root[start : start + step, None]
            H[:k, :k] += B.T @ B
    else:
        H[:k, :k] = b.F.T @ (b.F * c.astype(b.F.dtype)[:, None])
    return H.reshape(1, -1)


def strided_rows(arrays: list, first: int, stride: int) -> tuple:
    """Rows ``first, first + stride, ...`` of each of one block's arrays (features, labels,
    weights): its share of the sample ``X[::stride]``, as copies (a view would keep the
    whole block alive in the result)."""
    return tuple(a[first::stride].copy() for a in arrays)


def margins_block(F, *, w, layout: Layout) -> np.ndarray:
    """``<w, x_i>`` for the rows of the block (with their scales and intercept)."""
    return _Block(F, np.zeros(F.shape[0]), layout).matvec(w)


_POINTS_PER_PRODUCT = 2**22  # margins per block and chunk of points (the in-memory fallback's bound)


def loss_sums_block(F, y, W, *, layout: Layout) -> np.ndarray:
    """``sum_i phi(<W[k], x_i>, y_i)`` over the block for every point ``W[k]`` of a net, a
    1 x len(W) row: the exponential mechanism's scores, the arithmetic of the in-memory
    ``exponential._objectives`` on the block's model rows (scaled onto the bound,
    intercept column appended). With a compiled loss, the compiled kernel in float64
    (its per-block mean times the block's row count); otherwise margins ``F W^T`` in
    F's precision, a few points at a time."""
    from ..algorithms import _kernels  # the kernels import numba: only where a net is scored

    y = labels(y, layout)
    rows = model_rows(F, layout)  # in the stored precision, as the in-memory problem's X
    out = np.empty((1, len(W)))
    try:
        code, param = _kernels.loss_code(layout.loss)
    except ValueError:
        code = None
    if code is not None:
        dense = rows.toarray() if sp.issparse(rows) else rows
        _kernels.mean_losses_at_points(np.ascontiguousarray(dense, dtype=np.float64), y,
                                       np.ascontiguousarray(W, dtype=np.float64), code, param, out[0])
        out *= rows.shape[0]
        return out
    chunk = max(1, _POINTS_PER_PRODUCT // max(1, rows.shape[0]))
    for begin in range(0, len(W), chunk):
        margins = np.asarray(rows @ W[begin : begin + chunk].T.astype(rows.dtype), dtype=np.float64)
        out[0, begin : begin + chunk] = layout.loss.value(margins, y[:, None]).sum(axis=0)
    return out


def model_rows(F, layout: Layout):
    """The block's rows as the model sees them: rows above the feature bound scaled onto
    it (in the stored precision, as :attr:`dperm.problem.ERMProblem.X` scales them; a
    row's factor depends on that row only, so a subset of rows gets the same), and the
    constant intercept column appended when there is one. CSR for sparse blocks."""
    from ..problem.erm import _scaled_rows

    F = _csr(F)
    scale = row_scale(F, layout.feature_bound) if layout.clip else None
    if scale is not None:
        F = _scaled_rows(F, scale)
    return append_column(F, layout.intercept) if layout.intercept else F


def append_column(block, value: float):
    """``block`` with a constant column ``value`` appended (dense or CSR)."""
    column = np.full((block.shape[0], 1), value, dtype=block.dtype)
    if sp.issparse(block):
        return sp.hstack([block, sp.csr_matrix(column)], format="csr")
    return np.hstack([block, column])
