"""The bounds of Bassily, Smith, Thakurta 2014 (FOCS): noisy SGD, exponential mechanism, localization, objective perturbation, lower bounds.

See :mod:`dperm.theory` for the conventions."""

from __future__ import annotations

import math

from ._common import _at_least_one, _d, _delta, _lg, _n, _pos, _probability, _strong_convexity  # noqa: F401

__all__ = ['bst14_noisy_sgd_convex_excess_risk_bound', 'bst14_noisy_sgd_strongly_convex_excess_risk_bound', 'bst14_exponential_mechanism_excess_risk_bound', 'bst14_localization_excess_risk_bound', 'bst14_objective_perturbation_convex_excess_risk_bound', 'bst14_objective_perturbation_strongly_convex_excess_risk_bound', 'bst14_lower_bound_convex', 'bst14_lower_bound_strongly_convex', 'dp_sgd_gradient_complexity', 'noisy_gd_gradient_complexity']

# Bassily, Smith, Thakurta 2014 
# --------------------------------------------------------------------------------------


def bst14_noisy_sgd_convex_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, lipschitz: float = 1.0, diameter: float = 1.0
) -> float:
    """Noisy SGD (BST14 Algorithm 1), convex Lipschitz loss, (epsilon, delta)-DP.

    [BST14] Theorem 2.4 (1), Table 1 "(epsilon, delta)-DP, L-Lipschitz" upper bound,
    divided by n for the average loss. Order of magnitude, constant 1, log factors as
    stated::

        L ||C|| sqrt(d log(1/delta)) log^{3/2}(n/delta) / (n epsilon)

    Note (2) of Section 2 gives the same guarantee for the full-gradient variant (noisy
    GD). The formula was lost in the seed's extraction; it is the paper's Theorem 2.4,
    which follows from the seed's proof (Lemma 2.5 with T = n^2 steps and noise variance
    ``~ L^2 n^2 log(n/delta) log(1/delta) / epsilon^2``).

    Parameters
    ----------
    n : float
        Number of examples (>= 1).
    d : float
        Dimension (>= 1).
    epsilon : float
        Privacy parameter (> 0).
    delta : float
        Privacy parameter, in (0, 1).
    lipschitz : float, default 1
        Lipschitz constant L of every f(., z).
    diameter : float, default 1
        ||C||_2, the l2 diameter of the constraint set.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        If n < 1, d < 1, epsilon <= 0, delta not in (0, 1) or a constant is not positive.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, C = _pos("lipschitz", lipschitz), _pos("diameter", diameter)
    return L * C * math.sqrt(d * _lg(1 / delta)) * _lg(n / delta) ** 1.5 / (n * epsilon)


def bst14_noisy_sgd_strongly_convex_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, strong_convexity: float, lipschitz: float = 1.0
) -> float:
    """Noisy SGD (BST14 Algorithm 1), mu-strongly convex Lipschitz loss, (epsilon, delta)-DP.

    [BST14] Theorem 2.4 (2), Table 1 "(epsilon, delta)-DP, Lipschitz and strongly convex"
    upper bound, divided by n for the average loss. Order of magnitude, constant 1, log
    factors as stated::

        L^2 d log(1/delta) log^2(n/delta) / (n^2 epsilon^2 mu)

    Zhang, Zheng, Mou, Wang 2017 Table 1 quotes it as ``O(d log^3(n/delta) / (n^2 epsilon^2))`` (mu, L
    constant; ``log(1/delta) <= log(n/delta)``). Note (2): same for noisy full-gradient GD.

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    strong_convexity : float
        mu (> 0), strong convexity of every f(., z) (Delta in the paper).
    lipschitz : float, default 1
        Lipschitz constant L.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in (0, 1), mu <= 0 or L <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    mu, L = _pos("strong_convexity", strong_convexity), _pos("lipschitz", lipschitz)
    return L**2 * d * _lg(1 / delta) * _lg(n / delta) ** 2 / (n**2 * epsilon**2 * mu)


def bst14_exponential_mechanism_excess_risk_bound(
    n: float, d: float, epsilon: float, *, lipschitz: float = 1.0, diameter: float = 1.0
) -> float:
    """Exponential sampling (BST14 Algorithm 2), convex Lipschitz loss, epsilon-DP.

    [BST14] Theorem 3.2 (and the efficient version, Theorem 3.4), Table 1 "epsilon-DP,
    L-Lipschitz" upper bound, divided by n. Order of magnitude, constant 1 (the peeling
    argument removes the log factor)::

        d L ||C|| / (n epsilon)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    lipschitz : float, default 1
        Lipschitz constant L.
    diameter : float, default 1
        ||C||_2, the l2 diameter of C.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0 or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    L, C = _pos("lipschitz", lipschitz), _pos("diameter", diameter)
    return d * L * C / (n * epsilon)


def bst14_localization_excess_risk_bound(
    n: float, d: float, epsilon: float, *, strong_convexity: float, lipschitz: float = 1.0
) -> float:
    """Localization (BST14 Algorithm 4 over Algorithm 3 + 2), strongly convex, epsilon-DP.

    [BST14] Theorem 4.3, Table 1 "epsilon-DP, Lipschitz and strongly convex" upper
    bound, divided by n. Order of magnitude, constant 1, log factor as stated (Zhang, Zheng, Mou, Wang 2017
    Table 1 quotes it as ``O(log(n) d^2 / (n^2 epsilon^2))``)::

        L^2 d^2 log(n) / (n^2 epsilon^2 mu)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    strong_convexity : float
        mu (> 0).
    lipschitz : float, default 1
        Lipschitz constant L.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, mu <= 0 or L <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    mu, L = _pos("strong_convexity", strong_convexity), _pos("lipschitz", lipschitz)
    return L**2 * d**2 * _lg(n) / (n**2 * epsilon**2 * mu)


def bst14_objective_perturbation_convex_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float = 0.0, *, lipschitz: float = 1.0, diameter: float = 1.0
) -> float:
    """Objective perturbation (Chaudhuri et al. 2011, Kifer et al. 2012), smooth convex loss.

    [BST14] Section 1.1 and Table 1, rows "... and smooth": for smooth losses objective
    perturbation "also has risk" matching the lower bounds of Section 5 ("which is
    tight"), so the bound is the lower-bound expression, divided by n. Order of
    magnitude, constant 1 (the paper's Õ hides the log factors, none are added here)::

        epsilon-DP (delta = 0):      d L ||C|| / (n epsilon)
        (epsilon, delta)-DP:   sqrt(d) L ||C|| / (n epsilon)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    lipschitz : float, default 1
        Lipschitz constant L.
    diameter : float, default 1
        ||C||_2.

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
    L, C = _pos("lipschitz", lipschitz), _pos("diameter", diameter)
    dim = d if delta == 0 else math.sqrt(d)
    return dim * L * C / (n * epsilon)


def bst14_objective_perturbation_strongly_convex_excess_risk_bound(
    n: float, d: float, epsilon: float, delta: float = 0.0, *, strong_convexity: float, lipschitz: float = 1.0
) -> float:
    """Objective perturbation, smooth strongly convex loss.

    [BST14] Section 1.1 and Table 1, rows "Lipschitz and strongly convex ... and smooth":
    tight, i.e. equal in order to the strongly convex lower bound, divided by n. Order of
    magnitude, constant 1::

        epsilon-DP (delta = 0):  L^2 d^2 / (n^2 epsilon^2 mu)
        (epsilon, delta)-DP:     L^2 d   / (n^2 epsilon^2 mu)

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    strong_convexity : float
        mu (> 0).
    lipschitz : float, default 1
        Lipschitz constant L.

    Returns
    -------
    float
        The bound on the expected excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in [0, 1), mu <= 0 or L <= 0.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    mu, L = _pos("strong_convexity", strong_convexity), _pos("lipschitz", lipschitz)
    dim = d**2 if delta == 0 else d
    return L**2 * dim / (n**2 * epsilon**2 * mu)


def bst14_lower_bound_convex(
    n: float, d: float, epsilon: float, delta: float = 0.0, *, lipschitz: float = 1.0, diameter: float = 1.0
) -> float:
    """Lower bound on the excess empirical risk of any DP algorithm, convex Lipschitz losses.

    [BST14] Section 5.1 and Table 1 (lower-bound columns), divided by n; the (epsilon,
    delta) form is the one Wang, Ye, Xu 2017 quotes, ``Omega(min{1, sqrt(p)/(n eps)})``. Order of
    magnitude, constant 1, with the cap the paper states (every point of C has excess risk
    at most L ||C||)::

        epsilon-DP:           min(L ||C||, L ||C|| d       / (n epsilon))
        (epsilon, delta)-DP:  min(L ||C||, L ||C|| sqrt(d) / (n epsilon))

    The instances are linear losses over the unit ball / hypercube, so the bound holds for
    smooth losses too. The (epsilon, delta) bound assumes delta = o(1/n).

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    lipschitz : float, default 1
        Lipschitz constant L.
    diameter : float, default 1
        ||C||_2.

    Returns
    -------
    float
        The lower bound.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in [0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    L, C = _pos("lipschitz", lipschitz), _pos("diameter", diameter)
    dim = d if delta == 0 else math.sqrt(d)
    return L * C * min(1.0, dim / (n * epsilon))


def bst14_lower_bound_strongly_convex(
    n: float,
    d: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    strong_convexity: float,
    lipschitz: float = 1.0,
    diameter: float = 1.0,
) -> float:
    """Lower bound on the excess empirical risk of any DP algorithm, strongly convex losses.

    [BST14] Section 5.2 and Table 1 (lower-bound columns), divided by n and rescaled
    (``Delta -> Delta ||C|| / L``, times ``L ||C||``); the (epsilon, delta) form is the
    one Wang, Ye, Xu 2017 quotes, ``Omega(min{1, p/(n^2 eps^2)})``. Order of magnitude, constant 1,
    with the stated cap::

        epsilon-DP:           min(L ||C||, L^2 d^2 / (n^2 epsilon^2 mu))
        (epsilon, delta)-DP:  min(L ||C||, L^2 d   / (n^2 epsilon^2 mu))

    Parameters
    ----------
    n, d, epsilon : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0).
    delta : float, default 0
        0 for epsilon-DP, else in (0, 1).
    strong_convexity : float
        mu (> 0).
    lipschitz : float, default 1
        Lipschitz constant L.
    diameter : float, default 1
        ||C||_2.

    Returns
    -------
    float
        The lower bound.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta not in [0, 1) or a non-positive constant.
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=False)
    mu, L = _pos("strong_convexity", strong_convexity), _pos("lipschitz", lipschitz)
    C = _pos("diameter", diameter)
    dim = d**2 if delta == 0 else d
    return min(L * C, L**2 * dim / (n**2 * epsilon**2 * mu))


def dp_sgd_gradient_complexity(n: float) -> float:
    """Gradient complexity of noisy SGD, [BST14] Algorithm 1: ``T = n^2`` single-example steps.

    Also the "O(n^2)" of the gradient-perturbation rows of Wang, Ye, Xu 2017 Tables 1-2 and the
    ``O(n^2 d)`` runtime of Zhang, Zheng, Mou, Wang 2017 Table 1.

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


def noisy_gd_gradient_complexity(n: float) -> float:
    """Gradient complexity of noisy full-gradient descent, [BST14] Section 2 Note (2).

    The full-gradient variant of Algorithm 1 keeps the utility guarantee of Theorem 2.4
    and "the running time goes up by a factor of n": ``n * n^2 = n^3``.

    Parameters
    ----------
    n : float
        Number of examples (>= 1).

    Returns
    -------
    float
        ``n^3``.

    Raises
    ------
    ValueError
        If n < 1.
    """
    n = _n(n)
    return n**3


# --------------------------------------------------------------------------------------
