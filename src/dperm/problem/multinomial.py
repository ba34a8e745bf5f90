"""Multinomial (softmax) logistic regression as one vector-valued ERM problem.

The model is a coefficient matrix ``W`` in ``R^{p x K}`` (p features with the intercept
column, K classes); the per-example loss is the cross-entropy of the softmax of the
scores ``s = W^T x``:

    f(W; x, y) = log sum_k exp(s_k) - s_y.

The algorithms see ``W`` flattened row-major (``w = W.ravel()``, ``W = w.reshape(p, K)``),
so every Euclidean quantity (gradient norm, sensitivity, noise, the l2 regularizer, an
L2-ball constraint) is the Frobenius one of ``W``. The public constants, for rows with
``||x|| <= D`` (derivation in docs/estimators.md, "Multinomial logistic regression"):

- Lipschitz ``L = sqrt(2) D``: the per-example gradient is ``x (p - e_y)^T``, of
  Frobenius norm ``||x|| ||p - e_y||`` with ``||p - e_y||^2 = (1 - p_y)^2 + sum_{k != y}
  p_k^2 <= 2 (1 - p_y)^2 <= 2`` (p the softmax probabilities; the sup is approached when
  p concentrates on one wrong class).
- smoothness ``beta = D^2 / 2``: the per-example Hessian is ``(diag p - p p^T) kron x x^T``
  and ``v^T (diag p - p p^T) v`` is the variance of ``v_J`` for ``J ~ p``, at most
  ``(max v - min v)^2 / 4 <= ||v||^2 / 2`` (Popoviciu; Boehning 1992).
- the per-example Hessian has rank at most ``K - 1`` (``diag p - p p^T`` annihilates the
  all-ones vector) and trace at most ``(1 - 1/K) D^2``.

The softmax is invariant to adding one vector to every column of ``W``: predictions and
probabilities depend on ``W`` only through its projection onto ``{W : W 1 = 0}``, where
every gradient (and, with the l2 regularizer, the minimizer) lies.

Nothing in this module knows about privacy.

References
----------
.. [1] Boehning. Multinomial logistic regression algorithm. Annals of the Institute of
   Statistical Mathematics, 1992 (the bound ``diag p - p p^T <= (I - 1 1^T / K) / 2``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import softmax

from .._validation import check_matrix, check_positive, check_sample_weight
from .constraints import Constraint, make_constraint
from .erm import ERMProblem, ProblemConstants, clip_rows
from .regularizers import Regularizer, make_regularizer

__all__ = ["MultinomialLogistic", "MultinomialProblem"]


class MultinomialLogistic:
    """The softmax cross-entropy loss over ``K >= 2`` classes and its public constants.

    Evaluated on a score matrix ``S`` (m, K) and class indices ``y`` (m,) in ``0..K-1``.
    The constants follow the margin losses' convention (per unit row norm): multiply
    ``lipschitz`` by D and ``smoothness`` by D^2 for rows with ``||x|| <= D``.
    """

    name = "multinomial"
    convex = True
    smooth = True
    binary = False
    twice_differentiable = True

    def __init__(self, n_classes: int):
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
        self.n_classes = int(n_classes)

    def value(self, S: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-example ``log sum_k exp(s_k) - s_y``."""
        return self.value_and_residuals(S, y, residuals=False)[0]

    def residuals(self, S: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``p - e_y`` per row (the gradient in the scores)."""
        return self.value_and_residuals(S, y, value=False)[1]

    @staticmethod
    def value_and_residuals(S: np.ndarray, y: np.ndarray, *, value: bool = True, residuals: bool = True):
        """(per-example values or None, ``p - e_y`` or None) from one pass of exponentials
        (shifted by the row maximum, so no overflow)."""
        rows = np.arange(len(y))
        top = S.max(axis=1, keepdims=True)
        E = np.exp(S - top)
        total = E.sum(axis=1, keepdims=True)
        values = (np.log(total) + top).ravel() - S[rows, y] if value else None
        if not residuals:
            return values, None
        E /= total
        E[rows, y] -= 1.0
        return values, E

    @staticmethod
    def hessian_apply(P: np.ndarray, A: np.ndarray) -> np.ndarray:
        """``(diag p_i - p_i p_i^T) a_i`` per row: the Hessian in the scores applied to A."""
        PA = P * A
        return PA - P * PA.sum(axis=1, keepdims=True)

    def lipschitz(self, margin_bound: float = math.inf, label_bound: float = 1.0) -> float:
        """sup ``||p - e_y||`` = sqrt 2 (arguments accepted for the margin losses' interface)."""
        return math.sqrt(2.0)

    def smoothness(self, margin_bound: float = math.inf, label_bound: float = 1.0) -> float:
        """sup of the largest eigenvalue of ``diag p - p p^T``: 1/2."""
        return 0.5

    @property
    def hessian_rank(self) -> int:
        """Bound on the rank of a per-example Hessian: K - 1."""
        return self.n_classes - 1

    def hessian_trace(self, data_norm: float) -> float:
        """Bound on the trace of a per-example Hessian: ``(1 - 1/K) D^2`` (the trace of
        ``diag p - p p^T`` is ``1 - ||p||^2 <= 1 - 1/K``)."""
        return (1.0 - 1.0 / self.n_classes) * data_norm**2

    def __repr__(self) -> str:
        return f"MultinomialLogistic(n_classes={self.n_classes})"


class MultinomialProblem:
    """Regularized multinomial logistic regression, a convex ERM over ``W`` in R^{p x K}.

    ``F(W) = (1/n) sum_i f(W; x_i, y_i) + r(vec W)``, minimized over C (in the flattened
    coordinates). The interface is :class:`~dperm.problem.ERMProblem`'s as far as the
    full-batch algorithms use it (constants, objective, gradients, Hessian-vector
    products, proximal steps, the optimality certificate), with ``n_features`` the number
    of parameters ``p K``; ``n_inputs`` is p and ``n_classes`` is K.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_inputs_without_intercept)
    y : array-like of int of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int
        K >= 2, public (declared by the caller, not read from y).
    regularizer, constraint :
        As for :class:`~dperm.problem.ERMProblem`, on the flattened ``W``.
    data_norm : float
        Declared bound D on the norm of a row (intercept column included); rows above it
        are scaled down onto it, silently (a per-row map; a warning would release whether
        one row was above it).
    intercept_scaling : float
        Nonzero: the constant last column of every row, as in ``ERMProblem``.
    sample_weight : array-like of shape (n_samples,) or None
        Per-example weights ``s_i`` in [0, 1] (anything else is an error):
        ``F(W) = (1/n) sum_i s_i f(W; x_i, y_i) + r(vec W)``, divided by n (public), never
        by the sum of the weights (data). The constants are unchanged: ``s_i`` scales the
        per-example gradient (norm ``<= s_i L <= L``) and Hessian (``<= beta``). The
        weight is part of the private record (x_i, y_i, s_i). ``None``: unweighted.

    Notes
    -----
    Data are kept as float64 with the clipped rows and the intercept column
    materialized (one copy of X); there is no Dask path.
    """

    _custom = False  # a built-in loss whose constants are proven (module docstring)
    # The algorithms whose guarantee rests only on L, beta, mu and convexity of a problem
    # over R^(pK) (checked by the catalogue's check_assumptions). Not objective
    # perturbation: its accounting assumes rank-one per-example Hessians and a shift of
    # the noise within a 2-dimensional span (docs/estimators.md).
    supported_algorithms = frozenset({"output_perturbation", "gd_output_perturbation", "noisy_gd"})
    is_convex = True
    is_smooth = True

    def __init__(self, X, y, n_classes: int, regularizer=None, constraint=None, *, data_norm: float = 1.0,
                 intercept_scaling: float = 0.0, sample_weight=None):
        self.loss = MultinomialLogistic(n_classes)
        self.n_classes = self.loss.n_classes
        self.regularizer: Regularizer = make_regularizer(regularizer)
        self.constraint: Constraint = make_constraint(constraint)
        self.data_norm = check_positive("data_norm", data_norm)
        X = check_matrix(X, min_rows=2)
        self.y = self._check_labels(y, X.shape[0])
        self.sample_weight = check_sample_weight(sample_weight, X.shape[0])
        ERMProblem._set_intercept(self, intercept_scaling)
        X = clip_rows(X, self.feature_norm)  # silent (docs/privacy.md, "Totality")
        X = X.astype(np.float64)
        if self.intercept_scaling:
            column = np.full((X.shape[0], 1), self.intercept_scaling)
            X = sp.hstack([X, sp.csr_matrix(column)], format="csr") if sp.issparse(X) else np.hstack([X, column])
        self.X = X
        self.n_samples, self.n_inputs = X.shape
        self.n_features = self.n_inputs * self.n_classes
        self.constants = self._constants()

    def _check_labels(self, y, n: int) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must have shape ({n},), got {y.shape}")
        if y.dtype.kind not in "iu":
            raise ValueError("y must hold integer class indices 0 .. n_classes - 1")
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):  # no label quoted: labels are data
            raise ValueError(f"y has a class index outside 0 .. {self.n_classes - 1}")
        return y.astype(np.intp)

    # -- constants --------------------------------------------------------------
    def _constants(self) -> ProblemConstants:
        D = self.data_norm
        margin_bound = D * self.constraint.l2_radius(self.n_features)
        loss_beta = self.loss.smoothness() * D * D
        return ProblemConstants(
            lipschitz=self.loss.lipschitz() * D,
            smoothness=loss_beta + self.regularizer.smoothness,
            loss_smoothness=loss_beta,
            strong_convexity=self.regularizer.strong_convexity,
            hessian_lipschitz=math.inf,  # not derived; no algorithm offered here needs it
            margin_bound=margin_bound,
        )

    # the parts of ERMProblem that depend on the constants, C and r only, not on the loss
    lipschitz = ERMProblem.lipschitz
    smoothness = ERMProblem.smoothness
    strong_convexity = ERMProblem.strong_convexity
    n = ERMProblem.n
    d = ERMProblem.d
    gradient_sensitivity = ERMProblem.gradient_sensitivity
    effective_constraint = ERMProblem.effective_constraint
    prox_step = ERMProblem.prox_step
    optimality_residual = ERMProblem.optimality_residual
    certified_point = ERMProblem.certified_point

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float64)

    def astype(self, dtype) -> "MultinomialProblem":
        """The problem itself: it is always computed in float64."""
        return self

    # -- evaluation -------------------------------------------------------------
    def coefficients(self, w: np.ndarray) -> np.ndarray:
        """The (p, K) matrix W of the flattened coefficients w."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w.reshape(self.n_inputs, self.n_classes)

    def _rows(self, rows):
        return (self.X, self.y) if rows is None else (self.X[rows], self.y[rows])

    def _weigh(self, values: np.ndarray, rows=None) -> np.ndarray:
        """``s_i * values_i`` (rows of a 1-D or 2-D array); ``values`` when unweighted."""
        s = self.sample_weight
        if s is None:
            return values
        s = s if rows is None else s[rows]
        return values * (s if values.ndim == 1 else s[:, None])

    def scores(self, w: np.ndarray, rows=None) -> np.ndarray:
        X, _ = self._rows(rows)
        return np.asarray(X @ self.coefficients(w))

    def loss_value(self, w: np.ndarray) -> float:
        return float(np.mean(self._weigh(self.loss.value(self.scores(w), self.y))))

    def objective(self, w: np.ndarray) -> float:
        return self.loss_value(w) + self.regularizer.value(np.asarray(w, dtype=np.float64))

    def _loss_gradient(self, w, rows=None, value: bool = True) -> tuple[float | None, np.ndarray]:
        X, y = self._rows(rows)
        values, R = self.loss.value_and_residuals(np.asarray(X @ self.coefficients(w)), y, value=value)
        grad = np.asarray(X.T @ self._weigh(R, rows)).ravel() / len(y)
        return (float(np.mean(self._weigh(values, rows))) if value else None), grad

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        """Gradient of the mean loss, ``X^T (P - Y) / n`` flattened."""
        return self._loss_gradient(w, value=False)[1]

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return self.loss_gradient(w) + self.regularizer.smooth_gradient(np.asarray(w, dtype=np.float64))

    def value_and_gradient(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        w64 = np.asarray(w, dtype=np.float64)
        value, grad = self._loss_gradient(w64)
        return value + self.regularizer.value(w64), grad + self.regularizer.smooth_gradient(w64)

    def batch_loss_gradient(self, w: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self._loss_gradient(w, rows, value=False)[1]

    def per_example_gradients(self, w: np.ndarray, rows=None) -> np.ndarray:
        """Dense (m, p K) array of the flattened ``s_i x_i (p_i - e_{y_i})^T``."""
        X, y = self._rows(rows)
        R = self._weigh(self.loss.residuals(np.asarray(X @ self.coefficients(w)), y), rows)
        Xd = X.toarray() if sp.issparse(X) else X
        return (Xd[:, :, None] * R[:, None, :]).reshape(len(y), self.n_features)

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``(1/n) sum_i [(diag p_i - p_i p_i^T) kron x_i x_i^T] vec V`` plus the l2 part."""
        P = softmax(self.scores(w), axis=1)
        A = np.asarray(self.X @ self.coefficients(v))
        out = np.asarray(self.X.T @ self._weigh(self.loss.hessian_apply(P, A))).ravel() / self.n_samples
        return out + self.regularizer.l2 * np.asarray(v, dtype=np.float64)

    def replace_row(self, i: int, x, y_i: int, weight=None) -> "MultinomialProblem":
        """The neighbouring problem with row i replaced (replace-one), for tests and audits.

        ``x``: the new features without the intercept column; ``weight``: the new sample
        weight of row i (None keeps row i's weight; an unweighted problem then stays so)."""
        k = self.n_inputs - (1 if self.intercept_scaling else 0)
        X = self.X[:, :k]
        X = X.tolil(copy=True) if sp.issparse(X) else X.copy()
        X[i] = x
        y = self.y.copy()
        y[i] = y_i
        weights = self.sample_weight
        if weight is not None:
            weights = np.ones(self.n_samples) if weights is None else weights.copy()
            weights[i] = weight
        return MultinomialProblem(sp.csr_matrix(X) if sp.issparse(self.X) else X, y, self.n_classes,
                                  self.regularizer, self.constraint, data_norm=self.data_norm,
                                  intercept_scaling=self.intercept_scaling, sample_weight=weights)

    def __repr__(self) -> str:
        return (f"MultinomialProblem(n={self.n_samples}, p={self.n_inputs}, K={self.n_classes}, "
                f"regularizer={self.regularizer!r}, constraint={self.constraint!r}, data_norm={self.data_norm:g}"
                + (f", intercept_scaling={self.intercept_scaling:g})" if self.intercept_scaling else ")"))
