"""The bounds of every algorithm of the catalogue, as cases (setting, privacy, function,
quantity, source), and their evaluation (:func:`bound_for`, :func:`slope_in_n`)."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

from .._validation import check_positive
from ._common import _at_least_one, _d, _delta, _lg, _n, _pos, _probability, _strong_convexity  # noqa: F401
from .bassily_smith_thakurta_2014 import *  # noqa: F401,F403
from .wang_ye_xu_2017 import *  # noqa: F401,F403
from .zhang_zheng_mou_wang_2017 import *  # noqa: F401,F403
from .wang_chen_xu_2019 import *  # noqa: F401,F403

# registry
# --------------------------------------------------------------------------------------

_SETTINGS = ("strongly_convex", "pl", "convex", "nonconvex")
_PRIVACY = ("pure", "approx", "any")


@dataclass(frozen=True)
class BoundCase:
    """One bound of an algorithm: where it applies, what it bounds, where it comes from.

    Attributes
    ----------
    setting : str
        "strongly_convex" or "pl" (need ``strong_convexity > 0``), "convex" or "nonconvex".
    privacy : str
        "pure" (delta = 0), "approx" (delta > 0) or "any".
    function : callable
        The bound, a function of the problem's keyword parameters.
    quantity : str
        What is bounded (excess empirical risk, squared gradient norm, ...).
    source : str
        Paper and theorem.
    """

    setting: str
    privacy: str
    function: Callable[..., float]
    quantity: str
    source: str

    def __post_init__(self) -> None:
        if self.setting not in _SETTINGS or self.privacy not in _PRIVACY:
            raise ValueError(f"bad case {self.setting!r} / {self.privacy!r}")

    def applies(self, *, strongly_convex: bool, delta: float) -> bool:
        """Whether this case covers a problem with this curvature and delta."""
        if self.setting in ("strongly_convex", "pl") and not strongly_convex:
            return False
        if self.privacy == "pure" and delta > 0:
            return False
        if self.privacy == "approx" and delta == 0:
            return False
        return True

    def __call__(self, **problem: Any) -> float:
        """Evaluate the bound on the parameters it takes (other problem keys are ignored)."""
        params = inspect.signature(self.function).parameters
        return float(self.function(**{k: v for k, v in problem.items() if k in params}))


@dataclass(frozen=True)
class AlgorithmBound:
    """The bounds the papers give for one algorithm; calling it evaluates the applicable one.

    Attributes
    ----------
    algorithm : str
        Name in the catalogue.
    cases : tuple of BoundCase
        In order of preference: the first case that applies is used.
    """

    algorithm: str
    cases: tuple[BoundCase, ...]

    def select(self, **problem: Any) -> BoundCase:
        """The first case compatible with ``problem`` (``setting=`` restricts the choice).

        Raises
        ------
        ValueError
            If no case applies (e.g. a strongly convex-only bound with mu = 0, or an
            (epsilon, delta) bound with delta = 0), or on an invalid delta / mu.
        """
        setting = problem.get("setting")
        if setting is not None and setting not in _SETTINGS:
            raise ValueError(f"setting must be one of {_SETTINGS}, got {setting!r}")
        delta = _delta(problem.get("delta", 0.0), required=False)
        mu = check_positive("strong_convexity", problem.get("strong_convexity", 0.0), allow_zero=True)
        for case in self.cases:
            if setting is not None and case.setting != setting:
                continue
            if case.applies(strongly_convex=mu > 0, delta=delta):
                return case
        have = ", ".join(f"{c.setting}/{c.privacy}" for c in self.cases)
        raise ValueError(
            f"no bound for {self.algorithm} with setting={setting}, strong_convexity={mu}, "
            f"delta={delta}; the papers give: {have} (strongly_convex / pl need "
            "strong_convexity > 0; approx needs delta > 0, pure needs delta = 0)"
        )

    def __call__(self, **problem: Any) -> float:
        return self.select(**problem)(**problem)


_ER = "excess empirical risk"
_GN = "squared gradient norm E||grad F||^2"
_PR = "excess population risk"
_SO = "accuracy alpha of a second-order stationary point"

_BST_SGD = (
    BoundCase("strongly_convex", "approx", bst14_noisy_sgd_strongly_convex_excess_risk_bound, _ER,
              "Bassily, Smith, Thakurta 2014, Theorem 2.4 (2), Table 1"),
    BoundCase("convex", "approx", bst14_noisy_sgd_convex_excess_risk_bound, _ER,
              "Bassily, Smith, Thakurta 2014, Theorem 2.4 (1), Table 1"),
)

BOUNDS: dict[str, AlgorithmBound] = {
    bound.algorithm: bound
    for bound in [
        AlgorithmBound("output_perturbation", (
            BoundCase("strongly_convex", "any", output_perturbation_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 2 (T -> infinity)"),
        )),
        AlgorithmBound("gd_output_perturbation", (
            BoundCase("strongly_convex", "any", gd_output_perturbation_strongly_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 2, Table 1"),
            BoundCase("convex", "any", gd_output_perturbation_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 3"),
        )),
        AlgorithmBound("objective_perturbation", (
            BoundCase("strongly_convex", "any", bst14_objective_perturbation_strongly_convex_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Section 1.1 and Table 1 (smooth rows)"),
            BoundCase("convex", "any", bst14_objective_perturbation_convex_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Section 1.1 and Table 1 (smooth rows)"),
        )),
        AlgorithmBound("noisy_gd", _BST_SGD),
        AlgorithmBound("dp_sgd", _BST_SGD),
        AlgorithmBound("dp_svrg", (
            BoundCase("strongly_convex", "approx", dp_svrg_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 4.2, Table 1"),
        )),
        AlgorithmBound("dp_svrg_pp", (
            BoundCase("convex", "approx", dp_svrg_pp_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 4.4, Table 2"),
        )),
        AlgorithmBound("dp_accmd", (
            BoundCase("convex", "approx", dp_accmd_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 5.4, Table 3"),
        )),
        AlgorithmBound("exponential_mechanism", (
            BoundCase("convex", "any", bst14_exponential_mechanism_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Theorem 3.2, Table 1"),
        )),
        AlgorithmBound("localization", (
            BoundCase("strongly_convex", "any", bst14_localization_excess_risk_bound, _ER,
                      "Bassily, Smith, Thakurta 2014, Theorem 4.3, Table 1"),
        )),
        AlgorithmBound("dp_gd", (
            BoundCase("pl", "approx", dp_gd_pl_excess_risk_bound, _ER,
                      "Wang, Ye, Xu 2017, Theorem 6.2"),
            BoundCase("nonconvex", "approx", dp_gd_nonconvex_gradient_norm_bound, _GN,
                      "Wang, Ye, Xu 2017, Theorem 6.3"),
        )),
        AlgorithmBound("rrpsgd", (
            BoundCase("nonconvex", "approx", rrpsgd_gradient_norm_bound, _GN,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 5, Table 1"),
            BoundCase("convex", "approx", rrpsgd_convex_excess_risk_bound, _ER,
                      "Zhang, Zheng, Mou, Wang 2017, Theorem 5 (convex case)"),
        )),
        AlgorithmBound("dp_gld", (
            BoundCase("nonconvex", "approx", dp_gld_excess_risk_bound, _ER,
                      "Wang, Chen, Xu 2019, Theorem 2 and Remark 1"),
        )),
        AlgorithmBound("dp_fw_l2", (
            BoundCase("nonconvex", "approx", dp_fw_l2_population_risk_bound, _PR,
                      "Wang, Chen, Xu 2019, Theorem 5"),
        )),
        AlgorithmBound("dp_fw_l1", (
            BoundCase("nonconvex", "approx", dp_fw_l1_population_risk_bound, _PR,
                      "Wang, Chen, Xu 2019, Theorem 6"),
        )),
        AlgorithmBound("dp_sosp", (
            BoundCase("nonconvex", "approx", dp_sosp_accuracy_bound, _SO,
                      "Wang, Chen, Xu 2019, Theorem 8 (solved for alpha)"),
        )),
    ]
}
"""Algorithm name -> :class:`AlgorithmBound` (callable: ``BOUNDS[name](**problem)``)."""

GRADIENT_COMPLEXITIES: dict[str, AlgorithmBound] = {
    bound.algorithm: bound
    for bound in [
        AlgorithmBound("gd_output_perturbation", (
            BoundCase("convex", "any", gd_output_perturbation_gradient_complexity, "gradient evaluations",
                      "Zhang, Zheng, Mou, Wang 2017, Theorems 2 and 3, Table 1"),
        )),
        AlgorithmBound("noisy_gd", (
            BoundCase("convex", "any", noisy_gd_gradient_complexity, "gradient evaluations",
                      "Bassily, Smith, Thakurta 2014, Section 2 Note (2)"),
        )),
        AlgorithmBound("dp_sgd", (
            BoundCase("convex", "any", dp_sgd_gradient_complexity, "gradient evaluations",
                      "Bassily, Smith, Thakurta 2014, Algorithm 1 (T = n^2)"),
        )),
        AlgorithmBound("dp_svrg", (
            BoundCase("strongly_convex", "any", dp_svrg_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 4.2, Table 1"),
        )),
        AlgorithmBound("dp_svrg_pp", (
            BoundCase("convex", "any", dp_svrg_pp_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 4.4, Table 2"),
        )),
        AlgorithmBound("dp_accmd", (
            BoundCase("convex", "any", dp_accmd_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 5.4, Table 3"),
        )),
        AlgorithmBound("dp_gd", (
            BoundCase("pl", "approx", dp_gd_pl_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 6.2"),
            BoundCase("nonconvex", "approx", dp_gd_nonconvex_gradient_complexity, "gradient evaluations",
                      "Wang, Ye, Xu 2017, Theorem 6.3"),
        )),
        AlgorithmBound("rrpsgd", (
            BoundCase("nonconvex", "any", rrpsgd_gradient_complexity, "gradient evaluations",
                      "Zhang, Zheng, Mou, Wang 2017, Algorithm 2, Table 1"),
        )),
        AlgorithmBound("dp_gld", (
            BoundCase("nonconvex", "approx", dp_gld_gradient_complexity, "gradient evaluations",
                      "Wang, Chen, Xu 2019, Theorem 2"),
        )),
    ]
}
"""Algorithm name -> :class:`AlgorithmBound` of its gradient complexity."""


def _vocabulary() -> frozenset[str]:
    names = {"setting"}
    for table in (BOUNDS, GRADIENT_COMPLEXITIES):
        for bound in table.values():
            for case in bound.cases:
                names.update(inspect.signature(case.function).parameters)
    return frozenset(names)


_VOCABULARY = _vocabulary()


def _lookup(table: dict[str, AlgorithmBound], algorithm: str, problem: dict[str, Any], what: str) -> AlgorithmBound:
    if not isinstance(algorithm, str) or algorithm not in table:
        raise ValueError(f"no {what} for algorithm {algorithm!r}; known: {sorted(table)}")
    unknown = set(problem) - _VOCABULARY
    if unknown:
        raise TypeError(f"unknown problem parameter(s) {sorted(unknown)}; known: {sorted(_VOCABULARY)}")
    return table[algorithm]


def bound_case(algorithm: str, **problem: Any) -> BoundCase:
    """The case of ``BOUNDS[algorithm]`` that :func:`bound_for` would evaluate.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        Problem parameters (see the module docstring); ``setting=`` forces a case.

    Returns
    -------
    BoundCase
        With the quantity bounded and the source.

    Raises
    ------
    ValueError
        Unknown algorithm, or no case applies.
    TypeError
        An unknown problem parameter.
    """
    return _lookup(BOUNDS, algorithm, problem, "bound").select(**problem)


def bound_for(algorithm: str, **problem: Any) -> float:
    """The papers' bound for ``algorithm`` on ``problem``.

    Picks the first case of ``BOUNDS[algorithm]`` compatible with the problem
    (``strong_convexity > 0`` enables strongly convex / PL cases; ``delta`` 0 or absent
    means pure epsilon-DP; ``setting=`` in {"strongly_convex", "pl", "convex",
    "nonconvex"} forces a case) and evaluates it on the parameters it takes; the other
    problem parameters are ignored.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        n, d, epsilon, delta, lipschitz, smoothness, strong_convexity, diameter, ...

    Returns
    -------
    float
        The bound (see :func:`bound_case` for the quantity).

    Raises
    ------
    ValueError
        Unknown algorithm, no applicable case, or an invalid parameter value.
    TypeError
        An unknown parameter name or a missing required parameter.

    Examples
    --------
    >>> round(bound_for("dp_svrg", n=1000, d=10, epsilon=1.0, delta=1e-5, strong_convexity=0.1), 6)
    0.007953
    >>> round(slope_in_n("dp_svrg_pp", n=1000, d=10, epsilon=1.0, delta=1e-5), 6)
    -1.0
    """
    return _lookup(BOUNDS, algorithm, problem, "bound")(**problem)


def gradient_complexity_for(algorithm: str, **problem: Any) -> float:
    """The papers' gradient complexity for ``algorithm`` (see :data:`GRADIENT_COMPLEXITIES`).

    Parameters
    ----------
    algorithm : str
        A key of :data:`GRADIENT_COMPLEXITIES`.
    **problem
        Problem parameters, as for :func:`bound_for`.

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        Unknown algorithm, no applicable case, or an invalid parameter value.
    TypeError
        An unknown parameter name or a missing required parameter.
    """
    return _lookup(GRADIENT_COMPLEXITIES, algorithm, problem, "gradient complexity")(**problem)


def loglog_slope(function: Callable[..., float], parameter: str, /, factor: float = 2.0, **kwargs: Any) -> float:
    """``log(f(x factor) / f(x)) / log(factor)`` for ``x = kwargs[parameter]``.

    The finite-difference log-log slope of any bound in one of its parameters.

    Parameters
    ----------
    function : callable
        A bound taking keyword arguments.
    parameter : str
        The keyword to scale (must be in ``kwargs``).
    factor : float, default 2
        The ratio of the two evaluation points (> 0, != 1).
    **kwargs
        The arguments of ``function``.

    Returns
    -------
    float
        The slope.

    Raises
    ------
    ValueError
        If ``parameter`` is not given, ``factor`` is invalid or a bound is not positive.
    """
    if parameter not in kwargs:
        raise ValueError(f"{parameter!r} must be given to take the slope in it")
    factor = check_positive("factor", factor)
    if factor == 1:
        raise ValueError("factor must differ from 1")
    low = function(**kwargs)
    high = function(**{**kwargs, parameter: kwargs[parameter] * factor})
    if not (low > 0 and high > 0):
        raise ValueError(f"the bound must be positive to take a log-log slope, got {low}, {high}")
    return math.log(high / low) / math.log(factor)


def slope_in(algorithm: str, parameter: str, **problem: Any) -> float:
    """Log-log slope of ``bound_for(algorithm, **problem)`` in ``parameter``, between x and 2x.

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    parameter : str
        A numeric problem parameter present in ``problem`` (n, d, epsilon, ...).
    **problem
        As for :func:`bound_for`.

    Returns
    -------
    float
        ``log2(bound(2 x) / bound(x))``.

    Raises
    ------
    ValueError, TypeError
        As :func:`bound_for`, or if ``parameter`` is missing.
    """
    _lookup(BOUNDS, algorithm, problem, "bound")
    return loglog_slope(lambda **p: bound_for(algorithm, **p), parameter, **problem)


def slope_in_n(algorithm: str, **problem: Any) -> float:
    """Log-log slope of the bound in n: ``log2(bound(2n) / bound(n))``.

    Compare with the slope of a measured excess risk against n (e.g. -2 for the strongly
    convex (epsilon, delta) bounds, -1 for the convex ones, up to their log factors).

    Parameters
    ----------
    algorithm : str
        A key of :data:`BOUNDS`.
    **problem
        As for :func:`bound_for`; must include ``n``.

    Returns
    -------
    float
        The slope.

    Raises
    ------
    ValueError, TypeError
        As :func:`bound_for`, or if n is missing.
    """
    return slope_in(algorithm, "n", **problem)
