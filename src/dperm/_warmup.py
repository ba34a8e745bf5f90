"""Compile dperm's numba kernels once per installation, in the background.

The stochastic algorithms (dp_sgd, rrpsgd, dp_svrg, dp_svrg_pp) and the exact samplers of
the secure path (``random_state=None``) run numba kernels compiled with ``cache=True``: the
first process to use a signature compiles it (seconds per kernel) and writes the machine
code to numba's disk cache; later processes load it in a fraction of a second.

:func:`maybe_start` runs at ``import dperm``. If this installation's kernels have not been
warmed yet (no marker file for this version of the kernel sources), it starts one detached,
low-priority process that runs :func:`warm_all` and then writes the marker; it returns at
once and imports nothing heavy (no numba, no NumPy). A lock file keeps concurrent imports
(parallel test workers, several notebooks) from starting more than one. Set the
environment variable ``DPERM_WARMUP=0`` to turn it off; ``dperm warmup`` does the same work
in the foreground and reports the time.

Where: ``NUMBA_CACHE_DIR`` when set (numba writes there too), else the ``__pycache__``
folder beside the kernels when it is writable (numba's own default), else
``~/.cache/dperm``. Nothing here touches data.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["warm_all", "warm_minibatch_kernels", "maybe_start", "marker_path", "is_warm"]

_ENV = "DPERM_WARMUP"
_LOCK = "dperm-warmup.lock"
_STALE_LOCK_SECONDS = 900.0  # a warm-up that has not finished by then was killed: try again
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
# the sources whose kernels are compiled; a change in any of them invalidates numba's cache
_KERNEL_SOURCES = (os.path.join(_PACKAGE, "algorithms", "_kernels.py"),
                   os.path.join(_PACKAGE, "privacy", "fast_sampling.py"))


def _cache_dir() -> str:
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    if explicit:
        return explicit
    beside = os.path.join(_PACKAGE, "algorithms", "__pycache__")
    if os.access(beside if os.path.isdir(beside) else os.path.dirname(beside), os.W_OK):
        return beside
    return os.path.join(os.path.expanduser("~"), ".cache", "dperm")


def marker_path() -> str:
    """The marker :func:`warm_all` leaves once the kernels of these sources are compiled:
    its name carries the Python version and each kernel source's size and modification time."""
    from ._version import __version__

    stamps = []
    for source in _KERNEL_SOURCES:
        try:
            info = os.stat(source)
        except OSError:
            return ""
        stamps.append(f"{info.st_size}-{info.st_mtime_ns}")
    tag = f"{__version__}-py{sys.version_info[0]}{sys.version_info[1]}-" + "-".join(stamps)
    return os.path.join(_cache_dir(), f"dperm-warm-{tag}")


def is_warm() -> bool:
    """Whether :func:`warm_all` has completed for the current kernel sources."""
    marker = marker_path()
    return bool(marker) and os.path.exists(marker)


def warm_minibatch_kernels() -> float:
    """Compile, or load from numba's disk cache, the kernels of dp_sgd, dp_svrg (and
    dp_svrg_pp, rrpsgd) for float64 and float32 data, dense and CSR; returns the seconds
    taken. The fits here are on 64 synthetic rows; nothing is kept. (Here, not beside the
    kernels: the kernels know nothing of the algorithms that call them.)"""
    import warnings

    import numpy as np
    import scipy.sparse as sp

    from .algorithms.sgd import dp_sgd, run_noisy_sgd
    from .algorithms.svrg import dp_svrg
    from .privacy.budget import PrivacyBudget
    from .problem.erm import ERMProblem

    start_time = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    budget = PrivacyBudget(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in (X, X.astype(np.float32), sp.csr_matrix(X), sp.csr_matrix(X.astype(np.float32))):
            problem = ERMProblem(data, y, "logistic", ("l2", 0.1))
            dp_sgd(problem, budget, rng=0, steps=2)
            dp_svrg(problem, budget, rng=0, epochs=1, inner_steps=2)
            if sp.issparse(data):  # the lazy-noise kernel (no projection, last iterate)
                run_noisy_sgd(problem, np.zeros(3), np.full(2, 0.1), batch_size=8, sampling="poisson", sigma=1.0,
                              rng=rng, domain=None, average=False)
    return time.perf_counter() - start_time


def warm_all() -> float:
    """Compile (or load) every kernel signature dperm uses: the mini-batch kernels and the
    exact samplers. Returns the seconds taken; writes the marker of :func:`is_warm`."""
    start = time.perf_counter()
    from .privacy.exact_sampling import GeneratorSource, SecureRandom
    from .privacy.fast_sampling import fast_discrete_gaussian, fast_discrete_laplace

    warm_minibatch_kernels()
    for source in (SecureRandom(), GeneratorSource(0)):
        fast_discrete_gaussian(source, 3, 4)
        fast_discrete_laplace(source, 3, 4)
    marker = marker_path()
    if marker:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write(f"{time.perf_counter() - start:.1f} s\n")
    return time.perf_counter() - start


def _take_lock(directory: str) -> str | None:
    """Create the lock file atomically; None when another warm-up holds a fresh one."""
    lock = os.path.join(directory, _LOCK)
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return lock
        except FileExistsError:
            try:
                if time.time() - os.stat(lock).st_mtime < _STALE_LOCK_SECONDS:
                    return None
                os.unlink(lock)  # stale: its process died
            except OSError:
                return None
        except OSError:  # unwritable folder: no background warm-up
            return None
    return None


def _spawn(lock: str) -> None:
    import subprocess

    code = ("import os\n"
            "try:\n    os.nice(10)\nexcept OSError:\n    pass\n"
            "try:\n    from dperm._warmup import warm_all\n    warm_all()\n"
            f"finally:\n    os.unlink({lock!r})\n")
    env = dict(os.environ, **{_ENV: "0"})  # the child must not start another one
    subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)


def maybe_start(spawn=_spawn) -> bool:
    """Start the background warm-up if it is needed and allowed; True if one was started.

    Never raises: a failure to warm up only means the first fit compiles its kernels."""
    try:
        if os.environ.get(_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
            return False
        if is_warm() or not marker_path():
            return False
        directory = _cache_dir()
        os.makedirs(directory, exist_ok=True)
        lock = _take_lock(directory)
        if lock is None:
            return False
        try:
            spawn(lock)
        except Exception:
            os.unlink(lock)
            raise
        return True
    except Exception:  # noqa: BLE001 - an optimization must never break the import
        return False
