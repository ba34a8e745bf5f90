"""The production path: with ``random_state=None`` single-release fits draw their noise
with the floating-point-safe samplers (grid-rounded value plus exact discrete noise from
the OS), accounted at the rounding's effective sensitivity; a seed keeps NumPy's
reproducible path."""

import numpy as np
import pytest

import dperm
from dperm.privacy import events as ev
from dperm.privacy.accountant import epsilon
from dperm.privacy.secure_release import release_grid, secure_laplace_parameters, secure_sensitivity

from test_catalogue import data


@pytest.mark.parametrize("name", ["output_perturbation", "gd_output_perturbation"])
@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_unseeded_fits_release_on_a_power_of_two_grid(name, delta):
    X, y = data("logistic", n=300, d=2)
    fit = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm=name, epsilon=1.0, delta=delta)
    event = fit.event
    if delta > 0:
        assert isinstance(event, ev.GaussianRelease) and event.secure
        assert event.noise_ratio == pytest.approx(event.sigma / secure_sensitivity(event.sensitivity))
        grid = release_grid(event.sensitivity, 2, event.sigma)
    else:
        assert isinstance(event, ev.SecureLaplaceRelease)
        grid = secure_laplace_parameters(event.requested_epsilon, event.sensitivity, 2).grid
    # every released coordinate is an exact multiple of the grid (projection aside: none here)
    assert np.all(np.floor(fit.coef / grid) * grid == fit.coef)
    assert fit.privacy_spent.epsilon <= 1.0 and epsilon(event, delta) <= 1.0 * (1 + 1e-12)
    again = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm=name, epsilon=1.0, delta=delta)
    assert not np.array_equal(again.coef, fit.coef)  # fresh OS randomness


def test_seeded_fits_keep_the_reproducible_numpy_path():
    X, y = data("logistic", n=300, d=2)
    a = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                       random_state=3)
    b = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                       random_state=3)
    assert np.array_equal(a.coef, b.coef) and not a.event.secure


def test_secure_gaussian_costs_only_the_rounding_in_noise():
    X, y = data("logistic", n=300, d=2)
    secure = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5)
    seeded = dperm.minimize(X, y, regularizer=("l2", 0.1), algorithm="output_perturbation", epsilon=1.0, delta=1e-5,
                            random_state=0)
    assert secure.event.sigma == pytest.approx(seeded.event.sigma * (1 + 2**-12), rel=1e-6)
