"""Public-quantity defaults of the estimators: the ``alpha="auto"`` regularization rule.

The rule picks the l2 strength mu of ``(mu/2) ||w||^2`` from the excess-risk trade-off of
regularized private ERM and reads nothing of the data but its shape (n, d): the other
inputs are the budget (epsilon, delta), the declared bounds (data_norm, label_bound), the
loss's Lipschitz constant and the constraint's radius. The derivation is in
docs/estimators.md ("How alpha='auto' is chosen").

The trade-off, for a comparator w_ref of norm R and noise b of the private mechanism:

- the regularizer costs at most ``mu R^2 / 2`` of the (unregularized) risk at w_ref;
- the noise costs ``A / mu``: with objective perturbation or noisy gradients the minimizer
  of ``F + <b/n, w>`` moves by ``||b|| / (n mu)`` and ``F`` rises by at most
  ``E||b||^2 / (n^2 mu)`` (Chaudhuri, Monteleoni, Sarwate 2011; Bassily, Smith, Thakurta
  2014, the strongly convex bounds); with output perturbation the noise ``z`` of
  sensitivity ``2L / (n mu)`` costs at most ``L E||z||`` (Zhang, Zheng, Mou, Wang 2017,
  the convex-case reduction).

``mu R^2 / 2 + A / mu`` is smallest at ``mu = sqrt(2 A) / R``. Without a declared radius,
R is that of a weight vector reaching margins (or predictions) of size ``target_margin``
on rows of norm ``data_norm`` whose weight is spread over all d coordinates:
``R = target_margin sqrt(d) / data_norm``.
"""

from __future__ import annotations

import math

from ._validation import check_positive

__all__ = ["auto_alpha", "estimator_alpha", "CLASSIFICATION_MARGIN", "OUTPUT_PERTURBATION_SOLVERS",
           "multinomial_auto_solver"]

# Margin a confident linear classifier reaches: logistic probabilities 0.018 / 0.982.
CLASSIFICATION_MARGIN = 4.0

# Solvers that add their noise to the (approximate) minimizer; every other solver's noise
# enters the objective or the gradients.
OUTPUT_PERTURBATION_SOLVERS = frozenset({"output_perturbation", "gd_output_perturbation"})


def multinomial_auto_solver(delta: float, *, strongly_convex: bool = True, bounded: bool = False) -> str:
    """The solver of multinomial logistic regression under ``solver="auto"``: ``noisy_gd``
    for delta > 0 (the most accurate of the multinomial solvers in
    benchmarks/bench_multiclass.py, docs/defaults.md) when the problem has a bounded
    domain (alpha > 0, or a bounded ``constraint``); otherwise ``output_perturbation`` for
    a strongly convex objective (alpha > 0; pure epsilon-DP, where noisy_gd does not
    apply), and ``gd_output_perturbation`` for alpha = 0. Public inputs only."""
    if delta > 0 and (strongly_convex or bounded):
        return "noisy_gd"
    return "output_perturbation" if strongly_convex else "gd_output_perturbation"


def _noise_moments(d: int, lipschitz: float, epsilon: float, delta: float) -> tuple[float, float]:
    """(E||b||, E||b||^2) of the d-dimensional noise of replace-one sensitivity 2L.

    delta > 0: Gaussian with the classical scale ``2L sqrt(2 ln(1.25/delta)) / epsilon`` per
    coordinate (the solvers' analytic calibration is a little tighter; the rule needs the
    order only). delta = 0: the L2-Laplace density ``exp(-epsilon ||b|| / (2L))``, whose norm
    is Gamma(d, 2L/epsilon).
    """
    if delta > 0:
        sigma = 2.0 * lipschitz * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
        second = d * sigma * sigma
        return math.sqrt(second), second
    scale = 2.0 * lipschitz / epsilon
    return d * scale, d * (d + 1) * scale * scale


def auto_alpha(
    n_samples: int,
    n_features: int,
    epsilon: float,
    delta: float,
    *,
    lipschitz: float,
    data_norm: float,
    target_margin: float = CLASSIFICATION_MARGIN,
    radius: float = math.inf,
    perturbation: str = "objective",
) -> float:
    """The l2 strength mu minimizing the private excess-risk bound ``mu R^2/2 + A/mu``.

    Parameters
    ----------
    n_samples, n_features : int
        The shape (n, d) of the training matrix (with the intercept column if any).
    epsilon, delta : float
        The budget of the fit (epsilon > 0, 0 <= delta < 1).
    lipschitz : float
        Public Lipschitz constant L of the per-example loss (``L_phi * data_norm``).
    data_norm : float
        Declared bound D on the row norms (with the intercept feature if any).
    target_margin : float
        Size m of the margins (classification) or predictions (regression) the comparator
        must reach; sets ``R = m sqrt(d) / D``.
    radius : float
        Radius of a bounded constraint (the comparator lies in it): R is at most this.
    perturbation : {"objective", "output"}
        Where the mechanism adds its noise. ``"objective"`` (objective perturbation,
        noisy gradient methods): ``A = E||b||^2 / n^2``, so
        ``mu = sqrt(2 E||b||^2) / (n R)``; with Gaussian noise and the default radius this
        is ``4 L_phi D^2 sqrt(ln(1.25/delta)) / (n epsilon m)``, free of d.
        ``"output"`` (noise on the minimizer): z = b / (n mu) (sensitivity
        ``2L / (n mu)``) costs ``L E||z|| = A / mu`` with ``A = L E||b|| / n``, so
        ``mu = sqrt(2 L E||b|| / n) / R``.

    Returns
    -------
    float
        mu > 0. Reads nothing of the data: a function of its arguments only.

    References
    ----------
    Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk minimization.
    JMLR 2011 (objective and output perturbation, Theorems 18 and 26: lambda from the
    comparator norm and the noise). Bassily, Smith, Thakurta. Private empirical risk
    minimization: efficient algorithms and tight error bounds. FOCS 2014 (the reduction of
    convex to strongly convex ERM by adding ``(mu/2)||w||^2``). Zhang, Zheng, Mou, Wang.
    Efficient private ERM for smooth objectives. IJCAI 2017 (the choice of mu of the convex
    case, Section 3.1).
    """
    n = int(n_samples)
    d = int(n_features)
    if n < 1 or d < 1:
        raise ValueError(f"n_samples and n_features must be >= 1, got ({n_samples}, {n_features})")
    epsilon = check_positive("epsilon", epsilon)
    delta = check_positive("delta", delta, allow_zero=True)
    if delta >= 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    L = check_positive("lipschitz", lipschitz)
    D = check_positive("data_norm", data_norm)
    m = check_positive("target_margin", target_margin)
    R = min(check_positive("radius", radius, allow_inf=True), m * math.sqrt(d) / D)
    first, second = _noise_moments(d, L, epsilon, delta)
    if perturbation == "objective":
        return math.sqrt(2.0 * second) / (n * R)
    if perturbation == "output":
        # L E||z|| with E||z|| = E||b|| / (n mu): A = L E||b|| / n.
        return math.sqrt(2.0 * L * first / n) / R
    raise ValueError(f"perturbation must be 'objective' or 'output', got {perturbation!r}")


def noise_setting(loss, n_features: int, delta: float, *, data_norm: float, label_bound: float = 1.0,
                  constraint=None, solver: str = "auto", n_classes: int = 2) -> tuple:
    """``(dim, radius, lipschitz, output, margin)`` of an estimator's fit, public inputs only:
    the dimension the noise spreads over, the constraint's L2 radius (inf when unbounded),
    the Lipschitz constant over the constraint's margins, whether the noise is added to the
    output (``OUTPUT_PERTURBATION_SOLVERS``, or ``"auto"`` with a bounded constraint and a
    convex smooth loss, the catalogue's ``auto`` rule 3) and the comparator's target margin
    (``CLASSIFICATION_MARGIN`` for classifiers, ``label_bound`` for regression). Shared by
    :func:`estimator_alpha` and :func:`dperm.expectations.signal_to_noise`."""
    from .problem.constraints import make_constraint

    multinomial = getattr(loss, "name", None) == "multinomial"
    dim = int(n_features) * (int(n_classes) - 1) if multinomial else int(n_features)
    C = make_constraint(constraint)
    radius = C.l2_radius(int(n_features) * (int(n_classes) if multinomial else 1)) if C.bounded else math.inf
    lipschitz = loss.lipschitz(data_norm * radius, label_bound) * data_norm
    if solver == "auto" and multinomial:
        output = multinomial_auto_solver(delta, bounded=C.bounded) in OUTPUT_PERTURBATION_SOLVERS
    elif solver == "auto":
        output = C.bounded and loss.convex and loss.smooth
    else:
        output = solver in OUTPUT_PERTURBATION_SOLVERS
    margin = CLASSIFICATION_MARGIN if (loss.binary or multinomial) else float(label_bound)
    return dim, radius, lipschitz, output, margin


def estimator_alpha(loss, n_samples: int, n_features: int, epsilon: float, delta: float, *, data_norm: float,
                    label_bound: float = 1.0, constraint=None, solver: str = "auto", n_classes: int = 2) -> float:
    """``auto_alpha`` for an estimator's loss, declared bounds, constraint and solver.

    The Lipschitz constant is the loss's over the constraint's margins; the target margin is
    ``CLASSIFICATION_MARGIN`` for classifiers and ``label_bound`` for regression (the
    comparator predicts values up to the label bound); output perturbation is assumed when
    the solver is one of ``OUTPUT_PERTURBATION_SOLVERS``, or is ``"auto"`` with a bounded
    constraint and a convex smooth loss (the catalogue's ``auto`` rule 3).

    The multinomial loss (:class:`dperm.problem.multinomial.MultinomialLogistic`, with
    ``n_features`` the p inputs of each class and ``n_classes`` K) enters with its own
    constants: ``L = sqrt(2) D``, and the dimension ``p (K - 1)`` of the coefficient
    matrices modulo the all-ones direction (adding one vector to every class column
    changes no prediction, so noise along it costs nothing, and the comparator's weight
    is spread over those ``p (K - 1)`` coordinates). Its ``"auto"`` solver is
    :func:`multinomial_auto_solver`.
    """
    setting = noise_setting(loss, n_features, delta, data_norm=data_norm, label_bound=label_bound,
                            constraint=constraint, solver=solver, n_classes=n_classes)
    dim, radius, lipschitz, output, margin = setting
    return auto_alpha(
        n_samples, dim, epsilon, delta,
        lipschitz=lipschitz,
        data_norm=data_norm,
        target_margin=margin,
        radius=radius,
        perturbation="output" if output else "objective",
    )
