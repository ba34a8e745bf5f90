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

Sources
-------
* [WYX17] D. Wang, M. Ye, J. Xu. Differentially Private Empirical Risk Minimization
  Revisited: Faster and More General. NeurIPS 2017.
* [BST14] R. Bassily, A. Smith, A. Thakurta. Private Empirical Risk Minimization:
  Efficient Algorithms and Tight Error Bounds. FOCS 2014.
* [ZZMW17] J. Zhang, K. Zheng, W. Mou, L. Wang. Efficient Private ERM for Smooth
  Objectives. IJCAI 2017.
* [WCX19] D. Wang, C. Chen, J. Xu. Differentially Private Empirical Risk Minimization with
  Non-convex Loss Functions. ICML 2019.

The [WYX17] bounds are taken from its theorems; the [BST14] bounds from that paper's
Theorems 2.4 / 3.2 / 4.3 and Section 5, cross-checked against what [WYX17] and [ZZMW17]
quote of them ([WYX17]: the lower bounds ``Omega(min{1, p/(n^2 eps^2)})`` and
``Omega(min{1, sqrt(p)/(n eps)})``; [ZZMW17] Table 1: ``O(log(n) d^2/(n^2 eps^2))`` and
``O(d log^3(n/delta)/(n^2 eps^2))``). Each docstring says where its formula was read.

The functions live in one module per paper (``bassily_smith_thakurta_2014``,
``wang_ye_xu_2017``, ``zhang_zheng_mou_wang_2017``, ``wang_chen_xu_2019``); the table of
bounds per algorithm in :mod:`dperm.theory.bounds`.

Registry
--------
``BOUNDS[name]`` is the :class:`AlgorithmBound` of an algorithm of the catalogue: its
cases (setting, privacy, function, quantity, source). :func:`bound_for` picks the first
case compatible with the problem (``strong_convexity > 0`` enables strongly convex / PL
cases, ``delta == 0`` asks for a pure-DP case; ``setting=`` forces a case) and evaluates
it. :func:`slope_in_n` is the log-log slope of that bound between n and 2n.
"""


from __future__ import annotations

from .bassily_smith_thakurta_2014 import *  # noqa: F401,F403
from .wang_ye_xu_2017 import *  # noqa: F401,F403
from .zhang_zheng_mou_wang_2017 import *  # noqa: F401,F403
from .wang_chen_xu_2019 import *  # noqa: F401,F403
from .bounds import (AlgorithmBound, BoundCase, BOUNDS, GRADIENT_COMPLEXITIES, bound_case, bound_for,  # noqa: F401
                     gradient_complexity_for, loglog_slope, slope_in, slope_in_n)
from ._common import _lg  # noqa: F401

__all__ = [
    # Bassily, Smith, Thakurta 2014
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
    # Wang, Ye, Xu 2017
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
    # Zhang, Zheng, Mou, Wang 2017
    "gd_output_perturbation_strongly_convex_excess_risk_bound",
    "gd_output_perturbation_strongly_convex_explicit_bound",
    "gd_output_perturbation_convex_excess_risk_bound",
    "gd_output_perturbation_gradient_complexity",
    "output_perturbation_excess_risk_bound",
    "rrpsgd_gradient_norm_bound",
    "rrpsgd_gradient_norm_explicit_bound",
    "rrpsgd_convex_excess_risk_bound",
    "rrpsgd_gradient_complexity",
    # Wang, Chen, Xu 2019
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
