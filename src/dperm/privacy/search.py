"""Calibration search: the smallest noise level an accountant certifies.

Privacy never rests on anything here: :func:`smallest_certified_noise` only returns noise
levels at which the accountant was evaluated and certified the target; the central-limit
model of Bu, Dong, Long, Su (2020) only supplies the starting guess and the first slope.
"""

from __future__ import annotations

import math

from .gaussian_dp import gaussian_dp_epsilon

__all__ = ["smallest_certified_noise", "clt_noise_ratio", "clt_log_slope", "step_gdp_mu"]


def clt_noise_ratio(mu_squared: float, q: float, steps: int) -> float | None:
    """Starting guess for a calibration search: the noise ratio sigma / sensitivity at
    which ``steps`` subsampled Gaussian steps are ``sqrt(mu_squared)``-GDP by the central
    limit theorem of Bu, Dong, Long, Su (2020), ``mu = q sqrt(T (exp(1/r^2) - 1))``.

    Only a guess (the accountants certify); ``None`` when the formula does not apply.
    """
    if not (mu_squared > 0 and 0 < q < 1 and steps >= 1):
        return None
    x = math.log1p(mu_squared / (q * q * steps))
    return 1.0 / math.sqrt(x) if x > 0 else None


def clt_log_slope(ratio: float, fixed_mu_squared: float, q: float, steps: int, delta: float) -> float | None:
    """``d log epsilon / d log ratio`` at ``ratio`` in the central-limit model of
    :func:`clt_noise_ratio` (``steps`` subsampled Gaussian steps composed with phases of
    Gaussian-DP parameter ``sqrt(fixed_mu_squared)``): the first secant step of a
    calibration search. Only a guess; ``None`` when the model does not apply."""
    if not (ratio > 0 and 0 < q < 1 and steps >= 1 and fixed_mu_squared >= 0):
        return None

    def log_epsilon(r):
        return math.log(gaussian_dp_epsilon(math.sqrt(fixed_mu_squared + q * q * steps * math.expm1(1.0 / (r * r))),
                                            delta))

    h = 0.01
    try:
        slope = (log_epsilon(ratio * math.exp(h)) - log_epsilon(ratio * math.exp(-h))) / (2 * h)
    except (OverflowError, ValueError):
        return None
    return slope if math.isfinite(slope) and slope < 0 else None


def smallest_certified_noise(epsilon_at, target: float, guess: float, *, floor: float, rtol: float = 1e-4,
                             ceiling: float = math.inf, factor: float = 2.0, budget_rtol: float = 1e-3,
                             slope: float | None = None) -> float:
    """The smallest noise level x (to relative precision ``rtol``) with
    ``epsilon_at(x) <= target``, for an ``epsilon_at`` that decreases in x.

    The returned value is always one at which ``epsilon_at`` was evaluated and certified
    (``<= target``): the search only ever returns points it evaluated and found certified,
    so privacy never rests on the guess or on a model.

    The search works on ``g = log(epsilon / target)`` against ``log x``. It first brackets
    the answer by secant steps from ``guess``, each at most a factor ``factor``, aimed at
    ``g = log(1 - budget_rtol) / 2`` (just inside the certified side). The first step
    uses ``slope`` (a model's ``d g / d log x``, e.g. :func:`clt_log_slope`; -1 if not
    given); later ones the last two evaluations. It then runs the Illinois variant of
    regula falsi on ``g`` minus that aim, safeguarded to stay ``rtol / 2`` inside the
    bracket, with a bisection step whenever a value is infinite. From a good guess this
    takes 2-3 accountant calls; bisection needs 13-15.

    ``floor``: below it the search stops lowering (the noise cannot be smaller);
    ``ceiling``: raise ``ValueError`` if no level up to it is certified. The search
    stops at the first certified point that spends the target to within ``budget_rtol``
    (0.1%): where epsilon is flat in the noise (a phase that holds a small share of the
    budget) pinning x to ``rtol`` would cost several more accountant calls for nothing.
    """
    def g(log_x):
        e = epsilon_at(math.exp(log_x))
        return math.log(e / target) if e > 0 else -math.inf

    step = math.log1p(rtol)
    spent_enough = math.log1p(-budget_rtol)
    aim = 0.5 * spent_enough
    max_move = math.log(factor)
    log_floor = math.log(floor)
    log_ceiling = math.log(ceiling) if math.isfinite(ceiling) else math.inf

    # Bracket: xh the smallest certified point seen (g <= 0), xl the largest uncertified.
    xh = g_hi = xl = g_lo = None
    x, previous = math.log(guess), None
    while True:
        gx = g(x)
        if gx <= 0:
            if gx >= spent_enough or x <= log_floor:
                return math.exp(x)
            xh, g_hi = x, gx
        else:
            xl, g_lo = x, gx
        if xh is not None and xl is not None:
            break
        if xh is None and x > log_ceiling:
            raise ValueError("no noise level meets the budget")
        if math.isinf(gx):
            move = -max_move if gx < 0 else max_move
        else:
            s = slope if slope is not None and slope < 0 else -1.0
            if previous is not None and math.isfinite(previous[1]) and x != previous[0]:
                secant = (gx - previous[1]) / (x - previous[0])
                s = secant if secant < 0 else s
            move = (aim - gx) / s
            # at least one rtol, at most a factor, always towards the unbracketed side
            move = math.copysign(min(max(abs(move), step), max_move), -1.0 if gx <= 0 else 1.0)
        previous = (x, gx)
        x = max(x + move, log_floor)

    kept = 0  # which end the last step kept: +1 the high, -1 the low (Illinois halving)
    h_lo, h_hi = g_lo - aim, g_hi - aim  # h_lo > 0 (uncertified), h_hi < 0 (certified, short of the aim)
    while xh - xl > step:
        width = xh - xl
        if math.isfinite(h_lo) and math.isfinite(h_hi) and h_lo > h_hi:
            x = xh - h_hi * width / (h_hi - h_lo)
            x = min(max(x, xl + 0.5 * step), xh - 0.5 * step)
        else:
            x = 0.5 * (xl + xh)
        gx = g(x)
        if gx <= 0:  # certified
            if gx >= spent_enough:
                return math.exp(x)
            xh, h_hi = x, gx - aim
            if kept == -1 and math.isfinite(h_lo):
                h_lo *= 0.5  # Illinois: the low end was kept twice (h_lo is then a weight, not a value)
            kept = -1
        else:
            xl, h_lo = x, gx - aim
            if kept == 1:
                h_hi *= 0.5
            kept = 1
    return math.exp(xh)


# Below this noise ratio sigma / sensitivity (budgets in the hundreds), subsampled steps
# are accounted by the full-batch closed form, a valid upper bound computed at once.

def step_gdp_mu(q: float, noise_ratio: float) -> float:
    """``q sqrt(exp(1/r^2) - 1)``: the central-limit Gaussian-DP parameter of one
    subsampled Gaussian step of noise ratio r = sigma / Delta (Bu, Dong, Long, Su 2020),
    i.e. the scale of one step's privacy loss; T steps compose to about ``sqrt(T)`` times it."""
    exponent = 1.0 / (noise_ratio * noise_ratio)
    return q * math.sqrt(math.expm1(exponent)) if exponent < 700 else math.inf
