"""The production path: with ``random_state=None`` single-release fits draw their noise
with the floating-point-safe samplers (grid-rounded value plus exact discrete noise from
the OS), accounted at the rounding's effective sensitivity; a seed keeps NumPy's
reproducible path."""

import importlib

import numpy as np
import pytest

import dperm
from dperm.privacy import events as ev
from dperm.privacy.accountant import epsilon
from dperm.privacy.mechanisms import single_release
from dperm.privacy.secure_release import release_grid, secure_laplace_parameters, secure_sensitivity

from test_catalogue import data

# dp_gld at 7 steps warns that its budget-solved step size is large: irrelevant here
pytestmark = pytest.mark.filterwarnings("ignore:.*the iteration is unstable")


@pytest.mark.parametrize("name", ["output_perturbation", "gd_output_perturbation"])
@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_unseeded_fits_release_on_a_power_of_two_grid(name, delta):
    X, y = data("logistic", n=300, d=2)
    fit = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm=name, epsilon=1.0, delta=delta)
    event = fit.event
    if delta > 0:
        assert isinstance(event, ev.GaussianRelease) and event.secure
        assert event.noise_ratio == pytest.approx(event.sigma / secure_sensitivity(event.sensitivity))
        grid = release_grid(event.sensitivity, 2, event.sigma)
    else:
        assert isinstance(event, ev.SecureLaplaceRelease)
        grid = secure_laplace_parameters(event.requested_epsilon, event.sensitivity, 2).grid
    # every released coordinate is an exact multiple of the grid (projection aside: none here)
    assert np.all(np.floor(fit.coef / grid) * grid == fit.coef)
    assert fit.privacy_spent.epsilon <= 1.0 and epsilon(event, delta) <= 1.0 * (1 + 1e-12)
    again = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm=name, epsilon=1.0, delta=delta)
    assert not np.array_equal(again.coef, fit.coef)  # fresh OS randomness


def test_seeded_fits_keep_the_reproducible_numpy_path():
    X, y = data("logistic", n=300, d=2)
    a = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                       random_state=3)
    b = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                       random_state=3)
    assert np.array_equal(a.coef, b.coef) and not a.event.secure


def test_secure_gaussian_costs_only_the_rounding_in_noise():
    X, y = data("logistic", n=300, d=2)
    secure = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5)
    seeded = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                            random_state=0)
    assert secure.event.sigma == pytest.approx(seeded.event.sigma * (1 + 2**-12), rel=1e-6)


# ------------------------------------------------------- iterative full-batch algorithms
# every full-batch algorithm whose per-step releases go through mechanisms.release
ITERATIVE = ["noisy_gd", "dp_accmd", "dp_fw_l2", "dp_gd", "dp_gld"]


def _fit(name, random_state, **params):
    from dperm.algorithms import get
    from dperm.privacy import PrivacyBudget
    from dperm.problem import ERMProblem

    from test_catalogue import SPECS

    loss, reg, constraint, delta = SPECS[name]
    X, y = data(loss)
    problem = ERMProblem(X, y, loss, reg, constraint)
    return get(name).fit(problem, PrivacyBudget(2.0, delta), rng=random_state, steps=7, **params), delta


@pytest.fixture
def recorded(monkeypatch):
    """Record every secure Gaussian release (its output and grid) and forbid NumPy noise."""
    from dperm.privacy import mechanisms, secure_release

    calls = []
    original = secure_release.secure_gaussian_release

    def spy(values, sigma, sensitivity, **kwargs):
        out = original(values, sigma, sensitivity, **kwargs)
        calls.append((out, secure_release.secure_gaussian_parameters(sigma, sensitivity, out.size).grid))
        return out

    def forbidden(*args, **kwargs):
        raise AssertionError("NumPy noise drawn on the secure path")

    monkeypatch.setattr(secure_release, "secure_gaussian_release", spy)
    monkeypatch.setattr(mechanisms, "gaussian_noise", forbidden)
    return calls


@pytest.mark.parametrize("name", ITERATIVE)
def test_iterative_fits_release_every_step_on_the_grid(name, recorded):
    fit, delta = _fit(name, None)
    one = single_release(fit.event)
    assert isinstance(one, ev.GaussianRelease) and one.secure
    assert len(recorded) == 7  # one secure release per step, nothing else
    for out, grid in recorded:
        assert np.array_equal(np.rint(out / grid) * grid, out)  # exact multiples of the grid


@pytest.mark.parametrize("name", ITERATIVE)
def test_iterative_secure_accounting_is_the_closed_form(name):
    from dperm.privacy.secure_release import secure_gaussian_epsilon

    fit, delta = _fit(name, None)
    one = single_release(fit.event)
    # T adaptive Gaussian releases at the rounding's effective sensitivity, plus the
    # sampler's slack: Gaussian DP with mu = sqrt(T) Delta (1 + 2^-12) / sigma
    closed = secure_gaussian_epsilon(one.sigma, secure_sensitivity(one.sensitivity), delta, 7)
    assert epsilon(fit.event, delta) == pytest.approx(closed, rel=1e-9)
    assert fit.privacy_spent.epsilon <= 2.0 * (1 + 1e-9)
    seeded, _ = _fit(name, 0)
    # the rounding costs a factor 1 + 2^-12 in noise, nothing else
    assert one.sigma == pytest.approx(single_release(seeded.event).sigma * (1 + 2**-12), rel=1e-6)


@pytest.mark.parametrize("name", ITERATIVE)
def test_iterative_seeded_fits_draw_numpy_noise_only(name, monkeypatch):
    from dperm.privacy import secure_release

    def forbidden(*args, **kwargs):
        raise AssertionError("secure sampler used on the seeded path")

    monkeypatch.setattr(secure_release, "secure_gaussian_release", forbidden)
    a, _ = _fit(name, 5)
    b, _ = _fit(name, 5)
    assert np.array_equal(a.coef, b.coef) and not single_release(a.event).secure


# ---------------------------------------------------------------- objective perturbation
def test_objective_perturbation_secure_path(monkeypatch):
    import math

    from dperm.privacy import secure_release
    from dperm.privacy.secure_release import PERTURBATION_TAIL, TAU_PER_RELEASE, secure_noise_parameters

    drawn = []
    original = secure_release.secure_gaussian_noise

    def spy(sigma, dim, **kwargs):
        b = original(sigma, dim, **kwargs)
        drawn.append((b, secure_noise_parameters(sigma, dim).grid))
        return b

    monkeypatch.setattr(secure_release, "secure_gaussian_noise", spy)
    X, y = data("logistic", n=300, d=2)
    fit = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="objective_perturbation", epsilon=1.0, delta=1e-5)
    seeded = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="objective_perturbation", epsilon=1.0,
                            delta=1e-5, random_state=0)
    objective, coupling, output = fit.event.events
    # b: exact discrete Gaussian on its grid g_b <= 2^-46 sigma_b
    (b, grid_b), = drawn
    assert np.array_equal(np.rint(b / grid_b) * grid_b, b) and grid_b <= objective.scale * 2.0**-46
    # the output: a secure Gaussian release on its grid, at the sensitivity widened by the
    # perturbation 60 g_b sqrt(d) of the coupling
    assert isinstance(output, ev.GaussianRelease) and output.secure
    plain = single_release(seeded.event.events[1])
    n = 300
    mu_J = 2.0 * fit.hyperparameters["tolerance"] / plain.sensitivity
    widened = 2.0 * (fit.hyperparameters["tolerance"] + 60 * grid_b * math.sqrt(2) / n) / mu_J
    assert output.sensitivity == pytest.approx(widened, rel=1e-12)
    grid = release_grid(output.sensitivity, 2, output.sigma)
    assert np.array_equal(np.rint(fit.coef / grid) * grid, fit.coef)
    # the coupling's term, and the budget is kept
    assert coupling.epsilon == pytest.approx(2 * TAU_PER_RELEASE)
    assert coupling.delta == pytest.approx((1 + math.e) * 2 * PERTURBATION_TAIL + 2 * TAU_PER_RELEASE, rel=1e-6)
    assert epsilon(fit.event, 1e-5) <= 1.0 and fit.privacy_spent.epsilon <= 1.0
    assert not seeded.event.events[1].secure and len(seeded.event.events) == 2


def test_unseeded_dp_sgd_releases_every_batch_sum_on_the_grid_with_exact_noise(monkeypatch):
    from dperm.algorithms import _kernels, sgd
    from dperm.privacy.budget import PrivacyBudget
    from dperm.privacy.secure_release import TAU_PER_RELEASE, secure_gaussian_parameters
    from dperm.problem.erm import ERMProblem

    X, y = data("logistic", n=300)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    calls = []
    dense = _kernels.sgd_steps_dense

    def spy(X, *args):
        calls.append((args[5].copy(), args[-1]))  # the steps' noise, grid
        return dense(X, *args)

    monkeypatch.setattr(_kernels, "sgd_steps_dense", spy)
    fit = sgd.dp_sgd(problem, PrivacyBudget(1.0, 1e-5), rng=None, steps=40)
    release = fit.event.event.event
    assert release.secure and fit.privacy_spent.epsilon <= 1.0
    params = secure_gaussian_parameters(release.sigma, release.sensitivity, problem.n_features)
    assert calls and all(grid == params.grid for _, grid in calls)
    for noise, _ in calls:  # exact multiples of the power-of-two grid: g K with K integer
        units = noise / params.grid
        np.testing.assert_array_equal(units, np.round(units))
    # accounted: the rounding's effective sensitivity and the sampler's slack per step
    plain = sgd.sgd_event(release.sigma, release.sensitivity, 300, fit.hyperparameters["batch_size"], 40, "poisson")
    assert epsilon(fit.event, 1e-5) > epsilon(plain, 1e-5)
    assert epsilon(fit.event, 1e-5) <= epsilon(plain, 1e-5 * (1 - 1e-9)) * (1 + 1e-3) + 2 * 40 * TAU_PER_RELEASE
    seeded = sgd.dp_sgd(problem, PrivacyBudget(1.0, 1e-5), rng=3, steps=40)
    assert not seeded.event.event.event.secure and calls[-1][1] == 0.0


def test_unseeded_rrpsgd_takes_the_same_secure_batch_releases(monkeypatch):
    from dperm.algorithms import _kernels
    from dperm.algorithms.nonconvex_gd import rrpsgd
    from dperm.privacy.budget import PrivacyBudget
    from dperm.privacy.secure_release import secure_gaussian_parameters
    from dperm.problem.erm import ERMProblem

    X, y = data("logistic", n=300)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.1))
    grids = []
    dense = _kernels.sgd_steps_dense
    monkeypatch.setattr(_kernels, "sgd_steps_dense", lambda X, *args: (grids.append(args[-1]), dense(X, *args))[1])
    fit = rrpsgd(problem, PrivacyBudget(1.0, 1e-4), rng=None, max_steps=60)
    release = fit.event.event.event
    assert release.secure and fit.privacy_spent.epsilon <= 1.0
    params = secure_gaussian_parameters(release.sigma, release.sensitivity, problem.n_features)
    assert set(grids) == {params.grid}


@pytest.mark.parametrize("name, constraint, delta", [
    ("exponential_mechanism", ("l2_ball", 1.0), 0.0),
    ("localization", ("l2_ball", 1.0), 0.0),
    ("dp_fw_l1", ("l1_ball", 1.0), 1e-5),
])
def test_exponential_mechanism_draws_take_the_exact_sampler_without_a_seed(name, constraint, delta, monkeypatch):
    from dperm.algorithms import registry
    from dperm.privacy import noise, secure_release
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem.erm import ERMProblem

    X, y = data("logistic", n=200)
    problem = ERMProblem(X[:, :2] / np.maximum(1, np.linalg.norm(X[:, :2], axis=1, keepdims=True)), y, "logistic",
                         ("l2", 0.1) if name != "dp_fw_l1" else None, constraint)
    used = []
    exact, gumbel = secure_release.secure_exponential_mechanism, noise.exponential_mechanism
    monkeypatch.setattr(secure_release, "secure_exponential_mechanism",
                        lambda *a, **k: (used.append("exact"), exact(*a, **k))[1])
    monkeypatch.setattr(noise, "exponential_mechanism", lambda *a, **k: (used.append("gumbel"), gumbel(*a, **k))[1])
    fit_kwargs = {"steps": 5} if name == "dp_fw_l1" else {}
    registry.get(name).fit(problem, PrivacyBudget(1.0, delta), rng=None, **fit_kwargs)
    assert used and set(used) == {"exact"}
    used.clear()
    registry.get(name).fit(problem, PrivacyBudget(1.0, delta), rng=4, **fit_kwargs)
    assert used and set(used) == {"gumbel"}


def test_unseeded_localization_centre_is_the_secure_laplace_release(monkeypatch):
    from dperm.algorithms import registry
    from dperm.privacy import events as ev
    from dperm.privacy import mechanisms, secure_release
    from dperm.privacy.accountant import epsilon
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem.erm import ERMProblem

    X, y = data("logistic", n=200)
    problem = ERMProblem(X[:, :2] / np.maximum(1, np.linalg.norm(X[:, :2], axis=1, keepdims=True)), y, "logistic",
                         ("l2", 0.1), ("l2_ball", 1.0))
    calls = []
    exact = secure_release.secure_laplace_release
    monkeypatch.setattr(secure_release, "secure_laplace_release",
                        lambda *a, **k: (calls.append(a[1:]), exact(*a, **k))[1])
    numpy_draws = []
    l2_laplace = mechanisms.l2_laplace_noise
    monkeypatch.setattr(mechanisms, "l2_laplace_noise", lambda *a, **k: (numpy_draws.append(1), l2_laplace(*a, **k))[1])
    fit = registry.get("localization").fit(problem, PrivacyBudget(1.0, 0.0), rng=None)
    assert not numpy_draws
    centre = fit.event.events[0]
    assert isinstance(centre, ev.SecureLaplaceRelease) and len(calls) == 1
    assert epsilon(fit.event, 0.0) <= 1.0 and fit.privacy_spent.epsilon <= 1.0
    seeded = registry.get("localization").fit(problem, PrivacyBudget(1.0, 0.0), rng=2)
    assert isinstance(seeded.event.events[0], ev.L2LaplaceRelease) and len(calls) == 1 and numpy_draws


@pytest.mark.parametrize("dim, t", [(1, 5), (3, 40), (20, 7), (100, 300)])
def test_secure_laplace_error_bound_covers_the_release_error(dim, t):
    """Monte Carlo: the bound exceeds the (1 - failure) quantile of the true error norm, and
    it stays within a small factor of that quantile (it is meant to be usable)."""
    from dperm.privacy.exact_sampling import GeneratorSource
    from dperm.privacy.fast_sampling import fast_discrete_laplace
    from dperm.privacy.secure_release import secure_laplace_error_bound

    grid, failure, draws = 2.0**-10, 0.01, 4000
    rng = np.random.default_rng(dim)
    noise = fast_discrete_laplace(GeneratorSource(dim), t, draws * dim).reshape(draws, dim) * grid
    rounding = (rng.random((draws, dim)) - 0.5) * grid  # |round(q/g) - q/g| <= 1/2
    norms = np.linalg.norm(noise + rounding, axis=1)
    bound = secure_laplace_error_bound(grid, t, dim, failure)
    quantile = np.quantile(norms, 1 - failure)
    assert bound >= quantile
    assert bound <= 4.0 * quantile + 3 * grid * np.sqrt(dim)


def test_floor_laplace_integers_have_the_law_of_the_floored_continuous_laplace():
    """floor(X), X Laplace of scale t: P(k) = (1/2)(1-q) q^k (k >= 0) and
    (1/2)(1-q) q^(|k|-1) (k < 0), q = e^(-1/t): chi-square against the pmf at t = 2, and
    against NumPy's floored continuous Laplace draws (two-sample) at t = 7."""
    from scipy import stats

    from dperm.privacy.exact_sampling import GeneratorSource
    from dperm.privacy.secure_release import floor_laplace_integers

    draws, t = 60000, 2
    k = floor_laplace_integers(t, draws, GeneratorSource(9))
    q = np.exp(-1.0 / t)
    ks = np.arange(-12, 12)
    pmf = np.where(ks >= 0, 0.5 * (1 - q) * q ** ks.astype(float), 0.5 * (1 - q) * q ** (np.abs(ks) - 1.0))
    observed = np.array([np.sum(k == v) for v in ks] + [np.sum((k < -12) | (k > 11))])
    assert stats.chisquare(observed, np.append(pmf, 1 - pmf.sum()) * draws)[1] > 1e-4
    k7 = floor_laplace_integers(7, draws, GeneratorSource(4))
    continuous = np.floor(np.random.default_rng(7).laplace(0.0, 7.0, draws)).astype(np.int64)
    bins = np.array([-np.inf, -14, -7, -3, -1, 0, 2, 7, 14, np.inf])
    table = np.vstack([np.histogram(k7, bins)[0], np.histogram(continuous, bins)[0]])
    assert stats.chi2_contingency(table)[1] > 1e-4


def test_floor_laplace_noise_scale_and_perturbation():
    from dperm.privacy.exact_sampling import GeneratorSource
    from dperm.privacy.secure_release import floor_laplace_noise, floor_laplace_parameters

    params = floor_laplace_parameters(3.0, 50)
    assert params.scale == params.grid * params.scale_multiple >= 3.0
    assert params.scale <= 3.0 * (1 + 2.0**-39) and params.perturbation >= params.grid * np.sqrt(50)
    noise = floor_laplace_noise(3.0, 20000, source=GeneratorSource(2))
    units = noise / params.grid
    np.testing.assert_array_equal(units, np.round(units))
    assert abs(noise.std() - np.sqrt(2) * 3.0) < 0.1 and abs(noise.mean()) < 0.1


def test_unseeded_pure_objective_perturbation_is_exact_and_secure(monkeypatch):
    from dperm.privacy import events as ev
    from dperm.privacy import mechanisms, secure_release
    from dperm.privacy.accountant import epsilon
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem.erm import ERMProblem

    op = importlib.import_module("dperm.algorithms.objective_perturbation")
    X, y = data("logistic", n=300)
    problem = ERMProblem(X, y, "logistic", ("l2", 0.01))
    used = {"floor": 0, "numpy": 0, "release": 0}
    floor, l2, secure_laplace = (secure_release.floor_laplace_noise, mechanisms.l2_laplace_noise,
                                 secure_release.secure_laplace_release)
    monkeypatch.setattr(secure_release, "floor_laplace_noise",
                        lambda *a, **k: (used.__setitem__("floor", used["floor"] + 1), floor(*a, **k))[1])
    monkeypatch.setattr(mechanisms, "l2_laplace_noise",
                        lambda *a, **k: (used.__setitem__("numpy", used["numpy"] + 1), l2(*a, **k))[1])
    monkeypatch.setattr(secure_release, "secure_laplace_release",
                        lambda *a, **k: (used.__setitem__("release", used["release"] + 1), secure_laplace(*a, **k))[1])
    fit = op.objective_perturbation(problem, PrivacyBudget(1.0, 0.0), rng=None)
    assert used == {"floor": 1, "numpy": 0, "release": 1}
    objective, output = fit.event.events
    assert objective.noise == "laplace" and isinstance(output, ev.SecureLaplaceRelease)
    assert objective.sensitivity >= np.sqrt(problem.n_features) * 2 * problem.lipschitz
    assert epsilon(fit.event, 0.0) <= 1.0 and fit.privacy_spent == PrivacyBudget(epsilon(fit.event, 0.0), 0.0)
    units = fit.coef / output.grid
    np.testing.assert_array_equal(units, np.round(units))
    seeded = op.objective_perturbation(problem, PrivacyBudget(1.0, 0.0), rng=1)
    assert seeded.event.events[0].noise == "l2_laplace" and used["numpy"] == 2 and used["floor"] == 1


@pytest.mark.parametrize("name, sparse", [("dp_svrg", False), ("dp_svrg_pp", False), ("dp_svrg", True)])
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_unseeded_svrg_releases_every_step_on_its_grid(name, sparse, monkeypatch):
    import scipy.sparse as sp

    from dperm.algorithms import _kernels, registry
    from dperm.privacy import secure_release
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem.erm import ERMProblem

    X, y = data("logistic", n=400)
    problem = ERMProblem(sp.csr_matrix(X) if sparse else X, y, "logistic", ("l2", 0.05))
    kernel_name = "svrg_steps_csr" if sparse else "svrg_steps_dense"
    kernel = getattr(_kernels, kernel_name)
    seen, snapshots = [], []
    normals_at = 11 if sparse else 9  # position of the pre-drawn noise among the kernel's arguments

    def spy(*args):
        seen.append((np.array(args[normals_at]), args[-1], args[normals_at + 1]))
        return kernel(*args)

    monkeypatch.setattr(_kernels, kernel_name, spy)
    secure = secure_release.secure_gaussian_release
    monkeypatch.setattr(secure_release, "secure_gaussian_release",
                        lambda *a, **k: (snapshots.append(1), secure(*a, **k))[1])
    fit = registry.get(name).fit(problem, PrivacyBudget(1.0, 1e-5), rng=None, epochs=3)
    inner = fit.event.events[-1]
    while not isinstance(inner, ev.GaussianRelease):
        inner = inner.event
    releases = [single_release(e) for e in fit.event.events[:-1]] + [inner]
    assert all(r.secure for r in releases) and fit.privacy_spent.epsilon <= 1.0
    assert len(snapshots) == len(fit.hyperparameters["epoch_lengths"])
    ratio = seen[0][2]
    unit = secure_release.secure_gaussian_parameters(2.0 * ratio, 2.0, problem.n_features)
    for normals, grid_unit, _ in seen:
        assert grid_unit == unit.grid
        np.testing.assert_array_equal(normals, np.round(normals))  # exact integers K
    pooled = np.concatenate([n.ravel() for n, _, _ in seen])  # unseeded: allow 6 standard errors of a std
    assert abs(pooled.std() / unit.noise_multiple - 1.0) < 6.0 / np.sqrt(2.0 * pooled.size)
    seen.clear(), snapshots.clear()
    registry.get(name).fit(problem, PrivacyBudget(1.0, 1e-5), rng=3, epochs=3)
    assert seen and all(grid_unit == 0.0 for _, grid_unit, _ in seen) and not snapshots


def test_svrg_secure_step_release_is_the_grid_release():
    from dperm.algorithms import _kernels

    assert _kernels._pow2_ceil(1.0) == 1.0 and _kernels._pow2_ceil(0.3) == 0.5 and _kernels._pow2_ceil(5.0) == 8.0
    rng = np.random.default_rng(0)
    g = rng.standard_normal(7)
    normals = rng.integers(-1000, 1000, size=(2, 7)).astype(np.float64)
    v_snap = rng.standard_normal(7)
    expected = (np.rint(g / 2.0**-10) + normals[1]) * 2.0**-10 + 3.0 * v_snap
    out = g.copy()
    _kernels._svrg_secure_release(out, normals, 1, 0.25, 2.0**-8, 3.0, v_snap)  # grid = 0.25 * 2^-8
    np.testing.assert_array_equal(out, expected)
    out = g.copy()
    _kernels._svrg_secure_release(out, normals, 1, 0.0, 2.0**-8, 3.0, v_snap)  # c = 0: nothing released
    np.testing.assert_array_equal(out, 3.0 * v_snap)
