"""The algorithm catalogue: one function per algorithm,
``fit(problem, budget, *, rng, **hyper) -> PrivateFit``, registered with its metadata.

``dperm.algorithms.list()`` returns the catalogue (see ``registry.AlgorithmInfo``).
"""

from . import gradient_descent, output_perturbation, sgd  # noqa: F401  (registers)
from .gradient_descent import noisy_gd
from .output_perturbation import gd_output_perturbation, output_perturbation
from .registry import AlgorithmInfo, AssumptionError, check_assumptions, get, list_algorithms, names
from .sgd import dp_sgd

list = list_algorithms  # noqa: A001  (the public name of DESIGN.md: dperm.algorithms.list())

__all__ = [
    "AlgorithmInfo", "AssumptionError", "check_assumptions", "get", "list", "list_algorithms", "names",
    "dp_sgd", "gd_output_perturbation", "noisy_gd", "output_perturbation",
]
