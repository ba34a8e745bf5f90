"""The ERM problem: data, loss, regularizer, constraint and declared public bounds.

``F(w) = (1/n) sum_i s_i phi(<w, x_i>, y_i) + r(w)`` minimized over C, with optional
per-example weights ``s_i`` in [0, 1] (1 when none are given). All constants
(Lipschitz ``L``, smoothness ``beta``, strong convexity ``mu``, Hessian-Lipschitz ``rho``,
the size of C) are derived from the declared bounds ``data_norm`` (on ||x_i||_2) and
``label_bound`` (on |y_i| for real labels), never from the data. Rows above
``data_norm`` are clipped to it, and real labels beyond ``label_bound`` clamped to it, so
the declared bounds always hold; both maps are per-row and silent (a warning would tell
whether one row was beyond a bound: docs/privacy.md, "Totality").

Nothing in this module knows about privacy.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import DataNormWarning, check_matrix, check_positive, check_sample_weight, total_labels
from .constraints import Constraint, L2Ball, make_constraint
from .custom import CustomLoss
from .losses import MarginLoss, make_loss
from .passes import record as _record_read
from .regularizers import Regularizer, make_regularizer

__all__ = ["ERMProblem", "DataNormWarning", "gradient_rounding_bound", "rounding_floor"]

# Elements of one block of rows converted to the compute precision or scaled for a Gram
# update: 2^18 float64 values, 2 MB, small enough for the cache, large enough for BLAS.
_BLOCK_ELEMENTS = 1 << 18


def _row_norms(X) -> np.ndarray:
    """The L2 norm of every row, in float64, finite for every finite row: the squares are
    summed in float64, and a row whose sum of squares overflows (an entry above about
    1e154) is measured again scaled by its largest magnitude."""
    if sp.issparse(X):  # squares summed in float64, as for dense rows
        X = sp.csr_matrix(X)
        with np.errstate(over="ignore"):  # an overflow is measured again below (and says nothing)
            squares = sp.csr_matrix((X.data.astype(np.float64) ** 2, X.indices, X.indptr), shape=X.shape)
            norms = np.sqrt(np.asarray(squares.sum(axis=1)).ravel())
    elif X.dtype == np.float64:
        with np.errstate(over="ignore"):
            norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    else:  # converted a block at a time (exact), faster than einsum's buffered casting
        squares = np.empty(X.shape[0])
        step = max(1, _BLOCK_ELEMENTS // max(1, X.shape[1]))
        with np.errstate(over="ignore"):
            for start in range(0, X.shape[0], step):
                block = np.asarray(X[start : start + step], dtype=np.float64)
                squares[start : start + step] = np.einsum("ij,ij->i", block, block)
        norms = np.sqrt(squares)
    for i in np.flatnonzero(np.isinf(norms)):  # rare: rows far beyond any declared bound
        top, relative = _scaled_norm(X, i)
        with np.errstate(over="ignore"):
            norms[i] = top * relative  # inf only where the norm exceeds float64's range
    return norms


def _scaled_norm(X, i) -> tuple[float, float]:
    """Row i's norm as ``top * relative``: its largest magnitude and the norm of the row
    divided by it (in [1, sqrt(d)])."""
    row = (X[i].toarray().ravel() if sp.issparse(X) else np.asarray(X[i])).astype(np.float64)
    top = float(np.max(np.abs(row)))
    return top, float(np.linalg.norm(row / top))


def clip_factors(X, bound: float, norms: np.ndarray, eps: float) -> np.ndarray:
    """``bound / ||x_i|| (1 - 4 eps)`` for the rows above ``bound``, 1 elsewhere; a row whose
    norm overflows float64 gets ``(bound / top) / relative`` (:func:`_scaled_norm`)."""
    over = norms > bound
    scale = np.where(over, bound / np.where(over, norms, 1.0) * (1 - 4 * eps), 1.0)
    for i in np.flatnonzero(np.isinf(norms)):
        top, relative = _scaled_norm(X, i)
        scale[i] = bound / top / relative * (1 - 4 * eps)
    return scale


# A row to be clipped whose norm exceeds this is scaled in the stored data before anything
# else reads it (a copy of X): its entries could overflow in a float32 cast or in products
# (margins, Hessian blocks) computed before the virtual row factor is applied. Rows clipped
# from below it are scaled virtually (no copy).
_SAFE_MAGNITUDE = 2.0**60


def unsafe_to_scale_virtually(scale, bound: float) -> bool:
    """Whether a row to be clipped has norm above ``_SAFE_MAGNITUDE`` (so possibly an
    entry above it), read off its clip factor ``bound / norm``: O(n), no look at X."""
    return scale is not None and bool(float(np.min(scale)) * _SAFE_MAGNITUDE < bound)


def row_scales(X, bound: float):
    """The factors that bring every row with ||x_i|| > bound back onto the sphere of radius
    ``bound``: a float64 vector (1 for the rows within the bound), or ``None`` when no row
    is above it.

    A per-row map that does not look at other rows, so clipping is privacy-neutral. It is
    silent, and nothing about it is kept: whether some row was above the bound is a fact
    about one row, which a warning or a count would release with epsilon infinite under
    replace-one (docs/privacy.md, "Totality").
    """
    norms = _row_norms(X)
    if not (norms > bound).any():
        return None
    # The factor (1 - 4 eps) keeps the scaled rows at or below the bound after rounding.
    eps = np.finfo(X.dtype).eps
    return clip_factors(X, bound, norms, eps)


def _scaled_rows(X, scale):
    """X with row i multiplied by scale[i] (a copy, in X's precision). Dense rows are
    multiplied in float64 and rounded once to X's precision (a float32 row of entries
    near float32's largest value has a factor below float32's normal range)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        data = (X.data.astype(np.float64) * np.repeat(scale, np.diff(X.indptr))).astype(X.dtype)
        return sp.csr_matrix((data, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    out = X.copy()
    rows = np.flatnonzero(scale != 1.0)
    out[rows] = (X[rows].astype(np.float64) * scale[rows, None]).astype(X.dtype)
    return out


def clip_rows(X, bound: float):
    """X with every row above ``bound`` scaled onto the sphere of radius ``bound`` (a copy
    when any is), silently; see :func:`row_scales`."""
    scale = row_scales(X, bound)
    return X if scale is None else _scaled_rows(X, scale)


# Unit roundoff of float64 and the factor allowed for a loss derivative's evaluation
# (exp, log1p, a division: elementary functions accurate to a few ulps, as NumPy's are).
_UNIT_ROUNDOFF = 2.0**-53
_SLOPE_ULPS = 32


def _gamma(k: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of a float64 sum or
    dot product of k terms in any order (Higham, Accuracy and Stability of Numerical
    Algorithms, 2002, Sections 3.1 and 4.2)."""
    ku = k * _UNIT_ROUNDOFF
    return ku / (1.0 - ku) if ku < 0.5 else math.inf


def certificate_rows(n: int, k: int) -> int:
    """Rows per block of a certified gradient over n rows of k stored features: about
    sqrt(n) (at most 4 sqrt(n), at most a 2 MB float64 block), so that each coordinate
    is a sum of ``rows + ceil(n / rows)`` terms, about 2 sqrt(n)."""
    return max(1, math.isqrt(n), min(_BLOCK_ELEMENTS // max(1, k), 4 * math.isqrt(n)))


def certificate_accumulation(n: int, k: int) -> int:
    """The number of terms of each coordinate's float64 sum in a certified gradient of n
    rows (:meth:`ERMProblem.certified_gradient`): a public function of n and k."""
    rows = certificate_rows(n, k)
    return rows + -(-n // rows)


def rounding_floor(problem: "ERMProblem", w_norm: float, accumulation: int | None = None) -> float:
    """:func:`gradient_rounding_bound` at a point of norm ``w_norm`` where the gradient
    vanishes: the certified rounding error that no solver can get below there. Public
    when ``w_norm`` is (a bound on the minimizer from declared constants)."""
    if accumulation is None:
        accumulation = problem.certificate_accumulation()
    return _rounding_bound(problem, float(w_norm), 0.0, accumulation)


def gradient_rounding_bound(problem: "ERMProblem", w: np.ndarray, grad: np.ndarray, accumulation: int) -> float:
    """A bound on ``||g - grad F(w)||`` for a float64 evaluation g of a margin loss's gradient
    (plus the l2 part of r) in which every coordinate of ``X^T u`` is a sum of at most
    ``accumulation`` terms.

    With R the row-norm bound, ``L_phi = L / R`` and ``beta_phi = beta_loss / R^2`` the
    loss's derivative bounds: each margin ``<x_i, w>`` (d terms, a row scale and the
    intercept: d + 2 operations) is off by at most ``gamma_{d+2} R ||w||``; each slope by
    ``32 u L_phi`` (its evaluation) plus ``beta_phi`` times that; the sum over rows adds
    ``gamma_N`` of ``sum_i ||x_i|| |u_i| / n <= R (L_phi + slope error)``; the division
    by n and the regularizer's term a few more roundings of the result. Every quantity
    is a declared constant, n, d or the point w itself: nothing of the data.
    """
    return _rounding_bound(problem, float(np.linalg.norm(w)), float(np.linalg.norm(grad)), accumulation)


def _rounding_bound(problem: "ERMProblem", w_norm: float, grad_norm: float, accumulation: int) -> float:
    R = problem.data_norm
    L_phi = problem.lipschitz / R
    beta_phi = problem.constants.loss_smoothness / (R * R)
    u = _UNIT_ROUNDOFF
    margin = _gamma(problem.n_features + 2) * R * w_norm
    slope = _SLOPE_ULPS * u * L_phi + beta_phi * margin
    loss_part = R * slope + _gamma(accumulation + 2) * R * (L_phi + slope)
    regularizer = problem.regularizer.l2 * w_norm
    return (1.0 + 4.0 * u) * loss_part + 4.0 * u * (grad_norm + regularizer)


@dataclass(frozen=True)
class ProblemConstants:
    """The public constants of an ERM problem, all from declared bounds."""

    lipschitz: float  # sup ||grad f(w; x, y)|| over C and the declared data domain
    smoothness: float  # beta of F (loss beta_phi R^2 plus the l2 part of r)
    loss_smoothness: float  # beta of the loss part alone
    strong_convexity: float  # mu of F (from the regularizer)
    hessian_lipschitz: float  # rho of the loss part
    margin_bound: float  # sup |<w, x>| over C and ||x|| <= R


class ERMProblem:
    """A regularized, possibly constrained empirical risk minimization problem.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features; dense float32 / float64 or SciPy sparse (kept as CSR). pandas accepted.
        A NaN or infinite entry is 0 (a missing value; no copy of a finite X), never an
        error (docs/privacy.md, "Totality").
    y : array-like of shape (n_samples,)
        Labels: in {-1, +1} for binary losses, real with |y| <= label_bound otherwise. A
        label that is not a finite number, or (binary losses) not -1 or +1, gives its row
        weight 0 (``sample_weight`` made if None), never an error.
    loss : str or MarginLoss
        ``"logistic"``, ``"huberized_hinge"``, ``"hinge"``, ``"squared"``, ``"huber"``,
        ``"sigmoid_squared"``, ``"biweight"`` or a loss object.
    regularizer : None or tuple or Regularizer
        ``None``, ``("l2", mu)``, ``("l1", lam)``, ``("elastic_net", lam, ratio)``.
    constraint : None or tuple or Constraint
        ``None``, ``("l2_ball", R)``, ``("l1_ball", R)``, ``("box", R)``.
    data_norm : float
        Declared public bound on ||x_i||_2; rows above it are scaled down onto it,
        silently (a per-row map; a warning would release whether one row was above it,
        docs/privacy.md, "Totality"). To choose it from public inputs, scale the rows
        (``row_norm="scale"`` in the pipeline, or its private scaling of raw columns).
    label_bound : float
        Declared public bound on |y_i| for real-valued labels; labels beyond it are
        clamped to it, silently (a per-row map). Ignored by binary losses.
    intercept_scaling : float, default=0.0
        Nonzero: every row gets a constant last coordinate ``intercept_scaling`` (an
        intercept, regularized like the other coordinates), handled virtually: X is not
        copied, and ``n_features`` counts the column. ``data_norm`` then bounds the whole row
        ``(x_i, intercept_scaling)``, so the features are clipped to
        ``sqrt(data_norm^2 - intercept_scaling^2)``; ``|intercept_scaling| < data_norm``.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Per-example weights ``s_i`` in [0, 1] (NaN and inf are 0, others clamped into it):
        ``F(w) = (1/n) sum_i s_i f(w; x_i, y_i) + r(w)``, divided by n (public), never by
        the sum of the weights (data). Every per-example quantity (value, slope, curvature,
        gradient) is multiplied by ``s_i``; the constants are unchanged, since
        ``||s_i grad f|| <= L`` and ``s_i phi'' <= beta_phi`` (docs/estimators.md). The
        weight is part of the private record (x_i, y_i, s_i). ``None``: unweighted.

    Notes
    -----
    Gradients of generalized linear models are ``X^T phi'(X w, y) / n``: two passes over
    X, no per-example loop, no copy of X (the intercept column is added to ``X w`` and
    ``X^T u`` as a number). float32 data are computed in float32 (results reported in
    float64) unless :meth:`astype` asks for float64, which converts a block of rows at a
    time. Precision never enters a privacy guarantee: the constants come from the declared
    bounds, the noise from the accountant, and the clipping keeps every stored row within
    the declared norm in its own precision; the methods that certify an optimality
    residual (the reference solver, objective and output perturbation) check it in
    float64 arithmetic.
    """

    sample_weight: np.ndarray | None = None  # per-example weights in [0, 1], or None (unweighted)
    _pass_rows: int | None = None  # rows of the whole data, for a row sample's pass count (problem.passes)

    def __init__(
        self,
        X,
        y,
        loss: str | MarginLoss = "logistic",
        regularizer=None,
        constraint=None,
        *,
        data_norm: float = 1.0,
        label_bound: float = 1.0,
        intercept_scaling: float = 0.0,
        sample_weight=None,
    ):
        self.loss = make_loss(loss)
        self._custom = isinstance(self.loss, CustomLoss)
        self.regularizer: Regularizer = make_regularizer(regularizer)
        self.constraint: Constraint = make_constraint(constraint)
        self.data_norm = check_positive("data_norm", data_norm)
        self.label_bound = check_positive("label_bound", label_bound)
        X = check_matrix(X, min_rows=2)  # a NaN or infinite entry is 0 (totality)
        # a NaN label (a binary loss: one outside {-1, +1}) gets weight 0 (totality)
        y, self.sample_weight = total_labels(y, X.shape[0], check_sample_weight(sample_weight, X.shape[0]),
                                             binary=self.loss.binary)
        self.loss.check_labels(y)
        if not self.loss.binary:
            # a per-row clamp onto the declared bound, silent: a warning shown for one
            # neighbour only would release one row (docs/privacy.md, "Totality")
            over = np.abs(y) > self.label_bound
            if over.any():
                y = np.clip(y, -self.label_bound, self.label_bound)
        self._set_intercept(intercept_scaling)
        # Rows above the bound are scaled virtually (a factor per row applied to X w and
        # X^T u): rows at the bound up to rounding, common for normalized data, cost no copy.
        self._row_scale = row_scales(X, self.feature_norm)
        _record_read("row_norms", 1.0, 2.0 * X.shape[0] * X.shape[1])
        if unsafe_to_scale_virtually(self._row_scale, self.feature_norm):  # clipped before any cast or product
            X, self._row_scale = _scaled_rows(X, self._row_scale), None
        self._features = X
        self.y = y
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1] + (1 if self.intercept_scaling else 0)
        self._compute_dtype = X.dtype
        self.constants = self._constants()

    # -- constants --------------------------------------------------------------
    def _constants(self) -> ProblemConstants:
        R = self.data_norm
        margin_bound = R * self.constraint.l2_radius(self.n_features)
        if self._custom:  # declared for the whole problem (data norm included)
            loss = self.loss
            return ProblemConstants(
                lipschitz=float(loss.lipschitz),
                smoothness=float(loss.smoothness) + self.regularizer.smoothness,
                loss_smoothness=float(loss.smoothness),
                strong_convexity=self.regularizer.strong_convexity,
                hessian_lipschitz=float(loss.hessian_lipschitz),
                margin_bound=margin_bound,
            )
        loss_beta = self.loss.smoothness(margin_bound, self.label_bound) * R * R
        return ProblemConstants(
            lipschitz=self.loss.lipschitz(margin_bound, self.label_bound) * R,
            smoothness=loss_beta + self.regularizer.smoothness,
            loss_smoothness=loss_beta,
            strong_convexity=self.regularizer.strong_convexity,
            hessian_lipschitz=self.loss.hessian_lipschitz(margin_bound, self.label_bound) * R**3,
            margin_bound=margin_bound,
        )

    def _set_intercept(self, intercept_scaling) -> None:
        """Validate the constant intercept column s and set ``feature_norm``: the rows the
        model sees are (x_i, s), and ||x_i||^2 + s^2 <= data_norm^2 asks for
        ||x_i|| <= sqrt(data_norm^2 - s^2) (computed as a product for accuracy)."""
        s = float(intercept_scaling)
        if not math.isfinite(s):
            raise ValueError(f"intercept_scaling must be finite, got {intercept_scaling}")
        if abs(s) >= self.data_norm:
            raise ValueError(
                f"intercept_scaling={s:g} must be below data_norm={self.data_norm:g}: data_norm bounds the "
                "norm of the whole row (x_i, intercept_scaling)"
            )
        self.intercept_scaling = s
        self.feature_norm = math.sqrt((self.data_norm - abs(s)) * (self.data_norm + abs(s))) if s else self.data_norm

    @property
    def lipschitz(self) -> float:
        return self.constants.lipschitz

    @property
    def smoothness(self) -> float:
        return self.constants.smoothness

    @property
    def strong_convexity(self) -> float:
        return self.constants.strong_convexity

    @property
    def is_convex(self) -> bool:
        return self.loss.convex

    @property
    def is_smooth(self) -> bool:
        """Whether the loss part is smooth (the regularizer's l1 part is handled by prox)."""
        return self.loss.smooth

    @property
    def n(self) -> int:
        return self.n_samples

    @property
    def d(self) -> int:
        return self.n_features

    def gradient_sensitivity(self) -> float:
        """Replace-one L2 sensitivity of the mean loss gradient: 2 L / n."""
        return 2.0 * self.lipschitz / self.n_samples

    def effective_constraint(self) -> Constraint | None:
        """A bounded set known (from public constants) to contain the minimizer.

        The problem's own constraint if bounded; otherwise, for a mu-strongly convex F
        with an L-Lipschitz loss, the ball of radius L / mu (the minimizer satisfies
        mu ||w_hat|| <= ||grad of the loss at 0|| <= L); otherwise ``None``.
        """
        if self.constraint.bounded:
            return self.constraint
        mu, L = self.strong_convexity, self.lipschitz
        if mu > 0 and math.isfinite(L) and self.is_convex:
            return L2Ball(L / mu)
        return None

    # -- data access -------------------------------------------------------------
    @property
    def X(self):
        """The rows the model sees: the stored data with the rows above the bound scaled onto
        it, and the constant column ``intercept_scaling`` appended when there is one.

        With a scaled row or an intercept column this is a copy of the data, built on first
        access and kept (the per-example kernels and custom losses read it); every
        full-batch method of this class works on the stored data and applies both virtually.
        """
        if not self.intercept_scaling and self._row_scale is None:
            return self._features
        cached = getattr(self, "_materialized", None)
        if cached is None:
            F = self._features if self._row_scale is None else _scaled_rows(self._features, self._row_scale)
            if self.intercept_scaling:
                column = np.full((self.n_samples, 1), self.intercept_scaling, dtype=F.dtype)
                F = sp.hstack([F, sp.csr_matrix(column)], format="csr") if sp.issparse(F) else np.hstack([F, column])
            cached = self._materialized = F
        return cached

    @property
    def dtype(self) -> np.dtype:
        """The storage precision of the data (float32 or float64)."""
        return self._features.dtype

    def _blocks(self, rows):
        """(features block, row slice or None) pairs in the compute precision.

        Data stored in float32 and computed in float64 (:meth:`astype`) are converted a
        block of rows at a time (a few MB), never as a whole: a float64 copy of X would
        triple the memory of float32 data."""
        F = self._features if rows is None else self._features[rows]
        if F.dtype == self._compute_dtype:
            yield F, None
            return
        if sp.issparse(F):  # the values only; indices and pointers are shared
            yield sp.csr_matrix((F.data.astype(self._compute_dtype), F.indices, F.indptr), shape=F.shape), None
            return
        step = max(1, _BLOCK_ELEMENTS // F.shape[1])
        for start in range(0, F.shape[0], step):
            block = slice(start, start + step)
            yield F[block].astype(self._compute_dtype), block

    def _matvec(self, v: np.ndarray, rows=None) -> np.ndarray:
        """``X v`` in float64 (X with its intercept column), computed in the compute precision."""
        v = np.asarray(v, dtype=np.float64)
        k = self._features.shape[1]
        vf = v[:k].astype(self._compute_dtype, copy=False)
        parts = [np.asarray(F @ vf, dtype=np.float64) for F, _ in self._blocks(rows)]
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        self._read("matvec", len(out), 2.0 * k)
        if self._row_scale is not None:
            out *= self._row_scale if rows is None else self._row_scale[rows]
        if self.intercept_scaling:
            out += self.intercept_scaling * v[k]
        return out

    def _xt(self, u: np.ndarray, rows=None) -> np.ndarray:
        """``X^T u`` in float64 (X with its intercept column)."""
        u = np.asarray(u, dtype=np.float64)
        k = self._features.shape[1]
        out = np.zeros(self.n_features)
        uf = u if self._row_scale is None else u * (self._row_scale if rows is None else self._row_scale[rows])
        for F, block in self._blocks(rows):
            part = uf if block is None else uf[block]
            out[:k] += np.asarray(F.T @ part.astype(F.dtype, copy=False), dtype=np.float64)
        self._read("rmatvec", len(u), 2.0 * k)
        if self.intercept_scaling:
            out[k] = self.intercept_scaling * float(u.sum())
        return out

    def _read(self, kind: str, rows: int, flops_per_row: float) -> None:
        """Record a read of ``rows`` rows of X (:mod:`dperm.problem.passes`; benchmarks only)."""
        _record_read(kind, rows / (self._pass_rows or self.n_samples), rows * flops_per_row)

    # -- evaluation -------------------------------------------------------------
    def _check_point(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w

    def margins(self, w: np.ndarray) -> np.ndarray:
        return self._matvec(self._check_point(w))

    def _weigh(self, values: np.ndarray, rows=None) -> np.ndarray:
        """``s_i * values_i`` (rows of a 2-D array) with the sample weights s; ``values``
        itself when the problem is unweighted."""
        s = self.sample_weight
        if s is None:
            return values
        s = s if rows is None else s[rows]
        return values * (s if values.ndim == 1 else s[:, None])

    def _margins_at(self, w: np.ndarray) -> np.ndarray:
        """``X w`` over all rows, remembered for the last w (read-only): a Newton step asks
        for the gradient and then the Hessian at one point, and each would otherwise
        re-read X. ``X 0 = 0`` costs no pass."""
        w = self._check_point(w)
        key = (w.tobytes(), np.dtype(self._compute_dtype).str)
        cached = getattr(self, "_margin_cache", None)
        if cached is None or cached[0] != key:
            a = np.zeros(self.n_samples) if not w.any() else self._matvec(w)
            a.flags.writeable = False
            cached = self._margin_cache = (key, a)
        return cached[1]

    def _slopes(self, a: np.ndarray, rows=None) -> np.ndarray:
        """``s_i phi'(a_i, y_i)``: the per-example (weighted) slopes, the one place every
        gradient takes them from."""
        return self._weigh(self.loss.derivative(a, self.y if rows is None else self.y[rows]), rows)

    def _curvatures(self, a: np.ndarray) -> np.ndarray:
        """``s_i phi''(a_i, y_i)`` over all rows (the Hessian's weights)."""
        return self._weigh(self.loss.curvature(a, self.y))

    def loss_value(self, w: np.ndarray) -> float:
        """(1/n) sum s_i phi(<w, x_i>, y_i), without the regularizer."""
        if self._custom:
            w = self._check_point(w).astype(self._compute_dtype)
            return float(np.mean(self._weigh(self.loss.per_example_values(w, self.X, self.y))))
        return float(np.mean(self._weigh(self.loss.value(self.margins(w), self.y))))

    def objective(self, w: np.ndarray) -> float:
        """F(w) = loss value + r(w) (the constraint is not checked here)."""
        return self.loss_value(w) + self.regularizer.value(np.asarray(w, dtype=np.float64))

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the mean loss: X^T (s * phi'(Xw, y)) / n."""
        if self._custom:
            return self.per_example_gradients(w).mean(axis=0)
        w = self._check_point(w)
        cached = getattr(self, "_margin_cache", None)
        if (sp.issparse(self._features) or not w.any()
                or (cached is not None and cached[0] == (w.tobytes(), np.dtype(self._compute_dtype).str))):
            return self._xt(self._slopes(self._margins_at(w))) / self.n_samples
        rows = max(1, _BLOCK_ELEMENTS // max(1, self._features.shape[1]))
        return self._blocked_gradient(w, rows, self._compute_dtype, "gradient") / self.n_samples

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the smooth part of F (the mean loss plus the l2 part of r)."""
        return self.loss_gradient(w) + self.regularizer.smooth_gradient(np.asarray(w, dtype=np.float64))

    def value_and_gradient(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        w64 = np.asarray(w, dtype=np.float64)
        if self._custom:
            return self.objective(w64), self.gradient(w64)
        a = self._margins_at(w64)
        value = float(np.mean(self._weigh(self.loss.value(a, self.y)))) + self.regularizer.value(w64)
        grad = self._xt(self._slopes(a)) / self.n_samples
        return value, grad + self.regularizer.smooth_gradient(w64)

    def batch_loss_gradient(self, w: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Mean loss gradient over ``rows`` (a mini-batch)."""
        if self._custom:
            return self.per_example_gradients(w, rows).mean(axis=0)
        d1 = self._slopes(self._matvec(self._check_point(w), rows), rows)
        return self._xt(d1, rows) / len(d1)

    def per_example_gradients(self, w: np.ndarray, rows=None) -> np.ndarray:
        """Dense (m, d) array of per-example loss gradients s_i phi'(<w, x_i>, y_i) x_i
        (a custom loss's clipped to norm L, then weighted)."""
        if self._custom:
            yb = self.y if rows is None else self.y[rows]
            Xb = self.X if rows is None else self.X[rows]
            return self._weigh(self.loss.clipped_gradients(np.asarray(w, dtype=np.float64), Xb, yb), rows)
        d1 = self._slopes(self._matvec(self._check_point(w), rows), rows)
        Fb = self._features if rows is None else self._features[rows]
        out = np.empty((len(d1), self.n_features))
        k = Fb.shape[1]
        df = d1 if self._row_scale is None else d1 * (self._row_scale if rows is None else self._row_scale[rows])
        out[:, :k] = np.asarray(sp.diags(df) @ Fb.toarray()) if sp.issparse(Fb) else df[:, None] * Fb
        if self.intercept_scaling:
            out[:, k] = self.intercept_scaling * d1
        return out

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian of the smooth part of F at w times v (generalized Hessian where phi''
        jumps)."""
        if self._custom:
            w64, v64 = np.asarray(w, dtype=np.float64), np.asarray(v, dtype=np.float64)
            return (self.loss.mean_hessian_vector(w64, v64, self.X, self.y, weights=self.sample_weight)
                    + self.regularizer.l2 * v64)
        curv = self._curvature_at(w)
        Xv = self._matvec(self._check_point(v))
        return self._xt(curv * Xv) / self.n_samples + self.regularizer.l2 * np.asarray(v, dtype=np.float64)

    def _curvature_at(self, w: np.ndarray) -> np.ndarray:
        """s_i phi''(<w, x_i>, y_i), remembered for the last w: Newton-CG asks for many
        Hessian-vector products at one point, and each would otherwise re-read X."""
        key = np.asarray(w, dtype=np.float64).tobytes()
        cached = getattr(self, "_curvature_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, self._curvatures(self._margins_at(w)))
            self._curvature_cache = cached
        return cached[1]

    def hessian(self, w: np.ndarray, dtype=None) -> np.ndarray:
        """Dense d x d Hessian of the smooth part of F (for small d).

        ``X^T diag(phi'') X / n`` accumulated over blocks of rows in float64, each block's
        product in the compute precision (float32 data: float32 products, half the time),
        or in ``dtype`` when given: ``float32`` gives a Hessian with relative error about
        1e-6 at a third of the float64 time, enough for Newton directions (a Newton step
        with an approximate Hessian contracts the gradient by the relative error); a
        convex loss's block is ``B^T B`` with ``B`` the rows scaled by ``sqrt(phi'')``, a
        symmetric rank-k update (half the flops of a general product). No n x d temporary.
        """
        if self._custom:
            columns = [self.hessian_vector(w, e) for e in np.eye(self.n_features)]
            H = np.column_stack(columns)
            return 0.5 * (H + H.T)
        curv = self._curvatures(self._margins_at(w))
        block_dtype = np.dtype(self._compute_dtype if dtype is None else dtype)
        k = self._features.shape[1]
        H = np.zeros((self.n_features, self.n_features))
        scale = self._row_scale
        if self.intercept_scaling:
            H[k, k] = self.intercept_scaling**2 * float(curv.sum())
        dense_update = not (sp.issparse(self._features) or not bool(np.all(curv >= 0)))
        if not dense_update:
            if self.intercept_scaling:  # X^T applies the row scales once
                H[:k, k] = self.intercept_scaling * self._xt(curv)[:k]
            if scale is not None:
                curv = curv * scale**2
            if sp.issparse(self._features):
                for F, _ in self._blocks(None):
                    H[:k, :k] = (F.T @ sp.diags(curv.astype(F.dtype)) @ F).toarray()
            else:
                step = max(256, _BLOCK_ELEMENTS // max(1, k))
                for start in range(0, self.n_samples, step):
                    F = self._features[start : start + step].astype(block_dtype)
                    H[:k, :k] += F.T @ (F * curv[start : start + step, None].astype(block_dtype))
        else:
            # B = rows scaled by r_i sqrt(phi''_i), in a block buffer of the product
            # precision (no n x d temporary; same-dtype operations only); B^T B is a symmetric rank-k
            # update (NumPy calls syrk for A.T @ A) and B^T sqrt(phi'') the intercept border.
            root = np.sqrt(curv)
            weight = root if scale is None else root * scale
            step = max(256, _BLOCK_ELEMENTS // max(1, k))  # 1 MB float32 blocks: the rank-k update runs from cache
            buffer = np.empty((min(step, self.n_samples), k), dtype=block_dtype)
            border = np.zeros(k)
            weight = weight.astype(block_dtype, copy=False)
            for start in range(0, self.n_samples, step):
                F = self._features[start : start + step]
                B = buffer[: F.shape[0]]
                if F.dtype == block_dtype:  # one pass: the scaled block straight into the buffer
                    np.multiply(F, weight[start : start + step, None], out=B)
                else:
                    B[...] = F  # the block in the product precision (a plain cast, no promotion)
                    B *= weight[start : start + step, None]
                H[:k, :k] += B.T @ B
                if self.intercept_scaling:
                    border += B.T @ root[start : start + step].astype(block_dtype)
            if self.intercept_scaling:
                H[:k, k] = self.intercept_scaling * border
        self._read("hessian", self.n_samples, k * (k + 1.0) if dense_update else 2.0 * k * k)
        if self.intercept_scaling:
            H[k, :k] = H[:k, k]
        H /= self.n_samples
        H[np.diag_indices_from(H)] += self.regularizer.l2
        return 0.5 * (H + H.T)

    def certified_gradient(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """The gradient of the smooth part of F at w computed in float64, and a bound on its
        rounding error: ``||g - grad F(w)|| <= bound`` with ``grad F(w)`` the exact gradient of
        the stored data (float32 values convert to float64 exactly).

        For methods whose guarantee needs a computed gradient norm to be small (objective
        perturbation's AMP output noise). The rows are read in blocks of about sqrt(n), each
        block's ``X_b^T u_b`` summed by BLAS in any order and the blocks summed in sequence,
        so every coordinate is a float64 sum of at most ``m + n/m`` terms
        (:func:`gradient_rounding_bound`).
        """
        if self._custom:
            raise NotImplementedError("certified gradients are for margin losses (a custom loss's are clipped)")
        w = self._check_point(w)
        n, k = self.n_samples, self._features.shape[1]
        total = self._blocked_gradient(w, certificate_rows(n, k), np.float64, "certified_gradient")
        grad = total / n + self.regularizer.smooth_gradient(w)
        bound = gradient_rounding_bound(self, w, grad, self.certificate_accumulation())
        return grad, bound

    def _blocked_gradient(self, w: np.ndarray, rows: int, dtype, kind: str) -> np.ndarray:
        """``X^T (s phi'(X w, y))`` (a sum over rows, X with its intercept column) in one read of
        dense X: each block of ``rows`` rows gives its margins and, while it is in cache, its
        share of ``X^T u``. Products in ``dtype`` (float32 blocks converted exactly to float64
        for a float64 product), sums in float64. The margins are kept for a Hessian or a
        Hessian-vector product at w (no second pass)."""
        n, k = self.n_samples, self._features.shape[1]
        dtype = np.dtype(dtype)
        total = np.zeros(self.n_features)
        margins = np.empty(n)
        wf = w[:k].astype(dtype)
        scale = self._row_scale
        for start in range(0, n, rows):
            block = slice(start, min(n, start + rows))
            F = self._features[block]
            F = F.astype(dtype) if F.dtype != dtype else F
            a = np.asarray(F @ wf, dtype=np.float64)
            if scale is not None:
                a *= scale[block]
            if self.intercept_scaling:
                a += self.intercept_scaling * w[k]
            margins[block] = a
            u = self._slopes(a, block)
            uf = u if scale is None else u * scale[block]
            total[:k] += np.asarray(F.T @ uf.astype(dtype, copy=False), dtype=np.float64)
            if self.intercept_scaling:
                total[k] += self.intercept_scaling * float(u.sum())
        margins.flags.writeable = False
        self._read(kind, n, 4.0 * k)
        self._margin_cache = ((w.tobytes(), np.dtype(self._compute_dtype).str), margins)
        return total

    def certificate_accumulation(self) -> int:
        """Terms per coordinate of :meth:`certified_gradient`'s float64 sums: a function of
        n and d only (of the block layout too, on Dask data), so public."""
        return certificate_accumulation(self.n_samples, self._features.shape[1])

    # -- optimality ---------------------------------------------------------------
    def prox_step(self, w: np.ndarray, grad: np.ndarray, step: float) -> np.ndarray:
        """One proximal / projected step: Pi_C(prox_{step * l1}(w - step * grad))."""
        v = self.regularizer.nonsmooth_prox(np.asarray(w, dtype=np.float64) - step * grad, step)
        return self.constraint.project(v) if self.constraint.bounded else v

    def optimality_residual(self, w: np.ndarray) -> float:
        """An upper bound on dist(0, subdifferential of F + indicator of C) at the point
        returned by :meth:`certified_point`.

        Unconstrained: the exact distance (l1 subgradient chosen optimally). Constrained:
        with the gradient mapping G at step 1/beta, ``2 ||G||`` bounds it at
        ``w+ = prox_step(w)``.
        """
        grad = self.gradient(w)
        if not self.constraint.bounded:
            return self.regularizer.subgradient_distance(np.asarray(w, dtype=np.float64), grad)
        if not self.is_smooth:  # no gradient mapping certifies a non-smooth constrained point
            return math.nan
        step = 1.0 / self.smoothness
        w_plus = self.prox_step(w, grad, step)
        return 2.0 * float(np.linalg.norm(np.asarray(w) - w_plus)) / step

    def certified_point(self, w: np.ndarray) -> np.ndarray:
        """The point at which :meth:`optimality_residual` certifies optimality."""
        if not self.constraint.bounded:
            return np.asarray(w, dtype=np.float64)
        if not self.is_smooth:
            return self.constraint.project(np.asarray(w, dtype=np.float64))
        return self.prox_step(w, self.gradient(w), 1.0 / self.smoothness)

    def _rebuild(self, X=None, y=None, loss=None, sample_weight=None) -> "ERMProblem":
        """The same problem with some of (features, labels, loss, weights) replaced; with the
        same data (only the loss changes) a view sharing them, in the same compute precision."""
        if X is None and y is None and sample_weight is None:
            view = copy.copy(self)
            view.loss = make_loss(loss)
            view._custom = isinstance(view.loss, CustomLoss)
            view._curvature_cache = view._margin_cache = None
            view.constants = view._constants()
            return view
        return ERMProblem(self._features if X is None else X, self.y if y is None else y,
                          self.loss if loss is None else loss, self.regularizer, self.constraint,
                          data_norm=self.data_norm, label_bound=self.label_bound,
                          intercept_scaling=self.intercept_scaling,
                          sample_weight=self.sample_weight if sample_weight is None else sample_weight)

    def astype(self, dtype) -> "ERMProblem":
        """The same problem computed in ``dtype``.

        float64 on float32 data: the data stay float32 (no copy) and every product is
        computed in float64 a block of rows at a time (the reference solver and the
        certified residuals of the perturbation methods need float64 accuracy). float32 on
        float64 data: a float32 copy of X (half the memory traffic per pass).
        """
        dtype = np.dtype(dtype)
        if self._compute_dtype == dtype:
            return self
        if dtype == np.float64 or self._features.dtype == dtype:
            view = copy.copy(self)
            view._compute_dtype = dtype
            view._curvature_cache = view._margin_cache = None
            return view
        return self._rebuild(X=self._features.astype(dtype))

    def row_sample(self, stride: int) -> "ERMProblem":
        """The problem over rows ``0, stride, 2 stride, ...`` (a view of dense X: no copy), for a
        solver's internal use only (a warm start, a Hessian estimate): its mean loss estimates
        F's. Strided rather than leading rows, so data sorted by label or by time still give a
        representative sample. Its reads count as ``m / n`` of a pass (:mod:`dperm.problem.passes`).
        """
        stride = int(stride)
        if stride <= 1:
            return self
        view = copy.copy(self)
        rows = slice(0, None, stride)
        view._features = self._features[rows]
        view.y = self.y[rows]
        view.sample_weight = None if self.sample_weight is None else self.sample_weight[rows]
        view._row_scale = None if self._row_scale is None else self._row_scale[rows]
        view.n_samples = int(view.y.shape[0])
        view._pass_rows = self._pass_rows or self.n_samples
        view._curvature_cache = view._margin_cache = view._materialized = None
        return view

    def replace_row(self, i: int, x, y_i, weight=None) -> "ERMProblem":
        """The neighbouring problem with row i replaced (replace-one), for tests and audits.

        ``x``: the new features (without the intercept column); ``weight``: the new sample
        weight of row i (a weighted problem keeps row i's weight when None; an unweighted
        one becomes weighted, the other rows at weight 1)."""
        X = self._features if self._row_scale is None else _scaled_rows(self._features, self._row_scale)
        X = X.tolil(copy=True) if sp.issparse(X) else X.copy()
        X[i] = x
        y = self.y.copy()
        y[i] = y_i
        weights = None
        if weight is not None:
            weights = np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight.copy()
            weights[i] = weight
        return self._rebuild(X=sp.csr_matrix(X) if sp.issparse(self._features) else X, y=y, sample_weight=weights)

    def __repr__(self) -> str:
        return (
            f"ERMProblem(n={self.n_samples}, d={self.n_features}, loss={self.loss!r}, "
            f"regularizer={self.regularizer!r}, constraint={self.constraint!r}, "
            f"data_norm={self.data_norm:g}"
            + (f", intercept_scaling={self.intercept_scaling:g}" if self.intercept_scaling else "")
            + (", weighted)" if self.sample_weight is not None else ")")
        )
