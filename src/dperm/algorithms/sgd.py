"""Noisy stochastic gradient descent (Bassily, Smith, Thakurta 2014, Algorithm 1).

Each step samples a batch, sums its per-example loss gradients (each of norm <= L, so
the sum has replace-one sensitivity 2L), adds ``N(0, sigma^2 I)`` and divides by the
batch size. Its event is T subsampled Gaussian releases, for the sampling actually used
(Poisson, or fixed-size batches without replacement, whose step under replace-one can
shift by twice Poisson's: each by its own PLD, see :mod:`dperm.privacy.events`). The per-example loop runs compiled (numba); randomness is drawn in blocks
from the caller's Generator.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..privacy.budget import PrivacyBudget
from ..privacy import events as ev
from ..privacy.mechanisms import calibrate_and_charge, secure_randomness
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import LazyModule

_kernels = LazyModule("dperm.algorithms._kernels")  # numba is imported at the first kernel call
from ._common import check_steps, initial_point, projection_of, start
from .registry import register
from .schedules import sgd_default_schedule

__all__ = ["dp_sgd", "run_noisy_sgd", "sgd_event"]

_BLOCK = 512  # steps per compiled call: bounds the memory of the pre-drawn randomness


def run_noisy_sgd(problem: ERMProblem, w0, step_sizes, *, batch_size: int, sampling: str, sigma: float, rng, domain,
                  steps: int | None = None, average: bool = True, grid: float = 0.0, secure_noise=None):
    """Noisy (proximal, projected) SGD; returns (last iterate, average iterate).

    Step t: batch B_t (fixed size ``batch_size`` without replacement, or Poisson with
    rate ``batch_size / n``), ``g_t = (sum_{i in B_t} grad f_i(w) + N(0, sigma^2 I)) / b``
    with b the (expected) batch size, then ``w <- Pi_C(prox(w - eta_t (g_t + l2 w)))``.
    ``step_sizes``: an array of eta_t, or a function of the float array of step numbers
    t (1-based) with ``steps`` given, evaluated one block at a time (at the paper's T = n^2
    ~ 1e9 an array of step sizes would take 8.5 GB). ``grid > 0`` rounds every batch sum
    to the nearest multiple of ``grid``, coordinate-wise, before the noise is added.

    ``average=False`` (the average iterate is then returned as None) lets sparse data
    without a projection or an l1 term take the lazy-noise kernel
    (:func:`_kernels.sgd_steps_csr_lazy`): a coordinate gets its accumulated Gaussian
    when it is next read instead of a normal at every step, the same law as the dense
    noise (so a seeded run draws a different stream than the dense kernel would). A
    projection needs the norm of the whole iterate, noise included, at every step, so
    with one the noise stays dense.

    ``secure_noise`` (a :class:`~dperm.privacy.secure_release.SecureGaussianParameters`):
    the floating-point-safe path; each step's batch sum q is released as
    ``g (round(q / g) + K)`` with K iid exact discrete Gaussians from the operating system
    (:func:`~dperm.privacy.fast_sampling.fast_discrete_gaussian`), exactly the release of
    :func:`~dperm.privacy.secure_release.secure_gaussian_release` (``grid`` and ``sigma``
    are then taken from it; the batches still come from ``rng``).
    """
    if secure_noise is not None:
        from ..privacy.exact_sampling import SecureRandom
        from ..privacy.fast_sampling import fast_discrete_gaussian

        grid, source = secure_noise.grid, SecureRandom()
    X, y = problem.X, problem.y
    weights = _kernels.weights_of(problem)
    n, d = problem.n_samples, problem.n_features
    code, param = _kernels.loss_code(problem.loss)
    proj_kind, proj_radius = projection_of(domain)
    reg = problem.regularizer
    grid = float(grid)
    if not (math.isfinite(grid) and grid >= 0.0):
        raise ValueError(f"grid must be a finite number >= 0, got {grid!r}")
    w = np.array(w0, dtype=np.float64)
    w_sum = np.zeros(d)
    marker = np.zeros(n, dtype=np.int8)
    q = batch_size / n
    if callable(step_sizes):
        if steps is None:
            raise ValueError("steps is needed with a step-size function")
        schedule, total = step_sizes, int(steps)
    else:
        table = np.asarray(step_sizes, dtype=np.float64)
        schedule, total = None, len(table)
    gather = getattr(problem, "gather_rows", None)  # Dask data: each round fetches its batches' rows
    csr = sp.issparse(X)
    if not csr and gather is None:
        X = np.ascontiguousarray(X)  # float32 or float64: numba specializes on either
    lazy = (csr and gather is None and not average and proj_kind == _kernels.PROJ_NONE and reg.l1 == 0.0 and sigma > 0
            and secure_noise is None)
    normals = None  # one noise buffer reused by every block (a new K x d array per block cost page faults)
    for start_at in range(0, total, _BLOCK):
        if schedule is None:
            etas = table[start_at : start_at + _BLOCK]
        else:
            t = np.arange(start_at + 1, min(start_at + _BLOCK, total) + 1, dtype=np.float64)
            etas = np.ascontiguousarray(schedule(t), dtype=np.float64)
        K = len(etas)
        if sampling == "poisson":
            counts = rng.binomial(n, q, size=K).astype(np.int64)
        else:
            counts = np.full(K, batch_size, dtype=np.int64)
        width = max(1, int(counts.max()))
        uniforms = rng.random((K, width))
        rows = np.zeros((K, width), dtype=np.int64)
        _kernels.sample_batches(n, counts, uniforms, rows, marker)
        if lazy:
            needed = int(_kernels.lazy_normals_needed(X.indptr, rows, counts, etas, reg.l2, d))
            _kernels.sgd_steps_csr_lazy(X.indptr, X.indices, X.data, y, weights, w, rows, counts,
                                        rng.standard_normal(needed), sigma, etas, float(batch_size), code, param,
                                        reg.l2, grid)
            continue
        if normals is None or normals.shape[0] < K:
            normals = np.zeros((K, d))
        noise = normals[:K]
        if secure_noise is not None:  # g K, exact: K integer, g a power of two
            noise[...] = fast_discrete_gaussian(source, secure_noise.noise_multiple, K * d).reshape(K, d)
            noise *= secure_noise.grid
        elif sigma > 0:
            rng.standard_normal(out=noise)  # sigma * these are the values rng.normal(0, sigma, (K, d)) drew
            noise *= sigma
        if gather is not None:
            X, y, rows = gather(rows, counts)
            csr = sp.issparse(X)
        args = (y, weights, w, rows, counts, noise, etas, float(batch_size), code, param, reg.l2, reg.l1, proj_kind,
                proj_radius, w_sum, grid)
        if csr:
            _kernels.sgd_steps_csr(X.indptr, X.indices, X.data, *args)
        else:
            _kernels.sgd_steps_dense(X, *args)
    return w, (w_sum / max(1, total) if average else None)


@register(
    "dp_sgd",
    setting="convex (or strongly convex), Lipschitz, bounded C",
    guarantee="(epsilon, delta)",
    source="Bassily, Smith, Thakurta 2014 Alg. 1",
    paper="Bassily, Smith, Thakurta 2014",
    requires=("convex", "lipschitz", "bounded_domain", "approximate_dp", "compiled_loss"),
    gradient_complexity="b T; the paper's schedule is b = 1, T = n^2",
    summary="noisy mini-batch SGD with subsampled-Gaussian accounting (dp-accounting)",
)
def dp_sgd(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    batch_size: int | None = None,
    steps: int | None = None,
    sampling: str = "poisson",
    step_size: str | float = "theorem",
    output: str = "last",
    init=None,
) -> PrivateFit:
    """Differentially private SGD (Bassily, Smith, Thakurta 2014, Algorithm 1), mini-batch by default.

    Parameters
    ----------
    problem : ERMProblem
        Convex L-Lipschitz loss over a bounded C (an unconstrained mu-strongly convex F is
        run over the ball of radius L/mu, which holds its minimizer).
    budget : PrivacyBudget
        (epsilon, delta), delta > 0.
    batch_size : int, optional
        Default ``round(sqrt(n))``, or ``min(n, d)`` rows when d is larger (the per-step
        noise then costs no more than the batch; ``schedules.sgd_default_schedule``).
        ``batch_size=1, steps=n**2`` is the paper's schedule
        (its accounting is exact too, at a finer PLD grid: about 1 s at n = 3000, 62 s
        and 5.5 GB on ADULT, n = 32561, where the grid is kept coarser for memory; the
        run itself takes about 1.6 microseconds a step, 29 min on ADULT).
    steps : int, optional
        Default: ``min(ceil(n^2 / b^2), ceil(64 n / b))``, at most 64 epochs (linear in n;
        ``schedules.sgd_default_schedule``, risk cost measured in docs/performance.md); with
        ``batch_size`` given,
        ``ceil(n^2 / b^2)``, which keeps the paper's ratio ``q sqrt(T) = 1`` between
        sampling rate and steps (T = n^2 at b = 1; ``schedules.sgd_paper_ratio_schedule``).
    sampling : {"poisson", "without_replacement"}
        Fixed-size uniform batches without replacement, or Poisson sampling with rate b/n
        (the default: under replace-one a fixed-size batch's step can shift by twice
        Poisson's, so it needs more noise for the same budget). Each is accounted by its
        own tight pair (PLD); the event always matches the sampling that runs.
    step_size : "theorem" or float
        "theorem" (Bassily, Smith, Thakurta 2014 Theorem 2.4): ``eta_t = 1 / (mu t)`` when F is mu-strongly
        convex, else ``eta_t = ||C|| / (G sqrt t)`` with ||C|| the diameter of C and
        ``G = sqrt((L + l2 R)^2 + d (sigma / b)^2)``. A float gives a constant step.
    output : {"last", "average"}
        The paper outputs the last iterate w_T.

    Notes
    -----
    The paper calibrates sigma with strong composition and amplification by sampling,
    ``sigma^2 = 32 L^2 T log(n/delta) log(1/delta) / (n^2 eps^2)``, loose by large
    constants. Here sigma is the smallest noise dp-accounting certifies for the exact
    sampling scheme and T (replace-one), so the same budget buys less noise.

    References
    ----------
    Bassily, Smith, Thakurta. Private empirical risk minimization: efficient algorithms
    and tight error bounds. FOCS 2014, Algorithm 1, Theorems 2.1 and 2.4.
    """
    secure = secure_randomness(rng)
    rng = start("dp_sgd", problem, budget, rng)
    if sampling not in ("without_replacement", "poisson"):
        raise ValueError(f"sampling must be 'without_replacement' or 'poisson', got {sampling!r}")
    if output not in ("last", "average"):
        raise ValueError(f"output must be 'last' or 'average', got {output!r}")
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    default_b, default_T = sgd_default_schedule(n, dim=d)
    b = default_b if batch_size is None else check_steps("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size {b} exceeds the number of rows {n}")
    T = (default_T if batch_size is None else max(1, math.ceil(n * n / (b * b)))) \
        if steps is None else check_steps("steps", steps)
    calibration = calibrate_and_charge(lambda x: sgd_event(x, 2.0 * L, n, b, T, sampling, secure=secure), budget,
                                       "dp_sgd")
    sigma = calibration.noise
    if secure:  # exact discrete noise on a grid (os.urandom); the batches from NumPy seeded by OS entropy (rng)
        from ..privacy.secure_release import secure_gaussian_parameters

        secure_noise = secure_gaussian_parameters(sigma, 2.0 * L, d)
    else:
        secure_noise = None

    domain = problem.effective_constraint()
    R = domain.l2_radius(d)
    mu = problem.strong_convexity
    # step sizes as functions of t, evaluated block by block (T may be n^2 ~ 1e9)
    if step_size == "theorem":
        if mu > 0:
            def etas(t):
                return 1.0 / (mu * t)
        else:
            G = math.sqrt((L + problem.regularizer.l2 * R) ** 2 + d * (sigma / b) ** 2)
            diameter = domain.diameter(d)

            def etas(t):
                return diameter / (G * np.sqrt(t))
    else:
        eta = float(step_size)
        if not (math.isfinite(eta) and eta > 0):
            raise ValueError(f"step_size must be 'theorem' or a number > 0, got {step_size!r}")

        def etas(t):
            return np.full(t.shape, eta)

    w0 = initial_point(problem, init)
    w_last, w_avg = run_noisy_sgd(problem, w0, etas, batch_size=b, sampling=sampling, sigma=sigma, rng=rng, domain=domain,
                                  steps=T, average=output == "average", secure_noise=secure_noise)
    return PrivateFit(
        coef=w_last if output == "last" else w_avg,
        privacy_spent=calibration.spent,
        algorithm="dp_sgd",
        event=calibration.event,
        hyperparameters={"batch_size": b, "steps": T, "sampling": sampling, "step_size": step_size, "output": output},
    )


def sgd_event(sigma: float, sensitivity: float, n: int, batch_size: int, steps: int, sampling: str, *,
              secure: bool = False):
    """The event of T noisy batch-sum releases: Poisson sampling with rate b/n, or uniform
    fixed-size batches of b rows without replacement (``secure``: each release by the
    floating-point-safe sampler, accounted at the rounding's effective sensitivity)."""
    return ev.sampled_releases(ev.gaussian_release(sigma, sensitivity, secure=secure), n, batch_size, steps, sampling)
