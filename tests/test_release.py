"""Nothing leaks but the noisy model (docs/privacy.md, "What a fit releases").

For every registered algorithm and every estimator: fit on two replace-one neighbours
with the same ``random_state``; every released field other than the noisy coefficients
(and values that post-process them) must be identical. A field that differs is computed
from the data: an iteration count of a non-private solver, a label set, a count of
clipped rows. It also checks that warnings carry no data statistics.
"""

import warnings

import numpy as np
import pytest

from dperm.algorithms import get, names
from dperm.privacy import PrivacyBudget
from dperm.problem import ERMProblem
from dperm.result import PrivateFit

from test_catalogue import SPECS, data

# info entries that are post-processings of the noisy releases (documented per algorithm)
POST_PROCESSING_INFO = {
    # computed from the noisy gradients and Hessians (margin-corrected): see their docstrings
    "dp_sosp": {"status", "selected_iterate", "certified_gradient_norm", "certified_min_eigenvalue",
                "candidates_examined", "hessian_releases"},
    "dp_gd_so": {"status", "last_gap", "last_quadratic_value", "certified_gap", "certified_curvature"},
    # 2 L max ||w - w0|| over a net built around the noisy w0
    "localization": {"score_sensitivity"},
    "exponential_mechanism": set(),
    # the ridge set from the noisy lambda_min(X^T X) release (Wang 2018, Alg. 2, line 3)
    "adassp": {"ridge"},
    # the covariance of the last iterate from the released Hessian, outer product (or mean
    # square) and the known noise; refused: the released Hessian's smallest eigenvalue
    # against its public noise bound (dperm.inference.mechanism)
    "newton_inference": {"covariance", "sampling_covariance", "noise_covariance", "refused", "residual_variance"},
    # the same, and the Huber threshold: a multiple of the released residual scale
    # (dperm.inference.scaled)
    "scaled_huber_inference": {"covariance", "sampling_covariance", "noise_covariance", "refused",
                               "residual_variance", "threshold"},
}
RELEASED = [f for f in PrivateFit.__dataclass_fields__ if f not in ("coef", "diagnostics")]


def neighbours(loss, seed=0):
    """D and D' of equal size differing in row 0, replaced by a far-away row."""
    X, y = data(loss, seed=seed)
    X2, y2 = X.copy(), y.copy()
    X2[0] = -X[0] * 0.5 + 0.3
    y2[0] = -y[0] if loss == "logistic" else (1.0 - y[0] if loss == "sigmoid_squared" else -y[0])
    return (X, y), (X2, y2)


def released(fit: PrivateFit) -> dict:
    out = {name: getattr(fit, name) for name in RELEASED}
    hidden = POST_PROCESSING_INFO.get(fit.algorithm, set())
    out["info"] = {k: v for k, v in fit.info.items() if k not in hidden}
    summary = fit.summary()
    summary.pop("coef")
    summary["info"] = {k: v for k, v in summary["info"].items() if k not in hidden}
    out["summary"] = summary
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_replace_one_neighbours_release_the_same_fields(name):
    loss, reg, constraint, delta = SPECS[name]
    (X, y), (X2, y2) = neighbours(loss)
    budget = PrivacyBudget(1.0, delta)
    fits = [get(name).fit(ERMProblem(A, b, loss, reg, constraint), budget, rng=11) for A, b in ((X, y), (X2, y2))]
    first, second = (released(f) for f in fits)
    assert repr(first) == repr(second)
    assert all(not f.diagnostics for f in fits)  # non-private bookkeeping only on request


def test_registry_names_are_all_covered():
    assert set(names()) == set(SPECS)


def test_output_perturbation_iteration_count_is_no_longer_released():
    """The leak of the privacy review: 6 vs 7 solver iterations on neighbours (n = 50, d = 3)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0], -y[0]
    fits = [get("output_perturbation").fit(ERMProblem(A, b, "logistic", ("l2", 0.1)), PrivacyBudget(1.0, 1e-5),
                                           rng=0, diagnostics=True) for A, b in ((X, y), (X2, y2))]
    assert "solver_iterations" not in fits[0].summary() and "iterations" not in fits[0].summary()
    assert released(fits[0])["summary"] == released(fits[1])["summary"]


def test_clipping_says_nothing():
    """Rows above data_norm are clipped without a word: whether a warning showed would tell
    neighbours apart (one row above the bound in one table only), epsilon infinite."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3)) * 3.0
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ERMProblem(X, y, "logistic", ("l2", 0.1), data_norm=1.0)
        ERMProblem(X, X[:, 1], "squared", ("l2", 0.1), data_norm=1.0, label_bound=0.5)
    assert not caught, [str(w.message) for w in caught]
    assert not hasattr(ERMProblem(X, y, "logistic", data_norm=1.0), "n_clipped")  # a count of clipped rows


ESTIMATORS = {
    "DPLogisticRegression": dict(classes=[-1.0, 1.0]),
    "DPLinearSVC": dict(classes=[-1.0, 1.0]),
    "DPHuberRegressor": {},
    "DPLinearRegression": {},
    "DPRobustRegressor": {},
    "DPGLMRegressor": {},
}
NOISY = {"coef_", "intercept_"}  # the noisy output


def _estimator_release(est) -> dict:
    out = {}
    for name in sorted(vars(est)):
        if not name.endswith("_") or name.startswith("_") or name in NOISY:
            continue
        value = getattr(est, name)
        if name == "fits_":
            value = [released(f) for f in value]
        out[name] = value
    return out


def _multiclass_neighbours(seed=0, k=3):
    """Three-class data and its neighbour with row 0 replaced by a far row of another class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, 200)
    X = rng.normal(size=(k, 3))[y] * 0.4 + rng.normal(size=(200, 3)) * 0.2
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0] * 0.5 + 0.3, (y[0] + 1) % k
    return (X, y), (X2, y2)


@pytest.mark.parametrize("name", ["output_perturbation", "gd_output_perturbation", "noisy_gd"])
def test_multinomial_problem_neighbours_release_the_same_fields(name):
    from dperm.problem.multinomial import MultinomialProblem

    fits = [get(name).fit(MultinomialProblem(A, b, 3, ("l2", 0.05), data_norm=1.0), PrivacyBudget(1.0, 1e-5), rng=11)
            for A, b in _multiclass_neighbours()]
    first, second = (released(f) for f in fits)
    assert repr(first) == repr(second)


@pytest.mark.parametrize("multi_class", ["multinomial", "ovr"])
@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_multiclass_estimator_on_neighbours_releases_the_same_attributes(multi_class):
    import dperm

    fitted = []
    for A, b in _multiclass_neighbours():
        clf = dperm.DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], multi_class=multi_class, random_state=5)
        fitted.append(_estimator_release(clf.fit(A, b)))
    assert repr(fitted[0]) == repr(fitted[1])
    assert fitted[0]["multi_class_"] == multi_class


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_estimators_on_neighbours_release_the_same_attributes(name):
    import dperm

    cls = getattr(dperm, name)
    classifier = "classes" in ESTIMATORS[name]
    loss = "logistic" if classifier else "huber"
    (X, y), (X2, y2) = neighbours(loss)
    if name == "DPGLMRegressor":
        y, y2 = (y + 1) / 2, (y2 + 1) / 2  # targets in [0, 1]
    fitted = []
    for A, b in ((X, y), (X2, y2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted.append(_estimator_release(cls(epsilon=1.0, random_state=5, **ESTIMATORS[name]).fit(A, b)))
    assert repr(fitted[0]) == repr(fitted[1])
    assert "privacy_spent_" in fitted[0]


def _weight_neighbours(n, seed=2):
    """Weights of D and D' (the same rows otherwise): row 0's weight 1 in D, 0 in D'."""
    s = np.random.default_rng(seed).uniform(size=n)
    s2 = s.copy()
    s[0], s2[0] = 1.0, 0.0
    return s, s2


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.filterwarnings("ignore:dp_gd_so:UserWarning")
@pytest.mark.filterwarnings("ignore::dperm.exceptions.SVRGNoiseWarning")
def test_neighbours_differing_in_one_weight_release_the_same_fields(name):
    """The weight is part of the private record: replacing row 0's weight only (1 -> 0)
    changes no released field but the noisy model."""
    loss, reg, constraint, delta = SPECS[name]
    X, y = data(loss)
    budget = PrivacyBudget(1.0, delta)
    fits = [get(name).fit(ERMProblem(X, y, loss, reg, constraint, sample_weight=s), budget, rng=11)
            for s in _weight_neighbours(len(y))]
    first, second = (released(f) for f in fits)
    assert repr(first) == repr(second)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_estimators_on_weight_neighbours_release_the_same_attributes(name):
    import dperm

    cls = getattr(dperm, name)
    loss = "logistic" if "classes" in ESTIMATORS[name] else "huber"
    (X, y), _ = neighbours(loss)
    if name == "DPGLMRegressor":
        y = (y + 1) / 2
    fitted = []
    for s in _weight_neighbours(len(y)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(epsilon=1.0, random_state=5, **ESTIMATORS[name]).fit(X, y, sample_weight=s)
        fitted.append(_estimator_release(est))
    assert repr(fitted[0]) == repr(fitted[1])


# ------------------------------------------------------------------ inference (issue 31)
INFERENCE_ESTIMATORS = {
    "DPLogisticRegression": dict(classes=[-1.0, 1.0]),
    "DPHuberRegressor": dict(y_bounds=(-1.0, 1.0)),
    "DPLinearRegression": dict(y_bounds=(-1.0, 1.0)),
}
# post-processings of the noisy releases: the estimate, its covariance and what follows
INFERENCE_NOISY = NOISY | {"bse_", "pvalues_"}


def _inference_release(est) -> dict:
    out = {}
    for name in sorted(vars(est)):
        if not name.endswith("_") or name.startswith("_") or name in INFERENCE_NOISY:
            continue
        value = getattr(est, name)
        if name == "fits_":
            value = [released(f) for f in value]
        if name == "inference_":  # names, method and privacy facts are public; the rest is the noisy model
            value = (value.names, value.method, value.privacy)
        out[name] = value
    return out


@pytest.mark.parametrize("loss", ["logistic", "huber", "squared"])
def test_inference_fit_on_neighbours_releases_the_same_fields(loss):
    from dperm.inference import newton_inference

    (X, y), (X2, y2) = neighbours("logistic" if loss == "logistic" else "huber")
    fits = [newton_inference(ERMProblem(A, b, loss), PrivacyBudget(1.0, 1e-5), rng=11) for A, b in ((X, y), (X2, y2))]
    first, second = (released(f) for f in fits)
    assert repr(first) == repr(second)
    assert set(fits[0].info) <= POST_PROCESSING_INFO["newton_inference"] | {"hessian_noise_bound"}


def test_scaled_inference_fit_on_neighbours_releases_the_same_fields():
    from dperm.inference.scaled import scaled_huber_inference

    (X, y), (X2, y2) = neighbours("huber")
    fits = [scaled_huber_inference(ERMProblem(A, b, "squared"), PrivacyBudget(1.0, 1e-5), rng=11)
            for A, b in ((X, y), (X2, y2))]
    first, second = (released(f) for f in fits)
    assert repr(first) == repr(second)
    assert set(fits[0].info) <= POST_PROCESSING_INFO["scaled_huber_inference"] | {"hessian_noise_bound"}
    assert "threshold" in fits[0].info


@pytest.mark.parametrize("method", ["scaled_huber", "sufficient_statistics"])
@pytest.mark.parametrize("weights", [False, True])
def test_least_squares_inference_methods_on_neighbours_release_the_same_attributes(method, weights):
    """DPLinearRegression's two inference fits (the ``method`` option): every field but the
    noisy model equal on replace-one neighbours and on neighbours differing in one weight."""
    import dperm

    (X, y), (X2, y2) = neighbours("huber")
    pairs = ([(X, y, s) for s in _weight_neighbours(len(y))] if weights else [(X, y, None), (X2, y2, None)])
    fitted = []
    for A, b, s in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = dperm.DPLinearRegression(epsilon=1.0, random_state=5, y_bounds=(-1.0, 1.0),
                                           inference={"method": method}).fit(A, b, sample_weight=s)
        fitted.append(_inference_release(est))
    assert repr(fitted[0]) == repr(fitted[1])
    assert fitted[0]["fits_"][0]["algorithm"] == {"scaled_huber": "scaled_huber_inference",
                                                  "sufficient_statistics": "newton_inference"}[method]


@pytest.mark.parametrize("name", sorted(INFERENCE_ESTIMATORS))
@pytest.mark.parametrize("weights", [False, True])
def test_inference_estimators_on_neighbours_release_the_same_attributes(name, weights):
    """Every new field of an inference fit (inference_, bse_, pvalues_, inference_spent_,
    the fit's info) on replace-one neighbours, and on neighbours differing in one weight."""
    import dperm

    cls = getattr(dperm, name)
    loss = "logistic" if "classes" in INFERENCE_ESTIMATORS[name] else "huber"
    (X, y), (X2, y2) = neighbours(loss)
    pairs = ([(X, y, s) for s in _weight_neighbours(len(y))] if weights else [(X, y, None), (X2, y2, None)])
    fitted = []
    for A, b, s in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(epsilon=1.0, random_state=5, inference=True, **INFERENCE_ESTIMATORS[name]).fit(A, b,
                                                                                                  sample_weight=s)
        fitted.append(_inference_release(est))
    assert repr(fitted[0]) == repr(fitted[1])
    assert {"inference_", "inference_spent_", "privacy_spent_"} <= set(fitted[0])


@pytest.mark.parametrize("weights", [False, True])
def test_multinomial_inference_on_neighbours_releases_the_same_attributes(weights):
    """The multinomial model's inference fit (3 declared classes, class 0 the reference):
    every field but the noisy model equal on replace-one neighbours (row 0 moved and its
    class changed) and on neighbours differing in one weight."""
    import dperm

    X, y = data("logistic")
    y = (np.arange(len(y)) % 3).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[0] = -X[0] * 0.5 + 0.3
    y2[0] = 2
    pairs = ([(X, y, s) for s in _weight_neighbours(len(y))] if weights else [(X, y, None), (X2, y2, None)])
    fitted = []
    for A, b, s in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = dperm.DPLogisticRegression(epsilon=1.0, random_state=5, classes=[0, 1, 2], inference=True).fit(
                A, b, sample_weight=s)
        fitted.append(_inference_release(est))
    assert repr(fitted[0]) == repr(fitted[1])
    assert {"inference_", "inference_spent_", "privacy_spent_", "multi_class_"} <= set(fitted[0])


def _bound_neighbours(seed=3, n=300):
    """A table within every declared bound (rows of norm < 1, targets in (0, 1)) and its
    neighbour whose row 0 is beyond all of them: norm 5 > data_norm = 1, target 4 beyond
    label_bound = 1 and outside the GLM's [0, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X *= rng.uniform(0.1, 0.9, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(0.5 + X @ np.array([0.4, -0.3, 0.2]), 0.05, 0.95)
    X2, y2 = X.copy(), y.copy()
    X2[0] = np.array([3.0, 4.0, 0.0])
    y2[0] = 4.0
    return (X, y), (X2, y2)


def _said(fit):
    """Run ``fit()`` and return its result and every warning it made, as (class, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fit()
    return out, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("route", ["classifier", "regressor", "glm", "minimize", "dask"])
def test_a_row_beyond_the_declared_bounds_changes_no_warning_and_no_structure(route):
    """Issue 29: neighbours with the same seed, one row above data_norm, label_bound and the
    target range in one table only, give the same warnings (none from the data) and the same
    released structure (every attribute but the noisy coefficients)."""
    import dperm

    results = []
    for X, y in _bound_neighbours():
        if route == "classifier":
            labels = np.where(y > 0.5, 1, 0)
            fit = lambda: _estimator_release(dperm.DPLogisticRegression(epsilon=1.0, classes=[0, 1],  # noqa: E731
                                                                        random_state=5).fit(X, labels))
        elif route == "regressor":
            fit = lambda: _estimator_release(dperm.DPLinearRegression(epsilon=1.0, random_state=5).fit(X, y))  # noqa: E731
        elif route == "glm":
            fit = lambda: _estimator_release(dperm.DPGLMRegressor(epsilon=1.0, random_state=5).fit(X, y))  # noqa: E731
        elif route == "minimize":
            fit = lambda: released(dperm.minimize(X, y, loss="huber", regularizer=("l2", 0.1), epsilon=1.0,  # noqa: E731
                                                  delta=1e-5, random_state=5))
        else:
            da = pytest.importorskip("dask.array", reason="the Dask route needs the optional extra")
            import dask

            def fit():
                with dask.config.set(scheduler="synchronous"):
                    return released(dperm.minimize(da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100),
                                                   loss="huber", regularizer=("l2", 0.1), algorithm="noisy_gd",
                                                   steps=5, epsilon=1.0, delta=1e-5, random_state=5))
        results.append(_said(fit))
    (first, said_first), (second, said_second) = results
    assert said_first == said_second
    assert not [w for w in said_second if w[0] == "DataNormWarning"]
    assert repr(first) == repr(second)
