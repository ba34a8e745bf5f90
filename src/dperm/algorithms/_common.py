"""Small helpers shared by the algorithms: set-up checks, initial points, records."""

from __future__ import annotations

import math

import numpy as np

from ..privacy.budget import PrivacyBudget
from ..privacy.noise import make_rng
from .registry import check_assumptions, get

__all__ = ["start", "initial_point", "check_steps", "check_step_size", "projection_of"]


def start(name: str, problem, budget: PrivacyBudget, rng):
    """Validate a run of algorithm ``name``: budget type, assumptions, delta versus n.

    Returns the NumPy Generator to draw all noise from.
    """
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    check_assumptions(get(name), problem, budget)
    budget.check_delta(problem.n_samples)
    return make_rng(rng)


def initial_point(problem, init) -> np.ndarray:
    """w_0: zeros by default (public), or a given public starting point projected onto C."""
    if init is None:
        return np.zeros(problem.n_features)
    w = np.array(init, dtype=np.float64)
    if w.shape != (problem.n_features,) or not np.all(np.isfinite(w)):
        raise ValueError(f"init must be a finite vector of shape ({problem.n_features},)")
    return problem.constraint.project(w) if problem.constraint.bounded else w


def check_steps(name: str, value, *, minimum: int = 1) -> int:
    """A whole number of steps >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_step_size(value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"step_size must be a finite number > 0, got {value}")
    return value


def projection_of(constraint):
    """(kind, radius) of a constraint for the compiled kernels."""
    from ..problem.constraints import Box, L1Ball, L2Ball
    from ._codes import PROJ_BOX, PROJ_L1, PROJ_L2, PROJ_NONE

    if constraint is None or not constraint.bounded:
        return PROJ_NONE, 0.0
    for cls, kind in ((L2Ball, PROJ_L2), (L1Ball, PROJ_L1), (Box, PROJ_BOX)):
        if type(constraint) is cls:
            return kind, constraint.radius
    raise ValueError(f"no compiled projection for {constraint!r}")



class LazyModule:
    """A module imported at its first attribute access: the compiled kernels
    (:mod:`dperm.algorithms._kernels`) import numba, about 0.2 s a process, which a fit
    that runs no kernel (the default full-batch solvers, `dperm --help`) need not pay.
    Attributes are looked up on the module every time, so a test's monkeypatch of the
    module is seen."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") or attribute == "_name":  # copy/pickle probes: no recursion
            raise AttributeError(attribute)
        import importlib

        return getattr(importlib.import_module(self._name), attribute)
