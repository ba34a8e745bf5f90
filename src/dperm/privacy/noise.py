"""Noise samplers. Every one takes the caller's NumPy Generator first and is vectorized."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "make_rng",
    "gaussian_noise",
    "laplace_noise",
    "l2_laplace_noise",
    "exponential_mechanism",
    "report_noisy_max",
    "symmetric_gaussian_matrix",
]


def make_rng(random_state=None) -> np.random.Generator:
    """A NumPy Generator from None (OS entropy, 128 bits), an int seed, a Generator
    (returned as is) or a legacy RandomState (a 128-bit seed drawn from it)."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(f"random_state must be None, an int, a Generator or a RandomState, got {random_state!r}")


def gaussian_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """iid N(0, scale^2)."""
    return rng.normal(0.0, scale, size=size)


def laplace_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """iid Laplace(0, scale)."""
    return rng.laplace(0.0, scale, size=size)


def l2_laplace_noise(rng: np.random.Generator, dim: int, scale: float) -> np.ndarray:
    """A vector of R^dim with density proportional to exp(-||z||_2 / scale).

    In polar coordinates the density of the radius is proportional to
    r^(dim-1) exp(-r / scale), a Gamma(dim, scale) law, and the direction is uniform.
    """
    direction = rng.standard_normal(dim)
    norm = np.linalg.norm(direction)
    while norm == 0.0:  # probability zero; keeps the direction well defined
        direction = rng.standard_normal(dim)
        norm = np.linalg.norm(direction)
    return direction / norm * rng.gamma(shape=dim, scale=scale)


def exponential_mechanism(rng: np.random.Generator, scores, epsilon: float, sensitivity: float, *, monotone: bool = False) -> int:
    """Index i drawn with probability proportional to exp(eps * score_i / (2 Delta)).

    ``scores`` are utilities (higher is better) whose replace-one sensitivity is
    ``sensitivity``; the draw is epsilon-DP (McSherry & Talwar 2007). ``monotone=True``
    (scores that move in one direction between neighbours) uses exp(eps score / Delta).
    Gumbel-max sampling: argmax(log-weight + Gumbel) is an exact sample and never
    exponentiates, so any score range is safe; -inf scores are never chosen.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty 1-D array")
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must not contain NaN or +inf")
    if not np.isfinite(scores).any():
        raise ValueError("at least one score must be finite")
    factor = epsilon / (sensitivity if monotone else 2.0 * sensitivity)
    keys = factor * scores + rng.gumbel(size=scores.size)
    return int(np.argmax(keys))


def report_noisy_max(rng: np.random.Generator, scores, epsilon: float, sensitivity: float) -> int:
    """Report-noisy-max with Gumbel noise, which is exactly the exponential mechanism."""
    return exponential_mechanism(rng, scores, epsilon, sensitivity)


def symmetric_gaussian_matrix(rng: np.random.Generator, dim: int, scale: float) -> np.ndarray:
    """Symmetric dim x dim matrix whose upper triangle (diagonal included) is iid
    N(0, scale^2)."""
    upper = np.triu(rng.normal(0.0, scale, size=(dim, dim)))
    return upper + np.triu(upper, 1).T
