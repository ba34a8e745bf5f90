"""What a private fit can be expected to learn, from public inputs only: a warning when the
noise will dominate the model.

A private linear model is useful only if the noise its mechanism adds leaves it better than
the zero model (``w = 0``: every margin 0, every prediction 0). Before any data is read,
:func:`signal_to_noise` compares the two from the public inputs of the fit (n, d, epsilon,
delta, the declared ``data_norm`` and ``label_bound``, the loss, the regularization
``alpha``, the constraint and the solver), and :func:`noise_dominates` turns the comparison
into a message saying what would help.

The comparison (the excess-risk trade-off behind ``alpha="auto"``, :mod:`dperm.defaults`):
for a comparator ``w_ref`` reaching margins (or predictions) of the loss's target size on
rows of norm D, with its weight spread over the d coordinates (norm ``R = m sqrt(d) / D``,
at most the constraint's radius), the regularized private fit's excess risk over
``w_ref`` is at most

    ``bound = alpha R^2 / 2 + A / alpha``,

``A = E||b||^2 / n^2`` when the noise b (replace-one sensitivity 2L) enters the objective
or the gradients (Chaudhuri, Monteleoni, Sarwate 2011, Theorem 26; Bassily, Smith,
Thakurta 2014, the strongly convex bounds) and ``A = L E||b|| / n`` when it is added to
the minimizer (output perturbation; Zhang, Zheng, Mou, Wang 2017, Section 3.1). The
signal-to-noise ratio is ``risk(0) / bound``, ``risk(0)`` the risk of the zero model
(``log 2`` for the logistic loss, ``log K`` for the multinomial one, ``phi(0, B)`` for a
regression loss with label bound B). Where the bound exceeds what the zero model risks
(the ratio is below one) the theorem promises nothing the zero model does not have; the
bound being loose by a factor of a few, the warning's threshold is lower,
``SIGNAL_TO_NOISE_THRESHOLD = 0.3``, set by measurement.

Calibration (benchmarks/noise_warning_calibration.py; the figures are in
docs/estimators.md, "When the noise dominates"): the default ``DPLogisticRegression``
was no better than the majority class on scikit-learn's wine and breast_cancer tables
(rows scaled to unit norm) at epsilon = 0.1 (ratios 0.009 and 0.023; wine: one class
predicted for 3 seeds of 3), and is accurate on the shipped ADULT and BANK tables at
epsilon = 1 (ratios 3.7 and 10.8).
"""

from __future__ import annotations

import math

from .exceptions import NoiseDominatesWarning  # defined in the leaf, re-exported here

__all__ = ["NoiseDominatesWarning", "signal_to_noise", "noise_dominates", "SIGNAL_TO_NOISE_THRESHOLD",
           "REGRESSION_SIGNAL_TO_NOISE_THRESHOLD", "warning_threshold"]

# Below this signal-to-noise ratio a classifier's fit warns. Measured (docs/estimators.md,
# "When the noise dominates"): the fits that came out at or below the majority class had
# estimates 0.009-0.27; those clearly above it 0.37 and up (the bound is loose by a factor of a few).
SIGNAL_TO_NOISE_THRESHOLD = 0.3
# The same estimate for a regression loss (risk(0) = phi(0, label_bound)), measured on the
# regression study of docs/results.md (default DPLinearRegression, test R^2 over 5 draws):
# every cell with estimate <= 1.36 scored R^2 <= 0.134 (WINE and BIKE at eps 0.1: 1.36,
# 0.85; diabetes at eps 0.1 and 1: 0.10, 1.03; synthetic n = 1e3 at eps 0.1: 0.23), every
# cell with estimate >= 2.3 scored >= 0.139 (diabetes at eps 4: 4.1; synthetic n = 1e3 at
# eps 1 and n = 1e4 at eps 0.1: 2.3). A near-constant regression is already useless where a
# near-constant classifier still has its majority class, hence the higher threshold.
REGRESSION_SIGNAL_TO_NOISE_THRESHOLD = 1.5


def _loss_object(loss, n_classes: int):
    from .problem.losses import make_loss
    from .problem.multinomial import MultinomialLogistic

    if isinstance(loss, str) and loss == "multinomial":
        return MultinomialLogistic(int(n_classes))
    if isinstance(loss, MultinomialLogistic):
        return loss
    return make_loss(loss)


def _zero_model_risk(loss, label_bound: float) -> float:
    """The loss of the zero model on the worst admissible label: ``phi(0, y)``."""
    import numpy as np

    if getattr(loss, "name", None) == "multinomial":
        return math.log(loss.n_classes)
    labels = np.array([-1.0, 1.0]) if loss.binary else np.array([-float(label_bound), float(label_bound)])
    return float(np.max(loss.value(np.zeros(2), labels)))


def signal_to_noise(n: int, d: int, epsilon: float, delta: float, *, loss="logistic", alpha="auto",
                    data_norm: float = 1.0, label_bound: float = 1.0, constraint=None, solver: str = "auto",
                    n_classes: int = 2) -> float:
    """Public estimate of how far a private linear fit can get from the zero model.

    Parameters
    ----------
    n, d : int
        Rows and columns of the learner's matrix; ``d`` counts an intercept column (the
        estimators pass ``n_features + 1`` with ``fit_intercept``).
    epsilon, delta : float
        The budget of the fit (of one one-vs-rest fit, for those).
    loss : str or loss object
        A loss name of :func:`dperm.problem.losses.make_loss`, a loss object, or
        ``"multinomial"`` (with ``n_classes``).
    alpha : "auto" or float
        The l2 strength of ``(alpha/2) ||w||^2``; ``"auto"`` resolves as the estimators do
        (:func:`dperm.defaults.estimator_alpha`).
    data_norm : float
        Declared bound on the learner's row norms (with the intercept feature:
        ``sqrt(data_norm^2 + intercept_scaling^2)``).
    label_bound : float
        Declared bound on |y| (regression losses).
    constraint : None or tuple
        The constraint set, e.g. ``("l2_ball", 10.0)``.
    solver : str
        The solver name, or ``"auto"``: decides whether the noise is added to the output or
        to the objective / gradients.
    n_classes : int
        Number of classes of a multinomial loss.

    Returns
    -------
    float
        ``risk(0) / bound`` (module docstring): above one, the fit's guarantee beats the
        zero model; well below, the noise is likely to leave a near-constant model.
        ``inf`` when ``alpha = 0`` (no strongly convex bound to compare; nothing is said).
        A function of its arguments only: it reads no data.
    """
    from .defaults import _noise_moments, estimator_alpha, noise_setting

    loss = _loss_object(loss, n_classes)
    multinomial = getattr(loss, "name", None) == "multinomial"
    k = loss.n_classes if multinomial else 2
    if isinstance(alpha, str):
        if alpha != "auto":
            raise ValueError(f"alpha must be 'auto' or a number >= 0, got {alpha!r}")
        alpha = estimator_alpha(loss, n, d, epsilon, delta, data_norm=data_norm, label_bound=label_bound,
                                constraint=constraint, solver=solver, n_classes=k)
    alpha = float(alpha)
    if not alpha > 0:
        return math.inf
    dim, radius, lipschitz, output, margin = noise_setting(loss, d, delta, data_norm=data_norm,
                                                           label_bound=label_bound, constraint=constraint,
                                                           solver=solver, n_classes=k)
    comparator = min(radius, margin * math.sqrt(dim) / data_norm)
    first, second = _noise_moments(dim, lipschitz, epsilon, delta)
    noise_cost = lipschitz * first / n if output else second / (n * n)
    bound = alpha * comparator ** 2 / 2.0 + noise_cost / alpha
    return _zero_model_risk(loss, label_bound) / bound


def warning_threshold(loss="logistic", n_classes: int = 2) -> float:
    """The signal-to-noise estimate below which :func:`noise_dominates` warns:
    :data:`SIGNAL_TO_NOISE_THRESHOLD` for a classification loss,
    :data:`REGRESSION_SIGNAL_TO_NOISE_THRESHOLD` for a regression one (both measured)."""
    loss = _loss_object(loss, n_classes)
    classification = loss.binary or getattr(loss, "name", None) == "multinomial"
    return SIGNAL_TO_NOISE_THRESHOLD if classification else REGRESSION_SIGNAL_TO_NOISE_THRESHOLD


def noise_dominates(n: int, d: int, epsilon: float, delta: float, *, loss="logistic", alpha="auto",
                    data_norm: float = 1.0, label_bound: float = 1.0, constraint=None, solver: str = "auto",
                    n_classes: int = 2) -> str | None:
    """A one-line message when the noise will dominate the fit, else None.

    Public inputs only (the arguments of :func:`signal_to_noise`, which see): call it
    before reading the data and warn with :class:`NoiseDominatesWarning`. The message
    names n, d, epsilon, delta and the ratio, and what would help: more rows, a larger
    epsilon, fewer features (with the default ``alpha="auto"`` the estimate grows as
    ``n epsilon / d`` when the noise enters the objective or the gradients; the declared
    bounds cancel out of it, since a larger ``data_norm`` raises the noise as much as it
    shortens the useful model).

    Examples
    --------
    >>> noise_dominates(178, 14, 0.1, 1e-5, loss="logistic") is not None
    True
    >>> noise_dominates(30000, 20, 1.0, 1e-5, loss="logistic") is None
    True
    """
    ratio = signal_to_noise(n, d, epsilon, delta, loss=loss, alpha=alpha, data_norm=data_norm,
                            label_bound=label_bound, constraint=constraint, solver=solver, n_classes=n_classes)
    threshold = warning_threshold(loss, n_classes)
    if ratio >= threshold:
        return None
    return (f"the privacy noise will likely dominate this fit (n={n} rows, {d} coefficients, epsilon={epsilon:g}, "
            f"delta={delta:g}): its public signal-to-noise estimate is {ratio:.2g}, below "
            f"{threshold:g}, "
            "so the model may come out near constant (predicting one class, or worse than the mean target). What helps: more rows or a larger "
            "epsilon (the estimate grows with n x epsilon), or fewer features.")
