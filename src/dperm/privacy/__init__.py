"""What a guarantee is, how a mechanism is described (events), and how noise is calibrated
to it (the one accountant). Knows nothing of losses. Replace-one neighbouring relation
throughout: see :mod:`dperm.privacy.events` for the convention.
"""

from . import events
from .accountant import Calibration, calibrate, delta, epsilon
from .budget import BudgetAccountant, BudgetExceededError, PrivacyBudget, PrivacyWarning
from .gaussian_dp import analytic_gaussian_sigma, classical_gaussian_sigma, gaussian_dp_delta, gaussian_dp_epsilon, gaussian_dp_mu
from .mechanisms import calibrate_and_charge, charging, sample_release, vector_mechanism
from .noise import (
    exponential_mechanism,
    gaussian_noise,
    l2_laplace_noise,
    laplace_noise,
    make_rng,
    report_noisy_max,
    symmetric_gaussian_matrix,
)

__all__ = [
    "BudgetAccountant", "BudgetExceededError", "PrivacyBudget", "PrivacyWarning",
    "events", "Calibration", "calibrate", "epsilon", "delta",
    "calibrate_and_charge", "charging", "sample_release", "vector_mechanism",
    "analytic_gaussian_sigma", "classical_gaussian_sigma", "gaussian_dp_delta", "gaussian_dp_epsilon", "gaussian_dp_mu",
    "exponential_mechanism", "gaussian_noise", "l2_laplace_noise", "laplace_noise", "make_rng",
    "report_noisy_max", "symmetric_gaussian_matrix",
]
