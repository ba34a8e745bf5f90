"""The privacy layer: budgets, the accountant, calibration against closed forms and
dp-accounting, and the samplers' distributions."""

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dperm.privacy import events as ev
from dperm.privacy.accountant import calibrate, epsilon
from dperm.privacy.budget import BudgetAccountant, BudgetExceededError, PrivacyBudget, PrivacyWarning
from dperm.privacy.gaussian_dp import (analytic_gaussian_sigma, classical_gaussian_sigma, gaussian_dp_delta,
                                       gaussian_dp_epsilon, gaussian_dp_mu)
from dperm.privacy.mechanisms import sample_release, vector_mechanism
from dperm.privacy.noise import exponential_mechanism, l2_laplace_noise, make_rng, symmetric_gaussian_matrix
from dperm.privacy.pld import pld_epsilon, pld_grid
from dperm.privacy.pure_dp import pure_composition_epsilon as _pure
from dperm.privacy.search import smallest_certified_noise, step_gdp_mu


# The old primitives, expressed through events and the one accountant.
def gaussian_steps_sigma(eps, delta, sensitivity, steps):
    return calibrate(lambda x: ev.repeated(ev.gaussian_release(x, sensitivity), steps), PrivacyBudget(eps, delta)).noise


def gaussian_steps_epsilon(sigma, sensitivity, steps, delta):
    return epsilon(ev.repeated(ev.gaussian_release(sigma, sensitivity), steps), delta)


def _sampled(sigma, sensitivity, q, steps, sampling="poisson", dataset_size=None):
    n = dataset_size or 10**9
    if q >= 1:
        return ev.repeated(ev.gaussian_release(sigma, sensitivity), steps)
    if sampling == "poisson":
        return ev.repeated(ev.PoissonSampledDpEvent(q, ev.gaussian_release(sigma, sensitivity)), steps)
    return ev.sampled_releases(ev.gaussian_release(sigma, sensitivity), n, round(q * n), steps, sampling)


def subsampled_gaussian_epsilon(sigma, *, sensitivity, sampling_probability, steps, delta, sampling="poisson",
                                dataset_size=None):
    return epsilon(_sampled(sigma, sensitivity, sampling_probability, steps, sampling, dataset_size), delta)


def subsampled_gaussian_sigma(eps, delta, *, sensitivity, sampling_probability, steps, sampling="poisson",
                              dataset_size=None):
    return calibrate(lambda x: _sampled(x, sensitivity, sampling_probability, steps, sampling, dataset_size),
                     PrivacyBudget(eps, delta)).noise


def _counted(step_epsilons, bounded):
    from collections import Counter

    return [(e, c, bounded) for e, c in Counter(step_epsilons).items()]


def pure_composition_epsilon(step_epsilons, delta=0.0):
    return _pure(_counted(step_epsilons, False), delta)


def exponential_mechanism_composition_epsilon(step_epsilons, delta=0.0):
    return _pure(_counted(step_epsilons, True), delta)


def exponential_mechanism_step_epsilon(eps, delta, steps):
    return 1.0 / calibrate(lambda x: ev.repeated(ev.ExponentialMechanismRelease(1.0 / x), steps),
                           PrivacyBudget(eps, delta)).noise


def calibrate_vector_mechanism(budget, sensitivity, steps=1):
    return vector_mechanism(budget, sensitivity, steps, charge_now=False)


# ----------------------------------------------------------------------------- budget
@pytest.mark.parametrize(
    "epsilon, delta, match",
    [(0, 0, "epsilon"), (-1, 0, "epsilon"), (math.nan, 0, "epsilon"), (math.inf, 0, "epsilon"),
     (1, -1e-9, "delta"), (1, 1.0, "delta"), (1, 2.0, "delta"), (1, math.nan, "delta")],
)
def test_budget_rejects_bad_values(epsilon, delta, match):
    with pytest.raises(ValueError, match=match):
        PrivacyBudget(epsilon, delta)


@pytest.mark.parametrize("bad", [True, "1", None, [1.0]])
def test_budget_rejects_non_numbers(bad):
    with pytest.raises(TypeError):
        PrivacyBudget(bad, 0.0)


def test_budget_composition_and_split():
    b = PrivacyBudget(1.0, 1e-5)
    assert b + b == PrivacyBudget(2.0, 2e-5)
    assert b.split(4) == PrivacyBudget(0.25, 2.5e-6)
    assert PrivacyBudget(1.0).is_pure and not b.is_pure
    with pytest.raises(ValueError):
        b.split(0)


def test_budget_warns_when_delta_not_below_one_over_n():
    with pytest.warns(PrivacyWarning, match="1/n"):
        PrivacyBudget(1.0, 0.01).check_delta(100)
    with warnings_as_errors():
        PrivacyBudget(1.0, 1e-5).check_delta(100)


class warnings_as_errors:
    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def test_accountant_refuses_to_overspend():
    acc = BudgetAccountant(PrivacyBudget(1.0, 1e-5))
    first = ev.gaussian_release(6.0, 1.0)
    acc.charge(first, "first")
    with pytest.raises(BudgetExceededError):
        acc.charge(ev.gaussian_release(2.0, 1.0))
    assert len(acc.events) == 1
    acc.charge(ev.gaussian_release(9.0, 1.0))
    spent = epsilon(ev.composed([first, ev.gaussian_release(9.0, 1.0)]), 1e-5)
    assert acc.spent.epsilon == pytest.approx(spent) and spent < 1.0
    assert [label for label, _ in acc.history] == ["first", ""]
    assert acc.remaining_epsilon == pytest.approx(1.0 - spent)


def test_accountant_pure_charges_compose_by_basic_composition():
    acc = BudgetAccountant(1.0)
    for _ in range(100):
        acc.charge(ev.L2LaplaceRelease(1.0, 0.01))
    with pytest.raises(BudgetExceededError):
        acc.charge(ev.L2LaplaceRelease(1.0, 0.01))
    assert acc.spent_epsilon <= 1.0 + 1e-9


# -------------------------------------------------------------------- Gaussian closed forms
def test_analytic_gaussian_test_vectors():
    # ALGORITHMS.md, measured with dp-accounting 0.6.0
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)
    assert classical_gaussian_sigma(0.5, 1e-5) * 0.5 == pytest.approx(4.845, abs=1e-3)
    for (eps, delta), expected in {(1, 1e-5): 37.31, (2, 1e-5): 19.94, (0.1, 1e-3): 174.0, (8, 1e-5): 6.002}.items():
        assert gaussian_steps_sigma(eps, delta, 1.0, 100) == pytest.approx(expected, rel=1e-3)


def test_analytic_gaussian_agrees_with_dp_accounting():
    import dp_accounting

    for eps, delta in [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-3)]:
        theirs = dp_accounting.get_sigma_gaussian(eps, delta)
        assert analytic_gaussian_sigma(eps, delta) == pytest.approx(theirs, rel=1e-3)


def test_gaussian_dp_delta_is_the_gaussian_privacy_profile():
    # delta(eps) of a Gaussian with sensitivity 1 and std 1/mu, by direct integration
    mu, eps = 0.7, 0.3
    x = np.linspace(-40, 40, 400001)
    p = stats.norm.pdf(x, 0, 1 / mu)
    q = stats.norm.pdf(x, 1, 1 / mu)
    direct = np.trapezoid(np.maximum(q - math.exp(eps) * p, 0), x)
    assert gaussian_dp_delta(mu, eps) == pytest.approx(direct, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 20), log_delta=st.floats(-12, -1))
def test_gaussian_dp_inversions_are_certified(eps, log_delta):
    delta = 10.0**log_delta
    mu = gaussian_dp_mu(eps, delta)
    assert gaussian_dp_delta(mu, eps) <= delta  # never over budget
    assert gaussian_dp_delta(mu * (1 + 1e-6), eps) > delta * (1 - 1e-4)  # and tight
    assert gaussian_dp_epsilon(mu, delta) <= eps * (1 + 1e-9)
    assert gaussian_dp_epsilon(mu, delta) == pytest.approx(eps, rel=1e-6)


def test_gaussian_steps_round_trip_and_monotonicity():
    sigma = gaussian_steps_sigma(1.0, 1e-5, 0.01, 250)
    assert gaussian_steps_epsilon(sigma, 0.01, 250, 1e-5) == pytest.approx(1.0, rel=1e-9)
    assert gaussian_steps_epsilon(sigma, 0.01, 251, 1e-5) > 1.0
    assert gaussian_steps_sigma(1.0, 1e-5, 0.01, 400) == pytest.approx(sigma * math.sqrt(400 / 250))


# ------------------------------------------------------------------ subsampled (dp-accounting)
def test_pld_replace_one_at_probability_one_is_the_closed_form():
    for sigma, sensitivity, steps in [(10.0, 2.0, 5), (3.0, 1.0, 1), (40.0, 2.0, 100)]:
        accountant = subsampled_gaussian_epsilon(sigma, sensitivity=sensitivity, sampling_probability=1.0,
                                                 steps=steps, delta=1e-5)
        closed = gaussian_steps_epsilon(sigma, sensitivity, steps, 1e-5)
        assert accountant == pytest.approx(closed, rel=2e-3)
        assert accountant >= closed * (1 - 1e-6)  # the PLD rounds pessimistically


def test_without_replacement_at_full_batch_is_the_closed_form():
    for sigma, sensitivity, steps in [(10.0, 2.0, 5), (40.0, 2.0, 100)]:
        event = ev.repeated(ev.SampledWithoutReplacementDpEvent(500, 500, ev.gaussian_release(sigma, sensitivity)), steps)
        closed = gaussian_steps_epsilon(sigma, sensitivity, steps, 1e-5)
        assert epsilon(event, 1e-5) == pytest.approx(closed, rel=1e-12)


def test_replace_one_pld_matches_add_remove_test_vectors_at_doubled_sensitivity():
    # ALGORITHMS.md: Poisson q=0.01, T=10000, add/remove, (1, 1e-5) -> noise multiplier 3.813.
    # Replace-one with per-example bound C has sensitivity 2C; add/remove with bound C is
    # at least as private, so the replace-one sigma for C = 1 must exceed 3.813 and the
    # replace-one epsilon at sigma 3.813 must exceed 1.
    sigma = subsampled_gaussian_sigma(1.0, 1e-5, sensitivity=2.0, sampling_probability=0.01, steps=10000)
    assert sigma > 3.813
    eps = subsampled_gaussian_epsilon(3.813, sensitivity=2.0, sampling_probability=0.01, steps=10000, delta=1e-5)
    assert eps > 1.0


def test_subsampled_calibration_is_certified_and_tight():
    kw = dict(sensitivity=2.0, sampling_probability=0.02, steps=2000)
    sigma = subsampled_gaussian_sigma(1.0, 1e-5, **kw)
    assert subsampled_gaussian_epsilon(sigma, delta=1e-5, **kw) <= 1.0 + 1e-9
    assert subsampled_gaussian_epsilon(sigma * 0.98, delta=1e-5, **kw) > 1.0
    # amplification: far less noise than the full batch needs for the same T
    assert sigma < gaussian_steps_sigma(1.0, 1e-5, 2.0, 2000) / 5


@pytest.mark.parametrize("guess", [1e-3, 0.7, 0.95, 50.0])
def test_smallest_certified_noise_returns_a_certified_point_at_precision(guess):
    seen = []

    def eps_at(x):  # a decreasing curve with a kink, like a PLD's
        seen.append(x)
        return 3.0 / x**2 if x < 1.3 else 2.0 / x

    x = smallest_certified_noise(eps_at, 1.0, guess, floor=1e-9, budget_rtol=0.0)
    assert x in seen and eps_at(x) <= 1.0  # the answer is a point the search certified
    assert 2.0 <= x <= 2.0 * (1 + 1e-4)  # and within rtol of the true threshold x = 2
    assert len(seen) < 30
    # by default it may stop earlier, at a certified point spending >= 99.9% of the target
    seen.clear()
    x = smallest_certified_noise(eps_at, 1.0, guess, floor=1e-9)
    assert x in seen and 0.999 <= eps_at(x) <= 1.0


def test_smallest_certified_noise_stops_once_the_budget_is_spent_where_epsilon_is_flat():
    calls = []

    def eps_at(x):  # a phase holding a small share: epsilon barely moves with its noise
        calls.append(x)
        return 0.9 + 0.1 / x

    x = smallest_certified_noise(eps_at, 1.0, 1.3, floor=1e-9, factor=1.25)
    assert 0.999 <= eps_at(x) <= 1.0
    assert len(calls) <= 6


def test_smallest_certified_noise_needs_few_calls_near_a_good_guess():
    calls = []

    def eps_at(x):
        calls.append(x)
        return math.exp(-x)

    x = smallest_certified_noise(eps_at, 0.01, 1.05 * math.log(100), floor=1e-9, factor=1.25)
    assert math.exp(-x) <= 0.01 and x <= math.log(100) * (1 + 1e-4)
    assert len(calls) <= 8  # bisection from a factor-2 bracket needs about 14


def test_smallest_certified_noise_refuses_past_the_ceiling():
    with pytest.raises(ValueError, match="no noise level"):
        smallest_certified_noise(lambda x: 5.0, 1.0, 1.0, floor=1e-9, ceiling=1e6)


def test_events_reject_bad_arguments():
    with pytest.raises(ValueError, match="delta > 0"):
        subsampled_gaussian_sigma(1.0, 0.0, sensitivity=1.0, sampling_probability=0.1, steps=10)
    with pytest.raises(ValueError, match="sigma"):
        ev.gaussian_release(-1.0, 1.0)
    with pytest.raises(ValueError, match="sampling probability"):
        epsilon(ev.PoissonSampledDpEvent(1.5, ev.gaussian_release(1.0, 1.0)), 1e-5)
    with pytest.raises(TypeError):
        epsilon("not an event", 1e-5)


# ------------------------------------------------------------------------------- pure DP
def test_pure_composition():
    assert pure_composition_epsilon([0.1] * 10) == pytest.approx(1.0)
    # advanced composition wins for many small steps
    many = pure_composition_epsilon([0.01] * 10000, delta=1e-5)
    advanced = math.sqrt(2e4 * math.log(1e5)) * 0.01 + 1e4 * 0.01 * math.expm1(0.01)
    rho = 1e4 * 0.01**2 / 2  # an eps-DP release is eps^2/2-zCDP (Bun and Steinke 2016)
    assert many == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e5))) and many < advanced < 100


def test_exponential_mechanism_zcdp_route():
    k, e0, delta = 1000, 0.05, 1e-6
    rho = k * e0**2 / 8
    assert exponential_mechanism_composition_epsilon([e0] * k, delta) == pytest.approx(
        rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    assert exponential_mechanism_composition_epsilon([e0] * k, 0.0) == pytest.approx(k * e0)
    step = exponential_mechanism_step_epsilon(1.0, 1e-6, 1000)
    assert step > 1.0 / 1000
    assert exponential_mechanism_composition_epsilon([step] * 1000, 1e-6) <= 1.0 + 1e-12


# ---------------------------------------------------------------------- vector calibration
def test_calibrate_vector_mechanism_chooses_the_mechanism():
    pure = calibrate_vector_mechanism(PrivacyBudget(2.0), 0.5, steps=4)
    assert isinstance(pure.event.event, ev.L2LaplaceRelease) and pure.noise == pytest.approx(0.5 / 0.5)
    approx = calibrate_vector_mechanism(PrivacyBudget(1.0, 1e-5), 0.5, steps=4)
    assert isinstance(approx.event.event, ev.GaussianRelease)
    assert approx.noise == pytest.approx(2 * 0.5 * 3.7306, rel=1e-4)
    assert approx.spent.epsilon <= 1.0


# -------------------------------------------------------------------------------- samplers
def test_make_rng():
    assert isinstance(make_rng(None), np.random.Generator)
    g = np.random.default_rng(1)
    assert make_rng(g) is g
    assert make_rng(5).random() == np.random.default_rng(5).random()
    with pytest.raises(TypeError):
        make_rng("seed")
    # two unseeded generators differ (OS entropy, not a fixed or one-byte seed)
    assert make_rng(None).integers(2**63) != make_rng(None).integers(2**63)


def test_gaussian_noise_distribution():
    rng = np.random.default_rng(0)
    cal = calibrate_vector_mechanism(PrivacyBudget(1.0, 1e-5), 1.0)
    z = np.concatenate([sample_release(rng, cal.event, 50) for _ in range(100)])
    assert stats.kstest(z / cal.noise, "norm").pvalue > 1e-3


@pytest.mark.parametrize("dim", [1, 3, 20])
def test_l2_laplace_radius_and_direction(dim):
    rng = np.random.default_rng(dim)
    scale = 0.7
    samples = np.array([l2_laplace_noise(rng, dim, scale) for _ in range(4000)])
    radius = np.linalg.norm(samples, axis=1)
    assert stats.kstest(radius, stats.gamma(a=dim, scale=scale).cdf).pvalue > 1e-3
    if dim > 1:
        # first coordinate of a uniform direction on S^{d-1}: (x+1)/2 ~ Beta((d-1)/2, (d-1)/2)
        u = (samples[:, 0] / radius + 1) / 2
        assert stats.kstest(u, stats.beta((dim - 1) / 2, (dim - 1) / 2).cdf).pvalue > 1e-3
    else:  # 1-D: the Laplace law
        assert stats.kstest(samples[:, 0], stats.laplace(scale=scale).cdf).pvalue > 1e-3


def test_exponential_mechanism_frequencies():
    rng = np.random.default_rng(3)
    scores = np.array([0.0, 1.0, 2.0, -np.inf, 0.5])
    eps, sens = 2.0, 1.0
    draws = np.bincount([exponential_mechanism(rng, scores, eps, sens) for _ in range(20000)], minlength=5)
    weights = np.exp(eps * np.where(np.isinf(scores), -np.inf, scores) / (2 * sens))
    expected = weights / weights.sum() * draws.sum()
    assert draws[3] == 0
    keep = expected > 0
    assert stats.chisquare(draws[keep], expected[keep]).pvalue > 1e-3


def test_exponential_mechanism_is_stable_for_huge_scores():
    rng = np.random.default_rng(0)
    assert exponential_mechanism(rng, np.array([1e308, 0.0]), 1.0, 1.0) == 0
    with pytest.raises(ValueError):
        exponential_mechanism(rng, np.array([np.nan, 1.0]), 1.0, 1.0)


def test_symmetric_gaussian_matrix():
    rng = np.random.default_rng(0)
    m = symmetric_gaussian_matrix(rng, 60, 2.0)
    assert np.array_equal(m, m.T)
    upper = m[np.triu_indices(60)]
    assert stats.kstest(upper / 2.0, "norm").pvalue > 1e-3


def test_nearly_noiseless_subsampled_steps_use_the_full_batch_bound():
    eps = subsampled_gaussian_epsilon(0.05, sensitivity=1.0, sampling_probability=0.01, steps=1000, delta=1e-5)
    assert eps == pytest.approx(gaussian_steps_epsilon(0.05, 1.0, 1000, 1e-5))
    sigma = subsampled_gaussian_sigma(1e6, 1e-5, sensitivity=2.0, sampling_probability=0.01, steps=10_000)
    assert subsampled_gaussian_epsilon(sigma, sensitivity=2.0, sampling_probability=0.01, steps=10_000, delta=1e-5) <= 1e6


def test_exponential_mechanism_step_epsilon_edge_cases():
    for eps, delta, steps in [(1.0, 0.0, 100), (0.3, 0.0, 7), (1e6, 1e-5, 1000), (1.0, 1e-6, 3)]:
        e0 = exponential_mechanism_step_epsilon(eps, delta, steps)
        assert exponential_mechanism_composition_epsilon([e0] * steps, delta) <= eps
        assert e0 >= eps / steps * (1 - 1e-12)


def test_pld_grid_follows_one_steps_privacy_loss_at_tiny_sampling_rates():
    """With one example per step (Bassily, Smith, Thakurta's schedule, q = 1/n, T = n^2) each step's
    privacy loss is far below the epsilon-based grid, and the rounding of every step adds
    up: the grid must follow the step's scale (the error depends on grid / step_mu)."""
    n = 3000
    q, steps, sigma = 1.0 / n, n * n, 7.49  # sensitivity 2: noise ratio 3.745
    step_mu = step_gdp_mu(q, sigma / 2.0)
    assert pld_grid(1.0, step_mu) == pytest.approx(step_mu / 5)
    assert pld_grid(1.0, 1.0) == pld_grid(1.0) == 5e-4  # the epsilon rule when the steps are coarse
    # memory: at T = n^2 on ADULT the step rule (1.35e-6) would need over 24 GB; the grid stays coarser
    assert pld_grid(1.0, 6.75e-6, steps=32561**2) == pytest.approx(1.9e-5 * 32561**2 / 2e9)
    assert pld_grid(1.0, step_mu, steps=steps) == pytest.approx(step_mu / 5)  # n = 3000: not binding
    ours = subsampled_gaussian_epsilon(sigma, sensitivity=2.0, sampling_probability=q, steps=steps, delta=1e-5)
    converged = pld_epsilon([("gaussian", sigma, steps, q)], 1e-5, step_mu / 20)  # noise multiplier sigma / (Delta/2)
    coarse = pld_epsilon([("gaussian", sigma, steps, q)], 1e-5, 5e-4)  # the epsilon rule alone (before 2026-11-23)
    assert converged <= ours <= converged * 1.01
    assert coarse > 1.8 * converged  # what the step rule fixes
    # and the calibration finds the noise the converged accountant needs
    found = subsampled_gaussian_sigma(1.0, 1e-5, sensitivity=2.0, sampling_probability=q, steps=steps)
    assert 7.4 < found < 7.6
