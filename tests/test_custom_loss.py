"""User-defined losses: agreement with the built-in losses they re-implement, the
declared Lipschitz bound enforced by clipping, finite-difference curvature, refusals."""

import math
import warnings

import numpy as np
import pytest

from dperm.algorithms import get
from dperm.privacy import PrivacyBudget
from dperm.problem import CustomLoss, ERMProblem

from test_algorithms import make_data, neighbours


def logistic_value(w, X, y):
    return np.logaddexp(0.0, -y * (X @ w))


def logistic_gradient(w, X, y):
    s = -y / (1.0 + np.exp(y * (X @ w)))
    return s[:, None] * np.asarray(X)


def custom_logistic(**overrides):
    spec = dict(value=logistic_value, gradient=logistic_gradient, lipschitz=1.0, smoothness=0.25,
                hessian_lipschitz=0.1, convex=True, name="my_logistic")
    spec.update(overrides)
    return CustomLoss(**spec)


def test_custom_loss_agrees_with_the_builtin():
    X, y = make_data(n=300, d=4)
    ours = ERMProblem(X, y, custom_logistic(), ("l2", 0.1))
    builtin = ERMProblem(X, y, "logistic", ("l2", 0.1))
    w = np.array([0.3, -1.0, 2.0, 0.5])
    assert ours.objective(w) == pytest.approx(builtin.objective(w), rel=1e-12)
    np.testing.assert_allclose(ours.gradient(w), builtin.gradient(w), rtol=1e-12)
    np.testing.assert_allclose(ours.per_example_gradients(w, rows=np.arange(5)), builtin.per_example_gradients(w, rows=np.arange(5)), rtol=1e-12)
    v = np.array([1.0, 0.0, -1.0, 2.0])
    np.testing.assert_allclose(ours.hessian_vector(w, v), builtin.hessian_vector(w, v), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(ours.hessian(w), builtin.hessian(w), rtol=1e-5, atol=1e-8)
    assert ours.lipschitz == builtin.lipschitz and ours.smoothness == builtin.smoothness
    assert ours.is_convex and ours.is_smooth


def test_full_batch_algorithms_run_identically_on_the_custom_twin():
    X, y = make_data(n=400, d=3)
    budget = PrivacyBudget(1.0, 1e-5)
    for name in ("dp_gd", "noisy_gd"):
        a = get(name).fit(ERMProblem(X, y, custom_logistic(), ("l2", 0.1)), budget, rng=3)
        b = get(name).fit(ERMProblem(X, y, "logistic", ("l2", 0.1)), budget, rng=3)
        np.testing.assert_allclose(a.coef, b.coef, rtol=1e-9, atol=1e-12)
        assert a.event == b.event


def test_declared_lipschitz_is_enforced_by_clipping():
    X, y = make_data(n=200, d=3)
    declared = 0.05  # far below the true sup of the logistic gradient norms
    problem = ERMProblem(X, y, custom_logistic(lipschitz=declared))
    w = np.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        grads = problem.per_example_gradients(w)
    assert np.linalg.norm(grads, axis=1).max() <= declared * (1 + 1e-12)
    # the replace-one sensitivity of the mean gradient is then within 2 L / n
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        base = problem.loss_gradient(w)
        worst = max(np.linalg.norm(base - other.loss_gradient(w)) for other in neighbours(problem, rng))
    assert worst <= problem.gradient_sensitivity() * (1 + 1e-12)


def test_a_row_whose_custom_gradient_is_not_finite_contributes_zero():
    # totality: an error here would depend on one row (docs/privacy.md, "Totality")
    X, y = make_data(n=50, d=3)

    def gradient(w, Xb, yb):
        g = logistic_gradient(w, Xb, yb)
        g[Xb[:, 0] > 0.9] = np.nan  # the user's callable fails on some rows' values
        return g

    X[7, 0] = 0.95
    problem = ERMProblem(X, y, custom_logistic(gradient=gradient))
    w = np.full(3, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads = problem.per_example_gradients(w)
    assert np.isfinite(grads).all()
    bad = X[:, 0] > 0.9
    np.testing.assert_array_equal(grads[bad], 0.0)
    np.testing.assert_allclose(grads[~bad], logistic_gradient(w, X[~bad], y[~bad]), rtol=1e-12)


def test_custom_hessian_vector_callable_is_used():
    X, y = make_data(n=100, d=3)
    calls = []

    def hvp(w, v, X, y):
        calls.append(1)
        return 2.0 * v

    problem = ERMProblem(X, y, custom_logistic(hessian_vector=hvp))
    np.testing.assert_allclose(problem.hessian_vector(np.zeros(3), np.ones(3)), 2.0 * np.ones(3))
    assert calls


def test_custom_loss_refusals():
    X, y = make_data(n=100, d=3)
    with pytest.raises(ValueError, match="lipschitz must be finite"):
        custom_logistic(lipschitz=math.inf)
    with pytest.raises(ValueError, match="smoothness"):
        custom_logistic(smoothness=-1.0)
    with pytest.raises(TypeError, match="callables"):
        custom_logistic(value=3.0)
    problem = ERMProblem(X, y, custom_logistic(gradient=lambda w, X, y: np.zeros((2, 2))))
    with pytest.raises(ValueError, match="shape"):
        problem.gradient(np.zeros(3))
    from dperm.algorithms import AssumptionError

    with pytest.raises(AssumptionError, match="compiled per-example kernels"):  # refused before any run
        get("dp_sgd").fit(ERMProblem(X, y, custom_logistic(), ("l2", 0.1)), PrivacyBudget(1.0, 1e-5), rng=0)


@pytest.mark.parametrize("name, delta", [("objective_perturbation", 1e-5), ("exponential_mechanism", 0.0), ("localization", 0.0)])
def test_algorithms_whose_accounting_needs_a_margin_loss_refuse_custom_losses(name, delta):
    # objective perturbation's Jacobian bound needs rank-one per-example Hessians; the
    # exponential mechanism's score sensitivity needs loss values bounded through the margin
    from dperm.algorithms import AssumptionError

    X, y = make_data(n=100, d=2)
    problem = ERMProblem(X, y, custom_logistic(), ("l2", 0.5), None if name != "exponential_mechanism" else ("l2_ball", 1.0))
    with pytest.raises(AssumptionError, match="margin"):
        get(name).fit(problem, PrivacyBudget(1.0, delta), rng=0)


@pytest.mark.parametrize("name", ["output_perturbation", "gd_output_perturbation", "objective_perturbation",
                                  "dp_sosp", "dp_gd_so", "dp_sgd", "dp_svrg", "dp_svrg_pp", "rrpsgd"])
def test_mechanisms_whose_guarantee_rests_on_the_loss_structure_refuse_custom_losses(name):
    """A convex, 1-smooth quadratic custom loss with its Lipschitz bound declared too low:
    clipping keeps the gradient releases' sensitivity, but not the argmin sensitivity
    2L/(n mu) (output perturbation measured at 2.1x its claim, an empirical epsilon lower
    bound of 1.39 at a claim of 1), GD's contraction, objective perturbation's Jacobian
    or a Hessian release; those mechanisms refuse custom losses before reading the data."""
    from dperm.algorithms import AssumptionError

    quadratic = CustomLoss(value=lambda w, X, y: 0.5 * (X @ w - y) ** 2,
                           gradient=lambda w, X, y: (X @ w - y)[:, None] * np.asarray(X),
                           lipschitz=0.1, smoothness=1.0, hessian_lipschitz=1e-9, convex=True, name="quadratic")
    X, y = make_data(n=100, d=3)
    reg, con = (("l2", 0.5), None) if name not in ("dp_gd_so", "dp_svrg_pp", "dp_sgd", "rrpsgd") else (None, ("l2_ball", 1.0))
    if name == "dp_sgd":
        reg = ("l2", 0.5)
    with pytest.raises(AssumptionError, match="built-in"):
        get(name).fit(ERMProblem(X, y, quadratic, reg, con), PrivacyBudget(1.0, 1e-5), rng=0)
