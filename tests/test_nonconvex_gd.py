"""DP-GD, RRPSGD and DP-GLD (dperm.algorithms.nonconvex_gd): noise equal to the closed-form
calibration (recomputed independently of dperm's calibration code), convergence at huge
epsilon, the random-iterate and random-round distributions, the Langevin step solved
from the budget, and bad input."""

import math
import re

import numpy as np
import dp_accounting as dpa
import pytest
from scipy import optimize, stats

from _event_checks import check_event_accounting
from dperm.algorithms import AssumptionError, get, names
from dperm.algorithms import nonconvex_gd as ng
from dperm.datasets.synthetic import make_glm, make_pl_problem
from dperm.privacy import PrivacyBudget
from dperm.privacy import events as ev
from dperm.privacy.mechanisms import single_release
from dperm.problem import ERMProblem, solve_reference

NAMES = ["dp_gd", "rrpsgd", "dp_gld"]


# ------------------------------------------------------------- independent closed forms
def gdp_delta(mu, eps):
    """delta(eps) of mu-GDP (Dong, Roth, Su 2019, Corollary 2.13), written out with scipy."""
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def gdp_mu(eps, delta):
    return optimize.brentq(lambda m: gdp_delta(m, eps) - delta, 1e-6, 100.0, xtol=1e-14, rtol=1e-13)


def pl_problem(n=1000, d=4, seed=0):
    bunch = make_pl_problem(n, d, rank=2, random_state=seed)
    return bunch, ERMProblem(bunch.data, bunch.target, "squared", None, ("l2_ball", 2.0))


def glm_problem(n=600, d=4, seed=1, regularizer=None, constraint=None):
    bunch = make_glm(n, d, scale=4.0, noise=0.05, random_state=seed)
    return ERMProblem(bunch.data, bunch.target, "sigmoid_squared", regularizer, constraint)


def chi2_uniform_pvalue(samples, values):
    counts = np.array([np.sum(samples == v) for v in values])
    assert counts.sum() == len(samples), "a sample fell outside the support"
    return stats.chisquare(counts).pvalue


# ------------------------------------------------------------------------------ catalogue
def test_registered_with_metadata():
    assert set(NAMES) <= set(names())
    for name in NAMES:
        info = get(name)
        assert "seed" not in info.source.lower() and info.paper and info.gradient_complexity
        assert re.search(r"[A-Z][a-z]+, [A-Z].* (2017|2019), Alg\. \d", info.source)  # the paper's citation
        assert "approximate_dp" in info.requires and "smooth" in info.requires and "lipschitz" in info.requires
    assert "unconstrained" in get("dp_gld").requires


# ------------------------------------------------------------------------ DP-GD: privacy
def test_dp_gd_noise_is_sqrt_T_times_the_analytic_gaussian():
    _, problem = pl_problem()
    n, L = problem.n_samples, problem.lipschitz
    fit = ng.dp_gd(problem, PrivacyBudget(1.0, 1e-5), rng=0, steps=100)
    Delta = 2 * L / n
    release = single_release(fit.event)
    assert isinstance(release, ev.GaussianRelease)
    assert release.sensitivity == pytest.approx(Delta, rel=1e-12)
    assert fit.event.count == 100 == fit.hyperparameters["steps"]
    # ALGORITHMS.md test vector: 100 steps at (1, 1e-5) need noise 37.31 x sensitivity
    assert release.sigma / Delta == pytest.approx(37.31, rel=2e-4)
    # the exact GDP relation, recomputed with scipy: mu = sqrt(T) Delta / sigma spends delta
    mu = math.sqrt(100) * Delta / release.sigma
    assert mu == pytest.approx(gdp_mu(1.0, 1e-5), rel=1e-8)
    assert gdp_delta(mu, 1.0) <= 1e-5 * (1 + 1e-9)
    assert fit.privacy_spent.delta == 1e-5 and fit.privacy_spent.epsilon == pytest.approx(1.0, rel=1e-9)
    assert fit.privacy_spent.epsilon <= 1.0
    check_event_accounting(fit, PrivacyBudget(1.0, 1e-5))


def test_dp_gd_adds_the_declared_noise():
    # one step from 0: coef = -eta (grad F(0) + z), so z is recovered exactly
    problem = glm_problem(n=200, d=3)
    budget = PrivacyBudget(0.5, 1e-6)
    rng = np.random.default_rng(3)
    fits = [ng.dp_gd(problem, budget, rng=rng, steps=1) for _ in range(300)]
    eta, scale = fits[0].hyperparameters["step_size"], single_release(fits[0].event).sigma
    z = np.concatenate([-f.coef / eta - problem.gradient(np.zeros(3)) for f in fits])
    # sample std of 900 normals: relative standard error ~ 1 / sqrt(2 * 900) = 0.024
    assert np.std(z) == pytest.approx(scale, rel=0.1)
    assert abs(np.mean(z)) < 4 * scale / math.sqrt(len(z))


# ------------------------------------------------------------------ DP-GD: the defaults
def test_dp_gd_default_steps_follow_the_theorems():
    bunch, problem = pl_problem(n=2000)
    n, d, beta, G = 2000, 4, problem.smoothness, problem.lipschitz
    budget = PrivacyBudget(2.0, 1e-6)
    mu = gdp_mu(2.0, 1e-6)
    fit = ng.dp_gd(problem, budget, rng=0, pl_constant=bunch.pl_constant)
    kappa = beta / bunch.pl_constant
    assert fit.hyperparameters["regime"] == "pl"
    assert fit.hyperparameters["steps"] == math.ceil(kappa * math.log(n * n * mu * mu / (4 * kappa * d)))
    assert fit.hyperparameters["step_size"] == 1 / beta
    # without a public PL constant the default is Theorem 6.3's T (last iterate still returned),
    # far more than the kappa = 1 guess of Theorem 6.2 earlier versions used
    default = ng.dp_gd(problem, budget, rng=0, max_steps=10**6)
    assert default.hyperparameters["regime"] == "nonconvex" and default.hyperparameters["output"] == "last"
    assert default.hyperparameters["steps"] == math.ceil(n * mu * math.sqrt(beta * 1.0 / (2 * d)) / G)
    assert default.hyperparameters["steps"] > 5 * math.ceil(math.log(n * n * mu * mu / (4 * d)))
    with pytest.raises(ValueError, match="pl_constant"):
        ng.dp_gd(problem, budget, rng=0, regime="pl")
    with pytest.raises(ValueError, match="pl_constant"):
        ng.dp_gd_default_steps("pl", n=n, d=d, mu_gdp=mu, smoothness=beta, lipschitz=G)
    # the non-convex regime (default of output="random"): Theorem 6.3
    fit = ng.dp_gd(problem, budget, rng=0, output="random", initial_gap=0.5, max_steps=10**6)
    assert fit.hyperparameters["regime"] == "nonconvex"
    assert fit.hyperparameters["steps"] == math.ceil(n * mu * math.sqrt(beta * 0.5 / (2 * d)) / G)
    # the cap, with the theorem's value reported
    capped = ng.dp_gd(problem, budget, rng=0, output="random", initial_gap=0.5, max_steps=7)
    assert capped.hyperparameters["steps"] == 7 and capped.info["theorem_steps"] == fit.hyperparameters["steps"]
    assert capped.event.count == 7


def test_dp_gd_strongly_convex_problem_uses_mu_as_pl_constant():
    X = make_glm(300, 3, random_state=0).data
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.05))
    fit = ng.dp_gd(problem, PrivacyBudget(1.0, 1e-6), rng=0)
    assert fit.hyperparameters["pl_constant"] == 0.05


# ------------------------------------------------------------------ DP-GD: convergence
def test_dp_gd_reaches_the_pl_optimum_at_huge_epsilon():
    bunch, problem = pl_problem(n=1000)
    assert np.linalg.norm(bunch.coef_min_norm) < 2.0  # the minimizer is inside the ball
    fit = ng.dp_gd(problem, PrivacyBudget(1e6, 1e-6), rng=0, pl_constant=bunch.pl_constant)
    excess = problem.objective(fit.coef) - bunch.optimal_value
    assert -1e-12 <= excess <= 1e-7
    # with a real budget the noise costs something
    noisy = ng.dp_gd(problem, PrivacyBudget(0.5, 1e-6), rng=0, pl_constant=bunch.pl_constant)
    assert problem.objective(noisy.coef) - bunch.optimal_value > 100 * max(excess, 1e-12)


def test_dp_gd_nonconvex_all_iterates_obey_the_descent_lemma():
    problem = glm_problem()
    beta = problem.smoothness
    fit = ng.dp_gd(problem, PrivacyBudget(1e8, 1e-6), rng=0, output="all", steps=400)
    path = fit.info["iterates"]
    assert path.shape == (401, problem.d)
    np.testing.assert_array_equal(path[-1], fit.coef)
    np.testing.assert_array_equal(path[0], np.zeros(problem.d))
    sq = np.array([np.linalg.norm(problem.gradient(w)) ** 2 for w in path[:-1]])
    f0, fT = problem.objective(path[0]), problem.objective(path[-1])
    # eta = 1/beta: F(w_{t+1}) <= F(w_t) - ||grad F(w_t)||^2 / (2 beta) (noise ~1e-9 here)
    assert sq.sum() / (2 * beta) <= (f0 - fT) * (1 + 1e-3) + 1e-12
    assert sq[-1] < 1e-3 * sq[0]  # a stationary point is approached
    # same seed, output="random": the iterate m of the same path
    rnd = ng.dp_gd(problem, PrivacyBudget(1e8, 1e-6), rng=0, output="random", steps=400)
    np.testing.assert_array_equal(rnd.coef, path[rnd.info["iterate_index"]])
    last = ng.dp_gd(problem, PrivacyBudget(1e8, 1e-6), rng=0, output="last", steps=400)
    np.testing.assert_array_equal(last.coef, fit.coef)


def test_dp_gd_random_iterate_is_uniform_on_0_to_T_minus_1():
    problem = glm_problem(n=50, d=2)
    budget = PrivacyBudget(1.0, 1e-6)
    rng = np.random.default_rng(11)
    fits = [ng.dp_gd(problem, budget, rng=rng, output="random", steps=5) for _ in range(1000)]
    m = np.array([f.info["iterate_index"] for f in fits])
    assert chi2_uniform_pvalue(m, range(5)) > 1e-3
    # the index is that of the returned point: m = 0 returns w_0 = 0
    assert all(np.all(f.coef == 0.0) for f in fits if f.info["iterate_index"] == 0)
    assert all(np.any(f.coef != 0.0) for f in fits if f.info["iterate_index"] > 0)


def test_dp_gd_projects_and_applies_the_prox():
    problem = glm_problem(n=300, d=5, regularizer=("l1", 0.05), constraint=("l2_ball", 0.3))
    fit = ng.dp_gd(problem, PrivacyBudget(0.2, 1e-6), rng=0, output="all", steps=50)
    norms = np.linalg.norm(fit.info["iterates"], axis=1)
    assert norms.max() <= 0.3 * (1 + 1e-12)
    assert np.any(fit.info["iterates"][1:] == 0.0)  # soft thresholding zeroes coordinates


# -------------------------------------------------------------------------------- RRPSGD
def test_random_round_distribution_matches_the_formula():
    beta = 2.0
    etas = np.array([0.1, 0.5, 0.9, 0.2, 0.05])
    p = ng.random_round_distribution(etas, beta)
    w = 2 * etas - beta * etas**2
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-14)
    assert p.sum() == pytest.approx(1.0, abs=1e-15) and np.all(p > 0)
    np.testing.assert_allclose(ng.random_round_distribution(np.full(7, 0.3), beta), np.full(7, 1 / 7))
    # a constant step (kept as a number by rrpsgd) gives a uniform R on {1, ..., T_max}
    problem = glm_problem(n=64, d=2)
    rng = np.random.default_rng(6)
    R = np.array([ng.rrpsgd(problem, PrivacyBudget(2.0, 1e-5), rng=rng, batch_size=8, max_steps=5).info["rounds"]
                  for _ in range(500)])
    assert chi2_uniform_pvalue(R, range(1, 6)) > 1e-3
    for bad in ([0.1, 1.0], [0.0, 0.1], [-0.1], [np.nan], []):
        with pytest.raises(ValueError):
            ng.random_round_distribution(bad, beta)


def test_rrpsgd_draws_R_from_P():
    problem = glm_problem(n=64, d=2)
    beta = problem.smoothness
    etas = np.array([0.2, 1.0, 0.6, 1.5]) / beta
    p = ng.random_round_distribution(etas, beta)
    rng = np.random.default_rng(5)
    R = np.array([ng.rrpsgd(problem, PrivacyBudget(2.0, 1e-5), rng=rng, batch_size=8, max_steps=4,
                            step_size=etas).info["rounds"] for _ in range(1000)])
    counts = np.array([np.sum(R == k) for k in (1, 2, 3, 4)])
    assert counts.sum() == len(R)
    assert stats.chisquare(counts, p * len(R)).pvalue > 1e-3


def test_rrpsgd_long_runs_are_chunked_without_changing_the_stream(monkeypatch):
    problem = glm_problem(n=100, d=2)
    kw = dict(rng=3, batch_size=5, max_steps=6000, step_size=0.5 / problem.smoothness)
    one = ng.rrpsgd(problem, PrivacyBudget(1.0, 1e-5), **kw)
    monkeypatch.setattr(ng, "_CHUNK", 1024)
    chunked = ng.rrpsgd(problem, PrivacyBudget(1.0, 1e-5), **kw)
    assert one.info["rounds"] == chunked.info["rounds"] > 1024
    np.testing.assert_array_equal(one.coef, chunked.coef)


def _dp_accounting_epsilon(sigma, L, q, steps, delta, accountant="pld"):
    """Epsilon of ``steps`` Poisson-subsampled Gaussian releases of a batch sum of vectors of
    norm <= L plus N(0, sigma^2 I), by dp-accounting directly, replace-one."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    relation = dpa.NeighboringRelation.REPLACE_ONE
    if accountant == "pld":
        # PLD GaussianDpEvent(z): per-example bound 1, noise std z (replace-one sensitivity 2)
        acc = pld_privacy_accountant.PLDAccountant(relation, value_discretization_interval=1e-4)
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma / L)), steps)
    else:
        # RDP of sampling without replacement takes the base mechanism's replace-one RDP,
        # alpha Delta^2 / (2 sigma^2) with Delta = 2L: noise multiplier sigma / (2L)
        acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation)
        n = int(round(1 / q))
        event = dpa.SampledWithoutReplacementDpEvent(n, 1, dpa.GaussianDpEvent(sigma / (2 * L)))
        acc.compose(dpa.SelfComposedDpEvent(event, steps))
    return acc.get_epsilon(delta)


def _subsampled_release(fit):
    """(sampling event, its Gaussian release, count) of rrpsgd's event."""
    assert isinstance(fit.event, ev.SelfComposedDpEvent)
    sampled = fit.event.event
    return sampled, sampled.event, fit.event.count


def test_rrpsgd_is_accounted_at_T_max_minibatch_poisson():
    problem = glm_problem(n=400, d=3)
    budget = PrivacyBudget(1.0, 1e-5)
    fit = ng.rrpsgd(problem, budget, rng=0)
    hp = fit.hyperparameters
    assert hp["batch_size"] == 20 and hp["max_steps"] == 400 and hp["sampling"] == "poisson"
    sampled, release, count = _subsampled_release(fit)
    assert isinstance(sampled, ev.PoissonSampledDpEvent) and sampled.sampling_probability == 20 / 400
    assert count == 400 and release.sensitivity == 2 * problem.lipschitz
    assert 1 <= fit.info["rounds"] <= 400
    eps = _dp_accounting_epsilon(release.sigma, problem.lipschitz, 20 / 400, 400, 1e-5)
    assert eps == pytest.approx(1.0, rel=0.01)
    assert fit.privacy_spent.epsilon <= 1.0 and fit.privacy_spent.epsilon == pytest.approx(1.0, rel=1e-3)
    check_event_accounting(fit, budget)
    # at the worst case T_max, not at R: fewer releases would need less noise
    shorter = ng.rrpsgd(problem, budget, rng=0, max_steps=100)
    assert _subsampled_release(shorter)[1].sigma < release.sigma


def test_rrpsgd_paper_schedule():
    problem = glm_problem(n=40, d=2)
    budget = PrivacyBudget(1.0, 1e-4)
    fit = ng.rrpsgd(problem, budget, rng=0, schedule="paper")
    hp = fit.hyperparameters
    assert (hp["batch_size"], hp["max_steps"], hp["sampling"]) == (1, 1600, "without_replacement")
    sampled, release, count = _subsampled_release(fit)
    assert isinstance(sampled, ev.SampledWithoutReplacementDpEvent) and count == 1600
    assert (sampled.source_dataset_size, sampled.sample_size) == (40, 1)
    # A fixed-size batch under replace-one is accounted by the symmetrized add-or-remove pair
    # at twice the shift (dperm.privacy.pld.fixed_batch_gaussian_pmf): at least what
    # composing dp-accounting's add-or-remove pairs separately gives, and well above
    # Poisson sampling's replace-one figure at the same noise.
    separate = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    separate.compose(dpa.PoissonSampledDpEvent(1 / 40, dpa.GaussianDpEvent(release.sigma / release.sensitivity)), 1600)
    assert separate.get_epsilon(1e-4) <= fit.privacy_spent.epsilon * 1.001
    assert _dp_accounting_epsilon(release.sigma, problem.lipschitz, 1 / 40, 1600, 1e-4) < 0.9
    check_event_accounting(fit, budget, independent=False)
    # the RDP bound earlier versions calibrated with is far looser at this noise
    assert _dp_accounting_epsilon(release.sigma, problem.lipschitz, 1 / 40, 1600, 1e-4, accountant="rdp") > 1.5
    # Theorem 5's constant step: eta = min(1/beta, D_F / (s sqrt(T_max))), s^2 = 4L^2 + d sigma^2
    L, beta, sigma = problem.lipschitz, problem.smoothness, release.sigma
    s = math.sqrt(4 * L**2 + 2 * sigma**2)
    assert hp["step_size"] == pytest.approx(min(1 / beta, math.sqrt(2 / beta) / (s * 40)), rel=1e-12)


def test_rrpsgd_reaches_a_stationary_point_within_theorem_5():
    problem = glm_problem(n=900, d=3)
    beta, L, d = problem.smoothness, problem.lipschitz, 3
    budget = PrivacyBudget(50.0, 1e-6)
    fits = [ng.rrpsgd(problem, budget, rng=seed) for seed in range(8)]
    sq = np.array([np.linalg.norm(problem.gradient(f.coef)) ** 2 for f in fits])
    hp, sigma = fits[0].hyperparameters, _subsampled_release(fits[0])[1].sigma
    b, T, eta = hp["batch_size"], hp["max_steps"], hp["step_size"]
    # Theorem 5 with F* >= 0 (the loss is non-negative): D_F^2 <= 2 F(w_0) / beta, and the
    # noisy gradient's variance bound s^2 = 4 L^2 / b + d sigma^2 / b^2
    D2 = 2 * problem.objective(np.zeros(d)) / beta
    s2 = 4 * L**2 / b + d * sigma**2 / b**2
    bound = beta * (D2 + s2 * T * eta**2) / (T * (2 * eta - beta * eta**2))
    assert sq.mean() <= bound
    assert sq.mean() < 0.05 * np.linalg.norm(problem.gradient(np.zeros(d))) ** 2


# -------------------------------------------------------------------------------- DP-GLD
@pytest.mark.filterwarnings("ignore::dperm.algorithms.nonconvex_gd.LangevinStepWarning")
def test_dp_gld_step_size_spends_the_budget_exactly():
    problem = glm_problem(n=500, d=3, regularizer=("l2", 0.1))
    n, L = 500, problem.lipschitz
    for eps, delta, steps in [(1.0, 1e-5, 200), (0.3, 1e-6, 50), (4.0, 1e-5, 1000)]:
        fit = ng.dp_gld(problem, PrivacyBudget(eps, delta), rng=0, steps=steps, inverse_temperature=30.0)
        eta, beta = fit.hyperparameters["step_size"], fit.hyperparameters["inverse_temperature"]
        assert beta == 30.0 and fit.hyperparameters["steps"] == steps == fit.event.count
        s = math.sqrt(2 / (eta * beta))  # Langevin noise sqrt(2 eta / beta) xi = eta * N(0, s^2)
        assert s == pytest.approx(single_release(fit.event).sigma, rel=1e-12)
        mu = math.sqrt(steps) * (2 * L / n) / s
        assert gdp_delta(mu, eps) == pytest.approx(delta, rel=1e-6)
        assert gdp_delta(mu, eps) <= delta * (1 + 1e-9)
        # Algorithm 1's form: eta = mu^2 n^2 / (2 beta T L^2)
        assert eta == pytest.approx(gdp_mu(eps, delta) ** 2 * n * n / (2 * beta * steps * L * L), rel=1e-8)
        assert fit.info["langevin_std"] == pytest.approx(math.sqrt(2 * eta / beta), rel=1e-12)
        check_event_accounting(fit, PrivacyBudget(eps, delta))


@pytest.mark.filterwarnings("ignore::dperm.algorithms.nonconvex_gd.LangevinStepWarning")
def test_dp_gld_adds_the_langevin_noise():
    # one step from 0: w_1 = -eta grad F(0) + sqrt(2 eta / beta) xi
    problem = glm_problem(n=200, d=3, regularizer=("l2", 0.1))
    rng = np.random.default_rng(2)
    fits = [ng.dp_gld(problem, PrivacyBudget(1.0, 1e-6), rng=rng, steps=1, inverse_temperature=50.0) for _ in range(300)]
    eta = fits[0].hyperparameters["step_size"]
    xi = np.concatenate([f.coef + eta * problem.gradient(np.zeros(3)) for f in fits])
    assert np.std(xi) == pytest.approx(math.sqrt(2 * eta / 50.0), rel=0.1)


def test_dp_gld_default_schedule_meets_theorem_2():
    problem = glm_problem(n=300, d=3, regularizer=("l2", 0.2))
    n, d, L, lam = 300, 3, problem.lipschitz, 0.2
    M = problem.constants.loss_smoothness
    budget = PrivacyBudget(0.5, 1e-6)
    mu = gdp_mu(0.5, 1e-6)
    fit = ng.dp_gld(problem, budget, rng=0, max_steps=10**6)
    beta = max(4 / lam, d, math.log(n))
    assert fit.hyperparameters["inverse_temperature"] == beta
    T = math.ceil(mu**2 * n**2 * (M + lam) ** 2 / (2 * beta * L**2 * lam))
    assert fit.hyperparameters["steps"] == T == fit.info["theorem_steps"]
    assert fit.hyperparameters["step_size"] <= lam / (M + lam) ** 2 * (1 + 1e-9)
    # over the cap: first the step grows up to 1 / (M + lambda), at the same temperature
    T_stable = math.ceil(mu**2 * n**2 * (M + lam) / (2 * beta * L**2))
    assert T_stable < T
    mid = ng.dp_gld(problem, budget, rng=0, max_steps=T_stable)
    assert mid.hyperparameters["steps"] == T_stable and mid.info["theorem_steps"] == T
    assert mid.hyperparameters["inverse_temperature"] == beta
    assert mid.hyperparameters["step_size"] <= 1 / (M + lam) * (1 + 1e-9)
    # then beta is raised so that eta = 1 / (M + lambda)
    capped = ng.dp_gld(problem, budget, rng=0, max_steps=T_stable // 2)
    assert capped.hyperparameters["steps"] == T_stable // 2 and capped.info["theorem_steps"] == T
    assert capped.hyperparameters["inverse_temperature"] > beta
    assert capped.hyperparameters["step_size"] == pytest.approx(1 / (M + lam), rel=1e-8)


def test_dp_gld_default_moves_down_the_objective_with_weak_regularization():
    # lambda = 1e-3: Theorem 2 with constant 1 would ask eta <= lambda / (M + lambda)^2 ~ 1e-3, so
    # 1000 capped steps travel a time ~ 1 and the objective barely moves (the old default).
    problem = glm_problem(n=2000, d=4, regularizer=("l2", 1e-3))
    budget = PrivacyBudget(8.0, 1e-6)
    F0 = problem.objective(np.zeros(4))
    F_ref = solve_reference(problem).objective
    fit = ng.dp_gld(problem, budget, rng=0)
    assert 0.5 / problem.smoothness <= fit.hyperparameters["step_size"] <= (1 + 1e-9) / problem.smoothness
    assert problem.objective(fit.coef) - F_ref < 0.1 * (F0 - F_ref)
    # the old schedule (eta = lambda / (M + lambda)^2 at 1000 steps) stays near w_0
    lam, M = 1e-3, problem.constants.loss_smoothness
    old_beta = gdp_mu(8.0, 1e-6) ** 2 * 2000**2 * (M + lam) ** 2 / (2 * 1000 * problem.lipschitz**2 * lam)
    old = ng.dp_gld(problem, budget, rng=0, steps=1000, inverse_temperature=old_beta)
    assert old.hyperparameters["step_size"] == pytest.approx(lam / (M + lam) ** 2, rel=1e-8)
    assert problem.objective(old.coef) - F_ref > 0.5 * (F0 - F_ref)


def test_dp_gld_converges_and_random_iterate_is_uniform_on_1_to_T():
    problem = glm_problem(n=600, d=3, regularizer=("l2", 0.1))
    fit = ng.dp_gld(problem, PrivacyBudget(1e4, 1e-6), rng=0)
    g0 = np.linalg.norm(problem.gradient(np.zeros(3)))
    assert np.linalg.norm(problem.gradient(fit.coef)) < 0.01 * g0
    assert problem.objective(fit.coef) - solve_reference(problem).objective < 1e-5
    # with a real budget the Langevin noise costs something
    noisy = ng.dp_gld(problem, PrivacyBudget(0.1, 1e-6), rng=0)
    assert np.linalg.norm(problem.gradient(noisy.coef)) > 10 * np.linalg.norm(problem.gradient(fit.coef))
    small = glm_problem(n=40, d=2, regularizer=("l2", 0.1))
    rng = np.random.default_rng(4)
    j = np.array([ng.dp_gld(small, PrivacyBudget(1.0, 1e-6), rng=rng, steps=4, output="random").info["iterate_index"]
                  for _ in range(800)])
    assert chi2_uniform_pvalue(j, range(1, 5)) > 1e-3


def test_dp_gld_warns_when_the_solved_step_is_unstable():
    problem = glm_problem(n=500, d=3, regularizer=("l2", 0.1))
    with pytest.warns(ng.LangevinStepWarning, match="unstable"):
        ng.dp_gld(problem, PrivacyBudget(5.0, 1e-6), rng=0, steps=1, inverse_temperature=30.0)


# ------------------------------------------------------------------- shared properties
@pytest.mark.parametrize("name", NAMES)
def test_sparse_and_float32_inputs_agree_with_dense(name):
    import scipy.sparse as sp

    problem = glm_problem(n=300, d=4, regularizer=("l2", 0.1))
    X = np.array(problem.X)
    X[np.abs(X) < 0.2] = 0.0
    budget = PrivacyBudget(1e3, 1e-5)
    fits = [get(name).fit(ERMProblem(XX, problem.y, "sigmoid_squared", ("l2", 0.1)), budget, rng=0).coef
            for XX in (X, sp.csr_matrix(X), X.astype(np.float32))]
    np.testing.assert_allclose(fits[1], fits[0], atol=1e-10)
    np.testing.assert_allclose(fits[2], fits[0], atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_reproducible_and_budget_reported(name):
    problem = glm_problem(n=300, d=3, regularizer=("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    a, b, c = (get(name).fit(problem, budget, rng=s) for s in (42, 42, 43))
    assert np.array_equal(a.coef, b.coef) and not np.array_equal(a.coef, c.coef)
    assert a.privacy_spent.epsilon <= 1.0 and a.privacy_spent.delta == 1e-5
    assert a.algorithm == name and a.hyperparameters["max_steps"] > 0
    assert "gradient_norm" not in a.info  # no un-noised measurement in the result
    assert a.summary()["algorithm"] == name
    check_event_accounting(a, budget)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("name", NAMES)
def test_bad_input(name):
    fit = get(name).fit
    problem = glm_problem(n=100, d=2, regularizer=("l2", 0.1))
    for eps in (0, -1.0, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            PrivacyBudget(eps, 1e-5)
    with pytest.raises(AssumptionError, match="delta > 0"):
        fit(problem, PrivacyBudget(1.0), rng=0)
    X, y = problem.X, np.where(problem.y > 0.5, 1.0, -1.0)
    with pytest.raises(AssumptionError, match="smooth"):
        fit(ERMProblem(X, y, "hinge", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5), rng=0)
    with pytest.raises(AssumptionError, match="Lipschitz"):
        fit(ERMProblem(X, problem.y, "squared", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5), rng=0)
    with pytest.raises(TypeError, match="PrivacyBudget"):
        fit(problem, (1.0, 1e-5), rng=0)
    if name != "rrpsgd":
        with pytest.raises(ValueError, match="output"):
            fit(problem, PrivacyBudget(1.0, 1e-5), rng=0, output="best")
    with pytest.raises(ValueError, match="steps"):
        fit(problem, PrivacyBudget(1.0, 1e-5), rng=0, max_steps=0)


def test_bad_input_specific():
    problem = glm_problem(n=100, d=2)
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(ValueError, match="regime"):
        ng.dp_gd(problem, budget, rng=0, regime="convex")
    with pytest.raises(ValueError, match="step_size"):
        ng.dp_gd(problem, budget, rng=0, step_size=-1.0)
    with pytest.raises(ValueError, match="pl_constant"):
        ng.dp_gd(problem, budget, rng=0, pl_constant=0.0)
    with pytest.raises(ValueError, match="2/beta"):
        ng.rrpsgd(problem, budget, rng=0, step_size=2.5 / problem.smoothness, max_steps=10)
    with pytest.raises(ValueError, match="shape"):
        ng.rrpsgd(problem, budget, rng=0, step_size=np.full(3, 0.1), max_steps=10)
    with pytest.raises(ValueError, match="batch_size"):
        ng.rrpsgd(problem, budget, rng=0, batch_size=101)
    with pytest.raises(ValueError, match="schedule"):
        ng.rrpsgd(problem, budget, rng=0, schedule="fast")
    with pytest.raises(ValueError, match="sampling"):
        ng.rrpsgd(problem, budget, rng=0, sampling="shuffle")
    with pytest.raises(AssumptionError, match="l2 regularizer"):
        ng.dp_gld(problem, budget, rng=0)
    with pytest.raises(AssumptionError, match="unconstrained"):
        ng.dp_gld(glm_problem(n=100, d=2, regularizer=("l2", 0.1), constraint=("l2_ball", 1.0)), budget, rng=0)
    with pytest.raises(AssumptionError, match="smooth regularizer"):
        ng.dp_gld(glm_problem(n=100, d=2, regularizer=("elastic_net", 0.1, 0.5)), budget, rng=0)
    with pytest.raises(ValueError, match="inverse_temperature"):
        ng.dp_gld(glm_problem(n=100, d=2, regularizer=("l2", 0.1)), budget, rng=0, inverse_temperature=0.0)


# ---------------------------------------------------------------------- rate in n (slow)
@pytest.mark.slow
def test_dp_gd_pl_excess_risk_slope_in_n_matches_theorem_6_2():
    from dperm import theory

    eps, delta, d = 1.0, 1e-6, 4
    ns = np.array([500, 1000, 2000, 4000, 8000, 16000])
    measured, predicted = [], []
    for n in ns:
        bunch, problem = pl_problem(n=int(n), d=d, seed=int(n))
        budget = PrivacyBudget(eps, delta)
        excess = [problem.objective(ng.dp_gd(problem, budget, rng=s, pl_constant=bunch.pl_constant).coef)
                  - bunch.optimal_value for s in range(200)]
        measured.append(np.mean(excess))
        predicted.append(theory.bound_for("dp_gd", n=int(n), d=d, epsilon=eps, delta=delta,
                                          strong_convexity=bunch.pl_constant, lipschitz=problem.lipschitz))
    slope = np.polyfit(np.log(ns), np.log(measured), 1)[0]
    theory_slope = np.polyfit(np.log(ns), np.log(predicted), 1)[0]  # -2 up to the log^2 n factor
    assert theory_slope == pytest.approx(theory.slope_in_n("dp_gd", n=2000, d=d, epsilon=eps, delta=delta,
                                                           strong_convexity=0.5), abs=0.1)
    assert abs(slope - theory_slope) < 0.25, (slope, theory_slope)
