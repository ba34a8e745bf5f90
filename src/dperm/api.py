"""``dperm.minimize``: the one-call functional API."""

from __future__ import annotations

from .algorithms import registry
from .algorithms.auto import choose_algorithm
from .distributed import check_supported, make_problem
from .privacy.budget import PrivacyBudget
from .privacy.mechanisms import charging
from .result import PrivateFit

__all__ = ["minimize"]


def minimize(
    X,
    y,
    *,
    loss="logistic",
    regularizer=None,
    constraint=None,
    algorithm: str = "auto",
    epsilon: float,
    delta: float = 0.0,
    data_norm: float = 1.0,
    label_bound: float = 1.0,
    random_state=None,
    accountant=None,
    sample_weight=None,
    **hyperparameters,
) -> PrivateFit:
    """Privately minimize ``(1/n) sum_i s_i loss(<w, x_i>, y_i) + r(w)`` over C.

    Parameters
    ----------
    X, y : array-like
        Data (dense, pandas, SciPy sparse or Dask) and labels. Their shapes and numeric
        type are public and checked; their values are private and mapped, never refused
        (a refusal would depend on one row: docs/privacy.md, "Totality"): a NaN or
        infinite entry of X is 0 (a missing value imputed without reading other rows; no
        copy of a finite X); a label that is not a finite number, or for a binary loss a
        label other than -1 and +1, gives its row weight 0 (on Dask data a real label is
        0 instead, and a binary loss's other labels are refused); a finite label beyond
        ``label_bound`` is clipped, silently (a per-row map; a warning would tell whether
        one row crossed the bound).
    loss, regularizer, constraint
        See :class:`dperm.problem.ERMProblem`.
    algorithm : str
        A name of the catalogue (``dperm.algorithms.names()``), or ``"auto"`` (default)
        to choose by the problem's properties (:mod:`dperm.algorithms.auto`).
    epsilon, delta : float
        The privacy budget (replace-one neighbouring relation).
    data_norm, label_bound : float
        Declared public bounds on ||x_i|| and |y_i|; rows above ``data_norm`` are scaled
        onto it, silently (docs/privacy.md, "Totality").
    random_state : None, int or numpy.random.Generator
        Source of the algorithm's randomness; None draws from OS entropy.
    accountant : dperm.BudgetAccountant, optional
        Charge the fit's event to this accountant, which composes it exactly with its
        earlier charges and raises ``BudgetExceededError`` before the data is read when
        the total would be exceeded.
    sample_weight : array-like of shape (n_samples,), optional
        Per-example weights ``s_i`` in [0, 1]: a NaN or infinite weight is 0 and every
        weight is clamped into [0, 1], each by itself and without a word (a weight is part
        of its private record); the objective is still divided by n, and the privacy
        guarantee is unchanged (docs/estimators.md). ``None``: every weight 1.
    **hyperparameters
        The algorithm's own hyper-parameters (defaults: its theorem's prescriptions).

    Returns
    -------
    PrivateFit
    """
    if algorithm != "auto":
        registry.get(algorithm)  # an unknown name fails before any data is touched
    budget = PrivacyBudget(epsilon, delta)
    problem = make_problem(  # a DaskERMProblem for Dask input
        X, y, loss, regularizer, constraint, data_norm=data_norm, label_bound=label_bound, sample_weight=sample_weight
    )
    if algorithm == "auto":
        algorithm = choose_algorithm(problem, budget)[0]
    check_supported(problem, algorithm)
    info = registry.get(algorithm)
    with charging(accountant):
        return info.fit(problem, budget, rng=random_state, **hyperparameters)
