"""PrivateFit: what a private algorithm returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .privacy.budget import PrivacyBudget

__all__ = ["PrivateFit"]


@dataclass(frozen=True)
class PrivateFit:
    """The output of a private ERM algorithm.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The private parameter vector (the only part that depends on the data and is
        protected by the guarantee; everything else here is public or derived from it).
    privacy_spent : PrivacyBudget
        The guarantee the run actually has (replace-one neighbouring relation), as
        computed for the mechanism that ran; never more than the budget asked for.
    algorithm : str
        The catalogue name of the algorithm.
    hyperparameters : dict
        Every hyper-parameter used, defaults resolved (step size, iterations, ...).
    noise : dict
        The calibration: mechanism, sensitivity, noise scale, number of releases.
    gradient_evaluations : int
        Number of per-example gradient evaluations performed.
    iterations : int
        Number of iterations (steps) performed.
    trace : dict
        Optional diagnostics (for example the private iterates, when asked for).
        A trace holding data-dependent, un-noised quantities is marked
        ``trace["private"] = False`` and must not be released.
    info : dict
        Algorithm-specific public outcomes (for example ``status`` of ``dp_sosp``).
    """

    coef: np.ndarray
    privacy_spent: PrivacyBudget
    algorithm: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    noise: dict[str, Any] = field(default_factory=dict)
    gradient_evaluations: int = 0
    iterations: int = 0
    trace: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def objective(self, problem) -> float:
        """F(coef) on ``problem`` (a non-private evaluation, for measurement)."""
        return problem.objective(self.coef)

    def excess_risk(self, problem, reference) -> float:
        """F(coef) - F(w_hat), with ``reference`` a ReferenceSolution (non-private)."""
        return problem.objective(self.coef) - reference.objective

    def utility(self, problem, reference=None, *, hessian: bool = True) -> dict[str, float]:
        """Non-private measurements of ``coef`` on ``problem`` (for reporting only):
        F(coef), the excess risk against ``reference`` (a ReferenceSolution or a number;
        omitted when None), ||grad F||, and the smallest Hessian eigenvalue (Lanczos on
        Hessian-vector products for large d) when ``hessian`` and the loss is smooth."""
        from .utility import gradient_norm, smallest_hessian_eigenvalue

        out = {"objective": problem.objective(self.coef), "gradient_norm": gradient_norm(problem, self.coef)}
        if reference is not None:
            best = reference if isinstance(reference, (int, float)) else reference.objective
            out["excess_risk"] = out["objective"] - float(best)
        if hessian and problem.is_smooth:
            out["smallest_hessian_eigenvalue"] = smallest_hessian_eigenvalue(problem, self.coef)
        return out

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description of the fit (coefficients included)."""
        return {
            "algorithm": self.algorithm,
            "epsilon": self.privacy_spent.epsilon,
            "delta": self.privacy_spent.delta,
            "coef": [float(c) for c in self.coef],
            "hyperparameters": _jsonable(self.hyperparameters),
            "noise": _jsonable(self.noise),
            "gradient_evaluations": int(self.gradient_evaluations),
            "iterations": int(self.iterations),
            "info": _jsonable(self.info),
        }


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return repr(obj)
