"""dp_newton (Ganesh, Haghifam, Steinke, Thakurta 2023): the replace-one sensitivities held
and attained on worst-case neighbours, the noise of every release against its event, the
calibration, convergence without noise, refusals before any charge."""

import math

import numpy as np
import pytest

from dperm.algorithms import AssumptionError, get
from dperm.algorithms import newton as nt
from dperm.algorithms.sufficient_statistics import _upper
from dperm.privacy import BudgetAccountant, PrivacyBudget
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.privacy.mechanisms import charging
from dperm.problem import ERMProblem

from _event_checks import check_event_accounting, gdp_mu, phases


def _rows(n, d, seed=0, R=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= R / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    return X


def _logistic(n=200, d=3, seed=0, reg=("l2", 0.05)):
    X = _rows(n, d, seed)
    y = np.where(X @ np.arange(1.0, d + 1) + 0.3 * np.random.default_rng(seed + 1).normal(size=n) > 0, 1.0, -1.0)
    return ERMProblem(X, y, "logistic", reg)


# ------------------------------------------------------------------ sensitivities: attained
def test_gradient_sensitivity_attained_by_the_squared_loss_at_zero():
    n, d, R, B = 50, 3, 2.0, 1.5
    X = np.zeros((n, d))
    X[0, 0] = R
    y = np.zeros(n)
    y[0] = B
    y2 = y.copy()
    y2[0] = -B
    P, Q = (ERMProblem(X, t, "squared", data_norm=R, label_bound=B) for t in (y, y2))
    w = np.zeros(d)
    gap = np.linalg.norm(P.gradient(w) - Q.gradient(w))
    assert nt.gradient_bound(P, w) == pytest.approx(2.0 * R * B / n)
    assert gap == pytest.approx(nt.gradient_bound(P, w), rel=1e-12)


def test_trace_and_hessian_sensitivities_attained_by_orthogonal_and_zero_rows():
    n, d, R = 40, 3, 1.7
    X = _rows(n, d, seed=3, R=R)
    X[:, :2] = 0.0  # the others rows live on e_3: the canary's rows are orthogonal to them
    X[0] = [R, 0.0, 0.0]
    Xe2, Xzero = X.copy(), X.copy()
    Xe2[0] = [0.0, R, 0.0]
    Xzero[0] = 0.0
    y = np.random.default_rng(0).uniform(-1, 1, n)
    P, Q, Z = (ERMProblem(A, y, "squared", ("l2", 0.3), data_norm=R) for A in (X, Xe2, Xzero))
    w = np.array([0.2, -0.1, 0.4])
    beta = P.constants.loss_smoothness
    assert beta == pytest.approx(R * R)
    dH = nt._loss_hessian(P, w) - nt._loss_hessian(Q, w)
    assert np.linalg.norm(dH) == pytest.approx(nt.hessian_frobenius_sensitivity(P), rel=1e-12)
    assert nt.hessian_frobenius_sensitivity(P) == pytest.approx(math.sqrt(2.0) * beta / n)
    # the isometric triangle released has exactly the Frobenius norm
    assert np.linalg.norm(_upper(dH)) == pytest.approx(np.linalg.norm(dH), rel=1e-12)
    dtrace = np.trace(nt._loss_hessian(P, w)) - np.trace(nt._loss_hessian(Z, w))
    assert dtrace == pytest.approx(nt.trace_sensitivity(P), rel=1e-12)


def test_logistic_hessian_sensitivity_attained_at_margin_zero():
    n, d = 30, 2
    X = np.zeros((n, d))
    X[0], y = [1.0, 0.0], np.ones(n)
    X2 = X.copy()
    X2[0] = [0.0, 1.0]
    P, Q = (ERMProblem(A, y, "logistic") for A in (X, X2))
    dH = nt._loss_hessian(P, np.zeros(d)) - nt._loss_hessian(Q, np.zeros(d))
    assert np.linalg.norm(dH) == pytest.approx(nt.hessian_frobenius_sensitivity(P), rel=1e-12)


def test_direction_sensitivity_attained():
    """C = lambda I on e_1 (other rows on e_2), g~ along e_1, the neighbour's row zero."""
    n, d, R, mu = 25, 2, 1.3, 0.05
    X = np.zeros((n, d))
    X[1:, 1] = R * np.linspace(0.2, 1.0, n - 1)
    X[0] = [R, 0.0]
    X2 = X.copy()
    X2[0] = 0.0
    y = np.zeros(n)
    P, Q = (ERMProblem(A, y, "squared", ("l2", mu), data_norm=R) for A in (X, X2))
    w, lam0, g = np.array([0.3, -0.2]), 0.02, np.array([0.7, 0.0])
    directions = []
    for problem in (P, Q):
        H = problem.hessian(w)
        H[np.diag_indices_from(H)] += lam0
        directions.append(np.linalg.solve(H, g))
    bound = nt.direction_sensitivity(np.linalg.norm(g), P.constants.loss_smoothness, n, lam0 + mu)
    assert np.linalg.norm(directions[0] - directions[1]) == pytest.approx(bound, rel=1e-12)


# ------------------------------------------------------------------ sensitivities: held
@pytest.mark.parametrize("loss", ["logistic", "huber", "squared"])
def test_sensitivities_hold_on_random_neighbours(loss):
    rng = np.random.default_rng(7)
    n, d, B = 20, 4, 1.0
    worst = {"gradient": 0.0, "trace": 0.0, "hessian": 0.0, "direction": 0.0}
    for trial in range(60):
        X = _rows(n, d, seed=trial)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss == "logistic" else rng.uniform(-B, B, n)
        X2, y2 = X.copy(), y.copy()
        X2[0] = _rows(1, d, seed=1000 + trial)[0] * (0.0 if trial % 7 == 0 else 1.0)
        y2[0] = -y[0] if loss == "logistic" else rng.uniform(-B, B)
        P, Q = (ERMProblem(A, t, loss, ("l2", 0.01)) for A, t in ((X, y), (X2, y2)))
        w = rng.normal(size=d) * rng.uniform(0, 3)
        worst["gradient"] = max(worst["gradient"], np.linalg.norm(P.gradient(w) - Q.gradient(w))
                                / nt.gradient_bound(P, w))
        HP, HQ = nt._loss_hessian(P, w), nt._loss_hessian(Q, w)
        worst["trace"] = max(worst["trace"], abs(np.trace(HP) - np.trace(HQ)) / nt.trace_sensitivity(P))
        worst["hessian"] = max(worst["hessian"], np.linalg.norm(HP - HQ) / nt.hessian_frobenius_sensitivity(P))
        g, lam0 = rng.normal(size=d), 1.0 / n * rng.uniform(1, 5)
        mu = 0.01
        dP = np.linalg.solve(HP + (mu + lam0) * np.eye(d), g)
        dQ = np.linalg.solve(HQ + (mu + lam0) * np.eye(d), g)
        bound = nt.direction_sensitivity(np.linalg.norm(g), P.constants.loss_smoothness, n, lam0 + mu)
        worst["direction"] = max(worst["direction"], np.linalg.norm(dP - dQ) / bound)
    assert all(v <= 1.0 + 1e-9 for v in worst.values()), worst
    assert all(v > 0.05 for v in worst.values()), worst  # the checks did measure something


def test_gradient_bound_is_public_and_follows_the_iterate():
    P = ERMProblem(_rows(30, 2), np.linspace(-1, 1, 30), "squared", label_bound=1.0)
    assert nt.gradient_bound(P, np.zeros(2)) == pytest.approx(2.0 * 1.0 / 30)
    assert nt.gradient_bound(P, np.array([3.0, 4.0])) == pytest.approx(2.0 * (5.0 + 1.0) / 30)
    L = ERMProblem(_rows(30, 2), np.where(np.arange(30) % 2, 1.0, -1.0), "logistic")
    assert nt.gradient_bound(L, np.array([30.0, 40.0])) == pytest.approx(2.0 / 30)


# ------------------------------------------------------------------ releases and events
@pytest.mark.parametrize("mechanism", nt.MECHANISMS)
def test_every_release_goes_through_its_event_with_its_scale(monkeypatch, mechanism):
    """Each iteration releases, in order, the gradient (in units of gradient_bound at the
    current iterate), the trace and the direction (double noise) or the Hessian triangle,
    through the leaves of the fit's event."""
    calls = []
    real = nt.release

    def recording(rng, value, event):
        out = real(rng, value, event)
        calls.append((np.array(value, copy=True), event, out))
        return out

    monkeypatch.setattr(nt, "release", recording)
    P, T = _logistic(), 4
    fit = get("dp_newton").fit(P, PrivacyBudget(1.0, 1e-5), rng=3, steps=T, mechanism=mechanism)
    leaves = [release for release, _ in phases(fit.event)]
    counts = [count for _, count in phases(fit.event)]
    assert counts == [T] * len(leaves)
    per_step = len(leaves)
    assert len(calls) == T * per_step
    for t in range(T):
        for k in range(per_step):
            assert calls[t * per_step + k][1] == leaves[k]
    # gradients and directions in units of their sensitivity (1); trace and Hessian in theirs
    assert leaves[0].sensitivity == 1.0
    if mechanism == "double_noise":
        assert leaves[1].sensitivity == pytest.approx(nt.trace_sensitivity(P))
        assert leaves[2].sensitivity == 1.0
    else:
        assert leaves[1].sensitivity == pytest.approx(nt.hessian_frobenius_sensitivity(P))
    # the first gradient is grad F(0) / gradient_bound(0)
    np.testing.assert_allclose(calls[0][0], P.gradient(np.zeros(3)) / nt.gradient_bound(P, np.zeros(3)))


def test_scaled_release_noise_has_the_events_std_times_the_scale():
    from dperm.privacy import events as ev

    event = ev.gaussian_release(0.8, 1.0)
    rng = np.random.default_rng(0)
    value = np.full(40000, 3.0)
    noise = nt._release_scaled(rng, value, 0.25, event) - value
    assert np.std(noise) == pytest.approx(0.25 * 0.8, rel=0.02)
    assert abs(np.mean(noise)) < 0.01


@pytest.mark.parametrize("mechanism", nt.MECHANISMS)
@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_event_is_calibrated_to_the_budget(mechanism, epsilon):
    budget = PrivacyBudget(epsilon, 1e-5)
    fit = get("dp_newton").fit(_logistic(), budget, rng=0, steps=5, mechanism=mechanism)
    check_event_accounting(fit, budget)
    assert gdp_mu(fit.event) == pytest.approx(gaussian_dp_mu(epsilon, 1e-5), rel=1e-3)
    # the shares of mu^2 are the documented ones
    mus = [count * (r.sensitivity / r.sigma) ** 2 for r, count in phases(fit.event)]
    total = sum(mus)
    assert mus[0] / total == pytest.approx(0.7, rel=1e-9)
    if mechanism == "double_noise":
        assert mus[1] / total == pytest.approx(0.3 * 0.1, rel=1e-9)


def test_unseeded_fit_uses_the_secure_sampler():
    fit = get("dp_newton").fit(_logistic(), PrivacyBudget(1.0, 1e-5), rng=None, steps=3)
    assert all(release.secure for release, _ in phases(fit.event))
    assert np.all(np.isfinite(fit.coef))


# ------------------------------------------------------------------ utility
def _newton_optimum(problem, iterations=60):
    w = np.zeros(problem.n_features)
    for _ in range(iterations):
        w = w - np.linalg.solve(problem.hessian(w), problem.gradient(w))
    return w


@pytest.mark.parametrize("mechanism", nt.MECHANISMS)
@pytest.mark.parametrize("loss", ["logistic", "huber", "squared"])
def test_converges_to_the_non_private_optimum_at_huge_epsilon(mechanism, loss):
    rng = np.random.default_rng(5)
    X = _rows(400, 3, seed=5)
    if loss == "logistic":
        y = np.where(X @ np.array([2.0, -1.0, 0.5]) + 0.2 * rng.normal(size=400) > 0, 1.0, -1.0)
    else:
        y = np.clip(X @ np.array([0.8, -0.5, 0.3]) + 0.1 * rng.normal(size=400), -1, 1)
    problem = ERMProblem(X, y, loss, ("l2", 0.01))
    target = _newton_optimum(problem)
    fit = get("dp_newton").fit(problem, PrivacyBudget(1e6, 1e-5), rng=0, steps=30, mechanism=mechanism)
    np.testing.assert_allclose(fit.coef, target, atol=2e-3)
    # and a small budget does move it: the noise is there
    noisy = get("dp_newton").fit(problem, PrivacyBudget(0.5, 1e-5), rng=0, steps=30, mechanism=mechanism)
    assert np.linalg.norm(noisy.coef - target) > 1e-2


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("loss, reg, constraint, match", [
    ("hinge", ("l2", 0.1), None, "smooth"),
    ("biweight", ("l2", 0.1), None, "convex"),
    ("sigmoid_squared", ("l2", 0.1), None, "convex"),
    ("logistic", ("l2", 0.1), ("l2_ball", 1.0), "unconstrained"),
    ("logistic", ("elastic_net", 0.1, 0.5), None, "smooth regularizer"),
])
def test_refused_before_any_charge(monkeypatch, loss, reg, constraint, match):
    X = _rows(50, 2)
    y = np.where(np.arange(50) % 2, 1.0, -1.0) if loss in ("hinge", "logistic") else np.linspace(0, 1, 50)
    problem = ERMProblem(X, y, loss, reg, constraint)

    def must_not_run(*args, **kwargs):
        raise AssertionError("the data was read before the refusal")

    monkeypatch.setattr(type(problem), "hessian", must_not_run)
    accountant = BudgetAccountant(10.0, 1e-5)
    with charging(accountant), pytest.raises(AssumptionError, match=match):
        get("dp_newton").fit(problem, PrivacyBudget(1.0, 1e-5), rng=0)
    assert len(accountant.events) == 0


def test_pure_dp_and_bad_hyperparameters_refused_before_any_charge():
    problem = _logistic()
    accountant = BudgetAccountant(10.0, 1e-5)
    with charging(accountant):
        with pytest.raises(AssumptionError, match="delta > 0"):
            get("dp_newton").fit(problem, PrivacyBudget(1.0, 0.0), rng=0)
        for bad in ({"mechanism": "cubic"}, {"steps": 0}, {"gradient_share": 1.0}, {"trace_share": 0.0},
                    {"trace_coefficient": -1.0}, {"failure_probability": 2.0}, {"eigenvalue_floor": "x"}):
            with pytest.raises(ValueError):
                get("dp_newton").fit(problem, PrivacyBudget(1.0, 1e-5), rng=0, **bad)
    assert len(accountant.events) == 0


# ------------------------------------------------------------------ the stable floor
@pytest.mark.parametrize("n, d, beta, mu, direction_mu", [(1000, 10, 1.0, 0.0, 0.05), (10**6, 10, 1.0, 0.01, 0.15),
                                                          (50, 3, 0.25, 0.0, 30.0)])
def test_stable_floor_keeps_the_direction_noise_below_half_the_gradient_scale(n, d, beta, mu, direction_mu):
    floor = nt.stable_floor(n, d, beta, mu, direction_mu)
    assert floor >= 1.0 / n
    lam = floor + mu
    # direction noise norm per unit of ||g~||: sqrt(d) Delta_d / (||g~|| mu_dir)
    ratio = math.sqrt(d) * nt.direction_sensitivity(1.0, beta, n, lam) / direction_mu
    assert ratio <= 1.0 / (2.0 * (beta + mu)) * (1 + 1e-9)
    if floor > 1.0 / n:  # the smallest such shift: any smaller one breaks the bound
        smaller = math.sqrt(d) * nt.direction_sensitivity(1.0, beta, n, 0.99 * lam) / direction_mu
        assert smaller > 1.0 / (2.0 * (beta + mu))


def test_stable_floor_is_used_and_refuses_unknown_floors():
    P = _logistic()
    fit = get("dp_newton").fit(P, PrivacyBudget(1.0, 1e-5), rng=0, eigenvalue_floor="stable")
    paper = get("dp_newton").fit(P, PrivacyBudget(1.0, 1e-5), rng=0)
    assert fit.hyperparameters["eigenvalue_floor"] == "stable"
    assert not np.allclose(fit.coef, paper.coef)
    assert repr(fit.event) == repr(paper.event)  # the floor is post-processing: same releases, same cost
    with pytest.raises(ValueError, match="eigenvalue_floor"):
        get("dp_newton").fit(P, PrivacyBudget(1.0, 1e-5), rng=0, eigenvalue_floor="large")


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_diverging_run_returns_a_finite_model():
    """The paper's shift rule diverges on the squared loss at small n epsilon (docs/results.md);
    past float64 the last finite iterate is kept."""
    X = _rows(300, 4, seed=2)
    y = np.clip(X @ np.array([0.5, -0.4, 0.3, 0.2]), -1, 1)
    fit = get("dp_newton").fit(ERMProblem(X, y, "squared"), PrivacyBudget(0.1, 1e-5), rng=0, steps=400)
    assert np.all(np.isfinite(fit.coef))
