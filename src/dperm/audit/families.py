"""The audit scenario of each mechanism family: problem, hyper-parameters, worst-case
neighbours, and the budget at which the family runs with half its noise.

Every scenario uses the huberized hinge (width 1/2, ``L = data_norm = 1``) and the
canary pair of :func:`~dperm.audit.neighbours.label_flip_pair`, in dimension d with
n = 64 rows (so that a delta of 1e-2 stays below 1/n), and keeps every margin the
canary meets below ``1 - h = 1/2`` in absolute value, where its gradient is exactly
``-y x``. There each mechanism's released output, projected on ``e_1``, separates the
two datasets by exactly the sensitivity its accounting assumes:

- ``output_perturbation``: with an l2 penalty mu and zero rows elsewhere, the exact
  minimizers are ``+-1 / (n mu)``, ``2 L / (n mu)`` apart (the bound; n mu = 6.4 keeps
  them in the linear regime). Gaussian noise when delta > 0, L2-Laplace (d = 1, where it
  is the Laplace law and its privacy loss reaches epsilon) when delta = 0.
- ``gd_output_perturbation``: in the linear regime the two GD paths satisfy
  ``Delta_{t+1} = (1 - eta mu) Delta_t + 2 eta L / n`` with equality, the recursion the
  calibration sums.
- ``objective_perturbation``: the perturbed minimizer is ``(S_D - b) / (n mu)``, the
  noise vector b of sensitivity 2L shifted by the canary's ``+-1``; the Jacobian factor
  is 1 there (no curvature), so its share of epsilon is slack the audit cannot see.
- ``noisy_gd`` (average iterate) and ``dp_gd`` (last iterate): a step size small enough
  that the noisy path stays in the linear regime; T full-batch steps then shift the last
  iterate by ``T eta 2L/n`` against noise ``eta sigma sqrt(T)``: exactly the
  ``sqrt(T) (2L/n) / sigma`` of the Gaussian-DP composition. The average iterate sees
  ``sqrt(3)/2`` of it.
- ``dp_sgd``: one Poisson-subsampled step (rate 1/2) from w = 0: the output is the
  canary's ``+-1`` when sampled plus the Gaussian noise, exactly the replace-one
  subsampled Gaussian pair the accountant composes.
- ``dp_sgd_fixed_batch``: the same step with a fixed-size batch of half the rows drawn
  without replacement, on :func:`~dperm.audit.neighbours.swapped_row_pair` (every row
  ``(e_1, +1)``, the canary's label flipped in D'): a batch holding the canary on D'
  has displaced a row whose gradient points the other way, so the outputs differ by
  ``2 * 2L/b`` with probability b/n: add-or-remove Poisson sampling at twice the shift.
  Accounted with Poisson's replace-one pair (dperm before 0.1.1) it runs with too
  little noise, and this audit catches it.
- ``exponential_mechanism``: the net ``{-r, 0, r}`` of the ball of radius r = 1/2;
  scores ``S_D w`` with ``S_D = S +- 1``. The privacy loss of the point ``+r`` approaches
  epsilon when the other rows push the mass to ``-r`` (``S < 0``): then the normalizers
  of D and D' differ by about ``e^{eps/2}`` on top of the score's ``e^{eps/2}``.
- ``dp_fw_l1``: one Frank-Wolfe step over the L1 ball in d = 1 picks the vertex ``+-R``
  by report-noisy-max (Gumbel) on scores ``-+R grad``; the canary moves the logit of
  ``+R`` by exactly the step epsilon, and the anchor rows' offset S puts D' in the tail
  where the likelihood ratio of that vertex approaches ``e^eps``.
- ``sufficient_statistics`` and ``adassp`` (squared loss, the same canary pair: x = e_1,
  y = +-1): ``X^T X`` and ``lambda_min(X^T X)`` are the same on D and D', and ``X^T y``
  moves by exactly ``2 e_1 = 2 R B``, its sensitivity. The shares put 98% of the Gaussian-DP
  budget on ``X^T y`` and an l2 penalty ``n mu = 640`` makes the ridge system nearly
  ``640 I`` (its noise about 1% of it): the released ``w_1`` is then close to
  ``(b_1 + e_1) / 640``, the Gaussian pair of ``sqrt(0.98)`` of the composition's mu.
- ``dp_newton`` (double noise, squared loss, the same canary pair, one step from w = 0):
  the canary's gradient ``-y e_1 / n`` moves by exactly ``2 L_0 / n`` (``L_0 = R B``, its
  sensitivity at w = 0), while the Hessian, its trace and so the eigenvalue shift have the
  same law on D and D'. 98% of the Gaussian-DP budget goes to the gradient and ``mu = 10``
  makes the Hessian nearly ``10 I``: the released ``w_1`` is ``-(g~_1) / (10 + 1/n +
  lambda_0)`` plus the direction noise, of std ``||g~|| / (n lambda^2)`` times its
  multiplier (a few % of the gradient noise); the Gaussian pair of ``sqrt(0.98) mu``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from .halving import gaussian_halving_epsilon, gdp_epsilon, gdp_mu, poisson_halving_epsilon, pure_halving_epsilon
from .neighbours import NeighbourPair, label_flip_pair, swapped_row_pair

__all__ = ["Scenario", "Family", "FAMILIES", "family", "SUITE"]

N_SAMPLES = 64
_LOSS = "huberized_hinge"
_NOISE_STD = 0.05  # target std of the released coordinate in the gradient families (linear regime: 10 std)


@dataclass(frozen=True)
class Scenario:
    """One audit's fixed inputs: the problem declaration, hyper-parameters and pair."""

    loss: str
    regularizer: object
    constraint: object
    hyperparameters: dict
    pair: NeighbourPair
    data_norm: float = 1.0


@dataclass(frozen=True)
class Family:
    """A mechanism family: how to build its scenario and how to halve its noise.

    ``build(epsilon_claim, delta, epsilon_run)`` returns the :class:`Scenario`;
    ``halving(epsilon, delta)`` the epsilon at which the family's noise is half the
    noise the claim ``(epsilon, delta)`` needs. ``suite`` holds the claims of the slow
    test suite and of the table of docs/audit.md.
    """

    algorithm: str
    build: Callable[[float, float, float], Scenario]
    halving: Callable[[float, float], float]
    suite: tuple = field(default_factory=tuple)
    name: str = ""
    """The scenario's name where an algorithm has several (``dp_sgd_fixed_batch``);
    the algorithm's name otherwise."""

    @property
    def key(self) -> str:
        return self.name or self.algorithm


def _output_perturbation(eps, delta, eps_run):
    d = 3 if delta > 0 else 1  # L2-Laplace projected from d > 1 is no longer Laplace
    return Scenario(_LOSS, ("l2", 0.1), None, {}, label_flip_pair(N_SAMPLES, d))


def _gd_output_perturbation(eps, delta, eps_run):
    d = 3 if delta > 0 else 1
    return Scenario(_LOSS, ("l2", 0.1), None, {"steps": 20}, label_flip_pair(N_SAMPLES, d))


_OBJECTIVE_MU = 0.5
_OBJECTIVE_SHARES = {"jacobian_share": 0.5, "output_share": 0.01}


def _objective_perturbation(eps, delta, eps_run):
    d = 3 if delta > 0 else 1
    return Scenario(_LOSS, ("l2", _OBJECTIVE_MU), None, dict(_OBJECTIVE_SHARES), label_flip_pair(N_SAMPLES, d))


def _objective_noise_epsilon(eps: float, n: int, mu: float, loss_smoothness: float) -> float:
    """The epsilon left for the noise vector b of objective perturbation (Chaudhuri et
    al. 2011; Kifer et al. 2012; Iyengar et al. 2019): ``(1 - s) eps - ln(1 + beta /
    (Lambda + n mu))``, Lambda the extra ridge, here required to be 0."""
    eps_1 = (1.0 - _OBJECTIVE_SHARES["output_share"]) * eps
    if loss_smoothness / math.expm1(_OBJECTIVE_SHARES["jacobian_share"] * eps_1) > n * mu:
        raise ValueError("the audit scenario of objective_perturbation assumes no extra ridge")
    return eps_1 - math.log1p(loss_smoothness / (n * mu))


def _objective_halving(eps: float, delta: float) -> float:
    """Objective perturbation's b-noise halved: its budget ``eps_b`` maps to
    ``eps_GDP(2 mu(eps_b, delta_1), delta_1)`` (Gaussian) or ``2 eps_b`` (L2-Laplace)."""
    n, mu, beta = N_SAMPLES, _OBJECTIVE_MU, 1.0
    s = _OBJECTIVE_SHARES["output_share"]
    eps_b = _objective_noise_epsilon(eps, n, mu, beta)
    if delta > 0:
        delta_1 = (1.0 - s) * delta
        target = gdp_epsilon(2.0 * gdp_mu(eps_b, delta_1), delta_1)
    else:
        target = 2.0 * eps_b
    return (target + math.log1p(beta / (n * mu))) / (1.0 - s)


def _gd_step_size(steps: int, delta: float, eps_run: float) -> float:
    """eta with std(w_T) = eta T (2L/n) / mu(eps_run, delta) equal to _NOISE_STD."""
    return _NOISE_STD * N_SAMPLES * gdp_mu(eps_run, delta) / (2.0 * steps)


def _noisy_gd(eps, delta, eps_run):
    T = 10
    eta = _gd_step_size(T, delta, eps_run)
    return Scenario(_LOSS, None, ("l2_ball", 10.0), {"steps": T, "step_size": eta}, label_flip_pair(N_SAMPLES, 3))


def _dp_gd(eps, delta, eps_run):
    T = 10
    eta = _gd_step_size(T, delta, eps_run)
    return Scenario(_LOSS, None, None, {"steps": T, "step_size": eta, "output": "last"}, label_flip_pair(N_SAMPLES, 3))


_SGD_BATCH = N_SAMPLES // 2  # Poisson rate 1/2


def _dp_sgd(eps, delta, eps_run):
    # One step from w = 0: the canary's margin is 0, in the linear regime whatever eta.
    hyper = {"batch_size": _SGD_BATCH, "steps": 1, "sampling": "poisson", "step_size": 1.0, "output": "last"}
    return Scenario(_LOSS, None, ("l2_ball", 10.0), hyper, label_flip_pair(N_SAMPLES, 3))


def _dp_sgd_halving(eps: float, delta: float) -> float:
    return poisson_halving_epsilon(eps, delta, _SGD_BATCH / N_SAMPLES, 1)


def _dp_sgd_fixed_batch(eps, delta, eps_run):
    hyper = {"batch_size": _SGD_BATCH, "steps": 1, "sampling": "without_replacement", "step_size": 1.0,
             "output": "last"}
    return Scenario(_LOSS, None, ("l2_ball", 10.0), hyper, swapped_row_pair(N_SAMPLES, 3))


def _dp_sgd_fixed_batch_halving(eps: float, delta: float) -> float:
    """The epsilon the accountant certifies for one fixed-size-batch step at half the
    noise its claim needs (the pair has no closed form to halve)."""
    from ..privacy import events as ev
    from ..privacy.accountant import calibrate, epsilon
    from ..privacy.budget import PrivacyBudget

    def step(sigma):
        return ev.SampledWithoutReplacementDpEvent(N_SAMPLES, _SGD_BATCH, ev.gaussian_release(sigma, 2.0))

    sigma = calibrate(step, PrivacyBudget(eps, delta)).noise
    return epsilon(step(sigma / 2.0), delta)


def _tail_offset(eps: float) -> float:
    """Anchor offset S = 1 - 4 / eps: puts the logit of the rare output near -2 on D'
    at the claim and near -4 at twice its epsilon, where the likelihood ratio of a
    binary (or three-point) output is close to e^eps and its frequency still
    measurable with a few thousand runs."""
    return max(1.0 - 4.0 / eps, -(N_SAMPLES - 2.0))


def _exponential_mechanism(eps, delta, eps_run):
    pair = label_flip_pair(N_SAMPLES, 1, offset=_tail_offset(eps))
    return Scenario(_LOSS, None, ("l2_ball", 0.5), {"alpha": 0.25}, pair)  # net {-1/2, 0, 1/2}


def _dp_fw_l1(eps, delta, eps_run):
    pair = label_flip_pair(N_SAMPLES, 1, offset=_tail_offset(eps))
    return Scenario(_LOSS, None, ("l1_ball", 1.0), {"steps": 1, "output": "last"}, pair)


_LEAST_SQUARES_MU = 10.0  # n mu = 640: the ridge system is close to 640 I


def _sufficient_statistics(eps, delta, eps_run):
    pair = label_flip_pair(N_SAMPLES, 3)
    return Scenario("squared", ("l2", _LEAST_SQUARES_MU), None, {"shares": (0.02, 0.98)}, pair)


def _adassp(eps, delta, eps_run):
    pair = label_flip_pair(N_SAMPLES, 3)
    return Scenario("squared", ("l2", _LEAST_SQUARES_MU), None, {"shares": (0.01, 0.01, 0.98)}, pair)


def _dp_newton(eps, delta, eps_run):
    pair = label_flip_pair(N_SAMPLES, 3)
    hyper = {"steps": 1, "mechanism": "double_noise", "gradient_share": 0.98, "trace_share": 0.5}
    return Scenario("squared", ("l2", _LEAST_SQUARES_MU), None, hyper, pair)


def _by_delta(eps: float, delta: float) -> float:
    return gaussian_halving_epsilon(eps, delta) if delta > 0 else pure_halving_epsilon(eps)


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family("output_perturbation", _output_perturbation, _by_delta, ((2.0, 1e-2), (2.0, 0.0))),
        Family("gd_output_perturbation", _gd_output_perturbation, _by_delta, ((2.0, 1e-2),)),
        Family("objective_perturbation", _objective_perturbation, _objective_halving, ((2.0, 1e-2),)),
        Family("noisy_gd", _noisy_gd, gaussian_halving_epsilon, ((2.0, 1e-2),)),
        Family("dp_gd", _dp_gd, gaussian_halving_epsilon, ((2.0, 1e-2),)),
        Family("dp_sgd", _dp_sgd, _dp_sgd_halving, ((2.0, 1e-2),)),
        Family("dp_sgd", _dp_sgd_fixed_batch, _dp_sgd_fixed_batch_halving, ((2.0, 1e-2),), name="dp_sgd_fixed_batch"),
        Family("exponential_mechanism", _exponential_mechanism, pure_halving_epsilon, ((2.0, 0.0),)),
        Family("dp_fw_l1", _dp_fw_l1, pure_halving_epsilon, ((2.0, 0.0),)),
        Family("sufficient_statistics", _sufficient_statistics, gaussian_halving_epsilon, ((2.0, 1e-2),)),
        Family("adassp", _adassp, gaussian_halving_epsilon, ((2.0, 1e-2),)),
        Family("dp_newton", _dp_newton, gaussian_halving_epsilon, ((2.0, 1e-2),)),
    )
}

# (algorithm, epsilon, delta) of every audit of the slow suite and of docs/audit.md
SUITE: tuple = tuple((name, eps, delta) for name, fam in FAMILIES.items() for eps, delta in fam.suite)


def family(algorithm: str) -> Family:
    """The audit family of ``algorithm`` (an algorithm's or a scenario's name); ValueError
    naming the audited ones otherwise."""
    try:
        return FAMILIES[algorithm]
    except KeyError:
        raise ValueError(f"no audit scenario for {algorithm!r}; audited: {', '.join(FAMILIES)}") from None
