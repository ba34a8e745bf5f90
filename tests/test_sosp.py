"""Private second-order stationary points (Wang, Chen, Xu 2019, Alg. 4-6) and the utility measures:
escaping a known strict saddle, certification, exact composition of the gradient and
Hessian phases, the symmetric Hessian noise and its bounds, the sub-problem solvers,
Lanczos against dense eigenvalues, bad input."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

import dperm
import dperm.algorithms.sosp as sosp  # registers dp_sosp and dp_gd_so
from dperm import utility
from dperm.algorithms.registry import AssumptionError, get, names
from dperm.datasets.synthetic import make_saddle_problem
from _event_checks import check_event_accounting, gdp_mu, phases
from dperm.privacy import PrivacyBudget
from dperm.privacy.gaussian_dp import gaussian_dp_epsilon, gaussian_dp_mu
from dperm.privacy.noise import symmetric_gaussian_matrix
from dperm.problem import ERMProblem, solve_reference


def saddle(n=200, d=3, constraint=None, seed=0):
    bunch = make_saddle_problem(n, d, c=1.5, random_state=seed)
    return bunch, ERMProblem(bunch.data, bunch.target, bunch.loss, constraint=constraint)


def composed_epsilon(fit):
    """Epsilon of the fit's releases recomputed from its event (Gaussian DP)."""
    return gaussian_dp_epsilon(gdp_mu(fit.event), fit.privacy_spent.delta)


def noise_phases(fit):
    """The fit's release phases, in order: dicts of scale, sensitivity and releases."""
    return [{"scale": r.sigma, "sensitivity": r.sensitivity, "releases": count} for r, count in phases(fit.event)]


def test_both_algorithms_are_registered_with_sources():
    assert {"dp_sosp", "dp_gd_so"} <= set(names())
    assert "Alg. 4 + 5" in get("dp_sosp").source and "Alg. 6" in get("dp_gd_so").source
    for name in ("dp_sosp", "dp_gd_so"):
        assert {"approximate_dp", "margin_loss"} <= set(get(name).requires)
        assert "seed" not in get(name).source.lower() and "Wang, Chen, Xu 2019" in get(name).source


# ------------------------------------------------------------------------- dp_sosp
def test_dp_sosp_escapes_the_saddle_and_certifies_an_alpha_sosp():
    bunch, problem = saddle()
    rho, alpha = problem.constants.hessian_lipschitz, 0.002
    w_saddle = bunch.saddle_point
    # The start is a strict saddle that is *not* an alpha-SOSP: passing needs an escape.
    assert utility.gradient_norm(problem, w_saddle) < 1e-12
    assert not utility.is_second_order_stationary(problem, w_saddle, alpha)
    fit = sosp.dp_sosp(problem, PrivacyBudget(1e6, 1e-5), rng=1, alpha=alpha, steps=300, init=w_saddle)
    assert fit.info["status"] == "found"
    assert fit.info["selected_iterate"] > 0
    w = fit.coef
    assert problem.objective(w) < bunch.objective_value - 0.01
    assert utility.gradient_norm(problem, w) <= alpha
    assert utility.smallest_hessian_eigenvalue(problem, w) >= -math.sqrt(rho * alpha)
    assert utility.is_second_order_stationary(problem, w, alpha)
    # The certificates are upper / lower bounds of the true values (the high-probability event).
    assert utility.gradient_norm(problem, w) <= fit.info["certified_gradient_norm"] <= alpha
    assert utility.smallest_hessian_eigenvalue(problem, w) >= fit.info["certified_min_eigenvalue"]
    assert fit.privacy_spent.epsilon == pytest.approx(1e6, rel=1e-9)


def test_dp_sosp_rejects_the_saddle_itself_when_no_step_is_taken():
    # T = 1 with a tiny step: both candidates sit at the saddle, whose negative curvature
    # (-0.19) is below -sqrt(rho alpha) = -0.10 and must not be certified.
    _, problem = saddle()
    fit = sosp.dp_sosp(problem, PrivacyBudget(1e6, 1e-5), rng=0, alpha=0.002, steps=1, step_size=1e-9)
    assert fit.info["status"] == "not found"
    assert fit.info["hessian_releases"] == 2  # the gradient test passed, the Hessian test failed


def test_dp_sosp_tiny_budget_reports_not_found_and_spends_the_budget():
    _, problem = saddle()
    budget = PrivacyBudget(0.01, 1e-5)
    fit = sosp.dp_sosp(problem, budget, rng=0, alpha=0.002, steps=50, keep_iterates=True)
    assert fit.info["status"] == "not found" and fit.info["selected_iterate"] is None
    np.testing.assert_array_equal(fit.coef, fit.info["iterates"][-1])  # the last iterate
    assert fit.privacy_spent.delta == budget.delta
    assert fit.privacy_spent.epsilon <= budget.epsilon
    assert fit.privacy_spent.epsilon == pytest.approx(budget.epsilon, rel=1e-9)
    assert composed_epsilon(fit) == pytest.approx(budget.epsilon, rel=1e-9)


@pytest.mark.parametrize(
    "epsilon, delta, hyper",
    [
        (1.0, 1e-5, {}),
        (0.3, 1e-6, {"phase_split": 0.2, "hessian_share": 0.7, "candidates": 7}),
        (8.0, 1e-5, {"phase_split": 0.9, "steps": 40}),
    ],
)
def test_dp_sosp_phases_compose_exactly_to_the_budget(epsilon, delta, hyper):
    _, problem = saddle(n=100)
    fit = sosp.dp_sosp(problem, PrivacyBudget(epsilon, delta), rng=3, **hyper)
    T, K = fit.hyperparameters["steps"], fit.hyperparameters["candidates"]
    gd, grads, hessians = noise_phases(fit)
    assert (gd["releases"], grads["releases"], hessians["releases"]) == (T, K, K)
    n = problem.n_samples
    assert gd["sensitivity"] == grads["sensitivity"] == pytest.approx(2 * problem.lipschitz / n)
    assert hessians["sensitivity"] == pytest.approx(2 * problem.constants.loss_smoothness / n)
    mu = gaussian_dp_mu(epsilon, delta)
    split = fit.hyperparameters["phase_split"]
    # Phase 1 takes phase_split of mu^2; the rest splits over the candidates.
    assert T * (gd["sensitivity"] / gd["scale"]) ** 2 == pytest.approx(split * mu**2, rel=1e-12)
    share = fit.hyperparameters["hessian_share"]
    assert K * (hessians["sensitivity"] / hessians["scale"]) ** 2 == pytest.approx((1 - split) * share * mu**2, rel=1e-12)
    assert composed_epsilon(fit) == pytest.approx(epsilon, rel=1e-9)
    assert fit.privacy_spent.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert gdp_mu(fit.event) == pytest.approx(mu, rel=1e-12)
    check_event_accounting(fit, PrivacyBudget(epsilon, delta))


def test_dp_sosp_candidate_subsample_is_fixed_in_advance():
    _, problem = saddle(n=100)
    fit = sosp.dp_sosp(problem, PrivacyBudget(1.0, 1e-5), rng=0, steps=30, candidates=4)
    assert fit.info["candidate_indices"] == [0, 10, 20, 30]
    fit_all = sosp.dp_sosp(problem, PrivacyBudget(1.0, 1e-5), rng=0, steps=30, candidates="all")
    assert fit_all.hyperparameters["candidates"] == 31
    # The default: 4 candidates, evenly spaced, the same indices as candidates=4.
    fit_default = sosp.dp_sosp(problem, PrivacyBudget(1.0, 1e-5), rng=0, steps=30)
    assert fit_default.info["candidate_indices"] == [0, 10, 20, 30]
    # Fewer candidates, less noise per candidate.
    assert noise_phases(fit)[1]["scale"] < noise_phases(fit_all)[1]["scale"]


def test_dp_sosp_default_alpha_is_the_smallest_certifiable():
    _, problem = saddle()
    fit = sosp.dp_sosp(problem, PrivacyBudget(2.0, 1e-5), rng=0)
    info, alpha = fit.info, fit.hyperparameters["alpha"]
    assert alpha == info["certifiable_alpha"]
    assert fit.hyperparameters["candidates"] == 4 and fit.hyperparameters["order"] == "latest"
    # At the default alpha the margins are at most half the thresholds (balanced split).
    assert info["gradient_margin"] <= alpha / 2 * (1 + 1e-9)
    assert info["eigenvalue_margin"] <= -info["eigenvalue_threshold"] / 2 * (1 + 1e-9)
    assert fit.hyperparameters["step_size"] == pytest.approx(1 / problem.smoothness)


def certifiable_alpha(problem, budget, K, split=0.5, zeta=0.05):
    """The smallest alpha with margins at most half the thresholds, recomputed independently."""
    n, d = problem.n_samples, problem.n_features
    mu_c = gaussian_dp_mu(budget.epsilon, budget.delta) * math.sqrt((1 - split) / K)
    p = zeta / (2 * K)
    a_g = (2 * problem.lipschitz / n) * (math.sqrt(d) + math.sqrt(2 * math.log(1 / p)))
    a_h = (2 * problem.constants.loss_smoothness / n) * (2 * math.sqrt(d) + 2 * math.sqrt(math.log(1 / p)))
    rho = problem.constants.hessian_lipschitz
    # alpha = max(2 a_g / (mu_c sqrt(1 - s)), 4 a_h^2 / (rho mu_c^2 s)), minimized over s.
    s = optimize.brentq(lambda s: 2 * a_g / (mu_c * math.sqrt(1 - s)) - 4 * a_h**2 / (rho * mu_c**2 * s), 1e-12, 1 - 1e-12)
    return 2 * a_g / (mu_c * math.sqrt(1 - s))


def test_dp_sosp_default_alpha_rejects_a_strict_saddle_the_old_default_accepted():
    # At w = 0 of the saddle problem the gradient is 0 and lambda_min = -0.19 (strict saddle):
    # w = 0 is an alpha-SOSP iff sqrt(rho alpha) >= 0.19. The default alpha must be below
    # that level (w = 0 is then not an alpha-SOSP and cannot be certified), while the old
    # default (all T + 1 candidates, max with the theorem's alpha) was above it.
    bunch, problem = saddle(n=20000, d=3)
    budget = PrivacyBudget(2.0, 1e-5)
    rho = problem.constants.hessian_lipschitz
    lam0 = bunch.hessian_eigenvalues[0]
    assert lam0 < 0
    trivial = lam0**2 / rho  # the smallest alpha for which the saddle w = 0 is an alpha-SOSP
    fit = sosp.dp_sosp(problem, budget, rng=0, init=bunch.saddle_point)
    alpha = fit.hyperparameters["alpha"]
    assert alpha == pytest.approx(certifiable_alpha(problem, budget, 4), rel=1e-6)
    assert alpha < trivial
    assert not utility.is_second_order_stationary(problem, bunch.saddle_point, alpha)
    # The old default: all T + 1 candidates and max(theorem alpha, certifiable alpha).
    T = fit.hyperparameters["steps"]
    old = max(fit.info["theorem_alpha"], certifiable_alpha(problem, budget, T + 1))
    assert old > trivial
    old_fit = sosp.dp_sosp(problem, budget, rng=0, init=bunch.saddle_point, candidates="all", order="earliest")
    assert old_fit.hyperparameters["alpha"] == pytest.approx(certifiable_alpha(problem, budget, T + 1), rel=1e-6)
    # A certified output is never the saddle.
    if fit.info["status"] == "found":
        assert utility.smallest_hessian_eigenvalue(problem, fit.coef) >= -math.sqrt(rho * alpha)


def test_dp_sosp_examines_the_latest_candidate_first():
    # At huge epsilon every late iterate is certified: "latest" returns w_T, "earliest" the
    # first certified one; both spend the same budget.
    _, problem = saddle()
    budget = PrivacyBudget(1e6, 1e-5)
    late = sosp.dp_sosp(problem, budget, rng=1, alpha=0.002, steps=300, candidates=7)
    early = sosp.dp_sosp(problem, budget, rng=1, alpha=0.002, steps=300, candidates=7, order="earliest")
    assert late.info["status"] == early.info["status"] == "found"
    assert late.info["selected_iterate"] == 300
    assert early.info["selected_iterate"] < 300
    assert late.info["candidates_examined"] == 1
    assert composed_epsilon(late) == pytest.approx(composed_epsilon(early), rel=1e-12)
    with pytest.raises(ValueError, match="order"):
        sosp.dp_sosp(problem, budget, rng=1, order="random")
    with pytest.raises(ValueError, match="candidates"):
        sosp.dp_sosp(problem, budget, rng=1, candidates="some")


def test_dp_sosp_is_reproducible():
    _, problem = saddle(n=100)
    a = sosp.dp_sosp(problem, PrivacyBudget(5.0, 1e-5), rng=11, steps=60)
    b = sosp.dp_sosp(problem, PrivacyBudget(5.0, 1e-5), rng=11, steps=60)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.info == b.info


# ------------------------------------------------------------------------ dp_gd_so
@pytest.mark.parametrize("radius, alpha, step_size", [(1.0, 0.01, 0.02), (0.5, 0.001, 0.005)])
def test_dp_gd_so_converges_at_large_epsilon_and_stays_in_the_ball(radius, alpha, step_size):
    # In the ball of radius 0.5 the local minimum of the unit ball (norm 0.75) is cut off
    # and the saddle's curvature gain R^2 lambda_min is smaller: a smaller alpha is needed
    # for the saddle not to pass Definition 10 already.
    bunch, problem = saddle(constraint=("l2_ball", radius))
    fit = sosp.dp_gd_so(problem, PrivacyBudget(1e6, 1e-5), rng=0, alpha=alpha, steps=3000,
                        step_size=step_size, theta=0.2, keep_iterates=True)
    assert fit.info["status"] == "found"
    assert fit.info["second_order_steps"] >= 1  # the saddle was left by a second-order step
    norms = np.linalg.norm(fit.info["iterates"], axis=1)
    assert norms.max() <= radius * (1 + 1e-12)
    w = fit.coef
    assert problem.objective(w) < bunch.objective_value - 0.005
    # Definition 10: first-order condition (Frank-Wolfe gap) and the second-order one on
    # the feasible directions, with the true gradient and Hessian.
    assert utility.frank_wolfe_gap(problem, w) <= alpha
    rho = problem.constants.hessian_lipschitz
    _, value = sosp.ball_halfspace_quadratic(problem.hessian(w), w, problem.gradient(w),
                                             fit.hyperparameters["linear_slack"], radius)
    assert value >= -math.sqrt(rho * alpha)
    assert composed_epsilon(fit) == pytest.approx(1e6, rel=1e-9)


@pytest.mark.filterwarnings("ignore:dp_gd_so. .*vacuous:UserWarning")
def test_dp_gd_so_accounts_every_possible_release():
    _, problem = saddle(n=100, constraint=("l2_ball", 1.0))
    budget = PrivacyBudget(0.5, 1e-6)
    fit = sosp.dp_gd_so(problem, budget, rng=0, steps=25, hessian_share=0.3)
    grads, hessians = noise_phases(fit)
    assert grads["releases"] == hessians["releases"] == 25  # worst case, whatever the stopping time
    mu = gaussian_dp_mu(0.5, 1e-6)
    assert 25 * (hessians["sensitivity"] / hessians["scale"]) ** 2 == pytest.approx(0.3 * mu**2, rel=1e-12)
    assert composed_epsilon(fit) == pytest.approx(0.5, rel=1e-9)
    assert fit.privacy_spent.epsilon == pytest.approx(0.5, rel=1e-9)
    assert fit.privacy_spent.delta == 1e-6
    check_event_accounting(fit, budget)


def test_dp_gd_so_default_thresholds_and_steps_are_consistent():
    # Default: separate thresholds alpha = 4 m_g, gamma = 4 m_H / Phi at the T they imply, and
    # T the smallest T >= min(cap, Theorem 9's T at (alpha, gamma)).
    _, problem = saddle(n=20000, constraint=("l2_ball", 0.5))
    budget = PrivacyBudget(4.0, 1e-5)
    fit = sosp.dp_gd_so(problem, budget, rng=0)
    hp, info = fit.hyperparameters, fit.info
    T, alpha, gamma = hp["steps"], hp["alpha"], hp["gamma"]
    assert (info["first_order_threshold"], info["second_order_threshold"]) == (alpha, gamma)
    assert (alpha, gamma) == (info["noise_alpha"], info["noise_gamma"])
    n, d, D, M, rho = problem.n_samples, problem.n_features, 1.0, problem.smoothness, problem.constants.hessian_lipschitz
    B = problem.loss.c**2 / 6
    T9 = math.ceil(8 * D * D * M * B / alpha**2 + 144 * B * rho**2 * D**6 / (5 * gamma**3))
    assert info["theorem_steps"] == T9 and T == min(1000, T9)
    # The noise margins, recomputed from the accounted noise scales, are a quarter of the thresholds.
    grads, hessians = noise_phases(fit)
    p = 0.05 / (2 * T)
    m_g = D * sosp.gaussian_norm_bound(grads["scale"], d, p)
    m_h = D * D * sosp.symmetric_noise_eigenvalue_bound(hessians["scale"], d, p / 2)
    assert (info["gradient_noise_margin"], info["curvature_noise_margin"]) == pytest.approx((m_g, m_h), rel=1e-12)
    assert 4 * m_g == pytest.approx(alpha, rel=1e-9) and 4 * m_h == pytest.approx(gamma, rel=1e-9)
    # The balanced share: both margins the same fraction of their vacuous levels 2 L D, 2 M D^2.
    assert m_g / (2 * problem.lipschitz * D) == pytest.approx(m_h / (2 * M * D * D), rel=1e-9)
    assert composed_epsilon(fit) == pytest.approx(4.0, rel=1e-9)
    assert not info["vacuous_gradient_test"] and not info["vacuous_curvature_test"]
    # The paper's special case gamma = sqrt(rho alpha) when only alpha is given (backward compatible).
    given = sosp.dp_gd_so(problem, budget, rng=0, alpha=0.05)
    assert given.hyperparameters["gamma"] == pytest.approx(math.sqrt(rho * 0.05))
    assert given.hyperparameters["steps"] == min(1000, given.info["theorem_steps"])
    # gamma alone: alpha stays noise-determined at the T the pair implies.
    only_gamma = sosp.dp_gd_so(problem, budget, rng=0, gamma=0.3)
    assert only_gamma.hyperparameters["gamma"] == 0.3
    assert only_gamma.hyperparameters["alpha"] == pytest.approx(4 * only_gamma.info["gradient_noise_margin"], rel=1e-9)
    with pytest.raises(ValueError, match="gamma"):
        sosp.dp_gd_so(problem, budget, rng=0, gamma=0.0)
    # A vacuous test is flagged.
    with pytest.warns(UserWarning, match="vacuous"):
        tiny = sosp.dp_gd_so(problem, budget, rng=0, alpha=10.0)
    assert tiny.info["vacuous_curvature_test"] and tiny.info["vacuous_gradient_test"]


def test_dp_gd_so_default_first_order_threshold_is_not_vacuous_at_benchmark_size():
    # A BIKE-sized robust regression (n = 13903, d = 59, biweight c = 1, ball of radius 3,
    # epsilon = 1). With one threshold for both tests (gamma = sqrt(rho alpha)) the Hessian
    # noise alone forces alpha >= 16 m_H^2 / rho, far above 2 L D (earlier default: 138).
    rng = np.random.default_rng(0)
    n, d, R = 13903, 59, 3.0
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ rng.normal(size=d) / 3 + 0.1 * rng.normal(size=n), -1, 1)
    problem = ERMProblem(X, y, dperm.losses.Biweight(1.0), ("l2", 1e-3), ("l2_ball", R), label_bound=1.0)
    fit = sosp.dp_gd_so(problem, PrivacyBudget(1.0, 1e-5), rng=0)
    alpha, info = fit.hyperparameters["alpha"], fit.info
    L, D, rho = problem.lipschitz, 2 * R, problem.constants.hessian_lipschitz
    assert alpha < 2 * L * D / 2  # with room: the first-order test can fire
    assert not info["vacuous_gradient_test"] and not info["vacuous_curvature_test"]
    assert 16 * info["curvature_noise_margin"] ** 2 / rho > 10 * 2 * L * D  # the single-threshold form would be vacuous
    assert info["stopped_by"] in ("second_order_test", "max_steps")


def test_dp_gd_so_default_thresholds_escape_the_saddle_at_large_epsilon():
    # The start is the strict saddle; with the default (alpha, gamma) the run leaves it and
    # stops at a point that is an (alpha, gamma)-SOSP in the ball, with certified bounds that
    # bound the true values. (With the single threshold of earlier versions this run ended
    # "not found" after 1000 steps; at epsilon 20 it stopped at |w| = 0.05, near the saddle.)
    bunch, problem = saddle(n=20000, constraint=("l2_ball", 1.0))
    assert utility.frank_wolfe_gap(problem, bunch.saddle_point) < 1e-12
    fit = sosp.dp_gd_so(problem, PrivacyBudget(50.0, 1e-5), rng=0, init=bunch.saddle_point)
    hp, info = fit.hyperparameters, fit.info
    alpha, gamma = hp["alpha"], hp["gamma"]
    assert info["status"] == "found" and info["stopped_by"] == "second_order_test"
    assert info["second_order_steps"] >= 1 and info["frank_wolfe_steps"] >= 1
    w = fit.coef
    assert np.linalg.norm(w) > 0.5 and np.linalg.norm(w) <= 1.0 * (1 + 1e-12)
    assert problem.objective(w) < bunch.objective_value - 0.01
    assert alpha < 2 * problem.lipschitz * 2.0 and gamma / 2 < problem.smoothness * 4.0  # neither test vacuous
    # Certificates (the high-probability event): true gap and true curvature on the set.
    gap = utility.frank_wolfe_gap(problem, w)
    assert -gap >= info["certified_gap"] >= -alpha
    assert info["last_gap"] >= info["gap_threshold"] == -alpha / 2
    _, value = sosp.ball_halfspace_quadratic(problem.hessian(w), w, problem.gradient(w), hp["linear_slack"], 1.0)
    assert value >= -gamma
    assert info["last_quadratic_value"] > info["curvature_threshold"] == -gamma / 2
    assert info["certified_curvature"] >= -gamma
    assert utility.smallest_hessian_eigenvalue(problem, w) > 0  # in fact a local minimum


def test_dp_gd_so_default_step_sizes_follow_theorem_9():
    _, problem = saddle(n=100, constraint=("l2_ball", 1.0))
    fit = sosp.dp_gd_so(problem, PrivacyBudget(1.0, 1e-5), rng=0, alpha=0.05)
    hp = fit.hyperparameters
    D, M, rho = 2.0, problem.smoothness, problem.constants.hessian_lipschitz
    gamma = math.sqrt(rho * 0.05)
    assert hp["step_size"] == pytest.approx(0.05 / (2 * D * D * M))
    assert hp["theta"] == pytest.approx(gamma / (2 * rho * D**3))
    assert hp["linear_slack"] == pytest.approx(gamma**2 / (72 * rho * D**3))
    assert hp["gamma"] == pytest.approx(gamma)
    # An explicit gamma replaces sqrt(rho alpha) in theta and r (footnote 6's general form).
    fit = sosp.dp_gd_so(problem, PrivacyBudget(1.0, 1e-5), rng=0, alpha=0.05, gamma=0.2)
    assert fit.hyperparameters["theta"] == pytest.approx(0.2 / (2 * rho * D**3))
    assert fit.hyperparameters["linear_slack"] == pytest.approx(0.2**2 / (72 * rho * D**3))
    assert fit.info["curvature_threshold"] == -0.1


# ---------------------------------------------------------- Hessian noise and sensitivity
def test_symmetric_hessian_noise_has_the_stated_distribution():
    rng = np.random.default_rng(2024)
    d, scale, N = 5, 0.7, 4000
    draws = np.stack([symmetric_gaussian_matrix(rng, d, scale) for _ in range(N)])
    np.testing.assert_array_equal(draws, np.swapaxes(draws, 1, 2))  # exactly symmetric
    iu = np.triu_indices(d)
    upper = draws[:, iu[0], iu[1]]  # (N, d(d+1)/2), diagonal included
    # Each entry's variance is scale^2: sample variance has std scale^2 sqrt(2/(N-1)).
    var = upper.var(axis=0, ddof=1)
    tol = 5 * scale**2 * math.sqrt(2 / (N - 1))
    assert np.all(np.abs(var - scale**2) <= tol)
    diag, off = np.diagonal(draws, axis1=1, axis2=2), upper[:, ~(iu[0] == iu[1])]
    assert abs(diag.var() - scale**2) <= 5 * scale**2 * math.sqrt(2 / (diag.size - 1))
    assert abs(off.var() - scale**2) <= 5 * scale**2 * math.sqrt(2 / (off.size - 1))
    # Gaussian marginals (KS on the pooled, standardized upper triangle; fixed seed).
    assert stats.kstest(upper.ravel() / scale, "norm").pvalue > 0.01
    # Independent upper entries: sample correlations are within 5 / sqrt(N) of 0.
    corr = np.corrcoef(upper.T)
    assert np.max(np.abs(corr - np.eye(corr.shape[0]))) <= 5 / math.sqrt(N)


def test_noise_magnitude_bounds_hold_at_their_confidence():
    rng = np.random.default_rng(7)
    d, scale, p, N = 6, 1.3, 0.1, 3000
    slack = 3 * math.sqrt(p * (1 - p) / N)  # binomial tolerance on a frequency <= p
    z = rng.normal(0.0, scale, size=(N, d))
    assert np.mean(np.linalg.norm(z, axis=1) > sosp.gaussian_norm_bound(scale, d, p)) <= p + slack
    top = np.array([np.linalg.eigvalsh(symmetric_gaussian_matrix(rng, d, scale))[-1] for _ in range(N)])
    bound = sosp.symmetric_noise_eigenvalue_bound(scale, d, p)
    assert np.mean(top > bound) <= p + slack
    # ... and is not vacuous: the mean of lambda_max is at most 2 scale sqrt(d).
    assert top.mean() <= 2 * scale * math.sqrt(d)


def test_hessian_sensitivity_bounds_replace_one_neighbours():
    rng = np.random.default_rng(5)
    _, problem = saddle(n=60, d=4)
    bound = sosp.hessian_sensitivity(problem)
    assert bound == pytest.approx(2 * problem.constants.loss_smoothness / problem.n_samples)
    iu = np.triu_indices(problem.d)
    for k in range(8):
        w = rng.normal(size=problem.d) * (0.0 if k == 0 else 1.0)
        i = int(rng.integers(problem.n_samples))
        direction = np.eye(problem.d)[k % problem.d] if k % 2 else rng.normal(size=problem.d)
        x = direction / np.linalg.norm(direction) * problem.data_norm
        other = problem.replace_row(i, x, rng.uniform(-1, 1))
        diff = problem.hessian(w) - other.hessian(w)
        assert np.linalg.norm(diff) <= bound * (1 + 1e-9)  # Frobenius
        assert np.linalg.norm(diff[iu]) <= np.linalg.norm(diff) * (1 + 1e-12)  # released vector


@pytest.mark.parametrize("algorithm", [sosp.dp_sosp, sosp.dp_gd_so])
def test_custom_loss_is_refused(algorithm):
    # The Hessian releases rest on rank-one per-example Hessians bounded by the loss's true
    # smoothness; a custom loss's central-difference Hessians use unclipped gradients.
    custom = pytest.importorskip("dperm.problem.custom")
    bunch, _ = saddle(n=100)
    margin = bunch.loss  # the biweight, wrapped as a custom (non-margin) loss

    def value(w, X, y):
        return margin.value(X @ w, y)

    def gradient(w, X, y):
        return margin.derivative(X @ w, y)[:, None] * X

    def hessian_vector(w, v, X, y):
        return X.T @ (margin.curvature(X @ w, y) * (X @ v)) / X.shape[0]

    loss = custom.CustomLoss(value, gradient, lipschitz=margin.lipschitz(), smoothness=1.0,
                             hessian_vector=hessian_vector, hessian_lipschitz=margin.hessian_lipschitz(),
                             name="biweight_custom")
    constraint = ("l2_ball", 1.0) if algorithm is sosp.dp_gd_so else None
    problem = ERMProblem(bunch.data, bunch.target, loss, constraint=constraint)
    with pytest.raises(AssumptionError, match="margin"):
        algorithm(problem, PrivacyBudget(1.0, 1e-5), rng=0, steps=5, alpha=0.5, loss_bound=margin.c**2 / 6)
    with pytest.raises(AssumptionError, match="margin losses"):
        sosp.hessian_sensitivity(problem)


# ------------------------------------------------------------------ sub-problem solvers
def _grid(radius, k=401):
    t = np.linspace(-radius, radius, k)
    U = np.stack(np.meshgrid(t, t), -1).reshape(-1, 2)
    return U[np.linalg.norm(U, axis=1) <= radius]


@pytest.mark.parametrize("seed", range(6))
def test_trust_region_subproblem_is_globally_optimal_in_2d(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(2, 2))
    H = (A + A.T) / 2
    b = rng.normal(size=2) * (1e-3 if seed % 3 == 0 else 1.0)
    radius = rng.uniform(0.5, 2.0)
    s = sosp.trust_region_subproblem(H, b, radius)
    f = lambda S: S @ b + 0.5 * np.einsum("ij,jk,ik->i", S, H, S)  # noqa: E731
    grid = _grid(radius)
    assert np.linalg.norm(s) <= radius * (1 + 1e-12)
    assert f(s[None])[0] <= f(grid).min() + 1e-12


def test_trust_region_subproblem_hard_case():
    # b orthogonal to the eigenvector of the smallest eigenvalue, ||s(-lambda_1)|| < radius.
    H = np.diag([-1.0, 2.0, 3.0])
    b = np.array([0.0, 0.3, -0.6])
    s = sosp.trust_region_subproblem(H, b, 1.0)
    assert np.linalg.norm(s) == pytest.approx(1.0)
    # optimality: (H + I) s = -b with multiplier 1 = -lambda_1 on the sphere
    np.testing.assert_allclose((H + np.eye(3)) @ s, -b, atol=1e-12)
    # interior case: positive definite and the Newton point inside
    s_in = sosp.trust_region_subproblem(np.diag([2.0, 3.0]), np.array([0.2, 0.3]), 1.0)
    np.testing.assert_allclose(s_in, [-0.1, -0.1])


@pytest.mark.parametrize("seed", range(8))
def test_ball_halfspace_quadratic_is_globally_optimal_in_2d(seed):
    rng = np.random.default_rng(100 + seed)
    A = rng.normal(size=(2, 2))
    H = (A + A.T) / 2 - (0.5 if seed % 2 else 0.0) * np.eye(2)
    radius = rng.uniform(0.5, 2.0)
    w = np.zeros(2) if seed % 4 == 0 else rng.normal(size=2) * radius * 0.3
    g = rng.normal(size=2)
    slack = [0.0, 0.05, 0.5][seed % 3]
    u, value = sosp.ball_halfspace_quadratic(H, w, g, slack, radius)
    assert np.linalg.norm(u) <= radius * (1 + 1e-12) and g @ (u - w) <= slack + 1e-9
    assert value == pytest.approx((u - w) @ H @ (u - w), abs=1e-12) and value <= 0
    grid = _grid(radius)
    grid = grid[(grid - w) @ g <= slack]
    values = np.einsum("ij,jk,ik->i", grid - w, H, grid - w)
    assert value <= values.min() + 1e-12
    # the grid (spacing h) comes within O(h) of the optimum
    assert values.min() - value <= 10 * np.abs(H).max() * radius * (2 * radius / 400) * 2


# ----------------------------------------------------------------------- utility measures
@pytest.mark.parametrize("seed, loss", [(0, "logistic"), (1, "sigmoid_squared"), (2, "biweight")])
def test_lanczos_smallest_eigenvalue_matches_dense(seed, loss):
    rng = np.random.default_rng(seed)
    n, d = 400, 300
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss == "logistic" else rng.uniform(0, 1, n)
    problem = ERMProblem(X, y, loss, ("l2", 0.01) if loss == "logistic" else None)
    w = rng.normal(size=d) * (0.5 if loss == "logistic" else 2.0)
    lanczos = utility.smallest_hessian_eigenvalue(problem, w)  # d = 300 >= dense_below
    dense = np.linalg.eigvalsh(problem.hessian(w))[0]
    assert lanczos == pytest.approx(dense, abs=1e-9 * max(1.0, abs(dense)))


def test_utility_measures_on_small_problems():
    bunch, problem = saddle(n=40)
    w0 = np.zeros(problem.d)
    assert utility.gradient_norm(problem, w0) == pytest.approx(np.linalg.norm(bunch.gradient), abs=1e-15)
    assert utility.smallest_hessian_eigenvalue(problem, w0) == pytest.approx(bunch.hessian_eigenvalues[0])
    lam = -bunch.hessian_eigenvalues[0]
    rho = problem.constants.hessian_lipschitz
    # The saddle is an alpha-SOSP exactly when sqrt(rho alpha) >= |lambda_min|.
    assert utility.is_second_order_stationary(problem, w0, 1.01 * lam**2 / rho)
    assert not utility.is_second_order_stationary(problem, w0, 0.99 * lam**2 / rho)
    # excess risk: 0 at the reference, positive elsewhere for a convex problem
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    convex = ERMProblem(X, np.where(rng.random(80) < 0.5, -1.0, 1.0), "logistic", ("l2", 0.1))
    ref = solve_reference(convex)
    assert utility.excess_risk(convex, ref.coef, ref) == pytest.approx(0.0, abs=1e-12)
    assert utility.excess_risk(convex, ref.coef + 0.3) > 0
    assert utility.excess_risk(convex, ref.coef + 0.3, ref.objective) == pytest.approx(
        utility.excess_risk(convex, ref.coef + 0.3, ref))
    with pytest.raises(ValueError, match="shape"):
        utility.gradient_norm(convex, np.zeros(3))
    with pytest.raises(ValueError, match="alpha"):
        utility.is_second_order_stationary(convex, np.zeros(4), -1.0)


# ---------------------------------------------------------------------------- bad input
def _binary_problem(loss, constraint=None):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return ERMProblem(X, np.where(rng.random(50) < 0.5, -1.0, 1.0), loss, constraint=constraint)


@pytest.mark.parametrize("algorithm", [sosp.dp_sosp, sosp.dp_gd_so])
def test_bad_input_is_refused(algorithm):
    ball = ("l2_ball", 1.0) if algorithm is sosp.dp_gd_so else None
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(AssumptionError, match="smooth"):  # convex but not smooth
        algorithm(_binary_problem("hinge", ball), budget, rng=0)
    with pytest.raises(AssumptionError, match="Lipschitz Hessian"):  # smooth, phi'' jumps
        algorithm(_binary_problem("huberized_hinge", ball), budget, rng=0)
    with pytest.raises(AssumptionError, match="delta > 0"):
        algorithm(_binary_problem("logistic", ball), PrivacyBudget(1.0, 0.0), rng=0)
    with pytest.raises(ValueError):
        algorithm(_binary_problem("logistic", ball), budget, rng=0, failure_probability=1.5)
    with pytest.raises(ValueError, match="alpha"):
        algorithm(_binary_problem("logistic", ball), budget, rng=0, alpha=-1.0)


def test_constraint_requirements():
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(AssumptionError, match="unconstrained"):
        sosp.dp_sosp(_binary_problem("logistic", ("l2_ball", 1.0)), budget, rng=0)
    with pytest.raises(AssumptionError, match="L2-ball"):
        sosp.dp_gd_so(_binary_problem("logistic", ("l1_ball", 1.0)), budget, rng=0)
    with pytest.raises(AssumptionError):
        sosp.dp_gd_so(_binary_problem("logistic"), budget, rng=0)
    with pytest.raises(ValueError, match="phase_split"):
        sosp.dp_sosp(_binary_problem("logistic"), budget, rng=0, phase_split=1.0)


def test_private_fit_reports_its_utility():
    from dperm.problem import solve_reference
    from dperm.utility import gradient_norm, smallest_hessian_eigenvalue

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) / 3
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    fit = dperm.minimize(X, y, regularizer=("l2", 0.1), epsilon=1.0, delta=1e-5, random_state=0)
    reference = solve_reference(problem)
    report = fit.utility(problem, reference)
    assert report["excess_risk"] == pytest.approx(problem.objective(fit.coef) - reference.objective)
    assert report["gradient_norm"] == pytest.approx(gradient_norm(problem, fit.coef))
    assert report["smallest_hessian_eigenvalue"] == pytest.approx(smallest_hessian_eigenvalue(problem, fit.coef))
    assert report["smallest_hessian_eigenvalue"] >= 0.1 - 1e-9  # the l2 part


def test_the_run_charges_its_event_and_refused_input_charges_nothing():
    from dperm.privacy.budget import BudgetAccountant
    from dperm.privacy.mechanisms import charging

    _, problem = saddle(n=100, constraint=("l2_ball", 1.0))
    budget = PrivacyBudget(1.0, 1e-5)
    acc = BudgetAccountant(3.0, 1e-5)
    with charging(acc):
        with pytest.raises(ValueError, match="theta"):
            sosp.dp_gd_so(problem, budget, rng=0, alpha=0.05, theta=2.0)
        assert acc.events == ()  # checked before anything was charged
        fit = sosp.dp_gd_so(problem, budget, rng=0, alpha=0.05)
    assert acc.events == (fit.event,)
