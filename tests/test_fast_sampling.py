"""The compiled exact samplers (dperm.privacy.fast_sampling): their laws against the
analytic pmf and against the vectorized reference sampler, driven by a fixed byte stream
(deterministic), and the independence of a draw from the buffer size (the replay rule)."""

import hashlib
import math

import numpy as np
import pytest
from scipy import stats

from dperm.privacy.exact_sampling import GeneratorSource, SecureRandom, discrete_gaussian
from dperm.privacy.fast_sampling import fast_discrete_gaussian, fast_discrete_laplace

from test_secure_noise import _chi_square_pvalue, _discrete_gaussian_pmf


class FixedStream:
    """A fixed, reproducible byte stream (SHAKE-256 of a key): successive ``bytes`` calls
    read successive pieces of one stream, whatever their sizes."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._offset = 0

    def bytes(self, count: int) -> bytes:
        end = self._offset + count
        out = hashlib.shake_256(self._key).digest(end)[self._offset:]
        self._offset = end
        return out


def _discrete_laplace_pmf(scale: int, support: np.ndarray) -> np.ndarray:
    a = math.exp(-1.0 / scale)
    return (1 - a) / (1 + a) * a ** np.abs(support)


@pytest.mark.parametrize("scale", [1, 3, 7])
def test_discrete_gaussian_law_on_a_fixed_stream(scale):
    samples = fast_discrete_gaussian(FixedStream(b"gauss%d" % scale), scale, 100_000)
    support = np.arange(-8 * scale, 8 * scale + 1)
    assert _chi_square_pvalue(samples, support, _discrete_gaussian_pmf(scale, support)) > 1e-4


def test_discrete_gaussian_chi_square_detects_a_wrong_scale():
    samples = fast_discrete_gaussian(FixedStream(b"wrong"), 5, 100_000)
    support = np.arange(-40, 41)
    assert _chi_square_pvalue(samples, support, _discrete_gaussian_pmf(4, support)) < 1e-10


@pytest.mark.parametrize("scale", [1, 4])
def test_discrete_laplace_law_on_a_fixed_stream(scale):
    samples = fast_discrete_laplace(FixedStream(b"lap%d" % scale), scale, 100_000)
    support = np.arange(-12 * scale, 12 * scale + 1)
    assert _chi_square_pvalue(samples, support, _discrete_laplace_pmf(scale, support)) > 1e-4


def test_same_law_as_the_reference_sampler():
    # two-sample chi-square between the compiled and the vectorized exact samplers
    fast = fast_discrete_gaussian(FixedStream(b"two-sample"), 4, 60_000)
    reference = discrete_gaussian(GeneratorSource(11), 4, 60_000)
    edges = np.arange(-12, 14) - 0.5
    table = np.array([np.histogram(np.clip(s, -12, 12), edges)[0] for s in (fast, reference)])
    assert stats.chi2_contingency(table).pvalue > 1e-4


@pytest.mark.parametrize("scale", [2**20, 2**40])
def test_large_scale_moments(scale):
    n = 50_000
    samples = fast_discrete_gaussian(FixedStream(b"big%d" % scale), scale, n).astype(float)
    assert abs(samples.mean()) < 5 * scale / math.sqrt(n)
    assert abs(samples.var() / scale**2 - 1) < 5 * math.sqrt(2 / n)


@pytest.mark.parametrize("sampler", [fast_discrete_gaussian, fast_discrete_laplace])
@pytest.mark.parametrize("first_words", [1, 5, 97])
def test_a_draw_does_not_depend_on_the_buffer_size(sampler, first_words):
    # a buffer that runs out mid-draw is extended and the draw replayed from its first
    # word: the output is the one the unbounded stream gives
    reference = sampler(FixedStream(b"replay"), 2**20 + 3, 2_000)
    short = sampler(FixedStream(b"replay"), 2**20 + 3, 2_000, first_words=first_words)
    assert np.array_equal(short, reference)


def test_secure_draws_are_fresh():
    source = SecureRandom()
    assert not np.array_equal(fast_discrete_gaussian(source, 2**20, 50), fast_discrete_gaussian(source, 2**20, 50))


@pytest.mark.parametrize("sampler", [fast_discrete_gaussian, fast_discrete_laplace])
@pytest.mark.parametrize("scale", [0, 2**48])
def test_refuses_bad_scale(sampler, scale):
    with pytest.raises(ValueError, match="scale must be an integer"):
        sampler(SecureRandom(), scale, 10)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [2, 9])
def test_discrete_gaussian_law_from_the_os(scale):
    samples = fast_discrete_gaussian(SecureRandom(), scale, 2_000_000)
    support = np.arange(-8 * scale, 8 * scale + 1)
    assert _chi_square_pvalue(samples, support, _discrete_gaussian_pmf(scale, support)) > 1e-6


def test_short_releases_take_the_reference_sampler_and_long_ones_the_compiled(monkeypatch):
    """A short vector (a full-batch fit's release) skips loading the compiled kernel (about
    a quarter of a second a process); both samplers draw the same law (above)."""
    from dperm.privacy import exact_sampling, fast_sampling
    from dperm.privacy.secure_release import secure_gaussian_release, secure_laplace_release

    calls = []
    for module, name in ((exact_sampling, "discrete_gaussian"), (exact_sampling, "discrete_laplace"),
                         (fast_sampling, "fast_discrete_gaussian"), (fast_sampling, "fast_discrete_laplace")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _o=original, _n=name, **k: calls.append(_n) or _o(*a, **k))
    secure_gaussian_release(np.zeros(fast_sampling.SMALL_DRAWS), 1.0, 1.0, source=GeneratorSource(0))
    secure_laplace_release(np.zeros(3), 1.0, 1.0, source=GeneratorSource(0))
    assert calls == ["discrete_gaussian", "discrete_laplace"]
    calls.clear()
    secure_gaussian_release(np.zeros(fast_sampling.SMALL_DRAWS + 1), 1.0, 1.0, source=GeneratorSource(0))
    assert calls == ["fast_discrete_gaussian"]


@pytest.mark.parametrize("scale", [2**20, 2**47])
def test_the_reference_sampler_at_the_scales_of_short_releases(scale):
    """Short releases reach the reference sampler with the scales of the secure grid (S up
    to about 2^47 for objective perturbation's internal noise): its second moment there."""
    samples = discrete_gaussian(GeneratorSource(5), scale, 40_000).astype(float)
    assert abs(np.mean(samples ** 2) / scale**2 - 1.0) < 5 * math.sqrt(2.0 / 40_000)
