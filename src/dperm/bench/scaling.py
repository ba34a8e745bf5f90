"""Scaling in n: measured error of a private learner against the slope of its paper's bound.

``dperm bench scaling`` (issue 5, item 3) runs one algorithm of the catalogue on a
synthetic problem chosen to meet its assumptions, over growing sample sizes n, and
compares the log-log slope of the measured error with the slope in n of the bound of
:mod:`dperm.theory` (``theory.bound_for`` / ``theory.slope_in_n``).

What is measured
----------------
The quantity the paper bounds (``theory.bound_case(...).quantity``):

* "excess empirical risk": ``F(w_priv) - F(w_hat)``, with ``w_hat`` from
  :func:`~dperm.problem.reference.solve_reference` (residual <= 1e-10) on the same data;
* "squared gradient norm E||grad F||^2" (non-convex bounds): ``||grad F(w_priv)||^2``
  (on a constrained problem the squared norm of the gradient mapping at step 1/beta).

Bounds on other quantities (population risk, second-order stationarity) are refused.

Problems (``ScalingConfig.problem``; ``"auto"`` picks the first that meets the
algorithm's assumptions, :func:`~dperm.algorithms.registry.check_assumptions`, for the
first bound case of ``theory.BOUNDS[algorithm]`` it can serve)
-------------------------------------------------------------------------------------------
* ``logistic_l2``: logistic loss + (mu/2)||w||^2 on a two-Gaussian mixture
  (:func:`~dperm.datasets.synthetic.make_classification_problem`, separation 1, rows on the
  unit sphere): mu-strongly convex, 1-Lipschitz, (1/4 + mu)-smooth. Strongly convex bounds.
* ``logistic_ball``: the same data, logistic loss over the L2 ball of radius ``radius``:
  convex, not strongly convex. Convex bounds.
* ``pl_least_squares``: least squares with a rank-deficient design
  (:func:`~dperm.datasets.synthetic.make_pl_problem`, rank d/2) over the L2 ball of radius
  ``radius`` (which makes the squared loss Lipschitz): Polyak-Lojasiewicz, not strongly
  convex. PL bounds (DP-GD, Wang, Ye, Xu 2017 Theorem 6.2). The PL constant handed to the
  algorithm (and to the bound) is *public*: it is that of an independent draw of the same
  generator, never computed from the data being fitted.
* ``glm_sigmoid`` / ``glm_sigmoid_ball`` / ``glm_sigmoid_l2``: the non-convex
  sigmoid-squared GLM loss (:func:`~dperm.datasets.synthetic.make_glm`), unconstrained, on
  the L2 ball of radius ``radius``, or with (mu/2)||w||^2 (``dp_gld`` needs lambda > 0).
  Non-convex bounds.

Design
------
* The data for size n are the first n rows of one draw of ``max(sizes)`` rows (seed
  ``ScalingConfig.seed``): the sizes are nested and share the ground truth, so only n
  varies along the curve.
* Every (n, repeat) fit draws independent noise (its own seed from the root seed, the
  size and the repeat), so the runs at different n are independent given the data and the
  standard errors of the means and of the fitted slope are honest. (Reusing one noise draw
  at every n would make the curve smoother than the algorithm is, and the quoted standard
  errors too small.)
* delta: ``None`` means a fixed ``delta = 1e-5`` (``0`` for the pure-DP-only algorithms:
  ``localization``, ``exponential_mechanism``). A fixed delta keeps the ``log(1/delta)``
  factors of the bounds constant, so only n moves; ``1e-5`` is below 1/n for every
  n < 100,000 (dperm warns otherwise). A delta shrinking with n (e.g. ``n^-1.1``) would
  add a log n factor to both the measured error and the bound.
* The bounds are order-of-magnitude expressions with constant 1 (see :mod:`dperm.theory`):
  only their slopes are comparable with the measurements, so the plot rescales the bound to
  pass through the first measured point.
* Predicted slope: the least-squares log-log slope of the bound over the same sizes
  (``predicted_slope``, the same estimator as the measured one, so log factors are
  averaged over the same range), and ``theory.slope_in_n`` at the middle size
  (``predicted_slope_local``, between n and 2n).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .. import theory
from .._files import write_atomic, write_text_atomic
from ..algorithms import registry
from ..privacy.budget import PrivacyBudget
from ..problem.erm import ERMProblem
from ..problem.reference import solve_reference
from .._warnings import user_stacklevel

__all__ = [
    "DEFAULT_SIZES",
    "PROBLEMS",
    "ScalingConfig",
    "ScalingReport",
    "SlopeFit",
    "build_problem",
    "choose_problem",
    "fitted_slope",
    "plot_scaling",
    "run_scaling",
    "scaling_command",
    "slope_summary",
]

DEFAULT_SIZES = (500, 1000, 2000, 4000, 8000, 16000)
DEFAULT_DELTA = 1e-5

_ER = "excess empirical risk"
_GN = "squared gradient norm E||grad F||^2"
_MEASURES = {_ER: "excess_risk", _GN: "grad_norm_sq"}

PROBLEMS: dict[str, str] = {
    "logistic_l2": "logistic loss + (mu/2)||w||^2, two-Gaussian mixture (make_classification_problem): "
                   "mu-strongly convex",
    "logistic_ball": "logistic loss over the L2 ball of radius R, two-Gaussian mixture: convex",
    "pl_least_squares": "least squares, rank-deficient design (make_pl_problem), L2 ball of radius R: "
                        "PL, not strongly convex",
    "glm_sigmoid": "sigmoid-squared GLM loss (make_glm), unconstrained: non-convex",
    "glm_sigmoid_ball": "sigmoid-squared GLM loss (make_glm) over the L2 ball of radius R: non-convex",
    "glm_sigmoid_l2": "sigmoid-squared GLM loss (make_glm) + (mu/2)||w||^2: non-convex",
}
"""Problem kind -> description (see the module docstring)."""

# The setting each kind is built for, and the bound settings it can serve (in order).
_KIND_SETTING = {
    "logistic_l2": "strongly_convex",
    "logistic_ball": "convex",
    "pl_least_squares": "pl",
    "glm_sigmoid": "nonconvex",
    "glm_sigmoid_ball": "nonconvex",
    "glm_sigmoid_l2": "nonconvex",
}
_SERVES = {
    "strongly_convex": ("strongly_convex", "convex"),
    "convex": ("convex",),
    "pl": ("pl", "nonconvex"),
    "nonconvex": ("nonconvex",),
}
_CANDIDATES = {
    "strongly_convex": ("logistic_l2",),
    "pl": ("pl_least_squares",),
    "convex": ("logistic_ball", "logistic_l2"),
    "nonconvex": ("glm_sigmoid", "glm_sigmoid_ball", "glm_sigmoid_l2"),
}
# Requirements that check_assumptions does not express.
_PREFERRED = {"dp_gld": "glm_sigmoid_l2"}  # Wang, Chen, Xu 2019 Alg. 1 needs lambda > 0


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class ScalingConfig:
    """One scaling experiment.

    Attributes
    ----------
    algorithm : str
        A catalogue name that has a bound in :data:`dperm.theory.BOUNDS`.
    sizes : tuple of int
        The sample sizes n (at least two distinct values; sorted on use).
    epsilon : float
        Privacy epsilon, fixed over n.
    delta : float or None
        Fixed over n. ``None``: 1e-5, or 0 for algorithms that give pure DP only.
    d : int
        Dimension.
    repeats : int
        Private fits per size.
    seed : int
        Seed of the data draw and of the noise.
    problem : str
        ``"auto"`` or a key of :data:`PROBLEMS`.
    mu : float
        l2 strength of the ``*_l2`` problems.
    radius : float
        Radius of the L2 ball of the ``*_ball`` problems and of ``pl_least_squares``.
    params : dict
        Extra hyper-parameters for ``fit`` (override the automatic ones, e.g. the public
        ``pl_constant`` of ``dp_gd``).
    """

    algorithm: str = "gd_output_perturbation"
    sizes: tuple[int, ...] = DEFAULT_SIZES
    epsilon: float = 1.0
    delta: float | None = None
    d: int = 10
    repeats: int = 5
    seed: int = 0
    problem: str = "auto"
    mu: float = 0.1
    radius: float = 2.0
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        sizes = tuple(sorted({int(n) for n in self.sizes}))
        if len(sizes) < 2:
            raise ValueError(f"sizes must hold at least two distinct sample sizes, got {self.sizes!r}")
        if sizes[0] < 10:
            raise ValueError(f"every size must be >= 10, got {sizes[0]}")
        object.__setattr__(self, "sizes", sizes)
        if isinstance(self.repeats, bool) or int(self.repeats) != self.repeats or self.repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1, got {self.repeats!r}")
        if isinstance(self.d, bool) or int(self.d) != self.d or self.d < 2:
            raise ValueError(f"d must be an integer >= 2, got {self.d!r}")
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {self.epsilon}")
        if self.delta is not None and not 0.0 <= self.delta < 1.0:
            raise ValueError(f"delta must be None or in [0, 1), got {self.delta}")
        if self.problem != "auto" and self.problem not in PROBLEMS:
            raise ValueError(f"problem must be 'auto' or one of {sorted(PROBLEMS)}, got {self.problem!r}")
        if not (self.mu > 0 and self.radius > 0):
            raise ValueError("mu and radius must be > 0")
        registry.get(self.algorithm)  # clear error for an unknown name
        if self.algorithm not in theory.BOUNDS:
            raise ValueError(f"{self.algorithm!r} has no bound in dperm.theory.BOUNDS; "
                             f"choose one of {sorted(set(theory.BOUNDS) & set(registry.names()))}")

    @property
    def total_fits(self) -> int:
        """Number of private fits (calls of ``progress``)."""
        return len(self.sizes) * self.repeats

    def resolved_delta(self) -> float:
        if self.delta is not None:
            return float(self.delta)
        info = registry.get(self.algorithm)
        return 0.0 if "pure_dp" in info.requires else DEFAULT_DELTA


# --------------------------------------------------------------------------- problems
@dataclass(frozen=True)
class _Data:
    kind: str
    X: np.ndarray
    y: np.ndarray
    loss: Any
    pl_constant: float | None  # public estimate (independent draw), pl_least_squares only


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([abs(int(k)) for k in key]))


def _draw(kind: str, n: int, d: int, seed: int) -> _Data:
    """n rows of problem ``kind`` (deterministic in seed)."""
    from ..datasets import synthetic

    pl = None
    if kind in ("logistic_l2", "logistic_ball"):
        bunch = synthetic.make_classification_problem(n, d, separation=1.0, random_state=_rng(seed, 0))
    elif kind == "pl_least_squares":
        bunch = synthetic.make_pl_problem(n, d, noise=0.1, random_state=_rng(seed, 0))
        # Public PL constant: that of an independent draw of the same generator.
        pl = float(synthetic.make_pl_problem(n, d, noise=0.1, random_state=_rng(seed, 2)).pl_constant)
    else:
        bunch = synthetic.make_glm(n, d, noise=0.1, scale=2.0, random_state=_rng(seed, 0))
    return _Data(kind, bunch.data, bunch.target, bunch.loss, pl)


def build_problem(kind: str, data: _Data, n: int, *, mu: float, radius: float) -> ERMProblem:
    """The ERMProblem of ``kind`` on the first n rows of ``data``."""
    X, y = data.X[:n], data.y[:n]
    if kind == "logistic_l2":
        return ERMProblem(X, y, "logistic", ("l2", mu))
    if kind == "logistic_ball":
        return ERMProblem(X, y, "logistic", constraint=("l2_ball", radius))
    if kind == "pl_least_squares":
        return ERMProblem(X, y, "squared", constraint=("l2_ball", radius))
    if kind == "glm_sigmoid":
        return ERMProblem(X, y, data.loss)
    if kind == "glm_sigmoid_ball":
        return ERMProblem(X, y, data.loss, constraint=("l2_ball", radius))
    if kind == "glm_sigmoid_l2":
        return ERMProblem(X, y, data.loss, ("l2", mu))
    raise ValueError(f"unknown problem {kind!r}; choose one of {sorted(PROBLEMS)}")


def _bound_setting(algorithm: str, kind: str, delta: float) -> theory.BoundCase | None:
    """The bound case of ``algorithm`` that problem ``kind`` serves, or None."""
    for setting in _SERVES[_KIND_SETTING[kind]]:
        for case in theory.BOUNDS[algorithm].cases:
            if case.setting == setting and case.applies(strongly_convex=setting in ("strongly_convex", "pl"),
                                                        delta=delta):
                return case
    return None


def choose_problem(config: ScalingConfig) -> tuple[str, theory.BoundCase]:
    """The problem kind and the bound case of the experiment.

    ``config.problem="auto"``: for each case of ``theory.BOUNDS[algorithm]`` in order, the
    first candidate problem of that setting that passes ``check_assumptions`` (on a small
    draw) and whose quantity can be measured.

    Raises
    ------
    ValueError
        No problem fits (or the given one does not), or the bound is on a quantity this
        benchmark cannot measure.
    """
    info = registry.get(config.algorithm)
    delta = config.resolved_delta()
    budget = PrivacyBudget(config.epsilon, delta)
    if config.problem != "auto":
        candidates = [config.problem]
    elif config.algorithm in _PREFERRED:
        candidates = [_PREFERRED[config.algorithm]]
    else:
        candidates = []
        for case in theory.BOUNDS[config.algorithm].cases:
            candidates += [k for k in _CANDIDATES[case.setting] if k not in candidates]
    reasons = []
    for kind in candidates:
        case = _bound_setting(config.algorithm, kind, delta)
        if case is None:
            have = ", ".join(f"{c.setting}/{c.privacy}" for c in theory.BOUNDS[config.algorithm].cases)
            reasons.append(f"{kind}: no bound of {config.algorithm} for a {_KIND_SETTING[kind]} problem "
                           f"with delta={delta:g} (the papers give {have})")
            continue
        if case.quantity not in _MEASURES:
            reason = (f"its bound is on the {case.quantity}, which this benchmark does not measure "
                      f"(it measures the {' or the '.join(_MEASURES)})")
            if reason not in reasons:
                reasons.append(reason)
            continue
        n = min(config.sizes[0], 200)
        problem = build_problem(kind, _draw(kind, n, config.d, config.seed), n, mu=config.mu, radius=config.radius)
        try:
            registry.check_assumptions(info, problem, budget)
        except registry.AssumptionError as exc:
            reasons.append(f"{kind}: {exc}")
            continue
        return kind, case
    raise ValueError(f"no synthetic problem fits {config.algorithm}: " + "; ".join(reasons))


def _measure(problem: ERMProblem, coef: np.ndarray, reference, measure: str) -> float:
    if measure == "excess_risk":
        return float(problem.objective(coef) - reference.objective)
    grad = problem.gradient(coef)
    if problem.constraint.bounded:  # squared norm of the gradient mapping at step 1/beta
        step = 1.0 / problem.smoothness
        grad = (np.asarray(coef, dtype=np.float64) - problem.prox_step(coef, grad, step)) / step
    return float(grad @ grad)


def _bound_params(problem: ERMProblem, case: theory.BoundCase, reference, *, epsilon, delta,
                  pl_constant) -> dict:
    n, d = problem.n_samples, problem.n_features
    params: dict[str, Any] = {
        "n": n, "d": d, "epsilon": epsilon, "delta": delta, "setting": case.setting,
        "lipschitz": problem.lipschitz, "smoothness": problem.smoothness,
        "w_norm": max(float(np.linalg.norm(reference.coef)), 1e-12),
        "initial_gap": max(float(problem.objective(np.zeros(d)) - reference.objective), 1e-12),
        "hessian_lipschitz": max(problem.constants.hessian_lipschitz, 1e-12),
    }
    domain = problem.effective_constraint()
    if domain is not None:
        params["diameter"] = 2.0 * domain.l2_radius(d)
        params["gaussian_width"] = domain.l2_radius(d) * math.sqrt(d)
    if case.setting == "strongly_convex":
        params["strong_convexity"] = problem.strong_convexity
    elif case.setting == "pl":
        params["strong_convexity"] = min(pl_constant, problem.smoothness)
    return params


def _auto_params(config: ScalingConfig, case: theory.BoundCase, pl_constant) -> dict:
    params: dict[str, Any] = {}
    if config.algorithm == "dp_gd":
        if case.setting == "pl":
            params.update(regime="pl", output="last", pl_constant=pl_constant)
        else:  # Theorem 6.3 bounds the gradient norm of a uniformly random iterate
            params.update(regime="nonconvex", output="random")
    params.update(config.params)
    return params


# --------------------------------------------------------------------------- the run
def run_scaling(config: ScalingConfig = ScalingConfig(), progress: Callable[[], Any] | None = None) -> pd.DataFrame:
    """Run ``config.algorithm`` over ``config.sizes``; one row per n.

    ``progress`` is an optional callable advanced once per finished private fit
    (``config.total_fits`` calls in all).

    Returns
    -------
    pandas.DataFrame
        Columns: ``algorithm, problem, setting, quantity, measure, source, n, d, epsilon,
        delta, repeats, measured`` (mean over repeats), ``measured_sem, measured_std,
        measured_min, measured_max, seconds`` (mean wall seconds per fit), ``seconds_total,
        reference_seconds, steps`` (the public step count, when the algorithm has one),
        ``bound`` (``theory.bound_for``),
        ``bound_slope`` (``theory.slope_in_n`` at n), ``lipschitz, smoothness,
        strong_convexity, reference_objective, hyperparameters`` (JSON).
    """
    info = registry.get(config.algorithm)
    kind, case = choose_problem(config)
    measure = _MEASURES[case.quantity]
    delta = config.resolved_delta()
    budget = PrivacyBudget(config.epsilon, delta)
    data = _draw(kind, max(config.sizes), config.d, config.seed)
    hyper = _auto_params(config, case, data.pl_constant)
    rows = []
    for n in config.sizes:
        problem = build_problem(kind, data, n, mu=config.mu, radius=config.radius)
        t0 = time.perf_counter()
        reference = solve_reference(problem)
        reference_seconds = time.perf_counter() - t0
        values, seconds, steps = [], [], []
        for r in range(config.repeats):
            rng = _rng(config.seed, 1, r, n)  # independent noise at every (n, repeat)
            t0 = time.perf_counter()
            fit = info.fit(problem, budget, rng=rng, **hyper)
            seconds.append(time.perf_counter() - t0)
            values.append(_measure(problem, fit.coef, reference, measure))
            step = fit.hyperparameters.get("steps")
            steps.append(float(step) if isinstance(step, (int, np.integer)) else math.nan)
            if progress is not None:
                progress()
        params = _bound_params(problem, case, reference, epsilon=config.epsilon, delta=delta,
                               pl_constant=data.pl_constant)
        values = np.asarray(values)
        std = float(values.std(ddof=1)) if values.size > 1 else math.nan
        rows.append({
            "algorithm": config.algorithm, "problem": kind, "setting": case.setting, "quantity": case.quantity,
            "measure": measure, "source": case.source, "n": n, "d": config.d, "epsilon": config.epsilon,
            "delta": delta, "repeats": config.repeats,
            "measured": float(values.mean()), "measured_sem": std / math.sqrt(values.size),
            "measured_std": std, "measured_min": float(values.min()), "measured_max": float(values.max()),
            "seconds": float(np.mean(seconds)), "seconds_total": float(np.sum(seconds)),
            "reference_seconds": reference_seconds,
            "steps": float(np.mean(steps)),
            "bound": theory.bound_for(config.algorithm, **params),
            "bound_slope": theory.slope_in_n(config.algorithm, **params),
            "lipschitz": problem.lipschitz, "smoothness": problem.smoothness,
            "strong_convexity": params.get("strong_convexity", 0.0),
            "reference_objective": reference.objective,
            "hyperparameters": json.dumps(hyper, default=str, sort_keys=True),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- slopes
@dataclass(frozen=True)
class SlopeFit:
    """Least-squares fit of ``log y = intercept + slope log n``.

    ``stderr`` is the usual OLS standard error of the slope (NaN with two points);
    ``dropped`` counts the non-positive values left out (their log is undefined).
    """

    slope: float
    stderr: float
    intercept: float
    n_points: int
    r_squared: float
    dropped: int = 0

    def predict(self, n) -> np.ndarray:
        return np.exp(self.intercept + self.slope * np.log(np.asarray(n, dtype=np.float64)))


def fitted_slope(frame, values=None, *, column: str = "measured", n_column: str = "n") -> SlopeFit:
    """Least-squares log-log slope of ``frame[column]`` against ``frame[n_column]``.

    Either ``fitted_slope(frame)`` with a DataFrame of :func:`run_scaling`, or
    ``fitted_slope(n, values)`` with two arrays. Non-positive values are dropped (with a
    warning); at least two points must remain.
    """
    if values is None:
        n = np.asarray(frame[n_column], dtype=np.float64)
        y = np.asarray(frame[column], dtype=np.float64)
    else:
        n = np.asarray(frame, dtype=np.float64)
        y = np.asarray(values, dtype=np.float64)
    if n.shape != y.shape or n.ndim != 1:
        raise ValueError("n and the values must be 1-d arrays of the same length")
    keep = np.isfinite(y) & (y > 0) & np.isfinite(n) & (n > 0)
    dropped = int(n.size - keep.sum())
    if dropped:
        warnings.warn(f"{dropped} non-positive or non-finite value(s) left out of the log-log fit",
                      stacklevel=user_stacklevel())
    x, z = np.log(n[keep]), np.log(y[keep])
    k = x.size
    if k < 2 or np.ptp(x) == 0:
        raise ValueError("a log-log slope needs at least two points with distinct n and positive values")
    xc = x - x.mean()
    sxx = float(xc @ xc)
    slope = float(xc @ (z - z.mean()) / sxx)
    intercept = float(z.mean() - slope * x.mean())
    residual = z - intercept - slope * x
    ss_res = float(residual @ residual)
    ss_tot = float(((z - z.mean()) ** 2).sum())
    stderr = math.sqrt(ss_res / (k - 2) / sxx) if k > 2 else math.nan
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return SlopeFit(slope, stderr, intercept, k, r2, dropped)


def slope_summary(frame: pd.DataFrame) -> dict:
    """Measured slope (with its standard error) next to the bound's, for a :func:`run_scaling` frame.

    ``predicted_slope`` is the least-squares log-log slope of the ``bound`` column over the
    same sizes; ``predicted_slope_local`` is ``theory.slope_in_n`` at the middle size
    (geometric mean of the two middle ones for an even count). ``z`` is
    ``(measured - predicted) / stderr``.
    """
    measured = fitted_slope(frame)
    predicted = fitted_slope(frame, column="bound")
    local = np.asarray(frame.sort_values("n")["bound_slope"], dtype=np.float64)
    mid = len(local) // 2
    local_slope = float(local[mid]) if len(local) % 2 else float(0.5 * (local[mid - 1] + local[mid]))
    first = frame.iloc[0]
    diff = measured.slope - predicted.slope
    return {
        "algorithm": str(first["algorithm"]), "problem": str(first["problem"]), "setting": str(first["setting"]),
        "quantity": str(first["quantity"]), "source": str(first["source"]),
        "sizes": [int(n) for n in frame["n"]], "repeats": int(first["repeats"]),
        "epsilon": float(first["epsilon"]), "delta": float(first["delta"]), "d": int(first["d"]),
        "measured_slope": measured.slope, "measured_slope_stderr": measured.stderr,
        "measured_r_squared": measured.r_squared, "points_dropped": measured.dropped,
        "predicted_slope": predicted.slope, "predicted_slope_local": local_slope,
        "difference": diff,
        "z": diff / measured.stderr if measured.stderr and math.isfinite(measured.stderr) else math.nan,
        "seconds_fits": float(frame["seconds_total"].sum()),
        "seconds_reference": float(frame["reference_seconds"].sum()),
    }


# --------------------------------------------------------------------------- plot
def plot_scaling(frame: pd.DataFrame, path) -> Path:
    """Log-log plot of the measured error (mean +- sem) against n, with the bound rescaled.

    The bound is multiplied by ``measured[0] / bound[0]`` so that it passes through the
    first measured point: the papers' bounds hold up to hidden constants, so only the
    slopes are comparable. Written as PNG with the Agg backend.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = frame.sort_values("n")
    summary = slope_summary(frame)
    n = frame["n"].to_numpy(dtype=np.float64)
    y = frame["measured"].to_numpy(dtype=np.float64)
    sem = np.nan_to_num(frame["measured_sem"].to_numpy(dtype=np.float64))
    bound = frame["bound"].to_numpy(dtype=np.float64)
    positive = y > 0
    anchor = int(np.argmax(positive))  # first positive measurement
    scaled = bound * (y[anchor] / bound[anchor])
    fit = fitted_slope(frame) if summary["points_dropped"] == 0 else None

    fig, ax = plt.subplots(figsize=(7.2, 5.0))
    lower = np.minimum(sem, 0.999 * y)  # keep the lower whisker positive on a log axis
    ax.errorbar(n[positive], y[positive], yerr=[lower[positive], sem[positive]], fmt="o", capsize=3,
                color="C0", label=f"measured {summary['quantity']} (mean +- sem, {summary['repeats']} runs)")
    if fit is not None:
        ax.plot(n, fit.predict(n), ":", color="C0",
                label=f"least-squares fit: slope {summary['measured_slope']:.3f}"
                      + (f" +- {summary['measured_slope_stderr']:.2g}"
                         if math.isfinite(summary["measured_slope_stderr"]) else ""))
    ax.plot(n, scaled, "--", color="C3",
            label=f"bound x const (slope {summary['predicted_slope']:.3f}; "
                  f"slope_in_n {summary['predicted_slope_local']:.3f})")
    ax.set(xscale="log", yscale="log", xlabel="n (examples)", ylabel=summary["quantity"])
    ax.set_title(f"{summary['algorithm']} on {summary['problem']} ({summary['setting']}), d={summary['d']}, "
                 f"eps={summary['epsilon']:g}, delta={summary['delta']:g}\n"
                 "bound rescaled through the first point: hidden constants, only slopes compare",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.text(0.01, 0.005, f"bound: {summary['source']}", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- command
@dataclass(frozen=True)
class ScalingReport:
    """What :func:`scaling_command` returns: the per-n table, the slopes, the files."""

    config: ScalingConfig
    frame: pd.DataFrame
    summary: dict
    csv: Path
    png: Path
    json: Path
    seconds: float  # wall seconds of the whole command

    def text(self) -> str:
        s = self.summary
        se = s["measured_slope_stderr"]
        return (f"{s['algorithm']} on {s['problem']} ({s['setting']}): measured slope "
                f"{s['measured_slope']:.3f}" + (f" +- {se:.2g}" if math.isfinite(se) else "")
                + f", bound slope {s['predicted_slope']:.3f} (slope_in_n at the middle size "
                f"{s['predicted_slope_local']:.3f}); {self.seconds:.1f} s")


def scaling_command(algorithm: str = "gd_output_perturbation", *, sizes: Sequence[int] = DEFAULT_SIZES,
                    repeats: int = 5, out="dperm_output", epsilon: float = 1.0, delta: float | None = None,
                    d: int = 10, seed: int = 0, problem: str = "auto", mu: float = 0.1, radius: float = 2.0,
                    params: dict | None = None, progress: Callable[[], Any] | None = None) -> ScalingReport:
    """Run a scaling experiment and write ``out/scaling_<algorithm>.{csv,png,json}``.

    The plain keyword arguments are those of ``dperm bench scaling``; see
    :class:`ScalingConfig`. The JSON file holds the summary (:func:`slope_summary`) and the
    configuration.
    """
    t0 = time.perf_counter()
    config = ScalingConfig(algorithm=algorithm, sizes=tuple(sizes), epsilon=epsilon, delta=delta, d=d,
                           repeats=repeats, seed=seed, problem=problem, mu=mu, radius=radius,
                           params=dict(params or {}))
    frame = run_scaling(config, progress=progress)
    summary = slope_summary(frame)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv = write_atomic(out / f"scaling_{algorithm}.csv", lambda p: frame.to_csv(p, index=False))
    png = write_atomic(out / f"scaling_{algorithm}.png", lambda p: plot_scaling(frame, p))
    seconds = time.perf_counter() - t0
    summary = {**summary, "seconds_total": seconds}
    path = out / f"scaling_{algorithm}.json"
    record = {"summary": summary, "config": {**asdict(config), "sizes": list(config.sizes),
                                             "delta": config.resolved_delta()}}
    write_text_atomic(path, json.dumps(record, indent=2, default=str) + "\n")
    return ScalingReport(config=config, frame=frame, summary=summary, csv=csv, png=png, json=path,
                         seconds=seconds)
