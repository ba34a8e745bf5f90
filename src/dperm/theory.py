"""The papers' utility bounds and gradient complexities, as plain functions.

Every function returns a float: the paper's upper bound on the expected excess empirical
risk ``E[F(w_priv)] - min F`` (or, where the paper measures utility differently, the
squared gradient norm, the excess population risk, or the sample size / accuracy of an
approximate second-order stationary point; each docstring says which), or the paper's
gradient complexity (number of single-example gradient evaluations).

Conventions
-----------
* ``F(w) = (1/n) sum_i f(w; z_i)`` is the *average* loss. Bassily, Smith, Thakurta 2014
  state their bounds for the *sum* of the losses; they are divided by n here. Their bounds
  are stated for ``L = ||C||_2 = 1`` and rescaled, as that paper prescribes, by multiplying
  by ``L ||C||_2`` and replacing the strong convexity ``Delta`` by ``Delta ||C||_2 / L``.
* Big-O bounds: the expression inside the ``O(.)`` with constant 1 ("order of magnitude,
  constant 1, log factors as stated"). Where a paper gives explicit constants the
  ``*_explicit_*`` functions use them.
* Inside the order-of-magnitude expressions ``log x`` means ``max(1, ln x)``: a log factor
  never drops below one, so the expressions stay positive at small arguments and keep
  their stated ordering (a log factor >= 1 never makes an upper bound smaller than the
  matching lower bound). The explicit-constant functions use the natural log unchanged.
* Parameter vocabulary (shared by all functions and by :func:`bound_for`):

  ``n`` number of examples (>= 1); ``d`` dimension (>= 1); ``epsilon`` (> 0);
  ``delta`` (in [0, 1); 0 means pure epsilon-DP); ``lipschitz`` L (G in Wang, Ye, Xu);
  ``smoothness`` beta (L in Wang, Ye, Xu, M in Wang, Chen, Xu);
  ``strong_convexity`` mu (Delta in Bassily et al.; the PL constant for DP-GD);
  ``diameter`` ||C||_2, the l2 diameter of the constraint set; ``w_norm`` a bound D on the
  norm of the minimizer (Zhang et al.); ``initial_gap`` F(w_0) - F*; ``gaussian_width``
  G_C; ``bregman`` B_w(x*, x_0); ``loss_bound`` B (bound on the empirical risk);
  ``hessian_lipschitz`` rho; ``failure_probability`` (xi or eta); ``alpha`` target
  accuracy; ``iterations`` T; ``regularization`` lambda; ``inverse_temperature`` beta of
  Langevin dynamics.

Sources (the seed papers in ``/work/shared/seeds``)
---------------------------------------------------
* [WYX17] D. Wang, M. Ye, J. Xu. Differentially Private Empirical Risk Minimization
  Revisited: Faster and More General. NeurIPS 2017 (seed 000).
* [BST14] R. Bassily, A. Smith, A. Thakurta. Private Empirical Risk Minimization:
  Efficient Algorithms and Tight Error Bounds. FOCS 2014 (seed 002).
* [ZZMW17] J. Zhang, K. Zheng, W. Mou, L. Wang. Efficient Private ERM for Smooth
  Objectives. IJCAI 2017 (seed 003).
* [WCX19] D. Wang, C. Chen, J. Xu. Differentially Private Empirical Risk Minimization with
  Non-convex Loss Functions. ICML 2019 (seed 004).

The seeds are text extractions: the tables of seed 000 and every formula of seed 002 were
lost in extraction. Those bounds are therefore taken from the theorems (which survive in
seed 000) and, for [BST14], from the paper's Theorem 2.4 / 3.2 / 4.3 and Section 5 as
cross-checked against what seeds 000 and 003 quote of them (seed 000: the lower bounds
``Omega(min{1, p/(n^2 eps^2)})`` and ``Omega(min{1, sqrt(p)/(n eps)})``; seed 003 Table 1:
``O(log(n) d^2/(n^2 eps^2))`` and ``O(d log^3(n/delta)/(n^2 eps^2))``). Each docstring
says where its formula was read.

Registry
--------
``BOUNDS[name]`` is the :class:`AlgorithmBound` of an algorithm of the catalogue: its
cases (setting, privacy, function, quantity, source). :func:`bound_for` picks the first
case compatible with the problem (``strong_convexity > 0`` enables strongly convex / PL
cases, ``delta == 0`` asks for a pure-DP case; ``setting=`` forces a case) and evaluates
it. :func:`slope_in_n` is the log-log slope of that bound between n and 2n.
"""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

from ._validation import check_positive

__all__ = [
    # Bassily, Smith, Thakurta 2014 (seed 002)
    "bst14_noisy_sgd_convex_excess_risk_bound",
    "bst14_noisy_sgd_strongly_convex_excess_risk_bound",
    "bst14_exponential_mechanism_excess_risk_bound",
    "bst14_localization_excess_risk_bound",
    "bst14_objective_perturbation_convex_excess_risk_bound",
    "bst14_objective_perturbation_strongly_convex_excess_risk_bound",
    "bst14_lower_bound_convex",
    "bst14_lower_bound_strongly_convex",
    "dp_sgd_gradient_complexity",
    "noisy_gd_gradient_complexity",
    # Wang, Ye, Xu 2017 (seed 000)
    "dp_svrg_excess_risk_bound",
    "dp_svrg_gradient_complexity",
    "dp_svrg_pp_excess_risk_bound",
    "dp_svrg_pp_gradient_complexity",
    "dp_accmd_excess_risk_bound",
    "dp_accmd_gradient_complexity",
    "dp_gd_pl_excess_risk_bound",
    "dp_gd_pl_gradient_complexity",
    "dp_gd_nonconvex_gradient_norm_bound",
    "dp_gd_nonconvex_gradient_complexity",
    # Zhang, Zheng, Mou, Wang 2017 (seed 003)
    "gd_output_perturbation_strongly_convex_excess_risk_bound",
    "gd_output_perturbation_strongly_convex_explicit_bound",
    "gd_output_perturbation_convex_excess_risk_bound",
    "gd_output_perturbation_gradient_complexity",
    "output_perturbation_excess_risk_bound",
    "rrpsgd_gradient_norm_bound",
    "rrpsgd_gradient_norm_explicit_bound",
    "rrpsgd_convex_excess_risk_bound",
    "rrpsgd_gradient_complexity",
    # Wang, Chen, Xu 2019 (seed 004)
    "dp_gld_excess_risk_bound",
    "dp_gld_gradient_complexity",
    "dp_fw_l2_population_risk_bound",
    "dp_fw_l1_population_risk_bound",
    "dp_gd_sosp_sample_complexity",
    "dp_gd_sosp_accuracy_bound",
    "dp_sosp_sample_complexity",
    "dp_sosp_accuracy_bound",
    "dp_sosp_constrained_sample_complexity",
    # registry
    "BoundCase",
    "AlgorithmBound",
    "BOUNDS",
    "GRADIENT_COMPLEXITIES",
    "bound_for",
    "bound_case",
    "gradient_complexity_for",
    "loglog_slope",
    "slope_in",
    "slope_in_n",
]


# --------------------------------------------------------------------------------------
# validation and helpers
# --------------------------------------------------------------------------------------


def _at_least_one(name: str, value: Any) -> float:
    value = check_positive(name, value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _n(n: Any) -> float:
    return _at_least_one("n", n)


def _d(d: Any) -> float:
    return _at_least_one("d", d)


def _pos(name: str, value: Any) -> float:
    return check_positive(name, value)


def _delta(delta: Any, *, required: bool) -> float:
    """delta in [0, 1); with ``required`` (an (epsilon, delta)-DP bound) delta in (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {delta!r}")
    delta = float(delta)
    if math.isnan(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if required and delta == 0.0:
        raise ValueError(
            "this is an (epsilon, delta)-DP bound: delta must be in (0, 1), got 0 "
            "(use an epsilon-DP bound for delta = 0)"
        )
    return delta


def _probability(name: str, value: Any) -> float:
    value = check_positive(name, value)
    if value >= 1:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def _strong_convexity(mu: Any, beta: Any) -> tuple[float, float]:
    """mu > 0, beta > 0 and mu <= beta (a beta-smooth function is at most beta-strongly convex)."""
    mu = _pos("strong_convexity", mu)
    beta = _pos("smoothness", beta)
    if mu > beta:
        raise ValueError(
            f"strong_convexity ({mu}) cannot exceed smoothness ({beta}): a beta-smooth "
            "function is at most beta-strongly convex"
        )
    return mu, beta


def _lg(x: float) -> float:
    """The log factor of an order-of-magnitude bound: ``max(1, ln x)``."""
    return max(1.0, math.log(x)) if x > 0 else 1.0


# --------------------------------------------------------------------------------------
# Bassily, Smith, Thakurta 2014 (seed 002)
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

    Seed 003 Table 1 quotes it as ``O(d log^3(n/delta) / (n^2 epsilon^2))`` (mu, L
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
    bound, divided by n. Order of magnitude, constant 1, log factor as stated (seed 003
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
    delta) form is the one seed 000 quotes, ``Omega(min{1, sqrt(p)/(n eps)})``. Order of
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
    one seed 000 quotes, ``Omega(min{1, p/(n^2 eps^2)})``. Order of magnitude, constant 1,
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

    Also the "O(n^2)" of the gradient-perturbation rows of seed 000 Tables 1-2 and the
    ``O(n^2 d)`` runtime of seed 003 Table 1.

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
# Wang, Ye, Xu 2017 (seed 000)
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
# Zhang, Zheng, Mou, Wang 2017 (seed 003)
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
    noise term alone remains. The same order (``kappa d / (n^2 eps^2)``) is what seed 000
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
# Wang, Chen, Xu 2019 (seed 004)
# --------------------------------------------------------------------------------------


def dp_gld_excess_risk_bound(n: float, d: float, epsilon: float, delta: float) -> float:
    """DP-GLD ([WCX19] Algorithm 1), non-convex loss with l2 regularizer: excess risk.

    [WCX19] Theorem 2 with Remark 1 (inverse temperature beta = O(log n), valid when
    log n >= O(d)), the bound of the abstract for the excess empirical (and population)
    risk as T -> infinity. Order of magnitude, constant 1 (A, lambda, L, M omitted as the
    paper does)::

        d log(1/delta) / (log(n) epsilon^2)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).

    Returns
    -------
    float
        The bound on the excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0 or delta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    return d * _lg(1 / delta) / (_lg(n) * epsilon**2)


def dp_gld_gradient_complexity(
    n: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    regularization: float = 1.0,
    inverse_temperature: float | None = None,
) -> float:
    """Gradient complexity n T of DP-GLD, T from [WCX19] Theorem 2.

    ``T >= (M + lambda)^2 n^2 epsilon^2 / (lambda beta log(1/delta) L^2)`` full-gradient
    steps, with the inverse temperature beta = log n of Remark 1 unless given. Order of
    magnitude, constant 1::

        n max(1, (M + lambda)^2 n^2 epsilon^2 / (lambda beta log(1/delta) L^2))

    Parameters
    ----------
    n, epsilon, delta : float
        Examples (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        M.
    regularization : float, default 1
        lambda of the l2 regularizer (lambda/2)||w||^2.
    inverse_temperature : float, optional
        beta (> 0); default log(n) (floored at 1).

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n, epsilon = _n(n), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    lam = _pos("regularization", regularization)
    beta = _lg(n) if inverse_temperature is None else _pos("inverse_temperature", inverse_temperature)
    steps = (M + lam) ** 2 * n**2 * epsilon**2 / (lam * beta * _lg(1 / delta) * L**2)
    return n * max(1.0, steps)


def dp_fw_l2_population_risk_bound(n: float, d: float, epsilon: float, delta: float) -> float:
    """DP-FW-L2 ([WCX19] Algorithm 2), non-convex GLM / robust regression: population risk.

    [WCX19] Theorem 5 (the l2-ball setting; C_sigma, B, C_psi omitted as the paper's big-O
    does). Excess *population* risk, order of magnitude, constant 1::

        (d log(1/delta))^{1/4} / sqrt(n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).

    Returns
    -------
    float
        The bound on the excess population risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0 or delta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    return (d * _lg(1 / delta)) ** 0.25 / math.sqrt(n * epsilon)


def dp_fw_l1_population_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, failure_probability: float = 0.05
) -> float:
    """DP-FW-L1 ([WCX19] Algorithm 3), l1-ball constraint, l_inf data: population risk.

    [WCX19] Theorem 6, with probability at least 1 - eta. Order of magnitude, constant 1,
    logarithmic in d::

        log(1/delta)^{1/4} sqrt(log(n d / eta)) / sqrt(n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    failure_probability : float, default 0.05
        eta in (0, 1).

    Returns
    -------
    float
        The high-probability bound on the excess population risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta or eta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    eta = _probability("failure_probability", failure_probability)
    return _lg(1 / delta) ** 0.25 * math.sqrt(_lg(n * d / eta)) / math.sqrt(n * epsilon)


def dp_gd_sosp_sample_complexity(
    alpha: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """Sample size for DP-GD ([WCX19] Algorithm 4) to pass an alpha-SOSP, unconstrained.

    [WCX19] Theorem 7, eq. (8): with n at least this, one of the T iterates is an
    alpha-approximate second-order stationary point w.p. 1 - xi. Order of magnitude,
    constant 1 (the seed's extraction is ambiguous about the radicals; read as)::

        sqrt(M B log(1/delta)) sqrt(d log(1/xi)) L / (epsilon alpha^2)

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        M.
    loss_bound : float, default 1
        B, bound on the empirical risk.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M, B = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness), _pos("loss_bound", loss_bound)
    xi = _probability("failure_probability", failure_probability)
    return math.sqrt(M * B * _lg(1 / delta)) * math.sqrt(d * _lg(1 / xi)) * L / (epsilon * alpha**2)


def dp_gd_sosp_accuracy_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """The alpha reached by DP-GD with n examples: [WCX19] Theorem 7 solved for alpha.

    Order of magnitude, constant 1::

        alpha = sqrt( sqrt(M B log(1/delta)) sqrt(d log(1/xi)) L / (n epsilon) )

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, loss_bound : float, default 1
        L, M, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The accuracy alpha of the approximate second-order stationary point.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n = _n(n)
    need_at_alpha_1 = dp_gd_sosp_sample_complexity(
        1.0, d, epsilon, delta, lipschitz=lipschitz, smoothness=smoothness,
        loss_bound=loss_bound, failure_probability=failure_probability,
    )
    return math.sqrt(need_at_alpha_1 / n)


def dp_sosp_sample_complexity(
    alpha: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    hessian_lipschitz: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """Sample size for the private SOSP selection ([WCX19] Algorithm 5), unconstrained.

    [WCX19] Theorem 8: with n at least this the output is an alpha-SOSP w.p.
    ``1 - xi - T/p^C`` (an extra sqrt(d) over Theorem 7, as the paper says). Order of
    magnitude, constant 1 (read from the seed's extraction as)::

        M d sqrt(M B log(1/delta) log(1/xi)) L / (rho epsilon alpha^2)

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, hessian_lipschitz, loss_bound : float, default 1
        L, M, rho, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M, B = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness), _pos("loss_bound", loss_bound)
    rho = _pos("hessian_lipschitz", hessian_lipschitz)
    xi = _probability("failure_probability", failure_probability)
    return M * d * math.sqrt(M * B * _lg(1 / delta) * _lg(1 / xi)) * L / (rho * epsilon * alpha**2)


def dp_sosp_accuracy_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    hessian_lipschitz: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """The alpha of the SOSP found privately with n examples: [WCX19] Theorem 8 solved for alpha.

    Order of magnitude, constant 1::

        alpha = sqrt( M d sqrt(M B log(1/delta) log(1/xi)) L / (rho epsilon n) )

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, hessian_lipschitz, loss_bound : float, default 1
        L, M, rho, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The accuracy alpha (gradient norm <= alpha, Hessian >= -sqrt(rho alpha)).

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n = _n(n)
    need_at_alpha_1 = dp_sosp_sample_complexity(
        1.0, d, epsilon, delta, lipschitz=lipschitz, smoothness=smoothness,
        hessian_lipschitz=hessian_lipschitz, loss_bound=loss_bound,
        failure_probability=failure_probability,
    )
    return math.sqrt(need_at_alpha_1 / n)


def dp_sosp_constrained_sample_complexity(
    alpha: float, d: float, epsilon: float, delta: float, *, failure_probability: float = 0.05
) -> float:
    """Sample size for DP-GD-SO ([WCX19] Algorithm 6) to reach an alpha-SOSP in a set C.

    [WCX19] Theorem 9 as summarized by Remark 3: ``Omega~(d / (epsilon alpha^2))`` when L,
    B, Phi, D, G, rho are omitted; the log factors of the theorem's terms are kept. Order
    of magnitude, constant 1::

        d sqrt(log(1/delta) log(1/xi)) / (epsilon alpha^2)

    The theorem's maximum has two further terms in the diameter D of C (one of order
    alpha^{-3/2}) whose exact form the seed's extraction does not preserve; they are not
    included, so for large D or rho this underestimates the theorem's requirement.

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples (problem constants set to 1).

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    xi = _probability("failure_probability", failure_probability)
    return d * math.sqrt(_lg(1 / delta) * _lg(1 / xi)) / (epsilon * alpha**2)


# --------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------

_SETTINGS = ("strongly_convex", "pl", "convex", "nonconvex")
_PRIVACY = ("pure", "approx", "any")


@dataclass(frozen=True)
class BoundCase:
    """One bound of an algorithm: where it applies, what it bounds, where it comes from.

    Attributes
    ----------
    setting : str
        "strongly_convex" or "pl" (need ``strong_convexity > 0``), "convex" or "nonconvex".
    privacy : str
        "pure" (delta = 0), "approx" (delta > 0) or "any".
    function : callable
        The bound, a function of the problem's keyword parameters.
    quantity : str
        What is bounded (excess empirical risk, squared gradient norm, ...).
    source : str
        Paper and theorem.
    """

    setting: str
    privacy: str
    function: Callable[..., float]
    quantity: str
    source: str

    def __post_init__(self) -> None:
        if self.setting not in _SETTINGS or self.privacy not in _PRIVACY:
            raise ValueError(f"bad case {self.setting!r} / {self.privacy!r}")

    def applies(self, *, strongly_convex: bool, delta: float) -> bool:
        """Whether this case covers a problem with this curvature and delta."""
        if self.setting in ("strongly_convex", "pl") and not strongly_convex:
            return False
        if self.privacy == "pure" and delta > 0:
            return False
        if self.privacy == "approx" and delta == 0:
            return False
        return True

    def __call__(self, **problem: Any) -> float:
        """Evaluate the bound on the parameters it takes (other problem keys are ignored)."""
        params = inspect.signature(self.function).parameters
        return float(self.function(**{k: v for k, v in problem.items() if k in params}))


@dataclass(frozen=True)
class AlgorithmBound:
    """The bounds the papers give for one algorithm; calling it evaluates the applicable one.

    Attributes
    ----------
    algorithm : str
        Name in the catalogue.
    cases : tuple of BoundCase
        In order of preference: the first case that applies is used.
    """

    algorithm: str
    cases: tuple[BoundCase, ...]

    def select(self, **problem: Any) -> BoundCase:
        """The first case compatible with ``problem`` (``setting=`` restricts the choice).

        Raises
        ------
        ValueError
            If no case applies (e.g. a strongly convex-only bound with mu = 0, or an
            (epsilon, delta) bound with delta = 0), or on an invalid delta / mu.
        """
        setting = problem.get("setting")
        if setting is not None and setting not in _SETTINGS:
            raise ValueError(f"setting must be one of {_SETTINGS}, got {setting!r}")
        delta = _delta(problem.get("delta", 0.0), required=False)
        mu = check_positive("strong_convexity", problem.get("strong_convexity", 0.0), allow_zero=True)
        for case in self.cases:
            if setting is not None and case.setting != setting:
                continue
            if case.applies(strongly_convex=mu > 0, delta=delta):
                return case
        have = ", ".join(f"{c.setting}/{c.privacy}" for c in self.cases)
        raise ValueError(
            f"no bound for {self.algorithm} with setting={setting}, strong_convexity={mu}, "
            f"delta={delta}; the papers give: {have} (strongly_convex / pl need "
            "strong_convexity > 0; approx needs delta > 0, pure needs delta = 0)"
        )

    def __call__(self, **problem: Any) -> float:
        return self.select(**problem)(**problem)


_ER = "excess empirical risk"
_GN = "squared gradient norm E||grad F||^2"
_PR = "excess population risk"
_SO = "accuracy alpha of a second-order stationary point"

_BST_SGD = (
    BoundCase("strongly_convex", "approx", bst14_noisy_sgd_strongly_convex_excess_risk_bound, _ER,
              "Bassily, Smith, Thakurta 2014, Theorem 2.4 (2), Table 1"),
    BoundCase("convex", "approx", bst14_noisy_sgd_convex_excess_risk_bound, _ER,
              "Bassily, Smith, Thakurta 2014, Theorem 2.4 (1), Table 1"),
)

BOUNDS: dict[str, AlgorithmBound] = {
    bound.algorithm: bound
    for bound in [
        AlgorithmBound("output_perturbation", (
            BoundCase("strongly_convex", "any", output_perturbation_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 2 (T -> infinity)"),
        )),
        AlgorithmBound("gd_output_perturbation", (
            BoundCase("strongly_convex", "any", gd_output_perturbation_strongly_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 2, Table 1"),
            BoundCase("convex", "any", gd_output_perturbation_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 3"),
        )),
        AlgorithmBound("objective_perturbation", (
            BoundCase("strongly_convex", "any", bst14_objective_perturbation_strongly_convex_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Section 1.1 and Table 1 (smooth rows)"),
            BoundCase("convex", "any", bst14_objective_perturbation_convex_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Section 1.1 and Table 1 (smooth rows)"),
        )),
        AlgorithmBound("noisy_gd", _BST_SGD),
        AlgorithmBound("dp_sgd", _BST_SGD),
        AlgorithmBound("dp_svrg", (
            BoundCase("strongly_convex", "approx", dp_svrg_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 4.2, Table 1"),
        )),
        AlgorithmBound("dp_svrg_pp", (
            BoundCase("convex", "approx", dp_svrg_pp_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 4.4, Table 2"),
        )),
        AlgorithmBound("dp_accmd", (
            BoundCase("convex", "approx", dp_accmd_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 5.4, Table 3"),
        )),
        AlgorithmBound("exponential_mechanism", (
            BoundCase("convex", "any", bst14_exponential_mechanism_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Theorem 3.2, Table 1"),
        )),
        AlgorithmBound("localization", (
            BoundCase("strongly_convex", "any", bst14_localization_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Theorem 4.3, Table 1"),
        )),
        AlgorithmBound("dp_gd", (
            BoundCase("pl", "approx", dp_gd_pl_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 6.2"),
            BoundCase("nonconvex", "approx", dp_gd_nonconvex_gradient_norm_bound, _GN,
                      "Wang, Ye, Xu 2017, Theorem 6.3"),
        )),
        AlgorithmBound("rrpsgd", (
            BoundCase("nonconvex", "approx", rrpsgd_gradient_norm_bound, _GN,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 5, Table 1"),
            BoundCase("convex", "approx", rrpsgd_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 5 (convex case)"),
        )),
        AlgorithmBound("dp_gld", (
            BoundCase("nonconvex", "approx", dp_gld_excess_risk_bound, _ER,
                      "Wang, Chen, Xu 2019, Theorem 2 and Remark 1"),
        )),
        AlgorithmBound("dp_fw_l2", (
            BoundCase("nonconvex", "approx", dp_fw_l2_population_risk_bound, _PR,
                      "Wang, Chen, Xu 2019, Theorem 5"),
        )),
        AlgorithmBound("dp_fw_l1", (
            BoundCase("nonconvex", "approx", dp_fw_l1_population_risk_bound, _PR,
                      "Wang, Chen, Xu 2019, Theorem 6"),
        )),
        AlgorithmBound("dp_sosp", (
            BoundCase("nonconvex", "approx", dp_sosp_accuracy_bound, _SO,
                      "Wang, Chen, Xu 2019, Theorem 8 (solved for alpha)"),
        )),
    ]
}
"""Algorithm name -> :class:`AlgorithmBound` (callable: ``BOUNDS[name](**problem)``)."""

GRADIENT_COMPLEXITIES: dict[str, AlgorithmBound] = {
    bound.algorithm: bound
    for bound in [
        AlgorithmBound("gd_output_perturbation", (
            BoundCase("convex", "any", gd_output_perturbation_gradient_complexity, "gradient evaluations",
                      "Zhang, Zheng, Mou, Wang 2017, Theorems 2 and 3, Table 1"),
        )),
        AlgorithmBound("noisy_gd", (
            BoundCase("convex", "any", noisy_gd_gradient_complexity, "gradient evaluations",
                      "Bassily, Smith, Thakurta 2014, Section 2 Note (2)"),
        )),
        AlgorithmBound("dp_sgd", (
            BoundCase("convex", "any", dp_sgd_gradient_complexity, "gradient evaluations",
                      "Bassily, Smith, Thakurta 2014, Algorithm 1 (T = n^2)"),
        )),
        AlgorithmBound("dp_svrg", (
            BoundCase("strongly_convex", "any", dp_svrg_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 4.2, Table 1"),
        )),
        AlgorithmBound("dp_svrg_pp", (
            BoundCase("convex", "any", dp_svrg_pp_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 4.4, Table 2"),
        )),
        AlgorithmBound("dp_accmd", (
            BoundCase("convex", "any", dp_accmd_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 5.4, Table 3"),
        )),
        AlgorithmBound("dp_gd", (
            BoundCase("pl", "approx", dp_gd_pl_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 6.2"),
            BoundCase("nonconvex", "approx", dp_gd_nonconvex_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 6.3"),
        )),
        AlgorithmBound("rrpsgd", (
            BoundCase("nonconvex", "any", rrpsgd_gradient_complexity, "gradient evaluations",
                      "Zhang, Zheng, Mou, Wang 2017, Algorithm 2, Table 1"),
        )),
        AlgorithmBound("dp_gld", (
            BoundCase("nonconvex", "approx", dp_gld_gradient_complexity, "gradient evaluations",
                      "Wang, Chen, Xu 2019, Theorem 2"),
        )),
    ]
}
"""Algorithm name -> :class:`AlgorithmBound` of its gradient complexity."""


def _vocabulary() -> frozenset[str]:
    names = {"setting"}
    for table in (BOUNDS, GRADIENT_COMPLEXITIES):
        for bound in table.values():
            for case in bound.cases:
                names.update(inspect.signature(case.function).parameters)
    return frozenset(names)


_VOCABULARY = _vocabulary()


def _lookup(table: dict[str, AlgorithmBound], algorithm: str, problem: dict[str, Any], what: str) -> AlgorithmBound:
    if not isinstance(algorithm, str) or algorithm not in table:
        raise ValueError(f"no {what} for algorithm {algorithm!r}; known: {sorted(table)}")
    unknown = set(problem) - _VOCABULARY
    if unknown:
        raise TypeError(f"unknown problem parameter(s) {sorted(unknown)}; known: {sorted(_VOCABULARY)}")
    return table[algorithm]


def bound_case(algorithm: str, **problem: Any) -> BoundCase:
    """The case of ``BOUNDS[algorithm]`` that :func:`bound_for` would evaluate.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        Problem parameters (see the module docstring); ``setting=`` forces a case.

    Returns
    -------
    BoundCase
        With the quantity bounded and the source.

    Raises
    ------
    ValueError
        Unknown algorithm, or no case applies.
    TypeError
        An unknown problem parameter.
    """
    return _lookup(BOUNDS, algorithm, problem, "bound").select(**problem)


def bound_for(algorithm: str, **problem: Any) -> float:
    """The papers' bound for ``algorithm`` on ``problem``.

    Picks the first case of ``BOUNDS[algorithm]`` compatible with the problem
    (``strong_convexity > 0`` enables strongly convex / PL cases; ``delta`` 0 or absent
    means pure epsilon-DP; ``setting=`` in {"strongly_convex", "pl", "convex",
    "nonconvex"} forces a case) and evaluates it on the parameters it takes; the other
    problem parameters are ignored.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        n, d, epsilon, delta, lipschitz, smoothness, strong_convexity, diameter, ...

    Returns
    -------
    float
        The bound (see :func:`bound_case` for the quantity).

    Raises
    ------
    ValueError
        Unknown algorithm, no applicable case, or an invalid parameter value.
    TypeError
        An unknown parameter name or a missing required parameter.

    Examples
    --------
    >>> round(bound_for("dp_svrg", n=1000, d=10, epsilon=1.0, delta=1e-5, strong_convexity=0.1), 6)
    0.007953
    >>> round(slope_in_n("dp_svrg_pp", n=1000, d=10, epsilon=1.0, delta=1e-5), 6)
    -1.0
    """
    return _lookup(BOUNDS, algorithm, problem, "bound")(**problem)


def gradient_complexity_for(algorithm: str, **problem: Any) -> float:
    """The papers' gradient complexity for ``algorithm`` (see :data:`GRADIENT_COMPLEXITIES`).

    Parameters
    ----------
    algorithm : str
        A key of :data:`GRADIENT_COMPLEXITIES`.
    **problem
        Problem parameters, as for :func:`bound_for`.

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        Unknown algorithm, no applicable case, or an invalid parameter value.
    TypeError
        An unknown parameter name or a missing required parameter.
    """
    return _lookup(GRADIENT_COMPLEXITIES, algorithm, problem, "gradient complexity")(**problem)


def loglog_slope(function: Callable[..., float], parameter: str, /, factor: float = 2.0, **kwargs: Any) -> float:
    """``log(f(x factor) / f(x)) / log(factor)`` for ``x = kwargs[parameter]``.

    The finite-difference log-log slope of any bound in one of its parameters.

    Parameters
    ----------
    function : callable
        A bound taking keyword arguments.
    parameter : str
        The keyword to scale (must be in ``kwargs``).
    factor : float, default 2
        The ratio of the two evaluation points (> 0, != 1).
    **kwargs
        The arguments of ``function``.

    Returns
    -------
    float
        The slope.

    Raises
    ------
    ValueError
        If ``parameter`` is not given, ``factor`` is invalid or a bound is not positive.
    """
    if parameter not in kwargs:
        raise ValueError(f"{parameter!r} must be given to take the slope in it")
    factor = check_positive("factor", factor)
    if factor == 1:
        raise ValueError("factor must differ from 1")
    low = function(**kwargs)
    high = function(**{**kwargs, parameter: kwargs[parameter] * factor})
    if not (low > 0 and high > 0):
        raise ValueError(f"the bound must be positive to take a log-log slope, got {low}, {high}")
    return math.log(high / low) / math.log(factor)


def slope_in(algorithm: str, parameter: str, **problem: Any) -> float:
    """Log-log slope of ``bound_for(algorithm, **problem)`` in ``parameter``, between x and 2x.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    parameter : str
        A numeric problem parameter present in ``problem`` (n, d, epsilon, ...).
    **problem
        As for :func:`bound_for`.

    Returns
    -------
    float
        ``log2(bound(2 x) / bound(x))``.

    Raises
    ------
    ValueError, TypeError
        As :func:`bound_for`, or if ``parameter`` is missing.
    """
    _lookup(BOUNDS, algorithm, problem, "bound")
    return loglog_slope(lambda **p: bound_for(algorithm, **p), parameter, **problem)


def slope_in_n(algorithm: str, **problem: Any) -> float:
    """Log-log slope of the bound in n: ``log2(bound(2n) / bound(n))``.

    Compare with the slope of a measured excess risk against n (e.g. -2 for the strongly
    convex (epsilon, delta) bounds, -1 for the convex ones, up to their log factors).

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        As for :func:`bound_for`; must include ``n``.

    Returns
    -------
    float
        The slope.

    Raises
    ------
    ValueError, TypeError
        As :func:`bound_for`, or if n is missing.
    """
    return slope_in(algorithm, "n", **problem)
