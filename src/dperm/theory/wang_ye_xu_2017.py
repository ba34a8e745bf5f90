"""The bounds of Wang, Ye, Xu 2017 (NeurIPS): DP-SVRG, DP-SVRG++, DP-AccMD, DP-GD (PL and non-convex).

See :mod:`dperm.theory` for the conventions."""

from __future__ import annotations

import math

from ._common import _at_least_one, _d, _delta, _lg, _n, _pos, _probability, _strong_convexity  # noqa: F401

__all__ = ['dp_svrg_excess_risk_bound', 'dp_svrg_gradient_complexity', 'dp_svrg_pp_excess_risk_bound', 'dp_svrg_pp_gradient_complexity', 'dp_accmd_excess_risk_bound', 'dp_accmd_gradient_complexity', 'dp_gd_pl_excess_risk_bound', 'dp_gd_pl_gradient_complexity', 'dp_gd_nonconvex_gradient_norm_bound', 'dp_gd_nonconvex_gradient_complexity']

# Wang, Ye, Xu 2017 
# --------------------------------------------------------------------------------------


def dp_svrg_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, strong_convexity: float, lipschitz: float = 1.0
) -> float:
    """DP-SVRG ([WYX17] Algorithm 1), strongly convex F, (epsilon, delta)-DP.

    [WYX17] Theorem 4.2, eq. (5) (the "this paper" row of Table 1). Order of magnitude,
    constant 1, log factors as stated (the theorem's Õ hides further insignificant logs)::

        d log(n) G^2 log(1/delta) / (n^2 epsilon^2 mu)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    strong_convexity : float
        mu (> 0), strong convexity of F^r.
    lipschitz : float, default 1
        G, the Lipschitz constant of f.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1), mu <= 0 or G <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    mu, G = _pos("strong_convexity", strong_convexity), _pos("lipschitz", lipschitz)
    return d * _lg(n) * G**2 * _lg(1 / delta) / (n**2 * epsilon**2 * mu)


def dp_svrg_gradient_complexity(
    n: float, d: float, epsilon: float, *, strong_convexity: float, smoothness: float = 1.0
) -> float:
    """Gradient complexity of DP-SVRG, [WYX17] Theorem 4.2 (Table 1).

    Order of magnitude, constant 1::

        (n + beta/mu) log(n epsilon mu / d)

    (T = O(log(...)) epochs of one full gradient plus m = Theta(beta/mu) inner steps;
    the epsilon inside the log was dropped by the seed's extraction and is restored
    here from T in the theorem.)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0).
    strong_convexity : float
        mu (> 0, <= smoothness).
    smoothness : float, default 1
        beta (L in the paper).

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid n, d, epsilon, or mu > beta.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    mu, beta = _strong_convexity(strong_convexity, smoothness)
    return (n + beta / mu) * _lg(n * epsilon * mu / d)


def dp_svrg_pp_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0
) -> float:
    """DP-SVRG++ ([WYX17] Algorithm 2), convex (not necessarily strongly convex), (eps, delta)-DP.

    [WYX17] Theorem 4.4, eq. (7) (Table 2). Order of magnitude, constant 1 (the distance
    from the start to the minimizer is hidden in the O, i.e. taken as 1)::

        G sqrt(d log(1/delta)) / (n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        G.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or G <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    G = _pos("lipschitz", lipschitz)
    return G * math.sqrt(d * _lg(1 / delta)) / (n * epsilon)


def dp_svrg_pp_gradient_complexity(n: float, d: float, epsilon: float, *, smoothness: float = 1.0) -> float:
    """Gradient complexity of DP-SVRG++, [WYX17] Theorem 4.4 (Table 2).

    Order of magnitude, constant 1::

        n epsilon beta / sqrt(d) + n log(n epsilon / d)

    (SVRG++ needs ``n log(1/a) + beta/a`` gradients for accuracy ``a ~ sqrt(d)/(n eps)``;
    the seed's extraction dropped the epsilons, restored here.)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0).
    smoothness : float, default 1
        beta (L in the paper).

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid n, d, epsilon or smoothness.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    beta = _pos("smoothness", smoothness)
    return n * epsilon * beta / math.sqrt(d) + n * _lg(n * epsilon / d)


def dp_accmd_excess_risk_bound(
    n: float,
    epsilon: float,
    delta: float,
    *,
    gaussian_width: float,
    diameter: float = 1.0,
    lipschitz: float = 1.0,
    bregman: float = 1.0,
) -> float:
    """DP-AccMD ([WYX17] Algorithm 3), convex smooth loss over a symmetric convex C.

    [WYX17] Theorem 5.4 (Table 3): dimension-free, through the Gaussian width G_C of C.
    Order of magnitude, constant 1::

        sqrt(B_w(x*, x0)) sqrt(G_C^2 + ||C||^2) G sqrt(log(1/delta)) / (n epsilon)

    Parameters
    ----------
    n, epsilon, delta : float
        Examples (>= 1), epsilon (> 0), delta in (0, 1).
    gaussian_width : float
        G_C = E sup_{w in C} <b, w>, b ~ N(0, I) (``~ sqrt(d) R`` for the l2 ball of
        radius R, ``~ sqrt(2 log d) R`` for the l1 ball).
    diameter : float, default 1
        ||C||_2.
    lipschitz : float, default 1
        G.
    bregman : float, default 1
        B_w(x*, x0), the Bregman divergence of the mirror map between x* and the start.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, epsilon = _n(n), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    gc, C = _pos("gaussian_width", gaussian_width), _pos("diameter", diameter)
    G, B = _pos("lipschitz", lipschitz), _pos("bregman", bregman)
    return math.sqrt(B) * math.sqrt(gc**2 + C**2) * G * math.sqrt(_lg(1 / delta)) / (n * epsilon)


def dp_accmd_gradient_complexity(
    n: float, epsilon: float, *, gaussian_width: float, diameter: float = 1.0, smoothness: float = 1.0
) -> float:
    """Gradient complexity of DP-AccMD, [WYX17] Theorem 5.4 (Table 3).

    Order of magnitude, constant 1::

        n^{1.5} sqrt(epsilon beta) / (G_C^2 + ||C||^2)^{1/4}

    Parameters
    ----------
    n, epsilon : float
        Examples (>= 1), epsilon (> 0).
    gaussian_width : float
        G_C (> 0).
    diameter : float, default 1
        ||C||_2.
    smoothness : float, default 1
        beta (L in the paper).

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid n, epsilon or a non-positive constant.
    """
    n, epsilon = _n(n), _pos("epsilon", epsilon)
    gc, C = _pos("gaussian_width", gaussian_width), _pos("diameter", diameter)
    beta = _pos("smoothness", smoothness)
    return n**1.5 * math.sqrt(epsilon * beta) / (gc**2 + C**2) ** 0.25


def dp_gd_pl_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0
) -> float:
    """DP-GD ([WYX17] Algorithm 4), F satisfying the Polyak-Lojasiewicz condition.

    [WYX17] Theorem 6.2, eq. (13). Order of magnitude, constant 1, log factors as stated
    (the Õ in T hides L and mu; the bound as printed has no mu, so none is applied)::

        G^2 d log^2(n) log(1/delta) / (n^2 epsilon^2)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        G.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or G <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    G = _pos("lipschitz", lipschitz)
    return G**2 * d * _lg(n) ** 2 * _lg(1 / delta) / (n**2 * epsilon**2)


def dp_gd_pl_gradient_complexity(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0
) -> float:
    """Gradient complexity of DP-GD under PL, [WYX17] Theorem 6.2: n full gradients per step.

    ``T = Õ(log(n^2 epsilon^2 / (d G^2 log(1/delta))))`` steps of n gradients each; order
    of magnitude, constant 1::

        n log(n^2 epsilon^2 / (d G^2 log(1/delta)))

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        G.

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or G <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    G = _pos("lipschitz", lipschitz)
    return n * _lg(n**2 * epsilon**2 / (d * G**2 * _lg(1 / delta)))


def dp_gd_nonconvex_gradient_norm_bound(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0, smoothness: float = 1.0
) -> float:
    """DP-GD ([WYX17] Algorithm 4, random iterate), smooth non-convex loss: E||grad F||^2.

    [WYX17] Theorem 6.3, eq. (14). Bound on the expected *squared gradient norm*, order of
    magnitude, constant 1 (F(x_0) - F* hidden in the O)::

        sqrt(beta) G sqrt(d log(1/delta)) / (n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        G.
    smoothness : float, default 1
        beta (L in the paper).

    Returns
    -------
    float
        The bound on E||grad F(x_m, D)||^2.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    G, beta = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    return math.sqrt(beta) * G * math.sqrt(d * _lg(1 / delta)) / (n * epsilon)


def dp_gd_nonconvex_gradient_complexity(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0, smoothness: float = 1.0
) -> float:
    """Gradient complexity of DP-GD, non-convex case, [WYX17] Theorem 6.3.

    ``T = O(sqrt(beta) n epsilon / (sqrt(d log(1/delta)) G))`` steps (at least one) of n
    gradients each; order of magnitude, constant 1::

        n max(1, sqrt(beta) n epsilon / (G sqrt(d log(1/delta))))

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension p (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        G.
    smoothness : float, default 1
        beta.

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    G, beta = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    return n * max(1.0, math.sqrt(beta) * n * epsilon / (G * math.sqrt(d * _lg(1 / delta))))


# --------------------------------------------------------------------------------------
