"""Least squares by noisy sufficient statistics: SSP and AdaSSP (Wang 2018).

The squared loss ``(1/(2n)) ||y - X w||^2 + (mu/2) ||w||^2`` depends on the data only
through ``A = X^T X`` and ``b = X^T y``. Both algorithms release these two sums (and
AdaSSP also the smallest eigenvalue of A) with Gaussian noise, then solve the ridge
system ``(A~ + lambda I) w = b~``: a post-processing of the releases.

Replace-one sensitivities, from the declared bounds only
--------------------------------------------------------
Rows z = x (the intercept column included) with ``||z|| <= R`` (``data_norm``), labels
``|y| <= B`` (``label_bound``), per-example weights s in [0, 1]. Neighbours differ in
one record: ``A - A' = s z z^T - s' z' z'^T``, ``b - b' = s y z - s' y' z'``.

- ``A`` (Frobenius): ``||s z z^T - s' z' z'^T||_F^2 = s^2 ||z||^4 + s'^2 ||z'||^4 -
  2 s s' <z, z'>^2 <= 2 R^4``, so the sensitivity is ``sqrt(2) R^2`` (reached by two
  orthogonal rows of norm R), not the ``2 R^2`` of the triangle inequality. A is
  released as the vector ``v(A) = (A_ii, sqrt(2) A_ij (i < j))`` of its upper triangle
  with the off-diagonal entries scaled by sqrt(2): ``||v(M)|| = ||M||_F`` for symmetric
  M, so v has the same sensitivity ``sqrt(2) R^2``; the noisy triangle is unscaled and
  mirrored (public map). The noise matrix then has std sigma on the diagonal and
  ``sigma / sqrt(2)`` off it (half the variance of releasing the raw triangle at the
  same sensitivity).
- ``b``: ``||s y z - s' y' z'|| <= 2 R B`` (z' = -z, y' = y: tight).
- ``lambda_min(A)`` (AdaSSP): with C the common part, ``A = C + s z z^T`` and
  ``0 <= s z z^T <= R^2 I``, so by Weyl ``lambda_min(C) <= lambda_min(A) <=
  lambda_min(C) + R^2``, the same for A': the sensitivity is ``R^2`` (not ``2 R^2``).

Each release is a :func:`~dperm.privacy.events.gaussian_release`; the mechanism is their
composition, calibrated by the one accountant (Gaussian DP in closed form): the noise of
release k is ``x Delta_k / sqrt(share_k)``, so that ``mu^2 = sum_k share_k / x^2`` with
the shares summing to 1, and x is the smallest level certified within the budget.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..privacy.budget import PrivacyBudget
from ..privacy.events import composed, gaussian_release
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import start
from .registry import AutoRule, register

__all__ = ["sufficient_statistics", "adassp", "adassp_ridge", "noise_operator_bound", "gram_and_moment",
           "gram_sensitivity", "moment_sensitivity", "eigenvalue_sensitivity", "least_squares_problem"]

_BLOCK_ROWS = 1 << 15
_SQRT2 = math.sqrt(2.0)


def gram_sensitivity(data_norm: float) -> float:
    """Replace-one Frobenius sensitivity of ``X^T X``: ``sqrt(2) R^2`` (module notes)."""
    return _SQRT2 * data_norm * data_norm


def moment_sensitivity(data_norm: float, label_bound: float) -> float:
    """Replace-one L2 sensitivity of ``X^T y``: ``2 R B``."""
    return 2.0 * data_norm * label_bound


def eigenvalue_sensitivity(data_norm: float) -> float:
    """Replace-one sensitivity of ``lambda_min(X^T X)``: ``R^2`` (Weyl; module notes)."""
    return data_norm * data_norm


def least_squares_problem(problem, budget) -> bool:
    """The squared loss of a built-in problem, no constraint, no l1 part, delta > 0: the
    problems SSP and AdaSSP solve (public properties only)."""
    return (getattr(problem.loss, "name", None) == "squared" and not getattr(problem, "_custom", False)
            and not problem.constraint.bounded and problem.regularizer.is_smooth and budget.delta > 0)


def gram_and_moment(problem: ERMProblem) -> tuple[np.ndarray, np.ndarray]:
    """``(X^T S X, X^T S y)`` in float64 over the rows the model sees (clipped to the
    declared norm, the intercept column included), S the diagonal of the sample weights."""
    X, y = problem.X, np.asarray(problem.y, dtype=np.float64)
    weights = problem.sample_weight
    d = problem.n_features
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        weighted = X if weights is None else sp.diags(weights) @ X
        gram = np.asarray((X.T @ weighted).todense())
        moment = np.asarray(weighted.T @ y).ravel()
        return 0.5 * (gram + gram.T), moment
    gram, moment = np.zeros((d, d)), np.zeros(d)
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        block = np.asarray(X[lo:lo + _BLOCK_ROWS], dtype=np.float64)
        weighted = block if weights is None else block * weights[lo:lo + _BLOCK_ROWS, None]
        gram += block.T @ weighted
        moment += weighted.T @ y[lo:lo + _BLOCK_ROWS]
    return 0.5 * (gram + gram.T), moment


def _check_shares(shares, count: int) -> tuple[float, ...]:
    try:
        values = tuple(float(s) for s in shares)
    except TypeError:
        raise ValueError(f"shares must be a sequence of {count} positive numbers, got {shares!r}") from None
    if len(values) != count or not all(math.isfinite(s) and s > 0 for s in values):
        raise ValueError(f"shares must be a sequence of {count} positive numbers, got {shares!r}")
    total = sum(values)
    return tuple(s / total for s in values)


def _calibrated_releases(sensitivities, shares, budget: PrivacyBudget, secure: bool, label: str):
    """The composition of one Gaussian release per sensitivity, release k with noise
    ``x Delta_k / sqrt(share_k)``, calibrated to ``budget`` and charged. Returns the
    calibration and the list of release events."""

    def make(x):
        return composed([gaussian_release(x * delta / math.sqrt(share), delta, secure=secure)
                         for delta, share in zip(sensitivities, shares)])

    calibration = calibrate_and_charge(make, budget, label)
    event = calibration.event
    leaves = list(event.events) if len(sensitivities) > 1 else [event]
    return calibration, leaves


def _upper(matrix: np.ndarray) -> np.ndarray:
    """The isometric vector of a symmetric matrix: diagonal, then sqrt(2) times the
    strict upper triangle (row-major)."""
    d = matrix.shape[0]
    rows, cols = np.triu_indices(d, 1)
    return np.concatenate([np.diag(matrix), _SQRT2 * matrix[rows, cols]])


def _symmetric(vector: np.ndarray, d: int) -> np.ndarray:
    """The symmetric matrix of :func:`_upper`'s vector (public map)."""
    out = np.diag(vector[:d]).astype(np.float64)
    rows, cols = np.triu_indices(d, 1)
    off = vector[d:] / _SQRT2
    out[rows, cols] = off
    out[cols, rows] = off
    return out


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs``, the least-norm least-squares solution when it is singular
    (post-processing of the releases: any deterministic map is private)."""
    try:
        w = np.linalg.solve(matrix, rhs)
        if np.all(np.isfinite(w)):
            return w
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


def _psd(matrix: np.ndarray) -> np.ndarray:
    """The projection of a symmetric matrix onto the positive semidefinite cone."""
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.maximum(values, 0.0)) @ vectors.T


@register(
    "sufficient_statistics",
    setting="least squares (squared loss, ridge), unconstrained",
    guarantee="(epsilon, delta)",
    source="Wang 2018, Alg. 1 (SSP); after Vu and Slavkovic 2009, Dwork, Talwar, Thakurta, Zhang 2014",
    paper="Wang 2018 (UAI), Revisiting differentially private linear regression",
    requires=("squared_loss", "unconstrained", "smooth_regularizer", "approximate_dp"),
    gradient_complexity="one pass: X^T X and X^T y (n d^2), a d x d solve",
    summary="release X^T X and X^T y with Gaussian noise, solve the ridge system",
)
def sufficient_statistics(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    ridge="auto",
    shares=(0.5, 0.5),
    failure_probability: float = 0.05,
) -> PrivateFit:
    """Sufficient-statistics perturbation (SSP) for ridge regression.

    Releases ``A~ = X^T X + E`` (E symmetric Gaussian, through the isometric upper
    triangle; sensitivity ``sqrt(2) R^2``) and ``b~ = X^T y + e`` (sensitivity ``2 R B``),
    projects ``A~`` onto the positive semidefinite cone and returns
    ``(A~_+ + (n mu + ridge) I)^-1 b~``, the minimizer of the noisy ridge objective
    (least-norm solution when singular). Everything after the two releases is
    post-processing. The paper's SSP has no ridge (``ridge=0``), which is unstable
    when ``X^T X`` is ill-conditioned against the noise; the default ridge is the
    high-probability bound on the noise's operator norm (:func:`noise_operator_bound`),
    the ridge AdaSSP takes when its eigenvalue bound is 0 -- a function of public
    inputs only.

    Parameters
    ----------
    problem : ERMProblem
        Squared loss, no constraint, regularizer None or ``("l2", mu)`` (ridge
        ``n mu``); rows of norm <= ``data_norm`` = R (intercept column included),
        labels ``|y| <= label_bound`` = B (both clipped by the problem).
    budget : PrivacyBudget
        ``delta > 0``: (epsilon, delta)-DP under replace-one, by the Gaussian DP
        composition of the two releases.
    rng : None, int or numpy.random.Generator
        ``None``: the floating-point-safe sampler (:func:`dperm.privacy.mechanisms.release`);
        a seed or a Generator: NumPy's reproducible noise, for experiments.
    ridge : "auto" or float, default "auto"
        Extra public ridge added to ``n mu``; ``"auto"``: ``noise_operator_bound(sigma_A,
        d, failure_probability)`` (sharp rule).
    shares : pair of positive numbers, default (1/2, 1/2)
        Shares of the Gaussian-DP budget ``mu^2`` for ``X^T X`` and ``X^T y``
        (normalized to sum 1).
    failure_probability : float, default 0.05
        rho of the automatic ridge.

    Returns
    -------
    PrivateFit
        ``info["ridge"]``: the ridge used (public).

    References
    ----------
    Yu-Xiang Wang. Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain. UAI 2018, Algorithm 1 (SSP);
    Vu and Slavkovic 2009; Dwork, Talwar, Thakurta, Zhang 2014 (Analyze Gauss).
    """
    secure = secure_randomness(rng)
    rng = start("sufficient_statistics", problem, budget, rng)
    rho = float(failure_probability)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"failure_probability must be in (0, 1), got {failure_probability!r}")
    automatic = isinstance(ridge, str) and ridge == "auto"
    if not automatic:
        if isinstance(ridge, (str, bool)):
            raise ValueError(f"ridge must be 'auto' or a finite number >= 0, got {ridge!r}")
        ridge = float(ridge)
        if not (math.isfinite(ridge) and ridge >= 0):
            raise ValueError(f"ridge must be 'auto' or a finite number >= 0, got {ridge}")
    shares = _check_shares(shares, 2)
    R, B, n, d = problem.data_norm, problem.label_bound, problem.n_samples, problem.n_features
    calibration, (gram_event, moment_event) = _calibrated_releases(
        (gram_sensitivity(R), moment_sensitivity(R, B)), shares, budget, secure, "sufficient_statistics")
    if automatic:  # public: the calibrated noise, d and rho
        ridge = noise_operator_bound(gram_event.sigma, d, rho)
    gram, moment = gram_and_moment(problem)  # after the budget is charged
    noisy_gram = _symmetric(release(rng, _upper(gram), gram_event), d)
    noisy_moment = release(rng, moment, moment_event)
    total_ridge = n * problem.regularizer.strong_convexity + ridge
    coef = _solve(_psd(noisy_gram) + total_ridge * np.eye(d), noisy_moment)
    return PrivateFit(coef=coef, privacy_spent=calibration.spent, algorithm="sufficient_statistics",
                      event=calibration.event,
                      hyperparameters={"ridge": ridge, "shares": shares, "failure_probability": rho},
                      info={"ridge": total_ridge})


def noise_operator_bound(sigma: float, d: int, failure_probability: float, rule: str = "sharp") -> float:
    """A bound t with ``P(||E||_op > t) <= rho`` for the symmetric noise E of the Gram
    release (diagonal std sigma, off-diagonal std ``sigma / sqrt(2)``: the isometric
    triangle's noise, mirrored).

    ``"sharp"``: ``sigma (sqrt(2 d) + sqrt(2 log(2 / rho)))``. E is ``sigma / sqrt(2)``
    times a GOE matrix; ``u^T E u`` has variance exactly ``sigma^2`` for every unit u, so
    Borell-TIS puts ``lambda_max(E)`` within ``sigma sqrt(2 log(2/rho))`` of its mean
    except with probability ``rho / 2``, and the mean is at most ``2 sqrt(d) sigma /
    sqrt(2)`` (Sudakov-Fernique against ``2 <g, u> sigma / sqrt(2)``); the same for
    ``-lambda_min(E)``. ``"paper"``: Wang 2018's ``sigma sqrt(d log(2 d^2 / rho))``
    (a union bound, about twice as large at d = 50)."""
    if rule == "sharp":
        return sigma * (math.sqrt(2.0 * d) + math.sqrt(2.0 * math.log(2.0 / failure_probability)))
    if rule == "paper":
        return sigma * math.sqrt(d * math.log(2.0 * d * d / failure_probability))
    raise ValueError(f"noise_bound must be 'sharp' or 'paper', got {rule!r}")


def adassp_ridge(noisy_min_eigenvalue: float, gram_sigma: float, eigenvalue_sigma: float, d: int, delta: float,
                 failure_probability: float, rule: str = "sharp") -> float:
    """AdaSSP's ridge (Wang 2018, Algorithm 2, lines 2-3) from the released eigenvalue:
    the private lower bound ``lambda~ = max(lambda_min + sigma_lambda Z - sigma_lambda
    sqrt(log(6/delta)), 0)`` (``noisy_min_eigenvalue`` is ``lambda_min + sigma_lambda Z``),
    then ``lambda = max(0, t - lambda~)`` with t the bound on the Gram noise's operator
    norm (:func:`noise_operator_bound`; the paper's is ``sigma_A sqrt(d log(2 d^2 / rho))``):
    just enough ridge that ``A~ + lambda I`` is positive definite with probability
    ``1 - rho``."""
    lower = max(noisy_min_eigenvalue - eigenvalue_sigma * math.sqrt(math.log(6.0 / delta)), 0.0)
    return max(0.0, noise_operator_bound(gram_sigma, d, failure_probability, rule) - lower)


@register(
    "adassp",
    setting="least squares (squared loss, ridge), unconstrained",
    guarantee="(epsilon, delta)",
    source="Wang 2018, Alg. 2 (AdaSSP)",
    paper="Wang 2018 (UAI), Revisiting differentially private linear regression",
    requires=("squared_loss", "unconstrained", "smooth_regularizer", "approximate_dp"),
    gradient_complexity="one pass: X^T X and X^T y (n d^2), an eigenvalue and a d x d solve",
    summary="noisy X^T X and X^T y with a ridge chosen by a private bound on lambda_min(X^T X)",
    auto=AutoRule(0, least_squares_problem,
                  "least squares without a constraint, delta > 0: AdaSSP (Wang 2018), the catalogue's "
                  "adaptive solver of the exact squared loss (docs/results.md, regression)"),
)
def adassp(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    failure_probability: float = 0.05,
    shares=(1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0),
    noise_bound: str = "sharp",
) -> PrivateFit:
    """AdaSSP: sufficient-statistics perturbation with an adaptive ridge (Wang 2018, Alg. 2).

    Three Gaussian releases, composed: ``lambda_min(X^T X)`` (sensitivity ``R^2``),
    ``X^T X`` (isometric upper triangle, ``sqrt(2) R^2``) and ``X^T y`` (``2 R B``).
    The ridge ``lambda`` is set from the released eigenvalue by :func:`adassp_ridge` (the
    paper's lines 2-3 with its noise standard deviations replaced by the calibrated
    ones); the output is ``(A~ + (lambda + n mu) I)^-1 b~`` (least-norm solution if
    singular). With the problem's ``("l2", mu)`` the ridge ``n mu`` is added (mu = 0:
    the paper's algorithm).

    Parameters
    ----------
    problem : ERMProblem
        Squared loss, no constraint, regularizer None or ``("l2", mu)``; rows of norm
        <= ``data_norm`` (intercept column included), ``|y| <= label_bound``.
    budget : PrivacyBudget
        ``delta > 0``: (epsilon, delta)-DP under replace-one.
    rng : None, int or numpy.random.Generator
        ``None``: the floating-point-safe sampler; a seed or Generator: NumPy's noise.
    failure_probability : float, default 0.05
        rho of the paper: the ridge makes ``A~ + lambda I`` well conditioned except with
        this probability (utility only; the privacy holds always).
    shares : three positive numbers, default equal
        Shares of ``mu^2`` (Gaussian DP) of the eigenvalue, ``X^T X`` and ``X^T y``
        releases; equal shares are the paper's split of (epsilon, delta) in three.

    Returns
    -------
    PrivateFit
        ``info["ridge"]``: ``lambda + n mu`` (a post-processing of the eigenvalue release).

    References
    ----------
    Yu-Xiang Wang. Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain. UAI 2018, Algorithm 2.
    """
    secure = secure_randomness(rng)
    rng = start("adassp", problem, budget, rng)
    rho = float(failure_probability)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"failure_probability must be in (0, 1), got {failure_probability!r}")
    shares = _check_shares(shares, 3)
    noise_operator_bound(1.0, 1, 0.5, noise_bound)  # a bad rule fails before the budget is charged
    R, B, n, d = problem.data_norm, problem.label_bound, problem.n_samples, problem.n_features
    calibration, (eig_event, gram_event, moment_event) = _calibrated_releases(
        (eigenvalue_sensitivity(R), gram_sensitivity(R), moment_sensitivity(R, B)), shares, budget, secure, "adassp")
    gram, moment = gram_and_moment(problem)  # after the budget is charged
    min_eigenvalue = float(np.linalg.eigvalsh(gram)[0])
    noisy_eigenvalue = float(release(rng, np.array([min_eigenvalue]), eig_event)[0])
    lam = adassp_ridge(noisy_eigenvalue, gram_event.sigma, eig_event.sigma, d, budget.delta, rho, noise_bound)
    noisy_gram = _symmetric(release(rng, _upper(gram), gram_event), d)
    noisy_moment = release(rng, moment, moment_event)
    total_ridge = lam + n * problem.regularizer.strong_convexity
    coef = _solve(noisy_gram + total_ridge * np.eye(d), noisy_moment)
    return PrivateFit(coef=coef, privacy_spent=calibration.spent, algorithm="adassp", event=calibration.event,
                      hyperparameters={"failure_probability": rho, "shares": shares, "noise_bound": noise_bound},
                      info={"ridge": total_ridge})
