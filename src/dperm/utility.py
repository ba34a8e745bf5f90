"""Utility measures of a point: how good is ``w`` for an ERM problem?

These are *measurements for reporting* (benchmarks, tests, the demo): they read the data
without any noise and are **not** differentially private. An algorithm never calls them
on private data to decide anything it releases.

Measures
--------
- :func:`gradient_norm`: ``||grad F(w)||_2`` (first-order stationarity, non-convex bounds).
- :func:`smallest_hessian_eigenvalue`: ``lambda_min(grad^2 F(w))`` (second-order
  stationarity), dense for small d, Lanczos on Hessian-vector products otherwise.
- :func:`excess_risk`: ``F(w) - F(w_hat)`` against a high-precision reference solution.
- :func:`is_second_order_stationary`: the alpha-SOSP test of Wang, Chen, Xu 2019 Definition 9,
  ``||grad F(w)|| <= alpha`` and ``lambda_min >= -sqrt(rho alpha)``.
- :func:`frank_wolfe_gap`: ``max_{v in C} <grad F(w), w - v>``, the first-order measure of
  the constrained case (Wang, Chen, Xu 2019 Definition 10, condition 1).

References
----------
.. [1] Wang, Chen, Xu. Differentially private empirical risk minimization with
   non-convex loss functions. ICML 2019, Definitions 9 and 10.
.. [2] Agarwal, Allen-Zhu, Bullins, Hazan, Ma. Finding approximate local minima faster
   than gradient descent. STOC 2017 (the alpha-SOSP definition).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "gradient_norm",
    "smallest_hessian_eigenvalue",
    "excess_risk",
    "is_second_order_stationary",
    "frank_wolfe_gap",
]


def _point(problem, w) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (problem.n_features,):
        raise ValueError(f"w must have shape ({problem.n_features},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("w must be finite")
    return w


def gradient_norm(problem, w) -> float:
    """Euclidean norm of the gradient of the smooth part of F at ``w`` (non-private).

    Parameters
    ----------
    problem : ERMProblem
        The problem; its smooth part is the mean loss plus the l2 part of the
        regularizer (an l1 part is not differentiable and is left out).
    w : array-like of shape (n_features,)
        The point.

    Returns
    -------
    float
        ``||grad F(w)||_2``.
    """
    return float(np.linalg.norm(problem.gradient(_point(problem, w))))


def smallest_hessian_eigenvalue(problem, w, *, dense_below: int = 200, tol: float = 0.0) -> float:
    """Smallest eigenvalue of the Hessian of the smooth part of F at ``w`` (non-private).

    Parameters
    ----------
    problem : ERMProblem
        The problem (its Hessian is the generalized Hessian where phi'' jumps).
    w : array-like of shape (n_features,)
        The point.
    dense_below : int, default 200
        With ``n_features < dense_below`` the dense d x d Hessian is formed and
        ``numpy.linalg.eigvalsh`` is used. Otherwise the Hessian is never formed: ARPACK's
        Lanczos iteration (``scipy.sparse.linalg.eigsh``, ``which="SA"``) runs on a
        ``LinearOperator`` whose mat-vec is :meth:`ERMProblem.hessian_vector` (two passes
        over X per product).
    tol : float, default 0
        Relative accuracy asked of ARPACK (0 means machine precision).

    Returns
    -------
    float
        ``lambda_min(grad^2 F(w))``.

    Notes
    -----
    The Lanczos start vector is fixed (a seeded Gaussian vector), so the result is
    deterministic.
    """
    w = _point(problem, w)
    d = problem.n_features
    if isinstance(dense_below, bool) or not isinstance(dense_below, numbers.Integral) or dense_below < 0:
        raise ValueError(f"dense_below must be an integer >= 0, got {dense_below!r}")
    if d < dense_below or d <= 2:
        return float(np.linalg.eigvalsh(problem.hessian(w))[0])
    from scipy.sparse.linalg import LinearOperator, eigsh

    operator = LinearOperator(
        (d, d), matvec=lambda v: problem.hessian_vector(w, np.ravel(v)), dtype=np.float64
    )
    v0 = np.random.default_rng(0).standard_normal(d)
    values = eigsh(operator, k=1, which="SA", v0=v0, tol=tol, return_eigenvectors=False,
                   maxiter=max(1000, 20 * d))
    return float(values[0])


def excess_risk(problem, w, reference=None) -> float:
    """``F(w) - F(w_hat)`` with ``w_hat`` a high-precision non-private solution.

    Parameters
    ----------
    problem : ERMProblem
        The problem.
    w : array-like of shape (n_features,)
        The point (for instance a private fit's ``coef``).
    reference : ReferenceSolution or float, optional
        The reference solution (or its objective value ``F(w_hat)``). Default: computed
        with :func:`dperm.problem.solve_reference`. For a non-convex F the reference is a
        stationary point found from 0, not necessarily the global minimum, so the
        excess risk may be negative.

    Returns
    -------
    float
        ``F(w) - F(w_hat)``.
    """
    w = _point(problem, w)
    if reference is None:
        from .problem.reference import solve_reference

        reference = solve_reference(problem)
    if isinstance(reference, numbers.Real) and not isinstance(reference, bool):
        best = float(reference)
    elif hasattr(reference, "objective"):
        best = float(reference.objective)
    else:
        raise TypeError(f"reference must be a ReferenceSolution, a number or None, got {reference!r}")
    return problem.objective(w) - best


def is_second_order_stationary(problem, w, alpha: float, rho: float | None = None, **kwargs) -> bool:
    """Whether ``w`` is an alpha-second-order stationary point (Wang, Chen, Xu 2019 Definition 9).

    ``||grad F(w)||_2 <= alpha`` and ``lambda_min(grad^2 F(w)) >= -sqrt(rho alpha)``.

    Parameters
    ----------
    problem : ERMProblem
        The (unconstrained) problem.
    w : array-like of shape (n_features,)
        The point.
    alpha : float
        Accuracy, > 0.
    rho : float, optional
        The Hessian-Lipschitz constant of the definition; default the problem's
        ``constants.hessian_lipschitz`` (``rho_phi R^3``).
    **kwargs
        Passed to :func:`smallest_hessian_eigenvalue` (``dense_below``, ``tol``).

    Returns
    -------
    bool
    """
    alpha = float(alpha)
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha}")
    rho = problem.constants.hessian_lipschitz if rho is None else float(rho)
    if not (math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho must be a finite number >= 0, got {rho}")
    if gradient_norm(problem, w) > alpha:
        return False
    return smallest_hessian_eigenvalue(problem, w, **kwargs) >= -math.sqrt(rho * alpha)


def frank_wolfe_gap(problem, w) -> float:
    """The Frank-Wolfe gap ``max_{v in C} <grad F(w), w - v>`` over the problem's C.

    It is >= 0 for ``w`` in C, and 0 exactly at first-order stationary points of F over
    C (Wang, Chen, Xu 2019 Definition 10, condition 1, reads ``gap <= alpha``).

    Parameters
    ----------
    problem : ERMProblem
        A problem with a bounded constraint (it needs the linear minimization oracle).
    w : array-like of shape (n_features,)
        The point, in C.

    Returns
    -------
    float
    """
    w = _point(problem, w)
    if not problem.constraint.bounded:
        raise ValueError("the Frank-Wolfe gap needs a bounded constraint set C")
    g = problem.gradient(w)
    return float(g @ (w - problem.constraint.lmo(g)))
