"""The certified tolerance of objective and output perturbation is chosen from public
inputs (n, d, the summation layout, declared bounds, the noise scale), reachable in
float64 on any data and any chunking, and paid for in the output noise: a fit that the
old code refused after reading the data ("the solver did not reach the tolerance") now
releases, with the looser tolerance in its event."""

import math
import warnings

import numpy as np
import pytest

from dperm.algorithms import get
from dperm.algorithms.objective_perturbation import (
    CERTIFICATE_MARGIN, certified_tolerance, default_tolerance, minimizer_norm_bound,
)
from dperm.privacy.budget import PrivacyBudget
from dperm.problem.erm import ERMProblem, rounding_floor

BUDGET = PrivacyBudget(1.0, 1e-6)


def _data(n, d, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= rng.uniform(size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.ones(d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X.astype(dtype), y


def _output_event(fit):
    return fit.event.events[-1]


def _objective_fit(problem, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = get("objective_perturbation").fit(problem, BUDGET, rng=0, **kw)
    return fit, [str(w.message) for w in caught]


def _check_paid_in_output_noise(fit, problem):
    """The output event's sensitivity is 2 gamma / mu_J for the gamma in the fit, and the
    certified budget is the one asked for."""
    gamma = fit.hyperparameters["tolerance"]
    mu_J = problem.strong_convexity + fit.info["extra_ridge"]
    assert _output_event(fit).sensitivity == pytest.approx(2.0 * gamma / mu_J, rel=1e-12)
    assert fit.privacy_spent.epsilon <= BUDGET.epsilon * (1 + 1e-9)
    assert fit.privacy_spent.delta == BUDGET.delta


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_tolerance_below_float64s_reach_is_raised_before_the_solve_and_the_fit_releases(dtype):
    # The old code raised "the solver did not reach the tolerance 1e-16" after the solve.
    X, y = _data(3000, 5, dtype=dtype)
    problem = ERMProblem(X, y, regularizer=("l2", 1e-3))
    fit, messages = _objective_fit(problem, tolerance=1e-16)
    gamma = fit.hyperparameters["tolerance"]
    assert gamma > 1e-16
    assert any("below what float64 arithmetic can certify" in m for m in messages)
    assert np.all(np.isfinite(fit.coef))
    _check_paid_in_output_noise(fit, problem)
    # the warning quotes public numbers only: the requested and the chosen tolerance
    assert f"{gamma:.3g}" in next(m for m in messages if "certify" in m)


def test_many_block_dask_problem_with_a_tiny_tolerance_releases():
    da = pytest.importorskip("dask.array")
    from dperm.distributed.problem import DaskERMProblem

    X, y = _data(4096, 4, dtype=np.float32)
    problem = DaskERMProblem(da.from_array(X, chunks=(64, 4)), da.from_array(y, chunks=64),
                             regularizer=("l2", 1e-3))
    fit, _ = _objective_fit(problem, tolerance=1e-16)
    assert np.all(np.isfinite(fit.coef))
    _check_paid_in_output_noise(fit, problem)
    assert fit.hyperparameters["tolerance"] == certified_tolerance(
        problem, 1e-16, problem.strong_convexity + fit.info["extra_ridge"],
        _noise_norm(fit, problem.n_features))


def _noise_norm(fit, d):
    from dperm.algorithms.objective_perturbation import noise_norm_bound

    return noise_norm_bound("gaussian", fit.event.events[0].scale, d)


def test_default_tolerance_on_one_large_dask_block_releases():
    # The failure at a small size: one block of 1.5e6 rows makes every coordinate of
    # the old certified gradient a sum of 1.5e6 terms, whose rounding bound (1.7e-10 L) is
    # above the default tolerance (1e-4 L / n = 6.7e-11 L): the old code always refused.
    da = pytest.importorskip("dask.array")
    from dperm.distributed.problem import DaskERMProblem

    n = 1_500_000
    X, y = _data(n, 2, dtype=np.float32)
    problem = DaskERMProblem(da.from_array(X, chunks=(n, 2)), da.from_array(y, chunks=n),
                             regularizer=("l2", 1e-3))
    fit, _ = _objective_fit(problem)
    assert fit.hyperparameters["tolerance"] == pytest.approx(default_tolerance(problem.lipschitz, n))
    assert np.all(np.isfinite(fit.coef))
    _check_paid_in_output_noise(fit, problem)


def test_dask_certificate_sums_are_short_whatever_the_block_size():
    da = pytest.importorskip("dask.array")
    from dperm.distributed.problem import DaskERMProblem

    X, y = _data(40_000, 3)
    one = DaskERMProblem(da.from_array(X, chunks=(40_000, 3)), y, regularizer=("l2", 1e-3))
    many = DaskERMProblem(da.from_array(X, chunks=(500, 3)), y, regularizer=("l2", 1e-3))
    # about sqrt(rows) per sub-block and rows / sub-block sub-blocks (at most 4 sqrt + sqrt), plus the blocks
    assert one.certificate_accumulation() <= 5 * math.isqrt(40_000) + 1 < 40_000
    assert many.certificate_accumulation() <= 5 * math.isqrt(500) + 2 + 80
    w = np.array([0.3, -0.2, 0.1])
    reference = ERMProblem(X, y, regularizer=("l2", 1e-3))
    exact, _ = reference.certified_gradient(w)
    for problem in (one, many):
        grad, bound = problem.certified_gradient(w)
        assert np.linalg.norm(grad - exact) <= bound + 1e-16
        assert bound < 0.05 * 40_000 * 2.0**-53  # the old one-block sum: 40 000 terms


@pytest.mark.parametrize("layout", ["memory", "dask"])
@pytest.mark.parametrize("algorithm, tolerance", [("objective_perturbation", None),
                                                  ("objective_perturbation", 1e-16),
                                                  ("output_perturbation", 1e-17)])
def test_the_tolerance_does_not_depend_on_the_data(layout, algorithm, tolerance):
    """Replace-one neighbours (row 0 replaced by a far-away row, clipped onto the bound),
    and an unrelated dataset of the same shape, release the same fields besides the noisy
    coefficients (tests/test_release.py's check): the same tolerance, event, budget and
    info, and the same warnings, word for word."""
    from test_release import released

    X, y = _data(2000, 4, seed=1)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = np.array([1.0, 0.0, 0.0, 0.0]) * 50.0, -y[0]
    X3, y3 = _data(2000, 4, seed=2)

    def build(X, y):
        if layout == "memory":
            return ERMProblem(X, y, regularizer=("l2", 1e-4))
        da = pytest.importorskip("dask.array")
        from dperm.distributed.problem import DaskERMProblem

        return DaskERMProblem(da.from_array(X, chunks=(250, 4)), y, regularizer=("l2", 1e-4))

    outcomes = []
    for data in ((X, y), (X2, y2), (X3, y3)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            problem = build(*data)
            fit = get(algorithm).fit(problem, BUDGET, rng=0, tolerance=tolerance)
        messages = sorted(str(w.message) for w in caught if "certify" in str(w.message))
        outcomes.append((released(fit), messages))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    if tolerance is not None:
        assert outcomes[0][1], "a raised tolerance warns"
        assert outcomes[0][0]["hyperparameters"]["tolerance"] > tolerance


def test_certified_tolerance_is_above_the_rounding_floor_at_the_public_minimizer_bound():
    X, y = _data(500, 6)
    problem = ERMProblem(X, y, regularizer=("l2", 1e-6))
    m = 1e-6
    gamma = certified_tolerance(problem, 1e-30, m, 10.0)
    w_bound = minimizer_norm_bound(problem, m, 10.0)
    assert gamma == pytest.approx(CERTIFICATE_MARGIN * rounding_floor(problem, w_bound))
    # the bound on the minimizer holds: ||w_J|| for J with that ridge and a linear term of norm 10/n
    from dperm.algorithms.objective_perturbation import _solve_perturbed

    linear = np.full(6, 10.0 / math.sqrt(6)) / 500
    w, residual, _ = _solve_perturbed(problem, 0.0, linear, gamma)
    assert residual <= gamma
    assert np.linalg.norm(w) <= w_bound
    shift = 10.0 / 500
    energy = (shift + math.sqrt(shift**2 + 2 * m * math.log(2))) / m  # J(w_J) <= J(0) = log 2
    assert w_bound == pytest.approx(energy) and energy < (problem.lipschitz + shift) / m


def test_output_perturbation_raises_a_tiny_tolerance_to_its_certified_floor():
    # The old code raised "the solver did not reach the tolerance 1e-17".
    X, y = _data(3000, 5, dtype=np.float32)
    problem = ERMProblem(X, y, regularizer=("l2", 1e-3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = get("output_perturbation").fit(problem, BUDGET, rng=0, tolerance=1e-17)
    tolerance = fit.hyperparameters["tolerance"]
    assert tolerance > 1e-17
    assert any("below what float64 arithmetic can certify" in str(w.message) for w in caught)
    mu, L, n = problem.strong_convexity, problem.lipschitz, problem.n_samples
    assert fit.event.sensitivity == pytest.approx(2 * L / (n * mu) + 2 * tolerance / mu)
    assert np.all(np.isfinite(fit.coef))


@pytest.mark.parametrize("mu", [1e-7, 1e-4, 1e-1])
@pytest.mark.parametrize("d", [3, 40])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("intercept", [0.0, 0.5])
def test_the_floor_tolerance_is_reached_on_every_problem(mu, d, dtype, intercept):
    """At the smallest tolerance the fit may choose (4 times the rounding floor), the
    solver still certifies it: ill-conditioned (mu = 1e-7), wide, float32, clipped rows and
    an intercept, separable data (a large minimizer)."""
    X, y = _data(2500, d, seed=d, dtype=dtype)
    X[:5] *= 3.0  # some rows clipped onto the bound
    y_separable = np.where(X[:, 0] > 0, 1.0, -1.0)
    for labels in (y, y_separable):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = ERMProblem(X, labels, regularizer=("l2", mu), intercept_scaling=intercept)
            fit = get("objective_perturbation").fit(problem, PrivacyBudget(8.0, 1e-6), rng=1, tolerance=1e-300)
        assert np.all(np.isfinite(fit.coef))
        assert fit.hyperparameters["tolerance"] < 1e-9


@pytest.mark.parametrize("constraint, regularizer", [(("l2_ball", 0.5), ("l2", 1e-2)), (("l2_ball", 50.0), ("l2", 1e-2)),
                                                     (("box", 0.3), ("l2", 1e-2)),
                                                     (("l2_ball", 0.5), ("elastic_net", 2e-2, 0.5)),
                                                     (("box", 0.3), ("elastic_net", 2e-2, 0.5))])
@pytest.mark.filterwarnings("ignore:tolerance=:UserWarning")
def test_constrained_output_perturbation_certifies_its_residual(constraint, regularizer):
    """With a constraint the residual was the solver's own float64 figure, uncertified: a
    requested tolerance below float64's reach was kept (1e-13 here, under a rounding error
    of about 1e-12), so the sensitivity 2 gamma / mu could understate the released point's
    distance to the exact minimizer. Now gamma is raised to a public floor before the
    solve, and the released point is one projected step on the certified gradient, whose
    distance to the minimizer is within residual / mu."""
    from dperm.algorithms.output_perturbation import _certified_constrained_point, constrained_tolerance
    from dperm.problem.reference import solve_reference

    X, y = _data(20000, 8, dtype=np.float32)
    problem = ERMProblem(X, y, "logistic", regularizer, constraint)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = get("output_perturbation").fit(problem, BUDGET, rng=0, tolerance=1e-13)
    gamma = fit.hyperparameters["tolerance"]
    assert gamma == constrained_tolerance(problem, 1e-13) > 1e-13
    assert any("below what float64 arithmetic can certify" in str(w.message) for w in caught)
    # the certificate: the point it releases is within residual / mu of the exact minimizer
    exact = solve_reference(problem, tol=1e-12).coef
    point, residual = _certified_constrained_point(problem, solve_reference(problem, tol=0.5 * gamma).coef)
    assert residual <= gamma
    assert np.linalg.norm(point - exact) <= residual / problem.strong_convexity + 1e-12
    # public: the same tolerance on a neighbouring dataset
    y2 = y.copy()
    y2[0] = -y2[0]
    other = get("output_perturbation").fit(ERMProblem(X, y2, "logistic", regularizer, constraint), BUDGET, rng=0,
                                           tolerance=1e-13)
    assert other.hyperparameters["tolerance"] == gamma and repr(other.event) == repr(fit.event)
