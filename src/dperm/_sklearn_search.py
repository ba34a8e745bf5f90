"""The warning for a dperm fit run by scikit-learn's model selection (GridSearchCV,
cross_val_score, ...): each of their fits spends the budget again.

Every estimator's and pipeline's ``fit`` calls :func:`warn_if_model_selection`; it lives
in this leaf (importing nothing of dperm but the warning class) so that the estimators and
the pipeline need not import :mod:`dperm.model_selection`, which depends on them. The
private alternative, :class:`dperm.model_selection.PrivateSearch`, is there.
"""

from __future__ import annotations

import sys
import warnings

from .exceptions import PrivacyWarning
from ._warnings import user_stacklevel

__all__ = ["warn_if_model_selection"]

_SEARCH_PACKAGE = "sklearn.model_selection"


def _inside_sklearn_model_selection() -> bool:
    """Whether a caller on the stack belongs to ``sklearn.model_selection``.

    Reads module names of the call stack only (nothing of the data): every search or
    cross-validation tool of scikit-learn fits its estimator copies from that package, in
    this process or in a joblib worker.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(_SEARCH_PACKAGE):
            return True
        frame = frame.f_back
    return False


def warn_if_model_selection(estimator) -> None:
    """Warn (``PrivacyWarning``) when ``estimator.fit`` runs inside scikit-learn's search or
    cross-validation tools without an accountant: each of their fits spends the budget
    again. The message names only public values (the estimator's class and budget).
    With ``n_jobs > 1`` the fits, and so the warning, happen in joblib's worker
    processes, which may not show it."""
    if getattr(estimator, "accountant", None) is not None or not _inside_sklearn_model_selection():
        return
    name = type(estimator).__name__
    warnings.warn(
        f"{name} is fitted by scikit-learn's model selection (GridSearchCV, cross_val_score, ...): each "
        f"fit spends its own (epsilon={estimator.epsilon}, delta={estimator.delta}) on the same data, so k fits "
        "are only (k*epsilon, k*delta)-DP and the selection itself is not private. Use "
        f"dperm.model_selection.PrivateSearch({name}(), param_grid, epsilon=..., delta=...) to choose "
        "hyperparameters under one total budget.",
        PrivacyWarning,
        stacklevel=user_stacklevel(),
    )
