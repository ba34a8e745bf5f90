"""Synthetic problems with known ground truth, for tests, examples and benchmarks.

Every generator follows the conventions of the UCI loaders (:mod:`dperm.datasets.uci`):

* it returns a :class:`sklearn.utils.Bunch` with ``data``, ``target``,
  ``feature_names``, ``task`` (``"binary"`` or ``"regression"``), ``data_norm``,
  ``label_bound`` and ``DESCR`` (plus the generator's ground truth), or ``(X, y)`` with
  ``return_X_y=True``;
* binary labels are in {-1, +1}; real labels satisfy ``|y| <= label_bound``;
* **every row satisfies ``||x_i||_2 <= data_norm`` exactly** in floating point: rows are
  scaled onto the sphere of radius ``data_norm`` and any row that rounding leaves above
  it (by an ulp or two) is scaled down by a further factor ``1 - 4 eps``, so
  :class:`dperm.problem.erm.ERMProblem` never clips a generated row;
* with ``intercept=True`` (where offered) a column of ones is appended *before* the
  per-row scaling, as the UCI loaders do; it is named ``"intercept"``, comes last and
  counts in ``n_features``.

Randomness: ``random_state`` is ``None`` (fresh OS entropy), a non-negative ``int`` (a
seed of :func:`numpy.random.default_rng`) or a :class:`numpy.random.Generator` (used
directly, so its state advances). Given an ``int`` or a generator in a given state,
the output is deterministic. Draws are made in a fixed order, so e.g. ``noise`` does not
change ``X`` or the true coefficients for a fixed seed.

The code is vectorized NumPy; link functions and losses are the library's own
(:mod:`dperm.problem.losses`), so the generated labels match the losses exactly.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils import Bunch

from .._validation import check_positive
from ..problem.losses import Biweight, Logistic, SigmoidSquared, Squared

__all__ = [
    "make_glm",
    "make_robust_regression",
    "make_pl_problem",
    "make_saddle_problem",
    "make_classification_problem",
]

_EPS = np.finfo(np.float64).eps


# --------------------------------------------------------------------------- validation
def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_unit_interval(name: str, value) -> float:
    value = check_positive(name, value, allow_zero=True)
    if value > 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def _check_random_state(random_state) -> np.random.Generator:
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        f"random_state must be None, a non-negative int or a numpy.random.Generator, got {random_state!r}"
    )


# ------------------------------------------------------------------------------ helpers
def _row_norms(X: np.ndarray) -> np.ndarray:
    """The larger of the two ways the library and the tests compute row norms."""
    return np.maximum(np.linalg.norm(X, axis=1), np.sqrt(np.einsum("ij,ij->i", X, X)))


def _fit_in_ball(X: np.ndarray, bound: float) -> np.ndarray:
    """Scale down (in place) the rows that rounding left above ``bound``."""
    for _ in range(16):
        norms = _row_norms(X)
        over = norms > bound
        if not over.any():
            return X
        X[over] *= (bound / norms[over] * (1.0 - 4.0 * _EPS))[:, None]
    raise RuntimeError("could not bring the rows within data_norm")  # pragma: no cover


def _onto_sphere(Z: np.ndarray, radius: float) -> np.ndarray:
    """Rows of Z scaled to L2 norm ``radius`` (then guaranteed <= radius)."""
    Z = np.array(Z, dtype=np.float64)
    norms = np.linalg.norm(Z, axis=1)
    zero = norms == 0.0  # probability zero for Gaussian rows; keeps the map total
    if zero.any():
        Z[zero, 0] = 1.0
        norms[zero] = 1.0
    return _fit_in_ball(Z * (radius / norms)[:, None], radius)


def _unit_vector(rng: np.random.Generator, d: int, radius: float = 1.0) -> np.ndarray:
    """A vector uniform on the sphere of radius ``radius`` in R^d (norm <= radius)."""
    return _onto_sphere(rng.standard_normal((1, d)), radius)[0]


def _design(rng: np.random.Generator, n: int, d: int, data_norm: float, intercept: bool, raw=None):
    """Rows uniform on the sphere of radius data_norm (or the given raw rows), with an
    optional intercept column appended before the scaling."""
    k = d - 1 if intercept else d
    Z = rng.standard_normal((n, k)) if raw is None else raw
    if intercept:
        if k > 0:
            Z = Z / np.linalg.norm(Z, axis=1, keepdims=True) if raw is None else Z
        Z = np.hstack([Z, np.ones((n, 1))])
    names = [f"x{j}" for j in range(k)] + (["intercept"] if intercept else [])
    return _onto_sphere(Z, data_norm), names


def _check_common(n_samples, n_features, data_norm, intercept=False, min_features=1):
    n = _check_int("n_samples", n_samples, 1)
    d = _check_int("n_features", n_features, min_features)
    if intercept and d < 2:
        raise ValueError(f"n_features must be >= 2 with intercept=True (the intercept is one of them), got {d}")
    R = check_positive("data_norm", data_norm)
    return n, d, R


def _finish(X, y, names, *, task, data_norm, label_bound, descr, return_X_y, **extra):
    if return_X_y:
        return X, y
    bunch = Bunch(data=X, target=y, feature_names=names, task=task, data_norm=float(data_norm),
                  label_bound=float(label_bound), DESCR=descr, **extra)
    if task == "binary":
        bunch.target_names = np.array([-1.0, 1.0])
    return bunch


# ------------------------------------------------------------------------------ GLM
def make_glm(n_samples: int, n_features: int, *, link: str = "sigmoid", noise: float = 0.1,
             scale: float = 1.0, data_norm: float = 1.0, intercept: bool = False, random_state=None,
             return_X_y: bool = False):
    """A generalized linear model for the non-convex sigmoid-squared loss.

    Draws, in this order:

    1. ``X``: rows i.i.d. uniform on the sphere ``{x : ||x||_2 = data_norm}`` of
       ``R^n_features`` (normalized standard Gaussians). With ``intercept=True`` the
       first ``n_features - 1`` coordinates are uniform on the unit sphere, a 1 is
       appended and the row is scaled to norm ``data_norm`` (so the intercept column is
       the constant ``data_norm / sqrt 2``).
    2. ``coef_true = w*``: uniform on the unit sphere of ``R^n_features`` (so
       ``||w*|| <= 1``: in the unit L2 ball).
    3. ``y_i = clip(s(scale * <w*, x_i>) + noise * g_i, 0, 1)`` with ``g_i`` i.i.d.
       standard normal and ``s`` the link of :class:`~dperm.problem.losses.SigmoidSquared`
       (logistic sigmoid or standard normal CDF).

    Labels are in ``[0, 1]``, inside the domain ``[-label_bound, label_bound]`` with
    ``label_bound = 1`` that :class:`~dperm.problem.erm.ERMProblem` enforces for the
    sigmoid-squared loss (its ``check_labels`` accepts every real label; the problem
    clips to ``label_bound``), so no label is clipped there. With ``noise=0`` the labels
    are exactly ``s(<coef_scaled, x_i>)`` and ``coef_scaled = scale * w*`` has zero loss.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of ``X`` (``>= 1``; ``n_features >= 2`` with an intercept).
    link : {"sigmoid", "probit"}
        The link ``s``.
    noise : float
        Standard deviation (``>= 0``) of the additive Gaussian label noise, before clipping.
    scale : float
        Margin scale (``> 0``): the model's parameter in the loss's parametrization is
        ``scale * w*``.
    data_norm : float
        Row norm bound ``R > 0``; every row has ``||x_i|| <= R`` exactly (equal up to a
        relative ``4 eps``).
    intercept : bool
        Append an intercept column (last, named ``"intercept"``) before the row scaling.
    random_state : None, int or numpy.random.Generator
        Source of randomness; deterministic for an int or a generator in a given state.
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or (X, y)
        ``data`` (n, d), ``target`` (n,) in [0, 1], ``coef_true`` (d,) = ``w*``,
        ``coef_scaled`` = ``scale * w*``, ``loss`` (a ``SigmoidSquared(link)``),
        ``link``, ``noise``, ``scale``, ``feature_names``, ``task="regression"``,
        ``data_norm``, ``label_bound=1.0``, ``DESCR``.
    """
    n, d, R = _check_common(n_samples, n_features, data_norm, intercept)
    if link not in ("sigmoid", "probit"):
        raise ValueError(f"link must be 'sigmoid' or 'probit', got {link!r}")
    noise = check_positive("noise", noise, allow_zero=True)
    scale = check_positive("scale", scale)
    rng = _check_random_state(random_state)

    X, names = _design(rng, n, d, R, intercept)
    w_star = _unit_vector(rng, d)
    loss = SigmoidSquared(link=link)
    mean = loss._link(scale * (X @ w_star))[0]
    y = np.clip(mean + noise * rng.standard_normal(n), 0.0, 1.0)
    descr = (f"Synthetic GLM ({link} link): {n} rows, {d} features; rows uniform on the sphere of radius "
             f"{R:g}; y = clip(s({scale:g} <w*, x>) + {noise:g} N(0, 1), 0, 1), w* uniform on the unit sphere.")
    return _finish(X, y, names, task="regression", data_norm=R, label_bound=1.0, descr=descr,
                   return_X_y=return_X_y, coef_true=w_star, coef_scaled=scale * w_star, loss=loss,
                   link=link, noise=noise, scale=scale)


# ----------------------------------------------------------------- robust regression
def make_robust_regression(n_samples: int, n_features: int, *, outlier_fraction: float = 0.1,
                           outlier_scale: float = 2.0, noise: float = 0.1, label_bound: float = 1.0,
                           data_norm: float = 1.0, intercept: bool = False, random_state=None,
                           return_X_y: bool = False):
    """Linear regression with a known fraction of gross label outliers.

    Draws, in this order:

    1. ``X``: rows i.i.d. uniform on the sphere of radius ``data_norm`` (intercept as in
       :func:`make_glm`).
    2. ``coef_true = w*``: uniform on the sphere of radius ``min(1, label_bound /
       data_norm)``, so the clean margins ``m_i = <w*, x_i>`` satisfy
       ``|m_i| <= label_bound``.
    3. Clean labels ``y_i = clip(m_i + noise * g_i, -label_bound, label_bound)``, ``g_i``
       i.i.d. standard normal (``target_clean``).
    4. ``outliers``: exactly ``k = round(outlier_fraction * n_samples)`` distinct indices,
       uniform without replacement (Python's ``round``: nearest integer, ties to even).
       Their labels are replaced by
       ``clip(m_i - sign(m_i) * outlier_scale * label_bound, -label_bound, label_bound)``
       (``sign(0) = +1``): pushed away from the clean margin, to the opposite side. With
       ``outlier_scale >= 2`` every outlier label is ``-sign(m_i) * label_bound``, a
       residual of ``|m_i| + label_bound >= label_bound`` from the model.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of ``X`` (``>= 1``; ``n_features >= 2`` with an intercept).
    outlier_fraction : float
        Fraction of outliers, in ``[0, 1]``.
    outlier_scale : float
        Size (``> 0``) of the outlier shift in units of ``label_bound``, before clipping.
    noise : float
        Standard deviation (``>= 0``) of the Gaussian noise of the clean labels.
    label_bound : float
        Bound (``> 0``) on ``|y_i|``; every label is within it.
    data_norm : float
        Row norm bound; every row has ``||x_i|| <= data_norm`` exactly.
    intercept : bool
        Append an intercept column (last) before the row scaling.
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or (X, y)
        ``data``, ``target``, ``coef_true`` (d,), ``outliers`` (sorted int indices),
        ``outlier_mask`` (bool, n), ``target_clean`` (labels without outliers),
        ``feature_names``, ``task="regression"``, ``data_norm``, ``label_bound``, ``DESCR``.
    """
    n, d, R = _check_common(n_samples, n_features, data_norm, intercept)
    fraction = _check_unit_interval("outlier_fraction", outlier_fraction)
    outlier_scale = check_positive("outlier_scale", outlier_scale)
    noise = check_positive("noise", noise, allow_zero=True)
    B = check_positive("label_bound", label_bound)
    rng = _check_random_state(random_state)

    X, names = _design(rng, n, d, R, intercept)
    w_star = _unit_vector(rng, d, min(1.0, B / R))
    margins = X @ w_star
    clean = np.clip(margins + noise * rng.standard_normal(n), -B, B)
    k = int(round(fraction * n))
    outliers = np.sort(rng.permutation(n)[:k])
    direction = np.where(margins[outliers] >= 0.0, 1.0, -1.0)
    y = clean.copy()
    y[outliers] = np.clip(margins[outliers] - direction * outlier_scale * B, -B, B)
    mask = np.zeros(n, dtype=bool)
    mask[outliers] = True
    descr = (f"Synthetic robust regression: {n} rows, {d} features; rows uniform on the sphere of radius {R:g}; "
             f"y = clip(<w*, x> + {noise:g} N(0, 1), +-{B:g}); {k} outliers ({fraction:g} of the rows) moved by "
             f"{outlier_scale:g} * label_bound against the sign of the margin, then clipped.")
    return _finish(X, y, names, task="regression", data_norm=R, label_bound=B, descr=descr,
                   return_X_y=return_X_y, coef_true=w_star, outliers=outliers, outlier_mask=mask,
                   target_clean=clean)


# ---------------------------------------------------------------------- PL problem
def make_pl_problem(n_samples: int, n_features: int, *, rank: int | None = None, noise: float = 0.1,
                    data_norm: float = 1.0, label_bound: float = 1.0, random_state=None,
                    return_X_y: bool = False):
    """Least squares with a rank-deficient design: Polyak-Lojasiewicz, not strongly convex.

    The objective is the mean squared loss of dperm (:class:`~dperm.problem.losses.Squared`,
    ``ERMProblem(X, y, "squared")``)::

        F(w) = (1 / n) sum_i 0.5 (<w, x_i> - y_i)**2 = ||X w - y||**2 / (2 n).

    ``X`` has rank exactly ``r = rank < n_features`` *in floating point*, so the Hessian
    ``X^T X / n`` has ``d - r`` zero eigenvalues (F is not strongly convex) while F
    satisfies the PL inequality

        0.5 ||grad F(w)||**2 >= pl_constant * (F(w) - F*)   for every w,

    with ``pl_constant = lambda_min_nonzero(X^T X / n) = sigma_r(X)**2 / n``, the best
    constant (equality along the singular direction of sigma_r). In the other common
    convention ``||grad F||**2 >= mu (F - F*)`` the constant is ``2 * pl_constant``, which
    is also the constant of the unhalved objective ``mean (<w, x_i> - y_i)**2`` in the
    form above.

    Draws, in this order:

    1. ``Z`` (n, r): rows i.i.d. uniform on the unit sphere of ``R^r``.
    2. A column map: ``mapping = permutation(arange(d) % r)`` and signs
       ``s_j`` i.i.d. uniform on {-1, +1}; raw column ``j`` is ``s_j Z[:, mapping[j]]``
       (every latent column appears ``floor(d / r)`` or ``ceil(d / r)`` times, up to
       sign). Each row is then scaled to norm ``data_norm``. Sign flips and common row
       factors are exact in floating point, so ``rank(X) = r`` exactly, and the null
       space (spanned by ``s_j e_j - s_k e_k`` for columns sharing a latent column) is
       not coordinate aligned.
    3. ``coef_true = w*`` uniform on the sphere of radius ``min(1, label_bound /
       data_norm)``; ``y = clip(X w* + noise * g, -label_bound, label_bound)``.

    ``pl_constant`` is computed from the r nonzero singular values of ``X``, obtained as
    the singular values of the full-rank (n, r) matrix ``Z~ M**0.5`` where ``X = Z~ D``
    (``D`` the signed column map, ``M = D D^T`` the diagonal of multiplicities) — no
    rank threshold is involved. The minimum-norm minimizer and ``F*`` are computed the
    same way.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of ``X``; ``n_samples >= 1``, ``n_features >= 2``.
    rank : int or None
        ``r`` with ``1 <= r <= n_features - 1`` and ``r <= n_samples``. Default
        ``max(1, min(n_features // 2, n_samples))``.
    noise : float
        Standard deviation (``>= 0``) of the label noise.
    data_norm : float
        Row norm bound; every row has ``||x_i|| <= data_norm`` exactly.
    label_bound : float
        Bound on ``|y_i|``.
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or (X, y)
        ``data``, ``target``, ``rank``, ``pl_constant``, ``smoothness``
        (``lambda_max(X^T X / n)``), ``singular_values`` (the r nonzero singular values
        of X, descending), ``coef_true``, ``coef_min_norm`` (the minimum-norm minimizer),
        ``optimal_value`` (``F*``), ``loss`` (``Squared()``), ``feature_names``,
        ``task="regression"``, ``data_norm``, ``label_bound``, ``DESCR``.
    """
    n, d, R = _check_common(n_samples, n_features, data_norm, min_features=1)
    if d < 2:
        raise ValueError(f"n_features must be >= 2 for a rank-deficient design, got {d}")
    if rank is None:
        r = max(1, min(d // 2, n))
    else:
        r = _check_int("rank", rank, 1)
        if r >= d:
            raise ValueError(f"rank must be < n_features={d} (rank-deficient design), got {r}")
        if r > n:
            raise ValueError(f"rank must be <= n_samples={n}, got {r}")
    noise = check_positive("noise", noise, allow_zero=True)
    B = check_positive("label_bound", label_bound)
    rng = _check_random_state(random_state)

    Z = rng.standard_normal((n, r))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    mapping = rng.permutation(np.arange(d) % r)
    signs = np.where(rng.random(d) < 0.5, -1.0, 1.0)
    X = _onto_sphere(Z[:, mapping] * signs, R)

    # X = Zt D with D[k, j] = signs[j] [mapping[j] == k]; D D^T = diag(mult).
    first = np.argmax(mapping[None, :] == np.arange(r)[:, None], axis=1)
    Zt = X[:, first] * signs[first]
    mult = np.bincount(mapping, minlength=r).astype(np.float64)
    sigma = np.linalg.svd(Zt * np.sqrt(mult), compute_uv=False)
    if not sigma[-1] > sigma[0] * max(n, r) * _EPS:  # probability zero
        raise RuntimeError("the latent design is rank-deficient; use another random_state")  # pragma: no cover

    w_star = _unit_vector(rng, d, min(1.0, B / R))
    y = np.clip(X @ w_star + noise * rng.standard_normal(n), -B, B)
    v, *_ = np.linalg.lstsq(Zt, y, rcond=None)
    w_min = signs * v[mapping] / mult[mapping]
    f_star = 0.5 * float(np.mean((X @ w_min - y) ** 2))
    pl = float(sigma[-1] ** 2 / n)
    descr = (f"Synthetic PL least squares: {n} rows, {d} features, rank {r}; F(w) = mean 0.5 (<w, x> - y)^2 "
             f"satisfies 0.5 ||grad F||^2 >= {pl:.6g} (F - F*) and is not strongly convex.")
    return _finish(X, y, [f"x{j}" for j in range(d)], task="regression", data_norm=R, label_bound=B, descr=descr,
                   return_X_y=return_X_y, rank=r, pl_constant=pl, smoothness=float(sigma[0] ** 2 / n),
                   singular_values=sigma, coef_true=w_star, coef_min_norm=w_min, optimal_value=f_star,
                   loss=Squared())


# ------------------------------------------------------------------- strict saddle
def make_saddle_problem(n_samples: int = 8, n_features: int = 2, *, c: float = 1.5, data_norm: float = 1.0,
                        label_bound: float = 1.0, random_state=None, return_X_y: bool = False):
    """A Tukey-biweight regression for which ``w = 0`` is a strict saddle point.

    The objective is ``F(w) = (1/n) sum_i phi_c(<w, x_i> - y_i)`` with
    :class:`~dperm.problem.losses.Biweight` of constant ``c`` (``ERMProblem(X, y,
    Biweight(c))``). At ``w = 0`` the residuals are ``-y_i``, with
    ``phi'(0, y) = -y (1 - u)**2`` and ``phi''(0, y) = (1 - u)(1 - 5 u)``, ``u = (y/c)**2``:
    the curvature is negative exactly when ``c / sqrt 5 < |y| < c``.

    Draws, in this order:

    1. An orthonormal basis ``Q`` of ``R^d`` (QR of a Gaussian matrix, Haar
       distributed); ``q = Q[:, 0]``.
    2. ``m = n_samples / 2`` base rows: ``m_neg = m // 2`` rows ``+-data_norm q``
       (uniform signs) with labels ``+-|y|``, ``|y|`` uniform on
       ``[lo + (hi - lo)/4, lo + 3 (hi - lo)/4]``, ``lo = c / sqrt 5``,
       ``hi = min(c, label_bound)`` (strictly negative curvature); then
       ``m_pos = m - m_neg`` rows uniform on the sphere of radius ``data_norm`` of
       ``span(Q[:, 1:])`` with labels of uniform sign and ``|y|`` uniform on
       ``[0, c / (2 sqrt 5)]`` (curvature ``>= 0.95 * 0.75 > 0``).
    3. The data are the base rows followed by their mirror images ``(-x_i, y_i)``.

    Mirroring makes every gradient term cancel: ``grad F(0) = 0`` (up to rounding,
    ``~1e-17``), while the Hessian ``(1/n) sum_i phi''(0, y_i) x_i x_i^T`` has the
    eigenvalue ``(2 / n) data_norm**2 sum_neg phi''(0, y_i) < 0`` along ``q`` and
    positive ones on ``span(Q[:, 1:])`` (all of them when ``m_pos >= d - 1``; at least
    one always): ``0`` is a strict saddle, neither a minimum nor a maximum.

    Parameters
    ----------
    n_samples : int
        Even, ``>= 4``.
    n_features : int
        ``>= 2``.
    c : float
        Biweight constant, ``0 < c < sqrt(5) * label_bound`` (so that labels within
        ``label_bound`` reach the negative-curvature band).
    data_norm : float
        Row norm bound; every row has ``||x_i|| <= data_norm`` exactly.
    label_bound : float
        Bound on ``|y_i|``.
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or (X, y)
        ``data``, ``target``, ``loss`` (``Biweight(c)``), ``saddle_point`` (zeros),
        ``hessian_eigenvalues`` (ascending, of ``F`` at the saddle), ``escape_direction``
        (unit eigenvector of the smallest one), ``gradient`` (``grad F(0)``),
        ``objective_value`` (``F(0)``), ``feature_names``, ``task="regression"``,
        ``data_norm``, ``label_bound``, ``DESCR``.
    """
    n = _check_int("n_samples", n_samples, 4)
    if n % 2:
        raise ValueError(f"n_samples must be even (rows come in mirrored pairs), got {n}")
    d = _check_int("n_features", n_features, 2)
    R = check_positive("data_norm", data_norm)
    B = check_positive("label_bound", label_bound)
    c = check_positive("c", c)
    if not c < math.sqrt(5.0) * B:
        raise ValueError(
            f"c must be < sqrt(5) * label_bound = {math.sqrt(5.0) * B:.6g} so that labels within label_bound "
            f"reach the negative-curvature band (c / sqrt 5, c); got c={c:g}"
        )
    rng = _check_random_state(random_state)

    Q, T = np.linalg.qr(rng.standard_normal((d, d)))
    Q *= np.where(np.diag(T) < 0.0, -1.0, 1.0)
    m = n // 2
    m_neg = m // 2
    m_pos = m - m_neg
    lo, hi = c / math.sqrt(5.0), min(c, B)
    sign_neg = np.where(rng.random(m_neg) < 0.5, -1.0, 1.0)
    x_neg = sign_neg[:, None] * Q[:, 0][None, :]
    y_neg = np.where(rng.random(m_neg) < 0.5, -1.0, 1.0) * (lo + (hi - lo) * rng.uniform(0.25, 0.75, m_neg))
    U = rng.standard_normal((m_pos, d - 1))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    x_pos = U @ Q[:, 1:].T
    y_pos = np.where(rng.random(m_pos) < 0.5, -1.0, 1.0) * rng.uniform(0.0, 0.5 * lo, m_pos)
    base = _onto_sphere(np.vstack([x_neg, x_pos]), R)
    X = np.vstack([base, -base])
    y_base = np.concatenate([y_neg, y_pos])
    y = np.concatenate([y_base, y_base])

    loss = Biweight(c=c)
    zero = np.zeros(n)
    grad = X.T @ loss.derivative(zero, y) / n
    H = (X.T * loss.curvature(zero, y)) @ X / n
    eigenvalues, vectors = np.linalg.eigh(H)
    descr = (f"Synthetic strict saddle: biweight (c={c:g}) regression, {n} rows, {d} features; w = 0 has "
             f"gradient 0 and Hessian eigenvalues {np.array2string(eigenvalues, precision=4)}.")
    return _finish(X, y, [f"x{j}" for j in range(d)], task="regression", data_norm=R, label_bound=B, descr=descr,
                   return_X_y=return_X_y, loss=loss, saddle_point=np.zeros(d), hessian_eigenvalues=eigenvalues,
                   escape_direction=vectors[:, 0], gradient=grad,
                   objective_value=float(np.mean(loss.value(zero, y))))


# ------------------------------------------------------------------- classification
def make_classification_problem(n_samples: int, n_features: int, *, separation: float = 1.0,
                                data_norm: float = 1.0, intercept: bool = False, random_state=None,
                                return_X_y: bool = False):
    """Binary classification from a symmetric two-Gaussian mixture, for logistic tests.

    Draws, in this order (``k = n_features``, or ``n_features - 1`` with an intercept):

    1. ``mu``: uniform on the unit sphere of ``R^k``.
    2. ``y_i``: i.i.d. uniform on {-1, +1}.
    3. ``z_i = separation * y_i * mu + g_i`` with ``g_i ~ N(0, I_k)``.
    4. ``x_i = data_norm * z_i / ||z_i||`` (with an intercept: ``(z_i, 1)`` scaled the
       same way), so every row has norm ``data_norm`` (``<=`` exactly).

    The row scaling is positive, so the Bayes classifier is ``sign(<coef_true, x>)``
    with ``coef_true = mu`` (0 on the intercept) and Bayes accuracy
    ``Phi(separation)`` (``bayes_accuracy``; ``Phi`` the standard normal CDF).

    Parameters
    ----------
    n_samples, n_features : int
        Shape of ``X`` (``>= 1``; ``n_features >= 2`` with an intercept).
    separation : float
        Distance (``>= 0``) of each class mean from the origin in units of the noise
        standard deviation; ``0`` makes labels independent of ``X``.
    data_norm : float
        Row norm bound.
    intercept : bool
        Append an intercept column (last) before the row scaling.
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or (X, y)
        ``data``, ``target`` in {-1, +1}, ``coef_true`` (d,), ``bayes_accuracy``,
        ``loss`` (``Logistic()``), ``feature_names``, ``task="binary"``,
        ``target_names``, ``data_norm``, ``label_bound=1.0``, ``DESCR``.
    """
    n, d, R = _check_common(n_samples, n_features, data_norm, intercept)
    separation = check_positive("separation", separation, allow_zero=True)
    rng = _check_random_state(random_state)

    k = d - 1 if intercept else d
    mu = _unit_vector(rng, k)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    Z = separation * y[:, None] * mu[None, :] + rng.standard_normal((n, k))
    X, names = _design(rng, n, d, R, intercept, raw=Z)
    coef = np.concatenate([mu, np.zeros(d - k)])
    bayes = 0.5 * (1.0 + math.erf(separation / math.sqrt(2.0)))
    descr = (f"Synthetic classification: {n} rows, {d} features; two Gaussians N(+-{separation:g} mu, I) with "
             f"uniform labels in {{-1, +1}}, rows scaled to norm {R:g}; Bayes accuracy {bayes:.4f}.")
    return _finish(X, y, names, task="binary", data_norm=R, label_bound=1.0, descr=descr, return_X_y=return_X_y,
                   coef_true=coef, bayes_accuracy=bayes, loss=Logistic())
