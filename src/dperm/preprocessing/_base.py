"""What every private transformer shares: its budget parameters, charging its event to the
active accountant before the data is read, and the released ``event_`` /
``privacy_spent_``."""

from __future__ import annotations

import math

from sklearn.base import BaseEstimator, TransformerMixin

from ..privacy import events as ev
from ..privacy.budget import BudgetAccountant, PrivacyBudget
from ..privacy.mechanisms import charge, charging
from ..privacy.noise import make_rng
from ..exceptions import PreprocessingNoiseWarning  # defined in the leaf, re-exported here

__all__ = ["PrivateTransformerMixin", "spent_of", "PreprocessingNoiseWarning", "is_dask", "transform_partitions"]



def is_dask(X) -> bool:
    from ..distributed import is_dask_collection

    return is_dask_collection(X)


def transform_partitions(transformer, X):
    """``transformer.transform`` of a Dask DataFrame, partition by partition (each row is
    mapped by the released values alone, so a partition needs nothing of the others)."""
    import numpy as np
    import pandas as pd

    names = list(transformer.get_feature_names_out([str(c) for c in X.columns]))
    meta = pd.DataFrame({name: pd.Series(dtype=np.float64) for name in names})
    return X.map_partitions(lambda part: pd.DataFrame(transformer.transform(part), index=part.index, columns=names),
                            meta=meta)


def spent_of(event, delta: float = 0.0) -> PrivacyBudget | None:
    """The guarantee the one accountant certifies for ``event`` at ``delta`` plus the
    delta its approximate parts need; None for a no-op (nothing private)."""
    from ..privacy.accountant import epsilon, flatten

    flat = flatten(event)
    if flat.empty:
        return None
    delta = delta + sum(d for _, d in flat.approximate)  # summed as the accountant sums them
    return PrivacyBudget(epsilon(event, delta), delta)


class PrivateTransformerMixin(TransformerMixin, BaseEstimator):
    """Base of dperm's private transformers (not for direct use).

    Subclasses build the event of their mechanism from public inputs (the shape, the
    declared values, epsilon), call :meth:`_charge` before reading the data, then run it.
    Attributes after ``fit``: ``event_`` (the mechanism, a ``NoOpDpEvent`` when everything
    was declared) and ``privacy_spent_`` (None when nothing private was released).
    """

    def _rng(self):
        # None stays None: the mechanisms then draw through the exact / secure samplers
        return None if self.random_state is None else make_rng(self.random_state)

    def _check_budget(self) -> None:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
        if self.accountant is not None and not isinstance(self.accountant, BudgetAccountant):
            raise TypeError(f"accountant must be a dperm.BudgetAccountant or None, got {self.accountant!r}")

    def _charge(self, event, delta: float = 0.0) -> None:
        """Charge ``event`` to the accountant (this transformer's, else the active one),
        then record it; raises BudgetExceededError before any data is read."""
        if not isinstance(event, ev.NoOpDpEvent):
            if self.accountant is not None:
                with charging(self.accountant):
                    charge(event, type(self).__name__)
            else:
                charge(event, type(self).__name__)
        self.event_ = event
        self.privacy_spent_ = spent_of(event, delta)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.non_deterministic = False
        return tags
