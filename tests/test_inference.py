"""The inference fit (dperm.inference): its releases' sensitivities held and attained,
the output law of the whole mechanism on a worst-case pair against the accountant, the
calibration, the coefficient table and its surfaces (estimators, pipeline), the refusals,
and the coverage of the intervals (docs/inference.md)."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import binom, norm

import dperm
from dperm.algorithms import newton as nt
from dperm.inference import mechanism as mech
from dperm.inference import InferenceWarning
from dperm.privacy import BudgetAccountant, PrivacyBudget
from dperm.privacy.gaussian_dp import gaussian_dp_mu
from dperm.problem import ERMProblem

from _event_checks import check_event_accounting, gdp_mu, phases
from _first_principles import integration_grid, symmetric_hockey_stick
from _replay import check_trajectory, record_events, replay_on_neighbour


def _ball(rng, n, d):
    z = rng.standard_normal((n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return z * rng.uniform(size=(n, 1)) ** (1.0 / d)


def _linear(n, d, rng, noise=1.0, intercept=0.5):
    X = _ball(rng, n, d)
    w = 3.0 * np.linspace(1, -1, d) / np.linalg.norm(np.linspace(1, -1, d)) if d > 1 else np.array([3.0])
    return X, X @ w + intercept + noise * rng.standard_normal(n), np.concatenate(([intercept], w))


def _logistic(n, d, rng, intercept=0.5):
    X, _, truth = _linear(n, d, rng, noise=0.0, intercept=intercept)
    eta = X @ truth[1:] + intercept
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int), truth


# ------------------------------------------------------------------ sensitivities
def test_gradient_outer_product_sensitivity_attained_by_orthogonal_rows():
    """Squared loss at w = 0, |y| = B: per-example gradients of norm R B; rows e1 and e2
    make ``||M(D) - M(D')||_F = sqrt(2) (R B)^2 / n``, the released unit."""
    n, B = 6, 2.0
    X = np.zeros((n, 3))
    X[:, 0] = 1.0
    X2 = X.copy()
    X2[0] = [0.0, 1.0, 0.0]
    y = np.full(n, B)
    P, Q = (ERMProblem(A, y, "squared", label_bound=B) for A in (X, X2))
    w = np.zeros(3)
    dM = mech._gradient_outer(P, w) - mech._gradient_outer(Q, w)
    lipschitz = 0.5 * n * nt.gradient_bound(P, w)
    assert lipschitz == pytest.approx(B)
    assert np.linalg.norm(dM) == pytest.approx(math.sqrt(2.0) * lipschitz ** 2 / n, rel=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "huber", "squared"])
def test_gradient_outer_product_sensitivity_holds_on_random_neighbours(loss):
    rng = np.random.default_rng(3)
    n, d, worst = 15, 3, 0.0
    for trial in range(60):
        X = _ball(rng, n, d)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss == "logistic" else rng.uniform(-1, 1, n)
        X2, y2 = X.copy(), y.copy()
        X2[0] = _ball(rng, 1, d)[0] * (0.0 if trial % 5 == 0 else 1.0)
        y2[0] = -y[0]
        P, Q = (ERMProblem(A, t, loss) for A, t in ((X, y), (X2, y2)))
        w = rng.normal(size=d) * rng.uniform(0, 3)
        unit = math.sqrt(2.0) * (0.5 * n * nt.gradient_bound(P, w)) ** 2 / n
        worst = max(worst, np.linalg.norm(mech._gradient_outer(P, w) - mech._gradient_outer(Q, w)) / unit)
    assert 0.05 < worst <= 1.0 + 1e-9


def test_softmax_sensitivities_hold_on_random_neighbours_and_are_nearly_attained():
    """The reference-class softmax's mean gradient (2 sqrt 2 D / n) and mean Hessian
    (Frobenius sqrt 2 D^2 / (2 n)) at random points on random neighbours: never above,
    and nearly attained (orthogonal rows, the class moved, scores that put p near
    (1/2, 1/2, 0) for the Hessian and near a wrong class for the gradient)."""
    from dperm.algorithms.newton import hessian_frobenius_sensitivity
    from dperm.inference.softmax import ReferenceSoftmax
    from dperm.problem.multinomial import MultinomialProblem

    rng = np.random.default_rng(4)
    n, d, K = 12, 3, 3
    worst_g = worst_h = 0.0
    for trial in range(80):
        X = _ball(rng, n, d)
        y = rng.integers(0, K, n)
        X2, y2 = X.copy(), y.copy()
        X2[0] = _ball(rng, 1, d)[0]
        y2[0] = (y[0] + 1 + trial % 2) % K
        if trial % 4 == 0:  # unit rows, orthogonal
            X[0], X2[0] = np.eye(d)[0], np.eye(d)[1]
        P, Q = (ReferenceSoftmax(MultinomialProblem(A, t, K)) for A, t in ((X, y), (X2, y2)))
        w = rng.normal(size=P.n_features) * rng.uniform(0, 8)
        worst_g = max(worst_g, np.linalg.norm(P.loss_gradient(w) - Q.loss_gradient(w)) / P.gradient_scale(w))
        worst_h = max(worst_h, np.linalg.norm(mech._loss_hessian(P, w) - mech._loss_hessian(Q, w))
                      / hessian_frobenius_sensitivity(P))
    assert 0.6 < worst_g <= 1.0 + 1e-9 and 0.6 < worst_h <= 1.0 + 1e-9
    # the Hessian is that of the loss: finite differences of the gradient
    w = rng.normal(size=P.n_features)
    numeric = np.column_stack([(P.loss_gradient(w + 1e-6 * e) - P.loss_gradient(w - 1e-6 * e)) / 2e-6
                               for e in np.eye(P.n_features)])
    np.testing.assert_allclose(P.hessian(w), numeric, atol=1e-7)


# ------------------------------------------------------------------ the output law
def test_one_step_squared_loss_output_law_on_the_worst_pair_is_within_the_certificate():
    """The squared loss's inference fit (one step from 0) releases, non-adaptively, X^T y /
    n, the triangle of X^T X / n and the mean of y^2 at w = 0, each with its Gaussian. On the
    pair that attains every sensitivity at once (rows e1 -> e2 with y = B -> -B) the
    output law is a product of Gaussians whose privacy loss is that of N(0, 1) against
    N(m, 1), m^2 = sum_k (||q_k(D) - q_k(D')|| / sigma_k)^2: integrated on a grid, its
    hockey stick at the certified epsilon is at most delta."""
    n, B = 8, 1.0
    X = np.zeros((n, 2))
    X[:, 0] = 1.0
    X2 = X.copy()
    X2[0] = [0.0, 1.0]
    y = np.full(n, B)
    y2 = y.copy()
    y2[0] = -B
    budget = PrivacyBudget(1.0, 1e-5)
    P, Q = (ERMProblem(A, t, "squared", label_bound=B) for A, t in ((X, y), (X2, y2)))
    fit = mech.newton_inference(P, budget, rng=0)
    (grad, _), (hess, _), (var, _) = phases(fit.event)
    w = np.zeros(2)
    scale = nt.gradient_bound(P, w)
    shifts = [np.linalg.norm(P.loss_gradient(w) - Q.loss_gradient(w)) / scale / grad.sigma,
              np.linalg.norm(mech._upper(nt._loss_hessian(P, w)) - mech._upper(nt._loss_hessian(Q, w))) / hess.sigma,
              abs(np.mean(y ** 2) - np.mean(y2 ** 2)) / (B * B / n) / var.sigma]
    m = math.sqrt(sum(s * s for s in shifts))
    mu = math.sqrt(sum((r.sensitivity / r.sigma) ** 2 for r, _ in phases(fit.event)))
    # within the sensitivities the event declares (the gradient's and the Hessian's worst
    # pairs differ: x' = -x moves X^T y most and X^T X not at all), and close to them
    assert 0.7 * mu < m <= mu * (1 + 1e-9)
    for shift in (m, mu):  # the pair's law, and the worst law the event allows
        grid = integration_grid([0.0, shift], 1.0)
        cell = grid[1] - grid[0]
        p, q = norm.pdf(grid), norm.pdf(grid, loc=shift)
        assert symmetric_hockey_stick(p, q, fit.privacy_spent.epsilon, cell) <= budget.delta * (1 + 1e-3)
    # the certificate is tight for the worst law: a little less epsilon is not enough
    assert symmetric_hockey_stick(p, q, 0.95 * fit.privacy_spent.epsilon, cell) > budget.delta


def _softmax_pair(X, X2, n):
    from dperm.inference.softmax import ReferenceSoftmax
    from dperm.problem.multinomial import MultinomialProblem

    y = np.arange(n) % 3
    y2 = y.copy()
    y2[0] = 1
    return (ReferenceSoftmax(MultinomialProblem(A, t, 3)) for A, t in ((X, y), (X2, y2)))


@pytest.mark.parametrize("model,floor", [("logistic", 0.35), ("multinomial", 0.15)])
def test_newton_output_law_on_a_worst_pair_along_its_trajectory_is_within_the_certificate(monkeypatch, model,
                                                                                          floor):
    """The logistic inference fits (10 adaptive steps, the default model covariance;
    binary, and the multinomial with a reference class): on a pair whose replaced row is
    orthogonal and of another label, run D with a seed, then D' made to draw the same
    outputs (so both walk the same public points w_k). Given the outputs so far each
    release is a Gaussian of its event's sigma, so along the trajectory the output law of
    D against D' is N(0, 1) against N(m, 1), m^2 the sum of the squared shifts in noise
    units: every shift is within its release's sensitivity, and the hockey stick at the
    certified epsilon, integrated, is at most delta."""
    n = 8
    X = np.zeros((n, 2))
    X[:, 0] = 1.0
    X2 = X.copy()
    X2[0] = [0.0, 1.0]
    y = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    y2 = y.copy()
    y2[0] = -y[0]
    budget = PrivacyBudget(1.0, 1e-5)
    if model == "logistic":
        P, Q = (ERMProblem(A, t, "logistic") for A, t in ((X, y), (X2, y2)))
    else:
        P, Q = _softmax_pair(X, X2, n)
    fit, _, runs = replay_on_neighbour(monkeypatch, (mech,), lambda: mech.newton_inference(P, budget, rng=0),
                                       lambda: mech.newton_inference(Q, budget, rng=0))
    _, m, mu = check_trajectory(runs, [r for r, _ in phases(fit.event)], fit, budget)
    assert floor * mu < m


@pytest.mark.parametrize("loss,covariance,count,pld", [("logistic", "sandwich", 10 + 10 + 1, True),
                                                       ("logistic", "model", 20, False), ("squared", None, 3, True),
                                                       ("huber", None, 21, False)])
def test_event_is_calibrated_and_releases_follow_the_plan(loss, covariance, count, pld):
    rng = np.random.default_rng(0)
    X, y, _ = _linear(300, 3, rng)
    if loss == "logistic":
        y = np.where(y > 0.5, 1.0, -1.0)
    P = ERMProblem(X, np.clip(y, -4, 4), loss, label_bound=4.0 if loss != "logistic" else 1.0)
    budget = PrivacyBudget(0.7, 1e-5)
    fit = mech.newton_inference(P, budget, rng=1, covariance=covariance)
    check_event_accounting(fit, budget, independent=pld)  # dp-accounting's PLD too (slow: two cases)
    assert gdp_mu(fit.event) == pytest.approx(gaussian_dp_mu(0.7, 1e-5), rel=1e-3)
    leaves = phases(fit.event)
    assert len(leaves) == count and all(c == 1 for _, c in leaves)
    shares = [(r.sensitivity / r.sigma) ** 2 for r, _ in leaves]
    shares = np.array(shares) / sum(shares)
    plan = mech.schedule(loss, None, None, None, fit.hyperparameters["covariance"])
    expected = list(plan.gradient_weights) + list(plan.hessian_weights) + ([plan.meat_weight] if plan.meat_weight else [])
    np.testing.assert_allclose(shares, expected, rtol=1e-6)


def test_every_release_goes_through_its_event(monkeypatch):
    calls = record_events(monkeypatch, (mech,))
    rng = np.random.default_rng(1)
    X, y, _ = _logistic(400, 2, rng)
    P = ERMProblem(X, np.where(y > 0, 1.0, -1.0), "logistic")
    fit = mech.newton_inference(P, PrivacyBudget(1.0, 1e-5), rng=0, steps=3, covariance="sandwich")
    leaves = [r for r, _ in phases(fit.event)]
    # per step: the Hessian, then (last step) the outer product, then the gradient
    assert calls == [leaves[3], leaves[0], leaves[4], leaves[1], leaves[5], leaves[6], leaves[2]]


@pytest.mark.filterwarnings("ignore::dperm.exceptions.InferenceWarning")
def test_charged_before_the_data_and_refusals_before_any_charge(monkeypatch):
    rng = np.random.default_rng(2)
    X, y, _ = _linear(200, 2, rng)
    ledger = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="delta > 0"):
        mech.newton_inference(ERMProblem(X, np.clip(y, -1, 1), "squared"), PrivacyBudget(1.0, 0.0))
    with pytest.raises(ValueError, match="unregularized"):
        mech.newton_inference(ERMProblem(X, np.clip(y, -1, 1), "squared", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5))
    with pytest.raises(ValueError, match="not one-vs-rest"):
        dperm.DPLogisticRegression(classes=[0, 1, 2], multi_class="ovr", inference=True, accountant=ledger).fit(
            X, np.arange(200) % 3)
    with pytest.raises(ValueError, match="unconstrained"):
        dperm.DPLogisticRegression(classes=[0, 1, 2], inference=True, constraint=("l2_ball", 5.0),
                                   accountant=ledger).fit(X, np.arange(200) % 3)
    with pytest.raises(ValueError, match="inference options"):
        dperm.DPLinearRegression(inference={"bogus": 1}, accountant=ledger).fit(X, np.clip(y, -1, 1))
    with pytest.raises(ValueError, match="unconstrained"):
        dperm.DPLinearRegression(inference=True, constraint=("l2_ball", 1.0), accountant=ledger).fit(
            X, np.clip(y, -1, 1))
    assert len(ledger.events) == 0

    def must_not_read(*args, **kwargs):
        raise AssertionError("the data was read before the accountant refused")

    monkeypatch.setattr(mech, "_loss_hessian", must_not_read)
    small = BudgetAccountant(0.5, 1e-5)
    with pytest.raises(dperm.privacy.budget.BudgetExceededError):
        dperm.DPLinearRegression(epsilon=1.0, inference=True, y_bounds=(-5, 5), accountant=small).fit(X, y)


def test_unseeded_fit_takes_the_secure_sampler():
    rng = np.random.default_rng(4)
    X, y, _ = _linear(3000, 2, rng)
    reg = dperm.DPLinearRegression(epsilon=4.0, y_bounds=(-8, 8), inference=True).fit(X, y)
    assert all(r.secure for r, _ in phases(reg.event_))
    assert np.all(np.isfinite(reg.conf_int()))


# ------------------------------------------------------------------ the surfaces
def test_estimator_surface_intercept_first_units_and_summary():
    rng = np.random.default_rng(5)
    X, y, truth = _linear(20000, 2, rng)
    reg = dperm.DPLinearRegression(epsilon=4.0, y_bounds=(-8, 8), inference=True, random_state=0).fit(X, y)
    ci = reg.conf_int(0.05)
    assert ci.shape == (3, 2) and reg.bse_.shape == (3,) and reg.pvalues_.shape == (3,)
    params = np.concatenate(([reg.intercept_], reg.coef_))
    np.testing.assert_allclose(reg.inference_.params, params)
    np.testing.assert_allclose(ci.mean(axis=1), params)
    # in the original units of y (y_bounds mapped back): the interval holds OLS's estimate on
    # the same rows (here OLS's own interval misses the truth's second slope: 2.2 standard errors)
    design = np.column_stack([np.ones(len(y)), X])
    ols = np.linalg.lstsq(design, y, rcond=None)[0]
    assert np.all((ci[:, 0] < ols) & (ols < ci[:, 1]))
    assert np.all(np.abs(ols - truth) < 3 * reg.bse_)
    np.testing.assert_allclose(reg.conf_int(0.1)[:, 1] - params, norm.ppf(0.95) * reg.bse_)
    assert reg.alpha_ == 0.0 and reg.solver_ == "newton_inference"
    text = reg.summary()
    for word in ("intercept", "x0", "x1", "std err", "P>|z|", "Privacy spent: epsilon=4", "intervals only"):
        assert word in text
    assert reg.inference_spent_.epsilon < reg.privacy_spent_.epsilon
    assert reg.inference_.to_dict()["names"] == ["intercept", "x0", "x1"]
    plain = dperm.DPLinearRegression(epsilon=4.0, y_bounds=(-8, 8), random_state=0).fit(X, y)
    with pytest.raises(AttributeError, match="inference=True"):
        plain.conf_int()
    assert not hasattr(plain, "bse_")
    assert dperm.DPLogisticRegression(inference=True).get_params()["inference"] is True


def test_multinomial_surface_reference_class_names_and_agreement_with_mnlogit():
    """Three classes, class 0 the reference (its coefficients 0, as statsmodels' MNLogit):
    the table per other class (intercept, then features, named ``class:feature``), a
    large epsilon close to MNLogit's estimates, the intervals covering them, the summary's
    names and per-unit rows expanded per class."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(12)
    n, d = 6000, 2
    X = _ball(rng, n, d)
    S = np.column_stack([np.zeros(n), X @ [2.0, -1.0] + 0.3, X @ [-1.0, 1.5] - 0.2])
    P = np.exp(S) / np.exp(S).sum(1, keepdims=True)
    y = (rng.uniform(size=(n, 1)) > P.cumsum(1)).sum(1)
    clf = dperm.DPLogisticRegression(epsilon=20.0, classes=[0, 1, 2], inference=True, random_state=0).fit(X, y)
    assert clf.multi_class_ == "multinomial" and np.all(clf.coef_[0] == 0) and clf.intercept_[0] == 0
    assert clf.inference_.names == ("1:intercept", "1:x0", "1:x1", "2:intercept", "2:x0", "2:x1")
    reference = np.asarray(sm.MNLogit(y, sm.add_constant(X)).fit(disp=0).params).T.ravel()
    np.testing.assert_allclose(clf.inference_.params, reference, atol=0.25)
    ci = clf.conf_int()
    assert np.all((ci[:, 0] < reference) & (reference < ci[:, 1]))
    np.testing.assert_allclose(clf.inference_.params[[1, 2, 4, 5]], clf.coef_[1:].ravel())
    text = clf.summary(names=["age", "hours"], per_unit={"age": 10.0})
    assert "2:hours" in text and text.count("2:age") == 2 and "1:age" in text


def test_huber_and_logistic_without_intercept_and_with_frame_names():
    import pandas as pd

    rng = np.random.default_rng(6)
    X, y, truth = _logistic(20000, 2, rng, intercept=0.0)
    frame = pd.DataFrame(X, columns=["age", "income"])
    clf = dperm.DPLogisticRegression(epsilon=4.0, classes=[0, 1], fit_intercept=False, inference=True,
                                     random_state=0).fit(frame, y)
    assert clf.inference_.names == ("age", "income") and clf.conf_int().shape == (2, 2)
    hub = dperm.DPHuberRegressor(epsilon=4.0, y_bounds=(-8, 8), inference=True, random_state=0).fit(
        X, X @ truth[1:] + 0.5 + rng.standard_normal(20000))
    assert hub.inference_.method.startswith("noisy Newton") and "sandwich" in hub.inference_.method
    assert np.all(np.isfinite(hub.conf_int()))


def test_pipeline_summary_names_and_per_unit_rows():
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 20000
    age, hours = rng.uniform(20, 70, n), rng.uniform(10, 60, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.04 * (age - 45) - 0.05 * (hours - 35))))).astype(int)
    frame = pd.DataFrame({"age": age, "hours": hours})
    pipe = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1], inference=True), epsilon=4.0,
                               bounds={"age": (20, 70), "hours": (10, 60)}, row_norm="none",
                               missing_indicator=False, random_state=0).fit(frame, y)
    text = pipe.summary()
    assert "age" in text and "Per unit of the original column" in text and "the whole pipeline" in text
    ci = pipe.conf_int()
    per_unit = pipe[-1].inference_.rescaled({"x0": 25.0}).conf_int()  # the model sees age as x0
    np.testing.assert_allclose(per_unit[0], ci[1] / 25.0)
    assert per_unit[0, 0] < 0.04 < per_unit[0, 1]  # the truth per year of age


def test_refusal_is_infinite_and_warned_and_the_public_outlook_warns():
    rng = np.random.default_rng(8)
    X, y, _ = _logistic(300, 5, rng)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = dperm.DPLogisticRegression(epsilon=0.5, classes=[0, 1], inference=True, random_state=0).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, InferenceWarning)]
    assert any("likely be refused" in m for m in messages)  # public inputs, before the data
    assert clf.inference_.refused and any("refused (infinite)" in m for m in messages)
    assert np.all(np.isinf(clf.conf_int())) and np.all(clf.pvalues_ == 1.0)
    assert "REFUSED" in clf.summary()


# ------------------------------------------------------------------ coverage
def _coverage_counts(kind, n, d, epsilon, reps, seed, method="auto", bound=8.0):
    hits, width = np.zeros(d + 1), []
    for r in range(reps):
        rng = np.random.default_rng([seed, r])
        if kind == "linear":
            X, y, truth = _linear(n, d, rng)
            est = dperm.DPLinearRegression(epsilon=epsilon, y_bounds=(-bound, bound), inference={"method": method},
                                           random_state=r)
        else:
            X, y, truth = _logistic(n, d, rng)
            est = dperm.DPLogisticRegression(epsilon=epsilon, classes=[0, 1], inference=True, random_state=r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = est.fit(X, y).conf_int(0.05)
        assert not est.inference_.refused
        hits += (ci[:, 0] <= truth) & (truth <= ci[:, 1])
        width.append(ci[:, 1] - ci[:, 0])
    return hits, np.mean(width, axis=0)


def _lowest_acceptable(reps, claimed=0.93, level=1e-3):
    """The smallest count of covering intervals that a coverage of ``claimed`` produces
    with probability at least 1 - level (Binomial(reps, claimed)); fewer refutes the claim."""
    return int(binom.ppf(level, reps, claimed))


@pytest.mark.parametrize("kind,method,bound", [("linear", "auto", 16.0), ("linear", "sufficient_statistics", 8.0),
                                               ("logistic", "auto", None)])
def test_coverage_of_the_nominal_95_percent_interval(kind, method, bound):
    """Seeded datasets (n = 2000, d = 2, epsilon = 4; 120 linear (least squares' default,
    the scaled Huber fit, at B / sigma 16, and the sufficient statistics at 8), 80
    logistic): every coefficient's interval
    covers the truth at least as often as a 93% coverage would (binomial tolerance at
    level 1e-3); the privacy noise is a large part of the width there, so an interval
    without it would fail (a width check rules out a vacuous pass)."""
    reps = 120 if kind == "linear" else 80
    hits, width = _coverage_counts(kind, 2000, 2, 4.0, reps, seed=31, method=method, bound=bound)
    assert np.all(hits >= _lowest_acceptable(reps)), hits
    assert np.all(width < 2.0), width


@pytest.mark.slow
@pytest.mark.parametrize("kind,d,epsilon,method", [("linear", 5, 1.0, "scaled_huber"),
                                                   ("linear", 5, 1.0, "sufficient_statistics"),
                                                   ("logistic", 5, 1.0, "auto"), ("linear", 10, 4.0, "scaled_huber"),
                                                   ("logistic", 2, 0.5, "auto")])
def test_coverage_at_n_10000_slow(kind, d, epsilon, method):
    reps = 400
    hits, _ = _coverage_counts(kind, 10000, d, epsilon, reps, seed=32, method=method)
    assert np.all(hits >= _lowest_acceptable(reps)), hits


# ------------------------------------------------------------------ the F test
def test_f_test_is_the_wald_statistic_of_the_table_and_refusals_never_reject():
    rng = np.random.default_rng(21)
    X, y, _ = _linear(3000, 3, rng)
    reg = dperm.DPLinearRegression(epsilon=4.0, y_bounds=(-8, 8), inference=True, random_state=0).fit(X, y)
    table = reg.inference_
    result = reg.f_test()
    b, C = table.params[1:], table.covariance[1:, 1:]
    assert result["names"] == ("x0", "x1", "x2") and result["df_num"] == 3
    assert result["wald"] == pytest.approx(float(b @ np.linalg.solve(C, b)), rel=1e-9)
    assert result["F"] == pytest.approx(result["wald"] / 3) and result["p_value"] < 1e-6  # slopes of norm 3
    one = reg.f_test(["x1"])  # one coefficient: the square of its z, the same p-value
    assert one["wald"] == pytest.approx(table.zvalues[2] ** 2, rel=1e-9)
    assert one["p_value"] == pytest.approx(table.pvalues[2], rel=1e-9)
    with pytest.raises(ValueError, match="unknown coefficient"):
        reg.f_test(["age"])
    refused = dperm.inference.CoefficientTable(("intercept", "x0"), np.array([1.0, 2.0]), np.full((2, 2), np.inf),
                                               refused=True)
    assert refused.f_test([1])["p_value"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("effect,kind", [(0.0, "size"), (0.06, "power")])
def test_f_test_size_and_power_slow(effect, kind):
    """n = 10000, d = 3, epsilon 1: under H0 (slopes 0) the 5% test rejects at most 9% of
    300 datasets; with slopes of norm 0.06 x sqrt 3 it rejects more often than that."""
    rejections, reps = 0, 300
    for r in range(reps):
        rng = np.random.default_rng([41, r])
        X = _ball(rng, 10000, 3)
        y = X @ np.full(3, effect) + 0.5 + rng.standard_normal(10000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg = dperm.DPLinearRegression(epsilon=1.0, y_bounds=(-8, 8), inference=True, random_state=r).fit(X, y)
        rejections += reg.f_test()["p_value"] < 0.05
    if kind == "size":
        assert rejections <= 0.09 * reps
    else:
        assert rejections > 0.09 * reps


def test_multinomial_record_names_per_class():
    from dperm.inference.records import inference_record

    rng = np.random.default_rng(5)
    X = _ball(rng, 3000, 2)
    y = rng.integers(0, 3, 3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = dperm.DPLogisticRegression(epsilon=8.0, classes=[0, 1, 2], inference=True, random_state=0).fit(X, y)
    record = inference_record(clf, ["a", "b"])
    assert record["names"] == ["1:intercept", "1:a", "1:b", "2:intercept", "2:a", "2:b"]
    assert len(record["coef"]) == 6 and len(record["covariance"]) == 6
