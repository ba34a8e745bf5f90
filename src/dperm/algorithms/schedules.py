"""Default schedules whose work grows linearly in n: pure functions of public inputs.

Every function here reads only public quantities (n, d, epsilon, delta, declared
constants, hyper-parameters), never the data, so any schedule it returns is a public
choice and costs no privacy.

``sgd_default_schedule``: DP-SGD with a batch of ``round(sqrt(n))`` rows (as the paper-ratio
schedule, after Bassily, Smith, Thakurta 2014) run for at most ``DEFAULT_SGD_EPOCHS`` passes,
i.e. ``T = ceil(E n / b)`` steps and ``E n`` per-example gradients, instead of
``T = n^2 / b^2`` (``n^1.5`` gradients: 1000 epochs at n = 1e6). Fewer steps also need less
noise per step at the same budget. The measured risk cost is in docs/performance.md.

``gd_output_perturbation_capped_steps``: gradient descent with output perturbation (Zhang,
Zheng, Mou, Wang 2017) stopped where the optimization term of its excess-risk bound has
fallen to its noise term (the theorem's T runs 3400-5300 full passes at
mu = 1e-3 with its radius D = L / mu). docs/performance.md has the rule and its risk cost.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_SGD_EPOCHS", "sgd_default_schedule", "sgd_epochs_schedule", "sgd_paper_ratio_schedule", "sgd_steps_for_epochs",
           "GD_OUTPUT_OPTIMIZATION_SHARE", "gd_output_perturbation_theorem_steps", "gd_output_perturbation_capped_steps",
           "initial_gap_bound"]

# dp_sgd's default number of passes over the data (see docs/performance.md for the measured
# risk cost against the paper-ratio schedule on ADULT, BANK and CreditCard).
DEFAULT_SGD_EPOCHS = 64.0


def _check_n(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def sgd_paper_ratio_schedule(n: int) -> tuple[int, int]:
    """(batch, steps) = ``(round(sqrt(n)), ceil(n^2 / b^2))``: the sampling rate q = b/n and
    the step count T keep the paper's ``q sqrt(T) = 1`` (T = n^2 at b = 1); ``b T`` grows
    as ``n^1.5``."""
    n = _check_n(n)
    b = max(1, round(math.sqrt(n)))
    return b, max(1, math.ceil(n * n / (b * b)))


def sgd_epochs_schedule(n: int, epochs: float) -> tuple[int, int]:
    """(batch, steps) = ``(round(sqrt(n)), ceil(epochs n / b))``: ``epochs * n`` per-example
    gradients (rounded up to whole steps), linear in n."""
    n = _check_n(n)
    b = max(1, round(math.sqrt(n)))
    return b, sgd_steps_for_epochs(n, b, epochs)


def sgd_steps_for_epochs(n: int, batch_size: int, epochs: float) -> int:
    """``ceil(epochs n / batch_size)``: the steps of ``epochs`` passes over n rows (at least 1)."""
    n = _check_n(n)
    if not (math.isfinite(epochs) and epochs > 0):
        raise ValueError(f"epochs must be a finite number > 0, got {epochs!r}")
    return max(1, math.ceil(epochs * n / batch_size))


def sgd_default_schedule(n: int, epochs: float = DEFAULT_SGD_EPOCHS, dim: int | None = None) -> tuple[int, int]:
    """dp_sgd's default (batch, steps): the paper-ratio schedule capped at ``epochs`` passes,
    ``b = round(sqrt(n))``, ``T = min(ceil(n^2 / b^2), ceil(epochs n / b))``. Below
    ``n = epochs^2`` (4096 at 64 epochs) it is the paper-ratio schedule; above, ``epochs n``
    gradients instead of ``n^1.5``.

    With the dimension ``dim`` (public) above sqrt(n) the batch is ``min(n, dim)`` rows:
    every step draws ``dim`` normals, and at ``b = round(sqrt(n))`` that noise would cost
    more than the batch's gradients (sparse rows) while fixing the steps' count at
    ``epochs sqrt(n)``; at ``b = dim`` the same epochs take ``epochs n / dim`` steps
    (measured risk cost in docs/performance.md). Data with ``dim <= sqrt(n)`` (ADULT, BANK,
    CreditCard) are unchanged."""
    b, paper_steps = sgd_paper_ratio_schedule(n)
    if dim is not None and int(dim) > b:
        b = min(int(n), int(dim))
        paper_steps = max(1, math.ceil(n * n / (b * b)))
    return b, min(paper_steps, sgd_steps_for_epochs(n, b, epochs))


# --------------------------------------------------------------- full-batch: gd_output_perturbation
# The cap's share: the optimization term of the bound at most this fraction of its noise term
# (1: where the two terms meet; measured against the theorem's T in docs/performance.md).
GD_OUTPUT_OPTIMIZATION_SHARE = 1.0
# Built-in losses with phi >= 0 everywhere (so F* >= 0 and F(0) - F* <= F(0)).
_NONNEGATIVE_LOSSES = frozenset({"logistic", "huberized_hinge", "hinge", "squared", "huber", "sigmoid_squared",
                                  "biweight"})


def gd_output_perturbation_theorem_steps(*, n: int, d: int, lipschitz: float, strong_convexity: float,
                                         smoothness: float, epsilon: float, delta: float, radius: float) -> int:
    """T of Zhang, Zheng, Mou, Wang 2017, Theorem 2 (mu > 0) or Theorem 3 (mu = 0), the Theta
    with constant 1: ``(mu^2 + beta^2) / (mu beta) ln(mu^2 n^2 eps^2 D^2 / (L^2 p))`` or
    ``(beta^2 n^2 eps^2 D^2 / (L^2 p))^(1/3)``, ``p = d^2`` (delta = 0) or ``d ln(1/delta)``."""
    n = _check_n(n)
    mu, beta, L = strong_convexity, smoothness, lipschitz
    dim_term = d * d if delta == 0 else d * math.log(1.0 / delta)
    if mu > 0:  # Theorem 2
        ratio = (mu * n * epsilon * radius) ** 2 / (L * L * dim_term)
        T = (mu * mu + beta * beta) / (mu * beta) * math.log(max(ratio, math.e))
    else:  # Theorem 3
        T = ((beta * n * epsilon * radius) ** 2 / (L * L * dim_term)) ** (1.0 / 3.0)
    return max(1, int(math.ceil(T)))


def initial_gap_bound(problem, w0) -> float:
    """A public bound on ``F(w0) - F*`` for a mu-strongly convex F (mu > 0).

    Always ``||grad F(w0)||^2 / (2 mu) <= (L + l2 ||w0||)^2 / (2 mu)``. At ``w0 = 0`` with a
    built-in loss (all are >= 0, so F* >= 0) and a regularizer vanishing at 0, also
    ``F(0) = mean phi(0, y_i) <= max over the label domain of phi(0, y)`` (log 2 for the
    logistic loss; the endpoints of ``[-label_bound, label_bound]`` for real labels, where
    phi(0, y) is convex in y). Declared bounds only."""
    import numpy as np

    mu, L = problem.strong_convexity, problem.lipschitz
    w0 = np.asarray(w0, dtype=np.float64)
    gap = (L + problem.regularizer.l2 * float(np.linalg.norm(w0))) ** 2 / (2.0 * mu)
    if not w0.any() and problem.loss.name in _NONNEGATIVE_LOSSES and not getattr(problem, "_custom", False):
        labels = np.array([-1.0, 1.0]) if problem.loss.binary else np.array([-1.0, 1.0]) * problem.label_bound
        gap = min(gap, float(np.max(problem.loss.value(np.zeros(2), labels))))
    return gap


def gd_output_perturbation_capped_steps(*, theorem_steps: int, step_size: float, strong_convexity: float,
                                        smoothness: float, initial_gap: float, noise_second_moment,
                                        sensitivity, share: float = GD_OUTPUT_OPTIMIZATION_SHARE) -> int:
    """The smallest T <= ``theorem_steps`` at which the optimization term of the excess-risk
    bound has fallen to ``share`` of its noise term (``theorem_steps`` if none does).

    The bound of the released ``w_T + z`` (Zhang, Zheng, Mou, Wang 2017, proof of Theorem 2,
    with the exact sensitivity) is ``B(T) = (1 - eta mu)^T G_0 + (beta / 2) E||z_T||^2``:
    gradient descent with ``eta <= 1/beta`` contracts ``F - F*`` by ``1 - eta mu`` a step
    from ``G_0 >= F(w_0) - F*``, and the noise, of second moment
    ``noise_second_moment(Delta_T)`` at the sensitivity ``Delta_T = sensitivity(T)`` of T
    steps, costs at most ``beta/2`` times it. The first term falls and the second grows
    with T (to its floor ``Delta_inf = 2 L / (n mu)``); past the returned T, further steps
    can lower the bound by at most ``share`` of the noise floor. All inputs are public."""
    mu, beta = strong_convexity, smoothness
    contraction = 1.0 - step_size * mu

    def settled(T: int) -> bool:
        return contraction**T * initial_gap <= share * 0.5 * beta * noise_second_moment(sensitivity(T))

    if not settled(theorem_steps):
        return int(theorem_steps)
    lo, hi = 1, int(theorem_steps)  # settled(hi) holds: the smallest T in [lo, hi] with settled(T)
    while lo < hi:
        mid = (lo + hi) // 2
        if settled(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo
