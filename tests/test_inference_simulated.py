"""f_test(method="simulated"): the Wald statistic against its law under H0 simulated from
the released fit (Alabi and Vadhan 2022; dperm.inference.simulated).

What is checked: it reads nothing but the released fit and public values (the same
p-value from a fit rebuilt from those fields alone; nothing charged, even under an
active accountant); the simulated fits carry the original's noise (the same calibrated
releases); it rejects under a clear alternative; and (slow) its p-values are uniform
under H0."""

import warnings

import numpy as np
import pytest
from scipy.stats import kstest

import dperm
from dperm.inference import simulated as sim
from dperm.inference.scaled import scaled_huber_inference
from dperm.privacy import BudgetAccountant, PrivacyBudget
from dperm.privacy.mechanisms import charging, single_release
from dperm.problem import ERMProblem
from dperm.result import PrivateFit


def _ball(rng, n, d):
    z = rng.standard_normal((n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return z * rng.uniform(size=(n, 1)) ** (1.0 / d)


def _data(n, slope, seed, d=3):
    rng = np.random.default_rng(seed)
    X = _ball(rng, n, d)
    return X, X @ np.full(d, slope) + 0.5 + rng.standard_normal(n)


def _fit(X, y, seed=0, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dperm.DPLinearRegression(epsilon=1.0, y_bounds=(-8, 8), inference=True, random_state=seed,
                                        **kwargs).fit(X, y)


def test_reads_only_the_released_fit_and_charges_nothing():
    X, y = _data(2000, 0.05, seed=1)
    ledger = BudgetAccountant(1.0, 1e-5)
    reg = _fit(X, y, accountant=ledger)
    charged = list(ledger.events)
    with charging(ledger):  # even with the fit's accountant active around the call
        result = reg.f_test(method="simulated", draws=19, random_state=7)
    assert list(ledger.events) == charged  # a post-processing: nothing charged
    assert result["method"] == "simulated" and result["draws"] == 19
    assert result["wald"] == reg.f_test()["wald"]  # the same statistic, another reference law
    # the same p-value from a fit rebuilt from the released fields and public values alone
    fit = reg.fits_[0]
    released = PrivateFit(coef=fit.coef.copy(), privacy_spent=fit.privacy_spent, algorithm=fit.algorithm,
                          hyperparameters={"tuning": fit.hyperparameters["tuning"]},
                          info={k: fit.info[k] for k in ("hessian", "threshold")})
    again = sim.simulated_null_test(released, [0, 1, 2], result["wald"], n_samples=2000,
                                    data_norm=reg._effective_norm(), label_bound=float(reg.label_bound),
                                    intercept_scaling=1.0, draws=19, random_state=7)
    assert again["p_value"] == result["p_value"]


def test_simulated_fits_carry_the_original_noise():
    """Re-running the mechanism at the fit's spent budget calibrates the same releases."""
    X, y = _data(2000, 0.0, seed=2)
    fit = _fit(X, y).fits_[0]
    rng = np.random.default_rng(0)
    problem = ERMProblem(_ball(rng, 2000, 3), np.clip(rng.standard_normal(2000) / 8, -1, 1), "squared",
                         data_norm=np.sqrt(2.0), label_bound=1.0, intercept_scaling=1.0)
    again = scaled_huber_inference(problem, fit.privacy_spent, rng=3)
    assert [single_release(e).sigma for e in again.event.events] == pytest.approx(
        [single_release(e).sigma for e in fit.event.events], rel=1e-9)


def test_null_model_projects_in_the_design_metric():
    """H0 on x0 only with a correlated design: the free coefficients absorb what x0
    explained, and the null residual variance grows by the rest of it."""
    G = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    w0, s0 = sim._null_model(np.array([2.0, 1.0, 0.3]), G, [0], 1.0)
    assert w0 == pytest.approx([0.0, 2.0, 0.3])  # 1 + 0.5 * 2
    assert s0 ** 2 == pytest.approx(1.0 + 4.0 * 0.75)  # x0's variance beyond x1: 1 - 0.25


def test_rejects_a_clear_alternative_and_not_a_clear_null():
    X, y = _data(2000, 0.5, seed=3)
    strong = _fit(X, y).f_test(method="simulated", draws=19, random_state=1)
    assert strong["p_value"] == pytest.approx(1 / 20) and strong["draws_refused"] == 0  # no draw reaches it
    X, y = _data(2000, 0.0, seed=4)
    reg = _fit(X, y)
    assert reg.f_test()["p_value"] > 0.5  # this dataset's statistic is unremarkable under H0 ...
    assert reg.f_test(method="simulated", draws=19, random_state=1)["p_value"] > 0.2  # ... and here too


def test_refusals_and_public_errors():
    X, y = _data(300, 0.0, seed=5)
    refused = _fit(X, y)
    assert refused.inference_.refused
    result = refused.f_test(method="simulated")
    assert result["p_value"] == 1.0 and result["draws"] == 0
    X, y = _data(2000, 0.0, seed=6)
    with pytest.raises(ValueError, match="method must be one of"):
        _fit(X, y).f_test(method="bootstrap")
    with pytest.raises(ValueError, match="draws must be"):
        _fit(X, y).f_test(method="simulated", draws=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ssp = dperm.DPLinearRegression(epsilon=1.0, y_bounds=(-8, 8), random_state=0,
                                       inference={"method": "sufficient_statistics"}).fit(X, y)
    with pytest.raises(ValueError, match="default inference fit"):
        ssp.f_test(method="simulated")


@pytest.mark.slow
def test_simulated_p_values_are_uniform_under_the_null_slow():
    """n = 2000, d = 3, epsilon 1, 150 datasets under H0, 39 draws each: the p-values (on
    the grid k / 40) are not far from uniform (Kolmogorov-Smirnov at 1%, after a jitter
    within the grid cell) and the 5% test rejects at most 10%."""
    p = []
    for r in range(150):
        X, y = _data(2000, 0.0, seed=[51, r])
        p.append(_fit(X, y, seed=r).f_test(method="simulated", draws=39, random_state=r)["p_value"])
    p = np.array(p)
    jitter = p - np.random.default_rng(0).uniform(0, 1 / 40, size=p.size)
    assert kstest(jitter, "uniform").pvalue > 0.01
    assert np.mean(p <= 0.05) <= 0.10


def test_refused_draws_are_left_out_and_too_few_refuse_the_test(monkeypatch):
    """The observed fit passed the refusal, so refused draws are left out of the
    reference law; with fewer than MIN_ACCEPTED draws left, p-value 1 (never a rejection)."""
    X, y = _data(2000, 0.5, seed=3)
    reg = _fit(X, y)
    real = sim.scaled_huber_inference
    calls = {"n": 0}

    def every_other_refused(*args, **kwargs):
        fit = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] % 2:
            fit.info["refused"] = True
        return fit

    monkeypatch.setattr(sim, "scaled_huber_inference", every_other_refused)
    half = reg.f_test(method="simulated", draws=39, random_state=1)
    assert half["draws_refused"] == 20 and half["p_value"] == pytest.approx(1 / 20)  # 19 left, none reach W
    monkeypatch.setattr(sim, "scaled_huber_inference",
                        lambda *a, **k: PrivateFit(np.zeros(4), PrivacyBudget(1.0, 1e-5), "scaled_huber_inference",
                                                   info={"refused": True}))
    none = reg.f_test(method="simulated", draws=19, random_state=1)
    assert none["draws_refused"] == 19 and none["p_value"] == 1.0
