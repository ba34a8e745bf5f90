"""Replaying a noisy-Newton inference fit on a neighbour (shared by the inference tests).

Run the fit on D with a seed, recording every Gaussian release; then run it on D' with
every release forced to return D's output, so both walk the same public points. Given
the outputs so far each release is a Gaussian of its event's sigma, so along the
trajectory the output law of D against D' is N(0, 1) against N(m, 1), with m^2 the sum
of the squared shifts in noise units: the shifts and m are what the certificate must
cover (the hockey stick at the certified epsilon, integrated, at most delta).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from _first_principles import integration_grid, symmetric_hockey_stick


def replay_on_neighbour(monkeypatch, modules, fit_first, fit_second):
    """``(fit, other, runs)``: ``fit_first()`` with every ``release`` of ``modules``
    recorded, then ``fit_second()`` made to draw the same outputs; ``runs["P"]`` holds
    (value, event, output) per release of the first, ``runs["Q"]`` the second's values."""
    real = modules[0].release
    runs = {"P": [], "Q": []}

    def recording(rng, value, event):
        out = real(rng, value, event)
        runs["P"].append((np.array(value), event, out))
        return out

    for module in modules:
        monkeypatch.setattr(module, "release", recording)
    fit = fit_first()
    outputs = iter([o for _, _, o in runs["P"]])

    def replaying(rng, value, event):
        runs["Q"].append(np.array(value))
        return next(outputs)

    for module in modules:
        monkeypatch.setattr(module, "release", replaying)
    other = fit_second()
    return fit, other, runs


def check_trajectory(runs, leaves, fit, budget) -> tuple[list, float, float]:
    """``(shifts, m, mu)``: every release's shift within its declared sensitivity, and
    the hockey stick of N(0, 1) against N(m, 1) and N(mu, 1) (mu the certificate's) at
    the certified epsilon at most delta."""
    assert len(runs["Q"]) == len(runs["P"]) == len(leaves)
    shifts = []
    for (vp, event, _), vq in zip(runs["P"], runs["Q"]):
        shift = np.linalg.norm(vp - vq)
        assert shift <= event.sensitivity * (1 + 1e-9)  # the release's declared sensitivity holds
        shifts.append(shift / event.sigma)
    m = math.sqrt(sum(s * s for s in shifts))
    mu = math.sqrt(sum((r.sensitivity / r.sigma) ** 2 for r in leaves))
    assert m <= mu * (1 + 1e-9)
    for shift in (m, mu):
        assert hockey_stick(shift, fit.privacy_spent.epsilon) <= budget.delta * (1 + 1e-3)
    return shifts, m, mu


def hockey_stick(shift: float, epsilon: float) -> float:
    """The symmetric hockey stick of N(0, 1) against N(shift, 1) at epsilon, integrated."""
    grid = integration_grid([0.0, shift], 1.0)
    return symmetric_hockey_stick(norm.pdf(grid), norm.pdf(grid, loc=shift), epsilon, grid[1] - grid[0])


def record_events(monkeypatch, modules) -> list:
    """The events of every ``release`` of ``modules`` from now on, in order (the releases
    themselves run as they are)."""
    calls = []
    real = modules[0].release

    def recording(rng, value, event):
        calls.append(event)
        return real(rng, value, event)

    for module in modules:
        monkeypatch.setattr(module, "release", recording)
    return calls
