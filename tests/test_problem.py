"""The problem layer (``dperm.problem``): margin losses and their public constants,
regularizers and their proximal operators, constraint sets (projection, LMO, vertices,
norms), the ERM problem (objective, gradients, Hessians, sparse / float32 input, row
clipping, replace-one neighbours, derived constants), the reference solver and input
validation.

Every test checks numbers against an independent computation (finite differences,
dense grid searches, brute-force minimization with SciPy, scikit-learn solvers).
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize

from dperm._validation import DataNormWarning as ValidationDataNormWarning
from dperm.problem import (
    L1,
    L2,
    LOSSES,
    Biweight,
    Box,
    DataNormWarning,
    ElasticNet,
    ERMProblem,
    Hinge,
    Huber,
    HuberizedHinge,
    L1Ball,
    L2Ball,
    Logistic,
    NoRegularizer,
    SigmoidSquared,
    Squared,
    Unconstrained,
    make_constraint,
    make_loss,
    make_regularizer,
    solve_reference,
)
from dperm.problem.constraints import project_l1_ball
from dperm.problem.regularizers import soft_threshold

# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------


def unit_rows(rng, n, d, low=0.2, high=1.0, norm=1.0):
    """Gaussian rows rescaled to L2 norms uniform in [low, high] * norm."""
    X = rng.normal(size=(n, d))
    X *= norm * rng.uniform(low, high, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return X


def labels_for(loss, rng, n, X=None):
    """Labels in the loss's domain: {-1, +1} for binary losses, reals in [-1, 1] (or [0, 1]
    for the sigmoid-squared GLM) otherwise."""
    if loss.binary:
        if X is None:
            return np.where(rng.random(n) < 0.5, 1.0, -1.0)
        w = rng.normal(size=X.shape[1]) * 3
        return np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    if isinstance(loss, SigmoidSquared):
        return rng.uniform(0.0, 1.0, size=n)
    return rng.uniform(-1.0, 1.0, size=n)


def kink_distance(loss, a, y):
    """Distance of (a, y) to the points where phi' or phi'' jumps (inf if there are none)."""
    if isinstance(loss, Hinge):
        return np.abs(y * a - 1.0)
    if isinstance(loss, HuberizedHinge):
        z = y * a
        return np.minimum(np.abs(z - 1.0 - loss.width), np.abs(z - 1.0 + loss.width))
    if isinstance(loss, Huber):
        return np.abs(np.abs(a - y) - loss.threshold)
    if isinstance(loss, Biweight):
        return np.abs(np.abs(a - y) - loss.c)
    return np.full(np.broadcast(a, y).shape, np.inf)


# (id, loss, margin_bound, label_bound); label_bound is only used by regression losses.
LOSS_CASES = [
    ("logistic", Logistic(), 50.0, 1.0),
    ("huberized_hinge_0.5", HuberizedHinge(0.5), 5.0, 1.0),
    ("huberized_hinge_0.2", HuberizedHinge(0.2), 5.0, 1.0),
    ("hinge", Hinge(), 5.0, 1.0),
    ("squared", Squared(), 3.0, 0.5),
    ("huber_1", Huber(1.0), 5.0, 1.0),
    ("huber_0.3", Huber(0.3), 5.0, 0.5),
    ("huber_small_domain", Huber(1.0), 0.2, 0.3),  # L = min(k, M + B) = 0.5 here
    ("sigmoid_squared_sigmoid", SigmoidSquared("sigmoid"), 10.0, 1.0),
    ("sigmoid_squared_probit", SigmoidSquared("probit"), 10.0, 1.0),
    ("biweight_default", Biweight(), 6.0, 1.0),
    ("biweight_1.5", Biweight(1.5), 3.0, 1.0),
]
LOSS_IDS = [c[0] for c in LOSS_CASES]

# Losses whose constants are attained on the declared domain (checked for tightness).
TIGHT_LIPSCHITZ = {"logistic", "huberized_hinge_0.5", "huberized_hinge_0.2", "hinge", "squared",
                   "huber_1", "huber_0.3", "huber_small_domain", "biweight_default", "biweight_1.5"}
TIGHT_SMOOTHNESS = {"logistic", "huberized_hinge_0.5", "huberized_hinge_0.2", "squared", "huber_1",
                    "huber_0.3", "huber_small_domain", "biweight_default", "biweight_1.5"}
TIGHT_HESSIAN_LIPSCHITZ = {"logistic", "biweight_default", "biweight_1.5", "squared"}


def label_grid(loss, label_bound):
    if loss.binary:
        return np.array([-1.0, 1.0])
    return np.linspace(-label_bound, label_bound, 21)


# ----------------------------------------------------------------------------------------
# 1. losses
# ----------------------------------------------------------------------------------------


def test_loss_registry_and_make_loss():
    assert set(LOSSES) == {"logistic", "huberized_hinge", "hinge", "squared", "huber",
                           "sigmoid_squared", "biweight"}
    for name, cls in LOSSES.items():
        loss = make_loss(name)
        assert isinstance(loss, cls) and loss.name == name
    obj = Huber(0.25)
    assert make_loss(obj) is obj
    binary = {name for name, cls in LOSSES.items() if cls.binary}
    assert binary == {"logistic", "huberized_hinge", "hinge"}
    assert {name for name, cls in LOSSES.items() if not cls.convex} == {"sigmoid_squared", "biweight"}


@pytest.mark.parametrize("case", LOSS_CASES, ids=LOSS_IDS)
def test_loss_derivatives_match_finite_differences(case):
    _, loss, _, label_bound = case
    rng = np.random.default_rng(11)
    a = rng.uniform(-6.0, 6.0, size=600)
    if loss.binary:
        y = np.where(rng.random(600) < 0.5, 1.0, -1.0)
    else:
        y = rng.uniform(-label_bound, label_bound, size=600)
    keep = kink_distance(loss, a, y) > 1e-3
    a, y = a[keep], y[keep]
    assert a.size > 500
    h = 1e-5
    fd1 = (loss.value(a + h, y) - loss.value(a - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(a, y), fd1, rtol=1e-6, atol=1e-7)
    fd2 = (loss.derivative(a + h, y) - loss.derivative(a - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.curvature(a, y), fd2, rtol=1e-6, atol=1e-7)
    # shapes broadcast and values are finite
    assert loss.value(a, y).shape == a.shape
    assert np.all(np.isfinite(loss.value(a, y)))


def test_logistic_derivative_is_exact_at_the_tails_and_keeps_the_precision():
    from scipy.special import expit

    from dperm.problem.losses import Logistic

    loss = Logistic()
    a = np.array([-1e4, -800.0, -30.0, -1.0, 0.0, 1e-8, 2.0, 40.0, 800.0, 1e4])
    for y in (np.ones_like(a), -np.ones_like(a)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow warning escapes
            ours = loss.derivative(a, y)
        np.testing.assert_allclose(ours, -y * expit(-y * a), rtol=1e-15, atol=0)
        assert np.all(np.abs(ours) <= 1.0)  # the Lipschitz constant L_phi = 1 holds exactly
    assert isinstance(loss.derivative(2.0, 1.0), float) and loss.derivative(2.0, 1.0) == pytest.approx(-expit(-2.0))
    assert loss.derivative(np.float32([1, 2]), np.float32([1, -1])).dtype == np.float32
    assert loss.derivative(np.array([1, 2]), np.array([1, -1])).dtype == np.float64
    margins = np.arange(6.0).reshape(2, 3)
    assert loss.derivative(margins, np.ones((2, 3))).shape == (2, 3) and margins[0, 1] == 1.0  # input untouched


def test_loss_values_closed_form():
    a = np.array([-2.0, -0.3, 0.0, 0.7, 1.0, 1.4, 3.0])
    y = np.ones_like(a)
    np.testing.assert_allclose(Logistic().value(a, y), np.log1p(np.exp(-a)), rtol=1e-13)
    np.testing.assert_allclose(Logistic().value(a, -y), np.log1p(np.exp(a)), rtol=1e-13)
    np.testing.assert_allclose(Hinge().value(a, y), np.maximum(0, 1 - a))
    h = 0.5
    z = a
    expected = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
    np.testing.assert_allclose(HuberizedHinge(h).value(a, y), expected)
    yr = np.full_like(a, 0.4)
    np.testing.assert_allclose(Squared().value(a, yr), 0.5 * (a - yr) ** 2)
    r = a - yr
    np.testing.assert_allclose(Huber(1.0).value(a, yr), np.where(np.abs(r) <= 1, 0.5 * r**2, np.abs(r) - 0.5))
    c = 1.5
    u = np.minimum((r / c) ** 2, 1)
    np.testing.assert_allclose(Biweight(c).value(a, yr), c**2 / 6 * (1 - (1 - u) ** 3))
    assert Biweight(c).value(np.array([100.0]), np.array([0.0]))[0] == pytest.approx(c**2 / 6)
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(SigmoidSquared("sigmoid").value(a, yr), (s - yr) ** 2, rtol=1e-12)
    from scipy.stats import norm

    np.testing.assert_allclose(SigmoidSquared("probit").value(a, yr), (norm.cdf(a) - yr) ** 2, rtol=1e-12)
    # logistic is numerically stable at huge margins
    big = np.array([800.0, -800.0])
    assert np.all(np.isfinite(Logistic().value(big, np.ones(2))))
    assert Logistic().value(big, np.ones(2))[1] == pytest.approx(800.0)


@pytest.mark.parametrize("case", LOSS_CASES, ids=LOSS_IDS)
def test_loss_constants_bound_grid_search(case):
    """Declared L_phi, beta_phi, rho_phi bound the grid maxima of |phi'|, |phi''|, and the
    difference quotients of phi, phi', phi'' (mean-value theorem: exact upper bounds)."""
    cid, loss, M, B = case
    a = np.linspace(-M, M, 20001)
    delta = a[1] - a[0]
    L = loss.lipschitz(M, B)
    beta = loss.smoothness(M, B)
    rho = loss.hessian_lipschitz(M, B)
    max_d1 = max_d2 = max_q0 = max_q1 = max_q2 = 0.0
    for yv in label_grid(loss, B):
        y = np.full_like(a, yv)
        v, d1, d2 = loss.value(a, y), loss.derivative(a, y), loss.curvature(a, y)
        max_d1 = max(max_d1, np.abs(d1).max())
        max_d2 = max(max_d2, np.abs(d2).max())
        max_q0 = max(max_q0, (np.abs(np.diff(v)) / delta).max())
        max_q1 = max(max_q1, (np.abs(np.diff(d1)) / delta).max())
        max_q2 = max(max_q2, (np.abs(np.diff(d2)) / delta).max())

    assert max_d1 <= L * (1 + 1e-12) + 1e-12
    assert max_q0 <= L * (1 + 1e-9) + 1e-9
    if cid in TIGHT_LIPSCHITZ:
        assert max_d1 >= 0.9 * L, (max_d1, L)

    if math.isinf(beta):
        assert not loss.smooth
    else:
        assert loss.smooth
        assert max_d2 <= beta * (1 + 1e-12) + 1e-12
        assert max_q1 <= beta * (1 + 1e-9) + 1e-9
        if cid in TIGHT_SMOOTHNESS:
            assert max_d2 >= 0.9 * beta, (max_d2, beta)

    if math.isinf(rho):
        # only losses with a jumping phi'' may leave rho infinite
        assert not loss.twice_differentiable
    else:
        assert loss.twice_differentiable
        assert max_q2 <= rho * (1 + 1e-9) + 1e-9, (max_q2, rho)
        if cid in TIGHT_HESSIAN_LIPSCHITZ:
            assert max_q2 >= 0.9 * rho - 1e-12, (max_q2, rho)


def test_loss_constant_formulas():
    """The constants documented in the docstrings, as numbers."""
    assert Logistic().lipschitz() == 1.0
    assert Logistic().smoothness() == 0.25
    assert Logistic().hessian_lipschitz() == pytest.approx(1 / (6 * math.sqrt(3)))
    assert HuberizedHinge(0.2).smoothness() == pytest.approx(2.5)
    assert Hinge().smoothness() == math.inf
    assert Squared().lipschitz(3.0, 0.5) == 3.5
    assert Squared().lipschitz() == math.inf  # unbounded margins
    assert Squared().hessian_lipschitz() == 0.0
    assert Huber(0.7).lipschitz(10.0, 1.0) == 0.7
    assert Huber(0.7).lipschitz(0.1, 0.2) == pytest.approx(0.3)
    c = 3.0
    assert Biweight(c).lipschitz() == pytest.approx(16 * c / (25 * math.sqrt(5)))
    assert Biweight(c).smoothness() == 1.0
    assert Biweight(c).hessian_lipschitz() == pytest.approx(8 / c)
    # sigmoid-squared with B = 1 + label_bound bounding |s - y|
    s = SigmoidSquared("sigmoid")
    assert s.lipschitz(math.inf, 2.0) == pytest.approx(2 * 3 * 0.25)
    p = SigmoidSquared("probit")
    assert p.lipschitz(math.inf, 1.0) == pytest.approx(2 * 2 / math.sqrt(2 * math.pi))


def test_sigmoid_link_suprema_by_grid():
    """sup s', sup |s''|, sup |s'''| used in the sigmoid-squared constants."""
    a = np.linspace(-20, 20, 400001)
    for link in ("sigmoid", "probit"):
        loss = SigmoidSquared(link)
        s, d1, d2 = loss._link(a)
        d3 = np.gradient(d2, a)
        b1, b2, b3 = loss._link_bounds()
        assert d1.max() == pytest.approx(b1, rel=1e-8)
        assert np.abs(d2).max() == pytest.approx(b2, rel=1e-6)
        assert np.abs(d3).max() == pytest.approx(b3, rel=1e-5)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_check_labels(name):
    loss = make_loss(name)
    loss.check_labels(np.array([-1.0, 1.0, 1.0]))
    loss.check_labels(np.array([-1, 1]))
    bad = [np.array([0.0, 1.0]), np.array([1.0, 0.5]), np.array([-2.0, 1.0])]
    for y in bad:
        if loss.binary:
            with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
                loss.check_labels(y)
        else:
            loss.check_labels(y)  # real labels are accepted


@pytest.mark.parametrize(
    "factory",
    [lambda: Huber(0.0), lambda: Huber(-1.0), lambda: Huber(math.inf), lambda: HuberizedHinge(0.0),
     lambda: HuberizedHinge(math.nan), lambda: Biweight(-2.0), lambda: Biweight(math.nan),
     lambda: SigmoidSquared("tanh")],
)
def test_bad_loss_parameters(factory):
    with pytest.raises(ValueError):
        factory()


# ----------------------------------------------------------------------------------------
# 2. regularizers
# ----------------------------------------------------------------------------------------

REGULARIZERS = [
    ("none", NoRegularizer(), 0.0, 0.0),
    ("l2", L2(0.3), 0.0, 0.3),
    ("l1", L1(0.2), 0.2, 0.0),
    ("elastic_net", ElasticNet(0.4, 0.25), 0.1, 0.3),
    ("elastic_net_pure_l1", ElasticNet(0.4, 1.0), 0.4, 0.0),
    ("elastic_net_pure_l2", ElasticNet(0.4, 0.0), 0.0, 0.4),
]
REG_IDS = [r[0] for r in REGULARIZERS]


@pytest.mark.parametrize("case", REGULARIZERS, ids=REG_IDS)
def test_regularizer_value_and_constants(case):
    _, reg, l1, l2 = case
    assert reg.l1 == pytest.approx(l1) and reg.l2 == pytest.approx(l2)
    rng = np.random.default_rng(3)
    w = rng.normal(size=7)
    expected = l1 * np.abs(w).sum() + 0.5 * l2 * (w @ w)
    assert reg.value(w) == pytest.approx(expected, rel=1e-13, abs=1e-15)
    assert reg.value(np.zeros(7)) == 0.0
    assert reg.strong_convexity == pytest.approx(l2)
    assert reg.smoothness == pytest.approx(l2)
    assert reg.is_smooth == (l1 == 0.0)
    # smooth gradient = gradient of the l2 part (finite differences)
    h = 1e-6
    e = np.eye(7)
    fd = np.array([(0.5 * l2 * ((w + h * e[j]) @ (w + h * e[j])) - 0.5 * l2 * ((w - h * e[j]) @ (w - h * e[j])))
                   / (2 * h) for j in range(7)])
    np.testing.assert_allclose(reg.smooth_gradient(w), fd, atol=1e-8)
    # mu-strong convexity: r(u) >= r(w) + <s, u - w> + mu/2 ||u - w||^2 with s in dr(w)
    s = l2 * w + l1 * np.sign(w)
    for _ in range(20):
        u = rng.normal(size=7) * 2
        gap = reg.value(u) - reg.value(w) - s @ (u - w) - 0.5 * reg.strong_convexity * ((u - w) @ (u - w))
        assert gap >= -1e-12
    # and mu is the best constant for the quadratic part (equality when signs agree)
    u = w + 0.01 * np.sign(w) * rng.random(7)
    gap = reg.value(u) - reg.value(w) - s @ (u - w) - 0.5 * reg.strong_convexity * ((u - w) @ (u - w))
    assert abs(gap) < 1e-12


@pytest.mark.parametrize("case", REGULARIZERS, ids=REG_IDS)
@pytest.mark.parametrize("step", [0.05, 0.7, 3.0])
def test_prox_is_the_argmin(case, step):
    _, reg, l1, l2 = case
    rng = np.random.default_rng(5)
    v = rng.normal(size=6) * 1.5
    v[0] = 0.0
    v[1] = 1e-3  # inside the soft-threshold dead zone for l1 > 0
    u = reg.prox(v, step)
    # closed form: soft threshold then shrink
    np.testing.assert_allclose(u, soft_threshold(v, step * l1) / (1 + step * l2), atol=1e-15)
    # brute force: the problem is separable; minimize each coordinate numerically
    for j in range(6):
        f = lambda t, vj=v[j]: 0.5 * (t - vj) ** 2 + step * (l1 * abs(t) + 0.5 * l2 * t * t)  # noqa: E731
        res = optimize.minimize_scalar(f, bounds=(-abs(v[j]) - 1, abs(v[j]) + 1), method="bounded",
                                       options={"xatol": 1e-12})
        assert u[j] == pytest.approx(res.x, abs=1e-7)
        assert f(u[j]) <= res.fun + 1e-14
    # full-dimensional brute force via a smooth split u = p - q, p, q >= 0
    def split(z):
        p, q = z[:6], z[6:]
        w = p - q
        val = 0.5 * ((w - v) @ (w - v)) + step * (l1 * (p + q).sum() + 0.5 * l2 * (w @ w))
        gw = (w - v) + step * l2 * w
        return val, np.concatenate([gw + step * l1, -gw + step * l1])

    res = optimize.minimize(split, np.zeros(12), jac=True, method="L-BFGS-B", bounds=[(0, None)] * 12,
                            options={"gtol": 1e-13, "ftol": 0.0, "maxiter": 10000})
    np.testing.assert_allclose(u, res.x[:6] - res.x[6:], atol=1e-6)
    # optimality: (v - u)/step - l2 u is in l1 * d|u|
    g = (v - u) / step - l2 * u
    nz = u != 0
    np.testing.assert_allclose(g[nz], l1 * np.sign(u[nz]), atol=1e-12)
    assert np.all(np.abs(g[~nz]) <= l1 + 1e-12)
    if l1 > 0:
        assert u[1] == 0.0 and u[0] == 0.0
    # prox does not modify its input
    assert v[1] == 1e-3


@pytest.mark.parametrize("case", REGULARIZERS, ids=REG_IDS)
def test_nonsmooth_prox_and_subgradient_distance(case):
    _, reg, l1, _ = case
    rng = np.random.default_rng(8)
    v = rng.normal(size=5)
    np.testing.assert_allclose(reg.nonsmooth_prox(v, 0.5), soft_threshold(v, 0.5 * l1))
    # brute force of min over s in [-1, 1] (w_j = 0) of ||g + l1 s||
    w = np.array([0.0, 1.0, -2.0, 0.0, 0.0])
    g = np.array([0.05, 0.3, -0.1, -0.5, 0.15])
    expected = []
    for j in range(5):
        if w[j] != 0:
            expected.append(g[j] + l1 * np.sign(w[j]))
        else:
            s = np.linspace(-1, 1, 200001)
            expected.append(np.abs(g[j] + l1 * s).min())
    assert reg.subgradient_distance(w, g) == pytest.approx(np.linalg.norm(expected), abs=1e-5)


def test_soft_threshold_closed_form():
    v = np.array([-3.0, -0.5, 0.0, 0.2, 0.5, 4.0])
    np.testing.assert_allclose(soft_threshold(v, 0.5), [-2.5, 0.0, 0.0, 0.0, 0.0, 3.5])


def test_l2_prox_accepts_integer_vectors():
    np.testing.assert_allclose(L2(1.0).prox(np.array([1, 2]), 1.0), [0.5, 1.0])


def test_make_regularizer():
    assert isinstance(make_regularizer(None), NoRegularizer)
    assert make_regularizer(("l2", 0.5)) == L2(0.5)
    assert make_regularizer(("l1", 0.5)) == L1(0.5)
    en = make_regularizer(["elastic_net", 1.0, 0.3])
    assert en.l1 == pytest.approx(0.3) and en.l2 == pytest.approx(0.7)
    reg = L1(0.1)
    assert make_regularizer(reg) is reg
    for bad in ["l2", ("l3", 1.0), ("l2",), ("l2", 1.0, 2.0), ("elastic_net", 1.0), 3.0]:
        with pytest.raises(ValueError):
            make_regularizer(bad)
    for bad in [lambda: L2(-1.0), lambda: L1(math.inf), lambda: L2(math.nan),
                lambda: ElasticNet(1.0, 1.5), lambda: ElasticNet(-1.0, 0.5)]:
        with pytest.raises(ValueError):
            bad()
    for bad in [lambda: L2("1"), lambda: L1(True), lambda: ElasticNet(1.0, None)]:
        with pytest.raises(TypeError):
            bad()


# ----------------------------------------------------------------------------------------
# 3. constraints
# ----------------------------------------------------------------------------------------

BOUNDED = [("l2_ball", L2Ball(0.8)), ("l1_ball", L1Ball(1.3)), ("box", Box(0.6))]


def points_in(constraint, rng, d, count=60):
    """Random points of C: projections of random points, scaled interior points, vertices."""
    pts = [constraint.project(rng.normal(size=d) * 3) for _ in range(count)]
    pts += [constraint.project(rng.normal(size=d) * 3) * rng.random() for _ in range(count)]
    if hasattr(constraint, "vertices"):
        pts += list(constraint.vertices(d))
    return np.array(pts)


@pytest.mark.parametrize("case", BOUNDED, ids=[c[0] for c in BOUNDED])
def test_projection_is_feasible_and_closest(case):
    _, C = case
    d = 5
    rng = np.random.default_rng(21)
    U = points_in(C, rng, d)
    assert all(C.contains(u) for u in U)
    for scale in (0.1, 1.0, 5.0):
        for _ in range(30):
            v = rng.normal(size=d) * scale
            p = C.project(v)
            assert C.minkowski_norm(p) <= 1 + 1e-12
            # variational inequality <v - p, u - p> <= 0 for every u in C
            assert np.max((U - p) @ (v - p)) <= 1e-9
            # closest point: no sampled point of C is nearer
            assert np.linalg.norm(v - p) <= np.linalg.norm(U - v, axis=1).min() + 1e-12
            # points of C are fixed
            if C.minkowski_norm(v) <= 1:
                np.testing.assert_allclose(p, v, atol=1e-15)
            # idempotent
            np.testing.assert_allclose(C.project(p), p, atol=1e-12)


def test_l2_ball_and_box_projection_closed_form():
    rng = np.random.default_rng(2)
    v = rng.normal(size=6) * 3
    np.testing.assert_allclose(L2Ball(0.5).project(v), 0.5 * v / np.linalg.norm(v))
    np.testing.assert_allclose(Box(0.5).project(v), np.clip(v, -0.5, 0.5))
    small = v / np.linalg.norm(v) * 0.2
    np.testing.assert_array_equal(L2Ball(0.5).project(small), small)


def _l1_projection_reference(v, radius):
    """Independent L1-ball projection: soft threshold at the root theta of
    sum(max(|v| - theta, 0)) = radius, found by Brent's method."""
    if np.abs(v).sum() <= radius:
        return v.copy()
    theta = optimize.brentq(lambda t: np.maximum(np.abs(v) - t, 0).sum() - radius, 0.0, np.abs(v).max(),
                            xtol=1e-15, rtol=1e-15)
    return np.sign(v) * np.maximum(np.abs(v) - theta, 0.0)


@pytest.mark.parametrize("radius", [0.01, 0.3, 1.0, 2.5, 10.0])
def test_l1_projection_against_brute_force(radius):
    rng = np.random.default_rng(int(radius * 100))
    C = L1Ball(radius)
    for k in range(40):
        d = 1 + k % 9
        v = rng.normal(size=d) * rng.choice([0.1, 1.0, 4.0])
        p = C.project(v)
        np.testing.assert_allclose(p, _l1_projection_reference(v, radius), atol=1e-10)
        if np.abs(v).sum() > radius:
            assert np.abs(p).sum() == pytest.approx(radius, rel=1e-12)
        else:
            np.testing.assert_array_equal(p, v)
    # a brute force by constrained minimization on one point (split variables, SLSQP)
    v = np.array([0.9, -0.4, 0.05, 1.7, -1.1])
    if np.abs(v).sum() > radius:
        res = optimize.minimize(
            lambda z: 0.5 * np.sum((z[:5] - z[5:] - v) ** 2), np.zeros(10), method="SLSQP",
            jac=lambda z: np.concatenate([z[:5] - z[5:] - v, -(z[:5] - z[5:] - v)]),
            bounds=[(0, None)] * 10,
            constraints=[{"type": "ineq", "fun": lambda z: radius - z.sum(), "jac": lambda z: -np.ones(10)}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        np.testing.assert_allclose(C.project(v), res.x[:5] - res.x[5:], atol=1e-6)


def test_l1_projection_edge_cases():
    np.testing.assert_allclose(project_l1_ball(np.array([1.0, 1.0, 1.0, -1.0]), 2.0), [0.5, 0.5, 0.5, -0.5])
    np.testing.assert_allclose(project_l1_ball(np.array([0.0, 3.0, 0.0]), 1.0), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(project_l1_ball(np.array([2.0, -2.0]), 1.0), [0.5, -0.5])
    inside = np.array([0.2, -0.3, 0.0])
    out = project_l1_ball(inside, 1.0)
    np.testing.assert_array_equal(out, inside)
    assert out is not inside
    # exactly on the boundary stays put
    np.testing.assert_array_equal(project_l1_ball(np.array([0.25, -0.75]), 1.0), [0.25, -0.75])


@pytest.mark.parametrize("case", BOUNDED, ids=[c[0] for c in BOUNDED])
def test_lmo_is_the_linear_minimizer(case):
    name, C = case
    d = 5
    rng = np.random.default_rng(9)
    U = points_in(C, rng, d)
    for _ in range(40):
        g = rng.normal(size=d)
        s = C.lmo(g)
        assert C.contains(s)
        assert g @ s <= (U @ g).min() + 1e-12
        if name == "l2_ball":
            np.testing.assert_allclose(s, -C.radius * g / np.linalg.norm(g))
            assert g @ s == pytest.approx(-C.radius * np.linalg.norm(g))
        else:
            V = C.vertices(d)
            assert g @ s == pytest.approx((V @ g).min(), abs=1e-12)
            # the LMO returns a vertex
            assert np.min(np.linalg.norm(V - s, axis=1)) == 0.0
        if name == "l1_ball":
            assert g @ s == pytest.approx(-C.radius * np.abs(g).max())
        if name == "box":
            assert g @ s == pytest.approx(-C.radius * np.abs(g).sum())
    # zero direction: any point of C is a minimizer, but it must be in C
    assert C.contains(C.lmo(np.zeros(d)))


def test_vertices_norms_radius_diameter():
    d = 4
    l1 = L1Ball(1.5)
    V = l1.vertices(d)
    assert V.shape == (2 * d, d)
    np.testing.assert_allclose(V[:d], 1.5 * np.eye(d))
    np.testing.assert_allclose(V[d:], -1.5 * np.eye(d))
    box = Box(0.5)
    B = box.vertices(d)
    assert B.shape == (2**d, d)
    assert len({tuple(r) for r in B}) == 2**d
    assert np.all(np.abs(B) == 0.5)
    with pytest.raises(ValueError):
        box.vertices(21)

    # l2_radius is the largest norm of a vertex / point, diameter the largest distance
    assert l1.l2_radius(d) == pytest.approx(np.linalg.norm(V, axis=1).max())
    assert box.l2_radius(d) == pytest.approx(np.linalg.norm(B, axis=1).max())
    assert box.l2_radius(d) == pytest.approx(0.5 * math.sqrt(d))
    for C, P in ((l1, V), (box, B)):
        dists = np.linalg.norm(P[:, None, :] - P[None, :, :], axis=2)
        assert C.diameter(d) == pytest.approx(dists.max())
    ball = L2Ball(0.7)
    assert ball.l2_radius(d) == 0.7 and ball.diameter(d) == pytest.approx(1.4)
    rng = np.random.default_rng(4)
    P = points_in(ball, rng, d)
    assert np.linalg.norm(P, axis=1).max() <= 0.7 + 1e-12

    # Minkowski gauges
    w = np.array([0.3, -0.4, 0.0, 1.2])
    assert ball.minkowski_norm(w) == pytest.approx(np.linalg.norm(w) / 0.7)
    assert l1.minkowski_norm(w) == pytest.approx(1.9 / 1.5)
    assert box.minkowski_norm(w) == pytest.approx(1.2 / 0.5)
    assert box.minkowski_norm(np.zeros(0)) == 0.0
    for C in (ball, l1, box):
        m = C.minkowski_norm(w)
        # positively homogeneous, and w / m lies on the boundary
        assert C.minkowski_norm(3 * w) == pytest.approx(3 * m)
        assert C.contains(w / m) and not C.contains(w / m * 1.001)
        np.testing.assert_allclose(C.project(w / m), w / m, atol=1e-12)
        assert C.bounded


def test_unconstrained():
    C = Unconstrained()
    v = np.array([1e6, -3.0, 0.0])
    p = C.project(v)
    np.testing.assert_array_equal(p, v)
    assert p is not v
    assert not C.bounded and C.l2_radius(3) == math.inf and C.diameter(3) == math.inf
    assert C.minkowski_norm(v) == 0.0 and C.contains(v)
    with pytest.raises(ValueError):
        C.lmo(v)


def test_make_constraint():
    assert isinstance(make_constraint(None), Unconstrained)
    assert make_constraint(("l2_ball", 2)) == L2Ball(2.0)
    assert make_constraint(("l1_ball", 0.5)) == L1Ball(0.5)
    assert make_constraint(["box", 3.0]) == Box(3.0)
    b = Box(1.0)
    assert make_constraint(b) is b
    for bad in ["box", ("ball", 1.0), ("box",), ("box", 1.0, 2.0)]:
        with pytest.raises(ValueError):
            make_constraint(bad)
    for bad in [0.0, -1.0, math.inf, math.nan]:
        with pytest.raises(ValueError):
            L2Ball(bad)
        with pytest.raises(ValueError):
            make_constraint(("l1_ball", bad))
    for bad in ["1", True, None]:
        with pytest.raises(TypeError):
            Box(bad)


# ----------------------------------------------------------------------------------------
# 4. the ERM problem
# ----------------------------------------------------------------------------------------

ERM_LOSSES = ["logistic", "huberized_hinge", "hinge", "squared", "huber", "sigmoid_squared", "biweight"]
ERM_REGS = [None, ("l2", 0.1), ("elastic_net", 0.2, 0.4), ("l1", 0.05)]
ERM_REG_IDS = ["none", "l2", "enet", "l1"]


def make_problem(loss="logistic", regularizer=None, constraint=None, n=50, d=5, seed=0, data_norm=1.0,
                 sparse=False, density=None, **kw):
    rng = np.random.default_rng(seed)
    X = unit_rows(rng, n, d, norm=data_norm)
    if density is not None:
        X = X * (rng.random((n, d)) < density)
    y = labels_for(make_loss(loss), rng, n, X)
    if not make_loss(loss).binary:
        y = y * min(1.0, kw.get("label_bound", 1.0))  # stay within the declared label bound
    if sparse:
        X = sp.csr_matrix(X)
    return ERMProblem(X, y, loss, regularizer, constraint, data_norm=data_norm, **kw)


def fd_grad(f, w, h=1e-6):
    e = np.eye(w.size)
    return np.array([(f(w + h * e[j]) - f(w - h * e[j])) / (2 * h) for j in range(w.size)])


def away_from_zero(rng, d):
    return rng.choice([-1.0, 1.0], size=d) * rng.uniform(0.2, 1.5, size=d)


@pytest.mark.parametrize("reg", ERM_REGS, ids=ERM_REG_IDS)
@pytest.mark.parametrize("loss", ERM_LOSSES)
def test_objective_and_gradient_vs_finite_differences(loss, reg):
    p = make_problem(loss, reg, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(3):
        w = away_from_zero(rng, p.d)
        X, y = p.X, p.y
        expected = np.mean(p.loss.value(X @ w, y)) + p.regularizer.value(w)
        assert p.objective(w) == pytest.approx(expected, rel=1e-13)
        assert p.loss_value(w) == pytest.approx(np.mean(p.loss.value(X @ w, y)), rel=1e-13)
        # F is differentiable at w (no coordinate at zero); its derivative is the smooth
        # gradient plus the l1 part l1 * sign(w)
        fd = fd_grad(p.objective, w)
        g = p.gradient(w)
        np.testing.assert_allclose(g + p.regularizer.l1 * np.sign(w), fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(p.loss_gradient(w), fd_grad(p.loss_value, w), rtol=1e-6, atol=1e-7)
        val, grad = p.value_and_gradient(w)
        assert val == pytest.approx(p.objective(w), rel=1e-14)
        np.testing.assert_allclose(grad, g, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("loss", ERM_LOSSES)
def test_per_example_and_batch_gradients(loss):
    p = make_problem(loss, ("l2", 0.1), seed=3)
    rng = np.random.default_rng(4)
    w = rng.normal(size=p.d)
    G = p.per_example_gradients(w)
    assert G.shape == (p.n, p.d)
    manual = np.array([p.loss.derivative(np.array([p.X[i] @ w]), np.array([p.y[i]]))[0] * p.X[i]
                       for i in range(p.n)])
    np.testing.assert_allclose(G, manual, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(G.mean(axis=0), p.loss_gradient(w), rtol=1e-12, atol=1e-15)
    rows = np.array([3, 17, 17, 40, 0, 49])
    np.testing.assert_allclose(p.per_example_gradients(w, rows), manual[rows], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p.batch_loss_gradient(w, rows), manual[rows].mean(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p.batch_loss_gradient(w, np.arange(p.n)), p.loss_gradient(w), rtol=1e-12, atol=1e-15)
    # per-example gradients of a Lipschitz loss are bounded by L (here C = R^d: only for
    # losses whose L does not need a bounded margin)
    if math.isfinite(p.lipschitz):
        assert np.linalg.norm(G, axis=1).max() <= p.lipschitz * (1 + 1e-12)


@pytest.mark.parametrize("reg", [None, ("l2", 0.3), ("elastic_net", 0.2, 0.5)], ids=["none", "l2", "enet"])
@pytest.mark.parametrize("loss", ["logistic", "squared", "huber", "sigmoid_squared", "biweight", "huberized_hinge"])
def test_hessian_vector_and_hessian(loss, reg):
    p = make_problem(loss, reg, seed=5)
    rng = np.random.default_rng(6)
    for _ in range(2):
        w = rng.normal(size=p.d)
        v = rng.normal(size=p.d)
        H = p.hessian(w)
        assert H.shape == (p.d, p.d)
        np.testing.assert_allclose(H, H.T, atol=1e-15)
        hv = p.hessian_vector(w, v)
        np.testing.assert_allclose(hv, H @ v, rtol=1e-12, atol=1e-14)
        h = 1e-6
        fd = (p.gradient(w + h * v) - p.gradient(w - h * v)) / (2 * h)
        np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-7)
        # full Hessian column by column against finite differences
        fdH = np.column_stack([fd_grad(lambda u, j=j: p.gradient(u)[j], w) for j in range(p.d)])
        np.testing.assert_allclose(H, fdH, rtol=1e-6, atol=1e-7)


def test_hessian_vector_cache_follows_w():
    """hessian_vector caches phi'' for the last w; alternating points must not reuse it."""
    p = make_problem("logistic", ("l2", 0.01), seed=7)
    rng = np.random.default_rng(8)
    w1, w2, v = rng.normal(size=(3, p.d)) * 3
    H1, H2 = p.hessian(w1), p.hessian(w2)
    for _ in range(2):
        np.testing.assert_allclose(p.hessian_vector(w1, v), H1 @ v, rtol=1e-12)
        np.testing.assert_allclose(p.hessian_vector(w2, v), H2 @ v, rtol=1e-12)
    w = w1.copy()
    p.hessian_vector(w, v)
    w *= -2  # mutate in place: a new point
    np.testing.assert_allclose(p.hessian_vector(w, v), p.hessian(w) @ v, rtol=1e-12)
    assert not np.allclose(H1 @ v, H2 @ v)


@pytest.mark.parametrize("loss,reg", [("logistic", ("l2", 0.1)), ("squared", ("elastic_net", 0.2, 0.5)),
                                      ("huber", None), ("biweight", ("l1", 0.1))])
def test_dense_and_sparse_agree(loss, reg):
    rng = np.random.default_rng(10)
    n, d = 50, 6
    X = unit_rows(rng, n, d, norm=1.5) * (rng.random((n, d)) < 0.5)
    X[3] *= 4.0  # one row above data_norm: clipped the same way in both formats
    y = labels_for(make_loss(loss), rng, n, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clipping is silent (docs/privacy.md, "Totality")
        dense = ERMProblem(X, y, loss, reg, data_norm=1.5)
        sparse = ERMProblem(sp.coo_matrix(X), y, loss, reg, data_norm=1.5)
    assert sp.issparse(sparse.X) and sparse.X.format == "csr"
    assert np.linalg.norm(dense.X[3]) == pytest.approx(1.5, rel=1e-12)
    np.testing.assert_allclose(sparse.X.toarray(), dense.X, rtol=1e-15, atol=0)
    rows = np.array([0, 3, 3, 10, 49])
    for _ in range(2):
        w = rng.normal(size=d)
        v = rng.normal(size=d)
        assert sparse.objective(w) == pytest.approx(dense.objective(w), rel=1e-13)
        np.testing.assert_allclose(sparse.gradient(w), dense.gradient(w), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.per_example_gradients(w), dense.per_example_gradients(w),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.per_example_gradients(w, rows), dense.per_example_gradients(w, rows),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.batch_loss_gradient(w, rows), dense.batch_loss_gradient(w, rows),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.hessian(w), dense.hessian(w), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.hessian_vector(w, v), dense.hessian_vector(w, v), rtol=1e-12, atol=1e-15)
        assert sparse.optimality_residual(w) == pytest.approx(dense.optimality_residual(w), rel=1e-10)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("loss", ["logistic", "squared", "sigmoid_squared"])
def test_float32_close_to_float64(loss, sparse):
    p = make_problem(loss, ("l2", 0.05), sparse=sparse, density=0.7 if sparse else None, seed=12)
    assert p.astype(np.float64) is p
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataNormWarning)  # float32 rounding must not warn
        p32 = p.astype(np.float32)
    assert p32.X.dtype == np.float32
    assert sp.issparse(p32.X) == sparse
    rng = np.random.default_rng(13)
    for _ in range(3):
        w = rng.normal(size=p.d)
        v = rng.normal(size=p.d)
        assert p32.objective(w) == pytest.approx(p.objective(w), rel=1e-6, abs=1e-7)
        g32 = p32.gradient(w)
        assert g32.dtype == np.float64  # results are reported in float64
        np.testing.assert_allclose(g32, p.gradient(w), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p32.hessian_vector(w, v), p.hessian_vector(w, v), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p32.hessian(w), p.hessian(w), rtol=1e-5, atol=1e-6)
    # the float32 rows still satisfy the declared bound
    X32 = p32.X.toarray() if sparse else p32.X
    assert np.linalg.norm(X32.astype(np.float64), axis=1).max() <= p.data_norm
    # float32 input is kept as float32
    direct = ERMProblem(np.asarray(p.X.toarray() if sparse else p.X, dtype=np.float32), p.y, loss, ("l2", 0.05))
    assert direct.X.dtype == np.float32


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_above_data_norm_are_clipped_silently(sparse, dtype):
    assert DataNormWarning is ValidationDataNormWarning
    assert issubclass(DataNormWarning, UserWarning)
    rng = np.random.default_rng(14)
    n, d, R = 40, 5, 1.5
    X = rng.normal(size=(n, d))
    X *= rng.uniform(0.3, 3.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    X = X.astype(dtype)
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    over = norms > R
    assert 5 < over.sum() < n - 5
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning and no count: both would tell rows apart
        p = ERMProblem(sp.csr_matrix(X) if sparse else X, y, "logistic", data_norm=R)
    assert not hasattr(p, "n_clipped")
    Xc = p.X.toarray() if sparse else p.X
    assert Xc.dtype == dtype
    new_norms = np.linalg.norm(Xc.astype(np.float64), axis=1)
    assert new_norms.max() <= R
    np.testing.assert_allclose(new_norms[over], R, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # rows below the bound are untouched; clipped rows keep their direction
    np.testing.assert_array_equal(Xc[~over], X[~over])
    cosine = np.einsum("ij,ij->i", Xc[over].astype(np.float64), X[over].astype(np.float64)) / (
        new_norms[over] * norms[over])
    np.testing.assert_allclose(cosine, 1.0, rtol=1e-6)


def test_rows_exactly_at_data_norm_do_not_warn():
    rng = np.random.default_rng(15)
    X = rng.normal(size=(60, 7))
    X = 2.0 * X / np.linalg.norm(X, axis=1, keepdims=True)  # some rows round an ulp above 2
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataNormWarning)
        p = ERMProblem(X, y, "logistic", data_norm=2.0)
    assert np.linalg.norm(p.X, axis=1).max() <= 2.0
    np.testing.assert_allclose(p.X, X, rtol=1e-14)


def test_labels_above_label_bound_are_clipped_silently():
    rng = np.random.default_rng(16)
    X = unit_rows(rng, 30, 3)
    y = rng.uniform(-1, 1, size=30)
    y[[2, 5]] = [3.0, -2.5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = ERMProblem(X, y, "squared", data_norm=1.0, label_bound=2.0)
    assert p.y[2] == 2.0 and p.y[5] == -2.0
    np.testing.assert_array_equal(np.delete(p.y, [2, 5]), np.delete(y, [2, 5]))
    # binary losses ignore label_bound
    yb = np.where(y > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataNormWarning)
        ERMProblem(X, yb, "logistic", label_bound=0.5)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_replace_row(sparse):
    p = make_problem("logistic", ("l2", 0.1), ("l2_ball", 2.0), sparse=sparse, seed=17)
    X0 = p.X.toarray() if sparse else p.X.copy()
    y0 = p.y.copy()
    x_new = np.array([0.1, -0.2, 0.3, 0.0, 0.4])
    q = p.replace_row(7, x_new, -p.y[7])
    Xq = q.X.toarray() if sparse else q.X
    assert sp.issparse(q.X) == sparse
    np.testing.assert_array_equal(Xq[7], x_new)
    np.testing.assert_array_equal(np.delete(Xq, 7, axis=0), np.delete(X0, 7, axis=0))
    assert q.y[7] == -y0[7]
    np.testing.assert_array_equal(np.delete(q.y, 7), np.delete(y0, 7))
    # the original is untouched and the settings carry over
    np.testing.assert_array_equal(p.X.toarray() if sparse else p.X, X0)
    np.testing.assert_array_equal(p.y, y0)
    assert (q.loss, q.regularizer, q.constraint, q.data_norm) == (p.loss, p.regularizer, p.constraint, p.data_norm)
    # objectives differ by exactly the swapped example's loss / n
    w = np.random.default_rng(18).normal(size=5)
    diff = (p.loss.value(np.array([x_new @ w]), np.array([-y0[7]]))[0]
            - p.loss.value(np.array([X0[7] @ w]), np.array([y0[7]]))[0]) / p.n
    assert q.objective(w) - p.objective(w) == pytest.approx(diff, rel=1e-9, abs=1e-14)
    # a replacement row above data_norm is clipped, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = p.replace_row(0, np.full(5, 10.0), 1.0)
    Xr = r.X.toarray() if sparse else r.X
    assert np.linalg.norm(Xr[0]) <= p.data_norm
    np.testing.assert_allclose(Xr[0], np.full(5, p.data_norm / math.sqrt(5)), rtol=1e-12)
    # a label outside the loss's domain gets weight 0 (totality), never an error
    z = p.replace_row(0, x_new, 0.0)
    assert z.sample_weight[0] == 0.0 and np.all(z.sample_weight[1:] == 1.0)


CONSTANT_CASES = [
    ("logistic", ("l2", 0.1), None, 2.0, 1.0),
    ("logistic", ("elastic_net", 0.2, 0.25), ("l1_ball", 3.0), 0.5, 1.0),
    ("huberized_hinge", None, ("box", 1.0), 1.0, 1.0),
    ("hinge", ("l1", 0.3), None, 1.0, 1.0),
    ("squared", ("l2", 0.05), ("l2_ball", 3.0), 2.0, 0.5),
    ("squared", None, None, 1.0, 1.0),
    ("huber", ("l2", 1.0), ("box", 0.2), 1.5, 2.0),
    ("sigmoid_squared", ("l2", 0.01), None, 1.0, 1.0),
    ("biweight", None, ("l2_ball", 10.0), 3.0, 1.0),
]


@pytest.mark.parametrize("case", CONSTANT_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONSTANT_CASES)])
def test_problem_constants_follow_declared_bounds(case):
    loss, reg, con, R, B = case
    p = make_problem(loss, reg, con, data_norm=R, label_bound=B, seed=19)
    C = make_constraint(con)
    r = make_regularizer(reg)
    lo = make_loss(loss)
    M = R * C.l2_radius(p.d)
    assert p.constants.margin_bound == M
    assert p.lipschitz == lo.lipschitz(M, B) * R
    assert p.smoothness == pytest.approx(lo.smoothness(M, B) * R * R + r.l2)
    assert p.constants.loss_smoothness == pytest.approx(lo.smoothness(M, B) * R * R)
    assert p.strong_convexity == r.l2
    assert p.constants.hessian_lipschitz == lo.hessian_lipschitz(M, B) * R**3
    assert p.gradient_sensitivity() == pytest.approx(2 * p.lipschitz / p.n)
    assert p.is_convex == lo.convex and p.is_smooth == lo.smooth
    assert (p.n, p.d) == (50, 5)


def test_problem_constants_numbers():
    p = make_problem("logistic", ("l2", 0.1), data_norm=2.0)
    assert (p.lipschitz, p.smoothness, p.strong_convexity) == pytest.approx((2.0, 0.25 * 4 + 0.1, 0.1))
    p = make_problem("squared", ("elastic_net", 0.2, 0.25), ("l2_ball", 3.0), data_norm=2.0, label_bound=0.5)
    # margins |<w, x>| <= 2 * 3 = 6, so L_phi = 6 + 0.5 and L = 6.5 * 2
    assert p.lipschitz == pytest.approx(13.0)
    assert p.smoothness == pytest.approx(4.0 + 0.15)
    assert p.strong_convexity == pytest.approx(0.15)
    p = make_problem("squared", None, ("box", 1.0), data_norm=1.0)
    assert p.lipschitz == pytest.approx(math.sqrt(5) + 1.0)
    assert make_problem("squared").lipschitz == math.inf
    assert make_problem("hinge").smoothness == math.inf


@pytest.mark.parametrize("loss,con,R", [("logistic", ("l2_ball", 5.0), 2.0), ("squared", ("l2_ball", 2.0), 1.5),
                                        ("squared", ("box", 0.7), 1.0), ("huber", ("l1_ball", 4.0), 1.0),
                                        ("biweight", ("l2_ball", 3.0), 2.0),
                                        ("sigmoid_squared", ("box", 3.0), 1.0)])
def test_problem_constants_are_valid_on_the_constraint_set(loss, con, R):
    """||grad f(w; x_i, y_i)|| <= L and eigenvalues of the loss Hessian <= beta for w in C,
    with rows at full norm."""
    rng = np.random.default_rng(20)
    n, d = 50, 5
    X = unit_rows(rng, n, d, low=1.0, high=1.0, norm=R)
    y = labels_for(make_loss(loss), rng, n, X)
    p = ERMProblem(X, y, loss, None, con, data_norm=R)
    C = p.constraint
    for w in points_in(C, rng, d, count=30):
        G = p.per_example_gradients(w)
        assert np.linalg.norm(G, axis=1).max() <= p.lipschitz * (1 + 1e-12)
        eig = np.linalg.eigvalsh(p.hessian(w))
        assert np.abs(eig).max() <= p.constants.loss_smoothness * (1 + 1e-12)
        if p.is_convex:
            assert eig.min() >= -1e-12


def test_effective_constraint():
    p = make_problem("logistic", ("l2", 0.1), data_norm=2.0)
    ec = p.effective_constraint()
    assert isinstance(ec, L2Ball) and ec.radius == pytest.approx(20.0)
    sol = solve_reference(p)
    assert np.linalg.norm(sol.coef) <= ec.radius
    assert make_problem("logistic", ("l2", 0.1), ("box", 1.0)).effective_constraint() == Box(1.0)
    assert make_problem("logistic").effective_constraint() is None
    assert make_problem("squared", ("l2", 0.1)).effective_constraint() is None


def test_w_shape_is_checked():
    p = make_problem()
    with pytest.raises(ValueError, match="shape"):
        p.objective(np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        p.gradient(np.zeros((5, 1)))


# ----------------------------------------------------------------------------------------
# 5. the reference solver
# ----------------------------------------------------------------------------------------


def test_reference_matches_sklearn_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    n, d, mu = 200, 5, 1e-2
    X = unit_rows(rng, n, d)
    y = labels_for(Logistic(), rng, n, X)
    p = ERMProblem(X, y, "logistic", ("l2", mu))
    sol = solve_reference(p)
    assert sol.converged and sol.residual <= 1e-8
    assert p.optimality_residual(sol.coef) <= 1e-8
    assert np.linalg.norm(p.gradient(sol.coef)) <= 1e-8
    assert sol.objective == pytest.approx(p.objective(sol.coef), rel=1e-14)
    ref = LogisticRegression(C=1 / (n * mu), fit_intercept=False, tol=1e-12, max_iter=10000,
                             solver="newton-cg").fit(X, y)
    np.testing.assert_allclose(sol.coef, ref.coef_.ravel(), atol=1e-6)
    assert np.abs(sol.coef).max() > 0.1  # a non-trivial solution
    # a warm start and a float32 copy of the problem land on the same minimizer
    np.testing.assert_allclose(solve_reference(p, w0=np.ones(d) * 3).coef, sol.coef, atol=1e-7)
    np.testing.assert_allclose(solve_reference(p.astype(np.float32)).coef, sol.coef, atol=1e-4)


def test_reference_matches_sklearn_elastic_net():
    """Squared loss + elastic net is exactly scikit-learn's ElasticNet objective."""
    from sklearn.linear_model import ElasticNet as SkElasticNet

    rng = np.random.default_rng(2)
    n, d = 80, 6
    X = unit_rows(rng, n, d)
    w_true = np.array([1.5, 0.0, -2.0, 0.0, 0.5, 0.0])
    y = np.clip(X @ w_true + 0.05 * rng.normal(size=n), -1, 1)
    lam, ratio = 0.02, 0.7
    p = ERMProblem(X, y, "squared", ("elastic_net", lam, ratio))
    sol = solve_reference(p)
    assert sol.residual <= 1e-8 and sol.converged
    ref = SkElasticNet(alpha=lam, l1_ratio=ratio, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(sol.coef, ref.coef_, atol=1e-6)
    assert np.sum(sol.coef == 0.0) >= 1


def test_reference_l1_logistic_kkt_and_brute_force():
    rng = np.random.default_rng(3)
    n, d, lam = 100, 6, 0.03
    X = unit_rows(rng, n, d)
    y = labels_for(Logistic(), rng, n, X)
    p = ERMProblem(X, y, "logistic", ("l1", lam))
    sol = solve_reference(p)
    assert sol.residual <= 1e-8 and sol.converged
    w = sol.coef
    g = p.gradient(w)
    nz = w != 0
    assert 0 < nz.sum() < d  # the l1 penalty zeroes some coordinates here
    np.testing.assert_allclose(g[nz], -lam * np.sign(w[nz]), atol=1e-8)
    assert np.all(np.abs(g[~nz]) <= lam + 1e-8)

    # independent brute force: smooth split w = a - b, a, b >= 0, with L-BFGS-B
    def split(z):
        u = z[:d] - z[d:]
        gl = p.loss_gradient(u)
        return p.loss_value(u) + lam * z.sum(), np.concatenate([gl + lam, -gl + lam])

    res = optimize.minimize(split, np.zeros(2 * d), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * d),
                            options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 10000})
    np.testing.assert_allclose(w, res.x[:d] - res.x[d:], atol=1e-5)
    assert p.objective(w) <= res.fun + 1e-12


@pytest.mark.parametrize("con", [("l2_ball", 0.5), ("box", 0.4), ("l1_ball", 0.8)], ids=["l2_ball", "box", "l1_ball"])
def test_reference_constrained_kkt(con):
    rng = np.random.default_rng(4)
    n, d = 100, 5
    X = unit_rows(rng, n, d)
    y = labels_for(Logistic(), rng, n, X)
    p = ERMProblem(X, y, "logistic", ("l2", 1e-3), con)
    sol = solve_reference(p)
    assert sol.residual <= 1e-8 and sol.converged
    w = sol.coef
    C = p.constraint
    assert C.contains(w, tol=1e-12)
    assert C.minkowski_norm(w) == pytest.approx(1.0, abs=1e-9)  # the constraint is active here
    g = p.gradient(w)
    # -g is in the normal cone of C at w:  <g, u - w> >= 0 for all u in C
    U = points_in(C, rng, d)
    assert np.min((U - w) @ g) >= -1e-8
    assert g @ (C.lmo(g) - w) >= -1e-8  # Frank-Wolfe gap ~ 0
    # brute force with SLSQP from several starts
    cons = {"l2_ball": lambda u: 0.5**2 - u @ u, "box": lambda u: 0.4 - np.abs(u),
            "l1_ball": lambda u: 0.8 - np.abs(u).sum()}[con[0]]
    best = min(
        (optimize.minimize(p.objective, C.project(rng.normal(size=d) * 0.1), jac=p.gradient, method="SLSQP",
                           constraints=[{"type": "ineq", "fun": cons}], options={"ftol": 1e-14, "maxiter": 500})
         for _ in range(3)),
        key=lambda r: r.fun,
    )
    # SLSQP may end a hair outside C: compare with its point projected back onto C
    assert p.objective(w) <= p.objective(C.project(best.x)) + 1e-10
    np.testing.assert_allclose(w, best.x, atol=1e-4)


@pytest.mark.parametrize("loss", ["huberized_hinge", "sigmoid_squared", "squared", "biweight"])
def test_reference_residual_other_smooth_losses(loss):
    p = make_problem(loss, ("l2", 0.05), n=80, seed=22)
    sol = solve_reference(p)
    assert sol.converged and sol.residual <= 1e-8
    assert np.linalg.norm(p.gradient(sol.coef)) <= 1e-8
    # a local minimum: no nearby point is lower
    rng = np.random.default_rng(23)
    for _ in range(20):
        assert p.objective(sol.coef + 1e-3 * rng.normal(size=p.d)) >= sol.objective - 1e-12


def _hinge_data():
    rng = np.random.default_rng(0)
    n, d = 60, 4
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([2.0, -1.0, 0.5, 1.0]) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_reference_hinge_unconstrained_l2():
    """Non-smooth loss, smooth regularizer, no constraint: L-BFGS gets close to the optimum
    (checked against a projected-free subgradient-free brute force: Powell)."""
    X, y = _hinge_data()
    p = ERMProblem(X, y, "hinge", ("l2", 0.05))
    sol = solve_reference(p)
    assert not sol.converged and math.isnan(sol.residual)
    rng = np.random.default_rng(1)
    best = min((optimize.minimize(p.objective, rng.normal(size=4), method="Powell",
                                  options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100000}) for _ in range(5)),
               key=lambda r: r.fun)
    assert sol.objective <= best.fun + 1e-5


def test_reference_hinge_respects_constraint():
    X, y = _hinge_data()
    p = ERMProblem(X, y, "hinge", ("l2", 0.01), ("l2_ball", 0.5))
    sol = solve_reference(p)
    assert p.constraint.contains(sol.coef)
    # constrained minimum by projected subgradient descent (convex problem)
    w = np.zeros(4)
    best = math.inf
    for t in range(1, 5001):
        w = p.constraint.project(w - 0.5 / math.sqrt(t) * p.gradient(w))
        best = min(best, p.objective(w))
    assert sol.objective <= best + 1e-4


def test_reference_hinge_l1():
    X, y = _hinge_data()
    p = ERMProblem(X, y, "hinge", ("l1", 0.05))
    sol = solve_reference(p)
    rng = np.random.default_rng(2)
    best = min((optimize.minimize(p.objective, rng.normal(size=4), method="Powell",
                                  options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100000}) for _ in range(5)),
               key=lambda r: r.fun)
    assert sol.objective <= best.fun + 1e-4


def test_optimality_residual_nonsmooth_constrained_does_not_crash():
    X, y = _hinge_data()
    p = ERMProblem(X, y, "hinge", None, ("l2_ball", 1.0))
    r = p.optimality_residual(np.zeros(4))
    assert math.isnan(r) or r >= 0


def test_optimality_residual_definitions():
    p = make_problem("logistic", ("l1", 0.05), seed=24)
    rng = np.random.default_rng(25)
    w = rng.normal(size=p.d)
    w[1] = 0.0
    g = p.gradient(w)
    expected = g + 0.05 * np.sign(w)
    expected[1] = np.sign(g[1]) * max(abs(g[1]) - 0.05, 0.0)
    assert p.optimality_residual(w) == pytest.approx(np.linalg.norm(expected), rel=1e-12)
    np.testing.assert_array_equal(p.certified_point(w), w)
    q = make_problem("logistic", ("l2", 0.1), ("l2_ball", 0.3), seed=24)
    step = 1 / q.smoothness
    w_plus = q.constraint.project(w - step * q.gradient(w))
    np.testing.assert_allclose(q.certified_point(w), w_plus, atol=1e-15)
    assert q.optimality_residual(w) == pytest.approx(2 * np.linalg.norm(w - w_plus) / step, rel=1e-12)
    # at the minimizer the residual vanishes
    assert q.optimality_residual(solve_reference(q).coef) <= 1e-8


# ----------------------------------------------------------------------------------------
# 6. bad input
# ----------------------------------------------------------------------------------------


def _good():
    rng = np.random.default_rng(30)
    return unit_rows(rng, 10, 3), np.where(rng.random(10) < 0.5, 1.0, -1.0)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_finite_X_is_a_missing_value_imputed_by_zero(value, sparse, dtype):
    """Totality: a NaN or infinite entry is 0 (docs/privacy.md), never refused; a finite X is
    not copied (the finite-sum check)."""
    X, y = _good()
    X = X.astype(dtype)
    clean = ERMProblem(sp.csr_matrix(X) if sparse else X, y)
    if not sparse:
        assert np.shares_memory(clean.X, X)
    bad = X.copy()
    bad[4, 1] = value
    p = ERMProblem(sp.csr_matrix(bad) if sparse else bad, y)
    want = X.copy()
    want[4, 1] = 0.0
    got = p.X.toarray() if sparse else p.X
    np.testing.assert_array_equal(got, want)
    assert got.dtype == dtype
    assert np.isnan(bad[4, 1]) or np.isinf(bad[4, 1])  # the caller's X is untouched


def test_bad_labels_are_rejected():
    X, y = _good()
    with pytest.raises(ValueError, match="9 entries but X has 10 rows"):
        ERMProblem(X, y[:9])
    # totality: a label that is not a finite number (a binary loss: not -1/+1) gets weight 0
    for value in (np.nan, np.inf, -np.inf):
        p = ERMProblem(X, np.where(np.arange(10) == 3, value, y), "squared")
        np.testing.assert_array_equal(p.sample_weight, np.where(np.arange(10) == 3, 0.0, 1.0))
        assert np.isfinite(p.y).all()
    y01 = (y > 0).astype(float)
    for loss in ("logistic", "hinge", "huberized_hinge"):
        p = ERMProblem(X, y01, loss)
        np.testing.assert_array_equal(p.sample_weight, np.where(y01 == 1.0, 1.0, 0.0))
    assert ERMProblem(X, y, "logistic").sample_weight is None  # clean labels: unweighted, as before
    assert not ERMProblem(X, y * 0.5, "logistic").sample_weight.any()
    with pytest.raises(TypeError):
        ERMProblem(X, np.array(["a"] * 10))
    with pytest.raises(ValueError):
        ERMProblem(X, np.ones((10, 2)))
    # real labels are fine for regression losses
    ERMProblem(X, y01 * 0.5, "squared")


def test_bad_bounds_and_specs_are_rejected():
    X, y = _good()
    for bad in (-1.0, 0.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="data_norm"):
            ERMProblem(X, y, data_norm=bad)
        with pytest.raises(ValueError, match="label_bound"):
            ERMProblem(X, y, "squared", label_bound=bad)
    for bad in ("1", None, True):
        with pytest.raises(TypeError, match="data_norm"):
            ERMProblem(X, y, data_norm=bad)
    with pytest.raises(ValueError, match="unknown loss"):
        ERMProblem(X, y, "logistc")
    with pytest.raises(ValueError, match="unknown loss"):
        make_loss(None)
    with pytest.raises(ValueError, match="unknown regularizer"):
        ERMProblem(X, y, "logistic", ("l3", 1.0))
    with pytest.raises(ValueError, match="unknown constraint"):
        ERMProblem(X, y, "logistic", None, ("ball", 1.0))
    with pytest.raises(ValueError):
        ERMProblem(X, y, "logistic", None, ("box", -1.0))


def test_bad_X_shape_and_type_are_rejected():
    X, y = _good()
    with pytest.raises(ValueError, match="2-D"):
        ERMProblem(X[:, 0], y)
    with pytest.raises(ValueError, match="2-D"):
        ERMProblem(X[None], y)
    with pytest.raises(ValueError, match="row"):
        ERMProblem(X[:1], y[:1])
    with pytest.raises(ValueError, match="0 features"):
        ERMProblem(np.zeros((10, 0)), y)
    with pytest.raises(TypeError, match="numeric"):
        ERMProblem(X.astype(str), y)
    with pytest.raises(TypeError, match="real"):
        ERMProblem(X + 1j, y)
    # integer and boolean features are accepted and converted to float64
    p = ERMProblem((X > 0).astype(int), y, data_norm=2.0)
    assert p.X.dtype == np.float64


def test_float32_csr_rows_at_the_bound_are_not_reported_as_clipped():
    import warnings

    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 60))
    X[rng.random(X.shape) < 0.8] = 0.0
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    y = np.where(rng.random(2000) < 0.5, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problem = ERMProblem(sp.csr_matrix(X.astype(np.float32)), y, "logistic")
    norms = np.sqrt(np.asarray(problem.X.multiply(problem.X).astype(np.float64).sum(axis=1)).ravel())
    assert norms.max() <= 1.0 + 1e-6


def test_fraction_clipped_is_the_exact_share_of_rows_beyond_the_bounds():
    from dperm.problem.diagnostics import fraction_clipped

    X = np.array([[3.0, 4.0], [0.1, 0.0], [np.nan, 0.5], [0.6, 0.8]])
    y = np.array([2.0, 0.5, np.nan, -1.5])
    kept = X.copy()
    assert fraction_clipped(X, 1.0, y, 1.0) == {"rows_above_data_norm": 0.25, "labels_above_label_bound": 0.5}
    np.testing.assert_array_equal(X, kept)  # not modified
    assert fraction_clipped(sp.csr_matrix(np.nan_to_num(X)), 0.5) == {"rows_above_data_norm": 0.5}
