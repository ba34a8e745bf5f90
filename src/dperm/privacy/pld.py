"""The adapter to dp-accounting's privacy-loss distributions (PLD): the one module of dperm
that touches dp-accounting's internals.

It builds the PLD of a list of components exactly as dp-accounting's ``PLDAccountant``
builds the PLD of the corresponding events (``NeighboringRelation.REPLACE_ONE``), with two
additions that dp-accounting lacks:

- a cache of full-batch Gaussian PLDs (a calibration search composes the same fixed
  phases with every candidate);
- a self-composition that skips dp-accounting's exact size test ``size ** count`` on a
  sparse PMF (a Python integer with ``count log10(size)`` digits: hours at T ~ 1e9),
  sending the PMF straight to the dense path that test would choose (bitwise the same).

The second reads private attributes of ``PrivacyLossDistribution`` (``_pmf_remove``,
``_pmf_add``, ``_symmetric``) and of ``pld_pmf`` (``_MAX_PMF_SPARSE_SIZE``). The Renyi-DP
route of repeat-and-select (:func:`repeat_and_select_curve`) calls the RDP module's
private ``_compute_rdp_repeat_and_select`` (Papernot and Steinke 2022, Theorems 2 and 6)
on a curve computed by dperm, since dp-accounting's ``RdpAccountant`` only takes its own
events as runs. :func:`check_internals` verifies all of them and ``tests/test_events.py``
fails loudly if a new dp-accounting changes them; the supported versions are pinned in pyproject.toml.

Components
----------
``("gaussian", z, steps, q)``: ``steps`` releases of dp-accounting's ``GaussianDpEvent(z)``,
Poisson-subsampled with rate q (q = 1: full batch); ``("fixed_batch_gaussian", z, steps, q)``:
``steps`` Gaussian releases of a fixed-size batch (rate q = b/n, drawn without replacement)
under replace-one, z = sigma / Delta (see :func:`fixed_batch_gaussian_pmf`);
``("pure", epsilon, count)``: ``count`` pure epsilon-DP releases (their dominating pair, the
randomized-response PLD).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np

__all__ = ["SUPPORTED_VERSIONS", "check_internals", "pld_epsilon", "pld_delta", "pld_grid", "PLD_FINEST_GRID",
           "fixed_batch_gaussian_pmf", "hockey_stick_curve",
           "repeat_and_select_curve", "renyi_epsilon", "renyi_delta"]

# dp-accounting versions whose internals this module was checked against.
SUPPORTED_VERSIONS = ("0.4.4", "0.7")  # [lower, upper)


def check_internals() -> None:
    """Raise RuntimeError if dp-accounting's internals used here are missing."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld

    probe = pld.from_gaussian_mechanism(1.0, value_discretization_interval=0.1)
    missing = [name for name in ("_pmf_remove", "_pmf_add", "_symmetric") if not hasattr(probe, name)]
    if not hasattr(pld_pmf, "_MAX_PMF_SPARSE_SIZE") or not hasattr(pld_pmf, "SparsePLDPmf"):
        missing.append("pld_pmf._MAX_PMF_SPARSE_SIZE / SparsePLDPmf")
    for name in ("create_pmf_pessimistic_connect_dots", "create_pmf"):
        if not callable(getattr(pld_pmf, name, None)):
            missing.append(f"pld_pmf.{name}")
    dense = probe._pmf_remove.to_dense_pmf() if hasattr(probe, "_pmf_remove") else None
    if dense is not None:
        missing += [f"DensePLDPmf.{name}" for name in ("_lower_loss", "_probs", "_infinity_mass", "_discretization")
                    if not hasattr(dense, name)]
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    if not callable(getattr(rdp, "_compute_rdp_repeat_and_select", None)):
        missing.append("rdp_privacy_accountant._compute_rdp_repeat_and_select")
    if missing:
        raise RuntimeError(f"dp-accounting internals changed ({', '.join(missing)}); dperm supports "
                           f"dp-accounting >= {SUPPORTED_VERSIONS[0]}, < {SUPPORTED_VERSIONS[1]}")


def _self_composed(pld, count: int):
    """``pld.self_compose(count)``, computed as dp-accounting computes it, without its
    exact size test ``size ** count`` on a sparse PMF: a Python integer with
    ``count log10(size)`` digits, which took hours at DP-SGD's paper schedule
    (T = n^2 ~ 1e9 single-example steps). Where that test would send the PMF to the
    dense FFT path, it is sent there directly (the same computation, bitwise)."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    limit = math.log(getattr(pld_pmf, "_MAX_PMF_SPARSE_SIZE", 1000))

    def dense(pmf):
        if isinstance(pmf, pld_pmf.SparsePLDPmf) and pmf.size > 1 and count * math.log(pmf.size) > limit:
            return pmf.to_dense_pmf()
        return pmf

    remove, add, symmetric = pld._pmf_remove, pld._pmf_add, pld._symmetric  # checked by check_internals
    pld = PrivacyLossDistribution(dense(remove), None if symmetric else dense(add))
    return pld.self_compose(count)


@functools.lru_cache(maxsize=64)
def _full_batch_pld(noise_multiplier: float, steps: int, grid: float):
    """``steps`` full-batch Gaussian releases: one Gaussian of std ``z / sqrt(steps)``, as
    ``PLDAccountant`` builds it. Cached: a calibration search composes the same fixed
    (full-batch) phases with every candidate, and their PLD is the costliest to build."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_gaussian_mechanism(standard_deviation=noise_multiplier / math.sqrt(steps),
                                       value_discretization_interval=grid,
                                       neighboring_relation=NeighboringRelation.REPLACE_ONE)


def _gaussian_pld(noise_multiplier: float, steps: int, q: float, grid: float):
    """The PLD of ``steps`` Poisson-subsampled (rate q; q = 1: plain) Gaussian releases of
    dp-accounting noise multiplier z under REPLACE_ONE, built exactly as its
    ``PLDAccountant`` builds it (subsampled: the subsampled Gaussian's PLD self-composed
    ``steps`` times, by :func:`_self_composed`). Subsampled PLDs are not cached: at
    T ~ 1e9 one takes gigabytes."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    if q >= 1.0:
        return _full_batch_pld(noise_multiplier, steps, grid)
    single = pld.from_gaussian_mechanism(standard_deviation=noise_multiplier, value_discretization_interval=grid,
                                         sampling_prob=q, neighboring_relation=NeighboringRelation.REPLACE_ONE)
    return _self_composed(single, steps)


def hockey_stick_curve(pmf, epsilons: np.ndarray) -> np.ndarray:
    """``delta(eps) = E[(1 - e^(eps - L))_+] + P(L = inf)`` of a dense dp-accounting PLD pmf
    at sorted ``epsilons`` (vectorized: dp-accounting's own loops in Python)."""
    losses = (np.arange(pmf.size) + pmf._lower_loss) * pmf._discretization
    probs = np.asarray(pmf._probs, dtype=np.float64)
    # tail sums over losses >= eps: sum p and sum p e^(-L), from the top down
    tail_mass = np.concatenate([np.cumsum(probs[::-1])[::-1], [0.0]])
    tail_scaled = np.concatenate([np.cumsum((probs * np.exp(-losses))[::-1])[::-1], [0.0]])
    first = np.searchsorted(losses, epsilons, side="left")
    deltas = pmf._infinity_mass + tail_mass[first] - np.exp(epsilons) * tail_scaled[first]
    return np.clip(deltas, 0.0, 1.0)


def fixed_batch_gaussian_pmf(noise_ratio: float, q: float, grid: float):
    """A pessimistic PLD pmf of one Gaussian release of a fixed-size batch under replace-one.

    The mechanism: a batch of b = q n rows drawn uniformly without replacement, the sum of
    their vectors (each of norm <= C) plus ``N(0, sigma^2 I)``, ``noise_ratio = sigma /
    (2C)`` (dperm's sigma / Delta). Couple the neighbours by a uniform b-subset S of the
    n - 1 common rows and, with probability q, swapping a uniform member j of S for the
    differing row: given (S, j) the outputs are ``(1-q) N(0) + q N(a)`` against
    ``(1-q) N(0) + q N(b)`` (up to a common shift), ``a = x_i - x_j``, ``b = x_i' - x_j``, of
    norms <= 2C and ``|a - b| <= 2C``. By the advanced joint convexity of Balle, Barthe,
    Gaboardi (2018, Theorem 2) each such pair, in either order, is dominated for every
    ``e^eps >= 1`` by the *remove* pair ``((1-q) N(0) + q N(2C), N(0))`` of Poisson
    sampling under add-or-remove at noise multiplier ``sigma / (2C)``; with the reversed
    order and joint convexity over (S, j), the step's trade-off function is at least
    Dong, Roth, Su's (2019, Theorem 9) symmetrized ``C_q(G_{2C/sigma})``, whose privacy
    curve is the pointwise maximum of the remove and the add curves, at every real eps.
    It is tight for one step: D holding one row of gradient +C e among rows of -C e and D'
    with that row at -C e realize the remove pair.

    Composition uses the symmetrized pair itself (f-DP composes adaptively; Dong, Roth,
    Su 2019, Theorem 4): composing the remove and the add pairs separately, as for Poisson
    sampling under add-or-remove, is not justified here, since an adaptive run can meet
    remove-like steps and add-like steps on the same pair of datasets. The pmf is the
    pessimistic connect-the-dots discretization (Doroshenko, Ghazi, Kamath, Kumar,
    Manurangsi 2022) of the maximum of the two curves of dp-accounting's (pessimistic)
    add-or-remove pmfs, on their common loss grid.
    """
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld

    both = pld.from_gaussian_mechanism(standard_deviation=noise_ratio, value_discretization_interval=grid,
                                       sampling_prob=q, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    remove, add = both._pmf_remove.to_dense_pmf(), both._pmf_add.to_dense_pmf()  # checked by check_internals
    top = max(remove._lower_loss + remove.size, add._lower_loss + add.size)
    bottom = min(remove._lower_loss, add._lower_loss, -top)
    rounded = np.arange(bottom - 1, top + 2)
    epsilons = rounded * grid
    curves = np.vstack([hockey_stick_curve(remove, epsilons), hockey_stick_curve(add, epsilons)])
    source = np.argmax(curves, axis=0)
    deltas = np.maximum.accumulate(curves.max(axis=0)[::-1])[::-1]  # non-increasing (raising keeps it pessimistic)
    connected = pld_pmf.create_pmf_pessimistic_connect_dots(grid, rounded, deltas).to_dense_pmf()
    # Connect-the-dots of a discrete PLD's own curve on its support grid gives back its
    # masses: where a point and its two neighbours take the same curve, copy that pmf's
    # mass (the second differences of a computed curve amplify rounding by 1/grid^2);
    # only the few points where the maximum switches curves keep connect-the-dots' mass.
    probs = np.zeros(rounded.size)
    probs[rounded - connected._lower_loss >= 0] = 0.0
    offset = rounded[0]
    probs[connected._lower_loss - offset:connected._lower_loss - offset + connected.size] = connected._probs
    same = np.zeros(rounded.size, dtype=bool)
    same[1:-1] = (source[:-2] == source[1:-1]) & (source[2:] == source[1:-1])
    for index, pmf in enumerate((remove, add)):
        own = np.zeros(rounded.size)
        own[pmf._lower_loss - offset:pmf._lower_loss - offset + pmf.size] = pmf._probs
        mask = same & (source == index)
        probs[mask] = own[mask]
    return pld_pmf.create_pmf(loss_probs=dict(zip(rounded.tolist(), probs.tolist())), discretization=grid,
                              infinity_mass=float(deltas[-1]), pessimistic_estimate=True)


@functools.lru_cache(maxsize=16)
def _fixed_batch_step(noise_ratio: float, q: float, grid: float):
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    return PrivacyLossDistribution(fixed_batch_gaussian_pmf(noise_ratio, q, grid))  # a symmetric pair


def _fixed_batch_pld(noise_ratio: float, steps: int, q: float, grid: float):
    """``steps`` fixed-size-batch releases (not cached: at T ~ 1e9 one takes gigabytes)."""
    single = _fixed_batch_step(noise_ratio, q, grid)
    return _self_composed(single, steps) if steps > 1 else single


@functools.lru_cache(maxsize=256)
def _pure_pld(epsilon: float, count: int, grid: float):
    """``count`` pure epsilon-DP releases: the randomized-response pair dominates every
    epsilon-DP mechanism, so its PLD (dp-accounting's ``from_privacy_parameters``) is a
    valid, tight description."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(epsilon, 0.0),
                                         value_discretization_interval=grid)
    return single.self_compose(count) if count > 1 else single


def _composed(components: Sequence[tuple], grid: float):
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = pld.identity(value_discretization_interval=grid)
    for component in components:
        if component[0] == "gaussian":
            _, z, steps, q = component
            total = total.compose(_gaussian_pld(z, steps, q, grid))
        elif component[0] == "fixed_batch_gaussian":
            _, ratio, steps, q = component
            total = total.compose(_fixed_batch_pld(ratio, steps, q, grid))
        elif component[0] == "pure":
            _, epsilon, count = component
            total = total.compose(_pure_pld(epsilon, count, grid))
        else:
            raise ValueError(f"unknown PLD component {component!r}")
    return total


def _safely(compute) -> float:
    try:
        return float(compute())
    except (OverflowError, FloatingPointError, MemoryError):  # a grid too coarse (or fine) for this loss range
        return math.inf


def pld_epsilon(components: Sequence[tuple], delta: float, grid: float) -> float:
    """Epsilon at ``delta`` of the composition of ``components``, composed in order from
    the identity as ``PLDAccountant`` composes its events, at discretization ``grid``
    (every grid gives a valid, pessimistic upper bound); inf when the grid fails."""
    return _safely(lambda: _composed(tuple(components), grid).get_epsilon_for_delta(delta))


def pld_delta(components: Sequence[tuple], epsilon: float, grid: float) -> float:
    """Delta at ``epsilon`` of the composition of ``components`` (see :func:`pld_epsilon`)."""
    return _safely(lambda: _composed(tuple(components), grid).get_delta_for_epsilon(epsilon))


_PLD_COARSE_GRID = 0.5
PLD_FINEST_GRID = 5e-7
# Peak memory of a T-fold self-composed subsampled PLD, measured (dp-accounting 0.6,
# q = 1/32561): about 1.9e-5 bytes times T / grid (T = 1e8: 0.95 GB at grid 2e-6;
# T = 4e8: 2.0 GB at grid 4e-6). The grid is kept coarse enough to stay near the budget.
_PLD_BYTES_PER_STEP_OVER_GRID = 1.9e-5
_PLD_MEMORY_BUDGET = 2e9


def pld_grid(epsilon: float, step_mu: float | None = None, steps: int | None = None) -> float:
    """PLD discretization for a target epsilon: epsilon / 2000 within [1e-5, 0.5], and
    at most a fifth of one step's privacy-loss scale ``step_mu``
    (:func:`dperm.privacy.search.step_gdp_mu`), down to 5e-7; for ``steps``
    compositions, no finer than keeps the PLD near 2 GB (binds only for T >~ 1e8: at
    T = n^2 on ADULT the grid is 1.0e-5, 1.6x one step's scale, about 20% above the
    converged epsilon, where 1.35e-6 needed over 24 GB).

    Measured at q = 0.0058, T = 30072: the grid error at epsilon 0.1 is 2.5% with grid
    1e-4 and 100% with 1e-3; at epsilon 7.4 it is 0.1% with 1e-3. The second rule is for
    tiny sampling rates: when one step's loss is far below the grid, every step's
    rounding adds up. The error depends on grid / step_mu alone (q from 3e-5 to 5.5e-3,
    T from 3e4 to 9e6): a factor 4 at 15, 25% at 2, 0.6% at 1/4, 0.1% at 1/10. DP-SGD
    with Bassily, Smith, Thakurta's schedule on ADULT (q = 1/n, T = n^2) was certified at
    epsilon 3.0 instead of 0.78 with grid 1e-4.
    """
    grid = min(_PLD_COARSE_GRID, max(1e-5, epsilon / 2000.0))
    if step_mu is not None and 0 < step_mu < math.inf:
        grid = min(grid, max(PLD_FINEST_GRID, step_mu / 5.0))
    if steps is not None:
        # memory: a coarser grid is still a valid upper bound, only a looser one
        grid = max(grid, _PLD_BYTES_PER_STEP_OVER_GRID * steps / _PLD_MEMORY_BUDGET)
    return grid



def repeat_and_select_curve(run_curve, mean: float, shape: float, orders) -> np.ndarray:
    """The Renyi curve of repeat-and-select (Papernot and Steinke 2022, Theorems 2 and 6) of
    runs with the curve ``run_curve`` at ``orders``, the number of runs drawn from the
    truncated negative binomial of ``shape`` (0: logarithmic, 1: geometric, inf: Poisson)
    and ``mean``."""
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    return np.asarray(rdp._compute_rdp_repeat_and_select(list(orders), list(run_curve), float(mean), float(shape)))


def renyi_epsilon(curve, orders, delta: float) -> float:
    """epsilon(delta) of a Renyi-DP curve (dp-accounting's conversion)."""
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    return float(rdp.compute_epsilon(list(orders), list(curve), delta)[0])


def renyi_delta(curve, orders, epsilon: float) -> float:
    """delta(epsilon) of a Renyi-DP curve (dp-accounting's conversion)."""
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    return float(rdp.compute_delta(list(orders), list(curve), epsilon)[0])
