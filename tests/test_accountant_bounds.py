"""Every bound the accountant takes the minimum of is valid on its own, and the minimum never
exceeds basic composition (docs/privacy.md, "Basic composition is always a candidate").

Each route's epsilon is checked against the exact privacy profile of a small composition,
``delta(eps) = E_P[(1 - e^(eps - L))_+]`` with L the summed privacy losses of the parts:
Laplace pairs (an atom at +-eps and a density between; L2-Laplace in one dimension is the
Laplace mechanism), two-outcome bounded-range pairs (the exponential mechanism's worst
shape: losses t and t - eps), and a Gaussian pair, whose expectation given the other
losses is the closed form of Gaussian DP. The integrals are one- and two-dimensional
quadratures, accurate far below the tolerances used.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from dperm.privacy import accountant as acc
from dperm.privacy import events as ev
from dperm.privacy.exact_composition import exact_delta as lattice_delta
from dperm.privacy.gaussian_dp import gaussian_dp_delta, gaussian_dp_epsilon
from dperm.privacy.pld import pld_epsilon


# ---------------------------------------------------------------- the exact profile
def _gaussian_tail(a: float, mu: float) -> float:
    """E[(1 - e^(a - L))_+] for L ~ N(mu^2/2, mu^2) (the Gaussian pair's loss), any real a."""
    if mu == 0:
        return max(0.0, -math.expm1(a))
    return gaussian_dp_delta(mu, a) if a >= 0 else _gaussian_tail_negative(a, mu)


def _gaussian_tail_negative(a: float, mu: float) -> float:
    from scipy.stats import norm

    return float(norm.cdf(-a / mu + mu / 2) - math.exp(a) * norm.cdf(-a / mu - mu / 2))


def _laplace_expectation(f, eps: float) -> float:
    """E[f(L)] for the privacy loss L of a Laplace pair of epsilon eps (under the first)."""
    atoms = 0.5 * f(eps) + 0.5 * math.exp(-eps) * f(-eps)
    middle, _ = integrate.quad(lambda l: 0.25 * math.exp(-(eps - l) / 2) * f(l), -eps, eps,
                               epsabs=1e-13, epsrel=1e-11, limit=200)
    return atoms + middle


def _range_expectation(f, eps: float, t: float) -> float:
    """E[f(L)] for a two-outcome pair with losses t and t - eps (bounded range eps)."""
    q = (1 - math.exp(t - eps)) / (math.exp(t) - math.exp(t - eps))
    p = q * math.exp(t)
    return p * f(t) + (1 - p) * f(t - eps)


def exact_delta(eps: float, laplace=(), ranges=(), mu: float = 0.0) -> float:
    """The exact delta(eps) of Laplace pairs (their epsilons), bounded-range pairs ((eps, t))
    and a Gaussian pair of parameter mu, composed."""
    def compose(parts, shift):
        if not parts:
            return _gaussian_tail(eps - shift, mu)
        kind, value = parts[0]
        rest = parts[1:]
        if kind == "laplace":
            return _laplace_expectation(lambda l: compose(rest, shift + l), value)
        return _range_expectation(lambda l: compose(rest, shift + l), *value)

    return compose([("laplace", e) for e in laplace] + [("range", r) for r in ranges], 0.0)


def _event(laplace=(), ranges=(), mu: float = 0.0):
    parts = [ev.L2LaplaceRelease(scale=1.0 / e, sensitivity=1.0) for e in laplace]
    parts += [ev.ExponentialMechanismRelease(e) for e, _ in ranges]
    if mu > 0:
        parts.append(ev.gaussian_release(2.0 / mu, 2.0))
    return ev.composed(parts)


def _check_valid(value: float, delta: float, **parts) -> None:
    if math.isfinite(value):
        assert exact_delta(value, **parts) <= delta * (1 + 1e-6) + 1e-13, (value, parts)


CASES = [  # small compositions of pure and Gaussian parts, at the deltas the accountant is asked
    dict(laplace=(0.3,), mu=0.5, delta=1e-5),
    dict(laplace=(0.05,), mu=0.2, delta=1e-6),
    dict(laplace=(1.0, 0.5), mu=1.0, delta=1e-5),
    dict(laplace=(0.02, 0.02), mu=0.05, delta=1e-5),
    dict(ranges=((0.4, 0.2),), mu=0.3, delta=1e-5),
    dict(ranges=((0.4, 0.05), (0.4, 0.35)), mu=0.3, delta=1e-6),
    dict(laplace=(0.1,), ranges=((0.2, 0.1),), mu=0.0, delta=1e-5),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_every_route_is_a_valid_bound_on_the_exact_profile(case):
    case = dict(case)
    delta = case.pop("delta")
    flat = acc.flatten(_event(**case)).merged()
    candidates = acc._candidates(flat, delta)
    # the routes of this mix, each at several PLD grids (every grid must be valid)
    for grid in (0.05, 1e-2, 1e-3):
        candidates[f"pld@{grid}"] = pld_epsilon(acc._components(flat), delta, grid)
    assert "exact" in candidates
    assert len([v for v in candidates.values() if math.isfinite(v)]) >= 4
    for name, value in candidates.items():
        _check_valid(value, delta, **case)
    # and the minimum is what the accountant returns
    assert acc.epsilon(_event(**case), delta) == min(acc._candidates(flat, delta).values())


def test_the_exact_profile_is_tight_where_a_closed_form_is_exact():
    # the checks above can fail: a Gaussian alone is exact in closed form, and 1% less
    # epsilon than it is not valid on the exact profile
    mu, delta = 0.7, 1e-5
    eps = gaussian_dp_epsilon(mu, delta)
    assert exact_delta(eps, mu=mu) == pytest.approx(delta, rel=1e-6)
    assert exact_delta(0.99 * eps, mu=mu) > delta
    # a Laplace pair: pure eps is exact (delta 0 at eps, positive just below)
    assert exact_delta(0.3, laplace=(0.3,)) <= 1e-15
    assert exact_delta(0.29, laplace=(0.3,)) > 1e-3


@pytest.mark.parametrize("pure,mu", [([(0.3, 3, True)], 0.0), ([(0.2, 2, False), (0.05, 4, True)], 0.4),
                                     ([(1.0, 1, False)], 1.5)])
def test_the_exact_route_is_the_randomized_response_composition(pure, mu):
    """The lattice sum against an independent enumeration: the randomized-response pairs'
    outcomes multiplied out one by one, the Gaussian pair's tail in closed form."""
    outcomes = {0.0: 1.0}
    for eps, count, _ in pure:
        for _ in range(count):
            up = math.exp(eps) / (1 + math.exp(eps))
            step = {}
            for loss, p in outcomes.items():
                step[loss + eps] = step.get(loss + eps, 0.0) + p * up
                step[loss - eps] = step.get(loss - eps, 0.0) + p * (1 - up)
            outcomes = step
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        enumerated = sum(p * _gaussian_tail(eps - loss, mu) for loss, p in outcomes.items())
        assert lattice_delta(pure, mu, eps) == pytest.approx(enumerated, rel=1e-9, abs=1e-15)


def test_the_basic_candidate_is_valid_and_never_exceeded():
    # pure parts summed plus the Gaussian part at the whole delta
    for laplace, mu, delta in [((0.3,), 0.5, 1e-5), ((0.02, 0.02), 0.05, 1e-5), ((1.0, 0.5), 1.0, 1e-6)]:
        basic = sum(laplace) + gaussian_dp_epsilon(mu, delta)
        _check_valid(basic, delta, laplace=laplace, mu=mu)
        assert acc.epsilon(_event(laplace=laplace, mu=mu), delta) <= basic


@pytest.mark.parametrize("seed", range(6))
def test_the_accountant_never_certifies_more_than_basic_composition(seed):
    """Many pure draws (quantiles, role bits) with a Gaussian model: the PLD's discretization
    alone certified up to 2% more than the parts' sum (issue 33)."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 400))
    eps_draw = float(10 ** rng.uniform(-4, -1))
    mu = float(10 ** rng.uniform(-2, 0.3))
    delta = float(10 ** rng.uniform(-8, -4))
    kind = rng.integers(3)
    if kind == 0:
        draws = [ev.ExponentialMechanismRelease(eps_draw)] * count
    elif kind == 1:
        draws = [ev.DiscreteLaplaceRelease(scale=int(math.ceil(2 / eps_draw)), sensitivity=2)] * count
    else:
        draws = [ev.ExponentialMechanismRelease(eps_draw), ev.L2LaplaceRelease(1.0 / eps_draw, 1.0)] * (count // 2 + 1)
    pure = math.fsum(acc.epsilon(d, 0.0) for d in draws)
    basic = pure + gaussian_dp_epsilon(mu, delta)
    assert acc.epsilon(ev.composed(draws + [ev.gaussian_release(2.0 / mu, 2.0)]), delta) <= basic * (1 + 1e-15)
    # and the pure part on its own never exceeds its sum either
    assert acc.epsilon(ev.composed(draws), delta) <= pure * (1 + 1e-15)


def test_the_measured_excess_of_issue_33_is_gone():
    # 300 bounded-range draws at epsilon 1/3000 and a Gaussian: the PLD alone certifies more
    # than the sum (measured 2% at a total of 0.1); the accountant returns at most the sum
    draws = [ev.ExponentialMechanismRelease(1.0 / 3000)] * 300
    model = ev.gaussian_release(2.0 / 0.01, 2.0)
    delta = 1e-5
    flat = acc.flatten(ev.composed(draws + [model])).merged()
    candidates = acc._candidates(flat, delta)
    basic = 0.1 + gaussian_dp_epsilon(0.01, delta)
    assert candidates["basic"] == pytest.approx(basic)
    assert acc.epsilon(ev.composed(draws + [model]), delta) <= candidates["basic"]


# ------------------------------------------------------------ parts of a budget
def test_basic_composition_of_budget_parts_is_valid_on_the_exact_profile():
    mu, lap, d1, delta = 0.6, 0.2, 4e-6, 1e-5
    gauss = ev.gaussian_release(2.0 / mu, 2.0)
    laplace = ev.L2LaplaceRelease(1.0 / lap, 1.0)
    charged = ev.composed([ev.BudgetPart(gauss, delta=d1, part=0), ev.BudgetPart(laplace, delta=0.0, part=1)])
    split = acc._split_epsilon(charged, delta, None)
    assert split == pytest.approx(gaussian_dp_epsilon(mu, d1) + lap)
    _check_valid(split, delta, laplace=(lap,), mu=mu)
    assert acc.epsilon(charged, delta) <= split
    # the joint composition is a candidate too (a part's delta well below the total)
    assert acc.epsilon(charged, delta) == min(split, acc.epsilon(ev.composed([gauss, laplace]), delta))


def test_parts_whose_deltas_exceed_the_total_are_not_split():
    gauss = ev.gaussian_release(3.0, 2.0)
    charged = ev.composed([ev.BudgetPart(gauss, delta=1e-5, part=0), ev.BudgetPart(gauss, delta=1e-5, part=1)])
    assert acc._split_epsilon(charged, 1e-5, None) is None
    assert acc.epsilon(charged, 1e-5) == acc.epsilon(ev.composed([gauss, gauss]), 1e-5)
    # one part and events outside it: the rest gets the delta left over
    inside = ev.composed([ev.BudgetPart(gauss, delta=4e-6, part=0), gauss])
    assert acc._split_epsilon(inside, 1e-5, None) == pytest.approx(
        gaussian_dp_epsilon(2 / 3.0, 4e-6) + gaussian_dp_epsilon(2 / 3.0, 6e-6), rel=1e-9)


def test_a_budget_part_is_a_note_not_a_mechanism():
    gauss = ev.gaussian_release(3.0, 2.0)
    wrapped = ev.BudgetPart(gauss, delta=1e-6, part=3)
    assert acc.flatten(wrapped).key() == acc.flatten(gauss).key()
    assert acc.delta(wrapped, 0.5) == acc.delta(gauss, 0.5)
    assert ev.from_description(ev.describe(wrapped)) == wrapped
