"""Least squares by noisy sufficient statistics (SSP and AdaSSP, Wang 2018) and the
regression estimators' targets in their own units (``y_bounds``).

The privacy arguments are checked on the quantities the mechanisms actually release: the
vectors handed to the release on worst-case replace-one neighbours differ by at most the
sensitivity the event declares (and attain it), and the noise drawn has the event's
standard deviation."""

import importlib
import math
import warnings

import numpy as np
import pytest

import dperm
from dperm.algorithms import AssumptionError, get
from dperm.algorithms.sufficient_statistics import (
    _symmetric, _upper, adassp_ridge, eigenvalue_sensitivity, gram_and_moment, gram_sensitivity, moment_sensitivity,
    noise_operator_bound)
from dperm.privacy import PrivacyBudget
from dperm.privacy import events as ev
from dperm.privacy.budget import BudgetAccountant, PrivacyWarning
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.problem import ERMProblem

# the module (the package attribute of the same name is the function)
ssp_module = importlib.import_module("dperm.algorithms.sufficient_statistics")


def linear_data(n=2000, d=5, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = np.linspace(1.0, -1.0, d)
    y = np.clip(X @ w + noise * rng.normal(size=n), -1, 1)
    return X, y, w


def r2(y, p):
    return 1.0 - np.mean((y - p) ** 2) / np.var(y)


# ---------------------------------------------------------------- sensitivities
def test_isometric_triangle_keeps_the_frobenius_norm_and_mirrors_back():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(6, 6))
    M = M + M.T
    v = _upper(M)
    assert v.shape == (21,)
    assert np.linalg.norm(v) == pytest.approx(np.linalg.norm(M), rel=1e-12)
    np.testing.assert_allclose(_symmetric(v, 6), M, rtol=0, atol=1e-12)


@pytest.mark.parametrize("R, B", [(1.0, 1.0), (2.0, 0.5)])
def test_replace_one_sensitivities_hold_and_are_attained(R, B):
    """Random replace-one pairs (weights in [0, 1]) never exceed sqrt(2) R^2 (X^T X, as the
    released isometric vector), 2 R B (X^T y) and R^2 (lambda_min); the worst pairs attain them."""
    rng = np.random.default_rng(1)
    d, n = 4, 12
    worst = [0.0, 0.0, 0.0]
    for trial in range(400):
        C = rng.normal(size=(n - 1, d))
        C *= R * rng.uniform(0, 1, size=(n - 1, 1)) / np.linalg.norm(C, axis=1, keepdims=True)
        base = C.T @ C * (trial % 3 != 0)  # some trials with an empty common part
        z, z2 = (R * rng.uniform(0, 1) * u / np.linalg.norm(u) for u in rng.normal(size=(2, d)))
        s, s2 = rng.uniform(0, 1, 2)
        y, y2 = rng.uniform(-B, B, 2)
        A, A2 = base + s * np.outer(z, z), base + s2 * np.outer(z2, z2)
        worst[0] = max(worst[0], np.linalg.norm(_upper(A) - _upper(A2)))
        worst[1] = max(worst[1], np.linalg.norm(s * y * z - s2 * y2 * z2))
        worst[2] = max(worst[2], abs(np.linalg.eigvalsh(A)[0] - np.linalg.eigvalsh(A2)[0]))
    assert worst[0] <= gram_sensitivity(R) * (1 + 1e-12)
    assert worst[1] <= moment_sensitivity(R, B) * (1 + 1e-12)
    assert worst[2] <= eigenvalue_sensitivity(R) * (1 + 1e-12)
    e1, e2 = np.eye(d)[0] * R, np.eye(d)[1] * R
    assert np.linalg.norm(_upper(np.outer(e1, e1) - np.outer(e2, e2))) == pytest.approx(math.sqrt(2) * R * R)
    assert np.linalg.norm(B * e1 - B * -e1) == pytest.approx(2 * R * B)
    assert abs(np.linalg.eigvalsh(np.outer(e1, e1) * 0 + np.diag([R * R] + [0] * (d - 1)))[-1]) == pytest.approx(R * R)


def _recorded_releases(name, problem, budget, monkeypatch, **hyper):
    """Run ``name`` and record every (value, event) handed to the release."""
    from dperm.privacy.mechanisms import release as real

    calls = []

    def spy(rng, value, event):
        calls.append((np.array(value, dtype=float), event))
        return real(rng, value, event)

    monkeypatch.setattr(ssp_module, "release", spy)
    fit = get(name).fit(problem, budget, rng=0, **hyper)
    return fit, calls


@pytest.mark.parametrize("name", ["sufficient_statistics", "adassp"])
@pytest.mark.parametrize("pair", ["orthogonal", "opposite"])
def test_released_quantities_of_worst_neighbours_differ_by_the_declared_sensitivity(name, pair, monkeypatch):
    """On worst-case pairs every released vector moves by at most its event's sensitivity:
    row 0 ``(R e_1, B)`` replaced by ``(R e_2, B)`` (orthogonal rows: X^T X moves by exactly
    sqrt(2) R^2) or by ``(-R e_1, B)`` (X^T y moves by exactly 2 R B)."""
    R, B = 1.5, 0.7
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3)) * 0.2
    y = rng.uniform(-B, B, 50)
    X[:, :2] = 0.0  # the common rows off the canary's plane
    X2, y2 = X.copy(), y.copy()
    X[0], y[0] = [R, 0, 0], B
    X2[0], y2[0] = ([0, R, 0], B) if pair == "orthogonal" else ([-R, 0, 0], B)
    budget = PrivacyBudget(1.0, 1e-5)
    runs = [_recorded_releases(name, ERMProblem(A, b, "squared", data_norm=R, label_bound=B), budget, monkeypatch)
            for A, b in ((X, y), (X2, y2))]
    (fit, calls), (fit2, calls2) = runs
    assert len(calls) == len(calls2) == (3 if name == "adassp" else 2)
    moved = []
    for (value, event), (value2, event2) in zip(calls, calls2):
        assert event == event2 and isinstance(event, ev.GaussianRelease)
        gap = np.linalg.norm(value - value2)
        assert gap <= event.sensitivity * (1 + 1e-12)
        moved.append(gap / event.sensitivity)
    tight = moved[-2] if pair == "orthogonal" else moved[-1]  # X^T X, or X^T y
    assert tight == pytest.approx(1.0)
    assert fit.event == fit2.event and fit.privacy_spent == fit2.privacy_spent


@pytest.mark.parametrize("name", ["sufficient_statistics", "adassp"])
def test_noise_drawn_has_the_events_standard_deviation(name, monkeypatch):
    """The seeded path's noise, over many fits, has mean 0 and the event's sigma (a
    tolerance of 6 standard errors of the sample mean and of the sample std)."""
    X, y, _ = linear_data(n=200, d=3)
    problem = ERMProblem(X, y, "squared", data_norm=1.0)
    draws = {}
    real = ssp_module.release

    def spy(rng, value, event):
        out = real(rng, value, event)
        draws.setdefault(event.sensitivity, [event.sigma, []])[1].extend(out - value)
        return out

    monkeypatch.setattr(ssp_module, "release", spy)
    for seed in range(300):
        get(name).fit(problem, PrivacyBudget(1.0, 1e-5), rng=seed)
    assert len(draws) == (3 if name == "adassp" else 2)
    for sigma, noise in draws.values():
        noise = np.asarray(noise)
        m = noise.size
        assert abs(noise.mean()) <= 6 * sigma / math.sqrt(m)
        assert abs(noise.std() / sigma - 1.0) <= 6 / math.sqrt(2 * m)


@pytest.mark.parametrize("name, count", [("sufficient_statistics", 2), ("adassp", 3)])
def test_event_is_the_calibrated_composition_of_gaussian_releases(name, count):
    X, y, _ = linear_data(n=500, d=4)
    R, B = 2.0, 1.0
    budget = PrivacyBudget(0.5, 1e-6)
    fit = get(name).fit(ERMProblem(X, y, "squared", data_norm=R, label_bound=B), budget, rng=1)
    leaves = fit.event.events
    assert len(leaves) == count and all(isinstance(e, ev.GaussianRelease) for e in leaves)
    expected = [gram_sensitivity(R), moment_sensitivity(R, B)]
    if name == "adassp":
        expected = [eigenvalue_sensitivity(R)] + expected
    assert [e.sensitivity for e in leaves] == pytest.approx(expected)
    mu = math.sqrt(sum((e.sensitivity / e.sigma) ** 2 for e in leaves))
    assert mu == pytest.approx(gaussian_dp_mu(0.5, 1e-6), rel=1e-3)  # Gaussian DP, the whole budget
    assert fit.privacy_spent.epsilon <= 0.5 * (1 + 1e-12) and fit.privacy_spent.delta <= 1e-6
    # equal shares: every release has the same noise ratio
    assert np.ptp([e.sigma / e.sensitivity for e in leaves]) < 1e-9


def test_shares_split_the_gaussian_dp_budget():
    X, y, _ = linear_data(n=300, d=3)
    fit = get("adassp").fit(ERMProblem(X, y, "squared"), PrivacyBudget(1.0, 1e-5), rng=0, shares=(1, 2, 7))
    ratios = [(e.sensitivity / e.sigma) ** 2 for e in fit.event.events]
    np.testing.assert_allclose(np.array(ratios) / sum(ratios), [0.1, 0.2, 0.7], rtol=1e-9)


# ---------------------------------------------------------------- AdaSSP's ridge
def test_adassp_ridge_is_the_papers_formula():
    sigma_a, sigma_l, d, delta, rho = 3.0, 2.0, 7, 1e-5, 0.05
    paper = sigma_a * math.sqrt(d * math.log(2 * d * d / rho))
    assert adassp_ridge(-5.0, sigma_a, sigma_l, d, delta, rho, "paper") == pytest.approx(paper)
    lower = 100.0 - sigma_l * math.sqrt(math.log(6 / delta))
    assert adassp_ridge(100.0, sigma_a, sigma_l, d, delta, rho, "paper") == pytest.approx(max(0.0, paper - lower))
    assert adassp_ridge(1e6, sigma_a, sigma_l, d, delta, rho) == 0.0
    assert noise_operator_bound(1.0, 50, 0.05) < 0.6 * noise_operator_bound(1.0, 50, 0.05, "paper")


def test_sharp_noise_bound_holds_with_the_stated_probability():
    """The operator norm of the mirrored isometric noise exceeds the sharp bound in at most
    rho of the draws (binomial tolerance: 3 standard deviations above rho)."""
    d, rho, sigma, trials = 20, 0.05, 1.3, 600
    rng = np.random.default_rng(4)
    bound = noise_operator_bound(sigma, d, rho)
    over = sum(np.abs(np.linalg.eigvalsh(_symmetric(sigma * rng.normal(size=d * (d + 1) // 2), d))).max() > bound
               for _ in range(trials))
    assert over <= trials * rho + 3 * math.sqrt(trials * rho * (1 - rho))
    # and the bound is not vacuous: the typical norm is within a factor 1.5 of it
    typical = np.median([np.abs(np.linalg.eigvalsh(_symmetric(sigma * rng.normal(size=d * (d + 1) // 2), d))).max()
                         for _ in range(50)])
    assert bound < 1.5 * typical


# ---------------------------------------------------------------- utility and refusals
@pytest.mark.parametrize("name", ["sufficient_statistics", "adassp"])
def test_large_n_reaches_ordinary_least_squares(name):
    X, y, _ = linear_data(n=20000, d=5, seed=2)
    Xt, yt, _ = linear_data(n=5000, d=5, seed=3)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    fit = get(name).fit(ERMProblem(X, y, "squared"), PrivacyBudget(4.0, 1e-5), rng=0)
    assert r2(yt, Xt @ fit.coef) >= r2(yt, Xt @ ols) - 0.02


def test_gram_and_moment_match_dense_sparse_weighted_and_intercept():
    import scipy.sparse as sp

    X, y, _ = linear_data(n=100, d=3)
    s = np.random.default_rng(0).uniform(size=100)
    p = ERMProblem(X, y, "squared", data_norm=2.0, intercept_scaling=1.0, sample_weight=s)
    Z = np.hstack([X, np.ones((100, 1))])
    A, b = gram_and_moment(p)
    np.testing.assert_allclose(A, Z.T @ (Z * s[:, None]), rtol=1e-12)
    np.testing.assert_allclose(b, Z.T @ (s * y), rtol=1e-12)
    A2, b2 = gram_and_moment(ERMProblem(sp.csr_matrix(X), y, "squared", data_norm=2.0, intercept_scaling=1.0,
                                        sample_weight=s))
    np.testing.assert_allclose(A2, A, rtol=1e-12)
    np.testing.assert_allclose(b2, b, rtol=1e-12)


@pytest.mark.parametrize("name", ["sufficient_statistics", "adassp"])
def test_refusals_before_any_budget_is_spent(name):
    X, y, _ = linear_data(n=100, d=3)
    accountant = BudgetAccountant(10.0, 1e-3)
    from dperm.privacy.mechanisms import charging

    with charging(accountant):
        with pytest.raises(AssumptionError, match="unconstrained"):
            get(name).fit(ERMProblem(X, y, "squared", None, ("l2_ball", 1.0)), PrivacyBudget(1, 1e-5), rng=0)
        with pytest.raises(AssumptionError, match="delta > 0"):
            get(name).fit(ERMProblem(X, y, "squared"), PrivacyBudget(1, 0.0), rng=0)
        with pytest.raises(AssumptionError, match="squared loss"):
            get(name).fit(ERMProblem(X, np.sign(y) + (y == 0), "logistic"), PrivacyBudget(1, 1e-5), rng=0)
        with pytest.raises(ValueError, match="shares"):
            get(name).fit(ERMProblem(X, y, "squared"), PrivacyBudget(1, 1e-5), rng=0, shares=(1.0, -1.0, 1.0))
        if name == "adassp":
            with pytest.raises(ValueError, match="noise_bound"):
                get(name).fit(ERMProblem(X, y, "squared"), PrivacyBudget(1, 1e-5), rng=0, noise_bound="loose")
    assert accountant.spent is None  # nothing charged


def test_auto_takes_adassp_for_unconstrained_least_squares():
    from dperm.algorithms.auto import choose_algorithm

    X, y, _ = linear_data(n=100, d=3)
    assert choose_algorithm(ERMProblem(X, y, "squared"), PrivacyBudget(1, 1e-5))[0] == "adassp"
    assert choose_algorithm(ERMProblem(X, y, "squared", None, ("l2_ball", 1.0)), PrivacyBudget(1, 1e-5))[0] != "adassp"


# ---------------------------------------------------------------- estimators
def test_linear_regression_default_is_objective_perturbation_of_the_huberized_squared_loss():
    X, y, _ = linear_data(n=3000, d=4)
    model = dperm.DPLinearRegression(epsilon=1.0, label_bound=2.0, random_state=0).fit(X, y)
    assert model.solver_ == "objective_perturbation"
    assert model._loss().threshold == 2.0 and model._constraint() is None and model.alpha_ > 0
    ada = dperm.DPLinearRegression(epsilon=1.0, solver="adassp", random_state=0).fit(X, y)
    assert ada.solver_ == "adassp" and ada.alpha_ == 0.0
    old = dperm.DPLinearRegression(epsilon=1.0, solver="noisy_gd", random_state=0).fit(X, y)
    assert old._constraint() == ("l2_ball", 1.0)


@pytest.mark.parametrize("cls, extra", [(dperm.DPLinearRegression, {}),
                                        (dperm.DPLinearRegression, {"solver": "adassp"}),
                                        (dperm.DPHuberRegressor, {}), (dperm.DPRobustRegressor, {})])
def test_y_bounds_fit_in_the_model_range_and_predict_in_original_units(cls, extra):
    """Fitting raw targets with y_bounds = (lo, hi) is the fit of the mapped targets
    ``(y - centre) / half-width`` with predictions mapped back: the same numbers, same seed."""
    X, y, _ = linear_data(n=3000, d=4)
    lo, hi = 100.0, 300.0
    raw = 200.0 + 100.0 * y
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # in-bounds raw targets: nothing to say
        bounded = cls(epsilon=2.0, random_state=3, y_bounds=(lo, hi), **extra).fit(X, raw)
    unit = cls(epsilon=2.0, random_state=3, **extra).fit(X, y)
    # (predictions clipped into the declared bounds: a free post-processing, issue 30)
    np.testing.assert_allclose(bounded.predict(X), np.clip(200.0 + 100.0 * unit.predict(X), lo, hi), rtol=1e-9)
    np.testing.assert_allclose(bounded.coef_, 100.0 * unit.coef_, rtol=1e-9)
    assert r2(raw, bounded.predict(X)) > 0.5


def test_y_bounds_clip_silently_and_scale_with_label_bound():
    X, y, _ = linear_data(n=2000, d=3)
    raw = 10.0 * y
    raw[:5] = 1e6  # beyond the declared bounds: clipped, no message (the bounds are the declaration)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = dperm.DPLinearRegression(epsilon=2.0, random_state=0, label_bound=3.0, y_bounds=(-10, 10)).fit(X, raw)
    assert np.all(np.abs(m.predict(X)) < 20)


def test_glm_y_bounds_map_onto_the_unit_interval():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    p = 1 / (1 + np.exp(-(3 * X[:, 0])))
    model = dperm.DPGLMRegressor(epsilon=4.0, random_state=0, y_bounds=(50.0, 150.0)).fit(X, 50 + 100 * p)
    pred = model.predict(X)
    assert np.all((pred >= 50) & (pred <= 150))
    # without y_bounds the targets outside [0, 1] are clipped into it, silently (totality:
    # never refused, and a warning would tell whether one target is outside)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw = dperm.DPGLMRegressor(epsilon=1.0, random_state=0).fit(X, 50 + 100 * p)
    ones = dperm.DPGLMRegressor(epsilon=1.0, random_state=0).fit(X, np.ones_like(p))
    np.testing.assert_array_equal(raw.coef_, ones.coef_)  # every raw target is above 1: clipped to 1


def test_raw_targets_beyond_label_bound_are_clipped_silently():
    X, y, _ = linear_data(n=2000, d=3)
    raw = 200.0 + 100.0 * y
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would tell whether one target is beyond label_bound
        model = dperm.DPLinearRegression(epsilon=1.0, random_state=0).fit(X, raw)
    clipped = dperm.DPLinearRegression(epsilon=1.0, random_state=0).fit(X, np.clip(raw, -1.0, 1.0))
    np.testing.assert_array_equal(model.coef_, clipped.coef_)


@pytest.mark.parametrize("bad", [(1.0,), (2.0, 1.0), (0.0, float("inf")), "ab", (1.0, 1.0)])
def test_bad_y_bounds_are_refused(bad):
    X, y, _ = linear_data(n=100, d=3)
    with pytest.raises(ValueError, match="y_bounds"):
        dperm.DPLinearRegression(y_bounds=bad).fit(X, y)


def test_noise_dominates_warning_from_public_inputs_only():
    X, y, _ = linear_data(n=300, d=10)
    with pytest.warns(dperm.NoiseDominatesWarning, match="likely dominate"):
        dperm.DPLinearRegression(epsilon=0.1, random_state=0).fit(X, y)
    # the same public inputs, other targets: the same message (it reads no data)
    msgs = []
    for target in (y, -y, np.zeros_like(y) + 0.5):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dperm.DPLinearRegression(epsilon=0.1, random_state=0).fit(X, target)
        msgs.append([str(w.message) for w in caught if issubclass(w.category, dperm.NoiseDominatesWarning)])
    assert msgs[0] == msgs[1] == msgs[2] and msgs[0]
    X, y, _ = linear_data(n=20000, d=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dperm.NoiseDominatesWarning)
        dperm.DPLinearRegression(epsilon=1.0, random_state=0).fit(X, y)


@pytest.mark.parametrize("params", [{"y_bounds": (-3.0, 5.0)}, {"solver": "adassp"},
                                    {"solver": "sufficient_statistics"}])
def test_estimator_on_neighbours_releases_the_same_attributes(params):
    from test_release import _estimator_release, neighbours

    (X, y), (X2, y2) = neighbours("huber")
    fitted = []
    for A, b in ((X, y), (X2, y2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = dperm.DPLinearRegression(epsilon=1.0, random_state=5, **params).fit(A, b)
        out = _estimator_release(model)
        for f in out.get("fits_", []):
            f["info"].pop("ridge", None)  # adassp: a post-processing of its eigenvalue release
            f["summary"]["info"].pop("ridge", None)
        fitted.append(out)
    assert repr(fitted[0]) == repr(fitted[1])


@pytest.mark.parametrize("cls, kwargs, warns", [
    (dperm.DPRobustRegressor, {"label_bound": 300.0}, True),
    (dperm.DPHuberRegressor, {"label_bound": 300.0}, True),
    (dperm.DPHuberRegressor, {"label_bound": 300.0, "threshold": 200.0}, False),
    (dperm.DPLinearRegression, {"label_bound": 300.0}, False),  # its threshold is label_bound
    (dperm.DPRobustRegressor, {"label_bound": 300.0, "y_bounds": (0, 300)}, False),
])
def test_raw_targets_against_a_robust_loss_scale_warn(cls, kwargs, warns):
    X, y, _ = linear_data(n=20000, d=3)
    raw = 150.0 + 100.0 * y
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(epsilon=4.0, random_state=0, **kwargs).fit(X, raw)
    hits = [w for w in caught if "loss's scale" in str(w.message)]
    assert bool(hits) == warns
    for w in hits:
        assert "y_bounds" in str(w.message) and f"{raw.mean():.3g}" not in str(w.message)
