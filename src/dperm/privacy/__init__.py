"""What a guarantee is, and how noise is calibrated to it.

Knows nothing of losses. Replace-one neighbouring relation throughout.
"""

from .budget import BudgetAccountant, BudgetExceededError, PrivacyBudget, PrivacyWarning
from .calibrate import (
    NoiseCalibration,
    analytic_gaussian_sigma,
    calibrate_vector_mechanism,
    classical_gaussian_sigma,
    exponential_mechanism_composition_epsilon,
    exponential_mechanism_step_epsilon,
    gaussian_dp_delta,
    gaussian_dp_epsilon,
    gaussian_dp_mu,
    gaussian_steps_epsilon,
    gaussian_steps_sigma,
    pure_composition_epsilon,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_sigma,
)
from .phases import GaussianPhase, calibrate_phase_noise_ratio, phases_epsilon
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
    "GaussianPhase", "calibrate_phase_noise_ratio", "phases_epsilon",
    "NoiseCalibration", "analytic_gaussian_sigma", "calibrate_vector_mechanism",
    "classical_gaussian_sigma", "exponential_mechanism_composition_epsilon",
    "exponential_mechanism_step_epsilon", "gaussian_dp_delta", "gaussian_dp_epsilon",
    "gaussian_dp_mu", "gaussian_steps_epsilon", "gaussian_steps_sigma",
    "pure_composition_epsilon", "subsampled_gaussian_epsilon", "subsampled_gaussian_sigma",
    "exponential_mechanism", "gaussian_noise", "l2_laplace_noise", "laplace_noise", "make_rng",
    "report_noisy_max", "symmetric_gaussian_matrix",
]
