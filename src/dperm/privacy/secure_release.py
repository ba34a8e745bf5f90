"""Floating-point-safe releases: values rounded to a power-of-two grid plus exact discrete
noise from a cryptographically secure source.

Why
---
Adding ``rng.normal`` to a float leaks through the low-order bits of the sum: the set of
floats a naive sampler can produce near ``q + noise`` depends on ``q``, and Mironov (2012,
"On significance of the least significant bits for differential privacy", CCS) recovers
the unperturbed value from them. Here a release is

    ``g * (round(q / g) + K)``,

with ``g`` a power of two chosen from public quantities only (sensitivity, dimension,
noise scale) and ``K`` an integer vector drawn *exactly* (:mod:`.fast_sampling`, compiled;
:mod:`.exact_sampling`, the vectorized reference), so the
output is a deterministic function of an integer vector whose law is known exactly, and
each coordinate is a float that is exactly ``g`` times an integer (exactly representable
whenever that integer is below 2^53 in absolute value, i.e. for any value below
``2^53 g``; a larger one is rounded by the conversion to float, a post-processing).

Sensitivity after rounding
--------------------------
``round(q/g)`` moves each coordinate by at most g/2, so two neighbouring values move
apart by at most g per coordinate: the L2 sensitivity of the rounded vector is at most
``Delta + g sqrt(d)``. Every grid chosen here satisfies ``g sqrt(d) <= 2^-12 Delta``, so
:func:`secure_sensitivity` ``= Delta (1 + 2^-12)`` (rounded up) bounds it for every
release and can be used to calibrate the noise before the grid is known. Values are first
clipped to ``[-2^52 g, 2^52 g]``, a projection onto a box, which never increases the
distance between two vectors.

Gaussian accounting (the discrete Gaussian is a post-processed continuous Gaussian)
-----------------------------------------------------------------------------------
The release adds ``g K`` with K iid N_Z(0, S^2) (discrete Gaussian, Canonne, Kamath &
Steinke 2020) where ``S^2 >= (sigma/g)^2 + r^2``, r = 3. Claim: every (epsilon, delta)
statement that holds for the *continuous* Gaussian mechanism with std ``sigma`` and L2
sensitivity ``Delta_eff`` (one release, T adaptive releases, subsampled releases: any
accountant, PLD or GDP) holds for the secure releases with epsilon + 2 T tau and
delta e^(T tau), where tau = d log((1 + eta)/(1 - eta)) and
eta = 2 sum_{m>=1} exp(-2 pi^2 r^2 m^2) < 1.5e-77, so T tau < 1e-37 for any d, T < 2^63.

Proof. Poisson summation gives, for every real x,
``sum_j exp(-(j - x)^2 / (2 r^2)) = r sqrt(2 pi) (1 + 2 sum_m exp(-2 pi^2 r^2 m^2) cos(2 pi m x))``,
within a factor ``1 +- eta`` of ``r sqrt(2 pi)``. Let Q be the mechanism that adds
continuous N(0, s1^2), s1^2 = S^2 - r^2, to the integer vector a = round(q/g) and then
rounds each coordinate x randomly to an integer k with probability proportional to
``exp(-(k - x)^2 / (2 r^2))`` (a data-independent post-processing). By the identity,
Q's probability of k is within ``[1/(1+eta), 1/(1-eta)]`` times
``integral phi_s1(x - a) phi_r(k - x) dx = phi_S(k - a)`` per coordinate, and the discrete
Gaussian's is ``phi_S(k - a) S sqrt(2 pi) / theta_S(0)``, within ``[1/(1+eta_S), 1]``
of it with eta_S <= eta. So the two probability mass functions agree within a factor
e^(+-tau) at every point, and so do the joint laws of T adaptive releases (e^(+-T tau))
and their subsampled mixtures. Q is a post-processing of the Gaussian mechanism with std
``g s1 >= sigma`` on ``g a``, whose sensitivity is at most Delta_eff; hence
``P(E) <= e^tau Q(E) <= e^tau (e^eps Q'(E) + delta) <= e^(eps + 2 tau) P'(E) + e^tau delta``.
The discrete Gaussian alone (r = 0) is *not* dominated by the continuous one in general:
at S = 1/2 and sensitivity 1 its total variation distance between neighbours is 0.79,
the continuous Gaussian's 0.68 (``tests/test_secure_noise.py`` checks both facts).
The noise std g S exceeds sigma by at most one grid step plus the smoothing's
(r g)^2 <= 9 * 2^-40 sigma^2 of variance, a relative 1e-6 with g <= 2^-20 sigma; the
rounding costs Delta_eff / Delta <= 1 + 2^-12.

Pure DP
-------
:func:`secure_laplace_release` replaces the L2-Laplace mechanism (density
exp(-eps ||z|| / Delta)) with iid discrete Laplace noise on the grid,
P(k) proportional to exp(-|k| / t): an integer shift v changes the log-probability by at
most ||v||_1 / t <= sqrt(d) ||v||_2 / t, so ``t >= sqrt(d) Delta_eff / (g eps)`` gives
eps-DP exactly. The price of the L1 route is a per-coordinate std of about
``sqrt(2 d) Delta / eps`` against ``sqrt(d + 1) Delta / eps`` for the L2-Laplace
mechanism: a factor sqrt(2 d / (d + 1)), 1.41 for large d.

Exponential mechanism
---------------------
:func:`secure_exponential_mechanism` rounds scores to a grid h (sensitivity Delta + h),
uses a dyadic rational rate not above ``eps h / (2 Delta_eff)`` and samples the discrete
distribution exactly by rejection from uniform proposals.

What this does not cover: timing side channels (the number of rejection rounds depends
on the noise, not on the data, but the time to compute ``q`` itself may depend on data),
and the seeded path (``GeneratorSource`` or NumPy draws) whose output is predictable from
the seed. Sensitivities are those of the floating-point ``q`` as computed, as everywhere in
dperm.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .gaussian_dp import gaussian_dp_epsilon, gaussian_dp_mu
from .exact_sampling import (
    MAX_DISCRETE_GAUSSIAN_SCALE,
    SecureRandom,
    UniformSource,
    _bernoulli_exp_unit,
    bernoulli_exp,
)
from .fast_sampling import discrete_gaussian_draws, discrete_laplace_draws

__all__ = [
    "GRID_SENSITIVITY_BITS",
    "GRID_NOISE_BITS",
    "SMOOTHING",
    "TAU_PER_COORDINATE",
    "TAU_PER_RELEASE",
    "secure_sensitivity",
    "effective_sensitivity",
    "release_grid",
    "SecureGaussianParameters",
    "secure_gaussian_parameters",
    "secure_gaussian_release",
    "secure_gaussian_epsilon",
    "secure_gaussian_sigma",
    "secure_gaussian_guarantee",
    "SecureLaplaceParameters",
    "secure_laplace_parameters",
    "secure_laplace_release",
    "secure_laplace_error_bound",
    "FloorLaplaceParameters",
    "floor_laplace_parameters",
    "floor_laplace_noise",
    "floor_laplace_integers",
    "secure_exponential_mechanism",
]

GRID_SENSITIVITY_BITS = 12  # g sqrt(d) <= 2^-12 Delta: rounding adds at most 0.025% to Delta
GRID_NOISE_BITS = 20  # g <= 2^-20 x the noise scale: the integer S overshoots sigma by <= 1e-6
SMOOTHING = 3  # r of the proof above, in grid units
_ETA = 2.0 * math.exp(-2.0 * math.pi**2 * SMOOTHING**2) / (1.0 - math.exp(-2.0 * math.pi**2 * SMOOTHING**2))
# log((1 + eta)/(1 - eta)) <= 2 eta / (1 - eta); the factor 1.01 covers float rounding.
TAU_PER_COORDINATE = 1.01 * 2.0 * _ETA / (1.0 - _ETA)
TAU_PER_RELEASE = 2.0**63 * TAU_PER_COORDINATE  # any vector that fits in memory
_CLIP = 2.0**52  # |round(q/g)| <= 2^52: exact in float64 and far inside int64


# ----------------------------------------------------------------------------- helpers
def _positive(name: str, value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _dimension(dim) -> int:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    return int(dim)


def _sqrt_up(n: int) -> Fraction:
    """An upper bound on sqrt(n): math.sqrt is correctly rounded, so one ulp up bounds it."""
    root = math.isqrt(n)
    if root * root == n:
        return Fraction(root)
    return Fraction(math.nextafter(math.sqrt(n), math.inf))


def _float_up(x: Fraction) -> float:
    """The smallest float >= x."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def _pow2_floor(x: Fraction) -> float:
    """The largest power of two <= x (x > 0), as a float."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    elif Fraction(2) ** (e + 1) <= x:
        e += 1
    if e < -1000:
        raise ValueError("the sensitivity or noise scale is too small for a power-of-two grid (below 2^-1000)")
    return math.ldexp(1.0, e)


def _as_values(values) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("values must be a non-empty 1-D array")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite (the released quantity is NaN or infinite)")
    return values


def _round_to_grid(values: np.ndarray, grid: float) -> np.ndarray:
    """round(clip(q/g)) as int64; q/g is exact (power-of-two scaling), clipping is a
    projection onto a box (never increases distances), rint moves each coordinate <= 1/2."""
    scaled = np.clip(values / grid, -_CLIP, _CLIP)
    return np.rint(scaled).astype(np.int64)


def _to_float(integers: np.ndarray, grid: float) -> np.ndarray:
    # exact when |integer| <= 2^53; otherwise the conversion rounds, a post-processing
    return integers.astype(np.float64) * grid


def _source(source: UniformSource | None) -> UniformSource:
    return SecureRandom() if source is None else source


# ---------------------------------------------------------------------- sensitivity, grid
def secure_sensitivity(sensitivity: float) -> float:
    """``Delta (1 + 2^-12)`` rounded up: the L2 sensitivity of every grid-rounded release
    of this module, whatever its grid. Calibrate the noise for it.

    Every grid g chosen here satisfies ``g sqrt(d) <= 2^-12 Delta`` and rounding moves two
    neighbouring vectors apart by at most ``g sqrt(d)`` (:func:`effective_sensitivity`).
    """
    sensitivity = _positive("sensitivity", sensitivity)
    return _float_up(Fraction(sensitivity) * (1 + Fraction(1, 2**GRID_SENSITIVITY_BITS)))


def effective_sensitivity(sensitivity: float, dim: int, grid: float) -> float:
    """``Delta + g sqrt(d)`` rounded up: the L2 sensitivity of ``round(q / g)`` times g
    when ``q`` has L2 sensitivity Delta (each coordinate moves by at most g/2)."""
    sensitivity = _positive("sensitivity", sensitivity)
    grid = _positive("grid", grid)
    return _float_up(Fraction(sensitivity) + Fraction(grid) * _sqrt_up(_dimension(dim)))


def release_grid(sensitivity: float, dim: int, scale: float) -> float:
    """The grid g: the largest power of two <= min(Delta / (2^12 sqrt(d)), scale / 2^20).

    Public inputs only (the declared sensitivity, the dimension, the noise scale).
    """
    sensitivity = _positive("sensitivity", sensitivity)
    scale = _positive("scale", scale)
    bound = min(Fraction(sensitivity) / (2**GRID_SENSITIVITY_BITS * _sqrt_up(_dimension(dim))),
                Fraction(scale) / 2**GRID_NOISE_BITS)
    return _pow2_floor(bound)


# ----------------------------------------------------------------------------- Gaussian
@dataclass(frozen=True)
class SecureGaussianParameters:
    """What a secure Gaussian release of ``dim`` coordinates does (public values only).

    ``grid`` g, ``noise_multiple`` S (the noise is g K with K iid N_Z(0, S^2)),
    ``sigma``: the continuous std it is accounted as (<= g sqrt(S^2 - r^2)),
    ``effective_sensitivity``: Delta + g sqrt(d), ``tau``: the slack of the accounting
    (add 2 tau to epsilon and multiply delta by e^tau per release).
    """

    grid: float
    noise_multiple: int
    sigma: float
    effective_sensitivity: float
    tau: float


@functools.lru_cache(maxsize=1024)  # iterative fits ask for the same parameters at every step
def secure_gaussian_parameters(sigma: float, sensitivity: float, dim: int) -> SecureGaussianParameters:
    """Grid and discrete-Gaussian parameter of a release accounted as N(0, sigma^2) noise.

    ``S`` is the smallest integer with ``S^2 >= (sigma/g)^2 + r^2`` (r = 3), so that the
    release is a post-processed Gaussian of std at least sigma (module docstring).
    """
    sigma = _positive("sigma", sigma)
    dim = _dimension(dim)
    grid = release_grid(sensitivity, dim, sigma)
    target = (Fraction(sigma) / Fraction(grid)) ** 2 + SMOOTHING**2
    s = math.isqrt(math.ceil(target))
    if s * s < target:
        s += 1
    if s >= MAX_DISCRETE_GAUSSIAN_SCALE:
        raise ValueError(
            "sigma is too large relative to sensitivity / sqrt(dim) for the secure grid "
            f"(sigma sqrt(dim) / sensitivity must stay below 2^36); got sigma={sigma}, sensitivity={sensitivity}, dim={dim}")
    return SecureGaussianParameters(grid=grid, noise_multiple=s, sigma=sigma,
                                    effective_sensitivity=effective_sensitivity(sensitivity, dim, grid),
                                    tau=dim * TAU_PER_COORDINATE)


def secure_gaussian_release(values, sigma: float, sensitivity: float, *,
                            source: UniformSource | None = None) -> np.ndarray:
    """``values`` plus Gaussian noise of std ``sigma``, safe against floating-point attacks.

    Parameters
    ----------
    values : 1-D float array, the un-noised quantity q(D).
    sigma : the noise std the caller's accountant calibrated, for the L2 sensitivity
        :func:`secure_sensitivity` ``(sensitivity)`` (the rounding's bound).
    sensitivity : the declared replace-one L2 sensitivity Delta of ``values``.
    source : uniform-integer source; ``None`` draws from the operating system's secure
        generator (:class:`SecureRandom`). A seeded :class:`GeneratorSource` makes the
        draw reproducible and predictable: experiments only.

    Returns
    -------
    ``g (round(q/g) + K)``, K iid discrete Gaussian N_Z(0, S^2) with
    ``(g S)^2 >= sigma^2 + (3 g)^2`` (:func:`secure_gaussian_parameters`).

    Privacy
    -------
    Whatever an accountant certifies for the continuous Gaussian mechanism with std sigma
    and sensitivity ``secure_sensitivity(Delta)`` holds with epsilon + 2 tau and
    delta e^tau per release, tau < 1e-57 (:func:`secure_gaussian_guarantee`; proof in the
    module docstring, after Canonne, Kamath & Steinke 2020).
    """
    values = _as_values(values)
    params = secure_gaussian_parameters(sigma, sensitivity, values.size)
    noise = discrete_gaussian_draws(_source(source), params.noise_multiple, values.size)
    return _to_float(_round_to_grid(values, params.grid) + noise, params.grid)


def _steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 1 <= steps < 2**63:
        raise ValueError(f"steps must be an integer in [1, 2^63), got {steps!r}")
    return int(steps)


def secure_gaussian_guarantee(epsilon: float, delta: float, releases: int = 1) -> tuple[float, float]:
    """Turn what an accountant certifies for ``releases`` continuous Gaussian releases
    (std sigma, sensitivity ``secure_sensitivity(Delta)``) into the guarantee of the same
    releases made with :func:`secure_gaussian_release`: ``(eps + 2 T tau, delta e^(T tau))``,
    each rounded up (tau = :data:`TAU_PER_RELEASE`; the sampler's abort probability,
    below 1e-3500, is covered by the rounding of delta)."""
    releases = _steps(releases)
    epsilon = float(epsilon)
    delta = float(delta)
    if not (math.isfinite(epsilon) and epsilon >= 0 and 0 <= delta < 1):
        raise ValueError(f"need a finite epsilon >= 0 and 0 <= delta < 1, got ({epsilon}, {delta})")
    tau = releases * TAU_PER_RELEASE  # < 1e-37: e^tau - 1 is below one ulp of delta
    return (math.nextafter(epsilon + 2.0 * tau, math.inf),
            math.nextafter(delta * (1.0 + 2.0 * tau), math.inf) if delta > 0 else math.nextafter(0.0, 1.0))


def secure_gaussian_epsilon(sigma: float, sensitivity_effective: float, delta: float, steps: int = 1) -> float:
    """Epsilon at ``delta`` of ``steps`` adaptive full-batch secure Gaussian releases.

    ``sensitivity_effective`` is :func:`secure_sensitivity` of the declared Delta.
    Gaussian DP (Dong, Roth & Su 2019) with ``mu = sqrt(T) Delta_eff / sigma`` at
    ``delta e^(-T tau)``, plus ``2 T tau`` (module docstring), rounded up.
    """
    steps = _steps(steps)
    sigma = _positive("sigma", sigma)
    sensitivity_effective = _positive("sensitivity_effective", sensitivity_effective)
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    tau = steps * TAU_PER_RELEASE
    mu = math.sqrt(steps) * sensitivity_effective / sigma
    mu = math.nextafter(mu, math.inf)
    epsilon = gaussian_dp_epsilon(mu, math.nextafter(delta, 0.0))  # delta (1 - tau) >= that
    return math.nextafter(epsilon + 2.0 * tau, math.inf)


def secure_gaussian_sigma(epsilon: float, delta: float, sensitivity_effective: float, steps: int = 1) -> float:
    """The smallest std sigma (to rounding) with which ``steps`` secure Gaussian releases
    are (epsilon, delta)-DP: ``sqrt(T) Delta_eff / mu(eps - 2 T tau, delta e^(-T tau))``.

    Equal, to the last few ulps, to the continuous analytic Gaussian's sigma for the
    effective sensitivity: the discrete noise costs nothing measurable beyond the
    rounding's factor ``1 + 2^-12`` on the sensitivity.
    """
    steps = _steps(steps)
    epsilon = _positive("epsilon", epsilon)
    sensitivity_effective = _positive("sensitivity_effective", sensitivity_effective)
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    tau = steps * TAU_PER_RELEASE
    mu = gaussian_dp_mu(math.nextafter(epsilon - 2.0 * tau, 0.0), math.nextafter(delta, 0.0))
    return math.nextafter(math.sqrt(steps) * sensitivity_effective / mu, math.inf)


# ------------------------------------------------------------------------------ Laplace
@dataclass(frozen=True)
class SecureLaplaceParameters:
    """A secure pure-DP release: noise g L, L iid discrete Laplace P(k) ~ exp(-|k|/t).

    ``epsilon``: what the release certifies (<= the requested one),
    ``effective_sensitivity``: Delta + g sqrt(d) (L2), ``coordinate_std``: the std of one
    noise coordinate, ``g sqrt(2 e^(-1/t)) / (1 - e^(-1/t))``.
    """

    grid: float
    scale_multiple: int
    epsilon: float
    effective_sensitivity: float
    coordinate_std: float


def secure_laplace_parameters(epsilon: float, sensitivity: float, dim: int) -> SecureLaplaceParameters:
    """Grid and discrete-Laplace scale t for an epsilon-DP release of L2 sensitivity Delta.

    ``t = ceil(sqrt(d) Delta_eff / (g eps))``: the L1 distance between neighbouring
    rounded vectors is at most ``sqrt(d) Delta_eff / g`` grid steps.
    """
    epsilon = _positive("epsilon", epsilon)
    dim = _dimension(dim)
    root = _sqrt_up(dim)
    scale = _float_up(root * Fraction(secure_sensitivity(sensitivity)) / Fraction(epsilon))
    grid = release_grid(sensitivity, dim, scale)
    delta_eff = Fraction(sensitivity) + Fraction(grid) * root
    t = math.ceil(root * delta_eff / (Fraction(grid) * Fraction(epsilon)))
    if t >= 2**48:
        raise ValueError("sensitivity / epsilon is too large relative to the secure grid (scale below 2^48 steps)")
    certified = _float_up(root * delta_eff / (Fraction(grid) * t))
    decay = math.exp(-1.0 / t)
    return SecureLaplaceParameters(grid=grid, scale_multiple=t, epsilon=certified,
                                   effective_sensitivity=_float_up(delta_eff),
                                   coordinate_std=grid * math.sqrt(2.0 * decay) / (1.0 - decay))


def secure_laplace_release(values, epsilon: float, sensitivity: float, *,
                           source: UniformSource | None = None) -> np.ndarray:
    """An epsilon-DP release of ``values`` (L2 sensitivity Delta), safe against
    floating-point attacks: ``g (round(q/g) + L)`` with L iid discrete Laplace.

    Replaces the L2-Laplace mechanism (density exp(-eps ||z|| / Delta)) on the secure
    path; see :class:`SecureLaplaceParameters` for its scale. Basic composition over
    several releases, as for the L2-Laplace mechanism. The sampler refuses (raises) in an
    event of probability below 1e-3500 that depends on the noise only, which adds at most
    that to delta.
    """
    values = _as_values(values)
    params = secure_laplace_parameters(epsilon, sensitivity, values.size)
    noise = discrete_laplace_draws(_source(source), params.scale_multiple, values.size)
    return _to_float(_round_to_grid(values, params.grid) + noise, params.grid)


def secure_laplace_error_bound(grid: float, scale_multiple: int, dim: int, failure: float) -> float:
    """A public bound on ``||release - values||`` for :func:`secure_laplace_release`, holding
    with probability at least ``1 - failure`` (the release's own law; nothing from the data).

    The error is ``g (round(q/g) - q/g) + g L`` with L iid discrete Laplace,
    ``P(L_i = k) ~ exp(-|k| / t)``. Rounding contributes at most ``g sqrt(d) / 2``. For the
    noise: ``P(|L_i| >= m) = 2 e^(-m/t) / (1 + e^(-1/t)) <= e^(-(m-1)/t)``, so ``|L_i|`` is
    stochastically below ``E_i + 1`` with ``E_i`` exponential of mean t, and (coupling the
    coordinates independently) ``||L|| <= ||E|| + sqrt(d)``. A vector of iid signed E_i is a
    Gaussian scale mixture, ``t sqrt(2 V_i) Z_i`` with ``V_i ~ Exp(1)``, ``Z_i ~ N(0, 1)``.
    With probability ``>= 1 - failure`` (a third each): ``sum V_i <= q``, the Gamma(d, 1)
    quantile; ``max V_i <= log(3 d / failure)``; and, given V, Gaussian concentration of
    the norm (Lipschitz constant ``t sqrt(2 max V_i)``, mean at most
    ``t sqrt(2 sum V_i)``) adds at most ``t sqrt(2 max V_i) sqrt(2 log(3 / failure))``.
    Hence the bound ``g (1.5 sqrt(d) + t sqrt(2) (sqrt(q) + sqrt(2 log(3d/failure)
    log(3/failure))))``, about ``sqrt(2) d`` times the per-coordinate scale ``g t / sqrt(d)``
    for large d; the L2-Laplace law it replaces has its Gamma(d) quantile, about ``d``.
    """
    from scipy import stats

    grid, dim = _positive("grid", grid), _dimension(dim)
    if not 0.0 < failure < 1.0:
        raise ValueError(f"failure must be in (0, 1), got {failure}")
    share = failure / 3.0
    total = float(stats.gamma.isf(share, dim))
    largest = math.log(dim / share)
    noise = scale_multiple * math.sqrt(2.0) * (math.sqrt(total) + math.sqrt(2.0 * largest * math.log(1.0 / share)))
    return _float_up(Fraction(grid) * (Fraction(noise) + Fraction(3, 2) * _sqrt_up(dim)))


# ------------------------------------------------------------------- exponential mechanism
_RATE_BITS = 60
_FIRST_BATCH, _LARGEST_BATCH = 1 << 10, 1 << 16  # proposals of the first and the largest round


def _split_rate(gaps: np.ndarray, rate_num: int) -> tuple[np.ndarray, np.ndarray]:
    """``(min(g r >> 60, 2^62), g r mod 2^60)`` for each gap g >= 0 and r = ``rate_num``
    < 2^60, exactly. g r can exceed 64 bits: with r = a 2^30 + b (a, b < 2^30) and
    g < 2^33, ``g r = P 2^30 + Q`` with P = g a and Q = g b below 2^63, and with
    P = P_hi 2^30 + P_lo, ``g r = P_hi 2^60 + R``, R = P_lo 2^30 + Q < 2^64 (unsigned):
    the whole part is ``P_hi + (R >> 60)`` and the fraction ``R mod 2^60``. Larger gaps
    take Python integers."""
    gaps = np.asarray(gaps, dtype=np.int64)
    if gaps.size == 0 or int(gaps.max()) >= 2**33 or int(gaps.min()) < 0:
        values = [int(v) for v in gaps]  # Python ints: g r exceeds 64 bits
        whole = np.array([min((g * rate_num) >> _RATE_BITS, 2**62) for g in values], dtype=np.int64)
        frac = np.array([(g * rate_num) & (2**_RATE_BITS - 1) for g in values], dtype=np.int64)
        return whole, frac
    g = gaps.astype(np.uint64)
    a, b = np.uint64(rate_num >> 30), np.uint64(rate_num & (2**30 - 1))
    high, low = g * a, g * b  # each below 2^63
    rest = (high & np.uint64(2**30 - 1)) * np.uint64(2**30) + low  # below 2^60 + 2^63 < 2^64
    whole = (high >> np.uint64(30)) + (rest >> np.uint64(_RATE_BITS))
    frac = rest & np.uint64(2**_RATE_BITS - 1)
    return np.minimum(whole, np.uint64(2**62)).astype(np.int64), frac.astype(np.int64)


def secure_exponential_mechanism(scores, epsilon: float, sensitivity: float, *, monotone: bool = False,
                                 multiplicities=None, source: UniformSource | None = None) -> int:
    """Index i with probability proportional to exp(c n_i), sampled exactly, where
    n_i = round(u_i / h) and ``c <= eps h / (2 (Delta + h))`` (``eps h / (Delta + h)`` if
    ``monotone``) is a dyadic rational: epsilon-DP (McSherry & Talwar 2007) for scores u
    of replace-one sensitivity Delta.

    h is the largest power of two <= 2^-12 Delta, so rounding adds at most h to the
    sensitivity (and keeps monotone scores monotone). -inf scores are never chosen.
    Sampling: propose i uniformly, accept with probability exp(-c (max_j n_j - n_i)),
    and return the first accepted proposal (exact rejection). Proposals are drawn in
    batches that grow fourfold from 1024 up to ``max(m, 2^16)``: the first success of an
    iid sequence of trials has the same law whatever the batch sizes, and a concentrated
    law (the usual case: a few candidates near the top) stops after a few thousand
    proposals instead of a full batch of 2^16.

    ``multiplicities``: positive integers k_i (None: all 1). Index i is then drawn with
    probability proportional to ``k_i exp(c n_i)``, exactly: the law of the index of the
    run in one draw over a list where score i stands k_i times (proposals are uniform over
    the k_1 + ... + k_m entries). A caller that groups equal scores into runs and then
    picks uniformly within the drawn run gets the law of the ungrouped draw, with the same
    c and rounding, so the same guarantee. (Adding ``log k_i`` to the scores would not:
    the rate c is a little below ``eps / (2 Delta)``, so the weight would be ``k_i`` to a
    power below 1, which depends on the data where the runs do.)
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty 1-D array")
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must not contain NaN or +inf")
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size == 0:
        raise ValueError("at least one score must be finite")
    epsilon = _positive("epsilon", epsilon)
    sensitivity = _positive("sensitivity", sensitivity)
    h = _pow2_floor(Fraction(sensitivity) / 2**GRID_SENSITIVITY_BITS)
    rate = Fraction(epsilon) * h / ((1 if monotone else 2) * (Fraction(sensitivity) + Fraction(h)))
    rate_num = math.floor(rate * 2**_RATE_BITS)  # c = rate_num / 2^60 <= rate
    n = np.rint(np.clip(scores[finite] / h, -_CLIP, _CLIP)).astype(np.int64)
    whole, frac = _split_rate(n.max() - n, rate_num)
    # clipping whole at 2^62 is exact: reaching it would take 2^62 successive exp(-1) trials
    source = _source(source)
    m = finite.size
    ends = None
    if multiplicities is not None:
        counts = np.asarray(multiplicities)
        if counts.shape != scores.shape or counts.dtype.kind not in "iu" or np.any(counts < 1):
            raise ValueError("multiplicities must be positive integers, one per score")
        ends = np.cumsum(counts[finite].astype(np.int64))  # entry e belongs to index searchsorted(ends, e, 'right')
        if int(ends[-1]) >= 2**62:
            raise ValueError("multiplicities must sum to less than 2^62")
    total = m if ends is None else int(ends[-1])
    largest = min(total, max(m, _LARGEST_BATCH))
    batch = min(largest, _FIRST_BATCH)
    one = np.ones(largest, dtype=np.int64)
    den = np.full(largest, 2**_RATE_BITS, dtype=np.int64)
    while True:
        proposal = source.integers(np.full(batch, total, dtype=np.int64))
        batch = min(largest, 4 * batch)  # the next round's: past rounds' failures say nothing of the law
        if ends is not None:
            proposal = np.searchsorted(ends, proposal, side="right")
        accept = bernoulli_exp(source, whole[proposal], one[:proposal.size])
        idx = np.flatnonzero(accept)
        accept[idx] = _bernoulli_exp_unit(source, [(frac[proposal[idx]], den[:idx.size])], idx.size)
        hits = np.flatnonzero(accept)
        if hits.size:
            return int(finite[proposal[hits[0]]])


# ------------------------------------------------------ internal noise (objective perturbation)
PERTURBATION_NOISE_BITS = 46  # the grid of an internal noise vector: g <= 2^-46 sigma (S < 2^47 < 2^48)
PERTURBATION_STEPS = 60  # |k - x| of the smoothing's randomized rounding, in grid steps
# Q's probability that one coordinate's randomized rounding moves by more than 60 steps:
# sum_{|j - x| > t} exp(-(j - x)^2 / (2 r^2)) <= 2 exp(-t^2/(2 r^2)) / (1 - exp(-t/r^2)),
# divided by the normaliser >= r sqrt(2 pi) (1 - eta); 1.01 covers float rounding.
PERTURBATION_TAIL = 1.01 * 2.0 * math.exp(-PERTURBATION_STEPS**2 / (2.0 * SMOOTHING**2)) / (
    (1.0 - math.exp(-PERTURBATION_STEPS / SMOOTHING**2)) * SMOOTHING * math.sqrt(2.0 * math.pi) * (1.0 - _ETA))


@dataclass(frozen=True)
class SecureNoiseParameters:
    """Internal Gaussian noise ``g K``, K iid N_Z(0, S^2), standing for continuous noise of
    std ``sigma``: ``grid`` g (<= 2^-46 sigma), ``noise_multiple`` S with
    ``S^2 >= (sigma/g)^2 + r^2``, and ``perturbation``: the bound ``60 g sqrt(d)`` on the
    distance between ``g K`` and the continuous noise it is coupled with, exceeded with
    probability at most ``tail`` = d x :data:`PERTURBATION_TAIL` (< 4e-88 d)."""

    grid: float
    noise_multiple: int
    perturbation: float
    tail: float


def secure_noise_parameters(sigma: float, dim: int) -> SecureNoiseParameters:
    """Grid and discrete-Gaussian parameter of :func:`secure_gaussian_noise`.

    The coupling (module docstring, "Gaussian accounting"): the law of K is within
    ``e^(+-tau)`` pointwise of that of Q, which draws x ~ N(0, s1^2 I), s1 g >= sigma,
    and rounds each coordinate randomly to k with probability ~ exp(-(k - x)^2 / (2 r^2)).
    So ``g K = z + rho``, z continuous Gaussian of std >= sigma and rho = g (k - x) a
    data-independent perturbation with ``|rho_i| <= 60 g`` for every i except with
    probability ``tail`` under Q.
    """
    sigma = _positive("sigma", sigma)
    dim = _dimension(dim)
    grid = _pow2_floor(Fraction(sigma) / 2**PERTURBATION_NOISE_BITS)
    target = (Fraction(sigma) / Fraction(grid)) ** 2 + SMOOTHING**2
    s = math.isqrt(math.ceil(target))
    if s * s < target:
        s += 1
    perturbation = _float_up(PERTURBATION_STEPS * Fraction(grid) * _sqrt_up(dim))
    return SecureNoiseParameters(grid=grid, noise_multiple=s, perturbation=perturbation,
                                 tail=math.nextafter(dim * PERTURBATION_TAIL, math.inf))


def secure_gaussian_noise(sigma: float, dim: int, *, source: UniformSource | None = None) -> np.ndarray:
    """A noise vector ``g K`` (K iid N_Z(0, S^2), exact, from the OS by default) that
    stands for continuous N(0, sigma^2 I) noise used *inside* a mechanism (the linear term
    of objective perturbation): to within e^(+-tau) it is continuous Gaussian noise of std
    >= sigma plus a data-independent perturbation of norm <= ``perturbation`` except with
    probability ``tail`` (:func:`secure_noise_parameters`). Not a release: the mechanism
    using it must account for the perturbation (and release through a secure sampler)."""
    params = secure_noise_parameters(sigma, dim)
    return _to_float(discrete_gaussian_draws(_source(source), params.noise_multiple, _dimension(dim)), params.grid)


# ------------------------------------------- internal pure noise (objective perturbation)
FLOOR_LAPLACE_BITS = 40  # the grid of floor-coupled Laplace noise: g <= 2^-40 x its scale


@dataclass(frozen=True)
class FloorLaplaceParameters:
    """Internal iid Laplace noise of scale ``scale`` (= g t exactly) drawn as
    ``g floor(X / g)``: ``grid`` g (a power of two), ``scale_multiple`` t (an integer),
    ``perturbation``: ``g sqrt(d)`` rounded up, a bound on ``||X - g floor(X / g)||``
    that holds always."""

    grid: float
    scale_multiple: int
    scale: float
    perturbation: float


def floor_laplace_parameters(scale: float, dim: int) -> FloorLaplaceParameters:
    """Grid and integer scale of :func:`floor_laplace_noise` for iid Laplace noise of scale
    at least ``scale``: ``g`` the largest power of two ``<= 2^-40 scale`` and
    ``t = ceil(scale / g)``, so the scale actually coupled, ``g t``, is at least the
    requested one (by at most a relative 2^-40) and exact in float64."""
    scale = _positive("scale", scale)
    dim = _dimension(dim)
    grid = _pow2_floor(Fraction(scale) / 2**FLOOR_LAPLACE_BITS)
    t = math.ceil(Fraction(scale) / Fraction(grid))
    if t >= 2**48:
        raise ValueError("the Laplace scale is too large for the exact sampler (above 2^48 grid steps)")
    return FloorLaplaceParameters(grid=grid, scale_multiple=t, scale=grid * t,
                                  perturbation=_float_up(Fraction(grid) * _sqrt_up(dim)))


def floor_laplace_noise(scale: float, dim: int, *, source: UniformSource | None = None) -> np.ndarray:
    """``g K'`` with ``K' = floor(X / g)`` for X iid continuous Laplace of scale ``g t``
    (:func:`floor_laplace_parameters`), drawn exactly without ever drawing X.

    The law of ``floor(X/g)`` is ``P(k) = (1/2)(1 - q) q^k`` for k >= 0 and
    ``(1/2)(1 - q) q^(|k| - 1)`` for k < 0, with ``q = e^(-1/t)``: a fair sign and a
    geometric magnitude M, ``K' = M`` or ``-M - 1``. M is an exact discrete Laplace draw
    of scale t conditioned on being ``>= 0`` (rejection: ``P(L = m | L >= 0) = (1 - q)
    q^m``), the sign one uniform bit. So ``g K' = X - rho`` with X exactly continuous iid
    Laplace and ``rho = X - g floor(X/g)`` in ``[0, g)`` a coordinate, a function of X:
    a mechanism that uses ``g K'`` is a mechanism driven by continuous Laplace noise, whose
    analysis holds exactly once it allows the bounded perturbation (``||rho|| <=
    perturbation``). Not a release (the values are not rounded to a grid)."""
    params = floor_laplace_parameters(scale, dim)
    return _to_float(floor_laplace_integers(params.scale_multiple, _dimension(dim), _source(source)), params.grid)


def floor_laplace_integers(t: int, size: int, source: UniformSource) -> np.ndarray:
    """``size`` iid draws of ``floor(X)``, X continuous Laplace of scale t (an integer),
    exactly: a geometric magnitude (a discrete Laplace draw of scale t kept when >= 0) and
    a fair sign, ``M`` or ``-M - 1`` (see :func:`floor_laplace_noise`)."""
    magnitudes = np.empty(0, dtype=np.int64)
    while magnitudes.size < size:  # each draw is kept with probability 1 / (1 + e^(-1/t)) >= 1/2
        draws = discrete_laplace_draws(source, t, 2 * (size - magnitudes.size) + 8)
        magnitudes = np.concatenate([magnitudes, draws[draws >= 0]])
    signs = np.frombuffer(source.bytes(size), dtype=np.uint8) & 1
    return np.where(signs == 1, magnitudes[:size], -magnitudes[:size] - 1)
