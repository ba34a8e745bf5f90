"""The bounds of Wang, Chen, Xu 2019 (ICML): DP-GLD, DP Frank-Wolfe, second-order stationary points.

See :mod:`dperm.theory` for the conventions."""

from __future__ import annotations

import math

from ._common import _at_least_one, _d, _delta, _lg, _n, _pos, _probability, _strong_convexity  # noqa: F401

__all__ = ['dp_gld_excess_risk_bound', 'dp_gld_gradient_complexity', 'dp_fw_l2_population_risk_bound', 'dp_fw_l1_population_risk_bound', 'dp_gd_sosp_sample_complexity', 'dp_gd_sosp_accuracy_bound', 'dp_sosp_sample_complexity', 'dp_sosp_accuracy_bound', 'dp_sosp_constrained_sample_complexity']

# Wang, Chen, Xu 2019 
# --------------------------------------------------------------------------------------


def dp_gld_excess_risk_bound(n: float, d: float, epsilon: float, delta: float) -> float:
    """DP-GLD ([WCX19] Algorithm 1), non-convex loss with l2 regularizer: excess risk.

    [WCX19] Theorem 2 with Remark 1 (inverse temperature beta = O(log n), valid when
    log n >= O(d)), the bound of the abstract for the excess empirical (and population)
    risk as T -> infinity. Order of magnitude, constant 1 (A, lambda, L, M omitted as the
    paper does)::

        d log(1/delta) / (log(n) epsilon^2)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).

    Returns
    -------
    float
        The bound on the excess empirical risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0 or delta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    return d * _lg(1 / delta) / (_lg(n) * epsilon**2)


def dp_gld_gradient_complexity(
    n: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    regularization: float = 1.0,
    inverse_temperature: float | None = None,
) -> float:
    """Gradient complexity n T of DP-GLD, T from [WCX19] Theorem 2.

    ``T >= (M + lambda)^2 n^2 epsilon^2 / (lambda beta log(1/delta) L^2)`` full-gradient
    steps, with the inverse temperature beta = log n of Remark 1 unless given. Order of
    magnitude, constant 1::

        n max(1, (M + lambda)^2 n^2 epsilon^2 / (lambda beta log(1/delta) L^2))

    Parameters
    ----------
    n, epsilon, delta : float
        Examples (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        M.
    regularization : float, default 1
        lambda of the l2 regularizer (lambda/2)||w||^2.
    inverse_temperature : float, optional
        beta (> 0); default log(n) (floored at 1).

    Returns
    -------
    float
        Number of single-example gradient evaluations.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n, epsilon = _n(n), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness)
    lam = _pos("regularization", regularization)
    beta = _lg(n) if inverse_temperature is None else _pos("inverse_temperature", inverse_temperature)
    steps = (M + lam) ** 2 * n**2 * epsilon**2 / (lam * beta * _lg(1 / delta) * L**2)
    return n * max(1.0, steps)


def dp_fw_l2_population_risk_bound(n: float, d: float, epsilon: float, delta: float) -> float:
    """DP-FW-L2 ([WCX19] Algorithm 2), non-convex GLM / robust regression: population risk.

    [WCX19] Theorem 5 (the l2-ball setting; C_sigma, B, C_psi omitted as the paper's big-O
    does). Excess *population* risk, order of magnitude, constant 1::

        (d log(1/delta))^{1/4} / sqrt(n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).

    Returns
    -------
    float
        The bound on the excess population risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0 or delta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    return (d * _lg(1 / delta)) ** 0.25 / math.sqrt(n * epsilon)


def dp_fw_l1_population_risk_bound(
    n: float, d: float, epsilon: float, delta: float, *, failure_probability: float = 0.05
) -> float:
    """DP-FW-L1 ([WCX19] Algorithm 3), l1-ball constraint, l_inf data: population risk.

    [WCX19] Theorem 6, with probability at least 1 - eta. Order of magnitude, constant 1,
    logarithmic in d::

        log(1/delta)^{1/4} sqrt(log(n d / eta)) / sqrt(n epsilon)

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    failure_probability : float, default 0.05
        eta in (0, 1).

    Returns
    -------
    float
        The high-probability bound on the excess population risk.

    Raises
    ------
    ValueError
        On n < 1, d < 1, epsilon <= 0, delta or eta not in (0, 1).
    """
    n, d, epsilon = _n(n), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    eta = _probability("failure_probability", failure_probability)
    return _lg(1 / delta) ** 0.25 * math.sqrt(_lg(n * d / eta)) / math.sqrt(n * epsilon)


def dp_gd_sosp_sample_complexity(
    alpha: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """Sample size for DP-GD ([WCX19] Algorithm 4) to pass an alpha-SOSP, unconstrained.

    [WCX19] Theorem 7, eq. (8): with n at least this, one of the T iterates is an
    alpha-approximate second-order stationary point w.p. 1 - xi. Order of magnitude,
    constant 1 (the seed's extraction is ambiguous about the radicals; read as)::

        sqrt(M B log(1/delta)) sqrt(d log(1/xi)) L / (epsilon alpha^2)

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz : float, default 1
        L.
    smoothness : float, default 1
        M.
    loss_bound : float, default 1
        B, bound on the empirical risk.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M, B = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness), _pos("loss_bound", loss_bound)
    xi = _probability("failure_probability", failure_probability)
    return math.sqrt(M * B * _lg(1 / delta)) * math.sqrt(d * _lg(1 / xi)) * L / (epsilon * alpha**2)


def dp_gd_sosp_accuracy_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """The alpha reached by DP-GD with n examples: [WCX19] Theorem 7 solved for alpha.

    Order of magnitude, constant 1::

        alpha = sqrt( sqrt(M B log(1/delta)) sqrt(d log(1/xi)) L / (n epsilon) )

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, loss_bound : float, default 1
        L, M, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The accuracy alpha of the approximate second-order stationary point.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n = _n(n)
    need_at_alpha_1 = dp_gd_sosp_sample_complexity(
        1.0, d, epsilon, delta, lipschitz=lipschitz, smoothness=smoothness,
        loss_bound=loss_bound, failure_probability=failure_probability,
    )
    return math.sqrt(need_at_alpha_1 / n)


def dp_sosp_sample_complexity(
    alpha: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    hessian_lipschitz: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """Sample size for the private SOSP selection ([WCX19] Algorithm 5), unconstrained.

    [WCX19] Theorem 8: with n at least this the output is an alpha-SOSP w.p.
    ``1 - xi - T/p^C`` (an extra sqrt(d) over Theorem 7, as the paper says). Order of
    magnitude, constant 1 (read from the seed's extraction as)::

        M d sqrt(M B log(1/delta) log(1/xi)) L / (rho epsilon alpha^2)

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, hessian_lipschitz, loss_bound : float, default 1
        L, M, rho, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples.

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    L, M, B = _pos("lipschitz", lipschitz), _pos("smoothness", smoothness), _pos("loss_bound", loss_bound)
    rho = _pos("hessian_lipschitz", hessian_lipschitz)
    xi = _probability("failure_probability", failure_probability)
    return M * d * math.sqrt(M * B * _lg(1 / delta) * _lg(1 / xi)) * L / (rho * epsilon * alpha**2)


def dp_sosp_accuracy_bound(
    n: float,
    d: float,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float = 1.0,
    smoothness: float = 1.0,
    hessian_lipschitz: float = 1.0,
    loss_bound: float = 1.0,
    failure_probability: float = 0.05,
) -> float:
    """The alpha of the SOSP found privately with n examples: [WCX19] Theorem 8 solved for alpha.

    Order of magnitude, constant 1::

        alpha = sqrt( M d sqrt(M B log(1/delta) log(1/xi)) L / (rho epsilon n) )

    Parameters
    ----------
    n, d, epsilon, delta : float
        Examples (>= 1), dimension (>= 1), epsilon (> 0), delta in (0, 1).
    lipschitz, smoothness, hessian_lipschitz, loss_bound : float, default 1
        L, M, rho, B.
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The accuracy alpha (gradient norm <= alpha, Hessian >= -sqrt(rho alpha)).

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    n = _n(n)
    need_at_alpha_1 = dp_sosp_sample_complexity(
        1.0, d, epsilon, delta, lipschitz=lipschitz, smoothness=smoothness,
        hessian_lipschitz=hessian_lipschitz, loss_bound=loss_bound,
        failure_probability=failure_probability,
    )
    return math.sqrt(need_at_alpha_1 / n)


def dp_sosp_constrained_sample_complexity(
    alpha: float, d: float, epsilon: float, delta: float, *, failure_probability: float = 0.05
) -> float:
    """Sample size for DP-GD-SO ([WCX19] Algorithm 6) to reach an alpha-SOSP in a set C.

    [WCX19] Theorem 9 as summarized by Remark 3: ``Omega~(d / (epsilon alpha^2))`` when L,
    B, Phi, D, G, rho are omitted; the log factors of the theorem's terms are kept. Order
    of magnitude, constant 1::

        d sqrt(log(1/delta) log(1/xi)) / (epsilon alpha^2)

    The theorem's maximum has two further terms in the diameter D of C (one of order
    alpha^{-3/2}) whose exact form the seed's extraction does not preserve; they are not
    included, so for large D or rho this underestimates the theorem's requirement.

    Parameters
    ----------
    alpha : float
        Target accuracy (> 0).
    d, epsilon, delta : float
        Dimension (>= 1), epsilon (> 0), delta in (0, 1).
    failure_probability : float, default 0.05
        xi in (0, 1).

    Returns
    -------
    float
        The sufficient number of examples (problem constants set to 1).

    Raises
    ------
    ValueError
        On invalid inputs.
    """
    alpha, d, epsilon = _pos("alpha", alpha), _d(d), _pos("epsilon", epsilon)
    delta = _delta(delta, required=True)
    xi = _probability("failure_probability", failure_probability)
    return d * math.sqrt(_lg(1 / delta) * _lg(1 / xi)) / (epsilon * alpha**2)


# --------------------------------------------------------------------------------------
