"""Default schedules of dperm.algorithms.schedules: pure functions of public inputs."""

import math

import numpy as np
import pytest

from dperm.algorithms.schedules import sgd_default_schedule, sgd_epochs_schedule, sgd_paper_ratio_schedule


@pytest.mark.parametrize("n", [1, 2, 10, 32561, 10**6, 4 * 10**6])
def test_paper_ratio_keeps_q_sqrt_t_at_one(n):
    b, T = sgd_paper_ratio_schedule(n)
    assert b == max(1, round(math.sqrt(n)))
    assert (b / n) * math.sqrt(T) >= 1.0  # the smallest such T
    assert T == 1 or (b / n) * math.sqrt(T - 1) < 1.0


@pytest.mark.parametrize("n", [1, 2, 10, 32561, 10**6, 4 * 10**6])
@pytest.mark.parametrize("epochs", [0.5, 1, 16, 64])
def test_epochs_schedule_costs_epochs_times_n_gradients(n, epochs):
    b, T = sgd_epochs_schedule(n, epochs)
    assert b == max(1, round(math.sqrt(n)))
    assert epochs * n <= b * T < epochs * n + b  # whole steps, at most one batch over
    assert T >= 1


def test_epochs_schedule_is_linear_where_the_paper_ratio_is_not():
    small, large = 10**4, 10**6
    work = lambda schedule, n: schedule(n)[0] * schedule(n)[1]  # noqa: E731
    assert work(lambda n: sgd_epochs_schedule(n, 16), large) / work(lambda n: sgd_epochs_schedule(n, 16), small) == \
        pytest.approx(100, rel=0.01)
    assert work(sgd_paper_ratio_schedule, large) / work(sgd_paper_ratio_schedule, small) == pytest.approx(1000, rel=0.01)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError, match="n must be"):
        sgd_epochs_schedule(bad, 1)


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan])
def test_bad_epochs_are_refused(bad):
    with pytest.raises(ValueError, match="epochs"):
        sgd_epochs_schedule(100, bad)


@pytest.mark.parametrize("n", [1, 100, 4096, 4097, 32561, 10**6])
def test_default_schedule_is_the_paper_ratio_capped_at_64_epochs(n):
    b, T = sgd_default_schedule(n)
    paper_b, paper_T = sgd_paper_ratio_schedule(n)
    assert b == paper_b
    assert T == min(paper_T, sgd_epochs_schedule(n, 64)[1])
    assert b * T <= 64 * n + b
    if n >= 32561:
        assert T < paper_T


def test_dp_sgd_defaults_to_the_epochs_schedule_and_keeps_the_paper_ratio_for_a_given_batch():
    import numpy as np

    from dperm.algorithms.sgd import dp_sgd
    from dperm.privacy.budget import PrivacyBudget
    from dperm.problem import ERMProblem

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    problem = ERMProblem(X, np.where(X[:, 0] > 0, 1.0, -1.0), "logistic", ("l2", 0.1))
    budget = PrivacyBudget(1.0, 1e-5)
    fit = dp_sgd(problem, budget, rng=1)
    assert (fit.hyperparameters["batch_size"], fit.hyperparameters["steps"]) == sgd_default_schedule(400)
    fit = dp_sgd(problem, budget, rng=1, batch_size=40)
    assert fit.hyperparameters["steps"] == 100  # 400^2 / 40^2: the paper's ratio at the given batch


def test_default_batch_grows_to_the_dimension_above_sqrt_n():
    # unchanged when d <= sqrt(n) (ADULT: n = 32561, d = 110 with the intercept)
    assert sgd_default_schedule(32561, dim=110) == sgd_default_schedule(32561)
    b, T = sgd_default_schedule(10**6, dim=10**4)
    assert b == 10**4 and T == 64 * 10**6 // 10**4
    assert sgd_default_schedule(500, dim=10**4)[0] == 500  # at most n rows
    assert sgd_default_schedule(10**6, dim=2000) == (2000, 32000)


def test_dp_sgd_takes_the_wide_batch_for_high_dimensional_data():
    import scipy.sparse as sp

    from dperm.algorithms import get
    from dperm.privacy import PrivacyBudget
    from dperm.problem import ERMProblem

    rng = np.random.default_rng(0)
    X = sp.random(400, 60, density=0.05, random_state=0, format="csr")
    y = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    fit = get("dp_sgd").fit(ERMProblem(X, y, "logistic", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5), rng=0)
    assert (fit.hyperparameters["batch_size"], fit.hyperparameters["steps"]) == sgd_default_schedule(400, dim=60)
    assert fit.hyperparameters["batch_size"] == 60
