"""The secure path (random_state=None) of dp_sosp and dp_gd_so: every gradient and
Hessian release goes through the floating-point-safe sampler, and the certificates'
noise margins are re-proved for the noise actually drawn."""

import numpy as np
import pytest

from dperm.algorithms import _sosp_subproblems as sub
from dperm.algorithms import registry
from dperm.privacy import events as ev
from dperm.privacy import mechanisms, secure_release
from dperm.privacy.accountant import epsilon
from dperm.privacy.budget import PrivacyBudget
from dperm.privacy.exact_sampling import GeneratorSource
from dperm.problem.erm import ERMProblem


def _data(n=300, d=4):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.sign(X[:, 0] + 0.2)


def _problems():
    X, y = _data()
    return {"dp_sosp": (ERMProblem(X, y, "logistic", ("l2", 0.01)), {"steps": 30}),
            "dp_gd_so": (ERMProblem(X, y, "logistic", None, ("l2_ball", 1.0)), {"steps": 30, "alpha": 0.05})}


def _spy(monkeypatch):
    calls = {"secure": 0, "numpy": 0}
    secure, sample = secure_release.secure_gaussian_release, mechanisms.sample_release
    monkeypatch.setattr(secure_release, "secure_gaussian_release",
                        lambda *a, **k: (calls.__setitem__("secure", calls["secure"] + 1), secure(*a, **k))[1])
    monkeypatch.setattr(mechanisms, "sample_release",
                        lambda *a, **k: (calls.__setitem__("numpy", calls["numpy"] + 1), sample(*a, **k))[1])
    from dperm.algorithms import sosp

    matrix = sosp.symmetric_gaussian_matrix
    monkeypatch.setattr(sosp, "symmetric_gaussian_matrix",
                        lambda *a, **k: (calls.__setitem__("numpy", calls["numpy"] + 1), matrix(*a, **k))[1])
    return calls


@pytest.mark.parametrize("name", ["dp_sosp", "dp_gd_so"])
def test_unseeded_fit_releases_only_through_the_exact_sampler(name, monkeypatch):
    problem, kwargs = _problems()[name]
    calls = _spy(monkeypatch)
    fit = registry.get(name).fit(problem, PrivacyBudget(2.0, 1e-5), rng=None, **kwargs)
    assert calls["secure"] > 0 and calls["numpy"] == 0
    releases = [e for e in _leaves(fit.event) if isinstance(e, ev.GaussianRelease)]
    assert releases and all(r.secure for r in releases)
    assert fit.privacy_spent.epsilon <= 2.0 and epsilon(fit.event, 1e-5) <= 2.0 * (1 + 1e-9)

    calls.update(secure=0, numpy=0)
    seeded = registry.get(name).fit(problem, PrivacyBudget(2.0, 1e-5), rng=5, **kwargs)
    assert calls["secure"] == 0 and calls["numpy"] > 0
    assert not any(r.secure for r in _leaves(seeded.event) if isinstance(r, ev.GaussianRelease))


def _leaves(event):
    for attr in ("events", "event"):
        inner = getattr(event, attr, None)
        if inner is not None:
            for child in (inner if isinstance(inner, (list, tuple)) else [inner]):
                yield from _leaves(child)
            return
    yield event


def test_secure_hessian_release_is_symmetric_on_the_grid(monkeypatch):
    from dperm.algorithms import sosp

    problem, _ = _problems()["dp_sosp"]
    release = ev.gaussian_release(0.05, 0.01, secure=True)
    H = sosp._noisy_hessian(problem, np.zeros(4), release, None)
    np.testing.assert_array_equal(H, H.T)
    grid = secure_release.secure_gaussian_parameters(0.05, 0.01, 10).grid
    units = H / grid
    np.testing.assert_array_equal(units, np.round(units))


@pytest.mark.parametrize("sigma, sensitivity, d", [(0.3, 0.01, 5), (2.0, 1.0, 40), (1e-3, 1e-4, 200)])
def test_secure_margins_widen_the_continuous_ones_by_a_negligible_amount(sigma, sensitivity, d):
    seeded, secure = ev.gaussian_release(sigma, sensitivity), ev.gaussian_release(sigma, sensitivity, secure=True)
    for bound in (sub.release_norm_bound, sub.release_eigenvalue_bound):
        plain, widened = bound(seeded, d, 1e-3), bound(secure, d, 1e-3)
        assert plain < widened <= plain * (1 + 1e-3)
    assert sub.release_norm_bound(seeded, d, 1e-3) == sub.gaussian_norm_bound(sigma, d, 1e-3)
    assert sub.release_eigenvalue_bound(seeded, d, 1e-3) == sub.symmetric_noise_eigenvalue_bound(sigma, d, 1e-3)


def test_secure_margins_hold_at_their_failure_probability():
    """The exact sampler driven by a seeded source: the error norms (vector) and extreme
    eigenvalues (matrix) exceed their bounds at most at the claimed rate (p = 0.2, with a
    binomial allowance of 4 standard deviations)."""
    d, draws, p = 6, 2000, 0.2
    source = GeneratorSource(11)
    vector = ev.gaussian_release(0.1, 0.3, secure=True)
    q = np.linspace(-1.0, 1.0, d) / 3.0
    norms = np.array([np.linalg.norm(secure_release.secure_gaussian_release(q, 0.1, 0.3, source=source) - q)
                      for _ in range(draws)])
    matrix = ev.gaussian_release(0.1, 0.3, secure=True)
    rows, cols = np.triu_indices(d)
    tops = []
    for _ in range(draws // 4):
        E = np.zeros((d, d))
        E[rows, cols] = secure_release.secure_gaussian_release(np.zeros(rows.size), 0.1, 0.3, source=source)
        tops.append(np.linalg.eigvalsh(E + np.triu(E, 1).T)[-1])
    allowance = lambda m: p + 4 * np.sqrt(p * (1 - p) / m)  # noqa: E731
    assert np.mean(norms > sub.release_norm_bound(vector, d, p)) <= allowance(draws)
    assert np.mean(np.array(tops) > sub.release_eigenvalue_bound(matrix, d, p)) <= allowance(draws // 4)
