"""DP-AccMD (Wang, Ye, Xu 2017, Alg. 3): exact noise calibration, one noisy gradient per step feeding
both steps (the output is post-processing of the released gradients), the mirror maps and
the Bregman projection onto the L1 ball against generic solvers, feasibility, convergence
at huge epsilon faster than noisy projected GD, bad input."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize

import dperm.algorithms.accmd as accmd  # registers dp_accmd
from dperm.algorithms import AssumptionError, get, names
from _event_checks import check_event_accounting
from dperm.privacy import PrivacyBudget
from dperm.privacy import events as ev
from dperm.privacy import mechanisms
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.privacy.mechanisms import single_release
from dperm.problem import ERMProblem, L1Ball, solve_reference
from dperm.problem.constraints import Box

SETS = [("l2_ball", 5.0), ("l1_ball", 5.0), ("box", 1.0)]
# (constraint, geometry): every distinct geometry the algorithm can run
GEOMETRIES = [(("l2_ball", 5.0), "euclidean"), (("l1_ball", 5.0), "euclidean"), (("l1_ball", 5.0), "minkowski"),
              (("box", 1.0), "euclidean"), (("box", 1.0), "minkowski")]


def make_data(n=200, d=30, seed=0, scale=10.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= 1.0 / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d) * scale
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


@pytest.fixture(scope="module")
def data():
    return make_data()


def fit(problem, eps=1.0, delta=1e-5, **kw):
    return get("dp_accmd").fit(problem, PrivacyBudget(eps, delta), **kw)


def test_registered_with_its_assumptions():
    assert "dp_accmd" in names()
    info = get("dp_accmd")
    assert {"convex", "smooth", "lipschitz", "bounded_constraint", "approximate_dp"} <= set(info.requires)
    assert "Wang, Ye, Xu 2017, Alg. 3" in info.source and "seed" not in info.source.lower()


# ------------------------------------------------------------------------ privacy
@pytest.mark.parametrize("constraint, geometry", GEOMETRIES)
def test_noise_scale_is_the_exact_calibration_of_T_steps(data, constraint, geometry):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    budget = PrivacyBudget(0.7, 1e-6)
    f = get("dp_accmd").fit(problem, budget, rng=0, geometry=geometry)
    T = f.hyperparameters["steps"]
    sensitivity = 2 * problem.lipschitz / problem.n_samples
    release = single_release(f.event)
    assert isinstance(release, ev.GaussianRelease) and f.event.count == T
    assert release.sensitivity == pytest.approx(sensitivity, rel=1e-15)
    # T Gaussian releases, exactly sqrt(T) Delta / sigma-GDP
    assert release.sigma == pytest.approx(math.sqrt(T) * sensitivity / gaussian_dp_mu(0.7, 1e-6), rel=1e-12)
    assert f.privacy_spent.epsilon <= 0.7 and f.privacy_spent.delta <= 1e-6
    check_event_accounting(f, budget)
    # explicit steps are calibrated for that T
    g = get("dp_accmd").fit(problem, budget, rng=0, geometry=geometry, steps=7)
    assert single_release(g.event).sigma == pytest.approx(math.sqrt(7) * sensitivity / gaussian_dp_mu(0.7, 1e-6),
                                                          rel=1e-12)


def _counting(monkeypatch):
    calls = []
    original = mechanisms.sample_release  # what release() draws on the seeded path

    def sample(rng, event, dim):
        z = original(rng, event, dim)
        calls.append(z.copy())
        return z

    monkeypatch.setattr(mechanisms, "sample_release", sample)
    return calls


@pytest.mark.parametrize("constraint, geometry", GEOMETRIES)
def test_one_noise_draw_and_one_gradient_per_step(data, monkeypatch, constraint, geometry):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    draws = _counting(monkeypatch)
    gradients = []
    original = problem.gradient
    problem.gradient = lambda w: gradients.append(1) or original(w)
    f = fit(problem, rng=1, steps=23, geometry=geometry)
    assert len(draws) == 23 and len(gradients) == 23 and f.hyperparameters["steps"] == 23 == f.event.count
    assert all(z.shape == (problem.n_features,) for z in draws)


@pytest.mark.parametrize("constraint, geometry", GEOMETRIES)
def test_output_is_post_processing_of_the_noisy_gradients(data, monkeypatch, constraint, geometry):
    """Couple a run on a neighbour so that it receives the same noisy gradients g_k: the
    output must be identical. If either step saw an un-noised gradient (as Algorithm 3's
    printed y-step does), the outputs would differ by O(1/n)."""
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    i = 3
    neighbour = problem.replace_row(i, -X[i] / np.linalg.norm(X[i]), -y[i])
    draws = _counting(monkeypatch)
    base = fit(problem, eps=2.0, rng=5, steps=30, geometry=geometry, keep_iterates=True)
    xs = base.info["iterates"]["x"][1:]  # the points where the gradients were evaluated
    coupled = [b + problem.gradient(x) - neighbour.gradient(x) for b, x in zip(draws, xs)]
    assert max(np.linalg.norm(problem.gradient(x) - neighbour.gradient(x)) for x in xs) > 1e-3

    replay = iter(coupled)
    monkeypatch.setattr(mechanisms, "sample_release", lambda rng, event, dim: next(replay))
    same = fit(neighbour, eps=2.0, rng=5, steps=30, geometry=geometry)
    np.testing.assert_allclose(same.coef, base.coef, rtol=0, atol=1e-9)
    # sanity: with the same noise (not the coupled one) the neighbour's output differs
    replay_plain = iter(draws)
    monkeypatch.setattr(mechanisms, "sample_release", lambda rng, event, dim: next(replay_plain))
    other = fit(neighbour, eps=2.0, rng=5, steps=30, geometry=geometry)
    assert np.linalg.norm(other.coef - base.coef) > 1e-6


# ------------------------------------------------------------------ mirror maps
@pytest.mark.parametrize("dim", [3, 10, 500])
def test_pnorm_mirror_maps_invert_and_are_strongly_convex_in_l1(dim):
    rng = np.random.default_rng(dim)
    geo = accmd.L1PNormGeometry(L1Ball(2.5), dim, beta=0.25)
    for scale in [1e-6, 1.0, 1e4]:
        z = rng.standard_normal(dim) * scale * rng.uniform(0, 1, dim) ** 3
        u = rng.standard_normal(dim) * scale
        np.testing.assert_allclose(geo.conjugate_grad(geo.mirror_grad(z)), z, rtol=1e-9, atol=1e-12 * scale)
        np.testing.assert_allclose(geo.mirror_grad(geo.conjugate_grad(u)), u, rtol=1e-9, atol=1e-12 * scale)
        # Fenchel-Young equality at u = grad w(z): w(z) + w*(u) = <z, u>, w*(u) = ||u||_q^2 / (2c)
        gz = geo.mirror_grad(z)
        w_star = np.linalg.norm(gz, ord=geo.q) ** 2 / (2 * geo.c)
        assert geo.mirror_value(z) + w_star == pytest.approx(float(gz @ z), rel=1e-9)
    # 1-strong convexity in ||.||_1 / R: V_x(y) >= ||y - x||_1^2 / (2 R^2); tight-ish
    ratios = []
    for _ in range(300):
        x = rng.standard_normal(dim) * rng.uniform(0, 1, dim) ** 4
        yv = x + rng.standard_normal(dim) * rng.uniform(0, 1, dim) ** 4 * rng.uniform(0.01, 2)
        V = geo.mirror_value(yv) - geo.mirror_value(x) - geo.mirror_grad(x) @ (yv - x)
        ratios.append(V / (0.5 * np.abs(yv - x).sum() ** 2 / 2.5**2))
    assert min(ratios) >= 1 - 1e-9
    # the Bregman diameter from the centre is max_C w, attained at a vertex
    vertex = np.zeros(dim)
    vertex[0] = 2.5
    assert geo.bregman_diameter(np.zeros(dim)) == pytest.approx(geo.mirror_value(vertex))


def test_default_exponent_minimizes_the_bregman_diameter():
    for d in [2, 7, 8, 50, 2000, 10**6]:
        p = accmd.optimal_pnorm_exponent(d)
        diam = lambda p: d ** (2 * (p - 1) / p) / (2 * (p - 1))  # noqa: E731
        grid = np.linspace(1.0005, 2.0, 20000)
        assert diam(p) <= diam(grid).min() * (1 + 1e-6)
        if d > 100:  # the textbook 1 + 1/ln d gives more, by a ratio tending to e/2
            assert diam(p) <= diam(1 + 1 / math.log(d)) <= math.e / 2 * diam(p)


def _generic_l1_argmin(geo, theta, R):
    """min w(z) - <theta, z> over ||z||_1 <= R with z = a - b, a, b >= 0 (SLSQP)."""
    d = theta.size
    f = lambda ab: geo.mirror_value(ab[:d] - ab[d:]) - theta @ (ab[:d] - ab[d:])  # noqa: E731
    best = None
    for start in [np.zeros(2 * d), np.concatenate([np.maximum(theta, 0), np.maximum(-theta, 0)]) * 0.1]:
        res = optimize.minimize(f, start + 1e-3, method="SLSQP", bounds=[(0, None)] * (2 * d),
                                constraints=[{"type": "ineq", "fun": lambda ab: R - ab.sum()}],
                                options={"ftol": 1e-14, "maxiter": 1000})
        if best is None or res.fun < best.fun:
            best = res
    z = best.x[:d] - best.x[d:]
    z *= min(1.0, R / np.abs(z).sum())  # SLSQP may end slightly outside the ball
    return z, geo.mirror_value(z) - theta @ z


@pytest.mark.parametrize("seed", range(6))
def test_bregman_projection_onto_the_l1_ball_is_optimal(seed):
    rng = np.random.default_rng(seed)
    d, R = 6, 1.5
    geo = accmd.L1PNormGeometry(L1Ball(R), d, beta=1.0, p=[1.2, 1.5, 2.0, 1.05, 1.3, 1.7][seed])
    theta = rng.standard_normal(d) * [0.05, 1, 10, 3, 30, 0.3][seed] * geo.c
    z, lam = geo.argmin_linear(theta)
    # KKT: grad w(z) = soft(theta, lam), lam >= 0, ||z||_1 <= R, lam (R - ||z||_1) = 0
    assert np.abs(z).sum() <= R * (1 + 1e-14) and lam >= 0
    soft = np.sign(theta) * np.maximum(np.abs(theta) - lam, 0)
    np.testing.assert_allclose(geo.mirror_grad(z), soft, atol=1e-8 * np.abs(theta).max())
    assert lam * (R - np.abs(z).sum()) <= 1e-9 * np.abs(theta).max() * R
    if seed == 0:
        assert lam == 0.0  # small theta: the unconstrained minimizer is inside
    # a generic solver finds nothing better
    z_generic, value_generic = _generic_l1_argmin(geo, theta, R)
    value = geo.mirror_value(z) - theta @ z
    assert value <= value_generic + 1e-9 * max(1.0, abs(value_generic))
    np.testing.assert_allclose(z, z_generic, atol=1e-4 * R)


def test_mirror_step_is_argmin_of_linearization_plus_bregman():
    rng = np.random.default_rng(3)
    geo = accmd.L1PNormGeometry(L1Ball(1.0), 5, beta=0.5)
    zk = rng.standard_normal(5)
    zk *= 0.8 / np.abs(zk).sum()
    g, alpha = rng.standard_normal(5) * 3, 0.7
    z = geo.mirror_step(zk, g, alpha)

    def objective(u):  # alpha <g, u> + V_{zk}(u)
        return alpha * g @ u + geo.mirror_value(u) - geo.mirror_value(zk) - geo.mirror_grad(zk) @ (u - zk)

    for _ in range(200):  # no feasible point nearby or far does better
        u = z + rng.standard_normal(5) * rng.choice([1e-3, 1e-1])
        u = L1Ball(1.0).project(u)
        assert objective(z) <= objective(u) + 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_linf_gradient_step_on_the_box_is_exact(seed):
    rng = np.random.default_rng(seed)
    d, R, weight = 5, 1.0, 0.8
    x = rng.uniform(-R, R, d)
    x[0] = R  # one coordinate on a face
    g = rng.standard_normal(d) * [0.1, 1, 5, 20, 2][seed]
    y = accmd.linf_prox_box(x, g, R, weight)
    value = lambda yy: g @ (yy - x) + weight * np.max(np.abs(yy - x)) ** 2  # noqa: E731
    assert np.all(np.abs(y) <= R)
    # generic: variables (y, t), min <g, y - x> + weight t^2, |y - x| <= t, |y| <= R
    res = optimize.minimize(lambda v: g @ (v[:d] - x) + weight * v[d] ** 2, np.concatenate([x, [0.1]]),
                            method="SLSQP", bounds=[(-R, R)] * d + [(0, None)],
                            constraints=[{"type": "ineq", "fun": lambda v: v[d] - np.abs(v[:d] - x)}],
                            options={"ftol": 1e-14, "maxiter": 1000})
    assert value(y) <= res.fun + 1e-8
    for _ in range(300):  # and no random feasible point beats it
        assert value(y) <= value(np.clip(x + rng.standard_normal(d) * rng.uniform(0, 2), -R, R)) + 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_l1_gradient_step_never_worse_than_the_coupling_point(seed):
    """The analysis needs model(y) <= model(v) for the chosen y in C (and only that)."""
    rng = np.random.default_rng(seed)
    d, R = 40, 2.0
    geo = accmd.L1PNormGeometry(L1Ball(R), d, beta=0.25)
    for _ in range(50):
        x = L1Ball(R).project(rng.standard_normal(d) * rng.uniform(0, 1))
        v = L1Ball(R).project(rng.standard_normal(d) * rng.uniform(0, 1))
        g = rng.standard_normal(d) * rng.uniform(0.01, 10)
        y = geo.gradient_step(x, g, v)
        assert np.abs(y).sum() <= R * (1 + 1e-12)
        assert geo.model(x, g, y) <= geo.model(x, g, v) + 1e-12
        # unconstrained optimum of the model is a single-coordinate move of |g_j| / (2 beta)
        if np.abs(x).sum() + np.abs(g).max() / (2 * geo.beta) <= R:
            assert geo.model(x, g, y) == pytest.approx(-np.abs(g).max() ** 2 / (4 * geo.beta))


def test_expected_squared_max_of_gaussians():
    assert accmd.expected_sq_max_abs_gaussian(1) == pytest.approx(1.0, rel=1e-8)
    assert accmd.expected_sq_max_abs_gaussian(2) == pytest.approx(1 + 2 / math.pi, rel=1e-8)
    rng = np.random.default_rng(0)
    for d in [10, 1000]:
        m = np.max(rng.standard_normal((4000, d)) ** 2, axis=1)
        assert accmd.expected_sq_max_abs_gaussian(d) == pytest.approx(m.mean(), abs=4 * m.std() / math.sqrt(4000))


# ------------------------------------------------------------------ feasibility
@pytest.mark.parametrize("constraint, geometry", GEOMETRIES)
def test_iterates_stay_in_the_constraint_set(data, constraint, geometry):
    X, y = data
    problem = ERMProblem(X, y, "logistic", ("l2", 0.01), constraint)
    for eps in [0.05, 1e4]:  # large noise pushes to the faces; small noise follows the gradient
        f = fit(problem, eps=eps, rng=2, steps=60, geometry=geometry, keep_iterates=True)
        C = problem.constraint
        for key in ["x", "y", "z"]:
            assert f.info["iterates"][key].shape == (61, problem.n_features)
            assert max(C.minkowski_norm(w) for w in f.info["iterates"][key]) <= 1 + 1e-12
        assert C.minkowski_norm(f.coef) <= 1 + 1e-12
        np.testing.assert_array_equal(f.coef, f.info["iterates"]["y"][-1])


# ------------------------------------------------------------------ convergence
@pytest.mark.parametrize("constraint", SETS)
def test_huge_epsilon_reaches_the_constrained_optimum(data, constraint):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    reference = solve_reference(problem)
    assert problem.constraint.minkowski_norm(reference.coef) > 0.999  # the constraint is active
    f = fit(problem, eps=1e6, rng=0)
    excess = f.excess_risk(problem, reference)
    assert -1e-10 <= excess <= 1e-5
    assert excess <= f.info["excess_risk_bound"]
    # and a real budget costs something
    assert fit(problem, eps=0.5, rng=0).excess_risk(problem, reference) > 10 * excess


@pytest.mark.parametrize("constraint, geometry", GEOMETRIES)
def test_accelerated_beats_noisy_projected_gd_at_the_same_T(data, constraint, geometry):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    reference = solve_reference(problem)
    budget = PrivacyBudget(1e6, 1e-5)
    T = 200
    f = get("dp_accmd").fit(problem, budget, rng=0, steps=T, geometry=geometry)
    gd = get("noisy_gd").fit(problem, budget, rng=0, steps=T)
    gd_beta = get("noisy_gd").fit(problem, budget, rng=0, steps=T, step_size=1 / problem.smoothness)
    acc = f.excess_risk(problem, reference)
    assert 0 <= acc <= f.info["excess_risk_bound"]  # the explicit O(1/T^2) bound
    assert acc <= gd.excess_risk(problem, reference) / 10
    assert acc <= gd_beta.excess_risk(problem, reference) / 3


@pytest.mark.slow
@pytest.mark.parametrize("constraint", SETS)
def test_accelerated_at_T_beats_gd_at_4T(data, constraint):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, constraint)
    reference = solve_reference(problem)
    budget = PrivacyBudget(1e8, 1e-5)
    for T in [25, 50]:
        acc = get("dp_accmd").fit(problem, budget, rng=0, steps=T, geometry="euclidean").excess_risk(problem, reference)
        gd = get("noisy_gd").fit(problem, budget, rng=0, steps=4 * T, step_size=1 / problem.smoothness)
        assert acc < gd.excess_risk(problem, reference)


@pytest.mark.slow
def test_bound_holds_on_average_at_a_real_budget():
    X, y = make_data(n=2000, d=20, seed=4)
    for constraint, geometry in GEOMETRIES:
        problem = ERMProblem(X, y, "logistic", None, constraint)
        reference = solve_reference(problem)
        fits = [fit(problem, eps=1.0, rng=s, geometry=geometry) for s in range(8)]
        assert np.mean([f.excess_risk(problem, reference) for f in fits]) <= fits[0].info["excess_risk_bound"]


# ------------------------------------------------------------------ defaults
def test_default_steps_minimize_the_stated_bound(data):
    X, y = data
    problem = ERMProblem(X, y, "logistic", None, ("l1_ball", 5.0))
    f = fit(problem, eps=1.0, rng=0, geometry="minkowski")
    T, info = f.hyperparameters["steps"], f.info
    assert T == info["theorem_steps"] < 1000
    sigma = lambda t: single_release(f.event).sigma * math.sqrt(t / T)  # sigma_t = sqrt(t) Delta / mu  # noqa: E731
    bound = lambda t: accmd.accmd_excess_risk_bound(t, info["smoothness_in_norm"], info["bregman_diameter"], info["dual_width"], sigma(t))  # noqa: E731
    assert bound(T) == pytest.approx(info["excess_risk_bound"], rel=1e-9)
    assert bound(T) <= min(bound(T - 1), bound(T + 1), bound(2 * T), bound(max(1, T // 2)))
    assert info["smoothness_in_norm"] == pytest.approx(problem.smoothness * 5.0**2)  # beta R^2


def test_auto_geometry_takes_the_smaller_bound():
    rng = np.random.default_rng(0)
    n, d = 300, 2000
    X = sp.random(n, d, density=0.01, random_state=1, format="csr")
    X = sp.csr_matrix(sp.diags(1 / np.maximum(np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel()), 1e-12)) @ X)
    y = rng.choice([-1.0, 1.0], n)
    high = ERMProblem(X, y, "logistic", None, ("l1_ball", 10.0))
    f = fit(high, eps=1.0, rng=0, steps=20)
    bounds = f.info["geometry_bounds"]
    assert f.hyperparameters["geometry"] == "minkowski" and bounds["minkowski"] < bounds["euclidean"]
    assert 1 < f.hyperparameters["p"] < 1.1
    low = ERMProblem(*make_data(d=10), "logistic", None, ("l1_ball", 10.0))
    assert fit(low, eps=1.0, rng=0).hyperparameters["geometry"] == "euclidean"
    box = ERMProblem(X, y, "logistic", None, ("box", 0.01))
    g = fit(box, eps=1.0, rng=0)  # each geometry at its own theorem T
    assert g.hyperparameters["geometry"] == "euclidean"
    assert g.info["geometry_bounds"]["euclidean"] < g.info["geometry_bounds"]["minkowski"]


# ------------------------------------------------------------------ inputs
@pytest.mark.parametrize("geometry", ["euclidean", "minkowski"])
def test_sparse_float32_and_reproducibility(data, geometry):
    X, y = data
    X = X.copy()
    X[np.abs(X) < 0.1] = 0.0
    budget = dict(eps=1e4, rng=0, steps=40, geometry=geometry)
    dense = fit(ERMProblem(X, y, "logistic", None, ("l1_ball", 3.0)), **budget).coef
    sparse = fit(ERMProblem(sp.csr_matrix(X), y, "logistic", None, ("l1_ball", 3.0)), **budget).coef
    single = fit(ERMProblem(X.astype(np.float32), y, "logistic", None, ("l1_ball", 3.0)), **budget).coef
    np.testing.assert_allclose(sparse, dense, atol=1e-10)
    np.testing.assert_allclose(single, dense, atol=1e-4)
    assert single.dtype == np.float64
    problem = ERMProblem(X, y, "logistic", None, ("l1_ball", 3.0))
    a, b, c = (fit(problem, rng=s, steps=10, geometry=geometry).coef for s in (7, 7, 8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_bad_input_is_refused(data):
    X, y = data
    ok = ERMProblem(X, y, "logistic", None, ("l2_ball", 1.0))
    with pytest.raises(AssumptionError, match="bounded constraint"):
        fit(ERMProblem(X, y, "logistic", ("l2", 0.1)))
    with pytest.raises(AssumptionError, match="delta > 0"):
        get("dp_accmd").fit(ok, PrivacyBudget(1.0))
    with pytest.raises(AssumptionError, match="smooth"):
        fit(ERMProblem(X, y, "hinge", None, ("l2_ball", 1.0)))
    with pytest.raises(AssumptionError, match="smooth regularizer"):
        fit(ERMProblem(X, y, "logistic", ("l1", 0.1), ("l2_ball", 1.0)))
    with pytest.raises(ValueError, match="geometry"):
        fit(ok, geometry="hyperbolic")
    with pytest.raises(ValueError, match="steps"):
        fit(ok, steps=0)
    with pytest.raises(ValueError, match="p must be"):
        fit(ERMProblem(X, y, "logistic", None, ("l1_ball", 1.0)), geometry="minkowski", p=2.5)
    with pytest.raises(TypeError):
        get("dp_accmd").fit(ok, (1.0, 1e-5))
    with pytest.raises(ValueError):
        accmd.make_geometry(Box(1.0), 3, beta=0.0)
