"""The inference fit: private Newton steps that end in a released sandwich covariance.

For a convex margin (GLM) loss without regularization, ``w_hat = argmin (1/n) sum_i
s_i phi(<w, x_i>, y_i)`` is an M-estimator with the asymptotic covariance ``H^-1 M H^-1 /
n`` (the sandwich; ``H`` the mean loss Hessian, ``M = (1/n) sum_i g_i g_i^T`` the mean
outer product of the per-example gradients, both at ``w_hat``). Following
Avella-Medina, Bradshaw and Loh (2023), the private estimate is the last iterate of
noisy Newton steps, and its error is the sampling error of ``w_hat`` plus the known
noise of the last step; both parts of the covariance come from releases:

``w_{k+1} = w_k - A_k^-1 g~_k``, ``g~_k = grad L(w_k) + N(0, sigma_k^2 I)``, ``A_k`` the
released loss Hessian ``H~_k`` (projected onto the PSD cone) plus, for every step but the
last, the ridge ``r_k = sqrt(2 d) s_k`` (``s_k`` the Hessian noise's std: the noise's
typical operator norm); the last step is undamped when the released Hessian clears its
high-probability noise bound ``t`` (``lambda_min(H~) >= separation * t``). At the last
point the spread of the per-example gradients may be released too (the sandwich's ``M``,
the squared loss's mean square: the one release used for the intervals only). Then, all a
post-processing of the releases,

    Cov(w_T) ~= H~^-1 M~ H~^-1 / n  (or the model's H~^-1 / n, s^2 H~^-1 / (n - p))  +  S_T,

``S_T`` the second moment of ``w_T - w_hat`` that the noise leaves, propagated through the
steps from ``S_0 = w w^T`` (:func:`_noise_covariance`): each step adds its gradient noise
``sigma_k^2 A_k^-2`` and carries ``S_k`` through ``A_k^-1 (E_k + r_k I)``; the Hessian
noise ``E_k`` by its moments, except at the last step, where the fits let through are
those whose noise raised ``lambda_min``: there ``||E|| <= t`` bounds it (``t^2 ||S_{T-1}||
A^-2``). When the released Hessian does not clear its noise the intervals are refused
(infinite), a post-processing of the releases, never a silent undercoverage.

Replace-one sensitivities (declared bounds only; the proofs are those of
:mod:`dperm.algorithms.newton`): the mean gradient ``2 L_k / n`` at the public point
``w_k``; the mean loss Hessian ``sqrt(2) beta / n`` (Frobenius, convex GLM); the mean
gradient outer product ``sqrt(2) L_k^2 / n`` (Frobenius: each ``g_i g_i^T / n`` is PSD of
norm ``<= L_k^2 / n`` and the inner product of two such is >= 0, the argument of the
Hessian). Released in units of the sensitivity when it depends on ``w_k``. The squared
loss's Hessian does not depend on w: it is released once.

Privacy: every release is a Gaussian release of the composition below, which the one
accountant calibrates (Gaussian DP, exactly) to the budget and charges before the data is
read. The shares: ``gradient_share`` of ``mu^2`` to the gradients, ``meat_share`` to
``M``, the rest to the Hessians; within gradients and Hessians step k gets weight
``2.5^k`` (the last steps set the noise of the estimate, the first ones only need to get
close).

References
----------
Avella-Medina, Bradshaw, Loh. Differentially private inference via noisy optimization.
Annals of Statistics 51(5), 2023 (noisy Newton, Section 3; the private sandwich, Section 4).
Dong, Roth, Su. Gaussian differential privacy. JRSS-B 2022 (composition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.newton import gradient_bound, hessian_frobenius_sensitivity
from ..algorithms.sufficient_statistics import _psd, _solve, _symmetric, _upper, noise_operator_bound
from ..privacy import events as ev
from ..privacy.budget import PrivacyBudget
from ..privacy.accountant import calibrate
from ..privacy.mechanisms import calibrate_and_charge, release, secure_randomness, single_release
from ..privacy.noise import make_rng
from ..problem.erm import ERMProblem
from ..problem.losses import MarginLoss
from ..result import PrivateFit
from .softmax import ReferenceSoftmax

__all__ = ["newton_inference", "public_outlook", "InferenceSchedule", "schedule", "DEFAULT_STEPS", "SEPARATION",
           "OUTLOOK_CURVATURE"]

_SQRT2 = math.sqrt(2.0)
# Newton steps from 0: the squared loss is exact after one (then it is SSP: the gradient at 0
# is X^T y / n, of sensitivity 2 R B / n, below the 2 R (R ||w|| + B) / n of any later step);
# the logistic and Huber losses converge from 0 within 5 on the study (docs/inference.md).
DEFAULT_STEPS = {"squared": 1}
DEFAULT_GLM_STEPS = 10
# Step k's share of the gradients' and Hessians' budgets grows as GLM_GROWTH^k: the last
# steps set the estimate's noise and the refusal, the first ones only need to get close
# (the study on the example, docs/inference.md: 2 refused 18% of the fits there,
# 3 left the estimate short of the optimum).
GLM_GROWTH = 2.5
# The released Hessian must clear ``separation`` times its noise bound t for the intervals:
# at 1 the loss Hessian is positive definite except with probability rho (the GLMs, whose
# last step's covariance bounds the Hessian noise's effect by t, docs/inference.md); the
# squared loss keeps the 2 of its measured grid (its covariance takes the noise's moments).
SEPARATION = {"squared": 2.0}
GLM_SEPARATION = 1.0
# The sampling part's default per loss: the model's (statsmodels' OLS and Logit default),
# else the sandwich.
DEFAULT_COVARIANCE = {"squared": "model", "logistic": "model", "multinomial": "model"}


@dataclass(frozen=True)
class InferenceSchedule:
    """The public plan of an inference fit: steps, the weights of each release in
    ``mu^2`` (summing to 1), whether the Hessian is released once (squared loss)."""

    steps: int
    gradient_weights: tuple
    hessian_weights: tuple
    meat_weight: float

    @property
    def hessian_once(self) -> bool:
        return len(self.hessian_weights) == 1


COVARIANCES = ("sandwich", "model")


# Shares of mu^2 (gradients, variance release; the Hessians take the rest). The squared
# loss's one step: the noise of X^T y (sensitivity 2 R B) outweighs that of X^T X times w
# (sqrt 2 R^2 ||w|| / sqrt 2) about 4 to 1 at the study's bounds, and the variance of the
# estimate is smallest with the shares in that ratio (docs/inference.md).
DEFAULT_SHARES = {"squared": (0.7, 0.1)}
GLM_SHARES = (0.4, 0.15)


def schedule(loss_name: str, steps: int | None = None, gradient_share: float | None = None,
             meat_share: float | None = None, covariance: str = "sandwich") -> InferenceSchedule:
    """The release weights (public: the loss, the steps, the shares and the covariance
    kind only). ``covariance="model"`` with a loss other than the squared one needs no
    variance release: its share goes to the others."""
    if covariance not in COVARIANCES:
        raise ValueError(f"covariance must be one of {COVARIANCES}, got {covariance!r}")
    defaults = DEFAULT_SHARES.get(loss_name, GLM_SHARES)
    gradient_share = defaults[0] if gradient_share is None else gradient_share
    meat_share = defaults[1] if meat_share is None else meat_share
    T = DEFAULT_STEPS.get(loss_name, DEFAULT_GLM_STEPS) if steps is None else steps
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    for name, value in (("gradient_share", gradient_share), ("meat_share", meat_share)):
        if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0.0 < value < 1.0):
            raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    if gradient_share + meat_share >= 1.0:
        raise ValueError("gradient_share + meat_share must be below 1 (the Hessians take the rest)")
    geometric = np.array([GLM_GROWTH ** k for k in range(int(T))])
    geometric /= geometric.sum()
    if covariance == "model" and loss_name != "squared":
        gradient_share, meat_share = gradient_share / (1.0 - meat_share), 0.0
    hessian_share = 1.0 - gradient_share - meat_share
    gradients = tuple(float(gradient_share * g) for g in geometric)
    hessians = (hessian_share,) if loss_name == "squared" else tuple(float(hessian_share * g) for g in geometric)
    return InferenceSchedule(int(T), gradients, hessians, float(meat_share))


def _leaves(plan: InferenceSchedule, dh: float) -> list:
    """``[(weight, sensitivity)]`` per release of ``plan``, in release-event order: the
    gradients and the outer product in units of their sensitivity (1), the Hessians at dh."""
    leaves = [(s, 1.0) for s in plan.gradient_weights] + [(s, dh) for s in plan.hessian_weights]
    if plan.meat_weight > 0:
        leaves.append((plan.meat_weight, 1.0))
    return leaves


def gaussian_composition(leaves: list, secure: bool):
    """x -> the composition of a Gaussian release per ``(weight, sensitivity)`` leaf at noise
    level x (``mu^2 = 1 / x^2`` in all, leaf j taking ``weight_j`` of it)."""

    def make(x):
        return ev.composed([ev.gaussian_release(x * unit / math.sqrt(weight), unit, secure=secure)
                            for weight, unit in leaves])

    return make


def _event(plan: InferenceSchedule, dh: float, secure: bool):
    """x -> the composition of every release of ``plan`` at noise level x."""
    return gaussian_composition(_leaves(plan, dh), secure)


def _gradient_scale(problem, w: np.ndarray) -> float:
    """The replace-one sensitivity of the mean loss gradient at the public w (``2 L_k / n``)."""
    if isinstance(problem, ReferenceSoftmax):
        return problem.gradient_scale(w)
    return gradient_bound(problem, w)


def _loss_hessian(problem: ERMProblem, w: np.ndarray) -> np.ndarray:
    H = problem.hessian(w)
    H[np.diag_indices_from(H)] -= problem.regularizer.l2
    return H


def _gradient_outer(problem: ERMProblem, w: np.ndarray) -> np.ndarray:
    """``M = (1/n) sum_i g_i g_i^T`` over the per-example (weighted, clipped) gradients,
    accumulated over blocks of rows (no n x d temporary beyond a block)."""
    n, d = problem.n_samples, problem.n_features
    out = np.zeros((d, d))
    step = max(1024, (1 << 22) // max(1, d))
    for lo in range(0, n, step):
        G = problem.per_example_gradients(w, np.arange(lo, min(n, lo + step)))
        out += G.T @ G
    return 0.5 * (out + out.T) / n


def _check(problem: ERMProblem, budget: PrivacyBudget) -> None:
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}")
    if budget.delta <= 0:
        raise ValueError("the inference fit releases Gaussian statistics and needs delta > 0")
    if isinstance(problem, ReferenceSoftmax):
        pass  # the softmax with a reference class (dperm.inference.softmax): constants proven there
    elif not isinstance(problem.loss, MarginLoss) or not problem.loss.convex or getattr(problem, "_custom", False):
        raise ValueError("the inference fit needs a built-in convex margin (GLM) loss")
    if problem.constraint.bounded:
        raise ValueError("the inference fit estimates the unconstrained model; drop the constraint")
    if problem.regularizer.l2 != 0 or not problem.regularizer.is_smooth:
        raise ValueError("the inference fit estimates the unregularized model; use no regularizer")
    beta = float(problem.constants.loss_smoothness)
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"the inference fit needs a loss with curvature (smoothness {beta})")
    budget.check_delta(problem.n_samples)


def _separation(problem: ERMProblem, separation) -> float:
    return float(SEPARATION.get(problem.loss.name, GLM_SEPARATION) if separation is None else separation)


def newton_inference(problem: ERMProblem, budget: PrivacyBudget, *, rng=None, steps: int | None = None,
                     covariance: str | None = None, gradient_share: float | None = None,
                     meat_share: float | None = None, failure_probability: float = 0.05, separation: float | None = None) -> PrivateFit:
    """Noisy Newton steps from 0 and a private covariance of the last iterate (module notes).

    Parameters
    ----------
    problem : ERMProblem or ReferenceSoftmax
        A built-in convex margin loss (logistic, squared, Huber), no regularizer, no
        constraint; rows ``||x|| <= data_norm`` (intercept column included), labels
        ``|y| <= label_bound``, weights in [0, 1]; or the multinomial model with a
        reference class (:class:`~dperm.inference.softmax.ReferenceSoftmax`).
    budget : PrivacyBudget
        delta > 0: (epsilon, delta)-DP under replace-one (Gaussian DP composition).
    rng : None, int or Generator
        None: the floating-point-safe sampler; a seed: NumPy's reproducible noise.
    steps : int or None
        Newton steps (None: 1 for the squared loss, 10 otherwise); step k gets weight
        ``2.5^k`` of the gradients' and Hessians' shares.
    covariance : {"sandwich", "model"} or None
        The sampling part: ``"sandwich"`` ``H^-1 M H^-1 / n`` (M released; valid without
        the model's variance assumption), ``"model"`` the model-based ``H^-1 / n``
        (logistic: nothing more released) or ``s^2 H^-1 / n`` for the squared loss (the
        mean squared residual released, a scalar: homoscedastic errors, as statsmodels'
        OLS). None: ``"model"`` for the squared and logistic losses (statsmodels' OLS and
        Logit default), ``"sandwich"`` otherwise (Huber).
    gradient_share, meat_share : float or None
        Shares of ``mu^2`` for the gradients and the variance release (M or s^2); the
        Hessians take the rest. None: 0.7 and 0.1 for the squared loss, 0.4 and 0.15
        otherwise (with ``"model"`` the variance share goes to the others).
    failure_probability : float
        rho of the Hessian noise bound t (utility, not privacy).
    separation : float or None
        The intervals need ``lambda_min(H~) >= separation * t`` (>= 1). None: 2 for the
        squared loss, 1 otherwise.

    Returns
    -------
    PrivateFit
        ``coef`` the last iterate; ``info``: ``covariance`` (the estimate's, in the
        problem's coordinates, intercept column last), ``sampling_covariance``,
        ``noise_covariance``, ``refused`` (the released Hessian did not clear its noise)
        and ``hessian_noise_bound``: post-processings of the releases and public values.
        ``hyperparameters["meat_share"]``: the share of ``mu^2`` spent on intervals alone.
    """
    _check(problem, budget)
    rho = float(failure_probability)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"failure_probability must be in (0, 1), got {failure_probability!r}")
    separation = _separation(problem, separation)
    if not (math.isfinite(separation) and separation >= 1.0):
        raise ValueError(f"separation must be a finite number >= 1, got {separation!r}")
    if covariance is None:
        covariance = DEFAULT_COVARIANCE.get(problem.loss.name, "sandwich")
    plan = schedule(problem.loss.name, steps, gradient_share, meat_share, covariance)
    secure = secure_randomness(rng)
    rng = make_rng(rng)
    n, d = problem.n_samples, problem.n_features
    dh = hessian_frobenius_sensitivity(problem)
    calibration = calibrate_and_charge(_event(plan, dh, secure), budget, "inference")  # before the data
    leaves = [single_release(e) for e in calibration.event.events]
    T = plan.steps
    grad_events = leaves[:T]
    hess_events = leaves[T:T + len(plan.hessian_weights)]
    variance_event = leaves[-1] if plan.meat_weight > 0 else None

    variance = None
    if variance_event is not None:
        def variance(point, scale):
            return _variance_release(problem, point, scale, covariance, variance_event, rng)
    w, H, A, g, t, steps_taken = _newton_steps(problem, np.zeros(d), plan, grad_events, hess_events, rng,
                                               separation, rho, variance)
    spread = steps_taken[-1][-1] if variance is not None else None
    sigmas = [step[2] for step in steps_taken]
    hessian_sigma = hess_events[-1].sigma
    if isinstance(spread, tuple):  # the squared loss's released mean square and its noise std
        mean_square, sd = spread
        if T == 1:
            # released at w_0 = 0: the mean of y^2. The residual mean square at w_1 = A^-1 b~
            # (b~ = -g~) is ``mean y^2 - b~^T A^-1 b~``, plus what the noise adds to
            # ``b~^T A^-1 b~`` on average: ``sigma_g^2 tr(A^-1)`` from b~ and, from H~,
            # ``w^T E[E H^-1 E] w = (sigma_H^2 / 2)(w^T H^-1 w + tr(H^-1) ||w||^2)``
            A_inv = np.linalg.inv(A)
            mean_square = (mean_square + float(w @ g) + sigmas[-1] ** 2 * float(np.trace(A_inv))
                           + 0.5 * hessian_sigma ** 2 * (float(w @ A_inv @ w) + float(np.trace(A_inv)) * float(w @ w)))
        spread = np.asarray(max(mean_square, 0.0) + sd)  # conservative: one noise std above, never 0
    info = _covariances(H, spread, t, n, separation, _noise_covariance(steps_taken, w))
    if spread is not None and np.ndim(spread) == 0:
        info["residual_variance"] = float(spread) * n / max(n - d, 1)  # s^2, for prediction intervals
    return PrivateFit(
        coef=np.array(w, dtype=np.float64),
        privacy_spent=calibration.spent,
        algorithm="newton_inference",
        event=calibration.event,
        hyperparameters={"steps": T, "covariance": covariance, "gradient_share": float(sum(plan.gradient_weights)),
                         "meat_share": float(plan.meat_weight), "failure_probability": rho,
                         "separation": separation},
        info=info,
    )


def _newton_steps(problem, w, plan: InferenceSchedule, grad_events, hess_events, rng, separation: float,
                  rho: float, variance=None, H=None, t: float = 0.0):
    """Noisy Newton steps from the public w (module notes): per step the Hessian (unless
    the plan releases it once and ``H`` is given), at the last step ``variance(w, scale)``
    (the release for the intervals, if any), then the gradient. Returns ``(w, H, A, g,
    t, steps_taken)``: the last iterate, released Hessian, step matrix, released
    gradient, the Hessian's noise bound, and per step ``(A, ridge, gradient noise std,
    Hessian noise std, t, variance release or None)`` for :func:`_noise_covariance`."""
    d = problem.n_features
    A = g = None
    steps_taken = []
    T = plan.steps
    for k in range(T):
        scale = _gradient_scale(problem, w)  # 2 L_k / n, public at the public w_k
        if H is None or not plan.hessian_once:
            hess = hess_events[0 if plan.hessian_once else k]
            H = _psd(_symmetric(release(rng, _upper(_loss_hessian(problem, w)), hess), d))
            t = noise_operator_bound(hess.sigma, d, rho)
        last = k == T - 1
        spread = variance(w, scale) if (last and variance is not None) else None
        g = scale * release(rng, problem.loss_gradient(w) / scale, grad_events[k])
        sigma = scale * grad_events[k].sigma
        clears = float(np.linalg.eigvalsh(H)[0]) >= separation * t
        # damped steps: the ridge is the noise's typical operator norm (sqrt(2 d) sigma_H, the
        # mean bound of noise_operator_bound), not its high-probability bound t, which
        # stalled the first steps far from the optimum (docs/inference.md, the study)
        # (the squared loss's one step keeps t: its ridge only serves a refused fit)
        ridge = 0.0 if (last and clears) else (t if plan.hessian_once else math.sqrt(2.0 * d) * hess.sigma)
        A = H + ridge * np.eye(d) if ridge else H
        steps_taken.append((A, ridge, sigma, hess.sigma, t, spread))
        step = _solve(A, g)
        if not np.all(np.isfinite(w - step)):
            break  # diverged past float64: keep the last finite iterate (post-processing)
        w = w - step
    return w, H, A, g, t, steps_taken


def _variance_release(problem: ERMProblem, w: np.ndarray, scale: float, covariance: str, event, rng):
    """The released spread of the per-example gradients at the public w, as a d x d
    matrix S with sampling covariance ``H^-1 S H^-1 / n``: the sandwich's ``M~`` (PSD
    projected), or for the squared loss's model ``s~^2 I``-free form ``s~^2 H``-free:
    the scalar ``s~^2`` returned as a 0-d array (``s^2 H^-1 / n``)."""
    n, d = problem.n_samples, problem.n_features
    lipschitz = 0.5 * n * scale  # bound on a per-example gradient's norm at w
    if covariance == "sandwich":
        unit = _SQRT2 * lipschitz * lipschitz / n  # Frobenius sensitivity of M
        M = unit * release(rng, _upper(_gradient_outer(problem, w)) / unit, event)
        return _psd(_symmetric(M, d))
    # squared loss, model-based: the mean of s_i r_i^2 in [0, Lr^2], Lr = lipschitz / R
    bound = lipschitz / problem.data_norm
    unit = bound * bound / n
    residuals = problem.margins(w) - np.asarray(problem.y, dtype=np.float64)
    weights = 1.0 if problem.sample_weight is None else problem.sample_weight
    mean_square = float(np.mean(weights * residuals * residuals))
    noisy = unit * float(release(rng, np.array([mean_square / unit]), event)[0])
    return noisy, unit * event.sigma


def _noise_covariance(steps_taken: list, w: np.ndarray, start: np.ndarray | None = None) -> np.ndarray | None:
    """The second moment of ``w_T - w_hat`` that the releases leave, propagated through the
    steps (module notes): ``delta_{k+1} = A_k^-1 (E_k + r_k I) delta_k - A_k^-1 e_k`` with
    ``e_k`` the gradient noise (std sigma_k per coordinate), ``E_k`` the symmetric Hessian
    noise (diagonal std s_k, off-diagonal s_k / sqrt 2: ``E[E S E] = (s_k^2 / 2)(tr(S) I
    + S)``) and ``r_k`` the ridge of a damped step, so

        S_{k+1} = A_k^-1 [sigma_k^2 I + (s_k^2 / 2)(tr(S_k) I + S_k) + r_k^2 S_k] A_k^-1,

    from ``S_0 = w w^T`` (``delta_0 = -w_hat``, taken as the released w) or ``start`` (steps
    from a released pilot: its noise's second moment). Exact for the
    squared loss's one step; for a GLM the linearization at the optimum. None when a step
    matrix is singular."""
    d = w.shape[0]
    S = np.outer(w, w) if start is None else np.array(start, dtype=np.float64)
    eye = np.eye(d)
    for k, (A, ridge, sigma, hess_sigma, t, *_) in enumerate(steps_taken):
        try:
            A_inv = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            return None
        if k == len(steps_taken) - 1 and k > 0:
            # the last step, given its released A: (A - H) is unknown but ||A - H|| <= t
            # except with probability rho, and the fits it lets through are those whose
            # noise raised lambda_min: the moments would undercount it (the study)
            inner = (sigma * sigma + t * t * float(np.linalg.eigvalsh(S)[-1])) * eye + ridge * ridge * S
        else:
            inner = sigma * sigma * eye + 0.5 * hess_sigma * hess_sigma * (float(np.trace(S)) * eye + S) + ridge * ridge * S
        S = A_inv @ inner @ A_inv
        S = 0.5 * (S + S.T)
    return S


def _covariances(H, spread, t: float, n: int, separation: float, noise) -> dict:
    """The covariance of the last iterate from the released H~, the released spread (M~,
    s~^2, or None: the model's ``H^-1 / n``) and the propagated noise (module notes);
    ``refused`` when H~ does not clear ``separation`` times its noise bound."""
    d = H.shape[0]
    lam_min = float(np.linalg.eigvalsh(H)[0])
    refused = not (lam_min >= separation * t and lam_min > 0) or noise is None or not np.all(np.isfinite(noise))
    if refused:
        inf = np.full((d, d), np.inf)
        return {"covariance": inf, "sampling_covariance": inf, "noise_covariance": inf, "refused": True,
                "hessian_noise_bound": float(t)}
    H_inv = np.linalg.inv(H)
    if spread is None:
        sampling = H_inv / n
    elif np.ndim(spread) == 0:
        sampling = float(spread) * H_inv / max(n - d, 1)  # s^2 (X^T X)^-1 with the n - p correction
    else:
        sampling = H_inv @ spread @ H_inv / n
    sampling = 0.5 * (sampling + sampling.T)
    return {"covariance": sampling + noise, "sampling_covariance": sampling, "noise_covariance": noise,
            "refused": False, "hessian_noise_bound": float(t)}


# The curvature per direction the public warning assumes, as a fraction of the largest a
# row of the declared norm allows (beta_phi R^2 / p). On the study's 60 cells (docs/results.md)
# 0.15 warned in every cell where most fits were refused, and in 3 of the 31 where most
# were not (0.3: 3 refused cells missed, no false alarm).
OUTLOOK_CURVATURE = 0.15


def public_outlook(problem: ERMProblem, budget: PrivacyBudget, *, steps: int | None = None,
                   covariance: str | None = None, gradient_share: float | None = None,
                   meat_share: float | None = None, failure_probability: float = 0.05, separation: float | None = None) -> str | None:
    """A warning when, from public inputs only (n, d, the budget, the declared bounds,
    the options), the last Hessian's noise bound ``t`` is so large that the intervals
    will likely be refused or very wide: ``separation * t`` above ``OUTLOOK_CURVATURE``
    times ``beta_phi R^2 / p``. None otherwise. Reads no data."""
    _check(problem, budget)
    covariance = DEFAULT_COVARIANCE.get(problem.loss.name, "sandwich") if covariance is None else covariance
    plan = schedule(problem.loss.name, steps, gradient_share, meat_share, covariance)
    dh = hessian_frobenius_sensitivity(problem)
    calibration = calibrate(_event(plan, dh, False), budget)
    hess = single_release(calibration.event.events[plan.steps + len(plan.hessian_weights) - 1])
    return outlook_message(problem, budget, hess.sigma, _separation(problem, separation), float(failure_probability))


def outlook_message(problem: ERMProblem, budget: PrivacyBudget, hessian_sigma: float, separation: float,
                    failure_probability: float) -> str | None:
    """The public warning of :func:`public_outlook` for a last Hessian released with noise
    std ``hessian_sigma`` (public), or None."""
    d = problem.n_features
    t = noise_operator_bound(hessian_sigma, d, failure_probability)
    curvature = OUTLOOK_CURVATURE * float(problem.constants.loss_smoothness) / d
    if separation * t <= curvature:
        return None
    return (f"at n={problem.n_samples}, {d} coefficients and epsilon={budget.epsilon:g}, the privacy noise of the "
            f"Hessian (bound {t:.3g}) is large against the curvature rows of the declared norm typically have "
            f"(about {curvature / separation:.3g}): the intervals will likely be refused (infinite) or very wide. "
            "Use more rows, a larger epsilon or fewer features.")
