"""Checks of a fit's privacy event shared by the algorithm tests: the release phases it
holds, and its epsilon recomputed by the accountant and, independently, by dp-accounting's
own PLD accountant (replace-one)."""

import math

import dp_accounting as dpa
from dp_accounting.pld import pld_privacy_accountant
import pytest

from dperm.privacy import accountant


def phases(event) -> list:
    """``[(release, count)]``: every leaf release of ``event`` with its number of
    repetitions, in order (compositions flattened, self-compositions counted)."""
    if isinstance(event, dpa.ComposedDpEvent):
        return [pair for inner in event.events for pair in phases(inner)]
    if isinstance(event, dpa.SelfComposedDpEvent):
        return [(release, count * event.count) for release, count in phases(event.event)]
    return [(event, 1)]


def gdp_mu(event) -> float:
    """``sqrt(sum count (Delta / sigma)^2)`` over the full-batch Gaussian releases."""
    return math.sqrt(sum(count * (r.sensitivity / r.sigma) ** 2 for r, count in phases(event)))


def pld_epsilon(event, delta: float, interval: float = 1e-4) -> float:
    """Epsilon of ``event`` by dp-accounting's PLDAccountant under REPLACE_ONE."""
    acc = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                               value_discretization_interval=interval)
    acc.compose(event)
    return acc.get_epsilon(delta)


def check_event_accounting(fit, budget, *, pld_event=None, independent: bool = True) -> None:
    """The accountant certifies ``fit.event`` within the budget and recomputes
    ``privacy_spent`` from it; for Gaussian-only events (``independent``) dp-accounting's
    PLD accountant, composing ``fit.event`` (or ``pld_event``, an equivalent event it
    supports), agrees within 1% and is never more than 1% below ``privacy_spent``."""
    spent = fit.privacy_spent
    assert spent.epsilon <= budget.epsilon and spent.delta == budget.delta
    recomputed = accountant.epsilon(fit.event, budget.delta)
    assert recomputed <= budget.epsilon
    assert recomputed == pytest.approx(spent.epsilon, rel=1e-3)
    if independent:
        eps = pld_epsilon(fit.event if pld_event is None else pld_event, budget.delta)
        assert spent.epsilon * 0.99 <= eps <= spent.epsilon * 1.01, (eps, spent.epsilon)
