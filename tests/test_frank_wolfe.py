"""Private Frank-Wolfe (Wang, Chen, Xu 2019, Alg. 2 and 3): calibration against closed forms and test
vectors, composition of the per-step epsilon recomputed independently, score sensitivity on
neighbouring datasets, the exponential mechanism's law, convergence at huge epsilon, the
Frank-Wolfe gap on non-convex losses, feasibility, sparse input and bad input."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import dperm
import dperm.algorithms.frank_wolfe as fw  # registers dp_fw_l2 and dp_fw_l1
from dperm.algorithms import AssumptionError
from dperm.datasets.synthetic import make_glm, make_robust_regression
from _event_checks import check_event_accounting
from dperm.privacy import PrivacyBudget, accountant
from dperm.privacy import events as ev
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.privacy.mechanisms import single_release
from dperm.problem import ERMProblem, solve_reference


def logistic_data(n=300, d=6, seed=0, norm=1.0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= norm / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d) * scale
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def problem_for(loss, constraint, n=300, d=6, seed=0):
    if loss == "logistic":
        X, y = logistic_data(n, d, seed)
        return ERMProblem(X, y, "logistic", constraint=constraint)
    if loss == "sigmoid_squared":
        X, y = make_glm(n, d, random_state=seed, return_X_y=True)
    else:
        X, y = make_robust_regression(n, d, random_state=seed, return_X_y=True)
    return ERMProblem(X, y, loss, constraint=constraint)


def independent_composition(e0, T, delta):
    """Basic, advanced (DRV10) and zCDP (BR eps^2/8 + Bun-Steinke) composition, written out."""
    routes = [T * e0]
    if delta > 0:
        L = math.log(1 / delta)
        if e0 < 700:
            routes.append(math.sqrt(2 * T * L) * e0 + T * e0 * (math.exp(e0) - 1))
        rho = T * e0**2 / 8
        routes.append(rho + 2 * math.sqrt(rho * L))
    return min(routes)


# ------------------------------------------------------------------------ catalogue
def test_registered_with_sources():
    for name in ("dp_fw_l2", "dp_fw_l1"):
        info = dperm.algorithms.get(name)
        assert "Wang, Chen, Xu 2019" in info.source and "seed" not in info.source.lower() and info.paper
    assert dperm.algorithms.get("dp_fw_l1").guarantee.startswith("epsilon or")


# ---------------------------------------------------------------------- calibration
def test_l2_noise_is_the_exact_gaussian_composition():
    p = problem_for("logistic", ("l2_ball", 1.0))
    budget = PrivacyBudget(1.0, 1e-5)
    fit = fw.dp_fw_l2(p, budget, rng=0, steps=100)
    release = single_release(fit.event)
    sens = release.sensitivity
    assert sens == pytest.approx(2 * p.lipschitz / p.n_samples, rel=1e-15)
    # closed form sqrt(T) Delta / mu(eps, delta), and the dp-accounting test vector 37.31
    assert release.sigma == pytest.approx(10 * sens / gaussian_dp_mu(1.0, 1e-5), rel=1e-12)
    assert release.sigma / sens == pytest.approx(37.31, abs=5e-3)
    assert fit.event.count == 100 and isinstance(release, ev.GaussianRelease)
    assert fit.privacy_spent.epsilon <= 1.0 and fit.privacy_spent.delta == 1e-5
    check_event_accounting(fit, budget)


def test_l2_default_steps_follow_theorem_5_closed_form():
    p = problem_for("sigmoid_squared", ("l2_ball", 1.0), n=2000, d=5)
    budget = PrivacyBudget(0.5, 1e-6)
    fit = fw.dp_fw_l2(p, budget, rng=0)
    n, d, L, beta, R = p.n_samples, p.d, p.lipschitz, p.smoothness, 1.0
    mu = gaussian_dp_mu(0.5, 1e-6)
    expected = math.ceil((L * R + 2 * beta * R * R) * n * mu / (4 * R * L * math.sqrt(d)))
    assert fit.info["theorem_steps"] == expected
    assert fit.hyperparameters["steps"] == min(expected, 1000) == fit.event.count
    assert fit.hyperparameters["step_size"] == pytest.approx(1 / math.sqrt(fit.hyperparameters["steps"]))


# ------------------------------------------------------------------ L1 composition
@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (0.3, 1e-6), (8.0, 1e-5), (1.0, 0.0), (1e6, 1e-5), (1e6, 0.0)])
@pytest.mark.parametrize("T", [1, 7, 100, 1000])
def test_l1_step_epsilon_composes_back_to_the_budget(eps, delta, T):
    budget = PrivacyBudget(eps, delta)
    e0 = fw.l1_step_epsilon(budget, T, 5)
    event = ev.repeated(ev.ExponentialMechanismRelease(e0, candidates=10), T)
    certified = accountant.epsilon(event, delta)
    assert certified <= eps
    assert certified >= eps * (1 - 1e-3)  # nothing left on the table (calibration precision 1e-4 in e0)
    if delta == 0:
        assert e0 == pytest.approx(eps / T, rel=1e-9)
        assert independent_composition(e0, T, delta) <= eps
    else:
        # Never worse than the best of basic, advanced and zCDP composition (written out
        # independently), to the calibration's precision: e0 is at least that e0 (1 - 1e-3).
        # (The accountant searches e0 at delta > 0, with no closed form for basic
        # composition: at T = 1 it returns about 0.9995 eps.)
        assert e0 >= eps / T * (1 - 1e-3)
        assert independent_composition(e0 / (1 - 1e-3), T, delta) >= eps
        paper = eps / math.sqrt(8 * T * math.log(1 / delta))  # advanced composition, Wang, Chen, Xu 2019 Alg. 3
        if independent_composition(paper, T, delta) <= eps:  # where the paper's choice is valid
            assert e0 >= paper * (1 - 1e-3)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (2.0, 0.0), (1e6, 1e-5)])
def test_l1_fit_reports_the_composed_budget(eps, delta):
    p = problem_for("logistic", ("l1_ball", 1.0))
    budget = PrivacyBudget(eps, delta)
    fit = fw.dp_fw_l1(p, budget, rng=0, steps=50)
    e0, T = fit.info["step_epsilon"], fit.event.count
    assert T == 50 and fit.info["score_sensitivity"] == fw.l1_score_sensitivity(p)
    release = single_release(fit.event)
    assert isinstance(release, ev.ExponentialMechanismRelease)
    assert release.epsilon == e0 and release.candidates == 2 * p.d
    spent = fit.privacy_spent
    assert spent.epsilon <= eps and spent.delta == delta
    # the accountant is at least as tight as basic / advanced / zCDP composition
    assert spent.epsilon <= independent_composition(e0, T, delta) * (1 + 1e-9)
    assert spent.epsilon >= eps * (1 - 1e-3)
    check_event_accounting(fit, budget, independent=False)  # pure releases: no PLD event in dp-accounting


def test_l1_default_steps_pure_dp_closed_form():
    p = problem_for("logistic", ("l1_ball", 2.0), n=3000, d=8)
    fit = fw.dp_fw_l1(p, PrivacyBudget(1.0), rng=0)
    R, d, n = 2.0, p.d, p.n_samples
    G1 = 1.0 * p.data_norm  # logistic L_phi = 1, X_inf = data_norm
    A = G1 * R + 2 * p.smoothness * R * R
    M = 2 * (2 * R * G1 / n) * (math.log(2 * d) + 1)
    assert fit.info["theorem_steps"] == math.ceil((A * 1.0 / (2 * M)) ** (2 / 3))
    assert fit.info["step_epsilon"] == pytest.approx(1.0 / fit.hyperparameters["steps"], rel=1e-9)


# ---------------------------------------------------------------- L1 sensitivity
@pytest.mark.parametrize("loss", ["logistic", "sigmoid_squared", "biweight"])
@pytest.mark.parametrize("R", [0.5, 1.0, 3.0])
def test_l1_score_sensitivity_bound_holds_on_neighbours(loss, R):
    p = problem_for(loss, ("l1_ball", R), n=80, d=5, seed=int(R * 10))
    bound = fw.l1_score_sensitivity(p)
    rng = np.random.default_rng(7)
    labels = [-1.0, 1.0] if loss == "logistic" else [-p.label_bound, 0.0, p.label_bound]
    points = [s for s in p.constraint.vertices(p.d)]
    points += [p.constraint.project(rng.normal(size=p.d) * 3) for _ in range(4)]
    worst = 0.0
    for seed in range(12):
        r = np.random.default_rng(seed)
        i = int(r.integers(p.n_samples))
        if seed % 2 == 0:  # all the norm on one coordinate: ||x||_inf = data_norm
            x = np.zeros(p.d)
            x[r.integers(p.d)] = r.choice([-1.0, 1.0]) * p.data_norm
        else:
            v = r.normal(size=p.d)
            x = v / np.linalg.norm(v) * p.data_norm
        q = p.replace_row(i, x, r.choice(labels))
        for w in points:
            diff = np.abs(fw.l1_vertex_scores(p, w) - fw.l1_vertex_scores(q, w)).max()
            worst = max(worst, diff)
    assert worst <= bound * (1 + 1e-9)
    assert worst >= 0.2 * bound  # the bound is not vacuous (within 5x of an observed change)


@pytest.mark.parametrize("loss", ["sigmoid_squared", "biweight"])
def test_l2_gradient_sensitivity_bound_holds_on_neighbours(loss):
    p = problem_for(loss, ("l2_ball", 1.0), n=60, d=4)
    rng = np.random.default_rng(3)
    for k in range(8):
        i = int(rng.integers(p.n_samples))
        v = rng.normal(size=p.d)
        q = p.replace_row(i, v / np.linalg.norm(v) * p.data_norm, rng.choice([-1.0, 0.0, 1.0]))
        for _ in range(5):
            w = p.constraint.project(rng.normal(size=p.d) * 2)
            assert np.linalg.norm(p.gradient(w) - q.gradient(w)) <= p.gradient_sensitivity() * (1 + 1e-9)


# ---------------------------------------------------------- exponential mechanism law
def test_l1_vertex_is_drawn_from_the_exponential_mechanism():
    p = problem_for("logistic", ("l1_ball", 1.0), n=40, d=3)
    scores = fw.l1_vertex_scores(p, np.zeros(p.d))
    sens = fw.l1_score_sensitivity(p)
    eps = 2.5 * 2 * sens / np.ptp(scores)  # log-odds spread of 2.5 between best and worst
    logits = eps * scores / (2 * sens)
    expected = np.exp(logits - logits.max())
    expected /= expected.sum()
    vertices = p.constraint.vertices(p.d)
    counts = np.zeros(2 * p.d)
    N = 3000
    for seed in range(N):
        fit = fw.dp_fw_l1(p, PrivacyBudget(eps), rng=seed, steps=1, step_size=1.0, output="last")
        counts[np.flatnonzero(np.all(vertices == fit.coef, axis=1))[0]] += 1
    assert stats.chisquare(counts, N * expected).pvalue > 1e-4
    # the monotone factor (twice the logits) must be rejected: the test has power
    wrong = np.exp(2 * (logits - logits.max()))
    assert stats.chisquare(counts, N * wrong / wrong.sum()).pvalue < 1e-6


# ------------------------------------------------------------------ random iterate
@pytest.mark.parametrize("algorithm,constraint", [("dp_fw_l2", ("l2_ball", 1.0)), ("dp_fw_l1", ("l1_ball", 1.0))])
def test_random_iterate_is_uniform_and_returned(algorithm, constraint):
    p = problem_for("logistic", constraint, n=100, d=4)
    fit_fn = getattr(fw, algorithm)
    T, N = 5, 600
    counts = np.zeros(T)
    for seed in range(N):
        fit = fit_fn(p, PrivacyBudget(1.0, 1e-5), rng=seed, steps=T, keep_iterates=seed < 20)
        k = fit.info["selected_iterate"]
        assert 0 <= k < T
        counts[k] += 1
        if seed < 20:
            assert fit.info["iterates"].shape == (T + 1, p.d)
            np.testing.assert_array_equal(fit.coef, fit.info["iterates"][k])
    assert stats.chisquare(counts).pvalue > 1e-4
    last = fit_fn(p, PrivacyBudget(1.0, 1e-5), rng=1, steps=T, output="last", keep_iterates=True)
    assert last.info["selected_iterate"] == T
    np.testing.assert_array_equal(last.coef, last.info["iterates"][-1])


# ---------------------------------------------------------------- convergence
@pytest.mark.parametrize("constraint", [("l2_ball", 1.0), ("l1_ball", 1.0), ("l2_ball", 0.3), ("l1_ball", 4.0)])
def test_converges_to_constrained_optimum_at_huge_epsilon(constraint):
    p = problem_for("logistic", constraint, n=400, d=6)
    ref = solve_reference(p)
    algorithm = fw.dp_fw_l2 if constraint[0] == "l2_ball" else fw.dp_fw_l1
    R, beta, T = constraint[1], p.smoothness, 1000
    budget = PrivacyBudget(1e6, 1e-5)
    # Jaggi 2013, Theorem 1: F(w_T) - F* <= 2 beta diam^2 / (T + 2) with 2/(t+2) steps
    fit = algorithm(p, budget, rng=0, steps=T, step_size="decreasing", output="last")
    assert fit.excess_risk(p, ref) <= 2 * beta * (2 * R) ** 2 / (T + 2) + 1e-6
    # constant steps gamma: F - F* <= (1-gamma)^T (F(w_1) - F*) + 2 beta gamma R^2 (+ noise)
    fit = algorithm(p, budget, rng=0, steps=T, output="last")
    gamma = 1 / math.sqrt(T)
    start_gap = p.objective(np.zeros(p.d)) - ref.objective
    assert fit.excess_risk(p, ref) <= (1 - gamma) ** T * start_gap + 2 * beta * gamma * R * R + 1e-6
    assert fit.excess_risk(p, ref) >= -1e-9
    # with the constraint active the optimum is on the boundary, and FW gets there
    assert fw.frank_wolfe_gap(p, fit.coef) <= 2 * beta * gamma * R * R + 1e-6


@pytest.mark.parametrize("loss", ["sigmoid_squared", "biweight"])
@pytest.mark.parametrize("constraint", [("l2_ball", 1.0), ("l1_ball", 1.0)])
def test_nonconvex_frank_wolfe_gap_is_small_at_huge_epsilon(loss, constraint):
    p = problem_for(loss, constraint, n=500, d=6, seed=1)
    algorithm = fw.dp_fw_l2 if constraint[0] == "l2_ball" else fw.dp_fw_l1
    fit = algorithm(p, PrivacyBudget(1e6, 1e-5), rng=0, keep_iterates=True)
    T, gamma, R, beta = fit.hyperparameters["steps"], fit.hyperparameters["step_size"], constraint[1], p.smoothness
    assert T == 1000 and gamma == pytest.approx(1 / math.sqrt(T))
    iterates = fit.info["iterates"]
    gaps = np.array([fw.frank_wolfe_gap(p, w) for w in iterates[:-1]])
    assert gaps.min() >= -1e-12
    # the deterministic inequality behind Theorems 5 and 6 (noise negligible at eps = 1e6)
    descent = (p.objective(iterates[0]) - p.objective(iterates[-1])) / (gamma * T)
    assert gaps.mean() <= descent + 2 * beta * gamma * R * R + 1e-4
    # the reported bound on E gap(w_R), recomputed: A/(gamma T) + 2 beta gamma R^2 + noise term
    if constraint[0] == "l2_ball":
        noise_term = 2 * R * single_release(fit.event).sigma * math.sqrt(p.d)
    else:  # the Gumbel scale 2 Delta / e0 of the exponential mechanism, in score units
        e0 = fit.info["step_epsilon"]
        assert single_release(fit.event).epsilon == e0 and fit.event.count == T
        noise_term = 2 * fit.info["score_sensitivity"] / e0 * (math.log(2 * p.d) + 1)
    expected = p.lipschitz * R / (gamma * T) + 2 * beta * gamma * R * R + noise_term
    assert fit.info["gap_bound"] == pytest.approx(expected, rel=1e-12)
    assert noise_term < 0.02 * expected  # negligible at epsilon = 1e6
    assert gaps.mean() <= fit.info["gap_bound"]
    assert fw.frank_wolfe_gap(p, fit.coef) <= fit.info["gap_bound"]  # the returned (random) iterate


def test_private_fit_at_moderate_epsilon_beats_zero():
    # n large enough that the private gap bound is informative
    p = problem_for("logistic", ("l1_ball", 2.0), n=20000, d=10, seed=2)
    for algorithm, problem in ((fw.dp_fw_l1, p), (fw.dp_fw_l2, ERMProblem(p.X, p.y, "logistic", constraint=("l2_ball", 2.0)))):
        ref = solve_reference(problem)
        zero = problem.objective(np.zeros(p.d)) - ref.objective
        excess = [algorithm(problem, PrivacyBudget(1.0, 1e-6), rng=s).excess_risk(problem, ref) for s in range(3)]
        assert np.mean(excess) < 0.5 * zero


@pytest.mark.slow
@pytest.mark.parametrize("algorithm,constraint", [("dp_fw_l2", ("l2_ball", 2.0)), ("dp_fw_l1", ("l1_ball", 2.0))])
def test_excess_risk_shrinks_with_n(algorithm, constraint):
    # Theorems 5 and 6: the gap bound scales like 1 / sqrt(n eps) (up to logs): 16x the data
    # must cut the mean excess risk at least in half (the rate predicts a factor of ~4).
    run = getattr(fw, algorithm)
    means = []
    for n in (2000, 32000):
        p = problem_for("logistic", constraint, n=n, d=10, seed=5)
        ref = solve_reference(p)
        means.append(np.mean([run(p, PrivacyBudget(1.0, 1e-6), rng=s).excess_risk(p, ref) for s in range(8)]))
    assert means[1] < 0.5 * means[0]


# ------------------------------------------------------------------ feasibility etc.
@pytest.mark.parametrize("algorithm,constraint", [("dp_fw_l2", ("l2_ball", 0.7)), ("dp_fw_l1", ("l1_ball", 0.7))])
@pytest.mark.parametrize("eps", [0.1, 1.0, 1e6])
def test_iterates_stay_feasible(algorithm, constraint, eps):
    p = problem_for("sigmoid_squared", constraint, n=200, d=5)
    fit = getattr(fw, algorithm)(p, PrivacyBudget(eps, 1e-6), rng=3, steps=200, keep_iterates=True,
                                 init=np.full(p.d, 10.0))  # init projected onto C
    norms = [p.constraint.minkowski_norm(w) for w in fit.info["iterates"]]
    assert max(norms) <= 1 + 1e-12
    assert p.constraint.minkowski_norm(fit.coef) <= 1.0
    assert np.all(np.isfinite(fit.coef))


@pytest.mark.parametrize("algorithm,constraint", [("dp_fw_l2", ("l2_ball", 1.0)), ("dp_fw_l1", ("l1_ball", 1.0))])
def test_sparse_float32_and_reproducible(algorithm, constraint):
    X, y = logistic_data(n=200, d=8, seed=4)
    X[np.abs(X) < 0.25] = 0.0
    dense = ERMProblem(X, y, "logistic", constraint=constraint)
    csr = ERMProblem(sp.csr_matrix(X), y, "logistic", constraint=constraint)
    f32 = ERMProblem(X.astype(np.float32), y, "logistic", constraint=constraint)
    run = getattr(fw, algorithm)
    budget = PrivacyBudget(2.0, 1e-5)
    a = run(dense, budget, rng=11, steps=60)
    np.testing.assert_array_equal(a.coef, run(dense, budget, rng=11, steps=60).coef)
    np.testing.assert_allclose(run(csr, budget, rng=11, steps=60).coef, a.coef, atol=1e-10)
    np.testing.assert_allclose(run(f32, budget, rng=11, steps=60).coef, a.coef, atol=1e-4)
    assert not np.array_equal(run(dense, budget, rng=12, steps=60).coef, a.coef)


def test_through_dperm_minimize():
    X, y = logistic_data(n=300, d=5)
    fit = dperm.minimize(X, y, loss="logistic", constraint=("l1_ball", 1.0), algorithm="dp_fw_l1",
                         epsilon=1.0, delta=0.0, random_state=0, output="last")
    assert fit.algorithm == "dp_fw_l1" and fit.privacy_spent.delta == 0.0
    assert np.abs(fit.coef).sum() <= 1.0 + 1e-12


# ------------------------------------------------------------------ bad input
def test_wrong_constraint_is_named():
    X, y = logistic_data(n=100, d=3)
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(AssumptionError, match=r"dp_fw_l2.*'l2_ball', R.*L1Ball"):
        fw.dp_fw_l2(ERMProblem(X, y, constraint=("l1_ball", 1.0)), budget)
    with pytest.raises(AssumptionError, match=r"dp_fw_l1.*'l1_ball', R.*L2Ball"):
        fw.dp_fw_l1(ERMProblem(X, y, constraint=("l2_ball", 1.0)), budget)
    with pytest.raises(AssumptionError, match=r"Box"):
        fw.dp_fw_l1(ERMProblem(X, y, constraint=("box", 1.0)), budget)
    for run in (fw.dp_fw_l2, fw.dp_fw_l1):
        with pytest.raises(AssumptionError, match=r"Unconstrained"):
            run(ERMProblem(X, y), budget)


def test_other_assumptions_and_invalid_budgets():
    X, y = logistic_data(n=100, d=3)
    l2 = ERMProblem(X, y, constraint=("l2_ball", 1.0))
    with pytest.raises(AssumptionError, match="delta > 0"):
        fw.dp_fw_l2(l2, PrivacyBudget(1.0))
    with pytest.raises(AssumptionError, match="smooth"):
        fw.dp_fw_l2(ERMProblem(X, y, "hinge", constraint=("l2_ball", 1.0)), PrivacyBudget(1.0, 1e-5))
    with pytest.raises(AssumptionError, match="smooth regularizer"):
        fw.dp_fw_l1(ERMProblem(X, y, regularizer=("l1", 0.1), constraint=("l1_ball", 1.0)), PrivacyBudget(1.0))
    with pytest.raises(TypeError, match="PrivacyBudget"):
        fw.dp_fw_l2(l2, (1.0, 1e-5))
    for eps, delta in [(0.0, 1e-5), (-1.0, 0.0), (math.inf, 0.0), (1.0, 1.0), (1.0, -1e-5)]:
        with pytest.raises(ValueError):
            PrivacyBudget(eps, delta)
    with pytest.raises(TypeError, match="PrivacyBudget"):
        fw.l1_step_epsilon((1.0, 1e-5), 10, 3)
    with pytest.raises(ValueError, match="steps"):
        fw.l1_step_epsilon(PrivacyBudget(1.0), 0, 3)


def test_invalid_hyperparameters():
    X, y = logistic_data(n=100, d=3)
    p = ERMProblem(X, y, constraint=("l1_ball", 1.0))
    budget = PrivacyBudget(1.0)
    for kwargs in [dict(steps=0), dict(steps=2.5), dict(max_steps=0), dict(output="average"),
                   dict(step_size=0.0), dict(step_size=1.5), dict(step_size="harmonic"), dict(init=np.zeros(2))]:
        with pytest.raises(ValueError):
            fw.dp_fw_l1(p, budget, rng=0, **kwargs)
