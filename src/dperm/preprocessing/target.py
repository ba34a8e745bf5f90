"""A regression target's range: declared, or estimated privately as a numeric column is
(:class:`~dperm.preprocessing.PrivateScaler`: an asymmetric range, or a centre and a
spread that never collapses on ties, chosen from public inputs), never refused.

:class:`~dperm.pipeline.DPPipeline` calls :func:`target_range` for a regressor whose
target bounds are not declared, and clips the predictions into the range it used (a
post-processing of the released model and range).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .numeric import PrivateScaler
from .quantiles import LEVEL_SWITCH, log_grid, rank_error
from .._warnings import user_stacklevel

__all__ = ["target_range", "warn_if_target_noisy", "target_share", "TARGET_SHARE_MIN", "TARGET_SHARE_MAX"]

TARGET_SHARE_MIN = 0.1  # of epsilon: the target's range when rows are plenty
TARGET_SHARE_MAX = 0.5  # of epsilon: at most, when rows are few for the budget (a range drawn far off
# the data makes every prediction wrong by its scale: R^2 of -1e12; the model is noise there anyway)


def target_share(n: int, epsilon: float) -> float:
    """The default share of epsilon of a regression target's private range, from public
    inputs (n, the total epsilon): the share at which each of its two draws has a rank
    error (:func:`~dperm.preprocessing.quantiles.rank_error`) of a quarter of the rows,
    ``16 (ln m + ln 10) / (n epsilon)``, within ``[TARGET_SHARE_MIN, TARGET_SHARE_MAX]``.
    A range that is noise makes the model's predictions noise (R^2 far below 0, measured
    in docs/results.md), so at small n epsilon the target takes more of the budget."""
    if not (n > 0 and epsilon > 0):
        return TARGET_SHARE_MIN
    needed = 16.0 * (math.log(log_grid().size) + math.log(10.0)) / (float(n) * float(epsilon))
    return float(min(TARGET_SHARE_MAX, max(TARGET_SHARE_MIN, needed)))


def warn_if_target_noisy(n: int, epsilon: float) -> bool:
    """Warn (public inputs only: n and the target's budget) when the target's private
    range will be mostly noise: the rank error of each of its two draws (the exponential
    mechanism's utility bound, :func:`~dperm.preprocessing.quantiles.rank_error`) above a
    quarter of the rows. The fit goes on (the range is then wide or off, the model's
    predictions noisy); declaring the range avoids it. Returns whether it warned."""
    error = rank_error(epsilon / 2.0, log_grid().size)
    if error > n / 4.0:
        from ..expectations import NoiseDominatesWarning

        warnings.warn(
            f"the regression target's private range at n={int(n)} rows with epsilon={epsilon:.3g} will be mostly "
            f"noise (a private quantile's rank error can reach {error:.0f} rows): declare the range that holds "
            "most of the target's values, make_pipeline(..., y_bounds=(low, high)), or give it a larger share "
            "(shares={'y': ...})", NoiseDominatesWarning, stacklevel=user_stacklevel())
        return True
    return False


CENTRED_MAP = True  # map y onto [-1, 1] about its private median (see target_range)


def target_range(y: np.ndarray, epsilon: float, *, accountant=None, random_state=None):
    """The private map ``(low, high)`` of a regression target, its range and its event.

    The target is a one-column table for :class:`~dperm.preprocessing.PrivateScaler`
    (``method="auto"``): at enough rows for the budget, an asymmetric range between its
    private 1%..10% and 90%..99% quantiles (skew-aware; not below 0 when the private
    centre and lower reach are not), else its private median +- 3 private median
    distances (of the rows off the median: a zero-inflated target keeps a spread; drawn
    with a public base measure decaying by up to ``e^-1`` a 26% grid step, capped by n and
    epsilon so that its span stays below a quarter of the median's margin). The
    scaler charges ``accountant`` before it reads y. Pure ``epsilon``-DP (replace-one).

    Returns ``(map, range, event)``: ``range`` is the released range (the predictions are
    clipped into it); ``map`` the interval mapped onto the model's [-1, 1], centred at
    the private median with the longer of the two reaches: a model the noise shrinks
    towards 0 then predicts the median, not the middle of a skewed range (which on a
    wealth or price target is far above most rows). Post-processing of released values.
    """
    scaler = PrivateScaler(epsilon=float(epsilon), range_switch=LEVEL_SWITCH, accountant=accountant,
                           random_state=random_state)
    # a spread drawn far above the target's makes every prediction wrong by its scale (R^2 of
    # -1e11 on crime1, docs/results.md), one drawn below only shrinks them to the median: the
    # spread's draw takes a public base measure that favours shorter spreads
    scaler._shorter_spreads = True
    scaler.fit(np.asarray(y, dtype=np.float64).reshape(-1, 1))
    low, high = (float(v) for v in scaler.bounds_[0])
    if not (math.isfinite(low) and math.isfinite(high) and high > low):  # released values only
        low, high = min(low, high) - 1.0, max(low, high) + 1.0
    median = float(scaler._location[0])
    if CENTRED_MAP and math.isfinite(median) and low < median < high:
        reach = max(median - low, high - median)
        return (median - reach, median + reach), (low, high), scaler.event_
    return (low, high), (low, high), scaler.event_
