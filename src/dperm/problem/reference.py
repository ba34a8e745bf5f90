"""High-precision non-private solver, for measuring excess empirical risk.

Also used by ``output_perturbation``, whose privacy proof needs an approximate minimizer
with a *certified* optimality residual (the residual enters the sensitivity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .erm import ERMProblem

__all__ = ["ReferenceSolution", "solve_reference"]


@dataclass(frozen=True)
class ReferenceSolution:
    """A non-private (approximate) minimizer of an ERMProblem."""

    coef: np.ndarray
    objective: float
    residual: float  # bound on dist(0, subdifferential of F) at coef
    iterations: int
    method: str
    converged: bool


def _newton(problem: ERMProblem, w0: np.ndarray, tol: float, max_iter: int):
    """Trust-region Newton-CG on a smooth unconstrained F (generalized Hessian)."""
    res = optimize.minimize(
        problem.value_and_gradient,
        w0,
        jac=True,
        hessp=problem.hessian_vector,
        method="trust-ncg",
        options={"gtol": tol, "maxiter": max_iter},
    )
    return res.x, int(res.nit)


def _lbfgs(problem: ERMProblem, w0: np.ndarray, tol: float, max_iter: int, bounds=None):
    res = optimize.minimize(
        problem.value_and_gradient,
        w0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": max_iter, "gtol": tol, "ftol": 0.0, "maxcor": 30},
    )
    return res.x, int(res.nit)


def _fista(problem: ERMProblem, w0: np.ndarray, tol: float, max_iter: int):
    """Accelerated proximal gradient with gradient-based restart (O'Donoghue-Candes)."""
    step = 1.0 / problem.smoothness
    w = problem.constraint.project(w0) if problem.constraint.bounded else w0.copy()
    z, t = w.copy(), 1.0
    for it in range(1, max_iter + 1):
        grad = problem.gradient(z)
        w_next = problem.prox_step(z, grad, step)
        if np.dot(z - w_next, w_next - w) > 0:  # restart when momentum points uphill
            t, z = 1.0, w.copy()
            continue
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = w_next + ((t - 1.0) / t_next) * (w_next - w)
        w, t = w_next, t_next
        if it % 10 == 0 and problem.optimality_residual(w) <= tol:
            return w, it
    return w, max_iter


_SMOOTHING_WIDTHS = (0.5, 0.1, 0.02, 4e-3, 8e-4, 1.6e-4, 4e-5)


def _nonsmooth(problem: ERMProblem, w: np.ndarray, max_iter: int):
    """Non-smooth losses: the hinge by smoothing continuation; others by L-BFGS on the
    unconstrained, l1-free case only (anything else has no solver here)."""
    from .losses import Hinge, HuberizedHinge

    if isinstance(problem.loss, Hinge):
        iterations = 0
        for width in _SMOOTHING_WIDTHS:
            smoothed = problem._rebuild(loss=HuberizedHinge(width))
            w, it = _fista(smoothed, w, 1e-9, max(1, max_iter // len(_SMOOTHING_WIDTHS)))
            iterations += it
        return w, iterations, "fista on huberized-hinge smoothings"
    if problem.constraint.bounded or not problem.regularizer.is_smooth:
        raise NotImplementedError(
            f"no reference solver for the non-smooth {problem.loss.name} loss with a constraint or an l1 part"
        )
    w, iterations = _lbfgs(problem, w, 1e-10, max_iter)
    return w, iterations, "lbfgs (non-smooth loss)"


def solve_reference(
    problem: ERMProblem,
    *,
    tol: float = 1e-10,
    max_iter: int = 20000,
    w0: np.ndarray | None = None,
) -> ReferenceSolution:
    """Minimize F to a residual ``dist(0, dF) <= tol`` (non-private).

    Smooth unconstrained problems: L-BFGS warm start, then trust-region Newton-CG with
    Hessian-vector products. Problems with an l1 part or a constraint: accelerated
    proximal gradient with restarts, the residual measured through the gradient
    mapping. The hinge loss is solved through its Huberized smoothings of shrinking width
    (FISTA, warm-started; each smoothing is within width/4 of the hinge per example, and
    the constraint and the l1 part are handled by the proximal step); no residual
    certificate exists there, so ``residual`` is NaN and ``converged`` False.
    """
    problem = problem.astype(np.float64)  # a 1e-10 residual is out of float32's reach
    w = np.zeros(problem.n_features) if w0 is None else np.array(w0, dtype=np.float64)
    smooth_unconstrained = (
        problem.is_smooth and problem.regularizer.is_smooth and not problem.constraint.bounded
    )
    if smooth_unconstrained:
        w, iterations = _newton(problem, w, tol, 200)
        method = "trust-ncg"
        if problem.optimality_residual(w) > tol:  # a far start or a kinked phi'': warm up
            w, it1 = _lbfgs(problem, w, tol, 500)
            w, it2 = _newton(problem, w, tol, 200)
            iterations, method = iterations + it1 + it2, "trust-ncg+lbfgs+trust-ncg"
        if problem.optimality_residual(w) > tol:  # generalized Hessian may stall: fall back
            w, it3 = _fista(problem, w, tol, max_iter)
            iterations, method = iterations + it3, method + "+fista"
    elif problem.is_smooth:
        w, iterations = _fista(problem, w, tol, max_iter)
        method = "fista"
    else:
        w, iterations, method = _nonsmooth(problem, w, max_iter)
    residual = problem.optimality_residual(w) if problem.is_smooth else math.nan
    w = problem.certified_point(w)  # the point at which the residual bound holds
    return ReferenceSolution(
        coef=w,
        objective=problem.objective(w),
        residual=residual,
        iterations=iterations,
        method=method,
        converged=bool(residual <= tol),
    )
