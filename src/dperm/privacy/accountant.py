"""The one accountant: the (epsilon, delta) of any event of :mod:`dperm.privacy.events`,
by the exact route, and the calibration of a mechanism's noise to a budget.

Routes (each a valid upper bound; where several apply the smallest is returned):

- only full-batch Gaussian releases: Gaussian DP in closed form (Dong, Roth, Su 2019),
  exact, ``mu^2 = sum_t (Delta_t / sigma_t)^2``;
- subsampled Gaussian releases: dp-accounting's privacy-loss distributions
  (:mod:`dperm.privacy.pld`), full-batch releases merged into one Gaussian first (exact:
  composed Gaussians are a Gaussian). Poisson sampling under replace-one takes
  dp-accounting's REPLACE_ONE pair; fixed-size batches drawn without replacement take the
  symmetrized pair of Dong, Roth, Su (2019) at twice the shift
  (:func:`dperm.privacy.pld.fixed_batch_gaussian_pmf`), *not* Poisson's pair: under
  replace-one the swapped-out row moves the output too;
- pure releases (L2-Laplace, exponential mechanism): basic composition, and with
  delta > 0 advanced composition, zCDP and the PLD of the randomized-response pair;
- an :class:`~dperm.privacy.events.ApproximateDpRelease` (a mechanism known only by one
  (epsilon, delta) guarantee) composes by basic composition with the rest;
- repeat-and-select (``RepeatAndSelectDpEvent``, Papernot and Steinke 2022) of runs with a
  Renyi-DP curve (:mod:`dperm.privacy.renyi`: full-batch Gaussian, Laplace, pure and
  objective-perturbation releases and their compositions): the theorem's curve,
  converted by dp-accounting's RDP conversion, its one route.

``calibrate(make_event, budget)`` finds the smallest noise level x at which
``make_event(x)`` is certified within the budget: in closed form where the event is a
composition of full-batch Gaussian (or pure) releases whose noise scales with x, otherwise
by :func:`~dperm.privacy.search.smallest_certified_noise`, which only ever returns points
the accountant certified.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from dp_accounting import dp_event as _dpe

from . import events as ev
from .budget import PrivacyBudget, register_composition
from .gaussian_dp import gaussian_dp_epsilon, gaussian_dp_mu
from .pld import pld_delta, pld_epsilon, pld_grid, renyi_delta, renyi_epsilon, repeat_and_select_curve
from .exact_composition import exact_epsilon
from .pure_dp import pure_composition_epsilon, zcdp_epsilon
from .renyi import ORDERS as RENYI_ORDERS, UnsupportedRenyiEvent, renyi_curve_and_slack
from .search import smallest_certified_noise, step_gdp_mu

__all__ = ["epsilon", "delta", "calibrate", "clear_cache", "flatten", "Calibration", "UnsupportedEventError",
           "ACCOUNTANT_MIN_RATIO"]

# Below this noise ratio sigma / Delta (budgets in the hundreds) subsampled releases are
# accounted as full-batch ones: a valid upper bound (sampling never weakens a Gaussian
# release), computed at once, where the PLD of a nearly noiseless Gaussian spans a huge
# loss range.
ACCOUNTANT_MIN_RATIO = 0.1


class UnsupportedEventError(ValueError):
    """The accountant has no exact route for this event."""


@dataclass
class _Flat:
    """An event tree reduced to what its accounting depends on."""

    gaussian_mu2: float = 0.0  # full-batch Gaussian releases: sum of (Delta / sigma)^2
    sampled: list = field(default_factory=list)  # (noise ratio sigma/Delta, steps, q, fixed-size batch)
    pure: list = field(default_factory=list)  # (epsilon, count, bounded range)
    approximate: list = field(default_factory=list)  # (epsilon, delta), basic composition
    secure_releases: int = 0  # Gaussian releases by the floating-point-safe sampler
    renyi_only: list = field(default_factory=list)  # events with an RDP route only (repeat-and-select)

    def without_approximate(self) -> "_Flat":
        return _Flat(self.gaussian_mu2, list(self.sampled), list(self.pure), [], self.secure_releases,
                     list(self.renyi_only))

    @property
    def empty(self) -> bool:
        return (self.gaussian_mu2 == 0 and not self.sampled and not self.pure and not self.approximate
                and not self.renyi_only)

    def merged(self) -> "_Flat":
        """The same releases with identical ones counted together (a pure release of the
        same epsilon and kind, a sampled Gaussian of the same ratio, rate and batch kind):
        composition is symmetric, so the accounting is the same, and the PLD composes
        each kind once, by self-composition, instead of once per release."""
        pure: dict = {}
        for e, c, b in self.pure:
            pure[(e, b)] = pure.get((e, b), 0) + c
        sampled: dict = {}
        for r, steps, q, fixed in self.sampled:
            sampled[(r, q, fixed)] = sampled.get((r, q, fixed), 0) + steps
        return _Flat(self.gaussian_mu2, [(r, steps, q, fixed) for (r, q, fixed), steps in sampled.items()],
                     [(e, c, b) for (e, b), c in pure.items()], list(self.approximate), self.secure_releases,
                     list(self.renyi_only))

    def key(self) -> tuple:
        """A hashable description of what the accounting depends on (the cache's key)."""
        return (self.gaussian_mu2, tuple(self.sampled), tuple(self.pure), tuple(self.approximate),
                self.secure_releases, tuple(repr(e) for e in self.renyi_only))

    def full_batch_mu2(self) -> float:
        """mu^2 of the Gaussian releases with amplification by sampling ignored."""
        return self.gaussian_mu2 + sum(steps / (r * r) for r, steps, _, _ in self.sampled)


def _gaussian_ratio(event) -> float:
    if isinstance(event, ev.GaussianRelease):
        return event.noise_ratio
    if isinstance(event, _dpe.GaussianDpEvent):  # dp-accounting's own: noise_multiplier z = sigma / (Delta / 2)
        return event.noise_multiplier / 2.0
    raise UnsupportedEventError(f"a sampled event must wrap a Gaussian release, got {type(event).__name__}")


def _flatten(event, flat: _Flat, count: int) -> None:
    if isinstance(event, _dpe.NoOpDpEvent):
        return
    if isinstance(event, _dpe.ComposedDpEvent):
        for inner in event.events:
            _flatten(inner, flat, count)
    elif isinstance(event, ev.BudgetPart):  # a note on how the budget was split, not a mechanism
        _flatten(event.event, flat, count)
    elif isinstance(event, _dpe.SelfComposedDpEvent):
        _flatten(event.event, flat, count * int(event.count))
    elif isinstance(event, _dpe.GaussianDpEvent):
        ratio = _gaussian_ratio(event)
        flat.gaussian_mu2 += count / (ratio * ratio)
        if getattr(event, "secure", False):
            flat.secure_releases += count
    elif isinstance(event, (_dpe.PoissonSampledDpEvent, _dpe.SampledWithoutReplacementDpEvent)):
        fixed_size = isinstance(event, _dpe.SampledWithoutReplacementDpEvent)
        if fixed_size:
            q = event.sample_size / event.source_dataset_size
        else:
            q = float(event.sampling_probability)
        if not 0 < q <= 1:
            raise UnsupportedEventError(f"sampling probability must be in (0, 1], got {q}")
        ratio = _gaussian_ratio(event.event)
        if q >= 1.0:
            flat.gaussian_mu2 += count / (ratio * ratio)
        else:
            flat.sampled.append((ratio, count, q, fixed_size))
        if getattr(event.event, "secure", False):
            # each sampled secure release is within e^(+-tau) of the continuous one (the
            # subsampled mixture too): the same slack per release as a full-batch one
            flat.secure_releases += count
    elif isinstance(event, (ev.L2LaplaceRelease, ev.SecureLaplaceRelease, ev.DiscreteLaplaceRelease)):
        flat.pure.append((event.epsilon, count, False))
    elif isinstance(event, ev.ExponentialMechanismRelease):
        flat.pure.append((event.epsilon, count, True))
    elif isinstance(event, _dpe.RepeatAndSelectDpEvent):
        try:
            renyi_curve_and_slack(event.event)
        except UnsupportedRenyiEvent as err:
            raise UnsupportedEventError(f"repeat-and-select needs runs with a Renyi-DP curve: {err}") from None
        flat.renyi_only.extend([event] * count)
    elif isinstance(event, (ev.ApproximateDpRelease, ev.ObjectivePerturbationRelease)):
        flat.approximate.append((count * event.epsilon, count * event.delta))
    else:
        raise UnsupportedEventError(f"no exact accounting route for {type(event).__name__}")


def flatten(event) -> _Flat:
    """The accounting-relevant content of ``event``."""
    if not isinstance(event, _dpe.DpEvent):
        raise TypeError(f"event must be a DpEvent, got {event!r}")
    flat = _Flat()
    _flatten(event, flat, 1)
    return flat


def _components(flat: _Flat) -> tuple:
    merged = (("gaussian", 2.0 / math.sqrt(flat.gaussian_mu2), 1, 1.0),) if flat.gaussian_mu2 > 0 else ()
    # dp-accounting's noise multipliers: REPLACE_ONE reads z as sigma / (Delta / 2); the
    # fixed-size pair is add-or-remove's at shift Delta, z = sigma / Delta
    return merged + tuple(("fixed_batch_gaussian", r, int(steps), float(q)) if fixed else
                          ("gaussian", 2.0 * r, int(steps), float(q)) for r, steps, q, fixed in flat.sampled) + tuple(
        ("pure", float(e), int(c)) for e, c, _ in flat.pure)


def _step_scale(flat: _Flat) -> tuple[float | None, int | None]:
    if not flat.sampled:
        return None, None
    return (min(step_gdp_mu(q, r / 2.0 if fixed else r) for r, _, q, fixed in flat.sampled),
            max(steps for _, steps, _, _ in flat.sampled))


def _renyi_curve_of_selections(events):
    """Repeat-and-select (Papernot and Steinke 2022) has a Renyi-DP route only: the run's
    curve (:mod:`dperm.privacy.renyi`), the theorem's transform (dp-accounting's), and
    addition over the selections composed. Returns (curve, tv): the search is within total
    variation tv (the runs' slack times their mean number, union bound) of one with the
    curve."""
    total, tv = np.zeros_like(RENYI_ORDERS), 0.0
    for event in events:
        run_curve, slack = renyi_curve_and_slack(event.event)
        total = total + repeat_and_select_curve(run_curve, event.mean, event.shape, RENYI_ORDERS)
        tv += float(event.mean) * slack
    return total, tv


def _renyi_epsilon(events, delta: float) -> float:
    """A total-variation distance tv to a mechanism with the curve costs ``(1 + e^eps) tv``
    of delta: eps is the fixed point of ``eps = conv(delta - (1 + e^eps) tv)`` (conv the
    curve's conversion, decreasing in delta), reached from below and certified by one
    more evaluation."""
    curve, tv = _renyi_curve_of_selections(events)
    if tv == 0.0:
        return renyi_epsilon(curve, RENYI_ORDERS, delta)

    def conv(eps: float) -> float:
        rest = delta - (1.0 + math.exp(min(eps, 700.0))) * tv
        return renyi_epsilon(curve, RENYI_ORDERS, rest) if rest > 0 else math.inf

    eps = 0.0
    for _ in range(16):
        new = conv(eps)
        if new <= eps or not math.isfinite(new):
            eps = max(eps, new)
            break
        eps = new
    if not math.isfinite(eps):
        return math.inf
    for _ in range(8):  # certify: delta - (1 + e^eps) tv certifies eps
        if conv(eps) <= eps:
            return eps
        eps = math.nextafter(eps * (1.0 + 1e-9), math.inf)
    return math.inf


_EPSILON_CACHE: dict = {}
_EPSILON_CACHE_SIZE = 8192


def _epsilon(flat: _Flat, delta: float, grid: float | None = None) -> float:
    """The smallest of the valid bounds of :func:`_candidates` (cached: a ledger composes
    the same charges again at every new charge, a pipeline checks before it charges)."""
    flat = flat.merged()
    key = (flat.key(), delta, grid)
    with _CACHE_LOCK:
        cached = _EPSILON_CACHE.get(key)
    if cached is not None:
        return cached
    value = _epsilon_uncached(flat, delta, grid)
    with _CACHE_LOCK:
        if len(_EPSILON_CACHE) >= _EPSILON_CACHE_SIZE:
            _EPSILON_CACHE.clear()
        _EPSILON_CACHE[key] = value
    return value


def _epsilon_uncached(flat: _Flat, delta: float, grid: float | None = None) -> float:
    if flat.renyi_only:
        if delta <= 0:
            return math.inf
        rest = _Flat(flat.gaussian_mu2, flat.sampled, flat.pure, flat.approximate, flat.secure_releases)
        if rest.empty:
            return _renyi_epsilon(flat.renyi_only, delta)
        # composed with events accounted by other routes: basic composition, delta halved
        half = delta / 2.0
        return math.nextafter(_renyi_epsilon(flat.renyi_only, half) + _epsilon(rest, half, grid), math.inf)
    if flat.secure_releases:
        # The secure sampler's releases are within e^(+-tau) of post-processed Gaussians
        # (dperm.privacy.secure_release): certify at delta e^(-T tau), add 2 T tau.
        from .secure_release import TAU_PER_RELEASE

        tau = flat.secure_releases * TAU_PER_RELEASE
        plain = _Flat(flat.gaussian_mu2, flat.sampled, flat.pure, flat.approximate, 0, flat.renyi_only)
        return math.nextafter(_epsilon(plain, math.nextafter(delta, 0.0), grid) + 2.0 * tau, math.inf)
    if flat.approximate:
        eps_a = sum(e for e, _ in flat.approximate)
        delta_a = sum(d for _, d in flat.approximate)
        rest = flat.without_approximate()
        if rest.empty:
            return eps_a if delta_a <= delta else math.inf
        if delta_a > delta:
            return math.inf
        return eps_a + _epsilon(rest, max(0.0, delta - delta_a), grid)
    if flat.empty:
        return 0.0
    return min(_candidates(flat, delta, grid).values())


def _candidates(flat: _Flat, delta: float, grid: float | None = None) -> dict[str, float]:
    """Every bound the accountant has for ``flat`` at ``delta`` (no approximate, secure or
    Renyi-only part: :func:`_epsilon` takes those off first), by route; each is a valid
    upper bound on its own (``tests/test_accountant_bounds.py`` checks each against the
    exact privacy profile of Laplace and Gaussian compositions), so their minimum is:

    - ``"gaussian_dp"``: only full-batch Gaussian releases, exact;
    - ``"zcdp"``: every mix (a Gaussian release is ``mu^2/2``-zCDP, a pure one
      ``eps^2/2``, bounded range ``eps^2/8``; sampling ignored);
    - ``"basic"``: the pure epsilons summed, plus the rest (Gaussian, sampled) at the
      whole delta: basic composition of a pure and an approximate guarantee;
    - ``"pure"``: pure releases only: basic, advanced and zCDP composition;
    - ``"full_batch"``: sampled Gaussians with sampling ignored (Gaussian DP);
    - ``"pld"``: the privacy-loss distribution of every part, at ``grid`` or at the
      smallest of a few refining grids (every grid is pessimistic, so valid; its
      discretization can exceed the others, which is why they stay candidates).
    """
    has_gaussian = flat.gaussian_mu2 > 0 or bool(flat.sampled)
    if has_gaussian and delta <= 0:
        return {"none": math.inf}
    if not has_gaussian and delta <= 0:
        return {"basic": pure_composition_epsilon(flat.pure, 0.0)}
    if not flat.sampled and not flat.pure:
        return {"gaussian_dp": gaussian_dp_epsilon(math.sqrt(flat.gaussian_mu2), delta)}
    candidates = {}
    # zCDP: valid for every mix (a Gaussian release is mu^2/2-zCDP; sampling ignored)
    rho = flat.full_batch_mu2() / 2.0 + sum(c * e * e / (8.0 if b else 2.0) for e, c, b in flat.pure)
    candidates["zcdp"] = zcdp_epsilon(rho, delta)
    if not has_gaussian:
        candidates["pure"] = pure_composition_epsilon(flat.pure, delta)
    if not flat.sampled:
        # pure and full-batch Gaussian releases: the exact profile of their dominating
        # pairs, on a small lattice (dperm.privacy.exact_composition). No PLD of the same
        # pairs certifies less, so it replaces the PLD.
        mu = math.sqrt(flat.gaussian_mu2)
        upper = min(candidates.values())
        basic = math.fsum(e * c for e, c, _ in flat.pure) + (gaussian_dp_epsilon(mu, delta) if mu > 0 else 0.0)
        exact = exact_epsilon(flat.pure, mu, delta, max(upper, basic))
        if exact is not None:
            candidates["exact"] = exact
            if has_gaussian:
                candidates["basic"] = math.nextafter(basic, math.inf)
            return candidates
    if has_gaussian:
        if flat.pure:
            # basic composition: the pure part is (sum eps, 0)-DP, the rest (eps_rest, delta)-DP
            rest = _Flat(flat.gaussian_mu2, list(flat.sampled))
            candidates["basic"] = math.nextafter(math.fsum(e * c for e, c, _ in flat.pure)
                                                 + _epsilon(rest, delta, grid), math.inf)
        if not flat.pure:
            # sampling ignored: the closed form, and the only route for nearly noiseless steps
            candidates["full_batch"] = gaussian_dp_epsilon(math.sqrt(flat.full_batch_mu2()), delta)
        if flat.sampled and min(r for r, _, _, _ in flat.sampled) < ACCOUNTANT_MIN_RATIO:
            return candidates
    components = _components(flat)
    if grid is not None:
        candidates["pld"] = pld_epsilon(components, delta, grid)
        return candidates
    # Every grid gives a valid (pessimistic) bound, so the smallest over the grids tried
    # is valid too; refine relative to the answer.
    step_mu, steps = _step_scale(flat)
    best, current, pld = min(candidates.values()), pld_grid(math.inf, step_mu, steps), math.inf
    while True:
        pld = min(pld, pld_epsilon(components, delta, current))
        best = min(best, pld)
        finer = pld_grid(best, step_mu, steps)
        if finer >= current * 0.999:
            candidates["pld"] = pld
            return candidates
        current = finer


def _budget_parts(event) -> tuple[dict, list]:
    """The :class:`~dperm.privacy.events.BudgetPart` events at the top level of a
    composition, grouped by (part, delta), and the other events."""
    parts: dict = {}
    rest: list = []

    def walk(node):
        if isinstance(node, _dpe.ComposedDpEvent):
            for inner in node.events:
                walk(inner)
        elif isinstance(node, ev.BudgetPart):
            parts.setdefault((int(node.part), float(node.delta)), []).append(node.event)
        elif not isinstance(node, _dpe.NoOpDpEvent):
            rest.append(node)

    walk(event)
    return parts, rest


def _split_epsilon(event, delta: float, grid: float | None) -> float | None:
    """Basic composition of the budget's parts (None when ``event`` has none): each
    part's events composed at the part's delta, the rest at the delta left over, the
    epsilons added. Valid whenever the deltas add up to at most ``delta``: the parts are
    adaptively composed mechanisms, each (eps_i, delta_i)-DP by the accountant's own
    figure, and basic composition adds both."""
    parts, rest = _budget_parts(event)
    if not parts:
        return None
    used = math.fsum(d for _, d in parts)
    if not used <= delta:
        return None
    terms = [_epsilon(flatten(ev.composed(events)), d, grid) for (_, d), events in parts.items()]
    if rest:
        terms.append(_epsilon(flatten(ev.composed(rest)), max(0.0, math.nextafter(delta - used, 0.0)), grid))
    return math.nextafter(math.fsum(terms), math.inf) if len(terms) > 1 else terms[0]


def epsilon(event, delta: float, *, grid: float | None = None) -> float:
    """The smallest epsilon the exact route certifies for ``event`` at ``delta``
    (replace-one); ``inf`` when no epsilon does (a Gaussian release at delta = 0).

    The smallest of the valid bounds the accountant has: the joint composition of every
    release (its routes, :func:`_candidates`, basic composition among them), and, where
    the event holds :class:`~dperm.privacy.events.BudgetPart` events, basic composition
    of those parts at their own deltas. So it never certifies more than basic composition
    of what it composes.

    ``grid``: a PLD discretization to use instead of refining (a calibration certifies at
    one grid and reports what it certified).
    """
    delta = float(delta)
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ValueError(f"delta must be a number in [0, 1), got {delta}")
    joint = _epsilon(flatten(event), delta, grid)
    split = _split_epsilon(event, delta, grid)
    return joint if split is None else min(joint, split)


def delta(event, epsilon: float) -> float:
    """The smallest delta the exact route certifies for ``event`` at ``epsilon``."""
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    return _delta(flatten(event), epsilon)


def _delta(flat: _Flat, epsilon: float) -> float:
    if flat.renyi_only:
        curve, tv = _renyi_curve_of_selections(flat.renyi_only)

        def selection_delta(eps: float) -> float:
            return renyi_delta(curve, RENYI_ORDERS, eps) + (1.0 + math.exp(min(eps, 700.0))) * tv

        rest = _Flat(flat.gaussian_mu2, flat.sampled, flat.pure, flat.approximate, flat.secure_releases)
        if rest.empty:
            return min(1.0, selection_delta(epsilon))
        # composed with events of other routes: basic composition, epsilon halved (as
        # epsilon() halves delta)
        half = epsilon / 2.0
        return min(1.0, math.nextafter(selection_delta(half) + _delta(rest, half), math.inf))
    if flat.secure_releases:
        # the secure sampler's slack (dperm.privacy.secure_release): delta(eps) of the
        # continuous releases at eps - 2 T tau, times e^(T tau); both below one ulp
        from .secure_release import TAU_PER_RELEASE

        tau = flat.secure_releases * TAU_PER_RELEASE
        plain = _Flat(flat.gaussian_mu2, flat.sampled, flat.pure, flat.approximate, 0)
        inner = _delta(plain, max(0.0, math.nextafter(epsilon - 2.0 * tau, 0.0)))
        return min(1.0, math.nextafter(inner * (1.0 + 2.0 * tau), math.inf))
    extra = 0.0
    if flat.approximate:
        eps_a = sum(e for e, _ in flat.approximate)
        extra = sum(d for _, d in flat.approximate)
        flat = flat.without_approximate()
        if flat.empty:
            return extra if epsilon >= eps_a else 1.0
        if epsilon < eps_a:
            return 1.0
        epsilon -= eps_a
    if flat.empty:
        return min(1.0, extra)
    if not flat.sampled and not flat.pure:
        from .gaussian_dp import gaussian_dp_delta

        return min(1.0, extra + gaussian_dp_delta(math.sqrt(flat.gaussian_mu2), epsilon))
    if not flat.sampled and not flat.gaussian_mu2 and epsilon >= pure_composition_epsilon(flat.pure, 0.0):
        return min(1.0, extra)
    step_mu, steps = _step_scale(flat)
    grid = pld_grid(max(epsilon, 1e-3), step_mu, steps)
    return min(1.0, extra + pld_delta(_components(flat), epsilon, grid))


# ------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`: the noise level and the guarantee certified there."""

    noise: float
    spent: PrivacyBudget
    event: object


_CACHE: dict = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 4096


def clear_cache() -> None:
    """Forget cached calibrations (benchmarks measuring cold calibration call this)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _EPSILON_CACHE.clear()
    from . import pld

    pld._full_batch_pld.cache_clear()
    pld._fixed_batch_step.cache_clear()
    pld._pure_pld.cache_clear()


def _scaling_part(make_event: Callable[[float], object]):
    """For events whose Gaussian/pure parts either scale with x or stay fixed:
    (fixed mu^2, scaling mu^2 at x = 1, fixed pure, scaling pure epsilon at x = 1), or None."""
    f1, f2, f3 = flatten(make_event(1.0)), flatten(make_event(2.0)), flatten(make_event(3.0))
    if f1.sampled or f1.approximate != f2.approximate or f1.approximate != f3.approximate:
        return None
    scaling_mu2 = (f1.gaussian_mu2 - f2.gaussian_mu2) * 4.0 / 3.0
    fixed_mu2 = f1.gaussian_mu2 - scaling_mu2
    if not math.isclose(fixed_mu2 + scaling_mu2 / 9.0, f3.gaussian_mu2, rel_tol=1e-9, abs_tol=1e-300):
        return None
    if len(f1.pure) != len(f2.pure):
        return None
    fixed_pure, scaling_pure = [], []
    for (e1, c1, b1), (e2, c2, b2) in zip(f1.pure, f2.pure):
        if c1 != c2 or b1 != b2:
            return None
        if math.isclose(e1, e2, rel_tol=1e-12):
            fixed_pure.append((e1, c1, b1))
        elif math.isclose(e1, 2.0 * e2, rel_tol=1e-9):
            scaling_pure.append((e1, c1, b1))
        else:
            return None
    return f1, max(fixed_mu2, 0.0), max(scaling_mu2, 0.0), fixed_pure, scaling_pure


def _closed_form(make_event, budget: PrivacyBudget, parts):
    """x for events with no sampled part: Gaussian DP or basic pure composition."""
    f1, fixed_mu2, scaling_mu2, fixed_pure, scaling_pure = parts
    eps_target = budget.epsilon - sum(e for e, _ in f1.approximate)
    delta_target = budget.delta - sum(d for _, d in f1.approximate)
    if eps_target <= 0 or delta_target < 0:
        raise ValueError("the fixed parts of the mechanism alone spend the whole budget")
    if scaling_mu2 > 0 and not f1.pure:
        if delta_target <= 0:
            raise ValueError("the Gaussian mechanism needs delta > 0")
        spare = gaussian_dp_mu(eps_target, delta_target) ** 2 - fixed_mu2
        if spare <= 0:
            raise ValueError("the fixed parts of the mechanism alone spend the whole budget")
        return math.sqrt(scaling_mu2 / spare)
    if scaling_mu2 == 0 and fixed_mu2 == 0 and scaling_pure:
        # basic composition; with delta > 0 the search may still find less noise
        fixed = sum(e * c for e, c, _ in fixed_pure)
        scaling = sum(e * c for e, c, _ in scaling_pure)
        if eps_target - fixed <= 0:
            raise ValueError("the fixed parts of the mechanism alone spend the whole budget")
        return scaling / (eps_target - fixed)
    return None


def calibrate(make_event: Callable[[float], object], budget: PrivacyBudget, *, rtol: float = 1e-4) -> Calibration:
    """The smallest noise level x (to relative precision ``rtol``) at which the mechanism
    ``make_event(x)`` is certified within ``budget``, and what is certified there.

    ``make_event(x)`` must describe a mechanism that gets more private as x grows (its
    noise scales grow with x). The returned ``spent`` is never above ``budget``: it is
    what the accountant certified at the returned x. Raises ValueError when no noise level
    meets the budget (for example fixed parts that spend it all, or a Gaussian at delta 0).
    """
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    key = (repr(make_event(1.0)), repr(make_event(2.0)), budget.epsilon, budget.delta, rtol)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        x, spent_epsilon, certified = cached
        event = make_event(x)
        # a hit only counts when the event at x is the very event that was certified
        if repr(event) == certified:
            return Calibration(x, PrivacyBudget(spent_epsilon, budget.delta), event)
    x, spent_epsilon = _calibrate(make_event, budget, rtol)
    event = make_event(x)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = (x, spent_epsilon, repr(event))
    return Calibration(x, PrivacyBudget(spent_epsilon, budget.delta), event)


def _certify_upwards(make_event, x: float, budget: PrivacyBudget, grid=None) -> tuple[float, float]:
    """Nudge x up until the accountant certifies it (closed forms may round just above)."""
    for _ in range(200):
        spent = epsilon(make_event(x), budget.delta, grid=grid)
        if spent <= budget.epsilon:
            return x, spent
        x = x * (1 + 1e-12) + 1e-300
    raise ValueError("no noise level meets the budget")


def _calibrate(make_event, budget: PrivacyBudget, rtol: float) -> tuple[float, float]:
    parts = _scaling_part(make_event)
    basic = None
    if parts is not None:
        x = _closed_form(make_event, budget, parts)
        if x is not None:
            if budget.delta == 0 or parts[2] > 0:  # exact: pure at delta 0, or Gaussian DP
                return _certify_upwards(make_event, x, budget)
            basic = _certify_upwards(make_event, x, budget)  # pure at delta > 0: basic composition
            try:
                found = smallest_certified_noise(lambda v: epsilon(make_event(v), budget.delta), budget.epsilon,
                                                 0.5 * basic[0], floor=basic[0] * 1e-8, rtol=rtol, ceiling=basic[0])
            except ValueError:
                return basic
            spent = epsilon(make_event(found), budget.delta)
            return (found, spent) if found < basic[0] else basic
    if budget.delta == 0:
        probe = flatten(make_event(1.0))
        if probe.gaussian_mu2 > 0 or probe.sampled:
            raise ValueError("the Gaussian mechanism needs delta > 0")

    def flat_at(x):
        return flatten(make_event(x))

    # Sampling ignored (a valid upper bound on the noise needed): where that already
    # gives nearly noiseless steps, it is the answer (see ACCOUNTANT_MIN_RATIO).
    target_mu = gaussian_dp_mu(budget.epsilon, budget.delta) if budget.delta > 0 else None
    probe = flat_at(1.0)
    steps = max((s for _, s, _, _ in probe.sampled), default=None)
    if probe.sampled and not probe.pure and not probe.approximate and target_mu is not None:
        x_full = _solve_monotone(lambda x: math.sqrt(flat_at(x).full_batch_mu2()) - target_mu)
        if x_full is not None and min(r for r, _, _, _ in flat_at(x_full).sampled) < ACCOUNTANT_MIN_RATIO:
            return _certify_upwards(make_event, x_full, budget)
    grid = None
    if steps is not None and target_mu is not None:
        grid = pld_grid(budget.epsilon, target_mu / math.sqrt(steps), steps)

    def eps_at(x):
        return epsilon(make_event(x), budget.delta, grid=grid)

    guess, slope = _clt_guess(flat_at, target_mu, budget)
    x = smallest_certified_noise(eps_at, budget.epsilon, guess, floor=guess * 1e-8, rtol=rtol,
                                 ceiling=guess * 1e10, factor=1.25 if slope is not None else 2.0, slope=slope)
    return x, eps_at(x)


def _solve_monotone(h, lo: float = 1e-12, hi: float = 1e12) -> float | None:
    """The root in log x of a function decreasing in x (bisection on a log scale)."""
    try:
        if h(lo) < 0 or h(hi) > 0:
            return None
    except (OverflowError, ZeroDivisionError):
        return None
    a, b = math.log(lo), math.log(hi)
    for _ in range(200):
        m = 0.5 * (a + b)
        try:
            value = h(math.exp(m))
        except OverflowError:
            value = math.inf
        if value > 0:
            a = m
        else:
            b = m
        if b - a < 1e-10:
            break
    return math.exp(b)


def _clt_mu(flat: _Flat) -> float:
    """The central-limit Gaussian-DP parameter of the whole event (Bu, Dong, Long, Su 2020),
    pure releases counted at their epsilon: only a guess."""
    total = flat.gaussian_mu2 + sum(c * e * e for e, c, _ in flat.pure)
    for r, steps, q, fixed in flat.sampled:
        exponent = 1.0 / (r * r) * (4.0 if fixed else 1.0)  # a fixed-size step shifts by twice as much
        total += steps * q * q * math.expm1(exponent) if exponent < 700 else math.inf
    return math.sqrt(total)


def _clt_guess(flat_at, target_mu, budget: PrivacyBudget) -> tuple[float, float | None]:
    """A starting noise level and the slope d log(epsilon) / d log(x) there, both from
    the central-limit model (never used as a guarantee)."""
    if target_mu is None:
        return 1.0, None
    approximate = flat_at(1.0).approximate
    eps_rest = budget.epsilon - sum(e for e, _ in approximate)
    delta_rest = budget.delta - sum(d for _, d in approximate)
    if eps_rest <= 0 or delta_rest <= 0:
        return 1.0, None
    mu_target = gaussian_dp_mu(eps_rest, delta_rest) if approximate else target_mu
    x0 = _solve_monotone(lambda x: _clt_mu(flat_at(x)) - mu_target)
    if x0 is None:
        return 1.0, None
    x0 *= 1.05
    h = 0.01

    def log_eps(x):
        return math.log(max(gaussian_dp_epsilon(_clt_mu(flat_at(x)), budget.delta), 1e-300))

    try:
        slope = (log_eps(x0 * math.exp(h)) - log_eps(x0 * math.exp(-h))) / (2 * h)
    except (OverflowError, ValueError):
        return x0, None
    return x0, (slope if math.isfinite(slope) and slope < 0 else None)


register_composition(epsilon, flatten)  # the ledgers (BudgetAccountant) compose with this accountant
