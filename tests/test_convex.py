"""The convex catalogue beyond the core: phase accounting, DP-SVRG / DP-SVRG++, objective
perturbation (AMP), the exponential mechanism over a net, localization.

Each test can fail: budgets are recomputed independently of the code under test,
sensitivities are checked on neighbouring datasets, and the samplers' output laws are
compared with the distributions they claim."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dperm.algorithms import AssumptionError, get
from dperm.algorithms.exponential import grid_net
from dperm.algorithms.objective_perturbation import objective_perturbation_lambda
from dperm.algorithms.svrg import (
    SVRGNoiseWarning,
    minibatch_variance_factor,
    prox_svrg_inner_steps,
    prox_svrg_rate,
    svrg_default_epochs,
)
from dperm.privacy import PrivacyBudget, gaussian_dp_epsilon, gaussian_dp_mu
from dperm.privacy import events as ev
from dperm.privacy.accountant import calibrate, epsilon
from dperm.problem import ERMProblem, solve_reference

from test_algorithms import make_data, neighbours

HUGE = PrivacyBudget(1e6, 1e-5)


def fit(name, problem, budget, seed=0, **hyper):
    return get(name).fit(problem, budget, rng=seed, **hyper)


# ---------------------------------------------------------------- composed Gaussian events
def _phase(ratio, steps, q=1.0, sampling="poisson", n=2000):
    """``steps`` releases of noise ratio sigma/Delta = ratio, sampled at rate q."""
    release = ev.gaussian_release(ratio, 1.0)
    if q >= 1.0:
        return ev.repeated(release, steps)
    step = ev.PoissonSampledDpEvent(q, release) if sampling == "poisson" else \
        ev.SampledWithoutReplacementDpEvent(n, round(q * n), release)
    return ev.repeated(step, steps)


def test_one_full_batch_phase_is_the_closed_form():
    mu = math.sqrt(20) / 7.0
    assert epsilon(_phase(7.0, 20), 1e-5) == pytest.approx(gaussian_dp_epsilon(mu, 1e-5), rel=1e-9)


def test_full_batch_phases_compose_as_gaussian_dp():
    mu = math.sqrt(10 / 5.0**2 + 300 / 12.0**2)
    assert epsilon(ev.composed([_phase(5.0, 10), _phase(12.0, 300)]), 1e-5) == \
        pytest.approx(gaussian_dp_epsilon(mu, 1e-5), rel=1e-9)


def test_fixed_size_phase_costs_more_than_the_poisson_phase():
    """Under replace-one a fixed-size batch's step shifts by up to twice Poisson's
    (tests/test_accounting_vs_mechanism.py checks both against the enumerated mechanism)."""
    poisson = epsilon(_phase(1.5, 500, 0.01, "poisson", 1000), 1e-5)
    fixed = epsilon(_phase(1.5, 500, 0.01, "without_replacement", 1000), 1e-5)
    assert fixed > poisson * 1.05


@pytest.mark.parametrize("grid", [1e-3, 1e-4])
def test_mixed_events_equal_dp_accountings_pld_accountant(grid):
    """The per-release PLD cache must reproduce PLDAccountant exactly (REPLACE_ONE), and a
    cached PLD must not be changed by being composed."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    event = ev.composed([_phase(12.5, 9), _phase(2.2, 1530, 0.0068), _phase(40.0, 3)])
    accountant = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                                      value_discretization_interval=grid)
    # the full-batch releases are one Gaussian (exactly): its PLD, then the subsampled one
    accountant.compose(dpa.GaussianDpEvent(2.0 / math.sqrt(9 / 12.5**2 + 3 / 40.0**2)))
    accountant.compose(dpa.PoissonSampledDpEvent(0.0068, dpa.GaussianDpEvent(4.4)), 1530)
    reference = accountant.get_epsilon(1e-5)
    separate = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                                    value_discretization_interval=grid)
    separate.compose(event)  # the dperm events as they are: the same up to discretization
    assert separate.get_epsilon(1e-5) == pytest.approx(reference, rel=5 * grid)
    assert epsilon(event, 1e-5, grid=grid) == reference
    assert epsilon(event, 1e-5, grid=grid) == reference  # again, from the cached PLDs
    accountant = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                                      value_discretization_interval=grid)
    accountant.compose(dpa.GaussianDpEvent(25.0), 9)
    accountant.compose(dpa.PoissonSampledDpEvent(0.0068, dpa.GaussianDpEvent(5.0)), 1530)
    assert epsilon(ev.composed([_phase(12.5, 9), _phase(2.5, 1530, 0.0068)]), 1e-5, grid=grid) == \
        accountant.get_epsilon(1e-5)


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_calibration_of_one_release_next_to_fixed_ones_spends_the_budget(sampling):
    budget = PrivacyBudget(1.0, 1e-5)
    fixed = _phase(30.0, 5)
    cal = calibrate(lambda x: ev.composed([fixed, _phase(x, 400, 0.02, sampling)]), budget)
    assert cal.spent.epsilon <= 1.0 + 1e-9
    assert epsilon(cal.event, 1e-5) == pytest.approx(cal.spent.epsilon, rel=1e-3)
    assert cal.spent.epsilon >= 0.97  # not wasteful
    louder = epsilon(ev.composed([fixed, _phase(cal.noise * 0.97, 400, 0.02, sampling)]), 1e-5)
    assert louder > 1.0


def test_minibatch_variance_factor():
    assert minibatch_variance_factor(100, 1, "without_replacement") == 1.0  # Prox-SVRG's single example
    assert minibatch_variance_factor(100, 100, "without_replacement") == 0.0  # the full gradient: no variance
    assert minibatch_variance_factor(100, 10, "poisson") == pytest.approx(0.09)


def test_default_epochs_balance_optimization_and_snapshot_noise():
    # more budget (larger mu_s): more epochs pay off; a huge budget: the error term alone decides
    few = svrg_default_epochs(0.25, 10_000, 50, 0.05)
    many = svrg_default_epochs(0.25, 10_000, 50, 5.0)
    assert 1 <= few < many
    assert svrg_default_epochs(0.25, 10**9, 1, 1e3, max_epochs=40) >= 30


def test_snapshot_weights_and_their_noise_factor():
    from dperm.algorithms.svrg import snapshot_noise_factor, snapshot_weights

    assert np.allclose(snapshot_weights(4, "uniform", 0.25), 0.25)
    w = snapshot_weights(6, "geometric", 0.25)
    assert w.sum() == pytest.approx(1.0) and np.allclose(w[:-1] / w[1:], 0.5)  # sqrt(rate): the last is largest
    assert np.allclose(snapshot_weights(1, "geometric", 0.25), [1.0])
    for schedule in ("uniform", "geometric"):
        for T in (1, 3, 10):
            weights = snapshot_weights(T, schedule, 0.25)
            # sum_s rate^(T-s) sigma_s^2 in units of 1/mu^2, with sigma_s^2 = 1/weights[s]
            direct = sum(0.25 ** (T - 1 - s) / weights[s] for s in range(T))
            assert snapshot_noise_factor(T, 0.25, schedule) == pytest.approx(direct)
    # the geometric schedule leaves the smaller bias, increasingly so with T
    assert snapshot_noise_factor(10, 0.25, "geometric") < snapshot_noise_factor(10, 0.25, "uniform") / 3
    with pytest.raises(ValueError, match="snapshot_schedule"):
        snapshot_weights(3, "linear", 0.25)
    X, y = make_data(n=300, d=3)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    for name in ("dp_svrg", "dp_svrg_pp"):
        with pytest.raises(ValueError, match="snapshot_schedule"):
            fit(name, problem, PrivacyBudget(1.0, 1e-5), snapshot_schedule="linear")


def test_svrg_warns_when_the_inner_noise_defeats_the_contraction():
    X, y = make_data(n=2000, d=5)
    weak = ERMProblem(X, y, "logistic", ("l2", 1e-3))
    with pytest.warns(SVRGNoiseWarning, match="outweighs"):
        fit("dp_svrg", weak, PrivacyBudget(0.5, 1e-5))
    strong = ERMProblem(X, y, "logistic", ("l2", 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SVRGNoiseWarning)
        fit("dp_svrg", strong, PrivacyBudget(1e3, 1e-5), epochs=1, inner_steps=5)


def test_prox_svrg_epoch_length_meets_its_rate():
    eta, mu, beta = 1 / 12, 0.1, 1.0
    m = prox_svrg_inner_steps(eta, mu, beta)
    a = 4 * beta * eta
    rate = 1 / (mu * eta * (1 - a) * m) + a * (m + 1) / ((1 - a) * m)
    assert rate <= 0.75 + 1e-12
    assert 1 / (mu * eta * (1 - a) * (m - 1)) + a * m / ((1 - a) * (m - 1)) > 0.75  # the smallest such m


@pytest.mark.parametrize("name", ["dp_svrg", "dp_svrg_pp"])
@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_svrg_budget_recomputed_from_its_noise(name, sampling):
    X, y = make_data(n=2000, d=5)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    out = fit(name, problem, budget, sampling=sampling)
    hyper = out.hyperparameters
    *snapshots, inner = out.event.events
    assert len(snapshots) == hyper["epochs"]
    assert all(s.sensitivity == pytest.approx(2 * problem.lipschitz / 2000) for s in snapshots)
    step = inner.event
    assert inner.count == sum(hyper["epoch_lengths"])
    q = step.sampling_probability if sampling == "poisson" else step.sample_size / step.source_dataset_size
    assert q == pytest.approx(hyper["batch_size"] / 2000)
    # the per-step noise follows the public bound min(2L, beta ||w - w~||) <= 2L, times 2 (replace-one)
    assert step.event.sensitivity == pytest.approx(4 * problem.lipschitz)
    spent = epsilon(out.event, 1e-5)
    assert spent <= 1.0 + 1e-3
    assert out.privacy_spent.epsilon == pytest.approx(spent, rel=1e-4)
    assert hyper["epochs"] == len(hyper["epoch_lengths"])


def test_svrg_defaults_follow_the_theorems():
    X, y = make_data(n=2000, d=5)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    out = fit("dp_svrg", problem, budget)
    beta, eta = problem.smoothness, 1 / (12 * problem.smoothness)
    assert out.hyperparameters["step_size"] == pytest.approx(eta)
    b = round(math.sqrt(2000))
    alpha = (1 - b / 2000) / b  # Poisson batches of expected size b
    m = prox_svrg_inner_steps(eta, 0.1, beta, rate=0.25, variance_factor=alpha)
    assert set(out.hyperparameters["epoch_lengths"]) == {m}
    rate = prox_svrg_rate(eta, 0.1, beta, m, alpha)
    assert rate <= 0.25
    mu_s = math.sqrt(0.8) * gaussian_dp_mu(1.0, 1e-5)
    T = out.hyperparameters["epochs"]
    # the geometric schedule's bound, and the first T within 10% of its minimum
    S = lambda t: (1 - math.sqrt(rate) ** t) / (1 - math.sqrt(rate))  # noqa: E731
    bound = lambda t: rate**t + 4 * 5 / (2000 * mu_s) ** 2 * S(t) ** 2  # noqa: E731
    best = min(bound(t) for t in range(1, 201))
    assert bound(T) <= 1.1 * best and (T == 1 or bound(T - 1) > 1.1 * best)
    # the snapshots' noise: geometric shares of mu_s^2, the last snapshot the least noisy
    scales = np.array([s.sigma / s.sensitivity for s in out.event.events[:-1]])
    assert np.sum(1 / scales**2) == pytest.approx(mu_s**2, rel=1e-9)
    assert np.allclose(scales[1:] / scales[:-1], rate**0.25)
    pp = fit("dp_svrg_pp", problem, budget)
    assert pp.hyperparameters["step_size"] == pytest.approx(1 / (13 * beta))
    lengths = pp.hyperparameters["epoch_lengths"]
    assert all(b == 2 * a for a, b in zip(lengths, lengths[1:]))  # doubling epochs


@pytest.mark.parametrize("name", ["dp_svrg", "dp_svrg_pp"])
@pytest.mark.parametrize("sparse", [False, True])
def test_svrg_converges_at_huge_epsilon(name, sparse):
    X, y = make_data(n=1500, d=6)
    problem = ERMProblem(sp.csr_matrix(X) if sparse else X, y, "logistic", ("l2", 0.05))
    reference = solve_reference(problem)
    out = fit(name, problem, HUGE, epochs=12, batch_size=50)
    assert out.excess_risk(problem, reference) < 1e-4


@pytest.mark.parametrize("sparse", [False, True])
def test_svrg_kernel_corrections_never_exceed_the_public_bound(sparse):
    """The released sum of corrections must have sensitivity <= 2c whatever the snapshot
    slopes hold: at w = w~ (c = 0, no noise) it is exactly 0, elsewhere each term is
    clipped to c / data_norm, so wrong slopes cannot leak past the bound."""
    from dperm.algorithms import _kernels

    X, y = make_data(n=200, d=5)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    Xk = sp.csr_matrix(problem.X) if sparse else np.ascontiguousarray(problem.X)
    code, param = _kernels.loss_code(problem.loss)
    rows = np.arange(200, dtype=np.int64).reshape(1, 200)
    counts = np.array([200], dtype=np.int64)
    normals = np.zeros((1, 5))  # noise switched off to see the corrections alone
    w_snap = np.full(5, 0.3)
    v_snap = np.zeros(5)

    def one_step(w0, slopes, eta=1.0):
        w, w_sum, scales = w0.copy(), np.zeros(5), np.empty(1)
        args = (problem.y, np.zeros(0), w, w_snap, v_snap, slopes, rows, counts, normals, 1.0, np.array([eta]), 1.0, code, param,
                0.0, 0.0, 0, 0.0, w_sum, 2.0 * problem.lipschitz, problem.constants.loss_smoothness,
                problem.data_norm, scales, 0.0)
        if sparse:
            _kernels.svrg_steps_csr(Xk.indptr, Xk.indices, Xk.data, *args)
        else:
            _kernels.svrg_steps_dense(Xk, *args)
        return w0 - w  # = eta * (sum of corrections) (denom 1, no regularizer, no noise)

    true = problem.loss.derivative(problem.X @ w_snap, problem.y)
    wrong = true + np.random.default_rng(0).normal(0, 1.0, size=200)
    assert np.all(one_step(w_snap, wrong) == 0.0)  # c = 0: exactly no correction
    w = w_snap + np.array([1e-3, 0, 0, 0, 0])
    c = min(2 * problem.lipschitz, problem.constants.loss_smoothness * 1e-3)
    # the sum of 200 corrections, each of norm <= c, whatever the slopes
    assert np.linalg.norm(one_step(w, wrong)) <= 200 * c * (1 + 1e-9)
    # and with the true slopes the clip is a no-op: the step equals the exact correction sum
    exact = problem.X.T @ (problem.loss.derivative(problem.X @ w, problem.y) - true)
    assert np.allclose(one_step(w, true), exact, rtol=1e-9, atol=1e-15)


def test_svrg_proximal_l1_is_sparse_where_the_lasso_is():
    rng = np.random.default_rng(3)
    n, d = 1500, 12
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w_true = np.zeros(d)
    w_true[:3] = [6.0, -5.0, 4.0]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w_true)), 1.0, -1.0)
    problem = ERMProblem(X, y, "logistic", ("elastic_net", 0.02, 0.5))
    reference = solve_reference(problem)
    # coordinates the lasso sets to zero with slack in the optimality condition
    slack = np.abs(problem.loss_gradient(reference.coef) + problem.regularizer.l2 * reference.coef)
    zero = (reference.coef == 0) & (slack < 0.8 * problem.regularizer.l1)
    assert zero.sum() >= 3
    out = fit("dp_svrg", problem, HUGE, epochs=15, batch_size=30)
    assert np.all(out.coef[zero] == 0.0)
    assert np.all(out.coef[np.abs(reference.coef) > 1e-2] != 0.0)
    assert out.excess_risk(problem, reference) < 1e-4


def test_svrg_needs_smoothness_and_strong_convexity():
    X, y = make_data(n=300, d=3)
    with pytest.raises(AssumptionError, match="smooth"):
        fit("dp_svrg", ERMProblem(X, y, "hinge", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5))
    with pytest.raises(AssumptionError, match="strongly convex"):
        fit("dp_svrg", ERMProblem(X, y, "logistic"), PrivacyBudget(1.0, 1e-5))
    with pytest.raises(AssumptionError, match="delta > 0"):
        fit("dp_svrg", ERMProblem(X, y, "logistic", ("l2", 0.1)), PrivacyBudget(1.0, 0.0))
    with pytest.raises(ValueError, match="batch_size"):
        fit("dp_svrg", ERMProblem(X, y, "logistic", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5), batch_size=10_000)
    strong = ERMProblem(X, y, "logistic", ("l2", 0.1))
    for bad, match in (({"epoch_rate": 1.0}, "epoch_rate"), ({"epoch_rate": 0.0}, "epoch_rate"),
                       ({"snapshot_share": 1.0}, "snapshot_share"), ({"sampling": "shuffle"}, "sampling")):
        with pytest.raises(ValueError, match=match):
            fit("dp_svrg", strong, PrivacyBudget(1.0, 1e-5), **bad)


# ---------------------------------------------------------------- objective perturbation
@pytest.mark.parametrize("delta", [0.0, 1e-5])
@pytest.mark.parametrize("data_norm", [1.0, 3.0])
def test_objective_perturbation_accounting(delta, data_norm):
    X, y = make_data(n=800, d=4, norm=data_norm)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3), data_norm=data_norm)
    budget = PrivacyBudget(1.0, delta)
    out = fit("objective_perturbation", problem, budget)
    # the curvature term scales with data_norm squared: beta_phi R^2 = R^2 / 4
    beta_loss = data_norm**2 / 4
    assert problem.constants.loss_smoothness == pytest.approx(beta_loss)
    ridge_sum = out.info["extra_ridge"] * 800
    eps_objective = 0.99
    assert ridge_sum == pytest.approx(objective_perturbation_lambda(0.5 * eps_objective, beta_loss, 800, 1e-3))
    objective_part, output_part = out.event.events
    assert objective_part.jacobian_epsilon == pytest.approx(math.log1p(beta_loss / (ridge_sum + 800 * 1e-3)))
    assert objective_part.sensitivity == pytest.approx(2 * problem.lipschitz)
    assert objective_part.noise == ("gaussian" if delta else "l2_laplace")
    assert objective_part.epsilon <= eps_objective * (1 + 1e-9) and objective_part.delta == pytest.approx(0.99 * delta)
    assert out.privacy_spent.epsilon <= 1.0 + 1e-12
    assert out.privacy_spent.epsilon >= 0.999


def test_objective_perturbation_jacobian_bound_on_neighbours():
    """det of the Hessian of n J on neighbouring datasets differs by at most e^eps_J."""
    X, y = make_data(n=200, d=4)
    problem = ERMProblem(X, y, "logistic", ("l2", 1e-3))
    out = fit("objective_perturbation", problem, PrivacyBudget(0.5, 1e-5))
    ridge = out.info["extra_ridge"]
    rng = np.random.default_rng(5)
    worst = 0.0
    for other in neighbours(problem, rng, count=8):
        for _ in range(5):
            w = rng.normal(size=4) * 3
            H = 200 * (problem.hessian(w) + ridge * np.eye(4))
            H2 = 200 * (other.hessian(w) + ridge * np.eye(4))
            worst = max(worst, abs(np.linalg.slogdet(H)[1] - np.linalg.slogdet(H2)[1]))
    assert worst <= out.event.events[0].jacobian_epsilon * (1 + 1e-9)


def test_objective_perturbation_converges_at_huge_epsilon():
    X, y = make_data(n=1000, d=5)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.01))
    reference = solve_reference(problem)
    out = fit("objective_perturbation", problem, HUGE)
    assert out.excess_risk(problem, reference) < 1e-6


@pytest.mark.parametrize("d", [5, 520])  # explicit-Hessian polish, and the CG path above 512 features
def test_objective_perturbation_solver_reaches_its_tolerance_on_float32_data(d):
    from dperm.algorithms.objective_perturbation import _solve_perturbed

    X, y = make_data(n=600, d=d)
    problem64 = ERMProblem(X, y, "logistic", ("l2", 0.05))
    problem32 = ERMProblem(X.astype(np.float32), y, "logistic", ("l2", 0.05))
    linear = np.random.default_rng(1).normal(size=d) * 1e-2
    tolerance = 1e-6 / 600
    w32, residual, _ = _solve_perturbed(problem32, 1e-3, linear, tolerance)
    w64, _, _ = _solve_perturbed(problem64, 1e-3, linear, tolerance)
    assert residual <= tolerance
    # the residual is the float64 gradient norm of J on the float32 data's values
    grad = problem32.astype(np.float64).gradient(w32) + 1e-3 * w32 + linear
    assert np.linalg.norm(grad) <= tolerance
    # float32 rounding of X moves the minimizer by ~1e-7 relative, no more
    assert np.linalg.norm(w32 - w64) <= 1e-5 * max(1.0, np.linalg.norm(w64))


def test_hessian_in_float32_matches_float64():
    X, y = make_data(n=400, d=7)
    p64 = ERMProblem(X, y, "logistic", ("l2", 0.1))
    p32 = ERMProblem(X.astype(np.float32), y, "logistic", ("l2", 0.1))
    w = np.linspace(-1, 1, 7)
    assert np.allclose(p32.hessian(w), p64.hessian(w), rtol=1e-5, atol=1e-7)
    v = np.arange(7.0)
    assert np.allclose(p64.hessian(w) @ v, p64.hessian_vector(w, v), rtol=1e-10, atol=1e-12)


def test_objective_perturbation_refuses_what_it_cannot_account():
    X, y = make_data(n=300, d=3)
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(AssumptionError, match="unconstrained"):
        fit("objective_perturbation", ERMProblem(X, y, "logistic", ("l2", 0.1), ("l2_ball", 1.0)), budget)
    with pytest.raises(AssumptionError, match="smooth regularizer"):
        fit("objective_perturbation", ERMProblem(X, y, "logistic", ("l1", 0.1)), budget)
    with pytest.raises(AssumptionError, match="smooth"):
        fit("objective_perturbation", ERMProblem(X, y, "hinge", ("l2", 0.1)), budget)
    with pytest.raises(ValueError, match="jacobian_share"):
        fit("objective_perturbation", ERMProblem(X, y, "logistic", ("l2", 0.1)), budget, jacobian_share=1.0)


# ---------------------------------------------------------------- exponential mechanism
def small_problem(n=300, d=2, seed=0, mu=0.0, radius=1.0):
    X, y = make_data(n=n, d=d, seed=seed)
    return ERMProblem(X, y, "logistic", ("l2", mu) if mu else None, ("l2_ball", radius))


def test_grid_net_covers_the_set():
    rng = np.random.default_rng(0)
    for constraint_radius, ball in ((1.0, 0.6), (0.5, 2.0)):
        from dperm.problem.constraints import L2Ball

        centre = np.array([0.3, -0.2])
        alpha = 0.05
        net = grid_net(L2Ball(constraint_radius), centre, ball, alpha)
        # every net point is in S = C ∩ B(centre, ball)
        assert np.all(np.linalg.norm(net, axis=1) <= constraint_radius * (1 + 1e-9))
        assert np.all(np.linalg.norm(net - centre, axis=1) <= ball * (1 + 1e-9))
        # every point of S is within alpha of the net
        points = centre + rng.normal(size=(4000, 2)) * ball
        points = points[(np.linalg.norm(points, axis=1) <= constraint_radius) & (np.linalg.norm(points - centre, axis=1) <= ball)]
        gaps = np.min(np.linalg.norm(points[:, None, :] - net[None, :, :], axis=2), axis=1)
        assert gaps.max() <= alpha * (1 + 1e-9)


def test_exponential_mechanism_samples_the_exponential_law():
    problem = small_problem(n=100, d=1)
    problem = ERMProblem(problem.X, problem.y, "logistic", None, ("l2_ball", 1.0))
    alpha, eps = 0.25, 0.5
    draws = np.array([fit("exponential_mechanism", problem, PrivacyBudget(eps, 0.0), seed=s, alpha=alpha).coef[0] for s in range(3000)])
    net = grid_net(problem.constraint, np.zeros(1), 1.0, alpha)[:, 0]
    sensitivity = 2 * problem.lipschitz * np.max(np.abs(net))
    scores = np.array([-100 * problem.objective(np.array([w])) for w in net])
    logits = eps * scores / (2 * sensitivity)
    probabilities = np.exp(logits - logits.max())
    probabilities /= probabilities.sum()
    observed = np.array([np.sum(np.isclose(draws, w)) for w in net])
    assert observed.sum() == 3000
    assert stats.chisquare(observed, probabilities * 3000).pvalue > 1e-3


def test_exponential_mechanism_score_sensitivity_on_neighbours():
    problem = small_problem(n=80, d=2)
    rng = np.random.default_rng(1)
    out = fit("exponential_mechanism", problem, PrivacyBudget(1.0, 0.0), alpha=0.2)
    net = grid_net(problem.constraint, np.zeros(2), 1.0, 0.2)
    centre = np.zeros(2)
    n = problem.n_samples

    def shifted(p, w):
        return -n * (p.objective(w) - p.loss_value(centre))

    worst = max(abs(shifted(problem, w) - shifted(other, w)) for other in neighbours(problem, rng) for w in net)
    assert worst <= out.info["score_sensitivity"] * (1 + 1e-9)


def test_exponential_mechanism_concentrates_at_large_epsilon():
    problem = small_problem(n=300, d=2)
    reference = solve_reference(problem)
    out = fit("exponential_mechanism", problem, PrivacyBudget(1e4, 0.0), alpha=0.01)
    assert out.excess_risk(problem, reference) < problem.lipschitz * 0.01 + 1e-3
    assert out.privacy_spent == PrivacyBudget(1e4, 0.0)


def test_exponential_mechanism_refuses_large_dimension():
    X, y = make_data(n=1000, d=12)
    problem = ERMProblem(X, y, "logistic", None, ("l2_ball", 1.0))
    with pytest.raises(ValueError, match=r"serves d <= \d+"):
        fit("exponential_mechanism", problem, PrivacyBudget(1.0, 0.0))
    with pytest.raises(AssumptionError, match="delta = 0"):
        fit("exponential_mechanism", small_problem(), PrivacyBudget(1.0, 1e-5))
    with pytest.raises(ValueError, match="alpha"):
        fit("exponential_mechanism", small_problem(), PrivacyBudget(1.0, 0.0), alpha=-1.0)


def test_localization_concentrates_and_accounts():
    problem = small_problem(n=2000, d=2, mu=0.5, radius=5.0)
    reference = solve_reference(problem)
    out = fit("localization", problem, PrivacyBudget(200.0, 0.0), alpha=0.002)
    assert out.privacy_spent == PrivacyBudget(200.0, 0.0)
    # the ball holds the minimizer with probability 1 - 1/n, its radius the Gamma quantile
    sens = out.event.events[0].sensitivity
    assert out.info["ball_radius"] == pytest.approx(stats.gamma.ppf(1 - 1 / 2000, 2, scale=sens / 100.0))
    assert out.excess_risk(problem, reference) < 1e-3
    with pytest.raises(AssumptionError, match="strongly convex"):
        fit("localization", small_problem(), PrivacyBudget(1.0, 0.0))


def test_nearly_noiseless_phases_use_the_closed_form_upper_bound():
    event = ev.composed([_phase(0.05, 10, 0.1), _phase(3.0, 4)])
    mu = math.sqrt(10 / 0.05**2 + 4 / 3.0**2)
    assert epsilon(event, 1e-5) == pytest.approx(gaussian_dp_epsilon(mu, 1e-5))
    cal = calibrate(lambda x: _phase(x, 100, 0.01), PrivacyBudget(1e4, 1e-5))
    assert epsilon(cal.event, 1e-5) <= 1e4


def test_exponential_mechanism_refuses_instead_of_overflowing():
    X, y = make_data(n=5000, d=109)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    with pytest.raises(ValueError, match=r"points \(d=109.*serves d <= \d+"):
        fit("exponential_mechanism", problem, PrivacyBudget(1.0, 0.0))


@pytest.mark.parametrize("name", ["dp_svrg", "dp_svrg_pp"])
def test_geometric_snapshot_schedule_lowers_the_excess_risk(name):
    X, y = make_data(n=4000, d=8)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    reference = solve_reference(problem)
    budget = PrivacyBudget(1.0, 1e-5)
    risk = {schedule: np.mean([fit(name, problem, budget, seed, snapshot_schedule=schedule)
                               .excess_risk(problem, reference) for seed in range(6)])
            for schedule in ("uniform", "geometric")}
    assert risk["geometric"] < 0.8 * risk["uniform"], risk
