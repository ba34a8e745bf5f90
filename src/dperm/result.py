"""PrivateFit: what a private algorithm returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .privacy.budget import PrivacyBudget
from .privacy.events import describe

__all__ = ["PrivateFit"]


@dataclass(frozen=True)
class PrivateFit:
    """The output of a private ERM algorithm: the noisy model and public facts about it.

    A fit releases exactly (a) the noisy output ``coef``, (b) post-processings of it, and
    (c) values computed from public inputs only (declared bounds, n, d, epsilon, delta,
    hyper-parameters); see docs/privacy.md, "What a fit releases". ``diagnostics`` is the
    one exception, empty unless asked for, never serialized, and named so.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The private parameter vector.
    privacy_spent : PrivacyBudget
        The guarantee the run has (replace-one), certified by the accountant for
        ``event``; never more than the budget asked for.
    algorithm : str
        The catalogue name of the algorithm.
    event : DpEvent
        The mechanism that ran (:mod:`dperm.privacy.events`), with its noise scales and
        sensitivities as typed fields; ``dperm.privacy.accountant.epsilon(event, delta)``
        recomputes the guarantee.
    hyperparameters : dict
        Every hyper-parameter used, defaults resolved (public: computed from public inputs).
    info : dict
        Algorithm-specific public outcomes: post-processings of the noisy releases (for
        example ``status`` of ``dp_sosp``) or functions of public inputs.
    diagnostics : dict
        NOT PRIVATE: data-dependent measurements of the non-private parts of a run (for
        example a solver's iteration count), filled only when the algorithm is asked
        for them (``diagnostics=True``); for debugging and benchmarks, never to be released.
    """

    coef: np.ndarray
    privacy_spent: PrivacyBudget
    algorithm: str
    event: Any = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

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
        """A JSON-ready description of the fit: public fields only (``diagnostics`` is left out)."""
        return {
            "algorithm": self.algorithm,
            "epsilon": self.privacy_spent.epsilon,
            "delta": self.privacy_spent.delta,
            "coef": [float(c) for c in self.coef],
            "hyperparameters": _jsonable(self.hyperparameters),
            "event": _jsonable(describe(self.event)) if self.event is not None else None,
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
