"""The default share of epsilon of a private preprocessing step, following how many of its
columns are estimated privately: declaring columns gives their budget back to the model.

:class:`~dperm.pipeline.DPPipeline` gives a private transformer ``share * epsilon``
without an explicit ``shares={name: ...}``. A step whose every column is estimated gets
the base share (0.4, docs/your-data.md); one with some columns declared gets the base
share times the fraction of its columns still estimated (so each estimated column keeps
the budget it had, and the declared ones' part goes to the model); one with nothing to
estimate, none (its fit charges nothing). Public inputs only: the step's declarations
and the table's column names and types (the schema), never its values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["transformer_share", "estimated_fraction"]

MIN_SHARE = 0.05  # a floor, so a step with one estimated column of many still gets a usable budget


def estimated_fraction(step, X) -> float:
    """The fraction of ``step``'s columns it estimates privately (1.0 when unknown): for a
    :class:`~dperm.preprocessing.PrivatePreprocessor`, its numeric columns without
    declared ``bounds`` and categorical columns without declared ``categories`` or
    ``candidates``, over all its columns; for a :class:`~dperm.preprocessing.
    PrivateScaler`, its columns without declared bounds. From the header and the
    declarations only: never the roles (which may be released) nor the dtypes (data,
    unless declared public)."""
    from .numeric import PrivateScaler
    from .table import PrivatePreprocessor

    try:
        if isinstance(step, PrivateScaler):
            bounds = step.bounds
            if bounds is None:
                return 1.0
            if len(bounds) == 2 and all(isinstance(v, (int, float, np.integer, np.floating)) for v in bounds):
                return 0.0
            return sum(b is None for b in bounds) / max(len(bounds), 1)
        if isinstance(step, PrivatePreprocessor):
            params = step.get_params(deep=False)
            bounds = params.get("bounds") or {}
            declared_cats = set(params.get("categories") or {}) | set(params.get("candidates") or {})
            if not bounds and not declared_cats:
                return 1.0
            # The header (or the width of an array) and the declarations only: a column's role
            # may be released privately, and a dtype is data unless declared public, so the
            # fraction must not depend on either. A column is declared when its bounds or
            # its categories are, whatever its role; every other column is estimated.
            names = list(range(np.shape(X)[1])) if not hasattr(X, "columns") else list(X.columns)
            dropped = set(params.get("drop") or [])
            kept = [c for c in names if c not in dropped]
            columns = len(kept)
            if columns == 0:
                return 1.0
            estimated = sum(c not in bounds and c not in declared_cats for c in kept)
            return estimated / columns
    except Exception:  # an unusual step or schema: the base share (the step validates its own inputs)
        return 1.0
    return 1.0


def transformer_share(step, X, base: float) -> float:
    """``base`` times :func:`estimated_fraction`, at least :data:`MIN_SHARE` when anything is
    estimated (a share in (0, 1) whatever the declarations; a step with nothing to
    estimate charges nothing, whatever its share)."""
    fraction = estimated_fraction(step, X)
    if fraction <= 0.0:
        return MIN_SHARE
    return float(min(base, max(MIN_SHARE, base * fraction)))
