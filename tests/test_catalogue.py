"""Cross-cutting checks over the whole catalogue: every algorithm accepts dense float64,
float32 and CSR input and gives the same answer on dense and CSR data with one seed;
every algorithm reports a budget no larger than the one asked for; metadata is complete."""

import numpy as np
import pytest
import scipy.sparse as sp

import dperm
from dperm.algorithms import get, names
from dperm.privacy import PrivacyBudget
from dperm.problem import ERMProblem

# A problem (loss, regularizer, constraint) and a budget each algorithm's assumptions accept.
SPECS = {
    "output_perturbation": ("logistic", ("l2", 0.1), None, 1e-5),
    "gd_output_perturbation": ("logistic", ("l2", 0.1), None, 1e-5),
    "objective_perturbation": ("logistic", ("l2", 0.1), None, 1e-5),
    "noisy_gd": ("logistic", ("l2", 0.1), None, 1e-5),
    "dp_sgd": ("logistic", ("l2", 0.1), None, 1e-5),
    "dp_svrg": ("logistic", ("l2", 0.1), None, 1e-5),
    "dp_svrg_pp": ("logistic", None, None, 1e-5),
    "dp_accmd": ("logistic", None, ("l1_ball", 2.0), 1e-5),
    "exponential_mechanism": ("logistic", None, ("l2_ball", 1.0), 0.0),
    "localization": ("logistic", ("l2", 0.5), None, 0.0),
    "dp_gd": ("sigmoid_squared", ("l2", 0.01), None, 1e-5),
    "rrpsgd": ("sigmoid_squared", ("l2", 0.01), None, 1e-5),
    "dp_gld": ("sigmoid_squared", ("l2", 0.1), None, 1e-5),
    "dp_fw_l2": ("biweight", None, ("l2_ball", 1.0), 1e-5),
    "dp_fw_l1": ("biweight", None, ("l1_ball", 1.0), 1e-5),
    "dp_sosp": ("biweight", ("l2", 0.01), None, 1e-5),
    "dp_gd_so": ("biweight", None, ("l2_ball", 1.0), 1e-5),
    "sufficient_statistics": ("squared", ("l2", 0.1), None, 1e-5),
    "adassp": ("squared", None, None, 1e-5),
    "dp_newton": ("logistic", ("l2", 0.1), None, 1e-5),
}


def test_every_registered_algorithm_is_covered_and_documented():
    assert set(names()) == set(SPECS)
    text = open("docs/algorithms.md").read()
    for info in dperm.algorithms.list():
        assert info.source and info.paper and info.guarantee and info.summary
        assert info.name in text, f"{info.name} missing from docs/algorithms.md"


def data(loss, n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(1.0, 2.0, size=(n, 1))
    X[rng.random((n, d)) < 0.2] = 0.0  # some structural zeros for the CSR copy
    if loss == "logistic":
        y = np.where(X @ np.array([2.0, -1.0])[:d] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    elif loss == "sigmoid_squared":
        y = (X[:, 0] > 0).astype(float)
    else:
        y = np.clip(X @ np.array([0.5, -0.3])[:d] + 0.05 * rng.normal(size=n), -1, 1)
    return X, y


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_dense_csr_and_float32_agree(name):
    loss, reg, constraint, delta = SPECS[name]
    X, y = data(loss)
    budget = PrivacyBudget(2.0, delta)
    fits = {}
    for kind, matrix in (("dense", X), ("csr", sp.csr_matrix(X)), ("float32", X.astype(np.float32))):
        problem = ERMProblem(matrix, y, loss, reg, constraint)
        fit = get(name).fit(problem, budget, rng=7)
        assert fit.coef.shape == (2,) and np.all(np.isfinite(fit.coef))
        assert fit.privacy_spent.epsilon <= 2.0 * (1 + 1e-9) and fit.privacy_spent.delta <= delta
        assert fit.algorithm == name
        fits[kind] = fit.coef
    np.testing.assert_allclose(fits["csr"], fits["dense"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fits["float32"], fits["dense"], rtol=1e-2, atol=1e-2)


def _leaf_releases(event):
    """The release events at the leaves of an event tree."""
    from dperm.privacy import events as ev

    children = getattr(event, "events", None)
    if children is not None:
        for child in children:
            yield from _leaf_releases(child)
        return
    inner = getattr(event, "event", None)
    if inner is not None and not isinstance(event, ev.GaussianRelease):
        yield from _leaf_releases(inner)
        return
    yield event


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_every_unseeded_fit_releases_only_through_secure_mechanisms(name, pure):
    """The floating-point defence covers the whole catalogue: with random_state None,
    every release of every algorithm is a secure Gaussian, a secure (discrete) Laplace,
    an exact exponential-mechanism draw, or objective perturbation's exactly coupled
    noise; never a NumPy L2-Laplace or a non-secure Gaussian."""
    from dperm.privacy import events as ev

    loss, reg, constraint, delta = SPECS[name]
    if pure and delta > 0 and name not in ("output_perturbation", "gd_output_perturbation",
                                           "objective_perturbation"):
        pytest.skip("approximate-DP only")
    X, y = data(loss)
    problem = ERMProblem(X, y, loss, reg, constraint)
    fit = get(name).fit(problem, PrivacyBudget(2.0, 0.0 if pure else delta), rng=None)
    for leaf in _leaf_releases(fit.event):
        if isinstance(leaf, ev.GaussianRelease):
            assert leaf.secure, f"{name}: a non-secure Gaussian release"
        elif isinstance(leaf, ev.ObjectivePerturbationRelease):
            assert leaf.noise in ("gaussian", "laplace"), f"{name}: NumPy L2-Laplace objective noise"
        else:
            assert isinstance(leaf, (ev.SecureLaplaceRelease, ev.ExponentialMechanismRelease,
                                     ev.ApproximateDpRelease)), f"{name}: {type(leaf).__name__} on the secure path"
