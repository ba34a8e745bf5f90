"""The ERM problem: data, loss, regularizer, constraint and declared public bounds.

``F(w) = (1/n) sum_i phi(<w, x_i>, y_i) + r(w)`` minimized over C. All constants
(Lipschitz ``L``, smoothness ``beta``, strong convexity ``mu``, Hessian-Lipschitz ``rho``,
the size of C) are derived from the declared bounds ``data_norm`` (on ||x_i||_2) and
``label_bound`` (on |y_i| for real labels), never from the data. Rows above
``data_norm`` are clipped to it (with a warning), so the declared bound always holds.

Nothing in this module knows about privacy.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import DataNormWarning, check_matrix, check_positive, check_vector
from .constraints import Constraint, L2Ball, make_constraint
from .custom import CustomLoss
from .losses import MarginLoss, make_loss
from .regularizers import Regularizer, make_regularizer

__all__ = ["ERMProblem", "DataNormWarning"]


def _row_norms(X) -> np.ndarray:
    if sp.issparse(X):  # squares summed in float64, as for dense rows
        X = sp.csr_matrix(X)
        squares = sp.csr_matrix((X.data.astype(np.float64) ** 2, X.indices, X.indptr), shape=X.shape)
        return np.sqrt(np.asarray(squares.sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))


def clip_rows(X, bound: float, *, name: str = "X"):
    """Scale every row with ||x_i|| > bound back onto the sphere of radius ``bound``.

    A per-row map that does not look at other rows, so clipping is privacy-neutral.
    Warns (``DataNormWarning``) with the count of clipped rows.
    """
    norms = _row_norms(X)
    over = norms > bound
    if not over.any():
        return X, 0
    # Rounding puts rows meant to be at exactly `bound` an ulp above it: those are scaled
    # silently; only rows clearly above the declared bound are worth a warning. The
    # factor (1 - 4 eps) keeps the scaled rows at or below the bound after rounding.
    eps = np.finfo(X.dtype).eps
    scale = np.where(over, bound / np.where(over, norms, 1.0) * (1 - 4 * eps), 1.0).astype(X.dtype)
    clearly = norms > bound * (1.0 + 8 * eps)
    if clearly.any():
        # No count and no norm in the message: both are statistics of the data.
        warnings.warn(
            f"some rows of {name} have L2 norm above the declared data_norm={bound:g}; they were "
            "scaled down to it. Declare a larger data_norm or rescale the features to avoid this.",
            DataNormWarning,
            stacklevel=3,
        )
    if sp.issparse(X):
        X = sp.diags(scale) @ X
        return sp.csr_matrix(X), int(clearly.sum())
    return X * scale[:, None], int(clearly.sum())


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
    y : array-like of shape (n_samples,)
        Labels: in {-1, +1} for binary losses, real with |y| <= label_bound otherwise.
    loss : str or MarginLoss
        ``"logistic"``, ``"huberized_hinge"``, ``"hinge"``, ``"squared"``, ``"huber"``,
        ``"sigmoid_squared"``, ``"biweight"`` or a loss object.
    regularizer : None or tuple or Regularizer
        ``None``, ``("l2", mu)``, ``("l1", lam)``, ``("elastic_net", lam, ratio)``.
    constraint : None or tuple or Constraint
        ``None``, ``("l2_ball", R)``, ``("l1_ball", R)``, ``("box", R)``.
    data_norm : float
        Declared public bound on ||x_i||_2; rows above it are clipped (with a warning).
    label_bound : float
        Declared public bound on |y_i| for real-valued labels; labels beyond it are
        clipped (with a warning). Ignored by binary losses.

    Notes
    -----
    Gradients of generalized linear models are ``X^T phi'(X w, y) / n``: two passes over
    X, no per-example loop.
    """

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
    ):
        self.loss = make_loss(loss)
        self._custom = isinstance(self.loss, CustomLoss)
        self.regularizer: Regularizer = make_regularizer(regularizer)
        self.constraint: Constraint = make_constraint(constraint)
        self.data_norm = check_positive("data_norm", data_norm)
        self.label_bound = check_positive("label_bound", label_bound)
        X = check_matrix(X, min_rows=2)
        y = check_vector(y, X.shape[0])
        self.loss.check_labels(y)
        if not self.loss.binary:
            over = np.abs(y) > self.label_bound * (1 + 1e-12)
            if over.any():
                warnings.warn(
                    f"some labels exceed the declared label_bound={self.label_bound:g}; they were "
                    "clipped to it. Declare a larger label_bound or rescale the labels.",
                    DataNormWarning,
                    stacklevel=2,
                )
                y = np.clip(y, -self.label_bound, self.label_bound)
        X, self.n_clipped = clip_rows(X, self.data_norm)
        self.X = X
        self.y = y
        self.n_samples, self.n_features = X.shape
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

    # -- evaluation -------------------------------------------------------------
    def _as_compute(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w.astype(self.X.dtype, copy=False)

    def margins(self, w: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ self._as_compute(w), dtype=np.float64)

    def loss_value(self, w: np.ndarray) -> float:
        """(1/n) sum phi(<w, x_i>, y_i), without the regularizer."""
        if self._custom:
            return float(np.mean(self.loss.per_example_values(self._as_compute(w), self.X, self.y)))
        return float(np.mean(self.loss.value(self.margins(w), self.y)))

    def objective(self, w: np.ndarray) -> float:
        """F(w) = loss value + r(w) (the constraint is not checked here)."""
        return self.loss_value(w) + self.regularizer.value(np.asarray(w, dtype=np.float64))

    def _xt(self, v: np.ndarray, rows=None) -> np.ndarray:
        X = self.X if rows is None else self.X[rows]
        return np.asarray(X.T @ v.astype(X.dtype, copy=False), dtype=np.float64)

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the mean loss: X^T phi'(Xw, y) / n."""
        if self._custom:
            return self.loss.clipped_gradients(np.asarray(w, dtype=np.float64), self.X, self.y).mean(axis=0)
        d1 = self.loss.derivative(self.margins(w), self.y)
        return self._xt(d1) / self.n_samples

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the smooth part of F (the mean loss plus the l2 part of r)."""
        return self.loss_gradient(w) + self.regularizer.smooth_gradient(np.asarray(w, dtype=np.float64))

    def value_and_gradient(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        w64 = np.asarray(w, dtype=np.float64)
        if self._custom:
            return self.objective(w64), self.gradient(w64)
        a = self.margins(w64)
        value = float(np.mean(self.loss.value(a, self.y))) + self.regularizer.value(w64)
        grad = self._xt(self.loss.derivative(a, self.y)) / self.n_samples
        return value, grad + self.regularizer.smooth_gradient(w64)

    def batch_loss_gradient(self, w: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Mean loss gradient over ``rows`` (a mini-batch)."""
        if self._custom:
            return self.per_example_gradients(w, rows).mean(axis=0)
        Xb = self.X[rows]
        a = np.asarray(Xb @ self._as_compute(w), dtype=np.float64)
        d1 = self.loss.derivative(a, self.y[rows])
        return np.asarray(Xb.T @ d1.astype(Xb.dtype, copy=False), dtype=np.float64) / len(rows)

    def per_example_gradients(self, w: np.ndarray, rows=None) -> np.ndarray:
        """Dense (m, d) array of per-example loss gradients phi'(<w, x_i>, y_i) x_i."""
        Xb = self.X if rows is None else self.X[rows]
        yb = self.y if rows is None else self.y[rows]
        if self._custom:
            return self.loss.clipped_gradients(np.asarray(w, dtype=np.float64), Xb, yb)
        a = np.asarray(Xb @ self._as_compute(w), dtype=np.float64)
        d1 = self.loss.derivative(a, yb)
        if sp.issparse(Xb):
            return np.asarray(sp.diags(d1) @ Xb.toarray())
        return d1[:, None] * Xb

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian of the smooth part of F at w times v (generalized Hessian where phi''
        jumps)."""
        if self._custom:
            w64, v64 = np.asarray(w, dtype=np.float64), np.asarray(v, dtype=np.float64)
            return self.loss.mean_hessian_vector(w64, v64, self.X, self.y) + self.regularizer.l2 * v64
        curv = self._curvature_at(w)
        Xv = np.asarray(self.X @ self._as_compute(v), dtype=np.float64)
        return self._xt(curv * Xv) / self.n_samples + self.regularizer.l2 * np.asarray(v, dtype=np.float64)

    def _curvature_at(self, w: np.ndarray) -> np.ndarray:
        """phi''(<w, x_i>, y_i), remembered for the last w: Newton-CG asks for many
        Hessian-vector products at one point, and each would otherwise re-read X."""
        key = np.asarray(w, dtype=np.float64).tobytes()
        cached = getattr(self, "_curvature_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, self.loss.curvature(self.margins(w), self.y))
            self._curvature_cache = cached
        return cached[1]

    def hessian(self, w: np.ndarray) -> np.ndarray:
        """Dense d x d Hessian of the smooth part of F (for small d)."""
        if self._custom:
            columns = [self.hessian_vector(w, e) for e in np.eye(self.n_features)]
            H = np.column_stack(columns)
            return 0.5 * (H + H.T)
        curv = self.loss.curvature(self.margins(w), self.y)
        X = self.X
        if sp.issparse(X):
            H = np.asarray((X.T @ sp.diags(curv) @ X).todense())
        else:
            # In X's own precision: one GEMM (a float64 curvature would upcast X).
            H = X.T @ (X * curv.astype(X.dtype)[:, None])
        return np.asarray(H, dtype=np.float64) / self.n_samples + self.regularizer.l2 * np.eye(self.n_features)

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

    def astype(self, dtype) -> "ERMProblem":
        """The same problem with X stored in ``dtype`` (float32 halves memory traffic of
        full-batch methods; the reference solver works in float64)."""
        if self.X.dtype == dtype:
            return self
        return ERMProblem(self.X.astype(dtype), self.y, self.loss, self.regularizer, self.constraint,
                          data_norm=self.data_norm, label_bound=self.label_bound)

    def replace_row(self, i: int, x, y_i) -> "ERMProblem":
        """The neighbouring problem with row i replaced (replace-one), for tests and audits."""
        X = self.X.tolil(copy=True) if sp.issparse(self.X) else self.X.copy()
        X[i] = x
        y = self.y.copy()
        y[i] = y_i
        return ERMProblem(
            sp.csr_matrix(X) if sp.issparse(self.X) else X,
            y,
            self.loss,
            self.regularizer,
            self.constraint,
            data_norm=self.data_norm,
            label_bound=self.label_bound,
        )

    def __repr__(self) -> str:
        return (
            f"ERMProblem(n={self.n_samples}, d={self.n_features}, loss={self.loss!r}, "
            f"regularizer={self.regularizer!r}, constraint={self.constraint!r}, "
            f"data_norm={self.data_norm:g})"
        )
