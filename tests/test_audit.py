"""dperm.audit: the statistics (fast), the neighbours (fast) and the black-box audit of
every mechanism family (slow: ``python -m pytest -m slow tests/test_audit.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dperm import audit as A
from dperm.audit.families import N_SAMPLES, _gd_step_size
from dperm.audit.halving import gaussian_halving_epsilon, gdp_delta, gdp_epsilon, gdp_mu, pure_halving_epsilon
from dperm.problem.erm import ERMProblem
from dperm.problem.reference import solve_reference


# ----------------------------------------------------------------------------- statistics
def test_clopper_pearson_closed_forms():
    # No success in n trials: the upper bound solves (1 - p)^n = 1 - c.
    n, c = 500, 0.975
    assert A.clopper_pearson_upper(0, n, c) == pytest.approx(1.0 - (1.0 - c) ** (1.0 / n), rel=1e-12)
    # All successes: the lower bound solves p^n = 1 - c.
    assert A.clopper_pearson_lower(n, n, c) == pytest.approx((1.0 - c) ** (1.0 / n), rel=1e-12)
    assert A.clopper_pearson_upper(n, n, c) == 1.0
    assert A.clopper_pearson_lower(0, n, c) == 0.0


@pytest.mark.parametrize("k", [1, 7, 250, 499])
def test_clopper_pearson_is_the_exact_binomial_inversion(k):
    n, c = 500, 0.975
    upper = A.clopper_pearson_upper(k, n, c)
    lower = A.clopper_pearson_lower(k, n, c)
    # At the upper bound, k or fewer successes have probability exactly 1 - c; same
    # for k or more at the lower bound.
    assert stats.binom.cdf(k, n, upper) == pytest.approx(1.0 - c, rel=1e-9)
    assert stats.binom.sf(k - 1, n, lower) == pytest.approx(1.0 - c, rel=1e-9)
    assert lower < k / n < upper


def test_clopper_pearson_vectorized_and_checked():
    k = np.array([0, 3, 10])
    assert np.allclose(A.clopper_pearson_upper(k, 10, 0.9), [A.clopper_pearson_upper(int(i), 10, 0.9) for i in k])
    with pytest.raises(ValueError, match="between 0 and trials"):
        A.clopper_pearson_upper(11, 10, 0.9)
    with pytest.raises(ValueError, match="confidence"):
        A.clopper_pearson_upper(1, 10, 1.0)


def test_epsilon_lower_bound_known_case():
    # No error in 1000 runs per side at delta = 0: both rates are at most
    # u = 1 - 0.025^(1/1000), so epsilon >= log((1 - u) / u).
    u = 1.0 - 0.025 ** (1.0 / 1000)
    assert A.epsilon_lower_bound(0, 0, 1000, 1000, 0.0) == pytest.approx(math.log((1 - u) / u), rel=1e-12)
    # delta enters the numerator
    d = 1e-3
    assert A.epsilon_lower_bound(0, 0, 1000, 1000, d) == pytest.approx(math.log((1 - d - u) / u), rel=1e-12)
    # symmetric in the two kinds of error
    assert A.epsilon_lower_bound(3, 40, 1000, 1000, 0.0) == A.epsilon_lower_bound(40, 3, 1000, 1000, 0.0)
    # a coin flip proves nothing
    assert A.epsilon_lower_bound(500, 500, 1000, 1000, 0.0) == 0.0


def test_epsilon_lower_bound_covers_the_truth():
    """For the Gaussian mechanism at mu-GDP, the bound from the expected counts of a test
    is below its true epsilon at the test's own (FPR, FNR) point."""
    mu, N, t = 1.0, 100_000, 1.5
    fpr, fnr = stats.norm.sf(t), stats.norm.cdf(t - mu)
    fp, fn = round(fpr * N), round(fnr * N)
    bound = A.epsilon_lower_bound(fp, fn, N, N, 0.0)
    assert 0 < bound < math.log((1 - fnr) / fpr)


def test_threshold_choice_separated_and_reversed():
    rng = np.random.default_rng(0)
    low, high = rng.uniform(0, 1, 400), rng.uniform(2, 3, 400)
    test = A.choose_threshold(high, low, 0.0)
    assert test.sign == 1.0 and low.max() <= test.threshold < high.min()
    assert test.false_positives == 0 and test.false_negatives == 0
    flipped = A.choose_threshold(low, high, 0.0)
    assert flipped.sign == -1.0 and flipped.epsilon == pytest.approx(test.epsilon)
    fresh = A.evaluate_threshold(test, rng.uniform(2, 3, 300), rng.uniform(0, 1, 200), 0.0)
    assert (fresh.positives, fresh.negatives, fresh.false_positives) == (300, 200, 0)
    assert fresh.epsilon == pytest.approx(A.epsilon_lower_bound(0, 0, 200, 300, 0.0))


# ------------------------------------------------------------------------- halving budgets
def test_gdp_formulas():
    # delta(0) of mu-GDP is the total variation Phi(mu/2) - Phi(-mu/2)
    assert gdp_delta(1.0, 0.0) == pytest.approx(stats.norm.cdf(0.5) - stats.norm.cdf(-0.5), rel=1e-12)
    mu = gdp_mu(1.0, 1e-5)
    assert gdp_delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-9)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("eps, delta", [(0.5, 1e-5), (2.0, 1e-2)])
def test_gaussian_halving_doubles_mu(eps, delta):
    assert gdp_mu(gaussian_halving_epsilon(eps, delta), delta) == pytest.approx(2 * gdp_mu(eps, delta), rel=1e-8)
    assert pure_halving_epsilon(eps) == 2 * eps


# ------------------------------------------------------------------------------ neighbours
@pytest.mark.parametrize("offset", [0.0, -1.0, 2.5])
def test_label_flip_pair_is_replace_one(offset):
    pair = A.label_flip_pair(16, 3, data_norm=0.7, offset=offset)
    assert pair.X.shape == pair.X_prime.shape == (16, 3)
    assert list(pair.differing_rows()) == [pair.index]
    assert np.linalg.norm(pair.X[pair.index]) == pytest.approx(0.7)
    assert np.all(np.linalg.norm(pair.X, axis=1) <= 0.7 + 1e-12)
    assert set(pair.y) == set(pair.y_prime) == {-1.0, 1.0}  # the label set is the same
    others = np.arange(16) != pair.index
    assert pair.y[others] @ (pair.X[others] @ pair.direction) == pytest.approx(offset)
    with pytest.raises(ValueError, match="anchor rows"):
        A.label_flip_pair(3, 1, offset=5.0)


def _problems(pair, loss="huberized_hinge", regularizer=None):
    return (ERMProblem(pair.X, pair.y, loss, regularizer, data_norm=1.0),
            ERMProblem(pair.X_prime, pair.y_prime, loss, regularizer, data_norm=1.0))


def test_canary_attains_the_gradient_sensitivity_in_the_linear_regime():
    pair = A.label_flip_pair(N_SAMPLES, 3)
    p, q = _problems(pair)
    for w1 in (-0.45, 0.0, 0.3):
        w = np.array([w1, 0.7, -2.0])
        diff = p.gradient(w) - q.gradient(w)
        assert np.linalg.norm(diff) == pytest.approx(p.gradient_sensitivity(), rel=1e-12)
        assert np.allclose(diff / np.linalg.norm(diff), -pair.direction)
    # the logistic loss moves the gradient by half the bound only (why the audit avoids it)
    p, q = _problems(pair, "logistic")
    diff = p.gradient(np.zeros(3)) - q.gradient(np.zeros(3))
    assert np.linalg.norm(diff) == pytest.approx(0.5 * p.gradient_sensitivity(), rel=1e-12)


def test_canary_attains_the_minimizer_sensitivity_of_output_perturbation():
    mu = 0.1
    pair = A.label_flip_pair(N_SAMPLES, 3)
    p, q = _problems(pair, regularizer=("l2", mu))
    gap = solve_reference(p, tol=1e-12).coef - solve_reference(q, tol=1e-12).coef
    assert gap @ pair.direction == pytest.approx(2 * p.lipschitz / (N_SAMPLES * mu), rel=1e-8)


def test_gradient_scenarios_keep_the_noisy_path_in_the_linear_regime():
    # 10 standard deviations of the released coordinate fit in |margin| < 1/2
    for eps_run in (2.0, gaussian_halving_epsilon(2.0, 1e-2)):
        eta = _gd_step_size(10, 1e-2, eps_run)
        std = eta * 10 * (2.0 / N_SAMPLES) / gdp_mu(eps_run, 1e-2)
        assert std == pytest.approx(0.05) and 10 * std <= 0.5


# --------------------------------------------------------------------------- audit (fast)
def test_audit_is_reproducible_and_honest_about_its_claim():
    first = A.audit("dp_fw_l1", 2.0, 0.0, runs=200, seed=3)
    again = A.audit("dp_fw_l1", 2.0, 0.0, runs=200, seed=3)
    assert first.epsilon_lower_bound == again.epsilon_lower_bound and first.test == again.test
    assert (first.epsilon, first.delta, first.epsilon_run) == (2.0, 0.0, 2.0)
    assert first.test.positives == first.test.negatives == 150  # a quarter chose the test
    assert 0.0 <= first.epsilon_lower_bound <= first.epsilon and not first.violation
    summary = first.summary()
    assert summary["runs_per_side"] == 200 and summary["violation"] is False
    mis = A.audit("dp_fw_l1", 2.0, 0.0, runs=200, seed=3, miscalibrated=True)
    assert mis.epsilon_run == 4.0 and mis.epsilon == 2.0


def test_audit_rejects_bad_input():
    with pytest.raises(ValueError, match="no audit scenario for 'dp_svrg'; audited: output_perturbation"):
        A.audit("dp_svrg", 1.0, 1e-5)
    with pytest.raises(ValueError, match="runs must be"):
        A.audit("dp_fw_l1", 1.0, runs=5)
    with pytest.raises(ValueError, match="epsilon must be"):
        A.audit("dp_fw_l1", -1.0)


# --------------------------------------------------------------------------- audit (slow)
SUITE_IDS = [f"{name}-eps{eps:g}-delta{delta:g}" for name, eps, delta in A.SUITE]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, epsilon, delta", A.SUITE, ids=SUITE_IDS)
def test_audit_lower_bound_below_the_claim(algorithm, epsilon, delta):
    result = A.audit(algorithm, epsilon, delta, seed=1)  # the seeds of A.audit_suite
    assert not result.violation, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, epsilon, delta", A.SUITE, ids=SUITE_IDS)
def test_audit_catches_half_the_noise(algorithm, epsilon, delta):
    result = A.audit(algorithm, epsilon, delta, miscalibrated=True, seed=2)
    assert result.violation, str(result)


def test_swapped_row_pair_is_replace_one_and_realizes_twice_the_shift():
    pair = A.swapped_row_pair(8, 3)
    assert list(pair.differing_rows()) == [0]
    assert np.all(np.linalg.norm(pair.X, axis=1) == 1.0)
    # linear regime gradients -y x: D's rows all -e_1; D' has one +e_1 among them
    grads_d, grads_d2 = -pair.y[:, None] * pair.X, -pair.y_prime[:, None] * pair.X
    assert np.allclose(grads_d, -np.eye(3)[0]) and np.allclose(grads_d2[0], np.eye(3)[0])


@pytest.mark.slow
def test_audit_catches_fixed_size_batches_accounted_as_poisson(monkeypatch):
    """The accounting of b85596c restored (a fixed-size batch given Poisson sampling's
    replace-one pair): the fixed-batch audit must report a violation at the claim."""
    from dperm.privacy import accountant

    def poisson_components(flat):
        merged = (("gaussian", 2.0 / math.sqrt(flat.gaussian_mu2), 1, 1.0),) if flat.gaussian_mu2 > 0 else ()
        return merged + tuple(("gaussian", 2.0 * r, int(s), float(q)) for r, s, q, _ in flat.sampled) + tuple(
            ("pure", float(e), int(c)) for e, c, _ in flat.pure)

    monkeypatch.setattr(accountant, "_components", poisson_components)
    accountant.clear_cache()
    try:
        result = A.audit("dp_sgd_fixed_batch", 2.0, 1e-2, seed=3)
    finally:
        accountant.clear_cache()
    assert result.violation, str(result)
