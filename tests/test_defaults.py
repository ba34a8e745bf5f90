"""The alpha="auto" rule: its formula, its inputs (public quantities only) and the estimators' use of it."""

import math

import numpy as np
import pytest

from dperm.defaults import CLASSIFICATION_MARGIN, auto_alpha, estimator_alpha
from dperm.estimators import DPHuberRegressor, DPLinearRegression, DPLinearSVC, DPLogisticRegression
from dperm.problem.losses import Logistic, Squared


def test_gaussian_objective_rule_has_the_documented_closed_form():
    n, d, eps, delta, D = 30_000, 110, 1.0, 1e-5, math.sqrt(2.0)
    mu = auto_alpha(n, d, eps, delta, lipschitz=D, data_norm=D)
    closed = 4.0 * D**2 * math.sqrt(math.log(1.25 / delta)) / (n * eps * CLASSIFICATION_MARGIN)
    assert mu == pytest.approx(closed, rel=1e-12)
    # free of d with the default comparator radius m sqrt(d) / D
    assert auto_alpha(n, 7, eps, delta, lipschitz=D, data_norm=D) == pytest.approx(mu, rel=1e-12)


def test_rule_shrinks_with_more_data_or_budget_and_grows_with_smaller_delta():
    base = dict(lipschitz=1.0, data_norm=1.0)
    mu = auto_alpha(1000, 10, 1.0, 1e-5, **base)
    assert auto_alpha(10_000, 10, 1.0, 1e-5, **base) == pytest.approx(mu / 10)
    assert auto_alpha(1000, 10, 10.0, 1e-5, **base) == pytest.approx(mu / 10)
    assert auto_alpha(1000, 10, 1.0, 1e-9, **base) > mu


def test_pure_dp_uses_the_l2_laplace_norm_moment():
    n, d, eps = 1000, 9, 0.5
    mu = auto_alpha(n, d, eps, 0.0, lipschitz=1.0, data_norm=1.0, target_margin=2.0)
    second = d * (d + 1) * (2.0 / eps) ** 2
    assert mu == pytest.approx(math.sqrt(2 * second) / (n * 2.0 * math.sqrt(d)))


def test_declared_radius_caps_the_comparator_and_output_form():
    n, d, eps, delta = 5000, 16, 1.0, 1e-6
    free = auto_alpha(n, d, eps, delta, lipschitz=1.0, data_norm=1.0, target_margin=1.0)
    capped = auto_alpha(n, d, eps, delta, lipschitz=1.0, data_norm=1.0, target_margin=1.0, radius=0.5)
    assert capped == pytest.approx(free * math.sqrt(d) / 0.5)
    out = auto_alpha(n, d, eps, delta, lipschitz=2.0, data_norm=1.0, target_margin=1.0, radius=1.0,
                     perturbation="output")
    first = math.sqrt(d) * 4.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert out == pytest.approx(math.sqrt(2 * 2.0 * first / n))


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(lipschitz=math.inf), "lipschitz"),
    (dict(perturbation="input"), "perturbation"),
])
def test_rule_rejects_bad_inputs(kwargs, match):
    args = dict(n_samples=100, n_features=3, epsilon=1.0, delta=1e-5, lipschitz=1.0, data_norm=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        auto_alpha(**args)


def test_estimator_alpha_picks_form_from_constraint_and_solver():
    shape = (2000, 5)
    unconstrained = estimator_alpha(Logistic(), *shape, 1.0, 1e-5, data_norm=1.0)
    assert unconstrained == pytest.approx(auto_alpha(*shape, 1.0, 1e-5, lipschitz=1.0, data_norm=1.0))
    named = estimator_alpha(Logistic(), *shape, 1.0, 1e-5, data_norm=1.0, solver="output_perturbation")
    assert named == pytest.approx(auto_alpha(*shape, 1.0, 1e-5, lipschitz=1.0, data_norm=1.0, perturbation="output"))
    ball = estimator_alpha(Squared(), *shape, 1.0, 1e-5, data_norm=1.0, label_bound=2.0, constraint=("l2_ball", 3.0))
    assert ball == pytest.approx(auto_alpha(*shape, 1.0, 1e-5, lipschitz=5.0, data_norm=1.0, target_margin=2.0,
                                            radius=3.0, perturbation="output"))


def _binary(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, y


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_auto_alpha_reads_only_the_shape_of_the_data():
    a = DPLogisticRegression(epsilon=1.0, random_state=0).fit(*_binary(400, 6, 1))
    b = DPLogisticRegression(epsilon=1.0, random_state=0).fit(*_binary(400, 6, 2))
    assert a.alpha_ == b.alpha_
    expected = estimator_alpha(Logistic(), 400, 7, 1.0, 1e-5, data_norm=math.sqrt(2.0))  # 6 + intercept
    assert a.alpha_ == pytest.approx(expected)
    assert a.get_params()["alpha"] == "auto"


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_one_vs_rest_resolves_alpha_at_each_class_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.argmax(X[:, :3], axis=1)
    clf = DPLogisticRegression(epsilon=3.0, multi_class="ovr", random_state=0).fit(X, y)
    assert clf.alpha_ == pytest.approx(estimator_alpha(Logistic(), 300, 5, 1.0, 1e-5 / 3, data_norm=math.sqrt(2)))


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_multinomial_resolves_alpha_at_the_whole_budget_with_its_constants():
    from dperm.problem.multinomial import MultinomialLogistic

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.argmax(X[:, :3], axis=1)
    clf = DPLogisticRegression(epsilon=3.0, random_state=0).fit(X, y)
    expected = estimator_alpha(MultinomialLogistic(3), 300, 5, 3.0, 1e-5, data_norm=math.sqrt(2), n_classes=3)
    assert clf.multi_class_ == "multinomial" and clf.alpha_ == pytest.approx(expected)
    # noise in the gradients: sqrt(2) times the binary rule at the same budget (L = sqrt(2) D)
    assert expected == pytest.approx(math.sqrt(2) * estimator_alpha(Logistic(), 300, 5, 3.0, 1e-5, data_norm=math.sqrt(2)))


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPLinearSVC, DPHuberRegressor, DPLinearRegression])
@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_every_linear_estimator_defaults_to_auto(estimator):
    X, y = _binary(200, 3, 0)
    model = estimator(epsilon=2.0, random_state=0).fit(X, y if estimator in (DPLogisticRegression, DPLinearSVC) else X[:, 0])
    assert estimator().alpha == "auto"
    assert model.alpha_ > 0 and math.isfinite(model.alpha_)


@pytest.mark.parametrize("alpha", ["tiny", True, -1.0, math.nan])
@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_bad_alpha_is_a_clear_error(alpha):
    with pytest.raises(ValueError, match="alpha must be 'auto' or a finite number"):
        DPLogisticRegression(alpha=alpha).fit(*_binary(50, 2, 0))


@pytest.mark.filterwarnings("ignore:classes was not declared:dperm.exceptions.PrivacyWarning")
def test_explicit_alpha_is_kept():
    model = DPLogisticRegression(alpha=0.05, random_state=0).fit(*_binary(100, 2, 0))
    assert model.alpha_ == 0.05
