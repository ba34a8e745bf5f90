"""Floating-point-safe noise: the exact samplers' laws, the grid releases, the rounding's
sensitivity bound and the accounting of the discrete Gaussian against the continuous one.

Samplers are driven by a seeded GeneratorSource, so every statistical test here is
deterministic; tolerances come from the distributions (binomial / chi-square)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import log_ndtr

from dperm.privacy.gaussian_dp import analytic_gaussian_sigma, gaussian_dp_delta
from dperm.privacy.exact_sampling import (
    GeneratorSource,
    SecureRandom,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    geometric_count,
)
from dperm.privacy.secure_release import (
    GRID_NOISE_BITS,
    GRID_SENSITIVITY_BITS,
    SMOOTHING,
    TAU_PER_COORDINATE,
    effective_sensitivity,
    release_grid,
    secure_exponential_mechanism,
    secure_gaussian_epsilon,
    secure_gaussian_guarantee,
    secure_gaussian_parameters,
    secure_gaussian_release,
    secure_gaussian_sigma,
    secure_laplace_parameters,
    secure_laplace_release,
    secure_sensitivity,
)
from dperm.privacy.secure_release import _round_to_grid


def _chi_square_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit on ``support`` plus one bin for everything else."""
    counts = np.array([(samples == k).sum() for k in support] + [0])
    counts[-1] = samples.size - counts[:-1].sum()
    expected = np.append(pmf, max(0.0, 1.0 - pmf.sum())) * samples.size
    keep = expected >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    expect = np.append(expected[keep], expected[~keep].sum())
    if expect[-1] == 0:
        observed, expect = observed[:-1], expect[:-1]
    return stats.chisquare(observed, expect * observed.sum() / expect.sum()).pvalue


def _discrete_gaussian_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    wide = np.arange(-60 * math.ceil(scale) - 60, 60 * math.ceil(scale) + 61)
    norm = np.exp(-wide.astype(float) ** 2 / (2 * scale**2)).sum()
    return np.exp(-support.astype(float) ** 2 / (2 * scale**2)) / norm


# ----------------------------------------------------------------------------- sources
def test_secure_random_is_uniform_without_modulo_bias():
    # m = 3 * 2^60: a bare "w mod m" would put 6/16 of the mass below m/3 instead of 1/3
    m = 3 * 2**60
    draws = SecureRandom().integers(np.full(100_000, m, dtype=np.int64))
    share = (draws < 2**60).mean()
    assert abs(share - 1 / 3) < 5 * math.sqrt((1 / 3) * (2 / 3) / draws.size)
    assert draws.min() >= 0 and draws.max() < m


def test_secure_random_small_ranges_chi_square():
    draws = SecureRandom(buffer_bytes=64).integers(np.full(70_000, 7, dtype=np.int64))
    assert stats.chisquare(np.bincount(draws, minlength=7)).pvalue > 1e-6


def test_secure_random_draws_differ_and_seeded_source_replays():
    high = np.full(50, 2**40, dtype=np.int64)
    assert not np.array_equal(SecureRandom().integers(high), SecureRandom().integers(high))
    assert np.array_equal(GeneratorSource(7).integers(high), GeneratorSource(7).integers(high))


@pytest.mark.parametrize("source", [SecureRandom(), GeneratorSource(0)])
@pytest.mark.parametrize("high", [0, -1, 2**62])
def test_sources_refuse_bad_ranges(source, high):
    with pytest.raises(ValueError, match="uniform ranges"):
        source.integers(np.array([high], dtype=np.int64))


def test_secure_random_refuses_bad_buffer():
    with pytest.raises(ValueError, match="multiple of 8"):
        SecureRandom(buffer_bytes=12)


# ----------------------------------------------------------------------------- samplers
@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (3, 2), (7, 2), (5, 97)])
def test_bernoulli_exp_frequency(num, den):
    n = 200_000
    hits = bernoulli_exp(GeneratorSource(num * 100 + den), np.full(n, num), den).mean()
    p = math.exp(-num / den)
    assert abs(hits - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_bernoulli_exp_refuses_negative_gamma():
    with pytest.raises(ValueError, match="num >= 0"):
        bernoulli_exp(GeneratorSource(0), np.array([-1]), 2)


def test_exp_minus_one_runs_are_independent():
    # four trials come from the mixed-radix digits of one uniform word: their 16 joint
    # patterns must follow the product law
    from dperm.privacy.exact_sampling import _exp_minus_one_runs

    runs = _exp_minus_one_runs(GeneratorSource(8), 100_000)
    patterns = runs @ np.array([1, 2, 4, 8])
    p = math.exp(-1)
    ones = np.array([bin(k).count("1") for k in range(16)])
    expected = p**ones * (1 - p) ** (4 - ones) * runs.shape[0]
    assert stats.chisquare(np.bincount(patterns, minlength=16), expected).pvalue > 1e-4


def test_geometric_count_law():
    samples = geometric_count(GeneratorSource(1), 100_000)
    support = np.arange(12)
    pmf = (1 - math.exp(-1)) * np.exp(-support.astype(float))
    assert _chi_square_pvalue(samples, support, pmf) > 1e-4


@pytest.mark.parametrize("scale", [1, 3, 10])
def test_discrete_laplace_law(scale):
    samples = discrete_laplace(GeneratorSource(scale), scale, 100_000)
    support = np.arange(-12 * scale, 12 * scale + 1)
    decay = math.exp(-1 / scale)
    pmf = (1 - decay) / (1 + decay) * decay ** np.abs(support)
    assert _chi_square_pvalue(samples, support, pmf) > 1e-4


@pytest.mark.parametrize("scale", [1, 2, 5])
def test_discrete_gaussian_law(scale):
    samples = discrete_gaussian(GeneratorSource(10 + scale), scale, 100_000)
    support = np.arange(-8 * scale, 8 * scale + 1)
    assert _chi_square_pvalue(samples, support, _discrete_gaussian_pmf(scale, support)) > 1e-4


def test_discrete_gaussian_chi_square_detects_a_wrong_scale():
    # the test above can fail: samples of scale 5 do not pass as scale 4
    samples = discrete_gaussian(GeneratorSource(15), 5, 100_000)
    support = np.arange(-40, 41)
    assert _chi_square_pvalue(samples, support, _discrete_gaussian_pmf(4, support)) < 1e-10


@pytest.mark.parametrize("scale", [2**20, 2**40])
def test_discrete_gaussian_moments_at_large_scale(scale):
    # for S >= 2 the variance of N_Z(0, S^2) is S^2 to within 1e-30 relative (Poisson
    # summation); the sample variance's relative sd is sqrt(2/n), the mean's sd S/sqrt(n)
    n = 100_000
    samples = discrete_gaussian(GeneratorSource(scale % 1000), scale, n).astype(float)
    assert abs(samples.mean()) < 5 * scale / math.sqrt(n)
    assert abs(samples.var() / scale**2 - 1) < 5 * math.sqrt(2 / n)
    kurtosis = stats.kurtosis(samples)  # 0 for a Gaussian; sd sqrt(24/n)
    assert abs(kurtosis) < 5 * math.sqrt(24 / n)


@pytest.mark.parametrize("sampler", [discrete_laplace, discrete_gaussian])
@pytest.mark.parametrize("scale", [0, 2**48])
def test_samplers_refuse_bad_scale(sampler, scale):
    with pytest.raises(ValueError, match="scale must be an integer"):
        sampler(GeneratorSource(0), scale, 10)


# ------------------------------------------------------------------------- grid, release
@pytest.mark.parametrize("dim, sigma", [(1, 0.5), (100, 3.73), (10_000, 40.0), (100, 1e-6)])
def test_grid_is_a_power_of_two_within_its_bounds(dim, sigma):
    g = release_grid(1.0, dim, sigma)
    mantissa, _ = math.frexp(g)
    assert mantissa == 0.5
    assert Fraction(g) * Fraction(math.sqrt(dim)) <= Fraction(1, 2**GRID_SENSITIVITY_BITS)
    assert g <= sigma / 2**GRID_NOISE_BITS
    assert 2 * g > min(1.0 / (2**GRID_SENSITIVITY_BITS * math.sqrt(dim)), sigma / 2**GRID_NOISE_BITS)


def test_gaussian_release_is_exactly_on_the_grid():
    values = np.random.default_rng(0).normal(scale=50.0, size=1000)
    params = secure_gaussian_parameters(2.0, 1.0, values.size)
    out = secure_gaussian_release(values, 2.0, 1.0, source=GeneratorSource(3))
    steps = out / params.grid  # exact: power-of-two scaling
    assert np.array_equal(steps, np.rint(steps))
    assert np.array_equal(out, np.rint(steps) * params.grid)
    # the noise is the discrete Gaussian of std g S ~ sigma
    noise = out - values
    assert abs(noise.std() / 2.0 - 1) < 5 * math.sqrt(1 / (2 * values.size))


def test_gaussian_parameters_cover_the_smoothing():
    params = secure_gaussian_parameters(3.73, 1.0, 100)
    s = params.noise_multiple
    assert s * s >= (Fraction(3.73) / Fraction(params.grid)) ** 2 + SMOOTHING**2
    assert (s - 1) ** 2 < (Fraction(3.73) / Fraction(params.grid)) ** 2 + SMOOTHING**2
    assert params.effective_sensitivity <= secure_sensitivity(1.0)
    # the std actually drawn, g S, overshoots sigma by at most a relative 1e-6
    assert 3.73 <= params.grid * s <= 3.73 * (1 + 1e-6)


def test_release_is_a_function_of_the_rounded_value_only():
    # two inputs that round to the same grid point give identically distributed (here:
    # identical, same seed) outputs: the low-order bits of the input are gone
    params = secure_gaussian_parameters(1.0, 1.0, 3)
    base = np.array([0.3, -7.25, 1e3])
    nearby = base + params.grid * np.array([0.3, -0.2, 0.4])
    first = secure_gaussian_release(base, 1.0, 1.0, source=GeneratorSource(5))
    second = secure_gaussian_release(nearby, 1.0, 1.0, source=GeneratorSource(5))
    assert np.array_equal(first, second)


def test_huge_values_are_clipped_not_refused():
    out = secure_gaussian_release(np.array([1e300, -1e300, 0.0]), 1.0, 1.0, source=GeneratorSource(0))
    assert np.isfinite(out).all()


@pytest.mark.parametrize("values", [[np.nan, 1.0], [np.inf], [], [[1.0]]])
def test_releases_refuse_bad_values(values):
    with pytest.raises(ValueError, match="values must"):
        secure_gaussian_release(np.array(values), 1.0, 1.0, source=GeneratorSource(0))
    with pytest.raises(ValueError, match="values must"):
        secure_laplace_release(np.array(values), 1.0, 1.0, source=GeneratorSource(0))


@pytest.mark.parametrize("sigma, sensitivity", [(0.0, 1.0), (-1.0, 1.0), (np.nan, 1.0), (1.0, 0.0), (1.0, np.inf)])
def test_gaussian_release_refuses_bad_scales(sigma, sensitivity):
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        secure_gaussian_release(np.zeros(3), sigma, sensitivity)


def test_gaussian_release_refuses_a_noise_beyond_the_grid_range():
    with pytest.raises(ValueError, match="2\\^36"):
        secure_gaussian_parameters(1e12, 1.0, 10_000)


@pytest.mark.parametrize("dim", [0, -3, 2.5, True])
def test_refuses_bad_dimension(dim):
    with pytest.raises(ValueError, match="dim must be an integer"):
        release_grid(1.0, dim, 1.0)


# ------------------------------------------------------------- sensitivity under rounding
@settings(max_examples=200, deadline=None)
@given(
    dim=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    magnitude=st.floats(1e-3, 1e6),
    sensitivity=st.floats(1e-4, 1e4),
    sigma=st.floats(1e-3, 1e3),
    fraction=st.floats(0.0, 1.0),
)
def test_rounding_moves_neighbours_by_at_most_the_effective_sensitivity(dim, seed, magnitude, sensitivity, sigma, fraction):
    rng = np.random.default_rng(seed)
    q = rng.normal(scale=magnitude, size=dim)
    direction = rng.normal(size=dim)
    q_prime = q + fraction * sensitivity * direction / np.linalg.norm(direction)
    if np.linalg.norm(q - q_prime) > sensitivity:  # float rounding of the construction
        return
    grid = release_grid(sensitivity, dim, sigma)
    a = _round_to_grid(q, grid)
    b = _round_to_grid(q_prime, grid)
    moved = math.sqrt(sum(Fraction(int(x) - int(y)) ** 2 for x, y in zip(a, b))) * grid
    bound = effective_sensitivity(sensitivity, dim, grid)
    assert moved <= bound * (1 + 1e-12)
    assert bound <= secure_sensitivity(sensitivity)


def test_rounding_worst_case_reaches_the_grid_term():
    # coordinates just below and just above a half step: the rounding adds a full step each
    dim, sensitivity = 4, 1.0
    grid = release_grid(sensitivity, dim, 1.0)
    q = np.full(dim, 0.5 * grid * (1 - 2**-20))
    q_prime = np.full(dim, 0.5 * grid * (1 + 2**-20))
    moved = np.linalg.norm((_round_to_grid(q, grid) - _round_to_grid(q_prime, grid)) * grid)
    assert moved == pytest.approx(grid * math.sqrt(dim))


# ------------------------------------------------------------------ Gaussian accounting
def _discrete_delta(scale: float, shift: int, epsilon: float) -> float:
    """Exact hockey-stick divergence between N_Z(0, S^2) and N_Z(shift, S^2) at epsilon."""
    support = np.arange(-80 * math.ceil(scale) - 80, 80 * math.ceil(scale) + 81)
    log_norm = np.logaddexp.reduce(-support.astype(float) ** 2 / (2 * scale**2))
    log_p = -support.astype(float) ** 2 / (2 * scale**2) - log_norm
    log_q = -(support - shift).astype(float) ** 2 / (2 * scale**2) - log_norm
    return float(np.clip(np.exp(log_p) - np.exp(epsilon + log_q), 0, None).sum())


def test_discrete_gaussian_is_not_dominated_by_the_continuous_one_at_small_scale():
    # why the accounting smooths: at S = 1 and sensitivity 1 the discrete Gaussian's
    # total variation (delta at eps = 0) exceeds the continuous Gaussian's
    assert _discrete_delta(1.0, 1, 0.0) > gaussian_dp_delta(1.0, 0.0) + 0.01
    assert _discrete_delta(0.5, 1, 0.0) == pytest.approx(0.7866, abs=1e-4)
    assert gaussian_dp_delta(2.0, 0.0) == pytest.approx(0.6827, abs=1e-4)


@pytest.mark.parametrize("scale, smoothing", [(1.0, 0.8), (2.0, 1.0), (3.0, 1.5), (3.0, 2.5)])
@pytest.mark.parametrize("shift", [1, 2, 5])
def test_smoothing_bound_holds_exactly_in_one_dimension(scale, smoothing, shift):
    # the module's claim with a small smoothing r (so that tau is visible):
    # delta_discrete(eps + 2 tau) <= e^tau delta_continuous(shift / sqrt(S^2 - r^2), eps)
    eta = 2 * sum(math.exp(-2 * math.pi**2 * smoothing**2 * m * m) for m in range(1, 20))
    tau = math.log((1 + eta) / (1 - eta))
    mu = shift / math.sqrt(scale**2 - smoothing**2)
    for epsilon in np.linspace(0.0, 6.0, 61):
        bound = math.exp(tau) * gaussian_dp_delta(mu, epsilon)
        assert _discrete_delta(scale, shift, epsilon + 2 * tau) <= bound + 1e-13


def test_tau_constant_bounds_the_poisson_summation_tail():
    eta = 2 * sum(math.exp(-2 * math.pi**2 * SMOOTHING**2 * m * m) for m in range(1, 10))
    assert math.log1p(eta) - math.log1p(-eta) <= TAU_PER_COORDINATE or eta < 1e-300
    assert 2 * eta <= TAU_PER_COORDINATE < 1e-76


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-5), (0.1, 1e-6), (8.0, 1e-5)])
def test_secure_sigma_costs_only_the_rounding_factor(epsilon, delta):
    sensitivity = secure_sensitivity(1.0)
    sigma = secure_gaussian_sigma(epsilon, delta, sensitivity)
    assert sigma / analytic_gaussian_sigma(epsilon, delta, 1.0) == pytest.approx(1 + 2**-12, rel=1e-9)
    assert secure_gaussian_epsilon(sigma, sensitivity, delta) <= epsilon


def test_secure_sigma_over_steps_matches_gaussian_dp():
    sensitivity = secure_sensitivity(1.0)
    sigma = secure_gaussian_sigma(1.0, 1e-5, sensitivity, steps=100)
    assert sigma == pytest.approx(10 * 3.7306 * (1 + 2**-12), rel=1e-4)
    assert secure_gaussian_epsilon(sigma, sensitivity, 1e-5, steps=100) <= 1.0


def test_guarantee_rounds_up():
    epsilon, delta = secure_gaussian_guarantee(1.0, 1e-5, releases=10**6)
    assert epsilon > 1.0 and epsilon == pytest.approx(1.0, rel=1e-15)
    assert delta > 1e-5 and delta == pytest.approx(1e-5, rel=1e-15)
    assert secure_gaussian_guarantee(1.0, 0.0)[1] > 0.0


@pytest.mark.parametrize("steps", [0, 1.5, True, 2**63])
def test_accounting_refuses_bad_steps(steps):
    with pytest.raises(ValueError, match="steps"):
        secure_gaussian_sigma(1.0, 1e-5, 1.0, steps=steps)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5])
def test_accounting_refuses_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        secure_gaussian_epsilon(4.0, 1.0, delta)


# --------------------------------------------------------------------------- pure DP
@pytest.mark.parametrize("dim, epsilon", [(1, 1.0), (100, 1.0), (1000, 0.1)])
def test_laplace_parameters_certify_epsilon_exactly(dim, epsilon):
    params = secure_laplace_parameters(epsilon, 1.0, dim)
    g, t = Fraction(params.grid), params.scale_multiple
    # worst L1 distance between rounded neighbours, in grid steps, over the scale t
    exact = math.isqrt(dim) ** 2 == dim
    root_up = Fraction(math.isqrt(dim) if exact else math.nextafter(math.sqrt(dim), math.inf))
    assert root_up * (1 + g * root_up) / (g * t) <= Fraction(params.epsilon) <= Fraction(epsilon)
    assert params.epsilon > epsilon * (1 - 1e-5)
    # cost against the L2-Laplace mechanism: per-coordinate std sqrt(2d) vs sqrt(d+1)
    l2_laplace_std = math.sqrt(dim + 1) / epsilon
    assert params.coordinate_std / l2_laplace_std == pytest.approx(math.sqrt(2 * dim / (dim + 1)), rel=2e-3)


def test_laplace_release_is_on_the_grid_with_the_stated_spread():
    values = np.linspace(-3, 3, 2000)
    params = secure_laplace_parameters(2.0, 1.0, values.size)
    out = secure_laplace_release(values, 2.0, 1.0, source=GeneratorSource(11))
    assert np.array_equal(out / params.grid, np.rint(out / params.grid))
    spread = (out - values).std()
    assert abs(spread / params.coordinate_std - 1) < 5 * math.sqrt(5 / (4 * values.size))


# --------------------------------------------------------------- exponential mechanism
def test_exponential_mechanism_frequencies():
    scores = np.array([0.0, 1.0, 2.0, -np.inf, 1.5])
    source = GeneratorSource(21)
    n = 4_000
    picks = np.bincount([secure_exponential_mechanism(scores, 2.0, 1.0, source=source) for _ in range(n)],
                        minlength=scores.size)
    assert picks[3] == 0
    h = 2.0**-GRID_SENSITIVITY_BITS
    rate = 2.0 * h / (2 * (1 + h))
    weights = np.exp(rate * np.rint(np.where(np.isfinite(scores), scores, 0) / h))
    weights[3] = 0
    expected = weights / weights.sum() * n
    assert stats.chisquare(picks[[0, 1, 2, 4]], expected[[0, 1, 2, 4]]).pvalue > 1e-4


def test_exponential_mechanism_frequencies_over_growing_batches():
    """A spread-out law over 3000 candidates needs about 1500 proposals a draw, so draws
    take several rounds of growing batches (1024, 4096, ...): the law over rounds is
    still the exact one (the proposals, their scores' whole and fractional parts and the
    acceptances must stay aligned when the batch size changes)."""
    scores = np.full(3000, -8.0)
    scores[:3] = [0.0, -0.5, -1.0]
    source = GeneratorSource(5)
    n = 2_000
    picks = np.array([secure_exponential_mechanism(scores, 2.0, 1.0, source=source) for _ in range(n)])
    h = 2.0**-GRID_SENSITIVITY_BITS
    rate = 2.0 * h / (2 * (1 + h))
    weights = np.exp(rate * np.rint(scores / h))
    groups = np.array([weights[0], weights[1], weights[2], weights[3:].sum()])
    observed = np.array([np.sum(picks == 0), np.sum(picks == 1), np.sum(picks == 2), np.sum(picks >= 3)])
    assert stats.chisquare(observed, groups / groups.sum() * n).pvalue > 1e-4


def test_exponential_mechanism_monotone_uses_the_full_rate():
    source = GeneratorSource(2)
    n = 4_000
    picks = np.bincount([secure_exponential_mechanism([0.0, 1.0], 1.0, 1.0, monotone=True, source=source)
                         for _ in range(n)], minlength=2)
    p = 1 / (1 + math.exp(-1.0 / (1 + 2.0**-12)))
    assert abs(picks[1] / n - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_exponential_mechanism_handles_huge_score_gaps():
    assert secure_exponential_mechanism([0.0, 1e200, -1e200], 1.0, 1.0, source=GeneratorSource(0)) == 1


@pytest.mark.parametrize("scores, match", [([], "non-empty"), ([np.nan], "NaN"), ([np.inf, 0.0], "NaN"),
                                           ([-np.inf], "finite")])
def test_exponential_mechanism_refuses_bad_scores(scores, match):
    with pytest.raises(ValueError, match=match):
        secure_exponential_mechanism(scores, 1.0, 1.0)
