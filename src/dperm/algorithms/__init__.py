"""The algorithm catalogue: one function per algorithm,
``fit(problem, budget, *, rng, **hyper) -> PrivateFit``, registered with its metadata.

``dperm.algorithms.list()`` returns the catalogue (see ``registry.AlgorithmInfo``).
"""

from . import accmd, exponential, frank_wolfe, gradient_descent, newton, nonconvex_gd, output_perturbation, objective_perturbation, sgd, sosp, sufficient_statistics, svrg  # noqa: F401  (registers)
from .accmd import dp_accmd
from .exponential import exponential_mechanism, localization
from .frank_wolfe import dp_fw_l1, dp_fw_l2
from .gradient_descent import noisy_gd
from .newton import dp_newton
from .nonconvex_gd import dp_gd, dp_gld, rrpsgd
from .output_perturbation import gd_output_perturbation, output_perturbation
from .registry import AlgorithmInfo, AssumptionError, check_assumptions, get, list_algorithms, names
from .objective_perturbation import objective_perturbation
from .sgd import dp_sgd
from .sosp import dp_gd_so, dp_sosp
from .sufficient_statistics import adassp, sufficient_statistics
from .svrg import dp_svrg, dp_svrg_pp

list = list_algorithms  # noqa: A001  (the public name of DESIGN.md: dperm.algorithms.list())

__all__ = [
    "AlgorithmInfo", "AssumptionError", "adassp", "sufficient_statistics", "check_assumptions", "get", "list", "list_algorithms", "names",
    "dp_accmd", "dp_newton", "dp_fw_l1", "dp_fw_l2", "dp_gd", "dp_gd_so", "dp_gld", "dp_sosp", "dp_sgd", "dp_svrg", "rrpsgd", "exponential_mechanism", "localization", "dp_svrg_pp", "gd_output_perturbation", "noisy_gd", "objective_perturbation", "output_perturbation",
]
