"""The multinomial (softmax) logistic model with a reference class, for the inference fit.

Without a regularizer the softmax over K classes is not identified (adding one vector to
every class's coefficients changes nothing), so, as statsmodels' ``MNLogit``, the
coefficients of class 0 (the first of ``classes_``) are fixed at 0 and the parameter is
the ``p x (K - 1)`` matrix ``B`` of the other classes, flattened row-major (``v =
B.ravel()``, entry ``(j, k)`` at ``j (K - 1) + k``). Its mean loss Hessian is
``(1/n) sum_i s_i Q_i kron x_i x_i^T``, ``Q_i`` the lower-right ``(K-1) x (K-1)`` block
of ``diag p_i - p_i p_i^T``.

Public constants for rows ``||x|| <= D`` (the replace-one sensitivities of
:mod:`dperm.inference.mechanism` follow from them, as for the binary model):

- a per-example gradient ``s_i x_i (p_i - e_{y_i})_{1..K-1}`` has norm at most
  ``sqrt(2) D`` (``||p - e_y||^2 <= 2 (1 - p_y)^2``; dropping a coordinate only lowers it);
- a per-example Hessian ``s_i Q_i kron x_i x_i^T`` is PSD with Frobenius norm at most
  ``||diag p - p p^T||_F D^2 <= D^2 / 2``: ``||diag p - p p^T||_F^2 = s_2 - 2 s_3 + s_2^2``
  (``s_m = sum_k p_k^m``), at most 1/4, attained at ``p = (1/2, 1/2, 0, ...)``; a principal
  block has no larger norm. So the constants' ``loss_smoothness`` is ``D^2 / 2`` and
  the mean Hessian's Frobenius sensitivity ``sqrt(2) D^2 / (2 n)`` (PSD terms, the
  argument of the binary model).

Nothing in this module knows about privacy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from ..problem.constraints import make_constraint
from ..problem.multinomial import MultinomialProblem
from ..problem.regularizers import make_regularizer

__all__ = ["ReferenceSoftmax"]


@dataclass(frozen=True)
class _Loss:
    name: str = "multinomial"
    convex: bool = True


@dataclass(frozen=True)
class _Constants:
    loss_smoothness: float


class ReferenceSoftmax:
    """The unregularized softmax model over K classes, class 0 the reference, on the rows
    of a :class:`~dperm.problem.multinomial.MultinomialProblem` (clipped to its
    ``data_norm``, with its intercept column and sample weights). The interface is the
    part of :class:`~dperm.problem.ERMProblem` the inference fit uses."""

    _custom = False
    loss = _Loss()

    def __init__(self, problem: MultinomialProblem):
        if problem.regularizer.l2 != 0 or problem.constraint.bounded:
            raise ValueError("the reference-class model is the unregularized, unconstrained one")
        self.base = problem
        self.n_classes = problem.n_classes
        self.n_inputs = problem.n_inputs
        self.n_samples = problem.n_samples
        self.n_features = problem.n_inputs * (problem.n_classes - 1)
        self.data_norm = problem.data_norm
        self.sample_weight = problem.sample_weight
        self.regularizer = make_regularizer(None)
        self.constraint = make_constraint(None)
        self.constants = _Constants(loss_smoothness=0.5 * self.data_norm ** 2)

    def gradient_scale(self, w: np.ndarray) -> float:
        """``2 sqrt(2) D / n``: the replace-one sensitivity of the mean loss gradient
        (module notes), at any w."""
        return 2.0 * math.sqrt(2.0) * self.data_norm / self.n_samples

    def _full(self, w: np.ndarray) -> np.ndarray:
        B = np.asarray(w, dtype=np.float64).reshape(self.n_inputs, self.n_classes - 1)
        return np.column_stack([np.zeros(self.n_inputs), B]).ravel()

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        G = self.base.loss_gradient(self._full(w)).reshape(self.n_inputs, self.n_classes)
        return np.ascontiguousarray(G[:, 1:]).ravel()

    def per_example_gradients(self, w: np.ndarray, rows=None) -> np.ndarray:
        G = self.base.per_example_gradients(self._full(w), rows)
        return np.ascontiguousarray(G.reshape(G.shape[0], self.n_inputs, self.n_classes)[:, :, 1:]).reshape(
            G.shape[0], self.n_features)

    def hessian(self, w: np.ndarray) -> np.ndarray:
        """The mean loss Hessian in the flattened ``(j, k)`` order, accumulated over
        blocks of rows."""
        p, m = self.n_inputs, self.n_classes - 1
        out = np.zeros((p, m, p, m))
        step = max(1024, (1 << 22) // max(1, p * m))
        X = self.base.X
        for lo in range(0, self.n_samples, step):
            rows = np.arange(lo, min(self.n_samples, lo + step))
            Xb = X[rows]
            Xb = Xb.toarray() if hasattr(Xb, "toarray") else np.asarray(Xb)
            P = softmax(np.asarray(Xb @ self.base.coefficients(self._full(w))), axis=1)[:, 1:]
            s = np.ones(len(rows)) if self.sample_weight is None else self.sample_weight[rows]
            # Q_i[a, b] = p_a (delta_ab - p_b), weighted
            for a in range(m):
                for b in range(a, m):
                    c = s * P[:, a] * ((1.0 if a == b else 0.0) - P[:, b])
                    block = (Xb * c[:, None]).T @ Xb
                    out[:, a, :, b] += block
                    if b != a:
                        out[:, b, :, a] += block
        H = out.reshape(p * m, p * m) / self.n_samples
        return 0.5 * (H + H.T)
