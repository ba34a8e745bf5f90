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

__all__ = ["target_range", "target_centre", "target_noisy", "warn_if_target_noisy", "target_share", "TARGET_SHARE_MIN",
           "TARGET_SHARE_MAX", "TARGET_SHARE_MIN_DECLARED", "within_declared"]

TARGET_SHARE_MIN = 0.1  # of epsilon: the target's range when rows are plenty
TARGET_SHARE_MAX = 0.5  # of epsilon: at most, when rows are few for the budget (a range drawn far off
# the data makes every prediction wrong by its scale: R^2 of -1e12; the model is noise there anyway)
TARGET_SHARE_MIN_DECLARED = 0.25  # of epsilon, inside declared bounds: enough for the skew-aware range
# at n epsilon of a few thousand (measured, docs/results.md: txhousing 0.02 -> 0.59 at epsilon 1)


def target_share(n: int, epsilon: float, declared: bool = False) -> float:
    """The default share of epsilon of a regression target's private range, from public
    inputs (n, the total epsilon): the share at which each of its two draws has a rank
    error (:func:`~dperm.preprocessing.quantiles.rank_error`) of a quarter of the rows,
    ``16 (ln m + ln 10) / (n epsilon)``, within ``[TARGET_SHARE_MIN, TARGET_SHARE_MAX]``.
    A range that is noise makes the model's predictions noise (R^2 far below 0, measured
    in docs/results.md), so at small n epsilon the target takes more of the budget.

    ``declared``: the range is drawn inside declared bounds (the pipeline's private
    winsorization), where the model otherwise takes the whole budget: the floor is then
    :data:`TARGET_SHARE_MIN_DECLARED`, which buys the asymmetric (skew-aware) range at n
    epsilon of a few thousand; without declared bounds the preprocessing already takes
    its part and a larger floor costs the model more than the range gains (measured)."""
    floor = TARGET_SHARE_MIN_DECLARED if declared else TARGET_SHARE_MIN
    if not (n > 0 and epsilon > 0):
        return floor
    needed = 16.0 * (math.log(log_grid().size) + math.log(10.0)) / (float(n) * float(epsilon))
    return float(min(TARGET_SHARE_MAX, max(floor, needed)))


def target_noisy(n: int, epsilon: float) -> bool:
    """Whether the target's private range at ``epsilon`` over n rows will be mostly noise:
    the rank error of each of its two draws (the exponential mechanism's utility bound,
    :func:`~dperm.preprocessing.quantiles.rank_error`) above a quarter of the rows. Public
    inputs only."""
    return rank_error(epsilon / 2.0, log_grid().size) > n / 4.0


def warn_if_target_noisy(n: int, epsilon: float) -> bool:
    """Warn (public inputs only: n and the target's budget) when the target's private
    range will be mostly noise: the rank error of each of its two draws (the exponential
    mechanism's utility bound, :func:`~dperm.preprocessing.quantiles.rank_error`) above a
    quarter of the rows. The fit goes on (the range is then wide or off, the model's
    predictions noisy); declaring the range avoids it. Returns whether it warned."""
    error = rank_error(epsilon / 2.0, log_grid().size)
    if target_noisy(n, epsilon):
        from ..expectations import NoiseDominatesWarning

        warnings.warn(
            f"the regression target's private range at n={int(n)} rows with epsilon={epsilon:.3g} will be mostly "
            f"noise (a private quantile's rank error can reach {error:.0f} rows): declare the range that holds "
            "most of the target's values, make_pipeline(..., y_bounds=(low, high)), or give it a larger share "
            "(shares={'y': ...})", NoiseDominatesWarning, stacklevel=user_stacklevel())
        return True
    return False


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
    clipped into it) and ``map`` the interval mapped onto the model's [-1, 1]: the same
    range. (A map centred at the private median with the longer of the two reaches, so
    that a model the noise shrinks predicts the median, was the default until the
    constant regime took the noise-dominated fits: it doubled the scale of the shorter
    side, and the range itself scored higher on every table with an asymmetric range at
    epsilon 0.5 to 2, docs/results.md, "Zero-inflated targets".) Post-processing of
    released values.
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
    return (low, high), (low, high), scaler.event_


def within_declared(released: tuple[float, float], declared: tuple[float, float]) -> tuple[float, float]:
    """``released`` intersected with the ``declared`` bounds, or ``declared`` when they do
    not overlap (a draw landed off them): post-processing of a released pair and public
    bounds."""
    low, high = max(released[0], declared[0]), min(released[1], declared[1])
    return (float(low), float(high)) if high > low else (float(declared[0]), float(declared[1]))


def target_centre(y: np.ndarray, epsilon: float, *, bounds: tuple[float, float] | None = None, accountant=None,
                  random_state=None) -> tuple[float, object]:
    """One private median of a regression target, with the whole ``epsilon`` (pure
    epsilon-DP, replace-one): the exponential mechanism over the centre candidates of
    :func:`~dperm.preprocessing.quantiles.centre_grid` with their public base measure,
    the draw a :class:`~dperm.preprocessing.PrivateScaler` makes for a column's centre
    (McSherry and Talwar 2007). ``bounds`` (declared, public): y clipped into them first,
    and the draw too. A value of y that is not a finite number is left out (each row by
    itself). Charged to ``accountant`` (else the active one) before y is read.

    Used where the public inputs say a linear model will be noise
    (:func:`dperm.pipeline.DPPipeline`'s ``"constant"`` regime): the intercept-only
    model's one statistic gets the whole budget instead of half of a range's. Returns
    ``(centre, event)``."""
    from ..privacy.mechanisms import charge, charging
    from ..privacy.noise import make_rng
    from .quantiles import centre_grid, quantile_event, rank_counts, select_quantile

    grid, prior = centre_grid()
    event = quantile_event(float(epsilon), grid)
    if accountant is not None:
        with charging(accountant):
            charge(event, "target centre")
    else:
        charge(event, "target centre")
    values = np.asarray(y, dtype=np.float64).ravel()
    values = np.sort(values[np.isfinite(values)])
    if bounds is not None:
        values = np.clip(values, bounds[0], bounds[1])
    rng = None if random_state is None else make_rng(random_state)
    centre = float(select_quantile(rank_counts(values, grid), 0.5, grid, float(epsilon), rng, prior, grouped=True))
    if bounds is not None:
        centre = float(np.clip(centre, bounds[0], bounds[1]))
    return centre, event
