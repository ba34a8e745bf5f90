"""Mirror geometries of DP-AccMD (:mod:`dperm.algorithms.accmd`): one per constraint set.

A geometry bundles, for a bounded, centrally symmetric constraint set C (L2 ball, L1 ball,
box), a norm ``||.||``, a mirror map w that is 1-strongly convex in it, the smoothness
``L_C = beta rho^2`` of F in that norm (``||v||_2 <= rho ||v||``), the mirror step
``argmin_{u in C} alpha <g, u> + V_z(u)``, the gradient step (a point of C that does at
least as well as the coupling point on the model ``<g, y - x> + L_C ||y - x||^2``), the
Bregman diameter ``D >= V_{x_0}(x*)`` and the dual width ``W = E ||xi||_*^2``, xi ~ N(0, I).
Everything here is public: no data, no privacy.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, optimize
from scipy.special import ndtr

from ..problem.constraints import Box, L1Ball, L2Ball
from .registry import AssumptionError

__all__ = [
    "GEOMETRIES",
    "make_geometry",
    "EuclideanGeometry",
    "L1PNormGeometry",
    "BoxLinfGeometry",
    "linf_prox_box",
    "optimal_pnorm_exponent",
    "expected_sq_max_abs_gaussian",
    "into",
]

GEOMETRIES = ("auto", "euclidean", "minkowski")


# ------------------------------------------------------------------------- helpers
@functools.lru_cache(maxsize=256)
def expected_sq_max_abs_gaussian(dim: int) -> float:
    """``E[max_i xi_i^2]`` for xi ~ N(0, I_dim), by quadrature of ``P(max|xi_i| > t)``.

    ``E[M^2] = int_0^inf 2 t (1 - (1 - 2 Phi(-t))^dim) dt``; about ``2 ln(2 dim)`` for
    large dim (1 at dim = 1).
    """
    dim = int(dim)

    def tail(t: float) -> float:
        p = 2.0 * float(ndtr(-t))  # P(|xi_1| > t)
        if p >= 1.0:
            return 2.0 * t
        return 2.0 * t * -math.expm1(dim * math.log1p(-p))

    knee = math.sqrt(2.0 * math.log(2.0 * dim)) + 1.0
    head, _ = integrate.quad(tail, 0.0, knee, limit=200, epsabs=1e-12, epsrel=1e-10)
    rest, _ = integrate.quad(tail, knee, math.inf, limit=200, epsabs=1e-12, epsrel=1e-10)
    return head + rest


def optimal_pnorm_exponent(dim: int) -> float:
    """The p in (1, 2] minimizing the Bregman diameter ``d^{2(p-1)/p} / (2(p-1))`` of the
    p-norm mirror map on the L1 ball (see :class:`L1PNormGeometry`).

    With ``q = p - 1`` and ``l = ln d`` the stationarity condition is
    ``(1 + q)^2 = 2 q l``: ``q = (l - 1) - sqrt((l - 1)^2 - 1) ~ 1/(2 ln d)`` for
    ``l > 2``; for ``d <= e^2`` the diameter decreases on (0, 1] and p = 2.
    """
    ell = math.log(max(int(dim), 1))
    if ell <= 2.0:
        return 2.0
    q = (ell - 1.0) - math.sqrt((ell - 1.0) ** 2 - 1.0)
    return 1.0 + q


def into(constraint, w: np.ndarray) -> np.ndarray:
    """w itself if in C, else w / ||w||_C (in C for these centrally symmetric sets):
    guards the convex combinations of the algorithm against rounding."""
    gauge = constraint.minkowski_norm(w)
    return w if gauge <= 1.0 else w / gauge


# ------------------------------------------------------------------------- geometries
class EuclideanGeometry:
    """``||v|| = ||v||_2 / r`` with r the L2 radius of C; ``w(z) = ||z||_2^2 / (2 r^2)``.

    ``L_C = beta r^2``; the mirror step is the projected step ``Pi_C(z - alpha r^2 g)``
    and the gradient step ``Pi_C(x - g / (2 beta))`` is the exact minimizer of the model
    ``<g, y - x> + L_C ||y - x||^2``. ``D = sup_C V_{x_0} <= (1 + ||x_0||_2 / r)^2 / 2``
    (1/2 from the centre), ``W = r^2 d``. The default on the L2 ball and the box.
    """

    name = "euclidean"

    def __init__(self, constraint, dim: int, beta: float):
        self.constraint, self.dim, self.beta = constraint, int(dim), float(beta)
        self.r = float(constraint.l2_radius(dim))
        self.smoothness = self.beta * self.r**2
        self.mirror_map = "||z||_2^2 / (2 r^2), r the L2 radius of C"

    def mirror_grad(self, z):
        return z / self.r**2

    def mirror_value(self, z):
        return float(np.dot(z, z)) / (2.0 * self.r**2)

    def mirror_step(self, z, g, alpha):
        """argmin_{u in C} alpha <g, u> + V_z(u)."""
        return self.constraint.project(z - (alpha * self.r**2) * g)

    def model(self, x, g, y) -> float:
        u = y - x
        return float(np.dot(g, u)) + self.smoothness * float(np.dot(u, u)) / self.r**2

    def gradient_step(self, x, g, v):
        """argmin_{y in C} <g, y - x> + L_C ||y - x||^2 (exact)."""
        return self.constraint.project(x - g / (2.0 * self.beta))

    def bregman_diameter(self, x0) -> float:
        return 0.5 * (1.0 + float(np.linalg.norm(x0)) / self.r) ** 2

    def dual_width(self) -> float:
        return self.r**2 * self.dim


class BoxLinfGeometry:
    """The box's own Minkowski norm ``||v|| = ||v||_inf / R``, ``w(z) = ||z||_2^2/(2 R^2)``.

    ``L_C = beta R^2 d`` (``||v||_2 <= sqrt(d) ||v||_inf``), the gradient step is the
    exact minimizer of ``<g, y - x> + beta d ||y - x||_inf^2`` over the box (a 1-D
    water-filling on ``t = ||y - x||_inf``), ``D = sup_C V_{x_0}`` (``d / 2`` from the
    centre), ``W = R^2 E||xi||_1^2 = R^2 (d + 2 d (d - 1) / pi)``. Wang, Ye, Xu 2017's literal
    choice; at the optimal T its bound (``~ sqrt(D W)``) is about ``sqrt(2d/pi)`` times
    that of :class:`EuclideanGeometry` on the box, which ``geometry="auto"`` therefore
    prefers at the default T.
    """

    name = "minkowski"

    def __init__(self, constraint: Box, dim: int, beta: float):
        self.constraint, self.dim, self.beta = constraint, int(dim), float(beta)
        self.R = float(constraint.radius)
        self.smoothness = self.beta * self.R**2 * self.dim
        self.mirror_map = "||z||_2^2 / (2 R^2), R the half-side of the box"

    def mirror_grad(self, z):
        return z / self.R**2

    def mirror_value(self, z):
        return float(np.dot(z, z)) / (2.0 * self.R**2)

    def mirror_step(self, z, g, alpha):
        return np.clip(z - (alpha * self.R**2) * g, -self.R, self.R)

    def model(self, x, g, y) -> float:
        u = y - x
        return float(np.dot(g, u)) + self.beta * self.dim * float(np.max(np.abs(u), initial=0.0)) ** 2

    def gradient_step(self, x, g, v):
        return linf_prox_box(x, g, self.R, self.beta * self.dim)

    def bregman_diameter(self, x0) -> float:
        return float(np.sum((self.R + np.abs(x0)) ** 2)) / (2.0 * self.R**2)

    def dual_width(self) -> float:
        d = self.dim
        return self.R**2 * (d + 2.0 * d * (d - 1) / math.pi)


def linf_prox_box(x: np.ndarray, g: np.ndarray, R: float, weight: float) -> np.ndarray:
    """Exact ``argmin_{||y||_inf <= R} <g, y - x> + weight ||y - x||_inf^2``.

    For ``t = ||y - x||_inf`` the best y is ``clip(x - t sign(g), -R, R)``, so the value is
    ``h(t) = -sum_i |g_i| min(t, c_i) + weight t^2`` with ``c_i`` the distance from x_i to
    the face in direction ``-sign(g_i)``. h is convex; ``h'(t) = 2 weight t - sum_{c_i > t}
    |g_i|`` and the minimizer is ``t* = max_k min(c_(k), S_k / (2 weight))`` with c sorted
    and ``S_k = sum_{i >= k} |g_(i)|``.
    """
    a = np.abs(g)
    c = np.maximum(np.where(g > 0, x + R, R - x), 0.0)
    order = np.argsort(c, kind="stable")
    suffix = np.cumsum(a[order][::-1])[::-1]
    t = max(0.0, float(np.max(np.minimum(c[order], suffix / (2.0 * weight)), initial=0.0)))
    return np.clip(x - t * np.sign(g), -R, R)


class L1PNormGeometry:
    """The L1 ball's Minkowski norm ``||v|| = ||v||_1 / R`` with the p-norm mirror map.

    ``w(z) = ||z||_p^2 / (2 (p - 1) kappa R^2)`` with ``kappa = d^{-2(p-1)/p}``:
    ``||.||_p^2 / (2(p-1))`` is 1-strongly convex in ``||.||_p`` for p in (1, 2] and
    ``||u||_p >= d^{-(p-1)/p} ||u||_1`` (Hoelder), so w is 1-strongly convex in
    ``||.||_1 / R``. With ``p = 1 + 1/ln d`` (the textbook choice) ``kappa >= e^{-2}``;
    the default p of :func:`optimal_pnorm_exponent` minimizes the Bregman diameter
    ``D = max_C w = d^{2(p-1)/p} / (2 (p-1))`` (about ``e ln d``, against ``e^2 ln d / 2``
    for the textbook p).

    ``L_C = beta R^2`` (``||v||_2 <= ||v||_1``), ``W = R^2 E||xi||_inf^2 ~ 2 R^2 ln(2d)``.
    Mirror step: ``z = grad w*(soft(theta, lambda))`` with ``theta = grad w(z_k) - alpha g``
    and ``lambda >= 0`` the root of ``||z||_1 = R`` (0 when ``grad w*(theta)`` is in C),
    found by Brent's method on the monotone map lambda -> ``||z(lambda)||_1``.
    Gradient step: the best, by the value of the model ``<g, y - x> + beta ||y - x||_1^2``,
    of the coupling point v, a greedy coordinate step, a Frank-Wolfe short step and a
    projected Euclidean step (the analysis needs only ``model(y) <= model(v)``).
    """

    name = "minkowski"

    def __init__(self, constraint: L1Ball, dim: int, beta: float, p: float | None = None):
        self.constraint, self.dim, self.beta = constraint, int(dim), float(beta)
        self.R = float(constraint.radius)
        p = optimal_pnorm_exponent(self.dim) if p is None else float(p)
        if not (1.0 < p <= 2.0):
            raise ValueError(f"p must be in (1, 2], got {p}")
        self.p = p
        self.q = p / (p - 1.0)  # dual exponent
        self.kappa = self.dim ** (-2.0 * (p - 1.0) / p)
        self.c = 1.0 / ((p - 1.0) * self.kappa * self.R**2)  # w(z) = (c/2) ||z||_p^2
        self.smoothness = self.beta * self.R**2
        self.mirror_map = f"||z||_p^2 / (2 (p-1) kappa R^2), p = {p:.6g}, kappa = d^(-2(p-1)/p) = {self.kappa:.6g}"

    # the mirror map and its conjugate, both scale-safe (normalized by the max entry)
    def mirror_value(self, z) -> float:
        m = float(np.max(np.abs(z), initial=0.0))
        if m == 0.0:
            return 0.0
        norm = m * float(np.sum((np.abs(z) / m) ** self.p)) ** (1.0 / self.p)
        return 0.5 * self.c * norm * norm

    def mirror_grad(self, z) -> np.ndarray:
        """grad w(z) = c ||z||_p^{2-p} sign(z) |z|^{p-1}."""
        m = float(np.max(np.abs(z), initial=0.0))
        if m == 0.0:
            return np.zeros_like(z, dtype=float)
        a = np.abs(z) / m
        ap = a ** (self.p - 1.0)
        norm = float(np.dot(ap, a)) ** (1.0 / self.p)
        return np.sign(z) * (self.c * m * norm ** (2.0 - self.p)) * ap

    def conjugate_grad(self, u) -> np.ndarray:
        """grad w*(u) = (1/c) ||u||_q^{2-q} sign(u) |u|^{q-1}, the inverse of grad w."""
        m = float(np.max(np.abs(u), initial=0.0))
        if m == 0.0:
            return np.zeros_like(u, dtype=float)
        a = np.abs(u) / m
        aq = a ** (self.q - 1.0)
        norm = float(np.dot(aq, a)) ** (1.0 / self.q)
        return np.sign(u) * (m * norm ** (2.0 - self.q) / self.c) * aq

    def _conjugate_l1(self, u) -> float:
        m = float(np.max(np.abs(u), initial=0.0))
        if m == 0.0:
            return 0.0
        a = np.abs(u) / m
        aq = a ** (self.q - 1.0)
        norm = float(np.dot(aq, a)) ** (1.0 / self.q)
        return m * norm ** (2.0 - self.q) * float(aq.sum()) / self.c

    def argmin_linear(self, theta) -> tuple[np.ndarray, float]:
        """``argmin_{||z||_1 <= R} w(z) - <theta, z>`` and its multiplier lambda.

        KKT: ``grad w(z) = theta - lambda s`` with s in the subdifferential of ||z||_1,
        i.e. ``grad w(z) = soft(theta, lambda)``; ``lambda (||z||_1 - R) = 0``. The dual
        function is concave in lambda with derivative ``||z(lambda)||_1 - R``, so that
        map is non-increasing and its root is bracketed by [0, ||theta||_inf].
        """
        theta = np.asarray(theta, dtype=float)
        if self._conjugate_l1(theta) <= self.R:
            return self.conjugate_grad(theta), 0.0
        a, s = np.abs(theta), np.sign(theta)
        hi = float(a.max())

        def excess(lam: float) -> float:
            return self._conjugate_l1(s * np.maximum(a - lam, 0.0)) - self.R

        lam = optimize.brentq(excess, 0.0, hi, xtol=max(1e-15 * hi, 1e-300), rtol=1e-15, maxiter=500)
        z = self.conjugate_grad(s * np.maximum(a - lam, 0.0))
        total = float(np.abs(z).sum())
        if total > self.R:  # root-finding tolerance: land exactly in C
            z = z * (self.R / total)
        return z, float(lam)

    def mirror_step(self, z, g, alpha):
        """argmin_{u in C} alpha <g, u> + V_z(u): a Bregman projection onto the L1 ball."""
        return self.argmin_linear(self.mirror_grad(z) - alpha * g)[0]

    def model(self, x, g, y) -> float:
        u = y - x
        return float(np.dot(g, u)) + self.beta * float(np.abs(u).sum()) ** 2

    def gradient_step(self, x, g, v):
        R, beta = self.R, self.beta
        candidates = [v]
        j = int(np.argmax(np.abs(g)))
        gj = float(g[j])
        if gj != 0.0:
            direction = -math.copysign(1.0, gj)
            slack = R - float(np.abs(x).sum())
            toward_zero = x[j] * direction < 0.0
            t_max = max(0.0, slack + (2.0 * abs(float(x[j])) if toward_zero else 0.0))
            t = min(abs(gj) / (2.0 * beta), t_max)  # unconstrained minimizer |g_j| / (2 beta)
            y = x.copy()
            y[j] += direction * t
            candidates.append(y)
            s = self.constraint.lmo(g)  # Frank-Wolfe vertex, short step on the model
            u = s - x
            un = float(np.abs(u).sum())
            if un > 0.0:
                gamma = min(1.0, max(0.0, -float(np.dot(g, u)) / (2.0 * beta * un * un)))
                candidates.append(x + gamma * u)
        candidates.append(self.constraint.project(x - g / (2.0 * beta)))
        values = [self.model(x, g, y) for y in candidates]
        return candidates[int(np.argmin(values))]

    def bregman_diameter(self, x0) -> float:
        """``sup_C V_{x_0} <= max_C w - w(x_0) + <grad w(x_0), x_0> + R ||grad w(x_0)||_inf``."""
        top = 0.5 * self.c * self.R**2  # max of ||z||_p over the L1 ball is R (a vertex)
        if not np.any(x0):
            return top
        gw = self.mirror_grad(x0)
        return top - self.mirror_value(x0) + float(np.dot(gw, x0)) + self.R * float(np.max(np.abs(gw)))

    def dual_width(self) -> float:
        return self.R**2 * expected_sq_max_abs_gaussian(self.dim)


def make_geometry(constraint, dim: int, beta: float, geometry: str = "euclidean", p: float | None = None):
    """The geometry ``"euclidean"`` or ``"minkowski"`` of a bounded constraint set.

    On the L2 ball both names give :class:`EuclideanGeometry` (its Minkowski norm is the
    scaled L2 norm). ``"auto"`` is resolved by :func:`dp_accmd` (smallest bound).
    """
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"the smoothness beta must be a finite number > 0, got {beta}")
    if geometry not in ("euclidean", "minkowski"):
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    kind = type(constraint)
    if kind not in (L2Ball, L1Ball, Box):
        raise AssumptionError(f"dp_accmd supports the L2 ball, the L1 ball and the box, got {constraint!r}")
    if geometry == "euclidean" or kind is L2Ball:
        return EuclideanGeometry(constraint, dim, beta)
    if kind is L1Ball:
        return L1PNormGeometry(constraint, dim, beta, p)
    return BoxLinfGeometry(constraint, dim, beta)
