"""Compiled (numba) inner loops for per-example stochastic methods.

The Python driver draws everything random from the caller's NumPy ``Generator`` in
blocks (uniforms for batch selection, Gaussian noise), so runs are bit-for-bit
reproducible and the noise stream has the Generator's full state (never a small seed
inside the kernel); the kernel only does arithmetic on what it is given.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..problem.losses import (
    Biweight,
    Hinge,
    Huber,
    HuberizedHinge,
    Logistic,
    MarginLoss,
    SigmoidSquared,
    Squared,
)

__all__ = ["loss_code", "weights_of", "sample_batches", "sgd_steps_dense", "sgd_steps_csr", "PROJ_NONE", "PROJ_L2", "PROJ_L1", "PROJ_BOX"]

PROJ_NONE, PROJ_L2, PROJ_L1, PROJ_BOX = 0, 1, 2, 3

# Reassociation and contraction let LLVM vectorize the dot products and axpys (about 1.5x
# on dense rows); NaN/inf semantics are kept (no "nnan"/"ninf"), and the noise is drawn
# by NumPy outside, so no flag touches how the privacy noise is generated.
_JIT = dict(cache=True, fastmath={"reassoc", "contract", "arcp", "nsz"}, error_model="numpy")


def loss_code(loss: MarginLoss) -> tuple[int, float]:
    """(integer id, parameter) of a built-in loss for the compiled kernels."""
    if type(loss) is Logistic:
        return 0, 0.0
    if type(loss) is HuberizedHinge:
        return 1, loss.width
    if type(loss) is Hinge:
        return 2, 0.0
    if type(loss) is Squared:
        return 3, 0.0
    if type(loss) is Huber:
        return 4, loss.threshold
    if type(loss) is SigmoidSquared:
        return (5 if loss.link == "sigmoid" else 6), 0.0
    if type(loss) is Biweight:
        return 7, loss.c
    raise ValueError(f"no compiled kernel for the loss {loss!r}")


def weights_of(problem) -> np.ndarray:
    """The problem's sample weights as the kernels take them: a contiguous float64 vector,
    or an empty one for an unweighted problem (one compiled signature for both)."""
    weights = getattr(problem, "sample_weight", None)
    if weights is not None and not isinstance(weights, np.ndarray):  # Dask weights: not indexed by batch rows
        raise NotImplementedError("the compiled mini-batch kernels take in-memory sample weights only")
    return np.zeros(0) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)


@njit(**_JIT)
def _sigmoid(a):
    if a >= 0:
        return 1.0 / (1.0 + math.exp(-a))
    e = math.exp(a)
    return e / (1.0 + e)


@njit(**_JIT)
def _dphi(code, param, a, y):
    """phi'(a, y) for the loss ``code`` (see loss_code); mirrors problem/losses.py."""
    if code == 0:  # logistic
        return -y * _sigmoid(-y * a)
    if code == 1:  # huberized hinge, width param
        z = y * a
        if z > 1.0 + param:
            return 0.0
        if z < 1.0 - param:
            return -y
        return -y * (1.0 + param - z) / (2.0 * param)
    if code == 2:  # hinge
        return -y if y * a < 1.0 else 0.0
    if code == 3:  # squared
        return a - y
    if code == 4:  # huber, threshold param
        r = a - y
        return min(max(r, -param), param)
    if code == 5:  # sigmoid-squared, sigmoid link
        s = _sigmoid(a)
        return 2.0 * (s - y) * s * (1.0 - s)
    if code == 6:  # sigmoid-squared, probit link
        s = 0.5 * (1.0 + math.erf(a / math.sqrt(2.0)))
        return 2.0 * (s - y) * math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
    # biweight, constant param
    r = a - y
    u = (r / param) ** 2
    return r * (1.0 - u) ** 2 if u <= 1.0 else 0.0


@njit(**_JIT)
def _phi(code, param, a, y):
    """phi(a, y) for the loss ``code``; mirrors the ``value`` methods of problem/losses.py."""
    if code == 0:  # logistic, log(1 + exp(-z)) computed stably
        z = y * a
        return math.log1p(math.exp(-abs(z))) + max(-z, 0.0)
    if code == 1:  # huberized hinge
        z = y * a
        if z > 1.0 + param:
            return 0.0
        if z < 1.0 - param:
            return 1.0 - z
        return (1.0 + param - z) ** 2 / (4.0 * param)
    if code == 2:  # hinge
        return max(0.0, 1.0 - y * a)
    if code == 3:  # squared
        return 0.5 * (a - y) ** 2
    if code == 4:  # huber
        r = abs(a - y)
        return 0.5 * r * r if r <= param else param * r - 0.5 * param * param
    if code == 5:  # sigmoid-squared, sigmoid link
        return (_sigmoid(a) - y) ** 2
    if code == 6:  # sigmoid-squared, probit link
        return (0.5 * (1.0 + math.erf(a / math.sqrt(2.0))) - y) ** 2
    u = min(((a - y) / param) ** 2, 1.0)  # biweight
    return param * param / 6.0 * (1.0 - (1.0 - u) ** 3)


@njit(cache=True, parallel=True)
def mean_losses_at_points(X, y, W, code, param, out):
    """out[k] = (1/n) sum_i phi(<W[k], x_i>, y_i): the loss part of F at every point of a
    net, one pass over X per point, no (n x points) temporary."""
    n, d = X.shape
    for k in prange(W.shape[0]):  # points are independent: split them across cores
        total = 0.0
        for i in range(n):
            a = 0.0
            for j in range(d):
                a += X[i, j] * W[k, j]
            total += _phi(code, param, a, y[i])
        out[k] = total / n


@njit(**_JIT)
def _project(w, kind, radius, scratch):
    d = w.shape[0]
    if kind == 1:  # L2 ball
        norm = math.sqrt(np.dot(w, w))
        if norm > radius:
            w *= radius / norm
    elif kind == 3:  # box
        for j in range(d):
            w[j] = min(max(w[j], -radius), radius)
    elif kind == 2:  # L1 ball, Duchi et al. 2008
        total = 0.0
        for j in range(d):
            scratch[j] = abs(w[j])
            total += scratch[j]
        if total > radius:
            u = np.sort(scratch)[::-1]
            cum = 0.0
            theta = 0.0
            for j in range(d):
                cum += u[j]
                t = (cum - radius) / (j + 1.0)
                if u[j] > t:
                    theta = t
            for j in range(d):
                aj = abs(w[j]) - theta
                w[j] = math.copysign(aj, w[j]) if aj > 0 else 0.0


@njit(**_JIT)
def _apply_step(w, g, eta, denom, l2, l1, proj_kind, proj_radius, scratch, w_sum):
    """w <- Pi_C(prox_{eta l1}(w - eta (g / denom + l2 w))); accumulate w into w_sum."""
    for j in range(w.shape[0]):
        v = w[j] - eta * (g[j] / denom + l2 * w[j])
        if l1 > 0.0:
            shrink = abs(v) - eta * l1
            v = math.copysign(shrink, v) if shrink > 0.0 else 0.0
        w[j] = v
    if proj_kind != 0:
        _project(w, proj_kind, proj_radius, scratch)
    for j in range(w.shape[0]):
        w_sum[j] += w[j]


@njit(**_JIT)
def sample_batches(n, counts, uniforms, rows, marker):
    """Uniform subsets without replacement, one per step, by Floyd's algorithm.

    Step k gets ``counts[k]`` distinct rows of ``range(n)`` written to ``rows[k, :counts[k]]``,
    using the uniforms ``uniforms[k, :counts[k]]`` in [0, 1). ``marker`` is a zeroed
    int8 array of length n, left zeroed.
    """
    for k in range(counts.shape[0]):
        m = counts[k]
        for j in range(m):
            top = n - m + j  # Floyd: draw t in [0, top], take top if t was taken
            t = min(int(uniforms[k, j] * (top + 1)), top)
            if marker[t]:
                t = top
            marker[t] = 1
            rows[k, j] = t
        for j in range(m):
            marker[rows[k, j]] = 0


@njit(**_JIT)
def _slopes_and_noise(code, param, y, weights, rows, k, m, slopes, noise, g):
    """Batch k's middle sweep: ``slopes[:m]`` (the margins) become s_i phi'(margin, y) (s
    the sample weights in [0, 1]; an empty ``weights``: unweighted), and the gradient sum
    ``g`` starts from the step's noise ``noise[k]``."""
    weighted = weights.shape[0] > 0
    for b in range(m):
        i = rows[k, b]
        slope = _dphi(code, param, slopes[b], y[i])
        slopes[b] = slope * weights[i] if weighted else slope
    for j in range(g.shape[0]):
        g[j] = noise[k, j]


@njit(**_JIT)
def sgd_steps_dense(X, y, weights, w, rows, counts, noise, etas, denom, code, param, l2, l1, proj_kind, proj_radius,
                    w_sum):
    """Run ``len(etas)`` noisy (proximal, projected) SGD steps in place on ``w``.

    Step k: g = (sum_{i in batch} s_i phi'(<w, x_i>, y_i) x_i + noise[k]) / denom (s_i the
    sample weights, or 1 when ``weights`` is empty);
    w <- Pi_C(prox_{eta l1}(w - eta_k (g + l2 w))). ``w_sum`` accumulates the iterates.
    The batch is processed in three sweeps (all margins, all phi', then the scatter):
    the independent row loads of a sweep overlap in the memory system, which a
    row-at-a-time loop serializes (about 1.3x faster on ADULT and BANK).
    """
    d = w.shape[0]
    g = np.empty(d)
    scratch = np.empty(d)
    slopes = np.empty(rows.shape[1])
    for k in range(etas.shape[0]):
        m = counts[k]
        for b in range(m):
            i = rows[k, b]
            a = 0.0
            for j in range(d):
                a += X[i, j] * w[j]
            slopes[b] = a
        _slopes_and_noise(code, param, y, weights, rows, k, m, slopes, noise, g)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                i = rows[k, b]
                for j in range(d):
                    g[j] += s * X[i, j]
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


@njit(**_JIT)
def sgd_steps_csr(indptr, indices, data, y, weights, w, rows, counts, noise, etas, denom, code, param, l2, l1, proj_kind,
                  proj_radius, w_sum):
    """:func:`sgd_steps_dense` for a CSR matrix given by (indptr, indices, data)."""
    d = w.shape[0]
    g = np.empty(d)
    scratch = np.empty(d)
    width = rows.shape[1]
    slopes = np.empty(width)
    starts = np.empty(width, dtype=np.int64)
    stops = np.empty(width, dtype=np.int64)
    for k in range(etas.shape[0]):
        m = counts[k]
        for b in range(m):
            i = rows[k, b]
            starts[b] = indptr[i]
            stops[b] = indptr[i + 1]
        for b in range(m):
            a = 0.0
            for p in range(starts[b], stops[b]):
                a += data[p] * w[indices[p]]
            slopes[b] = a
        _slopes_and_noise(code, param, y, weights, rows, k, m, slopes, noise, g)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                for p in range(starts[b], stops[b]):
                    g[indices[p]] += s * data[p]
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


@njit(**_JIT)
def _svrg_noise_start(w, w_snap, v_snap, normals, k, noise_ratio, denom, diff_cap, diff_smoothness, g):
    """Step k's start: ``c = min(diff_cap, diff_smoothness ||w - w_snap||)``, the public
    bound on every per-example correction; ``g`` becomes the noise ``normals[k] * r * 2c``
    plus ``denom * v_snap``. Returns c and the noise std."""
    dist2 = 0.0
    for j in range(w.shape[0]):
        diff = w[j] - w_snap[j]
        dist2 += diff * diff
    c = min(diff_cap, diff_smoothness * math.sqrt(dist2))
    scale = noise_ratio * 2.0 * c
    for j in range(w.shape[0]):
        g[j] = normals[k, j] * scale + denom * v_snap[j]
    return c, scale


@njit(**_JIT)
def _svrg_slopes(code, param, y, weights, snap_slopes, rows, k, m, cap, slopes):
    """Batch k's middle sweep: ``slopes[:m]`` (the margins at w) become the slope
    differences ``s_i phi'(margin) - snap_slopes[i]`` (s the sample weights, 1 when
    ``weights`` is empty; ``snap_slopes`` weighted alike), clipped to ``[-cap, cap]``."""
    weighted = weights.shape[0] > 0
    for b in range(m):
        i = rows[k, b]
        slope = _dphi(code, param, slopes[b], y[i])
        if weighted:
            slope *= weights[i]
        slopes[b] = min(max(slope - snap_slopes[i], -cap), cap)


@njit(**_JIT)
def svrg_steps_dense(X, y, weights, w, w_snap, v_snap, snap_slopes, rows, counts, normals, noise_ratio, etas, denom, code,
                     param, l2, l1, proj_kind, proj_radius, w_sum, diff_cap, diff_smoothness, data_norm,
                     noise_scales):
    """Noisy proximal SVRG inner steps (dperm's accountable DP-SVRG variant), in place.

    Step k: ``c = min(diff_cap, diff_smoothness ||w - w_snap||)`` bounds every per-example
    correction ``(phi'(<x_i, w>) - phi'(<x_i, w_snap>)) x_i`` (a public number: w and
    w_snap are post-processing of earlier releases); the released sum of corrections gets
    noise ``normals[k] * noise_ratio * 2c`` (replace-one sensitivity 2c), and
    ``w <- Pi_C(prox(w - eta_k ((sum + noise) / denom + v_snap + l2 w)))``.
    ``snap_slopes[i] = s_i phi'(<x_i, w_snap>, y_i)`` is computed once per epoch (w_snap is
    fixed within it), which halves the work of a step. Each slope difference is clipped
    to ``c / data_norm``: a no-op in exact arithmetic (``|phi'(a) - phi'(b)| <=
    min(2 L_phi, beta_phi |a - b|)``, a weight s_i in [0, 1] only shrinks it, and
    ``||x_i|| <= data_norm``), it makes the
    sensitivity bound hold whatever the rounding of the two slopes (at w = w_snap,
    c = 0 and the corrections are exactly 0, as the zero noise requires).
    ``noise_scales[k]`` records the noise std used at step k.
    """
    d = w.shape[0]
    g = np.empty(d)
    scratch = np.empty(d)
    slopes = np.empty(rows.shape[1])
    for k in range(etas.shape[0]):
        c, noise_scales[k] = _svrg_noise_start(w, w_snap, v_snap, normals, k, noise_ratio, denom, diff_cap,
                                               diff_smoothness, g)
        m = counts[k]
        for b in range(m):  # three sweeps, as in sgd_steps_dense: margins, slopes, scatter
            i = rows[k, b]
            a = 0.0
            for j in range(d):
                a += X[i, j] * w[j]
            slopes[b] = a
        _svrg_slopes(code, param, y, weights, snap_slopes, rows, k, m, c / data_norm, slopes)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                i = rows[k, b]
                for j in range(d):
                    g[j] += s * X[i, j]
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


@njit(**_JIT)
def svrg_steps_csr(indptr, indices, data, y, weights, w, w_snap, v_snap, snap_slopes, rows, counts, normals, noise_ratio,
                   etas, denom, code, param, l2, l1, proj_kind, proj_radius, w_sum, diff_cap, diff_smoothness,
                   data_norm, noise_scales):
    """:func:`svrg_steps_dense` for a CSR matrix given by (indptr, indices, data)."""
    d = w.shape[0]
    g = np.empty(d)
    scratch = np.empty(d)
    width = rows.shape[1]
    slopes = np.empty(width)
    starts = np.empty(width, dtype=np.int64)
    stops = np.empty(width, dtype=np.int64)
    for k in range(etas.shape[0]):
        c, noise_scales[k] = _svrg_noise_start(w, w_snap, v_snap, normals, k, noise_ratio, denom, diff_cap,
                                               diff_smoothness, g)
        m = counts[k]
        for b in range(m):
            i = rows[k, b]
            starts[b] = indptr[i]
            stops[b] = indptr[i + 1]
        for b in range(m):
            a = 0.0
            for p in range(starts[b], stops[b]):
                a += data[p] * w[indices[p]]
            slopes[b] = a
        _svrg_slopes(code, param, y, weights, snap_slopes, rows, k, m, c / data_norm, slopes)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                for p in range(starts[b], stops[b]):
                    g[indices[p]] += s * data[p]
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)
