"""``rank_counts`` (the quantile draws' counts) searches only the candidates inside the
column's span and the right side only at ties: the counts are those of two full
``searchsorted`` calls on every kind of column."""

import numpy as np
import pytest

from dperm.preprocessing.quantiles import centre_grid, log_grid, rank_counts


def _reference(values, candidates):
    return (np.searchsorted(values, candidates, side="left"), np.searchsorted(values, candidates, side="right"),
            values.size)


_GRID = centre_grid()[0]


@pytest.mark.parametrize("column", [
    "normal", "integers", "empty", "one", "grid_values", "constant", "grid_ends", "beyond", "all_below",
])
@pytest.mark.parametrize("candidates", [_GRID, log_grid(), np.array([-1.0, 0.0, 1.0]), np.array([2.0, 3.0])])
def test_rank_counts_match_two_searches(column, candidates):
    rng = np.random.default_rng(len(column))
    values = {
        "normal": lambda: rng.normal(size=20_000).clip(-1, 1),
        "integers": lambda: rng.integers(-5, 6, size=999).astype(float),  # ties at grid points
        "empty": lambda: np.zeros(0),
        "one": lambda: np.array([3.0]),
        "grid_values": lambda: rng.choice(_GRID, 500),  # every value a candidate
        "constant": lambda: np.full(7, 2.0),
        "grid_ends": lambda: np.concatenate([_GRID[:10], _GRID[-5:]]),  # the first and last candidates
        "beyond": lambda: np.array([-1e12, 1e12]),
        "all_below": lambda: np.full(4, -1e300),
    }[column]()
    values = np.sort(values)
    below, at_or_below, n = rank_counts(values, candidates)
    ref_below, ref_at_or_below, ref_n = _reference(values, candidates)
    assert n == ref_n
    np.testing.assert_array_equal(below, ref_below)
    np.testing.assert_array_equal(at_or_below, ref_at_or_below)
