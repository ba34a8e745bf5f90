"""The capped default schedule of gd_output_perturbation (issue 14): a pure function of public
inputs, never above the theorem's T, at the first T where the bound's optimization term has
fallen to its noise term, and the noise calibrated to the T actually run."""

import math

import numpy as np
import pytest

from dperm.algorithms import get, schedules
from dperm.algorithms.output_perturbation import gd_output_perturbation_steps, gd_sensitivity
from dperm.privacy.budget import PrivacyBudget
from dperm.privacy.mechanisms import vector_mechanism
from dperm.problem import ERMProblem
from dperm.problem.losses import LOSSES, make_loss


def _problem(n=4000, d=6, mu=1e-3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.ones(d) + rng.logistic(size=n) * 0.3 > 0, 1.0, -1.0)
    return ERMProblem(X, y, "logistic", ("l2", mu))


@pytest.mark.parametrize("budget", [PrivacyBudget(1.0, 1e-6), PrivacyBudget(0.5, 0.0)], ids=["gaussian", "pure"])
def test_capped_steps_are_the_first_where_the_bound_has_settled(budget):
    p = _problem()
    mu, beta, L, n, d = p.strong_convexity, p.smoothness, p.lipschitz, p.n_samples, p.n_features
    eta = 1.0 / (mu + beta)
    T, theorem = gd_output_perturbation_steps(p, budget, L / mu, eta, np.zeros(d))
    assert 1 <= T < theorem
    unit = vector_mechanism(budget, 1.0, charge_now=False).noise
    per_unit = d * (d + 1) * unit**2 if budget.is_pure else d * unit**2

    def settled(t):
        noise_term = 0.5 * beta * per_unit * gd_sensitivity(L, n, eta, t, mu, beta) ** 2
        return (1 - eta * mu) ** t * math.log(2.0) <= schedules.GD_OUTPUT_OPTIMIZATION_SHARE * noise_term

    assert settled(T) and not settled(T - 1)


def test_default_runs_the_capped_steps_and_calibrates_to_them():
    p = _problem()
    budget = PrivacyBudget(1.0, 1e-6)
    fit = get("gd_output_perturbation").fit(p, budget, rng=0)
    paper = get("gd_output_perturbation").fit(p, budget, rng=0, steps="theorem")
    T, theorem = fit.hyperparameters["steps"], fit.info["theorem_steps"]
    assert T < theorem == paper.hyperparameters["steps"] == paper.info["theorem_steps"]
    eta = fit.hyperparameters["step_size"]
    mu, beta = p.strong_convexity, p.smoothness
    # the noise is that of the T actually run: sensitivities of the two runs differ
    assert fit.event.sensitivity == pytest.approx(gd_sensitivity(p.lipschitz, p.n_samples, eta, T, mu, beta))
    assert paper.event.sensitivity == pytest.approx(gd_sensitivity(p.lipschitz, p.n_samples, eta, theorem, mu, beta))
    with pytest.raises(ValueError, match="'theorem'"):
        get("gd_output_perturbation").fit(p, budget, rng=0, steps="paper")


def test_without_strong_convexity_the_theorem_steps_are_kept():
    base = _problem()
    p = ERMProblem(base.X, base.y, "logistic", None, ("l2_ball", 5.0))  # convex, mu = 0: Theorem 3
    fit = get("gd_output_perturbation").fit(p, PrivacyBudget(1.0, 1e-6), rng=0)
    assert fit.hyperparameters["steps"] == fit.info["theorem_steps"]


def test_initial_gap_bound_is_the_loss_at_zero_for_nonnegative_losses():
    p = _problem()
    assert schedules.initial_gap_bound(p, np.zeros(6)) == pytest.approx(math.log(2.0))
    w0 = np.full(6, 0.5)  # away from 0: the strong-convexity bound
    assert schedules.initial_gap_bound(p, w0) == pytest.approx((1.0 + 1e-3 * np.linalg.norm(w0)) ** 2 / 2e-3)


@pytest.mark.parametrize("name", sorted(schedules._NONNEGATIVE_LOSSES))
def test_losses_named_nonnegative_are(name):
    assert name in LOSSES
    loss = make_loss(name)
    a = np.linspace(-50, 50, 2001)
    for y in ([-1.0, 1.0] if loss.binary else [-1.0, -0.3, 0.0, 0.7, 1.0]):
        assert np.all(loss.value(a, np.full_like(a, y)) >= 0)
