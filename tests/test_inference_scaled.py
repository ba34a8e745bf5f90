"""Least squares' scaled Huber inference fit (dperm.inference.scaled): the residual
scale's sensitivity held and attained, the output law of the whole mechanism on a worst
pair along its trajectory against the accountant, the plan and its calibration, the
estimator's options and their errors before any charge, and the estimand against OLS
(docs/inference.md)."""

import math
import warnings

import numpy as np
import pytest

import dperm
from dperm.inference import mechanism as mech
from dperm.inference import scaled
from dperm.privacy import BudgetAccountant, PrivacyBudget
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.problem import ERMProblem

from _event_checks import check_event_accounting, gdp_mu, phases
from _replay import check_trajectory, hockey_stick, record_events, replay_on_neighbour
from test_inference import _ball, _linear


# ------------------------------------------------------------------ the residual scale's sensitivity
class _Recorder:
    """A stand-in for the release: keeps the value released (in noise units) and adds no noise."""

    def __init__(self):
        self.values = []

    def __call__(self, rng, value, event):
        self.values.append(np.array(value))
        return np.array(value)


def _scale_statistic(problem, w, monkeypatch):
    """The statistic the scale release adds its noise to, in units of C / n (its sensitivity)."""
    recorder = _Recorder()
    monkeypatch.setattr(scaled, "release", recorder)
    event = type("E", (), {"sigma": 1.0})()
    scaled._scale_release(problem, w, event, None)
    return float(recorder.values[-1][0])


def test_residual_scale_sensitivity_attained_by_a_far_row_and_held_on_random_neighbours(monkeypatch):
    """The mean of ``s_i min(|y_i - <w, x_i>|, C)`` moves by at most C / n when one row (or one
    weight) is replaced, ``C = min(B + R ||w||, 2 B)``: attained by a row with residual 0
    replaced by one beyond C; never exceeded on random neighbours (rows, targets, weights)."""
    n, B = 10, 1.5
    rng = np.random.default_rng(0)
    X = _ball(rng, n, 2) * 0.9
    y = rng.uniform(-B, B, n)
    w = np.array([2.0, -1.0])  # R ||w|| > B: C = 2 B
    X[0], y[0] = 0.0, 0.0  # residual 0
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = w / np.linalg.norm(w), -B  # residual -B - ||w|| beyond C
    P, Q = (ERMProblem(A, t, "squared", label_bound=B) for A, t in ((X, y), (X2, y2)))
    shift = abs(_scale_statistic(P, w, monkeypatch) - _scale_statistic(Q, w, monkeypatch))
    assert shift == pytest.approx(1.0, rel=1e-12)  # C / n exactly, in its units
    worst = 0.0
    for trial in range(200):
        d = 1 + trial % 3
        X = _ball(rng, n, d)
        y = rng.uniform(-B, B, n)
        s = rng.uniform(0, 1, n) if trial % 2 else None
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = _ball(rng, 1, d)[0], rng.uniform(-B, B)
        s2 = None if s is None else np.where(np.arange(n) == 0, rng.uniform(), s)
        w = rng.normal(size=d) * rng.uniform(0, 4)
        P = ERMProblem(X, y, "squared", label_bound=B, sample_weight=s)
        Q = ERMProblem(X2, y2, "squared", label_bound=B, sample_weight=s2)
        worst = max(worst, abs(_scale_statistic(P, w, monkeypatch) - _scale_statistic(Q, w, monkeypatch)))
    assert 0.3 < worst <= 1.0 + 1e-12


# ------------------------------------------------------------------ the output law
def test_scaled_output_law_on_a_worst_pair_along_its_trajectory_is_within_the_certificate(monkeypatch):
    """Run D with a seed, then D' made to draw the same outputs, so that both walk the same
    public points (the pilot, the threshold, the Huber iterates). Given the outputs so far
    each release is a Gaussian of its event's sigma, so the output law of D against D' is
    N(0, 1) against N(m, 1), m^2 the sum of the squared shifts in noise units: every shift
    is within its release's declared sensitivity, m is within the event's mu, and the
    hockey stick at the certified epsilon, integrated, is at most delta. The pair: rows e1
    with targets B and 0.2, row 0 the zero row with target 0 (residual 0) replaced by e1
    with target -B (a residual beyond the scale release's clip C: its sensitivity attained)."""
    n, B = 8, 1.0
    X = np.zeros((n, 2))
    X[:, 0] = 1.0
    X[0] = 0.0
    X2 = X.copy()
    X2[0] = [1.0, 0.0]
    y = np.full(n, B)
    y[1::2] = 0.2
    y[0] = 0.0
    y2 = y.copy()
    y2[0] = -B
    budget = PrivacyBudget(1.0, 1e-5)
    P, Q = (ERMProblem(A, t, "squared", label_bound=B) for A, t in ((X, y), (X2, y2)))
    fit, other, runs = replay_on_neighbour(monkeypatch, (mech, scaled),
                                           lambda: scaled.scaled_huber_inference(P, budget, rng=0),
                                           lambda: scaled.scaled_huber_inference(Q, budget, rng=0))
    np.testing.assert_array_equal(fit.coef, other.coef)  # the same outputs: the same public path
    leaves = [r for r, _ in phases(fit.event)]
    shifts, m, mu = check_trajectory(runs, leaves, fit, budget)
    assert 0.85 * leaves[2].sensitivity < shifts[2] * leaves[2].sigma  # the scale's, nearly attained
    assert 0.3 * mu < m
    assert hockey_stick(mu, 0.95 * fit.privacy_spent.epsilon) > budget.delta


def test_event_is_calibrated_and_releases_follow_the_plan(monkeypatch):
    """One composed Gaussian event at the budget's mu: the pilot's gradient and Gram, the
    scale, T Huber gradients and Hessians, the sandwich's M, with the plan's shares; the
    releases are drawn in that order of leaves (pilot Gram, pilot gradient, scale, then per
    step the Hessian, M at the last, the gradient)."""
    rng = np.random.default_rng(0)
    X, y, _ = _linear(400, 3, rng)
    P = ERMProblem(X, np.clip(y / 4, -1, 1), "squared", label_bound=1.0)
    budget = PrivacyBudget(0.7, 1e-5)
    calls = record_events(monkeypatch, (mech, scaled))
    fit = scaled.scaled_huber_inference(P, budget, rng=1)
    check_event_accounting(fit, budget, independent=False)
    assert gdp_mu(fit.event) == pytest.approx(gaussian_dp_mu(0.7, 1e-5), rel=1e-3)
    leaves = [r for r, c in phases(fit.event)]
    T = scaled.DEFAULT_SCALED_STEPS
    assert len(leaves) == 3 + 2 * T + 1
    shares = np.array([(r.sensitivity / r.sigma) ** 2 for r in leaves])
    shares /= shares.sum()
    huber = mech.schedule("huber", T, None, None, "sandwich")
    rest = 1 - sum(scaled.PILOT_SHARES) - scaled.SCALE_SHARE
    expected = [*scaled.PILOT_SHARES, scaled.SCALE_SHARE] + [rest * s for s in (*huber.gradient_weights,
                                                                                *huber.hessian_weights,
                                                                                huber.meat_weight)]
    np.testing.assert_allclose(shares, expected, rtol=1e-6)
    order = [leaves[1], leaves[0], leaves[2]]
    for k in range(T):
        order += [leaves[3 + T + k]] + ([leaves[-1]] if k == T - 1 else []) + [leaves[3 + k]]
    assert calls == order
    assert fit.hyperparameters["meat_share"] == pytest.approx(rest * huber.meat_weight)


# ------------------------------------------------------------------ the estimand and the surface
def _ols(X, y):
    """OLS with an intercept (first): coefficients and the classical standard errors."""
    design = np.column_stack([np.ones(len(y)), X])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    s2 = float(np.sum((y - design @ coef) ** 2)) / (len(y) - design.shape[1])
    return coef, np.sqrt(s2 * np.diag(np.linalg.inv(design.T @ design)))


def _against_ols(errors, X, epsilon=8.0):
    y = X @ np.array([2.0, -1.0]) + 0.5 + errors
    params, bse = _ols(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = dperm.DPLinearRegression(epsilon=epsilon, y_bounds=(-12, 12), inference={"method": "scaled_huber"},
                                       random_state=0).fit(X, y)
    gap = reg.inference_.params - params
    return gap, 3.0 * np.hypot(bse, reg.bse_), reg.bse_ / bse


def test_symmetric_errors_give_the_ols_coefficients():
    """With symmetric heavy-tailed errors (t_3, unit variance) the scaled fit estimates the
    coefficients OLS estimates: on the same data (n = 40000, epsilon 8) within 3 standard
    errors of the difference, and its standard errors close to OLS's."""
    rng = np.random.default_rng(7)
    X = _ball(rng, 40000, 2)
    gap, tolerance, ratio = _against_ols(rng.standard_t(3, 40000) / math.sqrt(3), X)
    assert np.all(np.abs(gap) < tolerance), (gap, tolerance)
    assert np.all(ratio < 2.0)


def _huber_location_of_centred_exponential(c):
    """m with E psi_c(e - m) = 0 for e ~ Exp(1) - 1, by quadrature."""
    from scipy import integrate
    from scipy.optimize import brentq

    def score(m):
        return integrate.quad(lambda e: np.clip(e - m, -c, c) * np.exp(-(e + 1.0)), -1.0, np.inf, limit=200)[0]

    return brentq(score, -1.0, 1.0)


@pytest.mark.slow
def test_skewed_errors_move_the_intercept_only_slow():
    """Centred exponential errors (n = 1e6, epsilon 8): the slopes agree with OLS's; the
    intercept is the errors' Huber location at c = 3 sigma_hat, sigma_hat = sqrt(pi / 2) E|e|
    (the normal-consistent scale: 0.92 sigma here, so c = 2.77 sigma), 0.0237 below their
    mean (the documented difference), which OLS's 0 misses."""
    c = 3.0 * math.sqrt(0.5 * math.pi) * 2.0 / math.e  # E|e| = 2 / e for Exp(1) - 1
    shift = _huber_location_of_centred_exponential(c)
    assert shift == pytest.approx(-0.0237, abs=1e-4)
    rng = np.random.default_rng(8)
    X = _ball(rng, 1_000_000, 2)
    gap, tolerance, _ = _against_ols(rng.exponential(1.0, 1_000_000) - 1.0, X)
    assert np.all(np.abs(gap[1:]) < tolerance[1:]), (gap, tolerance)
    assert abs(gap[0] - shift) < tolerance[0] < abs(shift), (gap, tolerance)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.InferenceWarning")
def test_options_choose_the_fit_and_wrong_ones_fail_before_any_charge():
    rng = np.random.default_rng(2)
    X, y, _ = _linear(3000, 2, rng)
    for method, algorithm in (("scaled_huber", "scaled_huber_inference"),
                              ("sufficient_statistics", "newton_inference")):
        reg = dperm.DPLinearRegression(epsilon=2.0, y_bounds=(-8, 8), inference={"method": method},
                                       random_state=0).fit(X, y)
        assert reg.fits_[0].algorithm == algorithm and np.all(np.isfinite(reg.conf_int()))
    reg = dperm.DPLinearRegression(epsilon=2.0, y_bounds=(-8, 8), inference={"tuning": 2.0}, random_state=0)
    assert reg.fit(X, y).fits_[0].hyperparameters["tuning"] == 2.0
    ledger = BudgetAccountant(1.0, 1e-5)
    bad = [(dperm.DPLinearRegression, {"method": "bootstrap"}, "inference method"),
           (dperm.DPLinearRegression, {"method": "sufficient_statistics", "tuning": 2.0}, "tuning"),
           (dperm.DPLinearRegression, {"method": "scaled_huber", "covariance": "model"}, "sandwich"),
           (dperm.DPLinearRegression, {"method": "scaled_huber", "tuning": -1.0}, "tuning"),
           (dperm.DPHuberRegressor, {"method": "scaled_huber"}, "least squares"),
           (dperm.DPHuberRegressor, {"tuning": 2.0}, "least squares")]
    for cls, options, match in bad:
        with pytest.raises(ValueError, match=match):
            cls(inference=options, y_bounds=(-8, 8), accountant=ledger).fit(X, y)
    with pytest.raises(ValueError, match="least squares"):
        dperm.DPLogisticRegression(classes=[0, 1], inference={"method": "scaled_huber"}, accountant=ledger).fit(
            X, (y > 0.5).astype(int))
    assert len(ledger.events) == 0


def test_summary_names_the_fit_and_the_record_holds_the_residual_variance():
    from dperm.inference.records import inference_record, prediction_intervals

    rng = np.random.default_rng(3)
    X, y, _ = _linear(20000, 2, rng)
    reg = dperm.DPLinearRegression(epsilon=2.0, y_bounds=(-8, 8), inference={"method": "scaled_huber"},
                                   random_state=1).fit(X, y)
    text = reg.summary()
    assert "Huber fit at 3 private residual scales" in text and "released for the intervals only" in text
    record = inference_record(reg)
    assert 0.8 < record["residual_variance"] < 1.5  # N(0, 1) errors, in the target's units
    lower, upper = prediction_intervals(record, X[:2000], 0.9)
    inside = np.mean((lower <= y[:2000]) & (y[:2000] <= upper))
    assert 0.87 < inside < 0.95
