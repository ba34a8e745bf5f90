"""Direct fits on numeric arrays are total (issue 29; docs/privacy.md, "Totality").

Once the schema is public (the array's shape and dtype, the declared bounds and classes),
no value of one row may make a fit fail, change its structure or reach a message. For each
estimator, ``dperm.minimize`` and a lone ``PrivateScaler``, on dense float64, float32, CSR
and Dask inputs, a table and its replace-one neighbour (one row's entry of X, its label or
its weight replaced by NaN, +-inf, 1e308, ...; tests/_adversarial.py ``NUMERIC_VALUES``)
are fitted with the same seed, each with its own accountant; the test requires:

* both fit (no exception, so none after a charge);
* the same released structure: coefficient and intercept shapes, label set, ``alpha_``,
  ``solver_``, ``n_iter_``, the guarantee, the events charged, the fitted attributes;
* the same warnings (the base table has rows above ``data_norm`` and targets beyond
  ``label_bound``, as raw data has: the clipping warning is shown for both);
* the documented map: the fit on the neighbour equals the fit on the base table with the
  replaced entry set to 0 (X), or the row's weight set to 0 (a label or a weight).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dperm
from dperm import (DPGLMRegressor, DPHuberRegressor, DPLinearRegression, DPLinearSVC, DPLogisticRegression,
                   DPRobustRegressor)
from dperm.preprocessing import PrivateScaler
from dperm.privacy.budget import BudgetAccountant

from _adversarial import NUMERIC_VALUES

pytestmark = pytest.mark.filterwarnings("default::UserWarning")  # recorded and compared, not errors

N, D, ROW = 120, 3, 17
CLASSIFIERS = {"DPLogisticRegression": DPLogisticRegression, "DPLinearSVC": DPLinearSVC}
REGRESSORS = {"DPLinearRegression": DPLinearRegression, "DPHuberRegressor": DPHuberRegressor,
              "DPRobustRegressor": DPRobustRegressor, "DPGLMRegressor": DPGLMRegressor}
ESTIMATORS = {**CLASSIFIERS, **REGRESSORS}
FORMATS = ["dense", "float32", "csr", "dask"]
# what one row may hold in X; the labels take the non-finite ones. Dask fits cost a graph
# each: a shorter list there (every kind of value once), on the estimators of three solvers.
X_VALUES = list(NUMERIC_VALUES)
LABEL_VALUES = [(name, v) for name, v in NUMERIC_VALUES if not np.isfinite(v)]
SHORT = {"nan", "-inf", "1e308"}
DASK_ESTIMATORS = {"DPLogisticRegression", "DPLinearRegression"}


def _values(values, fmt):
    return [(n, v) for n, v in values if n in SHORT or n == "inf"] if fmt == "dask" else values


def _data(name: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 1, (N, D))  # most rows above data_norm=1: clipped, with the warning, in both tables
    if name in CLASSIFIERS:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=N) > 0, 1.0, 0.0)
    elif name == "DPGLMRegressor":
        y = rng.uniform(-0.2, 1.2, N)  # some outside [0, 1]: clipped, with the warning, in both tables
    else:
        y = X @ np.array([0.8, -0.5, 0.3]) + 0.5 * rng.normal(size=N)  # some beyond label_bound=1
    return X, y


def _as(fmt: str, X: np.ndarray):
    if fmt == "float32":
        with np.errstate(over="ignore"):  # 1e308 is inf in float32
            return X.astype(np.float32)
    if fmt == "csr":
        return sp.csr_matrix(X)
    if fmt == "dask":
        da = pytest.importorskip("dask.array")
        return da.from_array(X, chunks=(N // 2, D))
    return X


def _csr_with(X: np.ndarray, row: int, column: int, value: float):
    """X as CSR with the entry (row, column) stored and replaced by ``value`` (so that a
    non-finite value sits in the stored data, as it would in a real sparse file)."""
    M = sp.csr_matrix(X)
    M[row, column] = 1.0 if value == 0 else value  # (a stored entry, even for a zero)
    M.data[M.indptr[row] + column] = value
    return M


def _estimator(name: str, accountant):
    kwargs = dict(random_state=3, accountant=accountant)
    if name in CLASSIFIERS:
        kwargs["classes"] = [0.0, 1.0]
    return ESTIMATORS[name](**kwargs)


def _fit(make, *args, **kwargs):
    """(structure, warnings shown, the fitted object) of one fit, with its own accountant;
    no exception may escape (a fit on a private value's neighbour never fails)."""
    accountant = BudgetAccountant(10.0, 1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = make(accountant).fit(*args, **kwargs)
    shown = [f"{w.category.__name__}: {w.message}" for w in caught]
    return _structure(fitted, accountant), shown, fitted


def _structure(model, accountant) -> dict:
    return {
        "attributes": sorted(k for k in vars(model) if k.endswith("_") and not k.startswith("_")),
        "coef": np.shape(model.coef_),
        "intercept": np.shape(model.intercept_),
        "classes": repr(getattr(model, "classes_", None)),
        "alpha": getattr(model, "alpha_", None),
        "solver": getattr(model, "solver_", None),
        "n_iter": repr(getattr(model, "n_iter_", None)),
        "spent": repr(model.privacy_spent_),
        "events": [repr(e) for e in accountant.events],
        "fits": [(f.algorithm, repr(f.hyperparameters), repr(f.event)) for f in model.fits_],
    }


def _same(first, second, what: str):
    (s1, w1, _), (s2, w2, _) = first, second
    assert s1 == s2, f"{what}: released structure differs: {s1} against {s2}"
    assert w1 == w2, f"{what}: warnings differ: {w1} against {w2}"


def _coef(fitted) -> np.ndarray:
    return np.asarray(fitted.coef_)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_an_estimator_fits_every_neighbour_of_a_numeric_array_alike(name, fmt):
    if fmt == "dask" and name not in DASK_ESTIMATORS:
        pytest.skip("Dask: one classifier and one regressor (each fit builds a graph; the map is the problem's)")
    X, y = _data(name)
    base = _fit(lambda a: _estimator(name, a), _as(fmt, X), y)
    for label, value in _values(X_VALUES, fmt):
        bad = X.copy()
        bad[ROW, 1] = value
        data = _csr_with(X, ROW, 1, value) if fmt == "csr" else _as(fmt, bad)
        other = _fit(lambda a: _estimator(name, a), data, y)
        _same(base, other, f"X[{ROW}, 1] = {label}")
        if not np.isfinite(value):  # the documented map: the entry is 0
            zero = X.copy()
            zero[ROW, 1] = 0.0
            want = _fit(lambda a: _estimator(name, a), _csr_with(X, ROW, 1, 0.0) if fmt == "csr" else _as(fmt, zero),
                        y)
            np.testing.assert_allclose(_coef(other[2]), _coef(want[2]), rtol=1e-10, atol=1e-12)
    # a label (or a regression target) that is not a finite number, and a weight
    dask = fmt == "dask"
    for label, value in _values(LABEL_VALUES, fmt):
        bad_y = y.copy()
        bad_y[ROW] = value
        other = _fit(lambda a: _estimator(name, a), _as(fmt, X), bad_y)
        _same(base, other, f"y[{ROW}] = {label}")
        fixed = y.copy()
        fixed[ROW] = 1.0 if name in CLASSIFIERS else 0.5 if name == "DPGLMRegressor" else 0.0
        if not dask:  # in memory, the row's weight is 0
            weights = np.where(np.arange(N) == ROW, 0.0, 1.0)
            want = _fit(lambda a: _estimator(name, a), _as(fmt, X), fixed, sample_weight=weights)
        else:  # on Dask data, the middle of the target range or the first class (no weight vector)
            fixed[ROW] = 0.0 if name in CLASSIFIERS else fixed[ROW]
            want = _fit(lambda a: _estimator(name, a), _as(fmt, X), fixed)
        np.testing.assert_allclose(_coef(other[2]), _coef(want[2]), rtol=1e-10, atol=1e-12)
    if name in CLASSIFIERS:  # a label outside the declared classes: weight 0 (Dask: the first class)
        bad_y = y.copy()
        bad_y[ROW] = 7.0
        _same(base, _fit(lambda a: _estimator(name, a), _as(fmt, X), bad_y), f"y[{ROW}] = 7 (not a class)")
        if dask:  # and a solver that takes no weights on Dask data runs on both neighbours alike
            mini = lambda a: ESTIMATORS[name](random_state=3, accountant=a, classes=[0.0, 1.0], solver="dp_sgd")
            _same(_fit(mini, _as(fmt, X), y), _fit(mini, _as(fmt, X), bad_y), f"dp_sgd, y[{ROW}] = 7")
    weighted = _fit(lambda a: _estimator(name, a), _as(fmt, X), y, sample_weight=np.full(N, 0.5))
    for label, value in _values(NUMERIC_VALUES, fmt):
        weights = np.full(N, 0.5)
        weights[ROW] = value
        _same(weighted, _fit(lambda a: _estimator(name, a), _as(fmt, X), y, sample_weight=weights),
              f"sample_weight[{ROW}] = {label}")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_minimize_fits_every_neighbour_of_a_numeric_array_alike(loss, fmt):
    rng = np.random.default_rng(1)
    X = rng.normal(0, 1, (N, D))
    y = np.where(X[:, 0] > 0, 1.0, -1.0) if loss == "logistic" else np.clip(X[:, 0], -1, 1) * 0.9

    class Minimize:  # dperm.minimize in the estimators' shape, for _fit
        def __init__(self, accountant):
            self.accountant = accountant

        def fit(self, X, y, sample_weight=None):
            if fmt == "dask" and not hasattr(y, "dask"):
                import dask.array as da

                y = da.from_array(np.asarray(y), chunks=N // 2)
            self.fit_ = dperm.minimize(X, y, loss=loss, regularizer=("l2", 0.1), epsilon=1.0, delta=1e-5,
                                       algorithm="objective_perturbation",
                                       random_state=5, accountant=self.accountant, sample_weight=sample_weight)
            self.coef_, self.intercept_, self.fits_ = self.fit_.coef, 0.0, [self.fit_]
            self.privacy_spent_ = self.fit_.privacy_spent
            return self

    base = _fit(Minimize, _as(fmt, X), y)
    for label, value in _values(X_VALUES, fmt):
        bad = X.copy()
        bad[ROW, 2] = value
        _same(base, _fit(Minimize, _csr_with(X, ROW, 2, value) if fmt == "csr" else _as(fmt, bad), y),
              f"X[{ROW}, 2] = {label}")
    labels = _values(LABEL_VALUES, fmt) + ([("zero", 0.0), ("two", 2.0)] if loss == "logistic" else [])
    for label, value in labels:
        if fmt == "dask" and loss == "logistic":
            continue  # binary labels on Dask data: a row cannot be weighted 0 there (docs/privacy.md)
        bad_y = y.copy()
        bad_y[ROW] = value
        _same(base, _fit(Minimize, _as(fmt, X), bad_y), f"y[{ROW}] = {label}")
    weighted = _fit(Minimize, _as(fmt, X), y, sample_weight=np.full(N, 0.5))
    for label, value in _values(NUMERIC_VALUES, fmt) + [("two", 2.0), ("-1", -1.0)]:
        weights = np.full(N, 0.5)
        weights[ROW] = value
        _same(weighted, _fit(Minimize, _as(fmt, X), y, sample_weight=weights), f"sample_weight[{ROW}] = {label}")


@pytest.mark.parametrize("fmt", ["dense", "dask"])
def test_a_lone_private_scaler_fits_every_neighbour_alike(fmt):
    rng = np.random.default_rng(2)
    X = rng.normal(5, 2, (N, 2))

    def frame(values):
        if fmt != "dask":
            return values
        import pandas as pd
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(pd.DataFrame(values, columns=["a", "b"]), npartitions=2)

    def structure(scaler, accountant):
        return {"centre": np.shape(scaler.centre_), "method": scaler.method_, "level": scaler.level_,
                "spent": repr(scaler.privacy_spent_), "event": repr(scaler.event_),
                "events": [repr(e) for e in accountant.events], "n": scaler.n_features_in_}

    def fit(values):
        accountant = BudgetAccountant(10.0, 1e-3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = PrivateScaler(epsilon=1.0, random_state=0, accountant=accountant,
                                   missing_indicator=True).fit(frame(values))
        return structure(scaler, accountant), [str(w.message) for w in caught], scaler

    base = fit(X)
    for label, value in X_VALUES:
        bad = X.copy()
        bad[ROW, 0] = value
        other = fit(bad)
        assert other[:2] == base[:2], f"X[{ROW}, 0] = {label}"
        if fmt == "dask":
            import pandas as pd
            out = other[2].transform(pd.DataFrame(bad, columns=["a", "b"]))
        else:
            out = other[2].transform(bad)  # transform maps the row too: a non-finite value is missing
        assert np.isfinite(out).all() and out.shape == (N, 4)
        if not np.isfinite(value):
            assert out[ROW, 0] == 0.0 and out[ROW, 2] == 1.0
            nan = X.copy()
            nan[ROW, 0] = np.nan  # an infinite value is a missing one: the same fit as NaN
            np.testing.assert_array_equal(fit(nan)[2].centre_, other[2].centre_)


def test_the_clean_path_makes_no_copy_of_x():
    """Keep "no copy of X" for finite data: the map copies only when a value is non-finite."""
    from dperm._validation import finite_features

    X = np.random.default_rng(0).normal(size=(50, 4))
    assert finite_features(X) is X
    X32 = X.astype(np.float32)
    assert finite_features(X32) is X32
    M = sp.csr_matrix(X)
    assert finite_features(M) is M
    huge = np.full((3, 2), 1e308)  # finite values whose sum overflows: still no copy
    assert finite_features(huge) is huge
    bad = X.copy()
    bad[3, 2] = np.nan
    got = finite_features(bad)
    assert got is not bad and got[3, 2] == 0.0 and np.isnan(bad[3, 2])


def test_public_inputs_are_still_refused_before_any_charge():
    """What stays refused: shapes, lengths and parameters (public inputs), with nothing
    charged."""
    X, y = _data("DPLinearRegression")
    accountant = BudgetAccountant(10.0, 1e-3)
    for call in (lambda: DPLinearRegression(accountant=accountant).fit(X, y[:-1]),
                 lambda: DPLinearRegression(accountant=accountant).fit(X[:, 0], y),
                 lambda: DPLinearRegression(epsilon=0.0, accountant=accountant).fit(X, y),
                 lambda: dperm.minimize(X, y[:-1], loss="squared", epsilon=1.0, accountant=accountant),
                 lambda: dperm.minimize(X, y, loss="squared", epsilon=-1.0, accountant=accountant),
                 lambda: DPLinearRegression(accountant=accountant).fit(X, y, sample_weight=np.ones(N - 1))):
        with pytest.raises((ValueError, TypeError)):
            call()
    assert not accountant.events
