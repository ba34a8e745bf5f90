"""The ERM problem over a row-chunked Dask array: every full-batch quantity is one
map-reduce over the row blocks.

:class:`DaskERMProblem` is an :class:`~dperm.problem.ERMProblem` (same constants, same
proximal steps, same optimality certificates, all from declared bounds and public
hyper-parameters) whose data-touching methods (objective, gradient, Hessian-vector
product, dense Hessian, the mean loss at every point of a net) map one kernel of
:mod:`dperm.distributed._chunks` over the row blocks and add the partial sums. The
algorithms run unchanged on the client: they see a gradient, draw their noise from the
fit's own generator, and step, exactly as with NumPy input, so a fit on Dask and the
same fit on NumPy with one ``random_state`` give the same coefficients up to the
rounding of the summation order.

The data are never gathered: X stays where Dask keeps it (workers' memory, or a store
read block by block), and the client receives length-d (or d x d, or one per point of a
net) sums, and, for the mini-batch algorithms (:meth:`DaskERMProblem.gather_rows`), the
rows of the batches the fit's generator drew, a round of steps at a time.
"""

from __future__ import annotations

import copy
import functools
import uuid
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .._validation import check_positive
from ..problem.constraints import make_constraint
from ..problem.custom import CustomLoss
from ..problem.erm import (ERMProblem, _scaled_rows, certificate_accumulation, gradient_rounding_bound,
                           unsafe_to_scale_virtually)
from ..problem.losses import make_loss
from ..problem.passes import record as _record_read
from ..problem.regularizers import make_regularizer
from . import _chunks
from .inputs import as_dask_weights, as_dask_xy

__all__ = ["DaskERMProblem"]

# Partial rows combined per task (Dask's ``split_every`` of the previous reduction).
_SPLIT = 64


def _combine(reduce: str, rows: list) -> np.ndarray:
    """The sum (or max) of 1 x width rows, as Dask's ``sum(axis=0)`` aggregates a group: the
    rows stacked, then reduced over axis 0 (added in sequence), kept 2-D."""
    stacked = np.concatenate([np.asarray(r, dtype=np.float64) for r in rows], axis=0)
    return stacked.max(axis=0, keepdims=True) if reduce == "max" else stacked.sum(axis=0, keepdims=True)


class DaskERMProblem(ERMProblem):
    """A regularized, possibly constrained ERM problem over Dask data.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Features, chunked by rows (a chunking across columns is merged: a block must
        hold whole rows). Dense float32 / float64 blocks (other numeric types become
        float64) or SciPy sparse blocks. A DataFrame's columns are the features.
    y : dask array / Series, array-like, or str
        Labels, as for :class:`~dperm.problem.ERMProblem`; with a DataFrame X, the name
        of the target column.
    loss, regularizer, constraint, data_norm, label_bound, intercept_scaling
        As for :class:`~dperm.problem.ERMProblem` (built-in margin losses only); the
        intercept column is virtual here too (never written into the blocks).
    sample_weight : dask array / Series, array-like, or None
        Per-example weights (mapped into [0, 1]), as for :class:`~dperm.problem.ERMProblem`; kept
        chunked like the rows (checked block by block with the data) and applied inside
        every pass. The mini-batch algorithms (dp_sgd, rrpsgd) do not take them on Dask
        data yet.

    Notes
    -----
    Construction makes one pass over the data to check it, block by block: finite
    values, labels in the loss's domain, rows above the feature bound and labels above
    ``label_bound``. Each block reports flags, never counts or values; no warning is made
    from them, and the one error (binary labels, below) says only that a condition
    occurred. Private values are mapped, never refused (docs/privacy.md, "Totality"), each by itself and block by block (a second pass then
    checks the mapped blocks): a NaN or infinite feature is 0, a real label that is NaN or
    infinite is 0 (the middle of the label range: weight 0, the in-memory map, would change
    which solvers can run on Dask data), a weight that is NaN or infinite is 0
    and every weight is clamped into [0, 1]. Binary labels other than -1 and +1 are
    refused (the estimators always pass -1/+1). Rows above the bound are scaled onto it
    inside every later pass (the arithmetic of ``row_scales``), so the declared bound
    holds on every block the algorithms touch; labels above ``label_bound`` are clipped
    likewise, silently (a warning would tell whether one row crossed a bound).

    The computations run on Dask's current scheduler: a ``dask.distributed.Client``
    when one is active, else Dask's local threads.
    """

    def __init__(
        self,
        X,
        y,
        loss="logistic",
        regularizer=None,
        constraint=None,
        *,
        data_norm: float = 1.0,
        label_bound: float = 1.0,
        intercept_scaling: float = 0.0,
        sample_weight=None,
    ):
        self.loss = make_loss(loss)
        if isinstance(self.loss, CustomLoss):
            raise NotImplementedError("Dask input supports the built-in margin losses only, not a CustomLoss")
        self._custom = False
        self.regularizer = make_regularizer(regularizer)
        self.constraint = make_constraint(constraint)
        self.data_norm = check_positive("data_norm", data_norm)
        self.label_bound = check_positive("label_bound", label_bound)
        self._set_intercept(intercept_scaling)
        X, y = as_dask_xy(X, y)
        if X.shape[0] < 2:
            raise ValueError(f"X has {X.shape[0]} row(s); at least 2 are required")
        if X.shape[1] < 1:
            raise ValueError("X has 0 features; at least 1 is required")
        self._features, self.y = X, y
        # weights chunked like the rows; a lazy Dask vector (never gathered), or None
        self.sample_weight = None if sample_weight is None else as_dask_weights(sample_weight, X)
        self.n_samples = int(X.shape[0])
        self.n_features = int(X.shape[1]) + (1 if self.intercept_scaling else 0)
        self._compute_dtype = X.dtype
        self._clip, self._label_clip = self._check_blocks()
        self.constants = self._constants()

    # -- the one checking pass ----------------------------------------------------
    def _check_blocks(self) -> tuple[bool, float | None]:
        flags = self._flags()
        # Totality (docs/privacy.md): a private value is mapped, never refused. Only when the
        # pass found one is the map added to the graph (clean data pays nothing more per
        # pass), and the pass is run again on the mapped blocks.
        mapped = False
        if flags[_chunks.FLAG_NAN_X] or flags[_chunks.FLAG_INF_X]:  # a NaN or infinite feature: 0
            F = self._features
            self._features = F.map_blocks(_chunks.finite_block, dtype=F.dtype, meta=F._meta)
            mapped = True
        if flags[_chunks.FLAG_BAD_Y] and not self.loss.binary:  # NaN, +-inf: 0
            self.y = self.y.map_blocks(_chunks.finite_labels, dtype=np.float64)
            mapped = True
        if flags[_chunks.FLAG_BAD_WEIGHT]:  # NaN, inf: 0; clamped into [0, 1]
            self.sample_weight = self.sample_weight.map_blocks(_chunks.clamped_weights, dtype=np.float64)
            mapped = True
        if mapped:
            flags = self._flags()
        if flags[_chunks.FLAG_BAD_Y] or flags[_chunks.FLAG_BAD_LABEL]:
            # No label value is named: the label set is data. (Binary labels on Dask data:
            # a row cannot be given weight 0 without changing which solvers run.)
            raise ValueError(
                f"the {self.loss.name!r} loss needs labels in {{-1, +1}}; y has other values (or NaN). "
                "Map binary labels to -1/+1 (the estimators do this for any two classes)."
            )
        # Labels beyond label_bound are clamped and rows above the norm bound scaled, both
        # per row and silently: a warning from these flags would release whether one row
        # crossed a bound (docs/privacy.md, "Totality"). The flags only decide whether the
        # map is added to the graph, which changes no output.
        label_clip = self.label_bound if flags[_chunks.FLAG_LABEL_OVER] else None
        return bool(flags[_chunks.FLAG_SCALED]), label_clip

    def _flags(self) -> np.ndarray:
        return self._reduce(
            _chunks.check_block, _chunks.N_FLAGS, reduce="max",
            bound=self.feature_norm, binary=self.loss.binary, label_bound=self.label_bound,
        )

    # -- the map-reduce -------------------------------------------------------------
    def _reduce(self, kernel, width: int, *, reduce: str = "sum", shared: np.ndarray | None = None,
                **kwargs) -> np.ndarray:
        """Apply ``kernel(F_b, y_b[, s_b][, shared], **kwargs)`` (a 1 x width row; ``s_b`` the
        block's sample weights when the problem has them) to every row block and combine the
        rows with a ``sum`` (or ``max``) on the workers; the client receives the combined
        row only. ``shared``: a 2-D array passed to every call after the weights, held once in
        the graph (one key that every block's task reads) rather than copied into each task.

        The graph is written directly (one task per block, one combining task per 64 partial
        rows, :func:`_combine`), not through ``dask.array.blockwise`` and a reduction: those
        build, tokenize and optimize a layered graph on the client at every pass (about 30
        ms of the client's time a pass at 16 blocks, against 10-20 ms for a pass's
        arithmetic on one block), for the same tasks. The sums are Dask's ``sum(axis=0,
        split_every=64)`` of the partial rows, in the same order (groups of 64 consecutive
        rows, each group's rows added in sequence), so the results are bit for bit those of
        the reduction."""
        from dask.base import get_scheduler

        base, blocks = self._block_graph()
        # A fresh name: no two passes share one, and nothing is hashed to name the tasks.
        name = f"dperm-{kernel.__name__}-{uuid.uuid4().hex}"
        graph = dict(base)
        inputs = ()
        if shared is not None:
            graph[(name, "shared")] = np.asarray(shared)
            inputs = ((name, "shared"),)
        call = functools.partial(kernel, **kwargs) if kwargs else kernel
        level = []
        for i, keys in enumerate(blocks):
            graph[(name, 0, i)] = (call, *keys, *inputs)
            level.append((name, 0, i))
        combine = functools.partial(_combine, reduce)
        depth = 0
        while len(level) > 1 or depth == 0:
            depth += 1
            groups = [level[g : g + _SPLIT] for g in range(0, len(level), _SPLIT)]
            level = []
            for g, group in enumerate(groups):
                graph[(name, depth, g)] = (combine, list(group))
                level.append((name, depth, g))
        schedule = get_scheduler(collections=[self._features])
        _record_read(kernel.__name__, 1.0)
        return np.asarray(schedule(graph, level[0]), dtype=np.float64).reshape(-1)

    def _block_graph(self):
        """The graph that holds the row blocks of X, y (and the weights), as a dict, and the
        keys of each block's inputs, ``(X_b, y_b[, s_b])``: built once for the arrays the
        problem holds (the checking pass may replace them by mapped ones)."""
        arrays = (self._features, self.y) + (() if self.sample_weight is None else (self.sample_weight,))
        names = tuple(a.name for a in arrays)
        cached = getattr(self, "_graph_cache", None)
        if cached is None or cached[0] != names:
            from dask.highlevelgraph import HighLevelGraph

            graph = dict(HighLevelGraph.merge(*(a.__dask_graph__() for a in arrays)))
            keys = [[k[0] if a.ndim == 2 else k for k in a.__dask_keys__()] for a in arrays]
            cached = self._graph_cache = (names, graph, [tuple(k[i] for k in keys) for i in range(len(keys[0]))])
        return cached[1], cached[2]

    @property
    def _layout(self) -> _chunks.Layout:
        return _chunks.Layout(loss=self.loss, feature_bound=self.feature_norm, clip=self._clip,
                              intercept=self.intercept_scaling, label_bound=self._label_clip,
                              compute_dtype=np.dtype(self._compute_dtype))

    @property
    def X(self):
        """The rows the model sees, as a lazy Dask array (scaled rows, intercept column):
        a view for inspection; the methods of this class never build it."""
        F, layout = self._features, self._layout
        if not (layout.clip or layout.intercept):
            return F
        return F.map_blocks(_chunks.model_rows, layout=layout, chunks=(F.chunks[0], (self.n_features,)),
                            dtype=F.dtype, meta=F._meta)

    # -- evaluation -------------------------------------------------------------------
    def margins(self, w: np.ndarray):
        """``X w`` as a lazy Dask vector chunked like the rows (never gathered here)."""
        return self._features.map_blocks(_chunks.margins_block, w=self._check_point(w), layout=self._layout,
                                         drop_axis=1, dtype=np.float64)

    def loss_value(self, w: np.ndarray) -> float:
        out = self._reduce(_chunks.value_block, 1, w=self._check_point(w), layout=self._layout)
        return float(out[0]) / self.n_samples

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        out = self._reduce(_chunks.value_gradient_block, self.n_features + 1,
                           w=self._check_point(w), layout=self._layout, value=False)
        return out[:-1] / self.n_samples

    def value_and_gradient(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        w64 = self._check_point(w)
        out = self._reduce(_chunks.value_gradient_block, self.n_features + 1, w=w64, layout=self._layout, value=True)
        value = float(out[-1]) / self.n_samples + self.regularizer.value(w64)
        return value, out[:-1] / self.n_samples + self.regularizer.smooth_gradient(w64)

    def certified_gradient(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """The gradient and its rounding-error bound (``ERMProblem.certified_gradient``):
        each block's ``X_b^T u_b`` is summed in float64 over sub-blocks of about
        sqrt(rows of the block) rows, as in memory (:func:`_chunks.certified_gradient_block`),
        and the blocks' sums in a tree: every coordinate is a sum of at most
        :meth:`certificate_accumulation` terms, whatever the chunking."""
        w64 = self._check_point(w)
        out = self._reduce(_chunks.certified_gradient_block, self.n_features, w=w64,
                           layout=replace(self._layout, compute_dtype=np.dtype(np.float64)))
        grad = out / self.n_samples + self.regularizer.smooth_gradient(w64)
        return grad, gradient_rounding_bound(self, w64, grad, self.certificate_accumulation())

    def certificate_accumulation(self) -> int:
        """The largest block's in-block sum length (:func:`certificate_accumulation` of its
        rows) plus the number of blocks (the tree sum): a function of the chunking, public."""
        rows = self._features.chunks[0]
        k = self._features.shape[1]
        return max(certificate_accumulation(r, k) for r in set(rows)) + len(rows)

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        w64, v64 = self._check_point(w), self._check_point(v)
        out = self._reduce(_chunks.hessian_vector_block, self.n_features, w=w64, v=v64, layout=self._layout)
        return out / self.n_samples + self.regularizer.l2 * v64

    def hessian(self, w: np.ndarray, dtype=None) -> np.ndarray:
        """The dense Hessian, one map-reduce; ``dtype`` (float32 for Newton directions) is the
        precision of the blocks' products, as for :meth:`ERMProblem.hessian`."""
        d = self.n_features
        out = self._reduce(_chunks.hessian_block, d * d, w=self._check_point(w), layout=self._layout,
                           product_dtype=None if dtype is None else np.dtype(dtype))
        H = out.reshape(d, d) / self.n_samples
        H[np.diag_indices_from(H)] += self.regularizer.l2
        return 0.5 * (H + H.T)

    def mean_losses_at_points(self, points: np.ndarray) -> np.ndarray:
        """``(1/n) sum_i phi(<w_k, x_i>, y_i)`` at every row ``w_k`` of ``points`` (the
        exponential mechanism's net): one map-reduce, each block scoring every point and
        returning one sum per point; the points travel to each worker once."""
        if self.sample_weight is not None:  # check_supported refuses it before any charge
            raise NotImplementedError("scoring points with sample_weight on Dask data is not supported")
        W = np.ascontiguousarray(points, dtype=np.float64)
        if W.ndim != 2 or W.shape[1] != self.n_features:
            raise ValueError(f"points must have shape (k, {self.n_features}), got {W.shape}")
        out = self._reduce(_chunks.loss_sums_block, len(W), shared=W, layout=self._layout)
        return out / self.n_samples

    def gather_rows(self, rows: np.ndarray, counts: np.ndarray):
        """The rows that the mini-batches ``rows[k, :counts[k]]`` (global indices drawn on
        the client) select, fetched from their blocks in one round trip.

        Returns ``(X_batch, y_batch, local_rows)``: the distinct selected rows as the model
        sees them (scaled onto the bound, intercept column appended; CSR for sparse
        blocks) and their labels, and ``rows`` re-indexed into them, so a compiled SGD
        kernel runs on the client exactly as on the in-memory X. The batches are those of
        the in-memory run (the same draws from the fit's generator), so the sampling and
        its accounting are unchanged.
        """
        F, y, local = self._fetch(rows, counts)
        return _chunks.model_rows(F, self._layout), y, local

    def gather_rows_and_slopes(self, rows: np.ndarray, counts: np.ndarray, w: np.ndarray):
        """:meth:`gather_rows` and, fourth, ``phi'(<x_i, w>, y_i)`` of every fetched row (a
        float64 vector aligned with ``X_batch``), computed as the in-memory problem's
        ``loss.derivative(margins(w), y)`` computes it: DP-SVRG's slopes at the snapshot,
        for the rows of one round only (the client never holds a length-n vector)."""
        if self.sample_weight is not None:  # check_supported refuses it before any charge
            raise NotImplementedError("fetching rows with sample_weight on Dask data is not supported")
        F, y, local = self._fetch(rows, counts)
        block = _chunks._Block(F, y, self._layout)  # y is already clipped: clipping again is a no-op
        slopes = np.ascontiguousarray(self.loss.derivative(block.matvec(self._check_point(w)), y), dtype=np.float64)
        return _chunks.model_rows(F, self._layout), y, local, slopes

    def _fetch(self, rows: np.ndarray, counts: np.ndarray):
        """The stored rows (unscaled, no intercept column) and clipped labels of the
        distinct indices in ``rows[k, :counts[k]]``, in increasing order, and ``rows``
        re-indexed into them: one round trip for all the batches."""
        import dask

        chosen = [rows[k, :m] for k, m in enumerate(counts)]
        selected = np.unique(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)
        F, y = dask.compute(self._features[selected], self.y[selected])
        F = sp.csr_matrix(F) if sp.issparse(F) else np.ascontiguousarray(F)
        y = np.asarray(y, dtype=np.float64)
        if self._label_clip is not None:
            y = np.clip(y, -self._label_clip, self._label_clip)
        local = np.searchsorted(selected, rows).astype(np.int64)
        np.minimum(local, max(len(selected) - 1, 0), out=local)  # the unused tail of each row of `rows`
        return F, y, local

    def row_sample(self, stride: int) -> ERMProblem:
        """Rows ``0, stride, 2 stride, ...`` gathered to the client as an in-memory
        :class:`~dperm.problem.ERMProblem` (1/stride of X, for the solvers' warm starts and
        Hessian estimates, as :meth:`ERMProblem.row_sample` in memory), in one round trip:
        the rows scaled onto the bound as every pass scales them, labels clipped as
        :meth:`_check_blocks` decided, no new check and no warning. The solver then runs its
        sample stage in memory, with the same passes over the sample as on NumPy data."""

        from dask.base import get_scheduler

        stride = int(stride)
        if stride <= 1:
            return self
        # Rows 0, stride, 2 stride, ... taken from each block by its own task and gathered
        # to the client as they are (the rows of ``X[::stride]``, in order): no task joins
        # them on a worker first, and no array expression is built for the slice.
        base, blocks = self._block_graph()
        name = f"dperm-sample-{uuid.uuid4().hex}"
        graph, keys, begin = dict(base), [], 0
        for i, (keys_b, size) in enumerate(zip(blocks, self._features.chunks[0])):
            graph[(name, i)] = (_chunks.strided_rows, list(keys_b), (-begin) % stride, stride)
            keys.append((name, i))
            begin += size
        parts = get_scheduler(collections=[self._features])(graph, keys)
        _record_read("sample", 1.0)  # reads every block (a whole pass from a store)
        pieces = list(zip(*parts))
        F = sp.vstack(pieces[0], format="csr") if sp.issparse(pieces[0][0]) else np.concatenate(pieces[0])
        y = np.concatenate(pieces[1])
        weights = None if self.sample_weight is None else np.concatenate(pieces[2])
        F = sp.csr_matrix(F) if sp.issparse(F) else np.ascontiguousarray(F)
        sample = object.__new__(ERMProblem)
        sample.__dict__.update({key: value for key, value in self.__dict__.items()
                                if key not in ("_features", "y", "sample_weight", "_clip", "_label_clip")})
        scale = _chunks.row_scale(F, self.feature_norm) if self._clip else None
        if unsafe_to_scale_virtually(scale, self.feature_norm):
            F, scale = _scaled_rows(F, scale), None
        sample._features, sample._row_scale = F, scale
        sample.y = _chunks.labels(y, self._layout)
        sample.sample_weight = None if weights is None else np.asarray(weights, dtype=np.float64)
        sample.n_samples = int(sample.y.shape[0])
        sample._compute_dtype = self._compute_dtype
        sample._pass_rows = self.n_samples
        sample._curvature_cache = sample._margin_cache = sample._materialized = None
        return sample

    def batch_loss_gradient(self, w, rows):
        raise NotImplementedError(
            "mini-batch gradients by row index are not available on Dask data; use a full-batch algorithm"
        )

    def per_example_gradients(self, w, rows=None):
        raise NotImplementedError("per-example gradients are not available on Dask data (they would gather X)")

    # -- derived problems ---------------------------------------------------------------
    def _rebuild(self, X=None, y=None, loss=None) -> "DaskERMProblem":
        if X is None and y is None:  # only the loss changes: a view (no new checking pass)
            return super()._rebuild(loss=loss)
        raise NotImplementedError("a Dask problem with other data is built with make_problem")

    def astype(self, dtype) -> "DaskERMProblem":
        """The same problem computed in ``dtype``: the blocks are converted as they are
        read, never stored twice."""
        dtype = np.dtype(dtype)
        if self._compute_dtype == dtype:
            return self
        view = copy.copy(self)
        view._compute_dtype = dtype
        return view

    def replace_row(self, i, x, y_i):
        raise NotImplementedError("replace_row is a test helper of in-memory problems; use ERMProblem")

    def __repr__(self) -> str:
        return (
            f"DaskERMProblem(n={self.n_samples}, d={self.n_features}, blocks={len(self._features.chunks[0])}, "
            f"loss={self.loss!r}, regularizer={self.regularizer!r}, constraint={self.constraint!r}, "
            f"data_norm={self.data_norm:g}"
            + (f", intercept_scaling={self.intercept_scaling:g})" if self.intercept_scaling else ")")
        )
