"""The events of dperm's mechanisms: dp-accounting ``DpEvent`` trees with typed noise fields.

Every algorithm describes the mechanism it runs as one event tree, built from
dp-accounting's classes (``ComposedDpEvent``, ``SelfComposedDpEvent``,
``PoissonSampledDpEvent``, ``SampledWithoutReplacementDpEvent``, ``RepeatAndSelectDpEvent``)
and the small dperm events below where dp-accounting has none. The one accountant
(:mod:`dperm.privacy.accountant`) composes them.

The replace-one convention, stated once
---------------------------------------
dperm's neighbouring relation is *replace-one*: datasets of equal size that differ in one
row. Every noise field below is the noise **standard deviation** (or scale) next to the
**replace-one L2 sensitivity** Delta of the released quantity (the largest
``||q(D) - q(D')||`` over replace-one neighbours; ``2 L / n`` for a mean of per-example
gradients of norm <= L, ``2 C`` for the sum of a batch of vectors clipped to norm C).

A :class:`GaussianRelease` is a ``GaussianDpEvent`` whose ``noise_multiplier`` is
``sigma / (Delta / 2)``: dp-accounting's ``PLDAccountant`` under
``NeighboringRelation.REPLACE_ONE`` reads ``GaussianDpEvent(z)`` as a Gaussian of standard
deviation z around a sum of per-example vectors of norm <= 1, whose replace-one
sensitivity is 2. So every Gaussian event of dperm can be handed to dp-accounting's
``PLDAccountant(NeighboringRelation.REPLACE_ONE)`` as it is, an independent check of
dperm's accountant (``tests/test_events.py``). dp-accounting's RDP accountant does *not*
double the sensitivity of a plain ``GaussianDpEvent`` under REPLACE_ONE (upstream
google/differential-privacy issue #378): never hand it a bare Gaussian event.

Fixed-size batches
------------------
Under replace-one, a batch of b rows drawn uniformly without replacement from n holds the
differing row with probability q = b/n, and then it has *displaced* a row that the
neighbour's batch holds: given the batch, the two outputs are mixtures whose components
differ by ``f(x_i) - f(x_j)``, up to 2C for vectors clipped to C, not C. They are not
Poisson sampling's pair. The accountant composes, per step, Dong, Roth, Su's (2019)
symmetrized pair of add-or-remove Poisson sampling at twice the shift
(:func:`dperm.privacy.pld.fixed_batch_gaussian_pmf`, which gives the argument), tight for
one step; ``tests/test_accounting_vs_mechanism.py`` checks it against the enumerated
mechanism.
"""

from __future__ import annotations

import math
from typing import Sequence

import attr
from dp_accounting import dp_event as _dpe

__all__ = [
    "DpEvent", "ComposedDpEvent", "SelfComposedDpEvent", "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent", "RepeatAndSelectDpEvent", "NoOpDpEvent",
    "GaussianRelease", "SecureLaplaceRelease", "L2LaplaceRelease", "ExponentialMechanismRelease",
    "ApproximateDpRelease", "ObjectivePerturbationRelease", "OneOfRelease", "BudgetPart", "DiscreteLaplaceRelease", "gaussian_release", "composed", "repeated", "describe",
    "from_description", "sampled_releases",
]

DpEvent = _dpe.DpEvent
ComposedDpEvent = _dpe.ComposedDpEvent
SelfComposedDpEvent = _dpe.SelfComposedDpEvent
PoissonSampledDpEvent = _dpe.PoissonSampledDpEvent
SampledWithoutReplacementDpEvent = _dpe.SampledWithoutReplacementDpEvent
RepeatAndSelectDpEvent = _dpe.RepeatAndSelectDpEvent
NoOpDpEvent = _dpe.NoOpDpEvent


def _positive(instance, attribute, value) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a finite number > 0, got {value!r}")


def _non_negative(instance, attribute, value) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{attribute.name} must be a finite number >= 0, got {value!r}")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class GaussianRelease(_dpe.GaussianDpEvent):
    """One release of ``q(D) + N(0, sigma^2 I)`` with replace-one L2 sensitivity Delta.

    Build it with :func:`gaussian_release`; ``noise_multiplier`` (dp-accounting's field)
    is ``sigma / (Delta / 2)`` by the module's convention.

    Attributes
    ----------
    sigma : float
        Noise standard deviation per coordinate.
    sensitivity : float
        Replace-one L2 sensitivity of the released quantity.
    """

    sigma: float = attr.ib(default=1.0, kw_only=True, validator=_positive)
    sensitivity: float = attr.ib(default=2.0, kw_only=True, validator=_positive)
    secure: bool = attr.ib(default=False, kw_only=True)
    """Drawn by the floating-point-safe sampler (:mod:`dperm.privacy.secure_release`):
    ``sensitivity`` is then the rounded release's effective sensitivity, and the
    accountant adds the sampler's slack (2 tau to epsilon per release, below one ulp)."""

    @property
    def accounted_sensitivity(self) -> float:
        """The sensitivity the release is accounted at: ``sensitivity``, or for a secure
        release the effective sensitivity of its grid rounding (``secure_sensitivity``)."""
        if not self.secure:
            return self.sensitivity
        from .secure_release import secure_sensitivity

        return secure_sensitivity(self.sensitivity)

    @property
    def noise_ratio(self) -> float:
        """sigma / Delta (accounted)."""
        return self.sigma / self.accounted_sensitivity


def gaussian_release(sigma: float, sensitivity: float, *, secure: bool = False) -> GaussianRelease:
    """The event of one Gaussian release of std ``sigma`` and replace-one sensitivity
    (``secure``: drawn by the floating-point-safe sampler, which rounds the value to a
    grid: accounted at the rounding's effective sensitivity)."""
    sigma, sensitivity = float(sigma), float(sensitivity)
    event = GaussianRelease(noise_multiplier=1.0, sigma=sigma, sensitivity=sensitivity, secure=bool(secure))
    return attr.evolve(event, noise_multiplier=sigma / (event.accounted_sensitivity / 2.0))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SecureLaplaceRelease(_dpe.DpEvent):
    """One floating-point-safe pure-DP vector release (:func:`dperm.privacy.secure_release.
    secure_laplace_release`): ``g (round(q/g) + L)`` with L iid discrete Laplace of scale t
    grid steps; pure ``epsilon``-DP for an L2 ``sensitivity`` (through the L1 bound
    ``sqrt(d)`` times the effective sensitivity).

    Attributes
    ----------
    epsilon : float
        What the release certifies (at most ``requested_epsilon``).
    sensitivity : float
        The declared replace-one L2 sensitivity.
    requested_epsilon : float
        The parameter the sampler is called with (it derives g and t from it).
    grid : float
        g, a power of two.
    scale_multiple : int
        t.
    """

    epsilon: float = attr.ib(validator=_positive)
    sensitivity: float = attr.ib(validator=_positive)
    requested_epsilon: float = attr.ib(validator=_positive)
    grid: float = attr.ib(validator=_positive)
    scale_multiple: int = attr.ib()


@attr.s(frozen=True, slots=True, auto_attribs=True)
class L2LaplaceRelease(_dpe.DpEvent):
    """One release of ``q(D) + z`` with density of z proportional to ``exp(-||z|| / scale)``
    (the L2-Laplace mechanism of Chaudhuri, Monteleoni, Sarwate 2011): pure
    ``epsilon = sensitivity / scale``-DP, for an L2 ``sensitivity`` (replace-one)."""

    scale: float = attr.ib(validator=_positive)
    sensitivity: float = attr.ib(validator=_positive)

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ExponentialMechanismRelease(_dpe.DpEvent):
    """One draw of the exponential mechanism (McSherry and Talwar 2007) with parameter
    ``epsilon``: probabilities proportional to ``exp(epsilon u / (2 Delta))`` for utilities
    of replace-one sensitivity Delta. Pure epsilon-DP and, having bounded range,
    ``epsilon^2 / 8``-zCDP (Cesar and Rogers 2021).

    Attributes
    ----------
    epsilon : float
        The mechanism's privacy parameter.
    candidates : int
        Number of outcomes it chooses among (public).
    """

    epsilon: float = attr.ib(validator=_positive)
    candidates: int = attr.ib(default=0)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteLaplaceRelease(_dpe.DpEvent):
    """An integer query plus discrete Laplace noise, ``P(k) ~ exp(-|k| / scale)`` (the
    geometric mechanism; Ghosh, Roughgarden, Sundararajan 2009): exact integer arithmetic,
    so no floating-point attack applies; pure ``sensitivity / scale``-DP for a query of
    replace-one sensitivity ``sensitivity`` (integers).
    """

    scale: int = attr.ib()
    sensitivity: int = attr.ib()

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OneOfRelease(_dpe.DpEvent):
    """One of ``events``, chosen independently of the data (e.g. uniformly at random), the
    choice released with the output: a run of :class:`dperm.model_selection.PrivateSearch`
    that fits one of several candidates.

    Accounted by its Renyi-DP curve only (:mod:`dperm.privacy.renyi`): the pointwise maximum
    of the candidates' curves, valid because the Renyi divergence of two mixtures with the
    same data-independent weights is at most the largest divergence of their components
    (joint quasi-convexity).
    """

    events: tuple = attr.ib(converter=tuple)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ApproximateDpRelease(_dpe.DpEvent):
    """A mechanism known only through one (epsilon, delta) guarantee proved for it (no
    privacy-loss distribution): composed with others by basic composition.

    Used for objective perturbation, whose privacy loss is not that of a Gaussian release
    (the direction of the shift depends on the output); the noise that was drawn is
    recorded in ``noise`` for reference.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee proved for the mechanism (replace-one).
    noise : DpEvent or None
        The noise release inside the mechanism (its fields give the scale).
    extra_epsilon : float
        A part of ``epsilon`` that is not due to ``noise`` (objective perturbation's
        Jacobian term), recorded for reference.
    """

    epsilon: float = attr.ib(validator=_non_negative)
    delta: float = attr.ib(validator=_non_negative)
    noise: _dpe.DpEvent | None = attr.ib(default=None)
    extra_epsilon: float = attr.ib(default=0.0, validator=_non_negative)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ObjectivePerturbationRelease(_dpe.DpEvent):
    """Objective perturbation's release of ``argmin F + Lambda/(2n)||w||^2 + <b, w>/n``
    (Chaudhuri, Monteleoni, Sarwate 2011; Kifer, Smith, Thakurta 2012) for a GLM loss.

    Its privacy loss is the Jacobian term (at most ``jacobian_epsilon``) plus the noise
    term of b, whose shift (norm <= ``sensitivity``) has an output-dependent direction
    in the span of the two differing rows: pure ``jacobian_epsilon + sensitivity/scale``
    for L2-Laplace b (density ``exp(-||b|| / scale)``) and for iid Laplace coordinates
    (``"laplace"``, density ``exp(-||b||_1 / scale)``; there ``sensitivity`` bounds the
    shift's L1 norm, ``sqrt(d) 2 L``); for Gaussian b the bound of
    :mod:`dperm.privacy.shifted_gaussian` (k = 2) at ``delta``. Accounted as a mechanism
    with that one (epsilon, delta) guarantee (basic composition with others).

    Attributes
    ----------
    noise : {"gaussian", "l2_laplace", "laplace"}
    scale : float
        Standard deviation (Gaussian) or scale (L2-Laplace, per-coordinate Laplace) of b.
    sensitivity : float
        Bound on the norm of the shift of b between neighbours (2 L; the L1 norm for
        ``"laplace"``).
    jacobian_epsilon : float
    delta : float
        The delta the guarantee is stated at (0 for L2-Laplace).
    """

    noise: str = attr.ib()
    scale: float = attr.ib(validator=_positive)
    sensitivity: float = attr.ib(validator=_positive)
    jacobian_epsilon: float = attr.ib(validator=_non_negative)
    delta: float = attr.ib(default=0.0, validator=_non_negative)

    @property
    def epsilon(self) -> float:
        if self.noise in ("l2_laplace", "laplace"):
            return self.jacobian_epsilon + self.sensitivity / self.scale
        if self.noise != "gaussian":
            raise ValueError(f"noise must be 'gaussian', 'l2_laplace' or 'laplace', got {self.noise!r}")
        from .shifted_gaussian import shifted_gaussian_epsilon

        return self.jacobian_epsilon + shifted_gaussian_epsilon(self.sensitivity / self.scale, self.delta, 2)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BudgetPart(_dpe.DpEvent):
    """``event``, charged as part of a budget split by basic composition: the mechanism
    of ``event`` and nothing more, with a note of the delta its part was given.

    A :class:`~dperm.privacy.budget.BudgetAccountant` records the charges made inside
    :func:`dperm.privacy.mechanisms.budget_part` (a :class:`~dperm.DPPipeline`'s steps,
    each calibrated to its own (epsilon, delta)) wrapped in this event. The one accountant
    composes the inner events as always (the joint route), and also by basic composition
    of the parts: the events of each ``part`` composed at that part's ``delta``, plus
    whatever is not in a part at the delta left over, when the parts' deltas add up to
    at most the delta asked for; it returns the smaller (docs/privacy.md, "Basic
    composition is always a candidate"). Every figure is computed by the accountant from
    the events themselves: a wrong ``delta`` or ``part`` can make the bound looser, never
    invalid.

    Attributes
    ----------
    event : DpEvent
        The mechanism charged.
    delta : float
        The delta of the part (the delta the step was calibrated at).
    part : int
        Which part of the split (public: the step's position, counted per ledger).
    """

    event: _dpe.DpEvent = attr.ib()
    delta: float = attr.ib(validator=_non_negative)
    part: int = attr.ib(default=0)


def composed(events: Sequence[_dpe.DpEvent]) -> _dpe.DpEvent:
    """The adaptive composition of ``events`` (a single event is returned as is)."""
    events = [e for e in events if not isinstance(e, _dpe.NoOpDpEvent)]
    if not events:
        return _dpe.NoOpDpEvent()
    return events[0] if len(events) == 1 else _dpe.ComposedDpEvent(list(events))


def sampled_releases(release: _dpe.DpEvent, n: int, batch_size: int, steps: int, sampling: str) -> _dpe.DpEvent:
    """``steps`` releases of a batch of ``batch_size`` rows out of n: Poisson sampling with
    rate b/n (``sampling="poisson"``) or uniform fixed-size batches without replacement
    (``"without_replacement"``); full batches when b = n."""
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    if batch_size >= n:
        return repeated(release, steps)
    if sampling == "poisson":
        return repeated(_dpe.PoissonSampledDpEvent(batch_size / n, release), steps)
    return repeated(_dpe.SampledWithoutReplacementDpEvent(int(n), int(batch_size), release), steps)


def repeated(event: _dpe.DpEvent, count: int) -> _dpe.DpEvent:
    """``count`` adaptive repetitions of ``event``."""
    count = int(count)
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    return event if count == 1 else _dpe.SelfComposedDpEvent(event, count)


def from_description(description):
    """The event that :func:`describe` described (for ledgers saved to JSON)."""
    if isinstance(description, dict) and "type" in description:
        name = description["type"]
        cls = globals().get(name) if name in __all__ else getattr(_dpe, name, None)
        if not (isinstance(cls, type) and issubclass(cls, _dpe.DpEvent)):
            raise ValueError(f"unknown event {name!r}")
        fields = {k: from_description(v) for k, v in description.items() if k != "type"}
        return cls(**fields)
    if isinstance(description, list):
        return [from_description(d) for d in description]
    return description


def describe(event: _dpe.DpEvent):
    """A JSON-ready description of an event tree (class names and public fields)."""
    if isinstance(event, _dpe.DpEvent) and attr.has(type(event)):
        out = {"type": type(event).__name__}
        for field in attr.fields(type(event)):
            out[field.name] = describe(getattr(event, field.name))
        return out
    if isinstance(event, (list, tuple)):
        return [describe(e) for e in event]
    if isinstance(event, float):
        return event
    return event
