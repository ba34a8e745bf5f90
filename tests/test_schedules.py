"""Default schedules of dperm.algorithms.schedules: pure functions of public inputs."""

import math

import pytest

from dperm.algorithms.schedules import sgd_epochs_schedule, sgd_paper_ratio_schedule


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
