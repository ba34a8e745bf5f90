"""dperm.theory: the papers' bounds are positive, scale with the stated exponents, lower
bounds stay below the matching upper bounds, the registry dispatches, bad input fails."""

import inspect
import math

import pytest

from dperm import theory as th

DELTA = 1e-6
ETA = 0.05

# Sensible inputs for every bound / complexity function of the module.
SENSIBLE = {
    th.bst14_noisy_sgd_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA, lipschitz=2.0, diameter=3.0),
    th.bst14_noisy_sgd_strongly_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA, strong_convexity=0.1),
    th.bst14_exponential_mechanism_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, diameter=2.0),
    th.bst14_localization_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1),
    th.bst14_objective_perturbation_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.bst14_objective_perturbation_strongly_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1),
    th.bst14_lower_bound_convex: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.bst14_lower_bound_strongly_convex: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1),
    th.dp_sgd_gradient_complexity: dict(n=1e4),
    th.noisy_gd_gradient_complexity: dict(n=1e4),
    th.dp_svrg_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA, strong_convexity=0.1),
    th.dp_svrg_gradient_complexity: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1, smoothness=1.0),
    th.dp_svrg_pp_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_svrg_pp_gradient_complexity: dict(n=1e4, d=20, epsilon=1.0),
    th.dp_accmd_excess_risk_bound: dict(n=1e4, epsilon=1.0, delta=DELTA, gaussian_width=4.0),
    th.dp_accmd_gradient_complexity: dict(n=1e4, epsilon=1.0, gaussian_width=4.0),
    th.dp_gd_pl_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_gd_pl_gradient_complexity: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_gd_nonconvex_gradient_norm_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_gd_nonconvex_gradient_complexity: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.gd_output_perturbation_strongly_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA, strong_convexity=0.1),
    th.gd_output_perturbation_strongly_convex_explicit_bound: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1, iterations=50),
    th.gd_output_perturbation_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0),
    th.gd_output_perturbation_gradient_complexity: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA, strong_convexity=0.1),
    th.output_perturbation_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1),
    th.rrpsgd_gradient_norm_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.rrpsgd_gradient_norm_explicit_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.rrpsgd_convex_excess_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.rrpsgd_gradient_complexity: dict(n=1e4),
    th.dp_gld_excess_risk_bound: dict(n=1e4, d=5, epsilon=1.0, delta=DELTA),
    th.dp_gld_gradient_complexity: dict(n=1e4, epsilon=1.0, delta=DELTA),
    th.dp_fw_l2_population_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_fw_l1_population_risk_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_gd_sosp_sample_complexity: dict(alpha=0.1, d=20, epsilon=1.0, delta=DELTA),
    th.dp_gd_sosp_accuracy_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_sosp_sample_complexity: dict(alpha=0.1, d=20, epsilon=1.0, delta=DELTA),
    th.dp_sosp_accuracy_bound: dict(n=1e4, d=20, epsilon=1.0, delta=DELTA),
    th.dp_sosp_constrained_sample_complexity: dict(alpha=0.1, d=20, epsilon=1.0, delta=DELTA),
}

FUNCTION_NAMES = [
    name for name in th.__all__
    if name.endswith(("_bound", "_complexity")) or name.startswith("bst14_lower_bound")
]


def test_every_bound_function_is_covered_by_the_tests():
    assert {f.__name__ for f in SENSIBLE} == set(FUNCTION_NAMES)


@pytest.mark.parametrize("function", list(SENSIBLE), ids=lambda f: f.__name__)
def test_positive_and_finite_on_sensible_inputs(function):
    value = function(**SENSIBLE[function])
    assert isinstance(value, float)
    assert math.isfinite(value) and value > 0


@pytest.mark.parametrize("function", list(SENSIBLE), ids=lambda f: f.__name__)
def test_public_functions_are_typed_and_documented(function):
    sig = inspect.signature(function)
    assert sig.return_annotation in (float, "float")
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
    doc = inspect.getdoc(function)
    assert "Parameters" in doc and "Returns" in doc and "Raises" in doc
    # cites a paper / theorem
    assert any(tag in doc for tag in ("[BST14]", "[WYX17]", "[ZZMW17]", "[WCX19]"))


# ----------------------------------------------------------------------------------------
# scaling: finite-difference log-log slopes against the stated exponents
# ----------------------------------------------------------------------------------------


def log_slope(g, x, factor=2.0):
    """log_factor(g(factor x) / g(x)) for a log term g."""
    return math.log(g(factor * x) / g(x)) / math.log(factor)


def ln_n_over_delta(n):
    return math.log(n / DELTA)


# (function, kwargs, parameter, exponent, [(power, log term in that parameter)])
N, D, EPSILON, MU = 1e5, 50.0, 0.5, 0.1
BASE = dict(n=N, d=D, epsilon=EPSILON)
APPROX = dict(BASE, delta=DELTA)

SCALING = [
    # Bassily, Smith, Thakurta 2014
    (th.bst14_noisy_sgd_convex_excess_risk_bound, APPROX, "n", -1, [(1.5, ln_n_over_delta)]),
    (th.bst14_noisy_sgd_convex_excess_risk_bound, APPROX, "d", 0.5, []),
    (th.bst14_noisy_sgd_convex_excess_risk_bound, APPROX, "epsilon", -1, []),
    (th.bst14_noisy_sgd_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "n", -2, [(2, ln_n_over_delta)]),
    (th.bst14_noisy_sgd_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.bst14_noisy_sgd_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "epsilon", -2, []),
    (th.bst14_noisy_sgd_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "strong_convexity", -1, []),
    (th.bst14_exponential_mechanism_excess_risk_bound, BASE, "n", -1, []),
    (th.bst14_exponential_mechanism_excess_risk_bound, BASE, "d", 1, []),
    (th.bst14_exponential_mechanism_excess_risk_bound, BASE, "epsilon", -1, []),
    (th.bst14_localization_excess_risk_bound, dict(BASE, strong_convexity=MU), "n", -2, [(1, math.log)]),
    (th.bst14_localization_excess_risk_bound, dict(BASE, strong_convexity=MU), "d", 2, []),
    (th.bst14_localization_excess_risk_bound, dict(BASE, strong_convexity=MU), "epsilon", -2, []),
    (th.bst14_localization_excess_risk_bound, dict(BASE, strong_convexity=MU), "strong_convexity", -1, []),
    (th.bst14_objective_perturbation_convex_excess_risk_bound, BASE, "n", -1, []),
    (th.bst14_objective_perturbation_convex_excess_risk_bound, BASE, "d", 1, []),
    (th.bst14_objective_perturbation_convex_excess_risk_bound, APPROX, "d", 0.5, []),
    (th.bst14_objective_perturbation_convex_excess_risk_bound, APPROX, "epsilon", -1, []),
    (th.bst14_objective_perturbation_strongly_convex_excess_risk_bound, dict(BASE, strong_convexity=MU), "n", -2, []),
    (th.bst14_objective_perturbation_strongly_convex_excess_risk_bound, dict(BASE, strong_convexity=MU), "d", 2, []),
    (th.bst14_objective_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.bst14_objective_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "epsilon", -2, []),
    (th.bst14_lower_bound_convex, BASE, "n", -1, []),
    (th.bst14_lower_bound_convex, BASE, "d", 1, []),
    (th.bst14_lower_bound_convex, APPROX, "d", 0.5, []),
    (th.bst14_lower_bound_convex, APPROX, "epsilon", -1, []),
    (th.bst14_lower_bound_strongly_convex, dict(BASE, strong_convexity=MU), "n", -2, []),
    (th.bst14_lower_bound_strongly_convex, dict(BASE, strong_convexity=MU), "d", 2, []),
    (th.bst14_lower_bound_strongly_convex, dict(APPROX, strong_convexity=MU), "n", -2, []),
    (th.bst14_lower_bound_strongly_convex, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.bst14_lower_bound_strongly_convex, dict(APPROX, strong_convexity=MU), "strong_convexity", -1, []),
    # Wang, Ye, Xu 2017
    (th.dp_svrg_excess_risk_bound, dict(APPROX, strong_convexity=MU), "n", -2, [(1, math.log)]),
    (th.dp_svrg_excess_risk_bound, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.dp_svrg_excess_risk_bound, dict(APPROX, strong_convexity=MU), "epsilon", -2, []),
    (th.dp_svrg_excess_risk_bound, dict(APPROX, strong_convexity=MU), "strong_convexity", -1, []),
    (th.dp_svrg_excess_risk_bound, dict(APPROX, strong_convexity=MU, lipschitz=1.5), "lipschitz", 2, []),
    (th.dp_svrg_pp_excess_risk_bound, APPROX, "n", -1, []),
    (th.dp_svrg_pp_excess_risk_bound, APPROX, "d", 0.5, []),
    (th.dp_svrg_pp_excess_risk_bound, APPROX, "epsilon", -1, []),
    (th.dp_accmd_excess_risk_bound, dict(n=N, epsilon=EPSILON, delta=DELTA, gaussian_width=30.0), "n", -1, []),
    (th.dp_accmd_excess_risk_bound, dict(n=N, epsilon=EPSILON, delta=DELTA, gaussian_width=30.0), "epsilon", -1, []),
    (th.dp_accmd_excess_risk_bound, dict(n=N, epsilon=EPSILON, delta=DELTA, gaussian_width=30.0, bregman=2.0), "bregman", 0.5, []),
    (th.dp_gd_pl_excess_risk_bound, APPROX, "n", -2, [(2, math.log)]),
    (th.dp_gd_pl_excess_risk_bound, APPROX, "d", 1, []),
    (th.dp_gd_pl_excess_risk_bound, APPROX, "epsilon", -2, []),
    (th.dp_gd_nonconvex_gradient_norm_bound, APPROX, "n", -1, []),
    (th.dp_gd_nonconvex_gradient_norm_bound, APPROX, "d", 0.5, []),
    (th.dp_gd_nonconvex_gradient_norm_bound, APPROX, "epsilon", -1, []),
    (th.dp_gd_nonconvex_gradient_norm_bound, dict(APPROX, smoothness=3.0), "smoothness", 0.5, []),
    # Zhang, Zheng, Mou, Wang 2017
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "n", -2, []),
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "epsilon", -2, []),
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(APPROX, strong_convexity=MU), "strong_convexity", -2, []),
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(BASE, strong_convexity=MU), "n", -2, []),
    (th.gd_output_perturbation_strongly_convex_excess_risk_bound, dict(BASE, strong_convexity=MU), "d", 2, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, BASE, "n", -2 / 3, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, BASE, "d", 2 / 3, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, BASE, "epsilon", -2 / 3, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, APPROX, "n", -2 / 3, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, APPROX, "d", 1 / 3, []),
    (th.gd_output_perturbation_convex_excess_risk_bound, dict(APPROX, w_norm=2.0), "w_norm", 4 / 3, []),
    (th.output_perturbation_excess_risk_bound, dict(APPROX, strong_convexity=MU), "n", -2, []),
    (th.output_perturbation_excess_risk_bound, dict(APPROX, strong_convexity=MU), "d", 1, []),
    (th.rrpsgd_gradient_norm_bound, APPROX, "n", -1, [(0.5, ln_n_over_delta)]),
    (th.rrpsgd_gradient_norm_bound, APPROX, "d", 0.5, []),
    (th.rrpsgd_gradient_norm_bound, APPROX, "epsilon", -1, []),
    (th.rrpsgd_gradient_norm_bound, dict(APPROX, initial_gap=0.3), "initial_gap", 0.5, []),
    (th.rrpsgd_convex_excess_risk_bound, APPROX, "n", -1, [(0.5, ln_n_over_delta)]),
    (th.rrpsgd_convex_excess_risk_bound, APPROX, "d", 0.5, []),
    # Wang, Chen, Xu 2019
    (th.dp_gld_excess_risk_bound, APPROX, "n", 0, [(-1, math.log)]),
    (th.dp_gld_excess_risk_bound, APPROX, "d", 1, []),
    (th.dp_gld_excess_risk_bound, APPROX, "epsilon", -2, []),
    (th.dp_fw_l2_population_risk_bound, APPROX, "n", -0.5, []),
    (th.dp_fw_l2_population_risk_bound, APPROX, "d", 0.25, []),
    (th.dp_fw_l2_population_risk_bound, APPROX, "epsilon", -0.5, []),
    (th.dp_fw_l1_population_risk_bound, APPROX, "n", -0.5, [(0.5, lambda n: math.log(n * D / ETA))]),
    (th.dp_fw_l1_population_risk_bound, APPROX, "d", 0, [(0.5, lambda d: math.log(N * d / ETA))]),
    (th.dp_fw_l1_population_risk_bound, APPROX, "epsilon", -0.5, []),
    (th.dp_gd_sosp_accuracy_bound, APPROX, "n", -0.5, []),
    (th.dp_gd_sosp_accuracy_bound, APPROX, "d", 0.25, []),
    (th.dp_sosp_accuracy_bound, APPROX, "n", -0.5, []),
    (th.dp_sosp_accuracy_bound, APPROX, "d", 0.5, []),
    (th.dp_sosp_accuracy_bound, APPROX, "epsilon", -0.5, []),
    (th.dp_gd_sosp_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "alpha", -2, []),
    (th.dp_gd_sosp_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "d", 0.5, []),
    (th.dp_sosp_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "alpha", -2, []),
    (th.dp_sosp_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "d", 1, []),
    (th.dp_sosp_constrained_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "d", 1, []),
    (th.dp_sosp_constrained_sample_complexity, dict(alpha=0.1, d=D, epsilon=EPSILON, delta=DELTA), "epsilon", -1, []),
    # gradient complexities
    (th.dp_sgd_gradient_complexity, dict(n=N), "n", 2, []),
    (th.noisy_gd_gradient_complexity, dict(n=N), "n", 3, []),
    (th.rrpsgd_gradient_complexity, dict(n=N), "n", 2, []),
    (th.dp_accmd_gradient_complexity, dict(n=N, epsilon=EPSILON, gaussian_width=30.0), "n", 1.5, []),
    (th.dp_accmd_gradient_complexity, dict(n=N, epsilon=EPSILON, gaussian_width=30.0), "epsilon", 0.5, []),
    (th.gd_output_perturbation_gradient_complexity, BASE, "n", 5 / 3, []),
    (th.gd_output_perturbation_gradient_complexity, APPROX, "n", 5 / 3, []),
    (th.dp_gd_nonconvex_gradient_complexity, APPROX, "n", 2, []),
    (th.dp_gld_gradient_complexity, dict(n=N, epsilon=EPSILON, delta=DELTA), "n", 3, [(-1, math.log)]),
]


def _id(case):
    function, kwargs, parameter, exponent, logs = case
    return f"{function.__name__}-{parameter}-{'pure' if kwargs.get('delta', 0) == 0 else 'approx'}"


@pytest.mark.parametrize("case", SCALING, ids=[_id(c) for c in SCALING])
def test_slope_matches_stated_exponent_and_log_factors(case):
    function, kwargs, parameter, exponent, logs = case
    x = kwargs[parameter]
    expected = exponent + sum(power * log_slope(g, x) for power, g in logs)
    assert th.loglog_slope(function, parameter, **kwargs) == pytest.approx(expected, abs=1e-9)
    # the same over a decade (a finite-ratio check, not only a doubling)
    expected10 = exponent + sum(power * log_slope(g, x, 10.0) for power, g in logs)
    assert th.loglog_slope(function, parameter, factor=10.0, **kwargs) == pytest.approx(expected10, abs=1e-9)


@pytest.mark.parametrize("case", [c for c in SCALING if c[4] and c[2] == "n"], ids=lambda c: _id(c))
def test_log_factors_only_bend_the_slope_slightly_and_fade_with_n(case):
    function, kwargs, parameter, exponent, logs = case
    slopes = [th.loglog_slope(function, "n", **dict(kwargs, n=n)) for n in (1e4, 1e8, 1e16)]
    assert all(abs(s - exponent) < 0.35 for s in slopes)
    assert abs(slopes[0] - exponent) > abs(slopes[1] - exponent) > abs(slopes[2] - exponent)


def test_brief_examples_strongly_convex_and_convex_slopes():
    sc = dict(n=1e5, d=50, epsilon=1.0, delta=1e-6, strong_convexity=0.1)
    assert th.slope_in_n("gd_output_perturbation", **sc) == pytest.approx(-2.0)
    assert th.slope_in("gd_output_perturbation", "d", **sc) == pytest.approx(1.0)
    assert th.slope_in("gd_output_perturbation", "epsilon", **sc) == pytest.approx(-2.0)
    convex = dict(n=1e5, d=50, epsilon=1.0, delta=1e-6)
    assert th.slope_in_n("dp_svrg_pp", **convex) == pytest.approx(-1.0)
    assert th.slope_in("dp_svrg_pp", "d", **convex) == pytest.approx(0.5)
    assert th.slope_in_n("objective_perturbation", **convex) == pytest.approx(-1.0)
    # with log(n) factors the slope is above the exponent but close to it
    assert -2.0 < th.slope_in_n("dp_svrg", **sc) < -1.85
    assert -2.0 < th.slope_in_n("dp_sgd", **sc) < -1.85
    assert -1.0 < th.slope_in_n("dp_sgd", **convex) < -0.9


@pytest.mark.parametrize("algorithm", sorted(th.BOUNDS))
def test_slope_in_n_is_the_slope_of_the_selected_bound(algorithm):
    problem = dict(n=1e5, d=20, epsilon=1.0, delta=1e-6, strong_convexity=0.1, gaussian_width=5.0)
    case = th.bound_case(algorithm, **problem)
    direct = th.loglog_slope(lambda **p: case(**p), "n", **problem)
    assert th.slope_in_n(algorithm, **problem) == pytest.approx(direct, abs=1e-12)
    assert th.slope_in_n(algorithm, **problem) < 0  # every bound improves with more data


# ----------------------------------------------------------------------------------------
# lower bounds never exceed the matching upper bounds
# ----------------------------------------------------------------------------------------

GRID = [
    dict(n=n, d=d, epsilon=eps)
    for n in (1, 10, 1e3, 1e6)
    for d in (1, 10, 1e3)
    for eps in (0.1, 1.0, 10.0)
]


@pytest.mark.parametrize("point", GRID, ids=lambda p: f"n{p['n']:g}-d{p['d']:g}-e{p['epsilon']:g}")
def test_convex_lower_bounds_below_upper_bounds(point):
    # Normalized units L = ||C|| = beta = ||w_hat|| = 1, where the papers' constants agree.
    pure, approx = dict(point), dict(point, delta=DELTA)
    low_pure = th.bst14_lower_bound_convex(**pure)
    assert low_pure <= th.bst14_exponential_mechanism_excess_risk_bound(**pure)
    assert low_pure <= th.bst14_objective_perturbation_convex_excess_risk_bound(**pure)
    assert low_pure <= th.gd_output_perturbation_convex_excess_risk_bound(**pure)
    low = th.bst14_lower_bound_convex(**approx)
    assert low <= low_pure
    assert low <= th.bst14_noisy_sgd_convex_excess_risk_bound(**approx)
    assert low <= th.bst14_objective_perturbation_convex_excess_risk_bound(**approx)
    assert low <= th.gd_output_perturbation_convex_excess_risk_bound(**approx)
    # DP-SVRG++ and RRPSGD hide/parametrize the distance to the optimum: 1 = ||C|| here.
    assert low <= th.dp_svrg_pp_excess_risk_bound(**approx)
    assert low <= th.rrpsgd_convex_excess_risk_bound(**approx)
    # The lower-bound instance is the l2 ball, whose Gaussian width is ~ sqrt(d) ||C||.
    accmd = dict(n=point["n"], epsilon=point["epsilon"], delta=DELTA, gaussian_width=math.sqrt(point["d"]))
    assert low <= th.dp_accmd_excess_risk_bound(**accmd)
    # Skipped: DP-GD (Thm 6.3) and RRPSGD (Thm 5) bound the gradient norm of non-convex
    # losses, for which Wang, Ye, Xu 2017 Remark 6.1 says no lower bound is known; DP-GLD, DP-FW
    # and the SOSP bounds omit their constants (A, lambda, L, M, C_sigma, ...) and FW bounds
    # the population risk of specific models, so no comparison is meaningful.


@pytest.mark.parametrize("mu", [0.01, 0.5, 1.0])
@pytest.mark.parametrize("point", GRID, ids=lambda p: f"n{p['n']:g}-d{p['d']:g}-e{p['epsilon']:g}")
def test_strongly_convex_lower_bounds_below_upper_bounds(point, mu):
    pure, approx = dict(point, strong_convexity=mu), dict(point, delta=DELTA, strong_convexity=mu)
    low_pure = th.bst14_lower_bound_strongly_convex(**pure)
    assert low_pure <= th.bst14_localization_excess_risk_bound(**pure)
    assert low_pure <= th.bst14_objective_perturbation_strongly_convex_excess_risk_bound(**pure)
    assert low_pure <= th.gd_output_perturbation_strongly_convex_excess_risk_bound(**pure)
    assert low_pure <= th.output_perturbation_excess_risk_bound(**pure)
    low = th.bst14_lower_bound_strongly_convex(**approx)
    assert low <= low_pure
    assert low <= th.bst14_noisy_sgd_strongly_convex_excess_risk_bound(**approx)
    assert low <= th.dp_svrg_excess_risk_bound(**approx)
    assert low <= th.bst14_objective_perturbation_strongly_convex_excess_risk_bound(**approx)
    assert low <= th.gd_output_perturbation_strongly_convex_excess_risk_bound(**approx)
    assert low <= th.output_perturbation_excess_risk_bound(**approx)
    if mu == 1.0:
        # Theorem 6.2 (PL) prints no mu (hidden in its O~): comparable only at mu = 1.
        assert low <= th.dp_gd_pl_excess_risk_bound(**dict(point, delta=DELTA))


def test_lower_bounds_with_general_constants_and_cap():
    # BST14 upper vs lower with L = 2, ||C|| = 3 (same paper, same normalization)
    for n in (1, 30, 1e4):
        kw = dict(n=n, d=40, epsilon=0.5, lipschitz=2.0, diameter=3.0)
        assert th.bst14_lower_bound_convex(**kw) <= th.bst14_exponential_mechanism_excess_risk_bound(**kw)
        assert th.bst14_lower_bound_convex(**kw, delta=DELTA) <= th.bst14_noisy_sgd_convex_excess_risk_bound(**kw, delta=DELTA)
        sc = dict(n=n, d=40, epsilon=0.5, lipschitz=2.0, strong_convexity=0.2)
        assert th.bst14_lower_bound_strongly_convex(**sc, diameter=3.0) <= th.bst14_localization_excess_risk_bound(**sc)
    # the cap: no point of C is worse than L ||C||
    assert th.bst14_lower_bound_convex(n=1, d=100, epsilon=0.1, lipschitz=2.0, diameter=3.0) == 6.0
    assert th.bst14_lower_bound_strongly_convex(n=1, d=100, epsilon=0.1, strong_convexity=0.1, diameter=0.5) == 0.5
    # below the cap, the lower bound is the paper's expression
    assert th.bst14_lower_bound_convex(n=1e6, d=100, epsilon=0.5, delta=DELTA) == pytest.approx(10 / (1e6 * 0.5))


# ----------------------------------------------------------------------------------------
# explicit-constant bounds
# ----------------------------------------------------------------------------------------


def test_gd_output_perturbation_explicit_bound():
    kw = dict(n=1e4, d=20, epsilon=1.0, strong_convexity=0.1, smoothness=1.0, lipschitz=1.0, w_norm=2.0)
    values = [th.gd_output_perturbation_strongly_convex_explicit_bound(**kw, iterations=T) for T in (0, 10, 100, 1000)]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    noise = 25 * 1.1**2 * 21 * 20 / (1e8 * 0.01 * 1.0)
    assert values[0] == pytest.approx(0.5 * 4 + noise)
    big_T = dict(kw, iterations=1e7)
    assert th.gd_output_perturbation_strongly_convex_explicit_bound(**big_T) == pytest.approx(noise)
    assert th.loglog_slope(th.gd_output_perturbation_strongly_convex_explicit_bound, "n", **big_T) == pytest.approx(-2)
    assert th.loglog_slope(th.gd_output_perturbation_strongly_convex_explicit_bound, "d", **big_T) == pytest.approx(
        math.log2(41 * 40 / (21 * 20)))
    # the explicit constants dominate the constant-1 order expression of Theorem 2
    for delta in (0.0, DELTA, 0.5):
        order = th.gd_output_perturbation_strongly_convex_excess_risk_bound(
            1e4, 20, 1.0, delta, strong_convexity=0.1)
        explicit = th.gd_output_perturbation_strongly_convex_explicit_bound(
            1e4, 20, 1.0, delta, strong_convexity=0.1, iterations=1e7)
        assert explicit >= order


def test_rrpsgd_explicit_bound_follows_the_order_bound():
    kw = dict(d=20, epsilon=1.0, delta=DELTA)
    for n in (1e6, 1e9):
        explicit = th.loglog_slope(th.rrpsgd_gradient_norm_explicit_bound, "n", n=n, **kw)
        order = th.loglog_slope(th.rrpsgd_gradient_norm_bound, "n", n=n, **kw)
        assert explicit == pytest.approx(order, abs=0.01)
        assert -1.0 < explicit < -0.95
    # at the theorem's step size, eta = D_F / (sigma n) -> the bound ~ beta D_F sigma / n
    n = 1e8
    sigma = math.sqrt(4 + 4 * 20 * math.log(3 * n / DELTA) * math.log(2 / DELTA))
    D_F = math.sqrt(2.0)
    assert th.rrpsgd_gradient_norm_explicit_bound(n=n, **kw) == pytest.approx(D_F * sigma / n, rel=1e-6)


def test_sosp_accuracy_inverts_sample_complexity():
    kw = dict(d=30, epsilon=0.5, delta=DELTA, lipschitz=2.0, smoothness=3.0, loss_bound=4.0, failure_probability=0.1)
    for n in (1e3, 1e6):
        alpha = th.dp_sosp_accuracy_bound(n, **kw, hessian_lipschitz=0.5)
        assert th.dp_sosp_sample_complexity(alpha, **kw, hessian_lipschitz=0.5) == pytest.approx(n)
        alpha = th.dp_gd_sosp_accuracy_bound(n, **kw)
        assert th.dp_gd_sosp_sample_complexity(alpha, **kw) == pytest.approx(n)
    # Theorem 8 needs an extra sqrt(d) (and M / rho) over Theorem 7
    ratio = th.dp_sosp_sample_complexity(0.1, **kw) / th.dp_gd_sosp_sample_complexity(0.1, **kw)
    assert ratio == pytest.approx(3.0 * math.sqrt(30) / 1.0)  # M sqrt(d) / rho


def test_gradient_complexities_order_the_methods():
    n, d, eps = 1e5, 20, 1.0
    svrg = th.dp_svrg_gradient_complexity(n, d, eps, strong_convexity=0.1)
    gd_out = th.gd_output_perturbation_gradient_complexity(n, d, eps, DELTA, strong_convexity=0.1)
    # near-linear in n for the variance-reduced / output-perturbation methods, n^2 for DP-SGD
    assert 1.0 < th.loglog_slope(th.dp_svrg_gradient_complexity, "n", n=n, d=d, epsilon=eps, strong_convexity=0.1) < 1.2
    assert svrg < th.dp_sgd_gradient_complexity(n) < th.noisy_gd_gradient_complexity(n)
    assert gd_out < th.dp_sgd_gradient_complexity(n)
    # the seed's headline: DP-SVRG++ O(n log n) vs O(n^2) for gradient perturbation
    assert 1.0 < th.loglog_slope(th.dp_svrg_pp_gradient_complexity, "n", n=n, d=d, epsilon=eps) < 1.2
    # DP-AccMD n^1.5 vs n^3 for the mirror-descent baseline
    assert th.dp_accmd_gradient_complexity(n, eps, gaussian_width=5.0) < n**3
    assert th.gradient_complexity_for("dp_svrg", n=n, d=d, epsilon=eps, strong_convexity=0.1) == svrg
    assert th.gradient_complexity_for("dp_sgd", n=n, d=d, epsilon=eps) == n**2


# ----------------------------------------------------------------------------------------
# the registry
# ----------------------------------------------------------------------------------------

ALLOWED = {
    "output_perturbation", "gd_output_perturbation", "objective_perturbation", "noisy_gd", "dp_sgd",
    "dp_svrg", "dp_svrg_pp", "dp_accmd", "exponential_mechanism", "localization", "dp_gd", "rrpsgd",
    "dp_gld", "dp_fw_l2", "dp_fw_l1", "dp_sosp",
}


def test_registry_names():
    assert set(th.BOUNDS) == ALLOWED
    assert set(th.GRADIENT_COMPLEXITIES) <= ALLOWED
    for name, bound in th.BOUNDS.items():
        assert bound.algorithm == name and bound.cases
        for case in bound.cases:
            assert case.function.__name__ in FUNCTION_NAMES
            assert any(year in case.source for year in ("2014", "2017", "2019"))


@pytest.mark.parametrize(
    "algorithm, problem, function",
    [
        ("dp_svrg", dict(strong_convexity=0.1, delta=DELTA), th.dp_svrg_excess_risk_bound),
        ("dp_sgd", dict(strong_convexity=0.1, delta=DELTA), th.bst14_noisy_sgd_strongly_convex_excess_risk_bound),
        ("dp_sgd", dict(delta=DELTA), th.bst14_noisy_sgd_convex_excess_risk_bound),
        ("noisy_gd", dict(delta=DELTA), th.bst14_noisy_sgd_convex_excess_risk_bound),
        ("gd_output_perturbation", dict(strong_convexity=0.1), th.gd_output_perturbation_strongly_convex_excess_risk_bound),
        ("gd_output_perturbation", dict(), th.gd_output_perturbation_convex_excess_risk_bound),
        ("gd_output_perturbation", dict(strong_convexity=0.1, setting="convex"), th.gd_output_perturbation_convex_excess_risk_bound),
        ("dp_gd", dict(strong_convexity=0.1, delta=DELTA), th.dp_gd_pl_excess_risk_bound),
        ("dp_gd", dict(delta=DELTA), th.dp_gd_nonconvex_gradient_norm_bound),
        ("rrpsgd", dict(delta=DELTA), th.rrpsgd_gradient_norm_bound),
        ("rrpsgd", dict(delta=DELTA, setting="convex"), th.rrpsgd_convex_excess_risk_bound),
        ("localization", dict(strong_convexity=0.1), th.bst14_localization_excess_risk_bound),
        ("exponential_mechanism", dict(), th.bst14_exponential_mechanism_excess_risk_bound),
        ("dp_sosp", dict(delta=DELTA), th.dp_sosp_accuracy_bound),
    ],
)
def test_bound_for_dispatches_to_the_paper_bound(algorithm, problem, function):
    full = dict(n=1e4, d=20, epsilon=1.0, **problem)
    case = th.bound_case(algorithm, **full)
    assert case.function is function
    params = inspect.signature(function).parameters
    expected = function(**{k: v for k, v in full.items() if k in params})
    assert th.bound_for(algorithm, **full) == expected
    assert th.BOUNDS[algorithm](**full) == expected


def test_bound_for_ignores_parameters_a_bound_does_not_use():
    base = dict(n=1e4, d=20, epsilon=1.0, delta=DELTA)
    assert th.bound_for("dp_svrg_pp", **base, smoothness=7.0, diameter=3.0) == th.bound_for("dp_svrg_pp", **base)
    assert th.bound_for("dp_svrg_pp", **base, lipschitz=3.0) == 3 * th.bound_for("dp_svrg_pp", **base)


@pytest.mark.parametrize(
    "algorithm, problem, error",
    [
        ("dp_svrg", dict(delta=DELTA), ValueError),  # needs strong convexity
        ("localization", dict(), ValueError),
        ("dp_sgd", dict(), ValueError),  # (epsilon, delta) only, delta absent = pure
        ("dp_sgd", dict(delta=0.0), ValueError),
        ("dp_svrg_pp", dict(delta=1.0), ValueError),
        ("dp_svrg_pp", dict(delta=DELTA, setting="strongly_convex"), ValueError),
        ("dp_svrg_pp", dict(delta=DELTA, setting="bogus"), ValueError),
        ("dp_svrg_pp", dict(delta=DELTA, strong_convexity=-1.0), ValueError),
        ("not_an_algorithm", dict(delta=DELTA), ValueError),
        ("dp_svrg_pp", dict(delta=DELTA, epsilom=1.0), TypeError),  # unknown parameter
        ("dp_accmd", dict(delta=DELTA), TypeError),  # missing gaussian_width
    ],
)
def test_bound_for_rejects(algorithm, problem, error):
    with pytest.raises(error):
        th.bound_for(algorithm, n=1e4, d=20, epsilon=1.0, **problem)


def test_slope_helpers_reject():
    with pytest.raises(ValueError):
        th.slope_in_n("dp_svrg_pp", d=20, epsilon=1.0, delta=DELTA)  # no n
    with pytest.raises(ValueError):
        th.loglog_slope(th.dp_svrg_pp_excess_risk_bound, "n", factor=1.0, n=10, d=2, epsilon=1.0, delta=DELTA)
    with pytest.raises(TypeError):
        th.slope_in_n("dp_svrg_pp", n=10, d=2, epsilon=1.0, delta=DELTA, factor=3.0)


# ----------------------------------------------------------------------------------------
# invalid inputs
# ----------------------------------------------------------------------------------------

BAD_VALUES = {
    "n": [0.5, 0, -3, float("nan"), float("inf")],
    "d": [0.5, 0, -1, float("nan")],
    "epsilon": [0, -1.0, float("nan"), float("inf")],
    "delta": [1.0, -0.1, 1.5, float("nan")],
    "alpha": [0, -0.1],
    "strong_convexity": [0, -0.5],
    "lipschitz": [0, -1.0],
    "smoothness": [0, -1.0],
    "diameter": [0, -1.0],
    "gaussian_width": [0],
    "failure_probability": [0, 1.0, 2.0],
    "iterations": [-1.0],
}

INVALID = [
    (f, name, bad)
    for f, kwargs in SENSIBLE.items()
    for name in inspect.signature(f).parameters
    if name in BAD_VALUES
    # strong_convexity = 0 is the convex case of the complexity function
    and not (f is th.gd_output_perturbation_gradient_complexity and name == "strong_convexity")
    for bad in BAD_VALUES[name]
]


@pytest.mark.parametrize("function, name, bad", INVALID, ids=lambda x: getattr(x, "__name__", str(x)))
def test_invalid_inputs_raise_value_error(function, name, bad):
    kwargs = dict(SENSIBLE[function], **{name: bad})
    if name in ("strong_convexity",) and "smoothness" in inspect.signature(function).parameters:
        kwargs.setdefault("smoothness", 1.0)
    with pytest.raises(ValueError):
        function(**kwargs)


APPROX_ONLY = [
    f for f in SENSIBLE
    if "delta" in inspect.signature(f).parameters
    and inspect.signature(f).parameters["delta"].default is inspect.Parameter.empty
]
PURE_OK = [
    f for f in SENSIBLE
    if "delta" in inspect.signature(f).parameters
    and inspect.signature(f).parameters["delta"].default == 0.0
]


@pytest.mark.parametrize("function", APPROX_ONLY, ids=lambda f: f.__name__)
def test_approximate_dp_bounds_reject_delta_zero(function):
    with pytest.raises(ValueError, match="delta"):
        function(**dict(SENSIBLE[function], delta=0.0))


@pytest.mark.parametrize("function", PURE_OK, ids=lambda f: f.__name__)
def test_pure_and_approximate_bounds_accept_both(function):
    pure = function(**dict(SENSIBLE[function], delta=0.0))
    approx = function(**dict(SENSIBLE[function], delta=DELTA))
    assert pure > 0 and approx > 0 and pure != approx


def test_strong_convexity_cannot_exceed_smoothness():
    for function in (
        th.gd_output_perturbation_strongly_convex_excess_risk_bound,
        th.gd_output_perturbation_strongly_convex_explicit_bound,
        th.output_perturbation_excess_risk_bound,
        th.dp_svrg_gradient_complexity,
        th.gd_output_perturbation_gradient_complexity,
    ):
        with pytest.raises(ValueError, match="smoothness"):
            function(**dict(SENSIBLE[function], strong_convexity=2.0, smoothness=1.0))


def test_non_numbers_raise_type_error():
    with pytest.raises(TypeError):
        th.dp_svrg_pp_excess_risk_bound(True, 2, 1.0, DELTA)
    with pytest.raises(TypeError):
        th.dp_svrg_pp_excess_risk_bound(100, 2, "1.0", DELTA)
    with pytest.raises(TypeError):
        th.dp_svrg_pp_excess_risk_bound(100, 2, 1.0, None)
