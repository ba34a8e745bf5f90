"""Exact samplers on the integers, driven by a uniform-integer source.

Every sampler here draws from its target distribution *exactly*: the only primitive is a
uniform integer in ``[0, m)`` (an exact rejection from 16-, 32- or 64-bit words), every probability is a
ratio of integers, and no floating-point number touches a random quantity. This closes the
attack of Mironov (2012, "On significance of the least significant bits for differential
privacy"), in which the low-order bits of floating-point noise reveal the value it was
added to.

Algorithms (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential
Privacy", NeurIPS):

- :func:`bernoulli_exp` - Bernoulli(exp(-gamma)) for rational gamma >= 0 (Algorithm 1);
- :func:`discrete_laplace` - P(y) proportional to exp(-|y|/t) on the integers (Algorithm 2);
- :func:`discrete_gaussian` - P(y) proportional to exp(-y^2/(2 S^2)) (Algorithm 3).

All three are vectorized: the loops run over rounds of rejection, each round one NumPy
operation on the elements still undecided, so a vector of d draws costs O(log d) rounds.
Integers stay within int64 (every uniform range is below 2^62, see ``_MAX_RANGE``).

Randomness sources
------------------
:class:`SecureRandom` reads the operating system's cryptographically secure generator
(``os.urandom``). :class:`GeneratorSource` wraps a seeded NumPy Generator: it is **not**
cryptographically secure and exists so that tests and experiments can replay a draw.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

import numpy as np

__all__ = [
    "UniformSource",
    "SecureRandom",
    "GeneratorSource",
    "bernoulli_exp",
    "geometric_count",
    "discrete_laplace",
    "discrete_gaussian",
    "MAX_DISCRETE_GAUSSIAN_SCALE",
]

# Every uniform range drawn is below this bound, so products of a range and a loop counter
# never overflow int64 and the rejection step of SecureRandom keeps a success rate >= 1/2.
_MAX_RANGE = 2**62
# Scales (in grid units) stay below 2^48 so that U + S V (V < 2^13, see geometric_count),
# q r and 2 S stay below 2^62.
MAX_DISCRETE_GAUSSIAN_SCALE = 2**48


class UniformSource(Protocol):
    """What the samplers need: exact uniform integers."""

    def integers(self, high: np.ndarray) -> np.ndarray:
        """An int64 array, entry i uniform on ``{0, ..., high[i] - 1}``; ``1 <= high < 2^62``."""


class SecureRandom:
    """Uniform integers from the operating system's cryptographically secure generator.

    Bytes come from ``os.urandom`` in blocks of ``buffer_bytes`` (one system call per
    block). A request is served from 16-, 32- or 64-bit words, the narrowest that holds
    its largest range m; a word w is mapped to ``w mod m`` after rejecting the top
    ``2^bits mod m`` words, so every value is exactly uniform. Not reproducible by design:
    use :class:`GeneratorSource` for replayable experiments.
    """

    def __init__(self, buffer_bytes: int = 1 << 16) -> None:
        if buffer_bytes < 8 or buffer_bytes % 8:
            raise ValueError(f"buffer_bytes must be a positive multiple of 8, got {buffer_bytes}")
        self._block = buffer_bytes
        self._bytes = b""
        self._lock = threading.Lock()  # two threads must never read the same bytes

    def _take(self, count: int, dtype) -> np.ndarray:
        size = count * np.dtype(dtype).itemsize
        with self._lock:
            if size > len(self._bytes):
                self._bytes += os.urandom(max(self._block, size - len(self._bytes)))
            chunk, self._bytes = self._bytes[:size], self._bytes[size:]
        return np.frombuffer(chunk, dtype=dtype)

    def integers(self, high: np.ndarray) -> np.ndarray:
        high = np.asarray(high, dtype=np.int64)
        if high.size and (high.min() < 1 or high.max() >= _MAX_RANGE):
            raise ValueError("uniform ranges must lie in [1, 2^62)")
        largest = int(high.max(initial=1))
        dtype = np.uint16 if largest <= 2**15 else np.uint32 if largest <= 2**31 else np.uint64
        flat = high.ravel().astype(dtype)
        out = np.empty(flat.size, dtype=dtype)
        todo = np.arange(flat.size)
        while todo.size:
            m = flat[todo]
            words = self._take(todo.size, dtype)
            # 2^bits mod m, computed without overflow as (2^bits - m) mod m; words at or
            # above 2^bits - (2^bits mod m) are rejected so that w mod m is exactly uniform
            # (at most half of them, as m <= 2^(bits-1)).
            excess = (dtype(0) - m) % m
            keep = (excess == 0) | (words < dtype(0) - excess)
            out[todo[keep]] = words[keep] % m[keep]
            todo = todo[~keep]
        return out.astype(np.int64).reshape(high.shape)

    def bytes(self, count: int) -> bytes:
        """``count`` fresh bytes straight from ``os.urandom`` (the compiled samplers'
        source, :mod:`.fast_sampling`)."""
        return os.urandom(count)


class GeneratorSource:
    """Uniform integers from a NumPy Generator (seeded: reproducible, NOT secure).

    For tests and reproducible experiments only; a release drawn from it is exactly
    distributed but predictable by anyone who knows the seed.
    """

    def __init__(self, rng: np.random.Generator | int | None = None) -> None:
        self._rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def integers(self, high: np.ndarray) -> np.ndarray:
        high = np.asarray(high, dtype=np.int64)
        if high.size and (high.min() < 1 or high.max() >= _MAX_RANGE):
            raise ValueError("uniform ranges must lie in [1, 2^62)")
        return self._rng.integers(0, high, dtype=np.int64)

    def bytes(self, count: int) -> bytes:
        """``count`` bytes from the seeded Generator (reproducible, not secure)."""
        return self._rng.bytes(count)


def _trials(source: UniformSource, factors, idx: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Bernoulli(prod_i num_i/den_i / K) for the elements ``idx`` (rows) and each K in
    ``ks`` (columns), every entry an independent trial."""
    n = idx.size
    shape = (n, ks.size)
    if factors:
        largest = int(ks[-1])
        for _, den in factors:
            largest *= int(den[idx].max(initial=1))
        if largest < _MAX_RANGE:  # one draw below prod(den_i) K: no product overflows
            num = np.prod([num[idx] for num, _ in factors], axis=0)
            den = np.prod([den[idx] for _, den in factors], axis=0)
            return source.integers(den[:, None] * ks[None, :]) < num[:, None]
    trial = np.ones(shape, dtype=bool) if ks[-1] == 1 else source.integers(np.broadcast_to(ks, shape)) == 0
    for num, den in factors:
        trial &= source.integers(np.broadcast_to(den[idx][:, None], shape)) < num[idx][:, None]
    return trial


def _bernoulli_exp_unit(source: UniformSource, factors: list[tuple[np.ndarray, np.ndarray]], size: int,
                        block: int = 3, start: int = 1) -> np.ndarray:
    """Bernoulli(exp(-gamma)) with gamma = prod_i num_i/den_i in [0, 1] (CKS Algorithm 1).

    K = 1; while Bernoulli(gamma / K): K += 1; return K odd. P(K odd) = exp(-gamma).
    Bernoulli(gamma / K) is one uniform draw below prod(den_i) K when that is below 2^62,
    else the AND of independent Bernoulli(num_i/den_i) and Bernoulli(1/K), so no range
    exceeds 2^62 whatever K reaches. After the first trial, the trials for ``block`` successive values
    of K are drawn at once and the first failure read off (draws past it are independent
    and unused), which keeps the loop to a round or two. An empty ``factors`` means
    gamma = 1. ``start > 1`` resumes the loop at K = start for elements whose trials
    K < start all succeeded.
    """
    result = np.ones(size, dtype=bool)
    idx = np.arange(size)
    if factors and start == 1:
        # gamma = 0 (a zero numerator): exp(0) = 1, nothing to draw
        idx = idx[np.logical_and.reduce([num > 0 for num, _ in factors])]
        first = _trials(source, factors, idx, np.ones(1, dtype=np.int64))[:, 0]
        idx = idx[first]  # the others stopped at K = 1: True
    k0 = max(start, 2)
    while idx.size:
        ks = np.arange(k0, k0 + block, dtype=np.int64)
        failed = ~_trials(source, factors, idx, ks)
        stopped = failed.any(axis=1)
        k_stop = k0 + failed.argmax(axis=1)
        result[idx[stopped]] = k_stop[stopped] % 2 == 1
        idx = idx[~stopped]
        k0 += block
    return result


# Algorithm 1 at gamma = 1 draws Bernoulli(1/K) for K = 2, 3, ...: the trials K = 2..7 of
# one Bernoulli(exp(-1)) are the mixed-radix digits of one uniform integer below
# 2*3*4*5*6*7 = 5040 (a bijection, so the digits are independent and uniform), and four
# such blocks come from one uniform integer below 5040^4 < 2^50.
_RADIX = np.arange(2, 8, dtype=np.int64)
_RADIX_RANGE = 5040
_RUN = 4


def _exp_minus_one_runs(source: UniformSource, size: int) -> np.ndarray:
    """Four iid Bernoulli(exp(-1)) trials per element, as an array (size, 4)."""
    words = source.integers(np.full(size, _RADIX_RANGE**_RUN, dtype=np.int64))
    digits = np.empty((size, _RUN), dtype=np.int64)
    for column in range(_RUN):
        words, digits[:, column] = np.divmod(words, _RADIX_RANGE)
    digits = digits.ravel()
    stop = np.zeros(digits.size, dtype=np.int64)  # the K at which the loop stopped; 0: not yet
    for k in _RADIX:
        digits, remainder = np.divmod(digits, k)
        stop[(stop == 0) & (remainder != 0)] = k  # Bernoulli(1/K) failed
    result = stop % 2 == 1
    pending = np.flatnonzero(stop == 0)  # K = 2..7 all succeeded (probability 1/5040)
    result[pending] = _bernoulli_exp_unit(source, [], pending.size, start=8)
    return result.reshape(size, _RUN)


def _exp_minus_one_all(source: UniformSource, times: np.ndarray) -> np.ndarray:
    """True where ``times[i]`` iid Bernoulli(exp(-1)) trials all succeed (probability
    exp(-times[i])); trials are drawn a block at a time and read up to the first failure."""
    ok = np.ones(times.size, dtype=bool)
    remaining = times.copy()
    idx = np.flatnonzero(remaining > 0)
    while idx.size:
        runs = _exp_minus_one_runs(source, idx.size)
        needed = np.minimum(remaining[idx], runs.shape[1])
        # element i fails if one of its first needed[i] trials fails
        columns = np.arange(runs.shape[1])
        failed = (~runs & (columns < needed[:, None])).any(axis=1)
        ok[idx[failed]] = False
        remaining[idx] -= needed
        idx = idx[~failed & (remaining[idx] > 0)]
    return ok


# Counts of successive exp(-1) successes at or above this abort the draw (probability
# exp(-2^13) < 10^-3557 per draw) rather than risk an int64 overflow: see geometric_count.
_MAX_GEOMETRIC = 2**13


def geometric_count(source: UniformSource, size: int) -> np.ndarray:
    """The number G of successes before the first failure of iid Bernoulli(exp(-1)) trials:
    P(G = g) = (1 - e^-1) e^-g, drawn trial by trial (exact).

    A draw with G >= 2^13 (probability exp(-8192) each) raises ``OverflowError`` instead
    of returning: the event depends on the noise alone, never on data, and adds at most
    that probability to a release's delta.
    """
    count = np.zeros(size, dtype=np.int64)
    idx = np.arange(size)
    while idx.size:
        runs = _exp_minus_one_runs(source, idx.size)
        failed = ~runs
        stopped = failed.any(axis=1)
        count[idx] += np.where(stopped, failed.argmax(axis=1), runs.shape[1])
        idx = idx[~stopped]
        if count.max(initial=0) >= _MAX_GEOMETRIC:
            raise OverflowError("a geometric draw reached 2^13 (probability below 1e-3557); draw again")
    return count


def bernoulli_exp(source: UniformSource, num, den) -> np.ndarray:
    """Bernoulli(exp(-num/den)) elementwise, for integer arrays num >= 0, 1 <= den < 2^62.

    exp(-gamma) = exp(-1)^floor(gamma) exp(-frac(gamma)): floor(gamma) Bernoulli(exp(-1))
    trials (stopping at the first failure), then Algorithm 1 of Canonne, Kamath & Steinke
    (2020) on the fractional part.
    """
    num = np.atleast_1d(np.asarray(num, dtype=np.int64))
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape).ravel()
    num = num.ravel()
    if num.size and (num.min() < 0 or den.min() < 1):
        raise ValueError("bernoulli_exp needs num >= 0 and den >= 1")
    whole, frac = np.divmod(num, den)
    out = _exp_minus_one_all(source, whole)
    idx = np.flatnonzero(out)
    out[idx] = _bernoulli_exp_unit(source, [(frac[idx], den[idx])], idx.size)
    return out


def _discrete_laplace_proposals(source: UniformSource, scale: int, count: int) -> np.ndarray:
    """The draws kept out of ``count`` proposals of Algorithm 2 (about 63% of them)."""
    t = np.full(count, scale, dtype=np.int64)
    u = source.integers(t)
    u = u[bernoulli_exp(source, u, t)]
    x = u + scale * geometric_count(source, u.size)
    negative = source.integers(np.full(u.size, 2, dtype=np.int64)) == 1
    return np.where(negative, -x, x)[~(negative & (x == 0))]


def _fill(size: int, proposals, acceptance: float) -> np.ndarray:
    """``size`` values from successive batches of iid accepted draws, each batch sized so
    that one batch almost always suffices (rejection keeps accepted draws iid, so taking
    the first ``size`` of them is exact)."""
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        batch = proposals(int(need / acceptance * 1.15) + 16)[:need]
        out[filled:filled + batch.size] = batch
        filled += batch.size
    return out


def discrete_laplace(source: UniformSource, scale: int, size: int) -> np.ndarray:
    """``size`` iid draws of the discrete Laplace law P(y) proportional to exp(-|y| / scale).

    Canonne, Kamath & Steinke (2020), Algorithm 2 with an integer scale t: U uniform on
    {0..t-1}, kept with probability exp(-U/t); X = U + t V with V geometric
    (P(V = v) = (1 - e^-1) e^-v); a random sign, rejecting "-0" so that 0 is not counted
    twice. Exact for every integer ``scale >= 1``.
    """
    scale = int(scale)
    if not 1 <= scale < 2**48:
        raise ValueError(f"scale must be an integer in [1, 2^48), got {scale}")
    return _fill(size, lambda count: _discrete_laplace_proposals(source, scale, count), 0.6)


def _discrete_gaussian_proposals(source: UniformSource, scale: int, count: int) -> np.ndarray:
    y = _discrete_laplace_proposals(source, scale, count)
    m = y.size
    c = np.abs(np.abs(y) - scale)
    q, r = np.divmod(c, scale)
    # q <= 2^13 + 1 (larger geometric draws abort), so q^2 and q r < 2^62.
    q2, qr = q * q, q * r
    keep = _exp_minus_one_all(source, q2 // 2 + qr // scale)
    # the three fractional exponents, each in [0, 1), through one call of Algorithm 1:
    # (q^2 mod 2)/2, (q r mod S)/S and r^2/(2 S^2) = (r/S)(r/(2S))
    one = np.ones(m, dtype=np.int64)
    s = np.full(m, scale, dtype=np.int64)
    num1 = np.concatenate([q2 % 2, qr % scale, r])
    den1 = np.concatenate([2 * one, s, s])
    num2 = np.concatenate([one, one, r])
    den2 = np.concatenate([one, one, 2 * s])
    fractions = _bernoulli_exp_unit(source, [(num1, den1), (num2, den2)], 3 * m).reshape(3, m)
    return y[keep & fractions.all(axis=0)]


def discrete_gaussian(source: UniformSource, scale: int, size: int) -> np.ndarray:
    """``size`` iid draws of the discrete Gaussian N_Z(0, S^2), P(y) proportional to
    exp(-y^2 / (2 S^2)) on the integers, for an integer S = ``scale``.

    Canonne, Kamath & Steinke (2020), Algorithm 3 with t = S: draw Y from the discrete
    Laplace of scale S and keep it with probability exp(-(|Y| - S)^2 / (2 S^2)); the kept
    law is exactly N_Z(0, S^2) (any t > 0 is exact; t = S accepts about 76% of
    proposals). Writing c = ||Y| - S| = q S + r (0 <= r < S), the exponent is
    q^2/2 + q r / S + r^2 / (2 S^2): its integer part is a run of Bernoulli(exp(-1))
    trials, its three fractional parts go through Algorithm 1 with small integer ranges
    (r^2 / (2 S^2 K) as Bernoulli(r/S) AND Bernoulli(r/(2S)) AND Bernoulli(1/K)).
    """
    scale = int(scale)
    if not 1 <= scale < MAX_DISCRETE_GAUSSIAN_SCALE:
        raise ValueError(f"scale must be an integer in [1, 2^48), got {scale}")
    return _fill(size, lambda count: _discrete_gaussian_proposals(source, scale, count), 0.45)
