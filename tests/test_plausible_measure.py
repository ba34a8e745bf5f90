"""The plausible base measure of a feature's centre and spread draws (issue 30): public,
so the draws stay epsilon-DP (checked on the exact output law the fit's own draws have,
on every replace-one pair of small columns), and at small budgets it keeps 0/1 columns
apart where the uniform measure lost them."""

import itertools
import math
import warnings

import numpy as np
import pytest

import dperm.preprocessing.numeric as numeric
from dperm.preprocessing import PrivateScaler
from dperm.preprocessing.quantiles import (SENSITIVITY, centre_grid, plausible_centres, plausible_spreads,
                                           scores_from_counts)


def _captured_draws(monkeypatch, X, **kwargs):
    """Fit a PrivateScaler and return the arguments of each of its draws (counts, q,
    candidates, epsilon, log_prior): the law the fit actually sampled from."""
    calls = []
    real = numeric.select_quantile

    def spy(counts, q, candidates, epsilon, rng=None, log_prior=None, grouped=False):
        calls.append((counts, q, candidates, epsilon, None if log_prior is None else np.asarray(log_prior, dtype=float)))
        return real(counts, q, candidates, epsilon, rng, log_prior, grouped)

    monkeypatch.setattr(numeric, "select_quantile", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = PrivateScaler(**kwargs).fit(X)
    return scaler, calls


def _law(call):
    counts, q, _, epsilon, log_prior = call
    logits = epsilon * scores_from_counts(*counts, q) / (2 * SENSITIVITY)
    if log_prior is not None:
        logits = logits + log_prior
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def test_centre_and_spread_laws_on_every_replace_one_pair(monkeypatch):
    """Exhaustive: columns of 3 values from {-2, 0, 1, 30} (a negative value, the zero atom,
    values inside and outside the measure's home), every replace-one neighbour. The centre
    draw's exact output law (the fit's own counts and base measure), and the spread draw's
    given the same released centre, change by at most a factor e^epsilon; the measure
    itself is the same for both neighbours (public)."""
    domain = [-2.0, 0.0, 1.0, 30.0]
    eps_total = 0.6  # two draws: 0.3 each
    worst = {"centre": 0.0, "spread": 0.0}
    laws, priors, eps = {}, set(), None
    for column in itertools.product(domain, repeat=3):
        _, calls = _captured_draws(monkeypatch, np.array(column).reshape(-1, 1), epsilon=eps_total, random_state=0)
        laws[column] = np.log(_law(calls[0]))
        priors.add(calls[0][4].tobytes())  # the base measure
        eps = calls[0][3]
    assert eps == pytest.approx(eps_total / 2)
    assert len(priors) == 1  # the same for every column: public
    for column, law in laws.items():
        for value in domain:
            other = laws[(value,) + column[1:]]
            worst["centre"] = max(worst["centre"], float(np.max(np.abs(law - other))))
    # the spread given one released centre (the fit's own counts at each centre value)
    from dperm.preprocessing.quantiles import log_grid, off_centre_counts

    radii = log_grid()
    radii = radii[radii > 0]
    for centre in (0.0, 1.0, -2.0, 30.0):
        prior = plausible_spreads(radii, centre)
        for column in itertools.product(domain, repeat=3):
            for value in domain:
                logs = []
                for col in (column, (value,) + column[1:]):
                    call = (off_centre_counts(np.sort(np.array(col)), centre, radii), 0.5, radii, eps, prior)
                    logs.append(np.log(_law(call)))
                worst["spread"] = max(worst["spread"], float(np.max(np.abs(logs[0] - logs[1]))))
    assert 0.4 * eps < worst["centre"] <= eps * (1 + 1e-9)
    assert 0.4 * eps < worst["spread"] <= eps * (1 + 1e-9)


def test_the_fit_samples_from_the_plausible_measure(monkeypatch):
    """The fit's centre draw takes centre_grid's weights plus plausible_centres', its spread
    draw plausible_spreads at the released centre: the laws checked above are the ones
    sampled; base_measure="uniform" keeps the earlier draws."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(300, 1)).astype(float)
    scaler, calls = _captured_draws(monkeypatch, X, epsilon=0.05, random_state=1)
    grid, base = centre_grid()
    np.testing.assert_allclose(calls[0][4], plausible_centres(grid, base))
    radii = calls[1][2]
    np.testing.assert_allclose(calls[1][4], plausible_spreads(radii, scaler.centre_[0]))
    _, uniform = _captured_draws(monkeypatch, X, epsilon=0.05, random_state=1, base_measure="uniform")
    np.testing.assert_array_equal(uniform[0][4], base)
    assert uniform[1][4] is None
    with pytest.raises(ValueError, match="base_measure"):
        PrivateScaler(base_measure="flat").fit(X)


def test_plausible_measure_shape():
    grid, base = centre_grid()
    log_prior = plausible_centres(grid, base)
    p = np.exp(log_prior - log_prior.max())
    p /= p.sum()
    assert p[grid == 0].sum() == pytest.approx(numeric_zero_mass())
    assert plausible_centres(grid, base, zero=0.0)[grid == 0] == base[grid == 0]  # no atom: 0 at its own weight
    assert p[grid < 0].sum() < 0.1  # negative centres are rare in real columns
    home = (np.abs(grid) >= 1e-2) & (np.abs(grid) <= 1e4) & (grid > 0)
    assert np.all(log_prior[home] == base[home])  # no cost inside the home decades
    assert log_prior[grid == 1e9] < log_prior[grid == 1e4] - 4.9  # 5 decades out
    # the round values between two grid points share one weight (few runs for the sampler)
    assert np.count_nonzero(np.diff(log_prior)) < 2000
    radii = grid[grid > 0]
    spread = plausible_spreads(radii, 0.0)
    assert spread[radii == 1.0] == 0 and spread[radii == 1e3] < -2.0 and spread[radii == 1e9] < spread[radii == 1e4] - 4.9
    assert plausible_spreads(radii, 2000.0)[radii == 1e3] == 0  # relative to the centre's scale
    assert plausible_spreads(radii, 2000.0)[radii == 1.0] < -3.0


def numeric_zero_mass():
    from dperm.preprocessing import quantiles

    return quantiles.ZERO_MASS


def test_a_binary_column_keeps_its_two_values_apart_at_a_tiny_budget():
    """A 0/1 column with a budget at which the draws are mostly noise (epsilon n / 4 = 1.5
    nats, loanapp's per-draw budget): under the uniform measure most draws map 0 and 1
    to one value; under the plausible one most keep them apart."""
    rng = np.random.default_rng(5)
    X = (rng.random((1400, 1)) < 0.3).astype(float)

    def kept(measure):
        out = 0
        for seed in range(40):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = PrivateScaler(epsilon=0.0086, base_measure=measure, random_state=seed).fit(X)
            zero, one = np.clip((np.array([0.0, 1.0]) - s.centre_[0]) / s.spread_[0], -1, 1)
            out += abs(one - zero) >= 0.05
        return out

    assert kept("uniform") <= 8  # 4 of 40 at these seeds
    assert kept("plausible") >= 24  # 28 of 40


def test_large_budgets_follow_the_data_at_any_scale():
    """Where the data can speak, the measure does not pull the draws: columns centred at
    3e6, -500 and 0.001 keep centres inside their data and spreads of their scale."""
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(3e6, 2e5, 5000), rng.normal(-500, 30, 5000), rng.normal(1e-3, 1e-4, 5000)])
    for seed in range(3):
        s = PrivateScaler(epsilon=1.0, random_state=seed).fit(X)
        assert 2.8e6 < s.centre_[0] < 3.2e6 and -530 < s.centre_[1] < -470 and 0.8e-3 < s.centre_[2] < 1.2e-3
        assert 2e5 < s.spread_[0] < 1.2e6 and 30 < s.spread_[1] < 200 and 1e-4 < s.spread_[2] < 6e-4


def test_the_preprocessor_passes_base_measure_and_refuses_a_bad_one_before_any_charge():
    import pandas as pd

    from dperm.preprocessing import PrivatePreprocessor
    from dperm.privacy.budget import BudgetAccountant

    frame = pd.DataFrame({"a": np.arange(200.0) % 2, "b": np.arange(200.0)})
    fitted = {}
    for measure in ("plausible", "uniform"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pre = PrivatePreprocessor(base_measure=measure, epsilon=0.05, delta=1e-6, random_state=0).fit(frame)
        assert pre.scaler_.base_measure == measure
        fitted[measure] = pre.scaler_.centre_
    assert not np.array_equal(fitted["plausible"], fitted["uniform"])
    accountant = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="base_measure"):
        PrivatePreprocessor(base_measure="flat", epsilon=0.5, accountant=accountant).fit(frame)
    assert accountant.spent is None  # refused before the role release or any draw was charged
