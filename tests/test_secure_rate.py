"""The exact sampler of the exponential mechanism splits gap x rate into its whole and
fractional parts with unsigned 64-bit arithmetic (issue 33's speed-up): bit for bit the
Python-integer computation it replaced."""

import numpy as np
import pytest

from dperm.privacy.secure_release import _RATE_BITS, _split_rate


@pytest.mark.parametrize("rate", [1, 3, 2**30 - 1, 2**30, 2**59 + 12345, 2**60 - 1, 987654321987654321 % 2**60])
def test_the_split_is_the_python_integer_computation(rate):
    rng = np.random.default_rng(rate % 1000)
    gaps = np.concatenate([rng.integers(0, 2**33, 3000), [0, 1, 2**32, 2**33 - 1], rng.integers(2**33, 2**40, 5)])
    for chunk in (gaps[:-5], gaps):  # the vectorized path, and the fallback for gaps >= 2^33
        whole, frac = _split_rate(chunk, rate)
        assert whole.tolist() == [min((int(g) * rate) >> _RATE_BITS, 2**62) for g in chunk]
        assert frac.tolist() == [(int(g) * rate) & (2**_RATE_BITS - 1) for g in chunk]
