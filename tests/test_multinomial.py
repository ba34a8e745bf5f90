"""Multinomial logistic regression: the softmax loss's derivatives and public constants, the
sensitivities the mechanisms rest on, and the estimator's multinomial path."""

import math
import warnings

import numpy as np
import pytest

import dperm
from dperm import DPLogisticRegression
from dperm.algorithms import get
from dperm.defaults import auto_alpha, estimator_alpha, multinomial_auto_solver
from dperm.privacy import PrivacyBudget
from dperm.problem import solve_reference
from dperm.problem.multinomial import MultinomialLogistic, MultinomialProblem


def _data(n=300, d=4, k=4, seed=0, norm=1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    centres = rng.normal(size=(k, d))
    X = centres[y] * 0.4 + rng.normal(size=(n, d)) * 0.3
    X *= norm / np.maximum(norm, np.linalg.norm(X, axis=1, keepdims=True))
    return X, y


def _problem(seed=0, k=4, mu=0.05, **kw):
    X, y = _data(seed=seed, k=k)
    return MultinomialProblem(X, y, k, ("l2", mu), data_norm=math.sqrt(2.0), intercept_scaling=1.0, **kw)


def test_gradient_and_hessian_vector_match_finite_differences():
    problem = _problem()
    rng = np.random.default_rng(1)
    w, v = rng.normal(size=(2, problem.n_features))
    h = 1e-6
    numeric = (problem.objective(w + h * v) - problem.objective(w - h * v)) / (2 * h)
    assert numeric == pytest.approx(problem.gradient(w) @ v, rel=1e-7)
    value, grad = problem.value_and_gradient(w)
    assert value == pytest.approx(problem.objective(w)) and np.allclose(grad, problem.gradient(w))
    numeric_hv = (problem.gradient(w + h * v) - problem.gradient(w - h * v)) / (2 * h)
    np.testing.assert_allclose(problem.hessian_vector(w, v), numeric_hv, rtol=1e-6, atol=1e-8)
    # the per-example gradients average to the loss gradient
    np.testing.assert_allclose(problem.per_example_gradients(w).mean(axis=0), problem.loss_gradient(w), atol=1e-12)
    rows = np.arange(10, 60)
    np.testing.assert_allclose(problem.batch_loss_gradient(w, rows), problem.per_example_gradients(w, rows).mean(axis=0),
                               atol=1e-12)


def test_loss_value_is_the_softmax_cross_entropy():
    loss = MultinomialLogistic(3)
    S = np.array([[0.0, 1.0, -2.0], [800.0, 0.0, 0.0]])  # the second row would overflow a naive exp
    y = np.array([1, 2])
    expected0 = math.log(1 + math.e + math.exp(-2.0)) - 1.0
    np.testing.assert_allclose(loss.value(S, y), [expected0, 800.0])
    assert np.all(np.isfinite(loss.residuals(S, y)))


def _per_example_hessian(p, x):
    return np.kron(np.outer(x, x), np.diag(p) - np.outer(p, p))  # index (feature, class), row-major W


@pytest.mark.parametrize("k", [2, 3, 5, 7])
def test_constants_bound_every_per_example_gradient_and_hessian(k):
    """L = sqrt(2) D, beta = D^2 / 2, rank <= K - 1, trace <= (1 - 1/K) D^2, over random and
    extreme probability vectors; the bounds are approached (they are tight)."""
    D = 1.7
    loss = MultinomialLogistic(k)
    rng = np.random.default_rng(k)
    largest_gradient = largest_eigenvalue = 0.0
    for trial in range(400):
        scale = [0.1, 1.0, 10.0, 100.0][trial % 4]
        S = rng.normal(size=(1, k)) * scale
        y = rng.integers(0, k, 1)
        x = rng.normal(size=3)
        x *= D / np.linalg.norm(x)
        R = loss.residuals(S, y)[0]
        grad = np.outer(x, R).ravel()
        largest_gradient = max(largest_gradient, np.linalg.norm(grad))
        assert np.linalg.norm(grad) <= loss.lipschitz() * D * (1 + 1e-12)
        p = R.copy()
        p[y[0]] += 1.0
        H = _per_example_hessian(p, x)
        eig = np.linalg.eigvalsh(H)
        largest_eigenvalue = max(largest_eigenvalue, eig[-1])
        assert eig[-1] <= loss.smoothness() * D * D * (1 + 1e-12)
        assert np.sum(eig > 1e-12 * D * D) <= loss.hessian_rank
        assert np.trace(H) <= loss.hessian_trace(D) * (1 + 1e-12)
    # tight: p -> a wrong class gives ||p - e_y|| -> sqrt 2; p = (1/2, 1/2, 0, ...) gives 1/2
    assert largest_gradient > 0.99 * math.sqrt(2) * D
    half = np.zeros(k)
    half[:2] = 0.5
    x = np.full(3, D / math.sqrt(3))
    assert np.linalg.eigvalsh(_per_example_hessian(half, x))[-1] == pytest.approx(D * D / 2)
    assert np.trace(_per_example_hessian(np.full(k, 1.0 / k), x)) == pytest.approx(loss.hessian_trace(D))


def test_problem_constants_come_from_the_declared_bounds():
    problem = _problem(mu=0.05)
    D = math.sqrt(2.0)
    assert problem.lipschitz == pytest.approx(math.sqrt(2) * D)
    assert problem.constants.loss_smoothness == pytest.approx(D * D / 2)
    assert problem.smoothness == pytest.approx(D * D / 2 + 0.05)
    assert problem.strong_convexity == 0.05
    assert problem.n_features == 5 * 4 and problem.n_inputs == 5 and problem.n_classes == 4
    assert problem.gradient_sensitivity() == pytest.approx(2 * problem.lipschitz / problem.n_samples)


def test_mean_gradient_and_minimizer_sensitivity_on_worst_case_neighbours():
    """Over random replace-one pairs (a far row with a different class, rows at the norm
    bound): ||grad F - grad F'|| <= 2L/n at any W, and ||W* - W*'|| <= 2L/(n mu), the
    sensitivities of noisy_gd and output perturbation."""
    mu = 0.05
    problem = _problem(mu=mu)
    n, L = problem.n_samples, problem.lipschitz
    rng = np.random.default_rng(3)
    w_star = solve_reference(problem, tol=1e-11).coef
    worst_gradient = worst_argmin = 0.0
    for trial in range(12):
        i = int(rng.integers(n))
        x = rng.normal(size=4) * 5.0  # clipped onto the bound by the problem
        with warnings.catch_warnings():
            other = problem.replace_row(i, x, int((problem.y[i] + 1 + trial) % problem.n_classes))
        for _ in range(3):
            w = rng.normal(size=problem.n_features) * 3.0
            gap = np.linalg.norm(problem.gradient(w) - other.gradient(w))
            worst_gradient = max(worst_gradient, gap / (2 * L / n))
        w_other = solve_reference(other, tol=1e-11).coef
        worst_argmin = max(worst_argmin, np.linalg.norm(w_star - w_other) / (2 * L / (n * mu)))
    assert 0.1 < worst_gradient <= 1.0
    assert 0.01 < worst_argmin <= 1.0


def test_rows_above_the_bound_are_clipped_and_labels_checked():
    X, y = _data(n=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent: docs/privacy.md, "Totality"
        problem = MultinomialProblem(X * 10, y, 4, ("l2", 0.1), data_norm=1.0)
    assert np.linalg.norm(problem.X, axis=1).max() <= 1.0
    with pytest.raises(ValueError, match="class index outside"):
        MultinomialProblem(X, y + 1, 4)
    with pytest.raises(ValueError, match="integer class indices"):
        MultinomialProblem(X, y.astype(float), 4)
    with pytest.raises(ValueError, match="n_classes"):
        MultinomialProblem(X, y, 1)


@pytest.mark.parametrize("solver", ["output_perturbation", "gd_output_perturbation", "noisy_gd"])
def test_solvers_fit_the_multinomial_problem_within_budget(solver):
    problem = _problem(k=3, mu=0.01)
    budget = PrivacyBudget(5.0, 1e-5)
    fit = get(solver).fit(problem, budget, rng=0)
    assert fit.coef.shape == (problem.n_features,)
    assert fit.privacy_spent.epsilon <= 5.0 and fit.privacy_spent.delta <= 1e-5
    W = problem.coefficients(fit.coef)
    assert np.mean(np.argmax(problem.X @ W, axis=1) == problem.y) > 0.5


def test_auto_alpha_uses_the_multinomial_constants():
    D = math.hypot(1.0, 1.0)
    loss = MultinomialLogistic(5)
    got = estimator_alpha(loss, 1000, 11, 1.0, 1e-5, data_norm=D, n_classes=5)
    assert got == pytest.approx(auto_alpha(1000, 11 * 4, 1.0, 1e-5, lipschitz=math.sqrt(2) * D, data_norm=D))
    output = estimator_alpha(loss, 1000, 11, 1.0, 1e-5, data_norm=D, n_classes=5, solver="output_perturbation")
    assert output == pytest.approx(auto_alpha(1000, 44, 1.0, 1e-5, lipschitz=math.sqrt(2) * D, data_norm=D,
                                              perturbation="output"))
    assert multinomial_auto_solver(1e-5) == "noisy_gd" and multinomial_auto_solver(0.0) == "output_perturbation"
    assert multinomial_auto_solver(1e-5, strongly_convex=False) == "gd_output_perturbation"
    assert multinomial_auto_solver(1e-5, strongly_convex=False, bounded=True) == "noisy_gd"


# -- the estimator ------------------------------------------------------------------
def _three_blobs(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.array([[0.5, 0, 0], [0, 0.5, 0], [0, 0, 0.5]])[y] + rng.normal(size=(n, 3)) * 0.1
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True)), y


def test_multinomial_is_the_default_for_more_than_two_classes():
    X, y = _three_blobs()
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.multi_class_ == "multinomial" and clf.solver_ == "noisy_gd"
    assert len(clf.fits_) == 1 and clf.coef_.shape == (3, 3) and clf.intercept_.shape == (3,)
    assert clf.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-3) and clf.privacy_spent_.epsilon <= 1.0
    assert clf.n_iter_.shape == (1,)
    assert clf.score(X, y) > 0.9
    proba = clf.predict_proba(X[:20])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X[:20])), proba)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X[:20]))
    binary = DPLogisticRegression(classes=[0, 1], random_state=0).fit(X[y < 2], y[y < 2])
    assert binary.multi_class_ == "binary"


def test_declared_class_absent_from_y_gets_its_column():
    X, y = _three_blobs(600)
    labels = np.array(["cat", "dog", "emu"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("error", dperm.privacy.PrivacyWarning)
        clf = DPLogisticRegression(classes=["cat", "dog", "emu", "fox"], epsilon=5.0, random_state=0).fit(X, labels)
    assert clf.classes_.tolist() == ["cat", "dog", "emu", "fox"] and clf.coef_.shape == (4, 3)
    assert set(clf.predict(X)) <= set(clf.classes_)
    with pytest.warns(dperm.privacy.PrivacyWarning, match="treated as public"):
        DPLogisticRegression(random_state=0).fit(X, labels)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.NoiseDominatesWarning")
def test_multi_class_choices_and_errors():
    X, y = _three_blobs(600)
    ovr = DPLogisticRegression(classes=[0, 1, 2], multi_class="ovr", random_state=0).fit(X, y)
    assert ovr.multi_class_ == "ovr" and len(ovr.fits_) == 3
    sgd = DPLogisticRegression(classes=[0, 1, 2], solver="dp_sgd", alpha=0.01, random_state=0).fit(X, y)
    assert sgd.multi_class_ == "ovr"  # "auto" falls back where the solver has no multinomial path
    out = DPLogisticRegression(classes=[0, 1, 2], solver="output_perturbation", random_state=0).fit(X, y)
    assert out.multi_class_ == "multinomial" and out.fits_[0].algorithm == "output_perturbation"
    pure = DPLogisticRegression(classes=[0, 1, 2], delta=0.0, random_state=0).fit(X, y)
    assert pure.solver_ == "output_perturbation" and pure.privacy_spent_.delta == 0.0
    unregularized = DPLogisticRegression(classes=[0, 1, 2], alpha=0.0, random_state=0).fit(X, y)
    assert unregularized.solver_ == "gd_output_perturbation" and unregularized.multi_class_ == "multinomial"
    ball = DPLogisticRegression(classes=[0, 1, 2], alpha=0.0, constraint=("l2_ball", 5.0), random_state=0).fit(X, y)
    assert ball.solver_ == "noisy_gd"
    with pytest.raises(ValueError, match="multi_class='multinomial' runs with the solvers"):
        DPLogisticRegression(classes=[0, 1, 2], solver="dp_sgd", multi_class="multinomial").fit(X, y)
    with pytest.raises(ValueError, match="unknown algorithm"):
        DPLogisticRegression(classes=[0, 1, 2], solver="magic", multi_class="multinomial").fit(X, y)
    with pytest.raises(ValueError, match="multi_class"):
        DPLogisticRegression(classes=[0, 1, 2], multi_class="softmax").fit(X, y)


def test_multinomial_fit_charges_the_accountant_once():
    X, y = _three_blobs(600)
    accountant = dperm.BudgetAccountant(2.0, 1e-5)
    DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], accountant=accountant, random_state=0).fit(X, y)
    assert accountant.spent.epsilon == pytest.approx(1.0, rel=1e-3)


def test_multinomial_sparse_input_matches_dense():
    import scipy.sparse as sp

    X, y = _three_blobs(600)
    dense = DPLogisticRegression(epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    sparse = DPLogisticRegression(epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-8)


def test_dask_input_has_no_multinomial_path():
    da = pytest.importorskip("dask.array")
    X, y = _three_blobs(300)
    Xd, yd = da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100)
    with pytest.raises(ValueError, match="no Dask path"):
        DPLogisticRegression(classes=[0, 1, 2], multi_class="multinomial", random_state=0).fit(Xd, yd)


@pytest.mark.parametrize("name", ["objective_perturbation", "dp_sgd", "dp_svrg", "exponential_mechanism", "dp_sosp"])
def test_algorithms_not_proven_for_the_multinomial_problem_refuse_it(name):
    """Objective perturbation's accounting assumes rank-one per-example Hessians: it (and
    every algorithm not proven for the vector-valued problem) refuses it before any noise."""
    from dperm.algorithms.registry import AssumptionError

    budget = PrivacyBudget(1.0, 0.0 if name == "exponential_mechanism" else 1e-5)
    with pytest.raises(AssumptionError, match="MultinomialProblem runs with"):
        get(name).fit(_problem(k=3), budget, rng=0)


def test_sample_weights_in_the_unit_interval_keep_the_sensitivity():
    """Weighted rows: derivatives still match finite differences, the constants are those
    of the unweighted problem, and neighbours differing in one record (row, label and
    weight) have mean gradients within 2L/n; weights outside [0, 1] are clamped into it."""
    X, y = _data(seed=4, k=3)
    weights = np.random.default_rng(4).uniform(0, 1, len(y))
    problem = MultinomialProblem(X, y, 3, ("l2", 0.05), data_norm=1.0, sample_weight=weights)
    plain = MultinomialProblem(X, y, 3, ("l2", 0.05), data_norm=1.0)
    assert problem.constants == plain.constants
    rng = np.random.default_rng(5)
    w, v = rng.normal(size=(2, problem.n_features))
    h = 1e-6
    numeric = (problem.objective(w + h * v) - problem.objective(w - h * v)) / (2 * h)
    assert numeric == pytest.approx(problem.gradient(w) @ v, rel=1e-7)
    numeric_hv = (problem.gradient(w + h * v) - problem.gradient(w - h * v)) / (2 * h)
    np.testing.assert_allclose(problem.hessian_vector(w, v), numeric_hv, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(problem.per_example_gradients(w).mean(axis=0), problem.loss_gradient(w), atol=1e-12)
    ones = MultinomialProblem(X, y, 3, ("l2", 0.05), data_norm=1.0, sample_weight=np.ones(len(y)))
    assert ones.objective(w) == pytest.approx(plain.objective(w))
    bound = 2 * problem.lipschitz / problem.n_samples
    for trial in range(10):
        i = int(rng.integers(problem.n_samples))
        other = problem.replace_row(i, -X[i], (int(y[i]) + 1) % 3, weight=float(trial % 2))
        u = rng.normal(size=problem.n_features) * 3
        assert np.linalg.norm(problem.gradient(u) - other.gradient(u)) <= bound
    # a weight is private: mapped into [0, 1] (NaN: 0), never refused (totality); a wrong shape is public
    for bad, mapped in ((np.full(len(y), 1.5), np.ones(len(y))), (-weights, np.zeros(len(y))),
                        (np.full(len(y), np.nan), np.zeros(len(y)))):
        np.testing.assert_array_equal(MultinomialProblem(X, y, 3, data_norm=1.0, sample_weight=bad).sample_weight,
                                      mapped)
    with pytest.raises(ValueError, match="sample_weight"):
        MultinomialProblem(X, y, 3, data_norm=1.0, sample_weight=weights[:-1])


def test_multinomial_estimator_passes_sample_weight_to_its_problem():
    """The estimator's weights reach the multinomial problem (where fit takes them: the
    sample_weight parameter of the estimators is merged separately)."""
    import inspect

    if "sample_weight" not in inspect.signature(DPLogisticRegression.fit).parameters:
        pytest.skip("DPLogisticRegression.fit has no sample_weight parameter on this branch")
    X, y = _three_blobs(600)
    params = dict(epsilon=2.0, classes=[0, 1, 2], alpha=0.05, solver="output_perturbation", random_state=0)
    plain = DPLogisticRegression(**params).fit(X, y)
    ones = DPLogisticRegression(**params).fit(X, y, sample_weight=np.ones(len(y)))
    halves = DPLogisticRegression(**params).fit(X, y, sample_weight=np.full(len(y), 0.5))
    assert plain.multi_class_ == halves.multi_class_ == "multinomial"
    np.testing.assert_allclose(ones.coef_, plain.coef_, atol=1e-9)
    assert not np.allclose(halves.coef_, plain.coef_, atol=1e-6)
