"""Fitting on data that Dask holds: row-chunked Dask arrays and Dask DataFrames, in
memory on a cluster or out of core (a Zarr store read block by block).

:func:`make_problem` is the one entry point the API and the estimators use: it returns
a :class:`DaskERMProblem` for Dask input and an in-memory
:class:`~dperm.problem.ERMProblem` otherwise. Dask is imported only for Dask input, so
the core install does not need it (``pip install 'dperm[dask]'`` adds it).

Privacy is that of the in-memory fit, unchanged: the algorithms run on the client, draw
every noise vector there from the fit's own generator, and see the data only through
full-batch sums (gradients, Hessian-vector products) that the workers compute block by
block and add up. No per-block quantity is released; row-norm clipping and label checks
are applied block by block against the declared public bounds.
"""

from __future__ import annotations

from .._routes import register_route
from ..problem.erm import ERMProblem
from .inputs import is_dask_collection
from .problem import DaskERMProblem  # imports no Dask: only a fit on Dask data does

__all__ = ["make_problem", "is_dask_collection", "supports", "check_supported", "SUPPORTED_ALGORITHMS",
           "UNSUPPORTED_ALGORITHMS", "DaskERMProblem"]

# The algorithms that run on Dask data, each checked against the in-memory fit in
# tests/test_dask.py: the full-batch ones see the data only through map-reduces
# (objective, gradient, Hessian-vector product, dense Hessian; the exponential
# mechanism's scores at every point of its net); the mini-batch ones (dp_sgd, rrpsgd,
# and the inner steps of dp_svrg, dp_svrg_pp) through DaskERMProblem.gather_rows.
SUPPORTED_ALGORITHMS: tuple[str, ...] = (
    "objective_perturbation",
    "output_perturbation",
    "gd_output_perturbation",
    "noisy_gd",
    "dp_gd",
    "dp_gld",
    "dp_fw_l2",
    "dp_fw_l1",
    "dp_accmd",
    "dp_sosp",
    "dp_gd_so",
    "dp_sgd",
    "rrpsgd",
    "dp_svrg",
    "dp_svrg_pp",
    "exponential_mechanism",
    "localization",
)
# Refused with sample_weight on Dask data: the mini-batch ones gather rows (and SVRG their
# slopes) without the weights, and the net-scoring ones score without them.
_UNWEIGHTED_ON_DASK = ("dp_sgd", "rrpsgd", "dp_svrg", "dp_svrg_pp", "exponential_mechanism", "localization")

# Registered algorithms refused on Dask data, each with its reason (for the error and
# docs/scaling.md). Every registered algorithm is in one of the two tables
# (tests/test_dask.py checks it), so a new algorithm must declare its Dask status.
UNSUPPORTED_ALGORITHMS: dict[str, str] = {
    "sufficient_statistics": "its X^T X and X^T y have no map-reduce written on Dask data yet",
    "adassp": "its X^T X and X^T y have no map-reduce written on Dask data yet",
    "dp_newton": "not yet run and tested on Dask data (its per-iteration d x d Hessians and traces)",
}


def make_problem(X, y, loss="logistic", regularizer=None, constraint=None, *, data_norm=1.0, label_bound=1.0,
                 intercept_scaling=0.0, sample_weight=None):
    """The ERM problem for ``(X, y)``: a :class:`DaskERMProblem` when X (or y) is a Dask
    collection, an in-memory :class:`~dperm.problem.ERMProblem` otherwise. Same
    parameters as :class:`~dperm.problem.ERMProblem`; ``intercept_scaling`` > 0 adds the
    constant intercept column (virtual in both); ``sample_weight``: per-example weights in
    [0, 1] (a Dask vector, or an in-memory one, with Dask data)."""
    if is_dask_collection(X):
        return DaskERMProblem(X, y, loss, regularizer, constraint, data_norm=data_norm, label_bound=label_bound,
                              intercept_scaling=intercept_scaling, sample_weight=sample_weight)
    if is_dask_collection(y):
        raise TypeError("y is a Dask collection but X is not; pass both as Dask collections (or neither)")
    if is_dask_collection(sample_weight):
        raise TypeError("sample_weight is a Dask collection but X is not; pass it in memory")
    return ERMProblem(X, y, loss, regularizer, constraint, data_norm=data_norm, label_bound=label_bound,
                      intercept_scaling=intercept_scaling, sample_weight=sample_weight)


def supports(problem, algorithm: str) -> bool:
    """Whether ``algorithm`` can run on ``problem`` (always for in-memory problems)."""
    if not isinstance(problem, DaskERMProblem):
        return True
    weighted = problem.sample_weight is not None
    return algorithm in SUPPORTED_ALGORITHMS and not (weighted and algorithm in _UNWEIGHTED_ON_DASK)


def check_supported(problem, algorithm: str) -> None:
    """Raise a clear error when ``algorithm`` has no Dask path and ``problem`` is over
    Dask data (a no-op for in-memory problems)."""
    if not isinstance(problem, DaskERMProblem):
        return
    if algorithm not in SUPPORTED_ALGORITHMS:
        reason = UNSUPPORTED_ALGORITHMS.get(algorithm, "no Dask path was written for it")
        raise NotImplementedError(
            f"{algorithm} has no Dask path ({reason}); on Dask data use one of "
            f"{list(SUPPORTED_ALGORITHMS)}, or pass the data in memory"
        )
    if not supports(problem, algorithm):
        raise NotImplementedError(
            f"{algorithm} does not take sample_weight on Dask data yet (it fetches rows or scores points without "
            "the weights); use a full-batch gradient algorithm, or pass the data in memory"
        )


register_route(supports)  # algorithm="auto" takes only what runs on Dask data (dperm._routes)
