"""The core algorithms: sensitivity bounds checked on neighbouring datasets, convergence at
huge epsilon, reported budgets, reproducibility, sparse and float32 input, bad input."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dperm
from dperm.algorithms import AssumptionError, get, names
from dperm.algorithms.output_perturbation import gd_sensitivity, gradient_descent
from dperm.privacy import PrivacyBudget
from dperm.problem import ERMProblem, solve_reference

CORE = ["output_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd"]


def make_data(n=400, d=5, seed=0, norm=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= norm / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d) * 3
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def neighbours(problem, rng, count=6):
    """Replace-one neighbours: adversarial (a row at full norm with its label flipped) and random rows."""
    out = []
    for k in range(count):
        i = int(rng.integers(problem.n_samples))
        x = problem.X[i]
        if k % 2 == 0:
            # same direction at full norm, opposite label: the gradient of row i flips
            out.append(problem.replace_row(i, x / max(np.linalg.norm(x), 1e-12) * problem.data_norm, -problem.y[i]))
        else:
            v = rng.normal(size=problem.n_features)
            out.append(problem.replace_row(i, v / np.linalg.norm(v) * problem.data_norm, rng.choice([-1.0, 1.0])))
    return out


def test_catalogue_lists_core_algorithms():
    assert set(CORE) <= set(names())
    for info in dperm.algorithms.list():
        assert info.source and info.paper and info.guarantee
    with pytest.raises(ValueError, match="unknown algorithm"):
        get("no_such_algorithm")


# ---------------------------------------------------------------- sensitivity, empirically
@pytest.mark.parametrize("mu", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("eta_fraction", [0.5, 1.0, 1.9])
@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_gd_sensitivity_bound_holds_on_neighbours(mu, eta_fraction, loss):
    rng = np.random.default_rng(int(mu * 100 + eta_fraction * 10))
    X, y = make_data(n=60, d=4, seed=int(eta_fraction * 10))
    if loss == "huber":
        y = X @ np.arange(1.0, 5.0) * 0.3
    problem = ERMProblem(X, y, loss, ("l2", mu) if mu else None)
    beta, L, n = problem.smoothness, problem.lipschitz, problem.n_samples
    eta = eta_fraction / beta
    steps = 200
    bound = gd_sensitivity(L, n, eta, steps, mu, beta)
    w = gradient_descent(problem, eta, steps, np.zeros(problem.d))
    observed = max(np.linalg.norm(w - gradient_descent(p, eta, steps, np.zeros(p.d))) for p in neighbours(problem, rng))
    assert observed <= bound * (1 + 1e-9)
    if eta <= 1 / beta:  # the paper's Lemma 2 and, with eta <= 1/(mu+beta), Lemma 3
        assert bound <= 3 * L * steps * eta / n
        if mu > 0 and eta <= 1 / (mu + beta):
            assert bound <= 5 * L * (mu + beta) / (n * mu * beta)


def test_gd_sensitivity_is_attained_up_to_the_loss_slope_at_one_step():
    # At w_0 = 0 the logistic gradient is -y x / 2: flipping one row's label and sign
    # moves the mean gradient by ||x|| / n = half the worst case 2 L / n.
    X, y = make_data(n=50, d=3)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    problem = ERMProblem(X, y, "logistic")
    eta = 1 / problem.smoothness
    neighbour = problem.replace_row(0, X[0], -y[0])
    observed = np.linalg.norm(gradient_descent(problem, eta, 1, np.zeros(3)) - gradient_descent(neighbour, eta, 1, np.zeros(3)))
    assert observed == pytest.approx(0.5 * gd_sensitivity(1.0, 50, eta, 1, 0.0, problem.smoothness))


def test_gd_sensitivity_closed_form():
    # c = 1 (mu = 0): linear growth; contraction: geometric sum
    assert gd_sensitivity(1.0, 100, 0.5, 10, 0.0, 1.0) == pytest.approx(10 * 2 * 0.5 / 100)
    c = max(abs(1 - 0.5 * 0.2), abs(1 - 0.5 * 1.0))
    assert gd_sensitivity(1.0, 100, 0.5, 10, 0.2, 1.0) == pytest.approx(0.01 * (1 - c**10) / (1 - c))
    with pytest.raises(ValueError, match="2/beta"):
        gd_sensitivity(1.0, 100, 2.5, 10, 0.0, 1.0)


@pytest.mark.parametrize("mu", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("constraint", [None, ("l2_ball", 0.5)])
def test_output_perturbation_minimizer_sensitivity_on_neighbours(mu, constraint):
    rng = np.random.default_rng(7)
    X, y = make_data(n=80, d=4, seed=3)
    problem = ERMProblem(X, y, "logistic", ("l2", mu), constraint)
    bound = 2 * problem.lipschitz / (problem.n_samples * mu)
    w = solve_reference(problem).coef
    observed = max(np.linalg.norm(w - solve_reference(p).coef) for p in neighbours(problem, rng, 8))
    assert observed <= bound
    if constraint is None:  # on the ball's boundary the minimizer barely moves
        assert observed > 0.02 * bound  # the flipped-label neighbour moves the minimizer


def test_output_perturbation_sensitivity_includes_the_solver_tolerance():
    X, y = make_data()
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    fit = get("output_perturbation").fit(problem, PrivacyBudget(1.0, 1e-5), rng=0, tolerance=1e-4)
    n, L, mu = problem.n_samples, problem.lipschitz, 0.1
    assert fit.event.sensitivity == pytest.approx(2 * L / (n * mu) + 2 * 1e-4 / mu)


# ------------------------------------------------------------------ noise scale is exact
def test_gd_output_perturbation_noise_matches_the_calibration():
    X, y = make_data(n=300)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(0.5, 1e-6)
    fit = get("gd_output_perturbation").fit(problem, budget, rng=0)
    hp = fit.hyperparameters
    Delta = gd_sensitivity(problem.lipschitz, 300, hp["step_size"], hp["steps"], 0.1, problem.smoothness)
    assert fit.event.sensitivity == pytest.approx(Delta)
    assert fit.event.sigma == pytest.approx(dperm.privacy.analytic_gaussian_sigma(0.5, 1e-6, Delta))
    # the empirical spread of the released point matches the declared scale
    base = gradient_descent(problem, hp["step_size"], hp["steps"], np.zeros(problem.d))
    rng = np.random.default_rng(1)
    z = np.concatenate([get("gd_output_perturbation").fit(problem, budget, rng=rng).coef - base for _ in range(40)])
    assert np.std(z) == pytest.approx(fit.event.sigma, rel=0.15)


def test_pure_dp_uses_l2_laplace():
    X, y = make_data()
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    for name in ["output_perturbation", "gd_output_perturbation"]:
        fit = get(name).fit(problem, PrivacyBudget(1.0), rng=0)
        assert isinstance(fit.event, dperm.privacy.events.L2LaplaceRelease)
        assert fit.privacy_spent == PrivacyBudget(1.0, 0.0)
        assert fit.event.scale == pytest.approx(fit.event.sensitivity / 1.0)


def test_dp_sgd_accounts_the_sampling_it_runs():
    X, y = make_data(n=400)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    for sampling in ["poisson", "without_replacement"]:
        fit = get("dp_sgd").fit(problem, budget, rng=0, sampling=sampling, batch_size=20, steps=300)
        step = fit.event.event
        expected = (dperm.privacy.events.PoissonSampledDpEvent if sampling == "poisson"
                    else dperm.privacy.events.SampledWithoutReplacementDpEvent)
        assert isinstance(step, expected) and fit.event.count == 300
        assert step.event.sensitivity == 2 * problem.lipschitz
        assert dperm.privacy.epsilon(fit.event, 1e-5) <= 1.0 + 1e-3
        assert fit.privacy_spent.epsilon <= 1.0
    # under replace-one a fixed-size batch's step can shift by twice Poisson's: more noise
    poisson = get("dp_sgd").fit(problem, budget, rng=0, sampling="poisson", batch_size=20, steps=300)
    wor = get("dp_sgd").fit(problem, budget, rng=0, sampling="without_replacement", batch_size=20, steps=300)
    assert wor.event.event.event.sigma > poisson.event.event.event.sigma


def test_sgd_step_size_function_is_the_table_block_by_block():
    """dp_sgd evaluates its schedule per block (T = n^2 ~ 1e9 would need 8.5 GB as a
    table): the same run as with the full table, to the last bit."""
    from dperm.algorithms.sgd import run_noisy_sgd

    X, y = make_data(n=300)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    domain = problem.effective_constraint()
    T = 1300  # not a multiple of the block
    table = 1.0 / (0.1 * np.arange(1, T + 1, dtype=np.float64))
    kw = dict(batch_size=5, sampling="poisson", sigma=0.7, domain=domain)
    by_table = run_noisy_sgd(problem, np.zeros(problem.n_features), table, rng=np.random.default_rng(4), **kw)
    by_function = run_noisy_sgd(problem, np.zeros(problem.n_features), lambda t: 1.0 / (0.1 * t), steps=T,
                                rng=np.random.default_rng(4), **kw)
    assert np.array_equal(by_table[0], by_function[0]) and np.array_equal(by_table[1], by_function[1])
    with pytest.raises(ValueError, match="steps"):
        run_noisy_sgd(problem, np.zeros(problem.n_features), lambda t: t, rng=0, **kw)


# ------------------------------------------------------------------- convergence, huge eps
@pytest.mark.parametrize("name, tolerance", [
    ("output_perturbation", 1e-9), ("gd_output_perturbation", 1e-6), ("noisy_gd", 2e-3), ("dp_sgd", 2e-3),
])
def test_huge_epsilon_reaches_the_optimum(name, tolerance):
    X, y = make_data(n=500, d=5)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    reference = solve_reference(problem)
    fit = get(name).fit(problem, PrivacyBudget(1e6, 1e-5), rng=0)
    excess = fit.excess_risk(problem, reference)
    assert -1e-12 <= excess <= tolerance
    # and with a real budget the noise costs something (the test can fail)
    noisy = get(name).fit(problem, PrivacyBudget(0.05, 1e-5), rng=0)
    assert noisy.excess_risk(problem, reference) > excess


@pytest.mark.parametrize("name", CORE)
def test_reproducible_with_a_seed_and_budget_reported(name):
    X, y = make_data()
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    a = get(name).fit(problem, budget, rng=42)
    b = get(name).fit(problem, budget, rng=42)
    c = get(name).fit(problem, budget, rng=43)
    assert np.array_equal(a.coef, b.coef)
    assert not np.array_equal(a.coef, c.coef)
    assert a.privacy_spent.epsilon <= 1.0 and a.privacy_spent.delta <= 1e-5
    assert a.algorithm == name and a.event is not None


@pytest.mark.parametrize("name", CORE)
def test_sparse_and_float32_inputs_agree_with_dense(name):
    X, y = make_data(n=300)
    X[np.abs(X) < 0.2] = 0.0
    dense = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1e5, 1e-5)
    w = get(name).fit(dense, budget, rng=0).coef
    w_sparse = get(name).fit(ERMProblem(sp.csr_matrix(X), y, "logistic", ("l2", 0.1)), budget, rng=0).coef
    w_32 = get(name).fit(ERMProblem(X.astype(np.float32), y, "logistic", ("l2", 0.1)), budget, rng=0).coef
    np.testing.assert_allclose(w_sparse, w, atol=1e-6)
    np.testing.assert_allclose(w_32, w, atol=2e-3)


# ------------------------------------------------------------------------------ bad input
def test_assumption_violations_are_named():
    X, y = make_data()
    with pytest.raises(AssumptionError, match="strongly convex"):
        dperm.minimize(X, y, algorithm="output_perturbation", epsilon=1, delta=1e-5)
    with pytest.raises(AssumptionError, match="delta > 0"):
        dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="noisy_gd", epsilon=1, delta=0)
    with pytest.raises(AssumptionError, match="bounded"):
        dperm.minimize(X, y, algorithm="dp_sgd", epsilon=1, delta=1e-5)
    with pytest.raises(AssumptionError, match="Lipschitz"):
        dperm.minimize(X, X[:, 0], loss="squared", algorithm="gd_output_perturbation", epsilon=1)
    with pytest.raises(AssumptionError, match="smooth"):
        dperm.minimize(X, y, loss="hinge", regularizer=("l2", 0.1), algorithm="gd_output_perturbation", epsilon=1)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epsilon=0), ValueError, "epsilon"),
    (dict(epsilon=-1), ValueError, "epsilon"),
    (dict(epsilon=1, delta=1.0), ValueError, "delta"),
    (dict(epsilon=1, algorithm="sgd_magic"), ValueError, "unknown algorithm"),
    (dict(epsilon=1, loss="cross_entropy"), ValueError, "unknown loss"),
    (dict(epsilon=1, data_norm=0), ValueError, "data_norm"),
    (dict(epsilon=1, regularizer=("l3", 1)), ValueError, "regularizer"),
])
def test_bad_arguments(kwargs, error, match):
    X, y = make_data()
    kwargs = {"regularizer": ("l2", 0.1), **kwargs}
    with pytest.raises(error, match=match):
        dperm.minimize(X, y, **kwargs)


def test_bad_data():
    X, y = make_data()
    kw = dict(regularizer=("l2", 0.1), epsilon=1.0, delta=1e-5)
    # the public inputs (shapes, lengths) are refused; a private value never is (totality:
    # tests/test_direct_totality.py)
    with pytest.raises(ValueError, match="row"):
        dperm.minimize(X[:0], y[:0], **kw)
    with pytest.raises(ValueError, match="row"):
        dperm.minimize(X[:1], y[:1], **kw)
    with pytest.raises(ValueError, match="2-D"):
        dperm.minimize(X[:, 0], y, **kw)
    with pytest.raises(ValueError, match="rows"):
        dperm.minimize(X, y[:-1], **kw)


def test_rows_above_the_declared_norm_are_clipped_silently():
    X, y = make_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        problem = ERMProblem(X * 3, y, data_norm=1.0)
    assert np.linalg.norm(problem.X, axis=1).max() <= 1.0 + 1e-12


def test_hyperparameter_validation():
    X, y = make_data()
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(ValueError, match="steps"):
        get("gd_output_perturbation").fit(problem, budget, steps=0)
    with pytest.raises(ValueError, match="step_size"):
        get("gd_output_perturbation").fit(problem, budget, step_size=-1.0)
    with pytest.raises(ValueError, match="sampling"):
        get("dp_sgd").fit(problem, budget, sampling="shuffle")
    with pytest.raises(ValueError, match="batch_size"):
        get("dp_sgd").fit(problem, budget, batch_size=10_000)
    with pytest.raises(TypeError):
        get("noisy_gd").fit(problem, budget, no_such_parameter=1)


def test_paper_schedule_batch_one_runs_compiled():
    X, y = make_data(n=60)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    fit = get("dp_sgd").fit(problem, PrivacyBudget(1.0, 1e-5), rng=0, batch_size=1, steps=60**2)
    assert fit.hyperparameters["steps"] == 3600 and fit.hyperparameters["batch_size"] == 1
    assert np.linalg.norm(fit.coef) <= problem.lipschitz / 0.1 + 1e-9  # stays in the ball L/mu
    assert math.isfinite(problem.objective(fit.coef))
