"""The bounds of Zhang, Zheng, Mou, Wang 2017 (IJCAI): output-perturbation GD, RRPSGD.

See :mod:`dperm.theory` for the conventions."""

from __future__ import annotations

import math

from .._validation import check_positive
from ._common import _at_least_one, _d, _delta, _lg, _n, _pos, _probability, _strong_convexity  # noqa: F401

__all__ = ['gd_output_perturbation_strongly_convex_excess_risk_bound', 'gd_output_perturbation_strongly_convex_explicit_bound', 'gd_output_perturbation_convex_excess_risk_bound', 'gd_output_perturbation_gradient_complexity', 'output_perturbation_excess_risk_bound', 'rrpsgd_gradient_norm_bound', 'rrpsgd_gradient_norm_explicit_bound', 'rrpsgd_convex_excess_risk_bound', 'rrpsgd_gradient_complexity']

# Zhang, Zheng, Mou, Wang 2017 
# --------------------------------------------------------------------------------------


def gd_output_perturbation_strongly_convex_excess_risk_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    strong_convexity: float,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
) -> float:
    """Output-perturbation gradient descent ([ZZMW17] Algorithm 1), strongly convex smooth F.

    [ZZMW17] Theorem 2 (Table 1, "mu-S.C." rows). Order of magnitude, constant 1::

        epsilon-DP (delta = 0):  beta L^2 d^2           / (n^2 epsilon^2 mu^2)
        (epsilon, delta)-DP:     beta L^2 d log(1/delta) / (n^2 epsilon^2 mu^2)

    i.e. ``kappa d L^2 / (n^2 eps^2 mu)`` with kappa = beta/mu for (eps, delta).

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP (Laplace-type noise), else in (0, 1) (Gaussian noise).
    strong_convexity : float
        mu (> 0, <= smoothness).
    lipschitz : float, default 1
        L, on the ball of radius 2D holding the minimizer.
    smoothness : float, default 1
        beta.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in [0, 1), non-positive constants or
        mu > beta.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    mu, beta = _strong_convexity(strong_convexity, smoothness)
    L = _pos("lipschitz", lipschitz)
    dim = d**2 if delta == 0 else d * _lg(1 / delta)
    return beta * L**2 * dim / (n**2 * epsilon**2 * mu**2)


def gd_output_perturbation_strongly_convex_explicit_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    strong_convexity: float,
    iterations: float,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    w_norm: float = 1.0,
) -> float:
    """[ZZMW17] Theorem 2 with the explicit constants of its proof, for T iterations.

    The proof sketch of Theorem 2 (eta = 1/(mu + beta), sensitivity
    ``Delta = 5 L (mu + beta) / (n mu beta)`` from Lemma 3, start at 0, ||w_hat|| <= D)::

        (beta/2) exp(-2 mu beta T / (mu + beta)^2) D^2 + noise

        epsilon-DP:  noise = 25 L^2 (mu + beta)^2 (d + 1) d      / (n^2 eps^2 mu^2 beta)
        (eps,delta): noise = 25 L^2 (mu + beta)^2 d log(2/delta) / (n^2 eps^2 mu^2 beta)

    The epsilon-DP noise term is the paper's. For (epsilon, delta) the paper says "the
    proof is exactly the same"; the term is (beta/2) E||z||^2 for the Gaussian of
    Algorithm 1 line 7 (variance ``2 log(2/delta) Delta^2 / eps^2`` per coordinate).
    Natural logarithms, no flooring.

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    strong_convexity : float
        mu (> 0, <= smoothness).
    iterations : float
        T >= 0, the number of gradient-descent steps.
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        beta.
    w_norm : float, default 1
        D, a bound on ||w_hat|| (the distance from the start w_0 = 0).

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On invalid inputs, a negative T or mu > beta.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    mu, beta = _strong_convexity(strong_convexity, smoothness)
    L, D = _pos("lipschitz", lipschitz), _pos("w_norm", w_norm)
    T = check_positive("iterations", iterations, allow_zero=True)
    optimisation = 0.5 * beta * math.exp(-2 * mu * beta * T / (mu + beta) ** 2) * D**2
    dim = (d + 1) * d if delta == 0 else d * math.log(2 / delta)
    noise = 25 * L**2 * (mu + beta) ** 2 * dim / (n**2 * epsilon**2 * mu**2 * beta)
    return optimisation + noise


def gd_output_perturbation_convex_excess_risk_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    w_norm: float = 1.0,
) -> float:
    """Output-perturbation gradient descent ([ZZMW17] Algorithm 1), convex smooth F.

    [ZZMW17] Theorem 3. Order of magnitude, constant 1, exactly as printed (||w_hat||^2
    inside the power)::

        epsilon-DP (delta = 0):  [sqrt(beta) L d ||w_hat||^2 / (n epsilon)]^{2/3}
        (epsilon, delta)-DP:     [L sqrt(beta d log(1/delta)) ||w_hat||^2 / (n epsilon)]^{2/3}

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        beta.
    w_norm : float, default 1
        ||w_hat|| (<= D).

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in [0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    L, beta, D = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness), _pos("w_norm", w_norm)
    if delta == 0:
        inner = math.sqrt(beta) * L * d * D**2 / (n * epsilon)
    else:
        inner = L * math.sqrt(beta * d * _lg(1 / delta)) * D**2 / (n * epsilon)
    return inner ** (2.0 / 3.0)


def gd_output_perturbation_gradient_complexity(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    strong_convexity: float = 0.0,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    w_norm: float = 1.0,
) -> float:
    """Gradient complexity n T of output-perturbation GD, T from [ZZMW17] Theorems 2 and 3.

    Order of magnitude, constant 1 (Table 1 lists the runtime ``O(n d log(n eps / d))``,
    i.e. this times the cost d of a gradient, with kappa constant)::

        strongly convex, eps-DP:  n (mu^2+beta^2)/(mu beta) log(mu^2 n^2 eps^2 D^2 / (L^2 d^2))
        strongly convex, (e,d):   n (mu^2+beta^2)/(mu beta) log(mu^2 n^2 eps^2 D^2 / (L^2 d log(1/delta)))
        convex, eps-DP:           n [beta^2 n^2 eps^2 D^2 / (L^2 d^2)]^{1/3}
        convex, (e,d):            n [beta^2 n^2 eps^2 D^2 / (L^2 d log(1/delta))]^{1/3}

    (T is at least 1.)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    strong_convexity : float, default 0
        mu; 0 for the convex case (Theorem 3), else <= smoothness (Theorem 2).
    lipschitz, smoothness, w_norm : float, default 1
        L, beta and D.

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid inputs or mu > beta.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    L, D = _pos("lipschitz", lipschitz), _pos("w_norm", w_norm)
    mu = check_positive("strong_convexity", strong_convexity, allow_zero=True)
    dim = d**2 if delta == 0 else d * _lg(1 / delta)
    if mu > 0:
        mu, beta = _strong_convexity(mu, smoothness)
        steps = (mu**2 + beta**2) / (mu * beta) * _lg(mu**2 * n**2 * epsilon**2 * D**2 / (L**2 * dim))
    else:
        beta = _pos("smoothness", smoothness)
        steps = (beta**2 * n**2 * epsilon**2 * D**2 / (L**2 * dim)) ** (1.0 / 3.0)
    return n * max(1.0, steps)


def output_perturbation_excess_risk_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    strong_convexity: float,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
) -> float:
    """Output perturbation of the (exact) minimizer of a strongly convex smooth F.

    [ZZMW17] Theorem 2 in the limit T -> infinity, where gradient descent reaches w_hat:
    the optimisation term vanishes and Lemma 3's sensitivity holds for every T, so the
    noise term alone remains. The same order (``kappa d / (n^2 eps^2)``) is what Wang, Ye, Xu 2017
    compares DP-SVRG against for output perturbation. Order of magnitude, constant 1::

        epsilon-DP (delta = 0):  beta L^2 d^2           / (n^2 epsilon^2 mu^2)
        (epsilon, delta)-DP:     beta L^2 d log(1/delta) / (n^2 epsilon^2 mu^2)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    strong_convexity : float
        mu (> 0, <= smoothness).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        beta.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On invalid inputs or mu > beta.
    """
    return gd_output_perturbation_strongly_convex_excess_risk_bound(
        n, d, epsilon, delta, strong_convexity=strong_convexity, lipschitz=lipschitz, smoothness=smoothness
    )


def rrpsgd_gradient_norm_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    initial_gap: float = 1.0,
) -> float:
    """RRPSGD ([ZZMW17] Algorithm 2), smooth non-convex loss: E||grad F(w_priv)||^2.

    [ZZMW17] Theorem 5 with ``eta_k = min(1/beta, D_F/(sigma n))`` (Table 1 "Nonconvex":
    ``O(sqrt(d) log(n/delta) / (n eps))``). Order of magnitude, constant 1::

        beta L sqrt(d log(n/delta) log(1/delta)) D_F / (n epsilon),
        D_F = sqrt(2 (F(w_0) - F*) / beta)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0; the privacy theorem needs
        epsilon <= 1), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        beta.
    initial_gap : float, default 1
        F(w_0, S) - F*.

    Returns
    -------
    float
        The bound on the expected squared gradient norm.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, beta = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    D_F = math.sqrt(2 * _pos("initial_gap", initial_gap) / beta)
    return beta * L * math.sqrt(d * _lg(n / delta) * _lg(1 / delta)) * D_F / (n * epsilon)


def rrpsgd_gradient_norm_explicit_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    initial_gap: float = 1.0,
) -> float:
    """[ZZMW17] Theorem 5, the explicit inequality, with the theorem's step size.

    With ``K = n^2`` rounds, ``sigma^2 = 4 L^2 + 4 d L^2 log(3n/delta) log(2/delta) / eps^2``,
    ``D_F = sqrt(2 (F(w_0) - F*) / beta)`` and the constant step
    ``eta = min(1/beta, D_F / (sigma n))``::

        E||grad F(w_priv)||^2 <= beta (D_F^2 + sigma^2 K eta^2) / (K (2 eta - beta eta^2))

    Natural logarithms, no flooring.

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        beta.
    initial_gap : float, default 1
        F(w_0, S) - F*.

    Returns
    -------
    float
        The bound on the expected squared gradient norm.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, beta = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    D_F = math.sqrt(2 * _pos("initial_gap", initial_gap) / beta)
    sigma2 = 4 * L**2 + 4 * d * L**2 * math.log(3 * n / delta) * math.log(2 / delta) / epsilon**2
    K = n**2
    eta = min(1 / beta, D_F / (math.sqrt(sigma2) * n))
    return beta * (D_F**2 + sigma2 * K * eta**2) / (K * (2 * eta - beta * eta**2))


def rrpsgd_convex_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0, w_norm: float = 1.0
) -> float:
    """RRPSGD ([ZZMW17] Algorithm 2) on a convex loss: excess empirical risk.

    [ZZMW17] Theorem 5, convex case (||w_hat|| <= D). Order of magnitude, constant 1::

        L sqrt(d log(n/delta) log(1/delta)) D / (n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    w_norm : float, default 1
        D, bound on ||w_hat||.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, D = _pos("lipschitz", lipschitz), _pos("w_norm", w_norm)
    return L * math.sqrt(d * _lg(n / delta) * _lg(1 / delta)) * D / (n * epsilon)


def rrpsgd_gradient_complexity(n: float) -> float:
    """Gradient complexity of RRPSGD, [ZZMW17] Algorithm 2: at most ``n^2`` rounds of one gradient.

    (Table 1 runtime ``O(n^2 d)``.)

    Parameters
    ----------
    n : float
        Number of examples (>= 1).

    Returns
    -------
    float
        ``n^2``.

    Raises
    ------
    ValueError
        If n < 1.
    """
    n = _n(n)
    return n**2


# --------------------------------------------------------------------------------------
