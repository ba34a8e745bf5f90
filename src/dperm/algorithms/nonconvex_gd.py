"""First-order methods for smooth, possibly non-convex ERM: DP-GD, RRPSGD and DP-GLD.

Three algorithms of the "Non-convex" table of ALGORITHMS.md, each exactly accounted:

- ``dp_gd`` (Wang, Ye, Xu 2017, Algorithm 4 = Wang, Chen, Xu 2019, Algorithm 4): T
  full-batch gradient steps with Gaussian noise. T adaptive full-batch Gaussian releases
  of replace-one sensitivity ``2 L / n`` and noise std sigma are exactly
  ``sqrt(T) (2L/n) / sigma``-Gaussian-DP (Dong, Roth, Su 2019), so the one accountant
  (:func:`~dperm.privacy.mechanisms.vector_mechanism`) loses nothing to composition.
  Returns the last iterate (PL excess risk, Wang, Ye, Xu 2017, Theorem 6.2), a uniformly
  random iterate (gradient-norm utility, Theorem 6.3) or all iterates (input of
  second-order selection, Wang, Chen, Xu 2019, Algorithm 5).
- ``rrpsgd`` (Zhang, Zheng, Mou, Wang 2017, Algorithm 2): noisy SGD stopped after a
  random number of rounds R drawn, before the run and independently of the data, from
  ``P(R = k) ~ 2 eta_{k-1} - beta eta_{k-1}^2`` over ``[T_max]``. Privacy is that of the
  worst case, T_max subsampled Gaussian steps (PLD accounting, replace-one), because
  ``w_R`` is post-processing of the T_max-step transcript and R is independent of the
  data.
- ``dp_gld`` (Wang, Chen, Xu 2019, Algorithm 1): gradient Langevin dynamics
  ``w_k = w_{k-1} - eta grad F(w_{k-1}) + sqrt(2 eta / beta) xi_k``. Written as
  ``w_k = w_{k-1} - eta (grad F(w_{k-1}) + z_k)`` with ``z_k ~ N(0, (2 / (eta beta)) I)``
  it is DP-GD whose gradient noise has std ``sqrt(2 / (eta beta))``; the step size is
  solved from the budget in closed form.

Everything here draws its noise from the caller's Generator; the full-batch methods use
``problem.gradient`` (two mat-vecs per step), the stochastic one the compiled per-example
kernels of :mod:`dperm.algorithms._kernels` (through :func:`dperm.algorithms.sgd.run_noisy_sgd`).
Nothing here measures a data-dependent quantity: utility (gradient norm, excess risk) is
for the caller to measure, outside the guarantee.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..exceptions import LangevinStepWarning  # defined in the leaf, re-exported here
from .._warnings import user_stacklevel
from ..privacy.budget import PrivacyBudget
from ..privacy.gaussian_dp import gaussian_dp_mu
from ..privacy.mechanisms import calibrate_and_charge, release as noisy_release, secure_randomness, vector_mechanism
from ..problem.erm import ERMProblem
from ..result import PrivateFit
from ._common import check_step_size, check_steps, initial_point, start
from .registry import AutoRule, AssumptionError, register
from .sgd import _BLOCK as _SGD_BLOCK
from .sgd import run_noisy_sgd, sgd_event

__all__ = [
    "dp_gd",
    "rrpsgd",
    "dp_gld",
    "noisy_gd_path",
    "dp_gd_default_steps",
    "random_round_distribution",
    "dp_gld_step_size",
    "dp_gld_default_schedule",
    "LangevinStepWarning",
]

_OUTPUTS = ("last", "random", "all")
_CHUNK = _SGD_BLOCK * 2048  # RRPSGD steps per driver call (a multiple of the driver's block)
_REGIMES = ("pl", "nonconvex")


# ------------------------------------------------------------------ the shared GD path
def noisy_gd_path(
    problem: ERMProblem,
    release,
    w0,
    step_size: float,
    steps: int,
    rng: np.random.Generator,
    domain=None,
    *,
    keep_index: int | None = None,
    keep_all: bool = False,
):
    """``w_{t+1} = Pi_C(prox_{eta l1}(w_t - eta (grad F(w_t) + z_t)))``, t = 0..T-1.

    ``z_t`` is one draw of the noise of ``release`` (the event of one step's release, or a
    self-composition of it, drawn by :func:`~dperm.privacy.mechanisms.release`); ``grad F``
    is the full gradient of the smooth part of F (loss plus the l2 part of r). The only
    data-dependent quantity each step touches is the mean loss gradient, of replace-one
    sensitivity ``release.sensitivity``; everything after the noise is post-processing, so
    every iterate is private.

    Returns
    -------
    (w_T, w_keep, path)
        The last iterate; ``w_{keep_index}`` (or ``None``); and, with ``keep_all``, the
        (T + 1, d) array of the iterates ``w_0..w_T`` (else ``None``).
    """
    d = problem.n_features
    w = np.array(w0, dtype=np.float64)
    path = np.empty((steps + 1, d)) if keep_all else None
    kept = None
    reg = problem.regularizer
    for t in range(steps):
        if keep_all:
            path[t] = w
        if t == keep_index:
            kept = w.copy()
        noisy = noisy_release(rng, problem.gradient(w), release)
        w = reg.nonsmooth_prox(w - step_size * noisy, step_size)
        if domain is not None:
            w = domain.project(w)
    if keep_all:
        path[steps] = w
    if keep_index == steps:
        kept = w.copy()
    return w, kept, path


def _bounded_constraint(problem: ERMProblem):
    return problem.constraint if problem.constraint.bounded else None


def _check_output(output: str, allowed) -> str:
    if output not in allowed:
        raise ValueError(f"output must be one of {tuple(allowed)}, got {output!r}")
    return output


# --------------------------------------------------------------------------------- DP-GD
def dp_gd_default_steps(
    regime: str,
    *,
    n: int,
    d: int,
    mu_gdp: float,
    smoothness: float,
    lipschitz: float,
    pl_constant: float | None = None,
    initial_gap: float = 1.0,
) -> int:
    """The number of DP-GD steps prescribed by Wang, Ye, Xu 2017, Theorem 6.2 (PL) or 6.3.

    With ``eta = 1/beta`` and gradient noise ``sigma^2 = T (2G/n)^2 / mu^2`` (exact GDP
    calibration, ``mu = mu_gdp``), the descent lemma gives per step
    ``E F(w_{t+1}) <= E F(w_t) - ||grad F(w_t)||^2 / (2 beta) + d sigma^2 / (2 beta)``.

    - ``"pl"`` (Theorem 6.2, ``T = O~(log(n^2 eps^2 / (d G^2 log(1/delta))))``, the O~
      hiding beta and the PL constant): with ``||grad F||^2 >= 2 mu_PL (F - F*)`` and
      ``kappa = beta / mu_PL``, ``E F(w_T) - F* <= e^{-T/kappa} (F(w_0) - F*) +
      2 d T G^2 / (mu_PL n^2 mu^2)``; bounding ``F(w_0) - F* <= G^2 / (2 mu_PL)`` (PL plus
      ``||grad F|| <= G``) and minimizing over T gives::

          T = ceil(kappa * ln(n^2 mu^2 / (4 kappa d))),   at least 1.

      It needs a public ``pl_constant``: kappa is the whole of the hidden constant
      (T grows linearly in it), so it is not guessed (ValueError without one).
    - ``"nonconvex"`` (Theorem 6.3, ``T = O(sqrt(beta) n eps / (sqrt(d log(1/delta)) G))``):
      summing the descent lemma, ``(1/T) sum_t E||grad F(w_t)||^2 <= 2 beta D_0 / T +
      4 d T G^2 / (n^2 mu^2)`` with ``D_0 = F(w_0) - F*``; the minimizing T is::

          T = ceil(n mu sqrt(beta D_0 / (2 d)) / G),   at least 1,

      with ``D_0 = initial_gap`` (the theorem hides it in the O; default 1).
    """
    if regime not in _REGIMES:
        raise ValueError(f"regime must be one of {_REGIMES}, got {regime!r}")
    if regime == "pl":
        if pl_constant is None:
            raise ValueError(
                "the PL regime (Wang, Ye, Xu 2017, Theorem 6.2) needs a public pl_constant: its number of steps "
                "grows linearly in kappa = beta / mu_PL, which cannot be guessed; pass pl_constant or use "
                "regime='nonconvex' (Theorem 6.3)"
            )
        kappa = max(1.0, smoothness / pl_constant)
        arg = n * n * mu_gdp * mu_gdp / (4.0 * kappa * d)
        return max(1, math.ceil(kappa * math.log(arg))) if arg > 1.0 else 1
    return max(1, math.ceil(n * mu_gdp * math.sqrt(smoothness * initial_gap / (2.0 * d)) / lipschitz))


def _positive(name: str, value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


@register(
    "dp_gd",
    setting="smooth, possibly non-convex; PL for excess risk",
    guarantee="(epsilon, delta)",
    source="Wang, Ye, Xu 2017, Alg. 4 (Theorems 6.1-6.3); Wang, Chen, Xu 2019, Alg. 4",
    paper="Wang, Ye, Xu 2017 (Differentially private ERM revisited: faster and more general); Wang, Chen, Xu 2019",
    requires=("smooth", "lipschitz", "approximate_dp"),
    gradient_complexity="n T; T = kappa ln(n^2 mu_GDP^2 / (4 kappa d)) (PL, public mu_PL), "
                        "n mu_GDP sqrt(beta D_0/(2d)) / G (non-convex, and the default without mu_PL)",
    summary="full-batch GD with Gaussian-noised gradients; last, uniformly random or all iterates",
    auto=AutoRule(1, lambda p, b: not p.is_convex,
                  'non-convex loss: noisy gradient descent'),
)
def dp_gd(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    output: str = "last",
    regime: str | None = None,
    steps: int | None = None,
    step_size: float | None = None,
    pl_constant: float | None = None,
    initial_gap: float = 1.0,
    max_steps: int = 1000,
    init=None,
) -> PrivateFit:
    """Differentially private gradient descent for smooth, possibly non-convex F.

    ``w_{t+1} = Pi_C(prox(w_t - eta (grad F(w_t) + z_t)))``, ``z_t ~ N(0, sigma^2 I)``,
    t = 0..T-1 (Wang, Ye, Xu 2017, Algorithm 4; Wang, Chen, Xu 2019, Algorithm 4). Projection onto a bounded
    constraint C and the proximal map of an l1 part of the regularizer are
    post-processing and cost no privacy.

    Assumptions: every per-example loss is L-Lipschitz on C (``problem.lipschitz``) and
    the loss is beta-smooth; for the excess-risk guarantee of the last iterate F must
    satisfy the Polyak-Lojasiewicz inequality ``||grad F||^2 >= 2 mu_PL (F - F*)``.

    Privacy: (epsilon, delta)-DP, replace-one, exactly. Each step releases the mean loss
    gradient (replace-one L2 sensitivity ``2L/n``) plus ``N(0, sigma^2 I)``; T adaptive
    such releases are ``mu``-GDP with ``mu = sqrt(T) (2L/n) / sigma`` (Dong, Roth, Su
    2019), so ``sigma = sqrt(T) (2L/n) / mu(eps, delta)`` with ``mu(eps, delta)`` the
    largest GDP parameter whose (eps, delta) curve meets the budget
    (:func:`~dperm.privacy.mechanisms.vector_mechanism`). The paper's
    ``sigma^2 = c G^2 T ln(1/delta) / (n^2 eps^2)`` (Theorem 6.1) has the same form
    with an unspecified constant.

    Parameters
    ----------
    problem : ERMProblem
        Smooth, Lipschitz loss (a bounded constraint makes e.g. the squared loss
        Lipschitz); any regularizer.
    budget : PrivacyBudget
        (epsilon, delta) with delta > 0.
    rng : None, int or Generator
        Source of all randomness (noise and the random index). ``None`` (production): every step's noisy gradient is a floating-point-safe
        release (grid rounding plus exact discrete Gaussian noise from the OS,
        docs/privacy.md); a seed or Generator: NumPy's reproducible noise, for experiments.
    output : {"last", "random", "all"}
        "last": ``w_T`` (Theorem 6.2, PL). "random": ``w_m`` with m uniform on
        {0, ..., T-1} (Theorem 6.3; the index m is drawn before the run, independently
        of the data, and reported in ``info["iterate_index"]``). "all": coef = ``w_T``
        and ``info["iterates"]`` the (T+1, d) array ``w_0..w_T`` (Wang, Chen, Xu 2019,
        Algorithm 4 returns all of them; each is post-processing of the noisy gradients,
        hence private). The index m is drawn in every mode, so for one seed the three
        outputs share one path: ``coef("random") == info("all")["iterates"][m]``.
    regime : {"pl", "nonconvex"}, optional
        Which theorem sets the default T. Default: "pl" (Theorem 6.2) when
        ``output="last"`` *and* a public PL constant is known (``pl_constant`` given, or
        the strong convexity of a convex loss with a strongly convex regularizer);
        "nonconvex" (Theorem 6.3) otherwise, including ``output="last"`` without a PL
        constant: Theorem 6.2's T is ``kappa ln(...)`` with ``kappa = beta / mu_PL``
        hidden in its O~, and no honest value of kappa exists for a non-convex loss
        (taking kappa = 1, as earlier versions did, gave 7-13 steps on the non-convex
        benchmark problems: far too few). The last iterate is still returned; without
        PL, Theorem 6.3's guarantee is for a uniformly random iterate, so for the last
        one its T is a (documented) heuristic choice. ``regime="pl"`` without a PL
        constant raises ValueError.
    steps : int, optional
        T. Default (see :func:`dp_gd_default_steps`), capped by ``max_steps`` (the
        uncapped value is in ``info["theorem_steps"]``):

        - "pl": ``T = ceil(kappa ln(n^2 mu^2 / (4 kappa d)))``, ``kappa = beta / mu_PL``,
          the explicit form of Theorem 6.2's ``T = O~(log(n^2 eps^2 / (d G^2
          log(1/delta))))`` (whose O~ hides beta and mu_PL);
        - "nonconvex": ``T = ceil(n mu sqrt(beta D_0 / (2 d)) / G)``, the explicit form
          of Theorem 6.3's ``T = O(sqrt(beta) n eps / (sqrt(d log(1/delta)) G))``;

        mu the GDP parameter of the budget (``mu ~ eps / sqrt(2 ln(1.25/delta))`` for
        small eps), G = L, beta = ``problem.smoothness``.
    step_size : float, optional
        Default ``eta = 1/beta`` (Theorems 6.2 and 6.3).
    pl_constant : float, optional
        A *public* PL constant mu_PL (never computed from the private data). Default:
        the strong convexity of F when the loss is convex and r is mu-strongly convex;
        otherwise unknown, and the default regime is then "nonconvex" (see ``regime``).
    initial_gap : float
        A public guess of ``F(w_0) - F*`` for the non-convex T (Theorem 6.3 hides it;
        default 1).
    max_steps : int
        Cap on the default T.
    init : array-like, optional
        Public starting point (default 0).

    Returns
    -------
    PrivateFit
        ``privacy_spent`` the exact budget; ``event`` the T Gaussian releases (their
        ``sigma`` and ``sensitivity``); ``hyperparameters`` T (``steps``) and the regime;
        ``info`` ``theorem_steps``, the random index and (``output="all"``) the iterates.

    References
    ----------
    Wang, Ye, Xu. Differentially private empirical risk minimization revisited:
    faster and more general. NeurIPS 2017, Algorithm 4, Theorems 6.1-6.3. Wang,
    Chen, Xu. Differentially private ERM with non-convex loss functions. ICML 2019,
    Algorithm 4. Dong, Roth, Su. Gaussian differential privacy. 2019.
    """
    secure = secure_randomness(rng)
    rng = start("dp_gd", problem, budget, rng)
    _check_output(output, _OUTPUTS)
    if regime is not None and regime not in _REGIMES:
        raise ValueError(f"regime must be one of {_REGIMES}, got {regime!r}")
    n, d, L, beta = problem.n_samples, problem.n_features, problem.lipschitz, problem.smoothness
    if pl_constant is None and problem.is_convex and problem.strong_convexity > 0:
        pl_constant = problem.strong_convexity
    elif pl_constant is not None:
        pl_constant = _positive("pl_constant", pl_constant)
    if regime is None:  # Theorem 6.2 only with a public PL constant (never a guessed kappa)
        regime = "pl" if output == "last" and pl_constant is not None else "nonconvex"
    elif regime == "pl" and pl_constant is None:
        raise ValueError(
            "dp_gd: regime='pl' (Wang, Ye, Xu 2017, Theorem 6.2) needs a public pl_constant (its T grows linearly "
            "in kappa = beta / mu_PL); pass pl_constant, or regime='nonconvex' / regime=None"
        )
    initial_gap = _positive("initial_gap", initial_gap)
    # The GDP parameter of the budget only sets the default T (a utility choice); the
    # noise comes from the calibration below.
    mu_gdp = gaussian_dp_mu(budget.epsilon, budget.delta)
    theorem_T = dp_gd_default_steps(regime, n=n, d=d, mu_gdp=mu_gdp, smoothness=beta, lipschitz=L,
                                    pl_constant=pl_constant, initial_gap=initial_gap)
    T = min(theorem_T, check_steps("max_steps", max_steps)) if steps is None else check_steps("steps", steps)
    eta = 1.0 / beta if step_size is None else check_step_size(step_size)
    calibration = vector_mechanism(budget, problem.gradient_sensitivity(), steps=T, label="dp_gd", secure=secure,
                                   dim=problem.n_features)

    m = int(rng.integers(T))  # uniform on {0, ..., T-1}, independent of the data
    w0 = initial_point(problem, init)
    w_last, w_m, path = noisy_gd_path(problem, calibration.event, w0, eta, T, rng, _bounded_constraint(problem),
                                      keep_index=m if output == "random" else None, keep_all=output == "all")
    info = {"theorem_steps": theorem_T}
    if output == "random":
        info["iterate_index"] = m
    if output == "all":
        info["iterates"] = path  # post-processing of the noisy gradients: private
    return PrivateFit(
        coef=w_m if output == "random" else w_last,
        privacy_spent=calibration.spent,
        algorithm="dp_gd",
        event=calibration.event,
        hyperparameters={"steps": T, "step_size": eta, "output": output, "regime": regime,
                         "pl_constant": pl_constant, "initial_gap": initial_gap, "max_steps": max_steps},
        info=info,
    )


# -------------------------------------------------------------------------------- RRPSGD
def random_round_distribution(step_sizes, smoothness: float) -> np.ndarray:
    """``P(R = k) = (2 eta_{k-1} - beta eta_{k-1}^2) / sum_r (2 eta_r - beta eta_r^2)``,
    k = 1..T_max (Zhang, Zheng, Mou, Wang 2017, Theorem 5). Every ``eta_k`` must lie in ``(0, 2/beta)``.

    Returns the array ``p`` with ``p[k-1] = P(R = k)``.
    """
    etas = np.asarray(step_sizes, dtype=np.float64)
    beta = _positive("smoothness", smoothness)
    if etas.ndim != 1 or etas.size == 0:
        raise ValueError("step_sizes must be a non-empty 1-d array")
    if not (np.all(np.isfinite(etas)) and np.all(etas > 0) and np.all(etas < 2.0 / beta)):
        raise ValueError(f"every step size must be in (0, 2/beta) = (0, {2.0 / beta:.6g}) "
                         "(Zhang, Zheng, Mou, Wang 2017, Theorem 5)")
    weights = 2.0 * etas - beta * etas * etas
    return weights / weights.sum()


@register(
    "rrpsgd",
    setting="smooth non-convex",
    guarantee="(epsilon, delta)",
    source="Zhang, Zheng, Mou, Wang 2017, Alg. 2 (Theorems 4, 5)",
    paper="Zhang, Zheng, Mou, Wang 2017 (Efficient private ERM for smooth objectives)",
    requires=("smooth", "lipschitz", "approximate_dp", "compiled_loss"),
    gradient_complexity="b R <= b T_max; default b = sqrt(n), T_max = n (the paper: b = 1, T_max = n^2)",
    summary="noisy SGD stopped after a data-independent random number of rounds; accounted at T_max",
)
def rrpsgd(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    schedule: str = "minibatch",
    batch_size: int | None = None,
    max_steps: int | None = None,
    sampling: str | None = None,
    step_size="theorem",
    initial_gap: float = 1.0,
    init=None,
) -> PrivateFit:
    """Random Round Private SGD (Zhang, Zheng, Mou, Wang 2017, Algorithm 2), mini-batch by default.

    Draw R from ``P(R = k) ~ 2 eta_{k-1} - beta eta_{k-1}^2`` on ``{1, ..., T_max}``
    *before* the run (independently of the data), then run R noisy SGD steps
    ``w_{t+1} = Pi_C(prox(w_t - eta_t (g_t + l2 w_t)))``, ``g_t = (sum_{i in B_t}
    grad f_i(w_t) + N(0, sigma^2 I)) / b``, and output ``w_R``.

    Assumptions: per-example losses L-Lipschitz and beta-smooth (Theorem 5); no
    convexity. A bounded constraint (projection) and a regularizer (l2 in the gradient, l1
    by its prox) are supported as post-processing, beyond the paper's unconstrained setting.

    Privacy: (epsilon, delta)-DP, replace-one. Each step releases a batch sum of
    per-example gradients (replace-one sensitivity 2L) plus ``N(0, sigma^2 I)``. The
    output ``w_R`` is a function of the first R of the T_max releases, and R is drawn
    independently of the data, so the run is at most as revealing as all T_max steps:
    sigma is the smallest noise the accountant certifies for the event of T_max
    subsampled Gaussian steps of the sampling that runs (``PoissonSampledDpEvent``, or
    ``SampledWithoutReplacementDpEvent`` for fixed-size batches, whose step under
    replace-one can shift by twice Poisson's; both by the privacy-loss distribution, see
    :mod:`dperm.privacy.events`), via :func:`~dperm.privacy.mechanisms.calibrate_and_charge`.
    The paper's noise
    ``sigma^2 = 4 L^2 log(3n/delta) log(2/delta) / eps^2`` (Theorem 4, eps <= 1) comes
    from amplification plus strong composition and is looser; here the reported budget
    is the accountant's epsilon at T_max.

    Parameters
    ----------
    problem : ERMProblem
        Smooth L-Lipschitz loss with a compiled kernel (the built-in losses).
    budget : PrivacyBudget
        (epsilon, delta), delta > 0.
    schedule : {"minibatch", "paper"}
        Defaults of the other parameters. "paper": ``batch_size = 1``,
        ``T_max = n^2``, one uniformly drawn example per step (``sampling =
        "without_replacement"``), as Algorithm 2 -- about ``n^2 / 2`` steps on average,
        slow for large n. "minibatch" (default): ``batch_size = round(sqrt(n))``,
        ``T_max = ceil(n^2 / b^2)`` (about n), Poisson sampling: the same ratio
        ``q sqrt(T_max) = 1`` of sampling rate to rounds as the paper, at about
        ``n^1.5 / 2`` per-example gradients instead of ``n^2 / 2``.
    batch_size : int, optional
        b (expected batch size under Poisson sampling); overrides the schedule.
    max_steps : int, optional
        T_max; overrides the schedule.
    sampling : {"poisson", "without_replacement"}, optional
        Overrides the schedule. The accountant always matches the sampling that runs.
    step_size : "theorem", float or array of length T_max
        "theorem" (Theorem 5): the constant ``eta = min(1/beta, D_F / (s sqrt(T_max)))``
        with ``D_F = sqrt(2 D_0 / beta)``, ``D_0 = initial_gap`` and
        ``s^2 = 4 L^2 / b + d sigma^2 / b^2`` bounding the variance of the noisy
        gradient (the paper's ``4 L^2 + d sigma^2`` at b = 1, with ``sqrt(T_max) = n``).
        An array gives the schedule ``eta_0..eta_{T_max-1}``; every ``eta_k`` must lie in
        ``(0, 2/beta)``.
    initial_gap : float
        A public guess of ``F(w_0) - F*`` (Theorem 5's D_F; default 1).
    init : array-like, optional
        Public starting point (default 0).

    Returns
    -------
    PrivateFit
        ``info["rounds"]`` = R (public: drawn independently of the data); ``event`` the
        T_max subsampled releases (``sigma``, ``sensitivity``, sampling rate);
        ``privacy_spent`` the accountant's epsilon at T_max (never above the target).

    References
    ----------
    Zhang, Zheng, Mou, Wang. Efficient private ERM for smooth objectives.
    IJCAI 2017, Algorithm 2, Theorems 4-5. Ghadimi, Lan. Stochastic first- and
    zeroth-order methods for nonconvex stochastic programming. SIAM J. Optim. 2013.
    """
    secure = secure_randomness(rng)
    rng = start("rrpsgd", problem, budget, rng)
    if schedule not in ("minibatch", "paper"):
        raise ValueError(f"schedule must be 'minibatch' or 'paper', got {schedule!r}")
    n, d, L, beta = problem.n_samples, problem.n_features, problem.lipschitz, problem.smoothness
    if schedule == "paper":
        b_default, t_default, s_default = 1, n * n, "without_replacement"
    else:
        b_default = max(1, round(math.sqrt(n)))
        t_default, s_default = None, "poisson"
    b = b_default if batch_size is None else check_steps("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size {b} exceeds the number of rows {n}")
    if max_steps is not None:
        T_max = check_steps("max_steps", max_steps)
    else:
        T_max = t_default if t_default is not None else max(1, math.ceil(n * n / (b * b)))
    sampling = s_default if sampling is None else sampling
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    initial_gap = _positive("initial_gap", initial_gap)

    # A constant step is kept as a number (the paper's T_max = n^2 would make T_max-long
    # arrays gigabytes); a given schedule is validated before the (costlier) calibration.
    eta, etas = None, None
    if isinstance(step_size, str):
        if step_size != "theorem":
            raise ValueError(f"step_size must be 'theorem', a number or an array, got {step_size!r}")
    elif np.ndim(step_size) == 0:
        eta = check_step_size(step_size)
        random_round_distribution([eta], beta)  # the (0, 2/beta) check
    else:
        etas = np.array(step_size, dtype=np.float64)
        if etas.shape != (T_max,):
            raise ValueError(f"a step-size array must have shape (T_max,) = ({T_max},), got {etas.shape}")
        probabilities = random_round_distribution(etas, beta)

    calibration = calibrate_and_charge(_sgd_steps_event(n, b, sampling, 2.0 * L, T_max, secure), budget, "rrpsgd")
    sigma = calibration.noise
    secure_noise = None
    if secure:  # each batch sum a grid release with exact discrete noise (os.urandom)
        from ..privacy.secure_release import secure_gaussian_parameters

        secure_noise = secure_gaussian_parameters(sigma, 2.0 * L, d)
    if isinstance(step_size, str):  # "theorem": Theorem 5's constant step
        s = math.sqrt(4.0 * L * L / b + d * (sigma / b) ** 2)
        d_f = math.sqrt(2.0 * initial_gap / beta)
        eta = min(1.0 / beta, d_f / (s * math.sqrt(T_max)))

    # R before the run, independent of the data. A constant step makes P uniform.
    if etas is None:
        R = int(rng.integers(1, T_max + 1))
    else:
        R = int(rng.choice(T_max, p=probabilities)) + 1

    w = initial_point(problem, init)
    domain = _bounded_constraint(problem)
    # Chunks of a multiple of the SGD driver's block draw the same random stream as one call.
    for lo in range(0, R, _CHUNK):
        hi = min(R, lo + _CHUNK)
        chunk = np.full(hi - lo, eta) if etas is None else etas[lo:hi]
        w, _ = run_noisy_sgd(problem, w, chunk, batch_size=b, sampling=sampling, sigma=sigma, rng=rng, domain=domain,
                             secure_noise=secure_noise)
    w_R = w
    return PrivateFit(
        coef=w_R,
        privacy_spent=calibration.spent,
        algorithm="rrpsgd",
        event=calibration.event,
        hyperparameters={"schedule": schedule, "batch_size": b, "max_steps": T_max, "sampling": sampling,
                         "step_size": eta if etas is None else etas, "initial_gap": initial_gap},
        info={"rounds": R},
    )


def _sgd_steps_event(n: int, batch_size: int, sampling: str, sensitivity: float, steps: int, secure: bool = False):
    """x -> the event of ``steps`` releases of a batch sum (replace-one ``sensitivity``)
    plus ``N(0, x^2 I)``, the batch drawn by ``sampling`` from n rows (``secure``: by the
    floating-point-safe sampler, :func:`dperm.algorithms.sgd.run_noisy_sgd`)."""
    def make(x):
        return sgd_event(x, sensitivity, n, batch_size, steps, sampling, secure=secure)

    return make


# -------------------------------------------------------------------------------- DP-GLD
def dp_gld_step_size(sigma: float, inverse_temperature: float) -> float:
    """The Langevin step ``eta = 2 / (beta s^2)`` whose noise ``sqrt(2 eta / beta) xi``
    equals ``eta z`` with ``z ~ N(0, s^2 I)``, s = ``sigma`` the calibrated gradient-noise std."""
    return 2.0 / (inverse_temperature * sigma**2)


def dp_gld_default_schedule(
    *, n: int, d: int, mu_gdp: float, lipschitz: float, loss_smoothness: float, l2: float, max_steps: int,
    inverse_temperature: float | None = None,
) -> tuple[int, float, int]:
    """(T, inverse temperature beta, theorem T) for DP-GLD, after Wang, Chen, Xu 2019, Theorem 2.

    With the exact calibration the step is ``eta = mu^2 n^2 / (2 beta T L^2)`` (mu the
    GDP parameter of the budget; Algorithm 1's ``eta = c n^2 eps^2 / (L^2 beta T
    log(1/delta))``), so the budget fixes the product ``beta T eta = mu^2 n^2 / (2 L^2)``
    and the *time* ``T eta`` the chain travels is ``mu^2 n^2 / (2 beta L^2)``, whatever T.
    Theorem 2 asks ``beta >= max(4/lambda, d)`` (printed garbled; read as 4/lambda after
    Raginsky et al. 2017's ``beta >= 2/m`` with dissipativity ``m = lambda/2``), Remark 1
    ``beta = O(log n)``, and ``T >= Theta((M + lambda)^2 n^2 eps^2 / (lambda beta
    log(1/delta) L^2))``, i.e. ``eta <= c lambda / (M + lambda)^2`` for an unspecified
    constant c. With ``M + lambda = M_lam``:

    1. ``beta = max(4/lambda, d, ln n)`` unless given;
    2. ``theorem T = ceil(mu^2 n^2 M_lam^2 / (2 beta L^2 lambda))`` (c = 1, so that
       ``eta <= lambda / M_lam^2``); used as T when it is at most ``max_steps``;
    3. otherwise the step is enlarged before the temperature is touched: ``T =
       ceil(mu^2 n^2 M_lam / (2 beta L^2))``, the fewest steps with ``eta <= 1 / M_lam``
       (the descent-lemma step of the smooth part, as for ``dp_gd``), if that is at most
       ``max_steps``;
    4. otherwise ``T = max_steps`` and, unless beta was given, beta is raised to
       ``mu^2 n^2 M_lam / (2 T L^2)`` so that ``eta = 1 / M_lam`` (a colder chain: less
       Langevin noise, and the condition ``beta >= max(4/lambda, d)`` still holds).

    Steps 3-4 deviate from Theorem 2 taken with c = 1, on purpose: under a step cap its
    ``eta <= lambda / M_lam^2`` limits the time travelled to ``T eta <= max_steps lambda /
    M_lam^2`` -- about 1 for the usual weak regularization (lambda = 1e-3, M ~ 1, 1000
    steps), so the chain barely left w_0 (earlier versions raised beta at that step size).
    Reading the theorem's Theta with the constant ``c = M_lam / lambda`` instead keeps
    its form (T proportional to ``M_lam n^2 eps^2 / (beta log(1/delta) L^2)``) and lets
    the chain travel ``max_steps / M_lam`` time units. The privacy is unaffected: eta is
    always solved from the calibrated noise.
    """
    M_lam = loss_smoothness + l2
    time_beta = mu_gdp**2 * n * n / (2.0 * lipschitz**2)  # = beta T eta, fixed by the budget
    beta = max(4.0 / l2, float(d), math.log(n)) if inverse_temperature is None else inverse_temperature
    theorem_T = max(1, math.ceil(time_beta * M_lam**2 / (l2 * beta)))  # eta <= lambda / M_lam^2
    if theorem_T <= max_steps:
        return theorem_T, beta, theorem_T
    stable_T = max(1, math.ceil(time_beta * M_lam / beta))  # eta <= 1 / M_lam
    if stable_T <= max_steps:
        return stable_T, beta, theorem_T
    if inverse_temperature is None:
        return max_steps, time_beta * M_lam / max_steps, theorem_T
    return max_steps, beta, theorem_T


@register(
    "dp_gld",
    setting="smooth, l2-regularized, non-convex",
    guarantee="(epsilon, delta)",
    source="Wang, Chen, Xu 2019, Alg. 1 (Theorems 1-3)",
    paper="Wang, Chen, Xu 2019 (Differentially private ERM with non-convex loss functions)",
    requires=("smooth", "lipschitz", "smooth_regularizer", "unconstrained", "approximate_dp"),
    gradient_complexity="n T, T = mu_GDP^2 n^2 (M + lambda)^2 / (2 beta L^2 lambda) (Thm 2); over the cap, "
                        "the fewest steps with eta <= 1/(M + lambda)",
    summary="gradient Langevin dynamics with the step size solved from the budget (exact GDP)",
)
def dp_gld(
    problem: ERMProblem,
    budget: PrivacyBudget,
    *,
    rng=None,
    steps: int | None = None,
    inverse_temperature: float | None = None,
    output: str = "last",
    max_steps: int = 1000,
    init=None,
) -> PrivateFit:
    """Differentially private gradient Langevin dynamics (Wang, Chen, Xu 2019, Algorithm 1).

    ``w_k = w_{k-1} - eta grad F_r(w_{k-1}) + sqrt(2 eta / beta) xi_{k-1}``, k = 1..T,
    ``xi ~ N(0, I_d)``, with ``F_r`` the mean loss plus ``(lambda/2) ||w||^2`` and beta
    the inverse temperature; the stationary law of the diffusion is the Gibbs measure
    ``exp(-beta F_r)``.

    Assumptions (Wang, Chen, Xu 2019, Assumption 1): the hypothesis space is R^d (no constraint); the
    regularizer is ``(lambda/2) ||w||^2`` with lambda > 0 (no l1 part); every loss is
    L-Lipschitz and M-smooth; no convexity.

    Privacy: (epsilon, delta)-DP, replace-one, exactly. The step equals
    ``w_{k-1} - eta (grad F_r(w_{k-1}) + z_k)`` with ``z_k ~ N(0, s^2 I)``,
    ``s = sqrt(2 / (eta beta))``: a full-batch Gaussian release of the mean loss gradient
    (sensitivity ``2L/n``), T times. T such releases are ``sqrt(T) (2L/n) / s``-GDP, so
    the budget fixes ``s = sqrt(T) (2L/n) / mu(eps, delta)``
    (:func:`~dperm.privacy.mechanisms.vector_mechanism`) and the step size is
    solved in closed form: ``eta = 2 / (beta s^2) = mu^2 n^2 / (2 beta T L^2)``
    (Algorithm 1's ``eta = c n^2 eps^2 / (L^2 beta T log(1/delta))``, constant exact).

    Parameters
    ----------
    problem : ERMProblem
        Unconstrained, smooth Lipschitz loss, regularizer ``("l2", lambda)`` with
        lambda > 0.
    budget : PrivacyBudget
        (epsilon, delta), delta > 0.
    steps : int, optional
        T. Default from Theorem 2 (see :func:`dp_gld_default_schedule`):
        ``T = ceil(mu^2 n^2 (M + lambda)^2 / (2 beta L^2 lambda))``, so that
        ``eta <= lambda / (M + lambda)^2``, when that is at most ``max_steps``.
        Otherwise (the usual case for small lambda) the step is enlarged up to
        ``eta <= 1 / (M + lambda)``: ``T = ceil(mu^2 n^2 (M + lambda) / (2 beta L^2))``,
        and if that too exceeds ``max_steps``, ``T = max_steps`` with beta raised (unless
        given) so that ``eta = 1 / (M + lambda)``. This deviates from Theorem 2 read
        with constant 1 (``eta <= lambda / (M + lambda)^2``), which under the step cap
        left the chain a total time ``T eta`` of about 1 at lambda = 1e-3, so that it
        barely moved from w_0; the Theta of the theorem leaves the constant open.
        ``info["theorem_steps"]`` is Theorem 2's T with constant 1.
    inverse_temperature : float, optional
        beta. Default ``max(4/lambda, d, ln n)`` (Theorem 2: ``beta >= max(4/lambda, d)``;
        Remark 1: ``beta = O(log n)``).
    output : {"last", "random"}
        "last": ``w_T`` (Theorem 2). "random": ``w_j`` with j uniform on {1, ..., T}
        (Theorem 3), drawn before the run independently of the data
        (``info["iterate_index"]``).
    max_steps : int
        Cap on the default T.
    init : array-like, optional
        A fixed public starting point (default 0; Theorem 3 assumes a fixed w_0).

    Returns
    -------
    PrivateFit
        ``hyperparameters`` hold T, beta and the solved ``step_size``; ``event`` the T
        Gaussian releases of gradient-unit noise std s (``sigma``); ``info["langevin_std"]``
        ``sqrt(2 eta / beta)``; ``privacy_spent`` the exact budget.

    Warns
    -----
    LangevinStepWarning
        When the solved step exceeds ``2 / (M + lambda)`` (the smooth part's stability
        limit): more steps or a larger inverse temperature shrink it.

    References
    ----------
    Wang, Chen, Xu. Differentially private empirical risk minimization with
    non-convex loss functions. ICML 2019, Algorithm 1, Theorems 1-3. Raginsky, Rakhlin,
    Telgarsky. Non-convex learning via stochastic gradient Langevin dynamics. COLT 2017.
    """
    secure = secure_randomness(rng)
    rng = start("dp_gld", problem, budget, rng)
    _check_output(output, ("last", "random"))
    lam = problem.regularizer.l2
    if not lam > 0:
        raise AssumptionError(
            "dp_gld (Wang, Chen, Xu 2019, Alg. 1) needs an l2 regularizer (lambda/2)||w||^2 with lambda > 0 "
            "(Wang, Chen, Xu 2019, Assumption 1): pass regularizer=('l2', lambda)."
        )
    n, d, L = problem.n_samples, problem.n_features, problem.lipschitz
    M = problem.constants.loss_smoothness
    if inverse_temperature is not None:
        inverse_temperature = _positive("inverse_temperature", inverse_temperature)
    # The GDP parameter of the budget only sets the default schedule (a utility choice);
    # the noise, hence the step size, comes from the calibration below.
    mu_gdp = gaussian_dp_mu(budget.epsilon, budget.delta)
    cap = check_steps("max_steps", max_steps)
    if steps is None:
        T, beta, theorem_T = dp_gld_default_schedule(
            n=n, d=d, mu_gdp=mu_gdp, lipschitz=L, loss_smoothness=M, l2=lam, max_steps=cap,
            inverse_temperature=inverse_temperature)
    else:
        T = check_steps("steps", steps)
        beta = max(4.0 / lam, float(d), math.log(n)) if inverse_temperature is None else inverse_temperature
        theorem_T = dp_gld_default_schedule(n=n, d=d, mu_gdp=mu_gdp, lipschitz=L, loss_smoothness=M, l2=lam,
                                            max_steps=math.inf, inverse_temperature=beta)[2]
    calibration = vector_mechanism(budget, problem.gradient_sensitivity(), steps=T, label="dp_gld", secure=secure,
                                   dim=problem.n_features)
    eta = dp_gld_step_size(calibration.noise, beta)
    if eta * (M + lam) >= 2.0:
        warnings.warn(
            f"dp_gld: the step size solved from the budget, eta={eta:.4g}, exceeds 2/(M + lambda)="
            f"{2.0 / (M + lam):.4g}, so the iteration is unstable; raise steps (Theorem 2 asks "
            f"T >= {theorem_T}) or inverse_temperature.",
            LangevinStepWarning,
            stacklevel=user_stacklevel(),
        )

    j = int(rng.integers(1, T + 1))  # uniform on {1, ..., T}, independent of the data
    w0 = initial_point(problem, init)
    w_last, w_j, _ = noisy_gd_path(problem, calibration.event, w0, eta, T, rng, None,
                                   keep_index=j if output == "random" else None)
    info = {"theorem_steps": theorem_T, "langevin_std": math.sqrt(2.0 * eta / beta)}
    if output == "random":
        info["iterate_index"] = j
    return PrivateFit(
        coef=w_j if output == "random" else w_last,
        privacy_spent=calibration.spent,
        algorithm="dp_gld",
        event=calibration.event,
        hyperparameters={"steps": T, "inverse_temperature": beta, "step_size": eta, "output": output,
                         "max_steps": max_steps},
        info=info,
    )
