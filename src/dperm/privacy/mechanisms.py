"""The general vector mechanism: calibrate T releases of a vector of known replace-one L2
sensitivity through the one accountant, charge the active BudgetAccountant, and draw the
noise of a release event.

delta = 0: L2-Laplace (density ~ exp(-||z|| / scale), Chaudhuri, Monteleoni, Sarwate
2011), epsilon-DP by composition; delta > 0: Gaussian, (epsilon, delta)-DP by Gaussian DP.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable

import numpy as np

from . import events as ev
from .accountant import Calibration, calibrate
from .budget import BudgetAccountant, PrivacyBudget
from .noise import gaussian_noise, l2_laplace_noise

__all__ = ["vector_mechanism", "calibrate_and_charge", "release", "sample_release", "single_release", "charging",
           "charge", "secure_randomness", "budget_part", "next_part"]

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("dperm_budget_accountant", default=None)
_PART: contextvars.ContextVar = contextvars.ContextVar("dperm_budget_part", default=None)


def next_part(accountant: BudgetAccountant) -> int:
    """A part number not yet used in ``accountant``'s charges (one more than the largest;
    public: it counts the parts charged before)."""
    largest = -1

    def walk(node):
        nonlocal largest
        if isinstance(node, ev.BudgetPart):
            largest = max(largest, int(node.part))
            walk(node.event)
        elif isinstance(node, ev.ComposedDpEvent):
            for inner in node.events:
                walk(inner)

    for event in accountant.events:
        walk(event)
    return largest + 1


@contextlib.contextmanager
def budget_part(delta: float, part: int):
    """Within the block, every charge is recorded as part ``part`` of a budget split by
    basic composition, given ``delta`` (:class:`~dperm.privacy.events.BudgetPart`): the
    one accountant then also composes the charges part by part, each part at its own
    delta, and certifies the smaller figure. A :class:`~dperm.DPPipeline` runs each private
    step in its own part, so what its ledger certifies is never more than the sum of what
    its steps were calibrated to. Within a part, a nested part is the outer one."""
    if _PART.get() is not None:
        yield
        return
    token = _PART.set((float(delta), int(part)))
    try:
        yield
    finally:
        _PART.reset(token)


@contextlib.contextmanager
def charging(accountant: BudgetAccountant | None):
    """Within the block, every fit charges its event to ``accountant`` (None: no-op).
    Context-local, so concurrent fits in other threads charge their own accountant."""
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        raise TypeError(f"accountant must be a dperm.BudgetAccountant, got {accountant!r}")
    token = _ACTIVE.set(accountant)
    try:
        yield accountant
    finally:
        _ACTIVE.reset(token)


def charge(event, label: str = "") -> None:
    """Charge ``event`` to the active BudgetAccountant, if any (raises
    BudgetExceededError before the mechanism runs when it would overspend)."""
    accountant = _ACTIVE.get()
    if accountant is not None:
        part = _PART.get()
        if part is not None and not isinstance(event, ev.NoOpDpEvent):
            event = ev.BudgetPart(event, delta=part[0], part=part[1])
        accountant.charge(event, label)


def calibrate_and_charge(make_event: Callable[[float], object], budget: PrivacyBudget, label: str = "") -> Calibration:
    """:func:`dperm.privacy.accountant.calibrate`, then :func:`charge` of the calibrated event."""
    calibration = calibrate(make_event, budget)
    charge(calibration.event, label)
    return calibration


def vector_mechanism(budget: PrivacyBudget, sensitivity: float, steps: int = 1, label: str = "", *,
                     charge_now: bool = True, secure: bool = False, dim: int | None = None) -> Calibration:
    """Calibrate ``steps`` releases of a vector of replace-one L2 ``sensitivity`` to
    ``budget`` (L2-Laplace for delta = 0, Gaussian otherwise) and charge it (unless
    ``charge_now`` is False: the caller then charges a composition that contains it).

    ``Calibration.noise`` is the per-release scale (L2-Laplace) or standard deviation
    (Gaussian); ``Calibration.event`` the composed event. Sensitivity 0 releases nothing
    private: no noise, a no-op event.

    ``secure=True`` (the path of ``random_state=None``): releases of ``dim`` coordinates
    by the floating-point-safe samplers of :mod:`dperm.privacy.secure_release` (Gaussian:
    calibrated for the effective sensitivity of the grid rounding; pure: discrete Laplace
    through the L1 bound), drawn by :func:`release` from the operating system's secure
    generator.
    """
    sensitivity = float(sensitivity)
    steps = int(steps)
    if sensitivity == 0:
        return Calibration(0.0, budget, ev.NoOpDpEvent())
    if secure:
        if budget.is_pure:
            # certified <= requested per release, so T releases at epsilon / T are within budget
            from .accountant import epsilon as certified_epsilon
            from .secure_release import secure_laplace_parameters

            requested = budget.epsilon / steps
            params = secure_laplace_parameters(requested, sensitivity, int(dim))
            event = ev.repeated(ev.SecureLaplaceRelease(params.epsilon, sensitivity, requested, params.grid,
                                                        params.scale_multiple), steps)
            calibration = Calibration(sensitivity / requested, PrivacyBudget(certified_epsilon(event, 0.0), 0.0), event)
            if charge_now:
                charge(event, label)
            return calibration

        def make(x):
            return ev.repeated(ev.gaussian_release(x, sensitivity, secure=True), steps)
    elif budget.is_pure:
        def make(x):
            return ev.repeated(ev.L2LaplaceRelease(x, sensitivity), steps)
    else:
        def make(x):
            return ev.repeated(ev.gaussian_release(x, sensitivity), steps)
    return calibrate_and_charge(make, budget, label) if charge_now else calibrate(make, budget)


def secure_randomness(rng) -> bool:
    """Whether a fit called with ``rng`` (its ``random_state``) takes the floating-point-safe
    path: ``None``, the production default. A seed or a Generator keeps NumPy's
    reproducible floating-point noise (experiments only: predictable from the seed, and
    exposed to the low-order-bit attack of Mironov 2012).

    The one rule every algorithm follows: it builds its release events with
    ``secure=secure_randomness(rng)`` and draws each release with :func:`release`, which
    reads the choice off the event.
    """
    return rng is None


def single_release(event):
    """The one-release event inside ``event`` (a release, or a self-composition of one)."""
    while isinstance(event, ev.SelfComposedDpEvent):
        event = event.event
    return event


def release(rng, value: np.ndarray, event) -> np.ndarray:
    """``value`` released through one release of ``event`` (a release, or a self-composition
    of one: the per-step release of an iterative fit): the floating-point-safe sampler for
    secure events (``g (round(value / g) + K)``, K exact discrete noise from the operating
    system, ``rng`` unused; :mod:`dperm.privacy.secure_release`), and
    ``value + sample_release(rng, event, dim)`` otherwise (bit for bit the seeded path)."""
    one = single_release(event)
    if isinstance(one, ev.GaussianRelease) and one.secure:
        from .secure_release import secure_gaussian_release

        return secure_gaussian_release(value, one.sigma, one.sensitivity)
    if isinstance(one, ev.SecureLaplaceRelease):
        from .secure_release import secure_laplace_release

        return secure_laplace_release(value, one.requested_epsilon, one.sensitivity)
    return value + sample_release(rng, event, value.size)


def exponential_select(rng, scores, epsilon: float, sensitivity: float, *, secure: bool, monotone: bool = False,
                       multiplicities=None) -> int:
    """One draw of the exponential mechanism over ``scores`` (utilities of replace-one
    sensitivity ``sensitivity``): epsilon-DP and epsilon-bounded-range, which is what its
    :class:`~dperm.privacy.events.ExponentialMechanismRelease` is accounted as.

    ``secure`` (the fit's ``random_state`` was None, :func:`secure_randomness`): the exact
    integer sampler of :func:`dperm.privacy.secure_release.secure_exponential_mechanism`
    (scores rounded to a power-of-two grid, the rounding counted in the rate, uniform bits
    from the operating system); otherwise Gumbel-max from ``rng`` (reproducible).

    ``multiplicities``: positive integers k_i; index i is drawn with probability
    proportional to ``k_i`` times its weight (score i standing k_i times), exactly on the
    secure path (:func:`~dperm.privacy.secure_release.secure_exponential_mechanism`)."""
    if secure:
        from .secure_release import secure_exponential_mechanism

        return secure_exponential_mechanism(scores, epsilon, sensitivity, monotone=monotone,
                                            multiplicities=multiplicities)
    from .noise import exponential_mechanism

    if multiplicities is not None:  # k_i exp(eps u_i / (2 Delta)) = exp(eps (u_i + (2 Delta / eps) ln k_i) / (2 Delta))
        per_nat = (1.0 if monotone else 2.0) * float(sensitivity) / float(epsilon)
        scores = np.asarray(scores, dtype=np.float64) + per_nat * np.log(np.asarray(multiplicities, dtype=np.float64))
    return exponential_mechanism(rng, scores, epsilon, sensitivity, monotone=monotone)


def sample_release(rng: np.random.Generator, event, dim: int) -> np.ndarray:
    """Noise of one release of ``event`` (a Gaussian or L2-Laplace release, or a
    self-composition of one): shape ``(dim,)``."""
    release = single_release(event)
    if isinstance(release, ev.NoOpDpEvent):
        return np.zeros(dim)
    if isinstance(release, ev.GaussianRelease):
        return gaussian_noise(rng, release.sigma, dim)
    if isinstance(release, ev.L2LaplaceRelease):
        return l2_laplace_noise(rng, dim, release.scale)
    raise TypeError(f"no sampler for {type(release).__name__}")
