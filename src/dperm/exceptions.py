"""The warning and error classes dperm raises: shared vocabulary in one leaf.

This module imports nothing of dperm, so every layer may import it (the privacy
accountant, the algorithms, the estimators, the command line) without an import pointing
up or closing a cycle (as ``sklearn.exceptions``). Each class is also re-exported from the
module that raised it first (``dperm.privacy.budget.PrivacyWarning``,
``dperm.algorithms.AssumptionError``, ...): both names are the same class.

Filter them by class, e.g. ``warnings.simplefilter("error", dperm.exceptions.PrivacyWarning)``.
"""

from __future__ import annotations

__all__ = [
    "AssumptionError",
    "BudgetExceededError",
    "CLIError",
    "DataNormWarning",
    "InferenceWarning",
    "LangevinStepWarning",
    "LipschitzWarning",
    "NoiseDominatesWarning",
    "OutputPathError",
    "PreprocessingNoiseWarning",
    "PrivacyWarning",
    "SVRGNoiseWarning",
]


# ----------------------------------------------------------------------------- warnings
class PrivacyWarning(UserWarning):
    """A privacy setting that is valid but likely not what was meant."""


class DataNormWarning(UserWarning):
    """About declared data bounds (``data_norm``, ``label_bound``), from public inputs only.

    Clipping rows, labels and targets to their declared bounds is silent: a warning shown
    only when some row is beyond a bound would tell that about one row (docs/privacy.md,
    "Totality"). Kept for compatibility; dperm raises it from public inputs only."""


class NoiseDominatesWarning(UserWarning):
    """The privacy noise will dominate the model (a near-constant model is likely).

    Computed from public inputs only (n, d, epsilon, delta, declared bounds, the loss and
    the regularization), before the data is read: it quotes nothing of the data."""


class LipschitzWarning(UserWarning):
    """About a custom loss's declared Lipschitz bound, from public inputs only (clipping
    per-example gradients to it is silent, as every per-row clip is: docs/privacy.md,
    "Totality"). Kept for compatibility."""


class SVRGNoiseWarning(UserWarning):
    """The inner-step noise of DP-SVRG is too large for the Prox-SVRG contraction."""


class LangevinStepWarning(UserWarning):
    """The DP-GLD step solved from the budget is too large for a stable iteration."""


class PreprocessingNoiseWarning(UserWarning):
    """The private statistics of a preprocessing step will be mostly noise at this n and
    epsilon. Computed from public inputs only (n, the number of draws, epsilon, the grid
    sizes), before the data is read: it quotes nothing of the data."""


class InferenceWarning(UserWarning):
    """The intervals cannot be trusted at this size and budget (public inputs), or were
    refused because the released Hessian did not clear its noise."""


# ----------------------------------------------------------------------------- errors
class BudgetExceededError(RuntimeError):
    """Spending would take a BudgetAccountant past its total budget."""


class AssumptionError(ValueError):
    """The problem (or budget) violates an assumption the algorithm's guarantee needs."""


class OutputPathError(ValueError):
    """An output path that cannot be written."""


class CLIError(Exception):
    """Bad usage or bad input: reported as one line, exit status 2."""
