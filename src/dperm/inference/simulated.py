"""A simulated null for the Wald / F test of least squares' default inference fit.

The shipped ``f_test()`` refers the private Wald statistic ``W = b^T C^-1 b`` (b the tested
coefficients, C their released covariance: sampling error and privacy noise) to
chi-square(q). That reference is asymptotic: it takes C as exact and the estimate as
normal. Alabi and Vadhan (2022) instead compare a private F statistic with its law under
H0 obtained by simulation (their Monte Carlo tests): draw datasets from a parametric model
of the null whose parameters are the *private* estimates, run the whole private
statistic on each, noise included, and reject when the observed statistic exceeds the
empirical ``1 - alpha`` quantile of the simulated ones (K = 10 / alpha draws, p-value
``(1 + #{W*_k >= W}) / (K + 1)``). In their linear-regression test the design is drawn
normal with the privately estimated mean and variance, the response normal around the
null model's fit with the privately estimated null residual variance.

Here the private statistic is the Wald statistic of the scaled Huber fit
(:func:`~dperm.inference.scaled.scaled_huber_inference`), and the simulation uses only
what that fit released and the public inputs:

- the design: rows ``z ~ N(m, S)`` with ``(m, S)`` from the released Hessian of the last
  Huber step (``info["hessian"]``, the rows' second moments up to the share of residuals
  within the threshold, normalized by its intercept entry), clipped by the problem to the
  declared row bound as the mechanism clips real rows;
- the null model: the released estimate projected onto H0 in the design's metric
  (restricted least squares: the free coefficients absorb what the tested ones explained)
  and errors ``N(0, sigma0^2)``, ``sigma0^2 = sigma_hat^2 + b_T^T (G_TT - G_TF G_FF^-1
  G_FT) b_T`` (``sigma_hat`` the released residual scale, ``threshold / tuning``; the
  second term the variance the tested columns explained: the null model's residual
  variance, as Alabi and Vadhan's ``s_0^2``), targets clipped to the declared bound;
- each draw re-runs the same mechanism (n public, the same budget, bounds and options)
  with fresh noise, charged to no accountant, and its Wald statistic on the same rows.

The observed statistic exists only because the observed fit was not refused, so the
reference law is the one given that: a draw whose fit is refused is left out, and the
p-value is ``(1 + #{W*_k >= W}) / (K' + 1)`` over the K' draws that gave intervals. When
fewer than :data:`MIN_ACCEPTED` did, the simulated test is refused (p-value 1, never a
rejection). (Counting refused draws as exceeding W instead, the conservative choice, left
the test without power near the refusal boundary: at n = 2000, d = 3, epsilon 0.5, 15-37%
of the draws were refused, every p-value above 0.15; docs/inference.md.)

Privacy: a post-processing of the released fit and public values; it reads no row and
charges nothing (the simulated fits run under ``charging(None)``). Cost: ``draws`` fits
of n simulated rows (about 10 ms each at n = 2000, d = 3).

References
----------
Alabi, Vadhan. Hypothesis testing for differentially private linear regression. NeurIPS
2022 (the Monte Carlo tests of the linear relationship).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..privacy.mechanisms import charging
from ..problem.erm import ERMProblem
from .scaled import scaled_huber_inference

__all__ = ["simulated_null_test", "DEFAULT_DRAWS", "SCALED_OPTIONS", "MIN_ACCEPTED"]

# Alabi and Vadhan's K = 10 / alpha at alpha = 0.05, less one: (K + 1) p-values on a grid of 1 / 200
DEFAULT_DRAWS = 199
# draws with intervals below which the simulated test is refused: with fewer, no p-value
# reaches 0.05
MIN_ACCEPTED = 19
# the scaled fit's options a simulated fit repeats (public)
SCALED_OPTIONS = ("steps", "tuning", "gradient_share", "meat_share", "failure_probability", "separation")


def _wald(params: np.ndarray, covariance: np.ndarray, rows: list) -> float:
    b = params[rows]
    return float(b @ np.linalg.lstsq(covariance[np.ix_(rows, rows)], b, rcond=None)[0])


def _design(hessian: np.ndarray, scaling: float):
    """``(G, mean, root)``: the design's second-moment matrix G (problem coordinates,
    intercept column last when ``scaling``), the features' mean and a square root of
    their covariance, from the released Hessian (normalized so that the intercept entry
    is ``scaling^2``; without an intercept, mean 0 and covariance the Hessian)."""
    H = 0.5 * (hessian + hessian.T)
    if scaling:
        G = H * (scaling * scaling / H[-1, -1]) if H[-1, -1] > 0 else H
        mean = G[:-1, -1] / scaling
        cov = G[:-1, :-1] - np.outer(mean, mean)
    else:
        G, mean, cov = H, np.zeros(H.shape[0]), H
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    return G, mean, vectors * np.sqrt(np.clip(values, 0.0, None))


def _null_model(w: np.ndarray, G: np.ndarray, rows: list, sigma: float):
    """``(w0, sigma0)``: the estimate projected onto H0 (the tested coordinates 0) in the
    design's metric G, and the null model's residual scale."""
    tested = np.zeros(w.shape[0], dtype=bool)
    tested[rows] = True
    free = ~tested
    w0 = np.where(tested, 0.0, w)
    bT = w[tested]
    GTT = G[np.ix_(tested, tested)]
    if free.any():
        GFT = G[np.ix_(free, tested)]
        GFF = G[np.ix_(free, free)]
        shift = np.linalg.lstsq(GFF, GFT @ bT, rcond=None)[0]
        w0[free] += shift
        explained = float(bT @ (GTT - GFT.T @ np.linalg.lstsq(GFF, GFT, rcond=None)[0]) @ bT)
    else:
        explained = float(bT @ GTT @ bT)
    return w0, math.sqrt(sigma * sigma + max(explained, 0.0))


def simulated_null_test(fit, rows: list, observed: float, *, n_samples: int, data_norm: float, label_bound: float,
                        intercept_scaling: float, options: dict | None = None, draws: int = DEFAULT_DRAWS,
                        random_state=None) -> dict:
    """The p-value of the observed Wald statistic against its law under H0 simulated from the
    released fit (module notes; Alabi and Vadhan 2022).

    Parameters
    ----------
    fit : PrivateFit
        A ``scaled_huber_inference`` fit that was not refused: its ``coef`` (problem
        coordinates, intercept column last), ``info["hessian"]``, ``info["threshold"]``,
        ``hyperparameters["tuning"]`` and ``privacy_spent`` are all it reads.
    rows : list of int
        The tested coordinates, in the problem's coordinates.
    observed : float
        The observed Wald statistic ``b^T C^-1 b`` on those coordinates.
    n_samples, data_norm, label_bound, intercept_scaling : public
        The fit's n and declared bounds (as the problem was built).
    options : dict or None
        The scaled fit's options (public; :data:`SCALED_OPTIONS`).
    draws : int
        Simulated datasets (K); the p-value's grid is ``1 / (K + 1)``.
    random_state : None, int or Generator
        The simulation's randomness (not a privacy noise: the simulation releases nothing).

    Returns
    -------
    dict
        ``{"p_value", "draws", "draws_refused"}`` (p-value 1 when fewer than
        :data:`MIN_ACCEPTED` draws gave intervals).
    """
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 19:
        raise ValueError(f"draws must be an integer >= 19, got {draws!r}")
    options = {k: v for k, v in (options or {}).items() if k in SCALED_OPTIONS}
    rng = np.random.default_rng(random_state)
    w = np.asarray(fit.coef, dtype=np.float64)
    scaling = float(intercept_scaling)
    G, mean, root = _design(np.asarray(fit.info["hessian"], dtype=np.float64), scaling)
    sigma = float(fit.info["threshold"]) / float(fit.hyperparameters["tuning"])
    w0, sigma0 = _null_model(w, G, list(rows), sigma)
    d = mean.shape[0]
    slopes, intercept = (w0[:-1], w0[-1] * scaling) if scaling else (w0, 0.0)
    budget = fit.privacy_spent
    exceed = refused = 0
    for _ in range(int(draws)):
        Z = mean + rng.standard_normal((n_samples, d)) @ root.T
        y = np.clip(Z @ slopes + intercept + sigma0 * rng.standard_normal(n_samples), -label_bound, label_bound)
        problem = ERMProblem(Z, y, "squared", data_norm=data_norm, label_bound=label_bound,
                             intercept_scaling=scaling)
        with charging(None), warnings.catch_warnings():  # a simulation: nothing released, nothing charged
            warnings.simplefilter("ignore")
            sim = scaled_huber_inference(problem, budget, rng=rng, **options)
        if sim.info["refused"]:  # the observed fit was not: left out (module notes)
            refused += 1
            continue
        exceed += _wald(np.asarray(sim.coef), np.asarray(sim.info["covariance"]), list(rows)) >= observed
    accepted = int(draws) - refused
    p_value = (1.0 + exceed) / (accepted + 1.0) if accepted >= MIN_ACCEPTED else 1.0
    return {"p_value": p_value, "draws": int(draws), "draws_refused": refused}
