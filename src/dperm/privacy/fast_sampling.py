"""Compiled exact samplers: the discrete Laplace and discrete Gaussian laws of
:mod:`.exact_sampling`, one coordinate at a time in a numba kernel that reads a buffer
of random 32-bit words.

Exactness
---------
The kernels use integer arithmetic only; no floating-point number touches a random
quantity or a decision. The one primitive is a uniform integer below m (1 <= m < 2^62):
for m <= 2^31 one 32-bit word w is drawn and rejected while ``w >= 2^32 - (2^32 mod m)``;
otherwise two words make a 64-bit w, rejected while ``w >= 2^64 - (2^64 mod m)``; the
value is ``w mod m``. Every kept residue class has the same number of words, so the value
is exactly uniform when the words are. On top of it (Canonne, Kamath & Steinke 2020,
"The Discrete Gaussian for Differential Privacy", NeurIPS):

- Bernoulli(p/q) is ``uniform(q) < p``;
- Bernoulli(exp(-gamma)) for gamma = (n1/d1)(n2/d2) in [0, 1] is Algorithm 1: K = 1;
  while Bernoulli(gamma / K): K += 1; return K odd (P = sum_k (-gamma)^k / k! over the
  stopping rule = exp(-gamma)). Bernoulli(gamma / K) is one draw ``uniform(d1 d2 K) <
  n1 n2`` when d1 d2 K < 2^62, else the AND of independent Bernoulli(n1/d1),
  Bernoulli(n2/d2), Bernoulli(1/K) (whose probability is the same product);
- Bernoulli(exp(-j)) for an integer j is j successive Bernoulli(exp(-1)) trials, all
  succeeding (stopping at the first failure);
- the discrete Laplace law P(y) ~ exp(-|y|/t), integer t, is Algorithm 2: U uniform
  below t, kept with probability exp(-U/t); V the number of Bernoulli(exp(-1)) successes
  before the first failure; X = U + t V; a fair sign, rejecting "-0";
- the discrete Gaussian N_Z(0, S^2), integer S, is Algorithm 3 with t = S: Y discrete
  Laplace of scale S, kept with probability exp(-(|Y| - S)^2 / (2 S^2)), which is the
  target-over-proposal ratio exp(-y^2/(2S^2) + |y|/S) divided by its maximum e^(1/2): the
  kept law is exactly N_Z(0, S^2). With c = ||Y| - S| = q S + r (0 <= r < S) the exponent
  is ``q^2 // 2 + q r // S`` (integer part: Bernoulli(exp(-1)) trials) plus
  ``(q^2 mod 2)/2``, ``(q r mod S)/S`` and ``(r/S)(r/(2S))``, each in [0, 1) (Algorithm 1);
  the product of the four independent Bernoulli trials has probability exp(-c^2/(2S^2)).

A geometric count V reaching 2^13 (probability exp(-8192) < 1e-3557 per proposal) raises
``OverflowError`` rather than risk an int64 overflow, as :mod:`.exact_sampling` does; the
event depends on the noise only and adds at most its probability to delta.

The word stream
---------------
A draw is a deterministic function of an unbounded stream of words. The kernel gets a
finite buffer; if the buffer runs out in the middle of a draw, the kernel stops, the
draw is discarded together with its position, and the wrapper extends the buffer (the
unread words from the start of that draw, followed by fresh words) and runs the draw again
from its start. It then reads the same words as before followed by new ones: every draw
is exactly the one the infinite stream would give, whatever the buffer size (a test
checks that outputs do not depend on it). Discarding would be biased (long draws would be
discarded more often); replaying is not.

Words come from ``source.bytes(n)``: :class:`~dperm.privacy.exact_sampling.SecureRandom`
reads ``os.urandom`` (cryptographically secure); a seeded
:class:`~dperm.privacy.exact_sampling.GeneratorSource` is for reproducible tests only.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["fast_discrete_gaussian", "fast_discrete_laplace", "WORDS_PER_DRAW"]

_KERNELS = ("_word", "_uniform", "_bernoulli_exp_unit", "_bernoulli_exp_whole", "_discrete_laplace",
            "_discrete_gaussian", "_fill")
_compiled = False
_compile_lock = threading.Lock()


def _njit(function):
    """Marks a kernel; :func:`_compile` compiles every marked one at the first draw, so that
    importing this module (every secure release does) does not import numba (about 0.2 s)."""
    return function


def _compile() -> None:
    """Replace the kernels by their numba dispatchers (cached on disk), callees first, so
    that each compiled kernel calls compiled ones."""
    global _compiled
    if _compiled:
        return
    with _compile_lock:
        if _compiled:
            return
        from numba import njit

        for name in _KERNELS:
            globals()[name] = njit(cache=True)(globals()[name])
        _compiled = True
_LIMIT = 2**62 - 1  # every uniform range is at most this
_MAX_GEOMETRIC = 2**13
# state: [position in the buffer, buffer exhausted, geometric overflow]
_POS, _EMPTY, _OVERFLOW = 0, 1, 2
# the first buffer holds this many words per requested draw: the discrete Gaussian reads
# about 16 on average, so one extension is rarely needed and few fresh bytes are wasted
WORDS_PER_DRAW = 20


@_njit
def _word(buf, st):
    p = st[_POS]
    if p >= buf.size:
        st[_EMPTY] = 1
        return np.uint64(0)
    st[_POS] = p + 1
    return np.uint64(buf[p])


@_njit
def _uniform(buf, st, m):
    """Uniform on {0, ..., m - 1}, 1 <= m < 2^62 (int64), by exact rejection."""
    mu = np.uint64(m)
    if m <= 2**31:
        limit = (np.uint64(4294967296) // mu) * mu  # the largest multiple of m <= 2^32
        while True:
            w = _word(buf, st)
            if st[_EMPTY]:
                return np.int64(0)
            if w < limit:
                return np.int64(w % mu)
    excess = (np.uint64(0) - mu) % mu  # 2^64 mod m, computed with wrap-around
    bound = np.uint64(0) - excess  # 2^64 - (2^64 mod m) (0 means: keep every word)
    while True:
        hi = _word(buf, st)
        lo = _word(buf, st)
        if st[_EMPTY]:
            return np.int64(0)
        w = (hi << np.uint64(32)) | lo
        if excess == np.uint64(0) or w < bound:
            return np.int64(w % mu)


@_njit
def _bernoulli_exp_unit(buf, st, n1, d1, n2, d2):
    """Bernoulli(exp(-(n1/d1)(n2/d2))) for 0 <= n1 <= d1, 0 <= n2 <= d2 (Algorithm 1)."""
    if n1 == 0 or n2 == 0:
        return True
    k = np.int64(1)
    while True:
        if d1 <= _LIMIT // d2 // k:  # d1 d2 k < 2^62: one draw
            trial = _uniform(buf, st, d1 * d2 * k) < n1 * n2
        else:
            trial = _uniform(buf, st, d1) < n1
            if trial and n2 < d2:
                trial = _uniform(buf, st, d2) < n2
            if trial and k > 1:
                trial = _uniform(buf, st, k) == 0
        if st[_EMPTY]:
            return False
        if not trial:
            return k % 2 == 1
        k += 1


@_njit
def _bernoulli_exp_whole(buf, st, j):
    """Bernoulli(exp(-j)) for an integer j >= 0: j Bernoulli(exp(-1)) trials all succeed."""
    for _ in range(j):
        if not _bernoulli_exp_unit(buf, st, 1, 1, 1, 1):
            return False
    return True


@_njit
def _discrete_laplace(buf, st, t):
    """One draw of P(y) ~ exp(-|y|/t), integer t >= 1 (Algorithm 2); check ``st`` after."""
    while True:
        u = _uniform(buf, st, t)
        if st[_EMPTY]:
            return np.int64(0)
        if not _bernoulli_exp_unit(buf, st, u, t, 1, 1):
            if st[_EMPTY]:
                return np.int64(0)
            continue
        v = np.int64(0)
        while _bernoulli_exp_unit(buf, st, 1, 1, 1, 1):
            v += 1
            if v >= _MAX_GEOMETRIC:
                st[_OVERFLOW] = 1
                return np.int64(0)
        if st[_EMPTY]:
            return np.int64(0)
        x = u + t * v
        negative = _uniform(buf, st, 2) == 1
        if st[_EMPTY]:
            return np.int64(0)
        if negative and x == 0:
            continue
        return -x if negative else x


@_njit
def _discrete_gaussian(buf, st, s):
    """One draw of N_Z(0, s^2), integer s >= 1 (Algorithm 3 with t = s)."""
    while True:
        y = _discrete_laplace(buf, st, s)
        if st[_EMPTY] or st[_OVERFLOW]:
            return np.int64(0)
        c = abs(abs(y) - s)
        q = c // s
        r = c - q * s
        q2 = q * q  # q <= 2^13 + 1: q^2, q r < 2^62
        qr = q * r
        keep = (_bernoulli_exp_whole(buf, st, q2 // 2 + qr // s)
                and _bernoulli_exp_unit(buf, st, q2 % 2, 2, 1, 1)
                and _bernoulli_exp_unit(buf, st, qr % s, s, 1, 1)
                and _bernoulli_exp_unit(buf, st, r, s, r, 2 * s))
        if st[_EMPTY]:
            return np.int64(0)
        if keep:
            return y


@_njit
def _fill(buf, st, scale, out, start, gaussian):
    """Draws into ``out[start:]`` until done or the buffer runs out mid-draw; returns the
    index of the first draw not made (its start is left in ``st[_POS]``)."""
    i = start
    while i < out.size:
        begin = st[_POS]
        value = _discrete_gaussian(buf, st, scale) if gaussian else _discrete_laplace(buf, st, scale)
        if st[_OVERFLOW]:
            return i
        if st[_EMPTY]:
            st[_POS] = begin  # replay this draw from its first word on a longer buffer
            return i
        out[i] = value
        i += 1
    return i


def _words(source, count: int) -> np.ndarray:
    # a writable copy: the kernel then has one compiled signature (a read-only buffer
    # from ``bytes`` and a concatenated one would need two)
    return np.frombuffer(bytearray(source.bytes(4 * count)), dtype=np.uint32)


def _draw(source, scale: int, size: int, gaussian: bool, first_words: int | None) -> np.ndarray:
    size = int(size)
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    out = np.empty(size, dtype=np.int64)
    if size == 0:
        return out
    _compile()
    buf = _words(source, first_words if first_words is not None else WORDS_PER_DRAW * size + 64)
    st = np.zeros(3, dtype=np.int64)
    done = 0
    while True:
        done = _fill(buf, st, np.int64(scale), out, done, gaussian)
        if st[_OVERFLOW]:
            raise OverflowError("a geometric draw reached 2^13 (probability below 1e-3557); draw again")
        if done == size:
            return out
        fresh = _words(source, max(buf.size, WORDS_PER_DRAW * (size - done) + 64))
        buf = np.concatenate([buf[st[_POS]:], fresh])
        st[:] = 0


def fast_discrete_gaussian(source, scale: int, size: int, *, first_words: int | None = None) -> np.ndarray:
    """``size`` iid draws of N_Z(0, S^2), S = ``scale`` an integer in [1, 2^48), exactly.

    ``source.bytes(n)`` supplies the random bytes (:class:`SecureRandom`: ``os.urandom``).
    Same law as :func:`dperm.privacy.exact_sampling.discrete_gaussian` (module docstring),
    compiled: about 0.3 us per draw against several us for the vectorized NumPy sampler.
    ``first_words`` sets the first buffer's size (tests: the output does not depend on it).
    """
    scale = int(scale)
    if not 1 <= scale < 2**48:
        raise ValueError(f"scale must be an integer in [1, 2^48), got {scale}")
    return _draw(source, scale, size, True, first_words)


def fast_discrete_laplace(source, scale: int, size: int, *, first_words: int | None = None) -> np.ndarray:
    """``size`` iid draws of P(y) ~ exp(-|y| / t), t = ``scale`` an integer in [1, 2^48),
    exactly (Algorithm 2 of Canonne, Kamath & Steinke 2020; module docstring)."""
    scale = int(scale)
    if not 1 <= scale < 2**48:
        raise ValueError(f"scale must be an integer in [1, 2^48), got {scale}")
    return _draw(source, scale, size, False, first_words)


# Below this many draws a release takes the NumPy reference sampler of
# :mod:`dperm.privacy.exact_sampling` (the same law, several microseconds a draw): loading
# the compiled kernel from numba's cache costs about a quarter of a second a process, more
# than a few dozen draws take, and most full-batch fits release one short vector.
SMALL_DRAWS = 256


def discrete_gaussian_draws(source, scale: int, size: int) -> np.ndarray:
    """``size`` iid draws of N_Z(0, S^2), exactly: the NumPy reference sampler for at most
    :data:`SMALL_DRAWS` draws, the compiled one beyond (one law, two implementations,
    checked against each other in ``tests/test_fast_sampling.py``)."""
    if int(size) <= SMALL_DRAWS:
        from .exact_sampling import discrete_gaussian

        return discrete_gaussian(source, int(scale), int(size))
    return fast_discrete_gaussian(source, scale, size)


def discrete_laplace_draws(source, scale: int, size: int) -> np.ndarray:
    """``size`` iid draws of P(y) ~ exp(-|y| / t), exactly (see :func:`discrete_gaussian_draws`)."""
    if int(size) <= SMALL_DRAWS:
        from .exact_sampling import discrete_laplace

        return discrete_laplace(source, int(scale), int(size))
    return fast_discrete_laplace(source, scale, size)
