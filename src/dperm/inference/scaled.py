"""Least-squares intervals whose privacy noise follows the residual scale, not the bound.

The sufficient-statistics fit (:func:`~dperm.inference.mechanism.newton_inference` with the
squared loss) releases ``X^T y / n`` with sensitivity ``2 R B / n``: its noise grows with
the declared bound B on |y| whatever the errors' scale sigma. Here, following
Avella-Medina, Bradshaw and Loh (2023, M-estimators by noisy Newton steps), the released
statistics are those of a Huber fit whose threshold is a multiple of a *private* residual
scale, so every later release has a sensitivity proportional to sigma_hat instead of B:

1. **Pilot** (``pilot_share`` of ``mu^2``): one sufficient-statistics step from 0, the
   released ``X^T X / n`` and ``X^T y / n`` (sensitivities ``sqrt 2 beta / n``, ``2 R B /
   n``), ``w_p = A^-1 b~`` (ridge t when the Gram does not clear its noise bound).
2. **Residual scale** (``scale_share``): the mean of ``s_i min(|y_i - <w_p, x_i>|, C)``,
   ``C = min(B + R ||w_p||, 2 B)`` public, released with sensitivity ``C / n`` (one row
   moves one term within [0, C]); ``sqrt(pi / 2)`` times it is the residuals' standard
   deviation under normal errors, and ``sigma_hat^2`` is its square less the pilot's own
   error ``tr(G~ S_pilot)`` (floored at twice the release's noise std). The threshold
   ``c = tuning * sigma_hat`` (at most C) is a post-processing.
3. **Huber steps** (the rest): ``steps`` noisy Newton steps of the Huber loss at threshold
   c from ``w_p``, the machinery of :func:`~dperm.inference.mechanism.newton_inference`
   (gradient sensitivity ``2 R min(c, R ||w|| + B) / n``, Hessian ``sqrt 2 beta / n``), and
   at the last point the sandwich's ``M`` (``sqrt 2 L^2 / n``, ``L = R min(c, ...)``).
   The covariance: ``H~^-1 M~ H~^-1 / n`` plus the noise the steps leave, propagated from
   the pilot's noise covariance; refused when the last Hessian does not clear its bound.

Every sensitivity is a function of public values (the bounds, n, and the released w_p and
c); all releases are Gaussian and composed in one event that the accountant calibrates to
the budget and charges before the data is read (adaptive Gaussian-DP composition: each
release is ``mu_j``-GDP given the earlier outputs).

The estimand: the Huber M-estimate at threshold ``c`` (``3 sqrt(pi / 2) E|e|``: 3 standard
deviations for normal errors, 2.77 for exponential ones). For a linear model with errors
independent of x and symmetric about 0, it estimates the same coefficients as least
squares (intercept and slopes); with skewed errors the slopes still agree (errors
independent of x) and the intercept is the errors' Huber location, not their mean; with
errors whose distribution depends on x (skewed and heteroscedastic), or a mean that is
not linear, the slopes differ from least squares' too (docs/inference.md).

References
----------
Avella-Medina, Bradshaw, Loh. Differentially private inference via noisy optimization.
Annals of Statistics 51(5), 2023.
Huber. Robust estimation of a location parameter. Annals of Mathematical Statistics 1964.
"""

from __future__ import annotations

import math

import numpy as np

from ..algorithms.newton import hessian_frobenius_sensitivity
from ..privacy.accountant import calibrate
from ..privacy.budget import PrivacyBudget
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness, single_release
from ..privacy.noise import make_rng
from ..problem.erm import ERMProblem
from ..problem.losses import Huber
from ..result import PrivateFit
from . import mechanism as newton

__all__ = ["scaled_huber_inference", "scaled_outlook", "DEFAULT_TUNING", "DEFAULT_SCALED_STEPS",
           "DEFAULT_LEAST_SQUARES_METHOD"]

# Least squares' default inference fit (``method="auto"``). On the grid of docs/inference.md
# (n 2000 to 1e5, d 2 to 10, epsilon 0.5 to 4, B / sigma 4 to 16) this fit's intervals were
# the narrower in 70 of the 72 cells where either fit gave some (the 2 others at B / sigma 4,
# by 3% and 13%, the second where the sufficient statistics refused 46% of the fits), and it
# refused less (docs/inference.md); what favours the sufficient statistics is a declared bound B below about
# 3 sigma, and sigma is not a public input, so no public rule picks them: an option.
DEFAULT_LEAST_SQUARES_METHOD = "scaled_huber"

# c = tuning * sigma_hat. Under normal errors a Huber fit at 3 sigma has 99.9% of least
# squares' efficiency and clips 0.3% of residuals; the noise of every Huber release grows
# with c, so a larger constant buys nothing there (docs/inference.md, the study).
DEFAULT_TUNING = 3.0
# Huber steps after the pilot (the pilot is within the noise of the least-squares fit, where
# the Huber loss at 3 sigma is nearly quadratic: Newton converges in a step or two).
DEFAULT_SCALED_STEPS = 3
# Shares of mu^2: the pilot's gradient and Gram, the scale; the Huber steps take the rest
# (within it, newton.GLM_SHARES: gradients 0.4, the sandwich's M 0.15, Hessians 0.45).
PILOT_SHARES = (0.10, 0.05)
SCALE_SHARE = 0.05
SEPARATION = 1.0  # the Huber steps' last Hessian: the GLM rule (its noise bounded by t)


def _plans(steps, gradient_share, meat_share):
    pilot = newton.InferenceSchedule(1, (PILOT_SHARES[0],), (PILOT_SHARES[1],), 0.0)
    huber = newton.schedule("huber", DEFAULT_SCALED_STEPS if steps is None else steps, gradient_share, meat_share,
                            "sandwich")
    return pilot, huber


def _leaves(problem: ERMProblem, pilot, huber) -> list:
    dh = hessian_frobenius_sensitivity(problem)  # beta = 1 for the squared and the Huber loss alike
    rest = 1.0 - sum(PILOT_SHARES) - SCALE_SHARE
    return (newton._leaves(pilot, dh) + [(SCALE_SHARE, 1.0)]
            + [(rest * weight, unit) for weight, unit in newton._leaves(huber, dh)])


def _check(problem: ERMProblem, budget: PrivacyBudget, covariance) -> None:
    newton._check(problem, budget)
    if problem.loss.name != "squared":
        raise ValueError("the scaled Huber inference fit is for least squares (the squared loss)")
    if covariance not in (None, "sandwich"):
        raise ValueError(f"the scaled Huber inference fit uses the sandwich covariance, got {covariance!r}")


def _check_tuning(tuning) -> float:
    if isinstance(tuning, bool) or not isinstance(tuning, (int, float)) or not (math.isfinite(tuning) and tuning > 0):
        raise ValueError(f"tuning must be a positive number, got {tuning!r}")
    return float(tuning)


def _scale_release(problem: ERMProblem, w: np.ndarray, event, rng) -> tuple[float, float, float]:
    """``(released mean of s_i min(|r_i|, C), its noise std, C)`` at the public pilot w."""
    B, R = problem.label_bound, problem.data_norm
    cap = min(B + R * float(np.linalg.norm(w)), 2.0 * B)  # |r| <= |y| + |<w, x>|; 2B: a public clip
    unit = cap / problem.n_samples
    weights = 1.0 if problem.sample_weight is None else problem.sample_weight
    residuals = np.abs(problem.margins(w) - np.asarray(problem.y, dtype=np.float64))
    mean_abs = float(np.mean(weights * np.minimum(residuals, cap)))
    noisy = unit * float(release(rng, np.array([mean_abs / unit]), event)[0])
    return noisy, unit * event.sigma, cap


def _residual_scale(mean_abs: float, sd: float, gram: np.ndarray, start) -> float:
    """sigma_hat from the released mean absolute residual at the pilot: ``sqrt(pi / 2)``
    times it is the residuals' standard deviation under normal errors, whose square is
    ``sigma^2`` plus the pilot's own error ``tr(G S_pilot)`` (G the released Gram, S_pilot
    the pilot noise's second moment): that part is taken out, down to the floor ``2 sd``."""
    total = 0.5 * math.pi * mean_abs * mean_abs
    pilot_error = 0.0 if start is None else max(float(np.sum(gram * start)), 0.0)
    floor = 0.5 * math.pi * (2.0 * sd) ** 2
    return math.sqrt(max(total - pilot_error, floor))


def scaled_huber_inference(problem: ERMProblem, budget: PrivacyBudget, *, rng=None, steps: int | None = None,
                           tuning: float = DEFAULT_TUNING, covariance: str | None = None,
                           gradient_share: float | None = None, meat_share: float | None = None,
                           failure_probability: float = 0.05, separation: float | None = None) -> PrivateFit:
    """Least-squares inference with noise proportional to a private residual scale (module notes).

    Parameters
    ----------
    problem : ERMProblem
        The squared loss, no regularizer, no constraint; rows ``||x|| <= data_norm``
        (intercept column included), ``|y| <= label_bound``, weights in [0, 1].
    budget : PrivacyBudget
        delta > 0: (epsilon, delta)-DP under replace-one (Gaussian DP composition).
    rng : None, int or Generator
        None: the floating-point-safe sampler; a seed: NumPy's reproducible noise.
    steps : int or None
        Huber Newton steps after the pilot (None: 3).
    tuning : float
        The Huber threshold in units of the private residual scale (default 3).
    covariance : None or "sandwich"
        The sampling part is the sandwich ``H^-1 M H^-1 / n`` (M released).
    gradient_share, meat_share : float or None
        Within the Huber steps' part of ``mu^2``: the gradients' and M's shares (None: 0.4
        and 0.15; the Hessians take the rest).
    failure_probability : float
        rho of the Hessian noise bounds (utility, not privacy).
    separation : float or None
        The intervals need ``lambda_min(H~) >= separation * t`` for the last Huber Hessian
        (None: 1).

    Returns
    -------
    PrivateFit
        ``coef`` the last Huber iterate; ``info``: ``covariance``, ``sampling_covariance``,
        ``noise_covariance``, ``refused``, ``hessian_noise_bound``, ``residual_variance``
        (``(pi / 2)`` times the squared released mean absolute residual, one noise std
        above: normal errors) and ``threshold`` (c, in the model's units): all
        post-processings of the releases. ``hyperparameters["meat_share"]``: the share of
        ``mu^2`` spent on the intervals alone.
    """
    _check(problem, budget, covariance)
    tuning = _check_tuning(tuning)
    rho = float(failure_probability)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"failure_probability must be in (0, 1), got {failure_probability!r}")
    separation = SEPARATION if separation is None else float(separation)
    if not (math.isfinite(separation) and separation >= 1.0):
        raise ValueError(f"separation must be a finite number >= 1, got {separation!r}")
    pilot, huber = _plans(steps, gradient_share, meat_share)
    secure = secure_randomness(rng)
    rng = make_rng(rng)
    n, d = problem.n_samples, problem.n_features
    leaves = _leaves(problem, pilot, huber)
    calibration = calibrate_and_charge(newton.gaussian_composition(leaves, secure), budget, "inference")
    events = [single_release(e) for e in calibration.event.events]
    T = huber.steps

    # 1. the pilot: one sufficient-statistics step from 0
    w, gram, _, _, _, pilot_steps = newton._newton_steps(problem, np.zeros(d), pilot, events[:1], events[1:2], rng,
                                                         1.0, rho)
    start = newton._noise_covariance(pilot_steps, w)
    # 2. the residual scale at the pilot, and the threshold (post-processing)
    mean_abs, sd, cap = _scale_release(problem, w, events[2], rng)
    mean_abs = max(mean_abs, 2.0 * sd)  # a floor from public values: never 0 or negative
    threshold = min(tuning * _residual_scale(mean_abs, sd, gram, start), cap)
    # 3. Huber steps from the pilot, the sandwich at the last point
    robust = problem._rebuild(loss=Huber(threshold))
    variance_event = events[-1]

    def variance(point, scale):
        return newton._variance_release(robust, point, scale, "sandwich", variance_event, rng)

    w, H, _, _, t, steps_taken = newton._newton_steps(robust, w, huber, events[3:3 + T], events[3 + T:3 + 2 * T],
                                                      rng, separation, rho, variance)
    spread = steps_taken[-1][-1]
    noise = None if start is None else newton._noise_covariance(steps_taken, w, start)
    if spread is None:  # diverged before the last step: no interval (post-processing)
        spread, noise = np.full((d, d), np.inf), None
    info = newton._covariances(H, spread, t, n, separation, noise)
    info["residual_variance"] = 0.5 * math.pi * (mean_abs + sd) ** 2
    info["threshold"] = float(threshold)
    rest = 1.0 - sum(PILOT_SHARES) - SCALE_SHARE
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm="scaled_huber_inference",
        event=calibration.event,
        hyperparameters={"method": "scaled_huber", "steps": T, "tuning": tuning, "covariance": "sandwich",
                         "pilot_share": float(sum(PILOT_SHARES)), "scale_share": SCALE_SHARE,
                         "gradient_share": float(rest * sum(huber.gradient_weights)),
                         "meat_share": float(rest * huber.meat_weight), "failure_probability": rho,
                         "separation": separation},
        info=info,
    )


def scaled_outlook(problem: ERMProblem, budget: PrivacyBudget, *, steps: int | None = None,
                   tuning: float = DEFAULT_TUNING, covariance: str | None = None,
                   gradient_share: float | None = None, meat_share: float | None = None,
                   failure_probability: float = 0.05, separation: float | None = None) -> str | None:
    """The public warning of :func:`~dperm.inference.mechanism.public_outlook` for this fit's
    last Huber Hessian (public inputs only; reads no data)."""
    _check(problem, budget, covariance)
    _check_tuning(tuning)
    pilot, huber = _plans(steps, gradient_share, meat_share)
    calibration = calibrate(newton.gaussian_composition(_leaves(problem, pilot, huber), False), budget)
    last_hessian = single_release(calibration.event.events[3 + 2 * huber.steps - 1])
    return newton.outlook_message(problem, budget, last_hessian.sigma,
                                  SEPARATION if separation is None else float(separation), float(failure_probability))
