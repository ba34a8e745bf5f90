"""Renyi-DP curves of dperm's events (the route of repeat-and-select): each against an
independent computation (dp-accounting's own curves where it has the event under dperm's
convention, numerical integration otherwise)."""

import math

import numpy as np
import pytest
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import integrate

from dperm.privacy import events as ev
from dperm.privacy.renyi import ORDERS, UnsupportedRenyiEvent, renyi_curve


def _reference(event):
    accountant = rdp_privacy_accountant.RdpAccountant(orders=list(ORDERS),
                                                       neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(event)
    return np.asarray(accountant._rdp)


def test_gaussian_release_curve_is_lambda_mu_squared_over_two_for_dperms_sensitivity():
    release = ev.gaussian_release(2.0, 0.5)  # sigma 2, replace-one sensitivity 0.5
    np.testing.assert_allclose(renyi_curve(release), ORDERS * (0.5 / 2.0) ** 2 / 2, rtol=1e-14)
    # dp-accounting's RDP accountant reads a bare GaussianDpEvent(z) as sensitivity 1 (not
    # the 2 of its PLD under REPLACE_ONE): dperm's curve is four times that reading
    z = release.noise_multiplier
    np.testing.assert_allclose(renyi_curve(release), 4 * _reference(dp_event.GaussianDpEvent(z)), rtol=1e-12)


def test_laplace_and_randomized_response_curves_match_dp_accounting():
    np.testing.assert_allclose(renyi_curve(dp_event.LaplaceDpEvent(2.5)), _reference(dp_event.LaplaceDpEvent(2.5)),
                               rtol=1e-10)
    rr = dp_event.RandomizedResponseDpEvent(2.0 / (math.e + 1.0), 2)  # epsilon = 1
    np.testing.assert_allclose(renyi_curve(rr), _reference(rr), rtol=1e-10)
    np.testing.assert_allclose(renyi_curve(ev.L2LaplaceRelease(2.0, 2.0)), _reference(rr), rtol=1e-10)


@pytest.mark.parametrize("order", [1.5, 2.0, 8.0, 32.0])
def test_objective_perturbation_curve_integrates_the_loss_bound(order):
    # loss <= eps_J + mu R + mu^2/2 with R Rayleigh: E[exp((lambda - 1) loss)] by quadrature
    release = ev.ObjectivePerturbationRelease("gaussian", 4.0, 1.0, 0.05, 1e-5)
    mu = 0.25
    a = order - 1.0
    log_integrand = lambda r: math.log(r) - r * r / 2 + a * (0.05 + mu * r + mu * mu / 2)  # noqa: E731
    peak = max(1e-9, a * mu)  # the integrand's mode is near r = a mu
    scale = log_integrand(peak + 1.0)
    value, _ = integrate.quad(lambda r: math.exp(log_integrand(r) - scale) if r > 0 else 0.0, 0, peak + 40, limit=200)
    expected = (math.log(value) + scale) / a
    assert renyi_curve(release, [order])[0] == pytest.approx(expected, rel=1e-8)


def test_compositions_add_one_of_takes_the_worst_and_secure_releases_pay_their_slack():
    a, b = ev.gaussian_release(1.0, 0.5), ev.gaussian_release(3.0, 0.5)
    np.testing.assert_allclose(renyi_curve(ev.composed([a, b])), renyi_curve(a) + renyi_curve(b))
    np.testing.assert_allclose(renyi_curve(ev.repeated(a, 3)), 3 * renyi_curve(a))
    np.testing.assert_array_equal(renyi_curve(ev.OneOfRelease([a, b])), renyi_curve(a))
    assert np.all(renyi_curve(ev.gaussian_release(1.0, 0.5, secure=True)) > renyi_curve(a))


def test_events_without_a_curve_are_refused():
    sampled = ev.sampled_releases(ev.gaussian_release(1.0, 1.0), 100, 10, 5, "poisson")
    with pytest.raises(UnsupportedRenyiEvent, match="privacy-loss distribution"):
        renyi_curve(sampled)
    with pytest.raises(UnsupportedRenyiEvent):
        renyi_curve(ev.ApproximateDpRelease(1.0, 1e-6))
    with pytest.raises(ValueError, match="> 1"):
        renyi_curve(ev.gaussian_release(1.0, 1.0), [1.0])


def test_an_approximate_part_gives_slack_that_repeat_and_select_pays_in_delta():
    from dperm.model_selection import selection_event
    from dperm.privacy.accountant import delta, epsilon
    from dperm.privacy.renyi import renyi_curve_and_slack

    gaussian = ev.gaussian_release(5.0, 1.0)
    with_coupling = ev.composed([gaussian, ev.ApproximateDpRelease(1e-40, 1e-9)])
    curve, slack = renyi_curve_and_slack(with_coupling)
    assert slack == 1e-9 and np.allclose(curve, renyi_curve(gaussian))
    plain, coupled = selection_event(gaussian, 10.0), selection_event(with_coupling, 10.0)
    # (1 + e^eps) E[K] slack more delta at any epsilon, and epsilon(delta) no smaller
    assert delta(coupled, 1.0) == pytest.approx(delta(plain, 1.0) + (1 + math.e) * 10 * 1e-9, rel=1e-9)
    assert epsilon(coupled, 1e-5) >= epsilon(plain, 1e-5)
    assert epsilon(selection_event(ev.composed([gaussian, ev.ApproximateDpRelease(0.0, 1e-5)]), 10.0), 1e-5) == math.inf
