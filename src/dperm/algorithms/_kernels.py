"""Compiled (numba) inner loops for per-example stochastic methods.

The Python driver draws everything random from the caller's NumPy ``Generator`` in
blocks (uniforms for batch selection, Gaussian noise), so runs are bit-for-bit
reproducible and the noise stream has the Generator's full state (never a small seed
inside the kernel); the kernel only does arithmetic on what it is given.

Every kernel compiles with ``cache=True`` (the machine code is kept next to this file, or
under ``NUMBA_CACHE_DIR``); :func:`dperm._warmup.warm_all` compiles the signatures the
algorithms use, so a fresh process loads them from disk instead of compiling them
(``dperm warmup``). The kernels know nothing of the algorithms that call them.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

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
from ._codes import PROJ_BOX, PROJ_L1, PROJ_L2, PROJ_NONE  # noqa: F401  (the kernels' projection codes)

__all__ = ["loss_code", "weights_of", "sample_batches", "sgd_steps_dense", "sgd_steps_csr", "sgd_steps_csr_lazy",
           "lazy_normals_needed", "PROJ_NONE", "PROJ_L2", "PROJ_L1", "PROJ_BOX"]

# Reassociation and contraction let LLVM vectorize the dot products and axpys (about 1.5x
# on dense rows); NaN/inf semantics are kept (no "nnan"/"ninf"), and the noise is drawn
# by NumPy outside, so no flag touches how the privacy noise is generated.
_JIT = dict(cache=True, fastmath={"reassoc", "contract", "arcp", "nsz"}, error_model="numpy")


# Rows fetched ahead of the one being read: a batch's rows are random rows of X, and a
# row-at-a-time loop waits for each one from memory; hinting the row 16 places ahead keeps
# about as many loads in flight as a core can track (measured about 2x faster at n = 1e6,
# d = 21; 8 ahead gained less, 32 no more).
_AHEAD = 16


@intrinsic
def _prefetch(typingctx, array, index):
    """Hint the CPU to load ``array[index]`` (1-d array) into its caches; no effect on results."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        index_value = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [index_value], wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]), "llvm.prefetch.p0i8")
        # read access, high temporal locality, data cache
        builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(**_JIT)
def _prefetch_row(flat, start, length):
    """Hint the loads of ``flat[start : start + length]`` (a row of a C-ordered matrix), one
    per 64-byte cache line."""
    step = max(1, 64 // flat.itemsize)
    for o in range(0, length, step):
        _prefetch(flat, start + o)
    _prefetch(flat, start + length - 1)


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
def _slopes(code, param, y, weights, rows, k, m, slopes):
    """Batch k's middle sweep: ``slopes[:m]`` (the margins) become s_i phi'(margin, y) (s
    the sample weights in [0, 1]; an empty ``weights``: unweighted)."""
    weighted = weights.shape[0] > 0
    for b in range(m):
        i = rows[k, b]
        slope = _dphi(code, param, slopes[b], y[i])
        slopes[b] = slope * weights[i] if weighted else slope


@njit(**_JIT)
def _start_sum(noise, k, grid, g):
    """The gradient sum ``g`` of step k starts from the step's noise ``noise[k]``
    (``grid == 0``), or from 0 when the sum is to be rounded before the noise is added."""
    if grid > 0.0:
        g[:] = 0.0
    else:
        for j in range(g.shape[0]):
            g[j] = noise[k, j]


@njit(**_JIT)
def _round_then_add_noise(noise, k, grid, g):
    """With ``grid > 0``: round every coordinate of the batch sum ``g`` to the nearest
    multiple of ``grid`` (ties to even), then add the step's noise ``noise[k]``."""
    if grid > 0.0:
        for j in range(g.shape[0]):
            g[j] = np.rint(g[j] / grid) * grid + noise[k, j]


@njit(**_JIT)
def sgd_steps_dense(X, y, weights, w, rows, counts, noise, etas, denom, code, param, l2, l1, proj_kind, proj_radius,
                    w_sum, grid):
    """Run ``len(etas)`` noisy (proximal, projected) SGD steps in place on ``w``.

    Step k: s = sum_{i in batch} s_i phi'(<w, x_i>, y_i) x_i (s_i the sample weights, or 1
    when ``weights`` is empty), rounded coordinate-wise to the
    nearest multiple of ``grid`` when ``grid > 0`` (0: no rounding);
    g = (s + noise[k]) / denom (``noise`` holds the steps' pre-drawn noise vectors);
    w <- Pi_C(prox_{eta l1}(w - eta_k (g + l2 w))). ``w_sum`` accumulates the iterates.
    The batch is processed in three sweeps (all margins, all phi', then the scatter):
    the independent row loads of a sweep overlap in the memory system, which a
    row-at-a-time loop serializes (about 1.3x faster on ADULT and BANK), and the margin
    sweep prefetches the rows ``_AHEAD`` places ahead (rows of X are random reads).
    """
    d = w.shape[0]
    flat = X.reshape(X.size)
    g = np.empty(d)
    scratch = np.empty(d)
    slopes = np.empty(rows.shape[1])
    for k in range(etas.shape[0]):
        m = counts[k]
        for b in range(min(_AHEAD, m)):
            _prefetch_row(flat, rows[k, b] * d, d)
        for b in range(m):
            if b + _AHEAD < m:
                _prefetch_row(flat, rows[k, b + _AHEAD] * d, d)
            i = rows[k, b]
            a = 0.0
            for j in range(d):
                a += X[i, j] * w[j]
            slopes[b] = a
        _slopes(code, param, y, weights, rows, k, m, slopes)
        _start_sum(noise, k, grid, g)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                i = rows[k, b]
                for j in range(d):
                    g[j] += s * X[i, j]
        _round_then_add_noise(noise, k, grid, g)
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


@njit(**_JIT)
def _row_ranges(indptr, rows, k, m, starts, stops):
    """``starts[b], stops[b]``: the CSR range of batch k's row b (indptr reads prefetched)."""
    for b in range(min(_AHEAD, m)):
        _prefetch(indptr, rows[k, b])
    for b in range(m):
        if b + _AHEAD < m:
            _prefetch(indptr, rows[k, b + _AHEAD])
        i = rows[k, b]
        starts[b] = indptr[i]
        stops[b] = indptr[i + 1]


@njit(**_JIT)
def _csr_margins(indices, data, w, m, starts, stops, slopes):
    """``slopes[b] = <x_b, w>`` for the batch's CSR rows, each row prefetched ``_AHEAD`` ahead."""
    for b in range(min(_AHEAD, m)):
        _prefetch(data, starts[b])
        _prefetch(indices, starts[b])
    for b in range(m):
        if b + _AHEAD < m:
            _prefetch(data, starts[b + _AHEAD])
            _prefetch(indices, starts[b + _AHEAD])
        a = 0.0
        for p in range(starts[b], stops[b]):
            a += data[p] * w[indices[p]]
        slopes[b] = a


@njit(**_JIT)
def sgd_steps_csr(indptr, indices, data, y, weights, w, rows, counts, noise, etas, denom, code, param, l2, l1,
                  proj_kind, proj_radius, w_sum, grid):
    """:func:`sgd_steps_dense` for a CSR matrix given by (indptr, indices, data), with
    dense noise (every coordinate gets its normal at every step): the path for a
    projection, an l1 term or an average iterate (see :func:`sgd_steps_csr_lazy`)."""
    d = w.shape[0]
    g = np.empty(d)
    scratch = np.empty(d)
    width = rows.shape[1]
    slopes = np.empty(width)
    starts = np.empty(width, dtype=np.int64)
    stops = np.empty(width, dtype=np.int64)
    for k in range(etas.shape[0]):
        m = counts[k]
        _row_ranges(indptr, rows, k, m, starts, stops)
        _csr_margins(indices, data, w, m, starts, stops, slopes)
        _slopes(code, param, y, weights, rows, k, m, slopes)
        _start_sum(noise, k, grid, g)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                for p in range(starts[b], stops[b]):
                    g[indices[p]] += s * data[p]
        _round_then_add_noise(noise, k, grid, g)
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


# Lazy noise (sparse data, no projection, no l1 term, last iterate only). Between two reads
# of coordinate j its update is the linear recursion w_j <- a_k w_j - c_k (sigma z_kj) with
# a_k = 1 - eta_k l2, c_k = eta_k / denom and z_kj iid N(0, 1) (the batch sum is 0 there).
# With P_t = a_1 ... a_t (from the segment's origin) and Q_t = sum_{i <= t} c_i^2 / P_i^2,
# k steps from s to t give w_j(t) = (P_t / P_s) w_j(s) + N(0, sigma^2 P_t^2 (Q_t - Q_s)),
# the exact law of the sum of the k Gaussians (docs/performance.md). ``last[j]`` is the step
# w[j] is stored at; ``qlow[j]`` the Q value its not yet drawn noise starts from (Q_{k-1}
# after an update at step k: that step's own noise is drawn with the rest, at the next read).
_TINY = 1e-140  # |P_t| below this starts a new segment (Q sums c^2 / P^2: it must stay finite)


@njit(**_JIT)
def _catch_up(w, j, t, last, qlow, P, Q, sigma, normals, used):
    """Bring w[j] to step t: the deterministic factor P_t / P_last and one normal for all
    the noise since; returns the count of normals used so far."""
    w[j] *= P[t] / P[last[j]]
    var = Q[t] - qlow[j]
    if var > 0.0:
        w[j] += sigma * abs(P[t]) * math.sqrt(var) * normals[used]
        used += 1
    last[j] = t
    qlow[j] = Q[t]
    return used


@njit(**_JIT)
def lazy_normals_needed(indptr, rows, counts, etas, l2, d):
    """An upper bound on the normals :func:`sgd_steps_csr_lazy` draws for this block: one
    per stored entry of every batch row, d per catch-up of every coordinate (the block's
    end, and each time the product of the factors ``1 - eta l2`` would underflow)."""
    total = d
    p = 1.0
    for k in range(etas.shape[0]):
        for b in range(counts[k]):
            i = rows[k, b]
            total += indptr[i + 1] - indptr[i]
        a = 1.0 - etas[k] * l2
        if a == 0.0:
            p = 1.0
        elif abs(p * a) < _TINY:
            total += d
            p = a
        else:
            p *= a
    return total


@njit(**_JIT)
def sgd_steps_csr_lazy(indptr, indices, data, y, weights, w, rows, counts, normals, sigma, etas, denom, code, param, l2,
                       grid):
    """:func:`sgd_steps_csr` without projection, l1 term or average, with lazy noise.

    Same law as the dense path: a coordinate no batch row touches gets its accumulated
    noise (one normal for the whole stretch, of the exact variance of the sum of the
    per-step normals carried through the shrink factors ``1 - eta l2``) when it is next
    read, and every coordinate at the end of the block. ``normals`` holds at least
    :func:`lazy_normals_needed` standard normals; returns how many were used. Work per
    step: the batch's stored entries, not d.
    """
    d = w.shape[0]
    K = etas.shape[0]
    width = rows.shape[1]
    slopes = np.empty(width)
    starts = np.empty(width, dtype=np.int64)
    stops = np.empty(width, dtype=np.int64)
    g = np.zeros(d)
    stamp = np.full(d, -1, dtype=np.int64)
    touched = np.empty(d, dtype=np.int64)
    last = np.zeros(d, dtype=np.int64)
    qlow = np.zeros(d)
    P = np.empty(K + 1)
    Q = np.empty(K + 1)
    P[0], Q[0] = 1.0, 0.0
    used = 0
    for k in range(1, K + 1):
        eta = etas[k - 1]
        a, c = 1.0 - eta * l2, eta / denom
        if a != 0.0 and abs(P[k - 1] * a) < _TINY:  # new segment from step k - 1
            for j in range(d):
                used = _catch_up(w, j, k - 1, last, qlow, P, Q, sigma, normals, used)
            P[k - 1], Q[k - 1] = 1.0, 0.0
            qlow[:] = 0.0
        m = counts[k - 1]
        _row_ranges(indptr, rows, k - 1, m, starts, stops)
        n_touched = 0
        for b in range(m):  # the batch reads w at step k - 1
            for p in range(starts[b], stops[b]):
                j = indices[p]
                if stamp[j] != k:
                    stamp[j] = k
                    touched[n_touched] = j
                    n_touched += 1
                    used = _catch_up(w, j, k - 1, last, qlow, P, Q, sigma, normals, used)
        _csr_margins(indices, data, w, m, starts, stops, slopes)
        _slopes(code, param, y, weights, rows, k - 1, m, slopes)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                for p in range(starts[b], stops[b]):
                    g[indices[p]] += s * data[p]
        if grid > 0.0:
            for t in range(n_touched):
                j = touched[t]
                g[j] = np.rint(g[j] / grid) * grid
        if a == 0.0:
            # w(k) = -c (sum + noise) whatever came before: a new segment at step k where
            # every coordinate holds -c * sum_j and the step's noise, N(0, sigma^2 c^2), pending
            P[k], Q[k] = 1.0, 0.0
            w[:] = 0.0
            last[:] = k
            qlow[:] = -c * c
            for t in range(n_touched):
                j = touched[t]
                w[j] = -c * g[j]
                g[j] = 0.0
            continue
        P[k] = P[k - 1] * a
        Q[k] = Q[k - 1] + (c / P[k]) ** 2
        for t in range(n_touched):
            j = touched[t]
            w[j] = a * w[j] - c * g[j]
            g[j] = 0.0
            last[j] = k
            qlow[j] = Q[k - 1]
    for j in range(d):
        used = _catch_up(w, j, K, last, qlow, P, Q, sigma, normals, used)
    return used


@njit(**_JIT)
def _pow2_ceil(x):
    """The smallest power of two >= x > 0 (exact: frexp and ldexp only)."""
    mantissa, exponent = math.frexp(x)
    return math.ldexp(1.0, exponent - 1) if mantissa == 0.5 else math.ldexp(1.0, exponent)


@njit(**_JIT)
def _svrg_noise_start(w, w_snap, v_snap, normals, k, noise_ratio, denom, diff_cap, diff_smoothness, g, grid_unit):
    """Step k's start: ``c = min(diff_cap, diff_smoothness ||w - w_snap||)``, the public
    bound on every per-example correction; ``g`` becomes the noise ``normals[k] * r * 2c``
    plus ``denom * v_snap``. Returns c and the noise std.

    With ``grid_unit > 0`` (the secure path) c is rounded up to a power of two (the
    corrections are clipped to it, so the bound holds by construction) and ``g`` starts at
    0: the corrections' sum is rounded to the grid ``c grid_unit`` and noised in
    :func:`_svrg_secure_release`, ``normals`` holding exact discrete Gaussian integers."""
    dist2 = 0.0
    for j in range(w.shape[0]):
        diff = w[j] - w_snap[j]
        dist2 += diff * diff
    c = min(diff_cap, diff_smoothness * math.sqrt(dist2))
    if grid_unit > 0.0:
        if c > 0.0:
            c = _pow2_ceil(c)
        for j in range(w.shape[0]):
            g[j] = 0.0
        return c, noise_ratio * 2.0 * c
    scale = noise_ratio * 2.0 * c
    for j in range(w.shape[0]):
        g[j] = normals[k, j] * scale + denom * v_snap[j]
    return c, scale


@njit(**_JIT)
def _svrg_secure_release(g, normals, k, c, grid_unit, denom, v_snap):
    """The secure step release: ``grid (round(sum / grid) + K)`` with ``grid = c grid_unit``
    (a power of two) and K = ``normals[k]`` exact integers, then ``+ denom v_snap``
    (post-processing). At c = 0 the corrections are exactly 0 (w = w~) and nothing is
    released."""
    grid = c * grid_unit
    for j in range(g.shape[0]):
        if grid > 0.0:
            units = min(max(np.rint(g[j] / grid), -4503599627370496.0), 4503599627370496.0)  # |.| <= 2^52
            g[j] = (units + normals[k, j]) * grid + denom * v_snap[j]
        else:
            g[j] = denom * v_snap[j]


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
                     noise_scales, grid_unit):
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
    ``noise_scales[k]`` records the noise std used at step k. ``grid_unit > 0``: the
    secure path (:func:`_svrg_noise_start`, :func:`_svrg_secure_release`); 0: NumPy normals.
    """
    d = w.shape[0]
    flat = X.reshape(X.size)
    g = np.empty(d)
    scratch = np.empty(d)
    slopes = np.empty(rows.shape[1])
    for k in range(etas.shape[0]):
        c, noise_scales[k] = _svrg_noise_start(w, w_snap, v_snap, normals, k, noise_ratio, denom, diff_cap,
                                               diff_smoothness, g, grid_unit)
        m = counts[k]
        for b in range(min(_AHEAD, m)):
            _prefetch_row(flat, rows[k, b] * d, d)
        for b in range(m):  # three sweeps, as in sgd_steps_dense: margins, slopes, scatter
            if b + _AHEAD < m:
                _prefetch_row(flat, rows[k, b + _AHEAD] * d, d)
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
        if grid_unit > 0.0:
            _svrg_secure_release(g, normals, k, c, grid_unit, denom, v_snap)
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)


@njit(**_JIT)
def svrg_steps_csr(indptr, indices, data, y, weights, w, w_snap, v_snap, snap_slopes, rows, counts, normals, noise_ratio,
                   etas, denom, code, param, l2, l1, proj_kind, proj_radius, w_sum, diff_cap, diff_smoothness,
                   data_norm, noise_scales, grid_unit):
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
                                               diff_smoothness, g, grid_unit)
        m = counts[k]
        _row_ranges(indptr, rows, k, m, starts, stops)
        _csr_margins(indices, data, w, m, starts, stops, slopes)
        _svrg_slopes(code, param, y, weights, snap_slopes, rows, k, m, c / data_norm, slopes)
        for b in range(m):
            s = slopes[b]
            if s != 0.0:
                for p in range(starts[b], stops[b]):
                    g[indices[p]] += s * data[p]
        if grid_unit > 0.0:
            _svrg_secure_release(g, normals, k, c, grid_unit, denom, v_snap)
        _apply_step(w, g, etas[k], denom, l2, l1, proj_kind, proj_radius, scratch, w_sum)
