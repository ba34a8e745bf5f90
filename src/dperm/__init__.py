"""dperm: differentially private empirical risk minimization.

Every algorithm of the DP-ERM literature behind one API, with its noise calibrated
exactly for the mechanism that runs (replace-one neighbouring relation).

>>> import dperm
>>> fit = dperm.minimize(X, y, loss="logistic", regularizer=("l2", 0.1),
...                      algorithm="gd_output_perturbation", epsilon=1.0, delta=1e-5)

Submodules and public names are imported on first use (PEP 562 module ``__getattr__``):
``import dperm`` itself loads nothing heavy (no SciPy, scikit-learn, numba or
dp-accounting), so command-line tools and scripts that need one function start fast.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (tens of ms)

from ._version import __version__

_SUBMODULES = ("algorithms", "audit", "losses", "privacy", "problem", "theory", "utility")

# public name -> module that defines it (relative to dperm)
_NAMES = {
    "minimize": "api",
    "make_pipeline": "pipeline",
    "DPPipeline": "pipeline",
    "DPGLMRegressor": "estimators",
    "DPHuberRegressor": "estimators",
    "DPLinearRegression": "estimators",
    "DPLinearSVC": "estimators",
    "DPLogisticRegression": "estimators",
    "DPRobustRegressor": "estimators",
    "BudgetAccountant": "privacy.budget",
    "PrivacyBudget": "privacy.budget",
    "BudgetExceededError": "exceptions",
    "DataNormWarning": "exceptions",
    "NoiseDominatesWarning": "exceptions",
    "PrivacyWarning": "exceptions",
    "ERMProblem": "problem.erm",
    "solve_reference": "problem.reference",
    "PrivateFit": "result",
}

__all__ = [*_SUBMODULES, *_NAMES, "__version__"]


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:  # any other subpackage (datasets, estimators, ...), as an eager import exposed it
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'dperm' has no attribute {name!r}") from None
    globals()[name] = value  # later lookups skip this function
    return value


def _start_background_warmup() -> None:
    # compiles the numba kernels once per installation in a detached, low-priority process
    # (dperm._warmup; DPERM_WARMUP=0 turns it off); imports nothing heavy here
    from ._warmup import maybe_start

    maybe_start()


_start_background_warmup()


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from . import algorithms, audit, losses, privacy, problem, theory, utility  # noqa: F401
    from .api import minimize  # noqa: F401
    from .pipeline import DPPipeline, make_pipeline  # noqa: F401
    from .estimators import (  # noqa: F401
        DPGLMRegressor,
        DPHuberRegressor,
        DPLinearRegression,
        DPLinearSVC,
        DPLogisticRegression,
        DPRobustRegressor,
    )
    from .privacy.budget import BudgetAccountant, PrivacyBudget  # noqa: F401
    from .exceptions import BudgetExceededError, DataNormWarning, NoiseDominatesWarning, PrivacyWarning  # noqa: F401
    from .problem.erm import ERMProblem  # noqa: F401
    from .problem.reference import solve_reference  # noqa: F401
    from .result import PrivateFit  # noqa: F401
