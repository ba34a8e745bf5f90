"""dperm.make_pipeline: one budget shared by the private steps, composed exactly."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid
from sklearn.preprocessing import StandardScaler

import dperm
from dperm.privacy import events as ev
from dperm.privacy.accountant import epsilon as certified_epsilon
from dperm.privacy.budget import BudgetAccountant, PrivacyWarning
from dperm.preprocessing import PrivatePreprocessor


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(np.int64),
        "income": np.where(rng.random(n) < 0.05, np.nan, rng.lognormal(10, 1, n)),
        "city": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
    })
    y = np.where(X["age"] > 50, "yes", "no")
    return X, y


def test_default_preprocessing_is_inserted_and_budget_composes_to_the_total():
    X, y = _data()
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, random_state=0)
    assert isinstance(model.steps[0][1], PrivatePreprocessor)
    model.fit(X, y)
    pre, est = model.steps[0][1], model.steps[-1][1]
    assert model.event_ == ev.composed([pre.event_, est.event_])
    # the smaller of the joint composition and the sum of the parts (docs/privacy.md)
    assert model.privacy_spent_.epsilon <= certified_epsilon(model.event_, 1e-5) + 1e-12
    assert model.privacy_spent_.epsilon <= 1.0
    assert model.accountant_.spent.epsilon == pytest.approx(model.privacy_spent_.epsilon)
    # the estimator got the rest of the budget by basic composition and the public row bound:
    # the preprocessing's part is what the accountant certifies for its events at its delta
    part = model.budgets_["privatepreprocessor"]
    assert part.delta == pytest.approx(1e-6)
    assert part.epsilon == certified_epsilon(pre.event_, part.delta) <= pre.privacy_spent_.epsilon + 1e-12
    assert est.epsilon == pytest.approx(1.0 - part.epsilon)
    assert est.delta == pytest.approx(1e-5 - part.delta)
    assert est.data_norm == pre.output_norm_ == 1.0
    assert model.score(X, y) > 0.75


def test_shared_accountant_is_charged_and_refuses_overspending():
    X, y = _data()
    acc = BudgetAccountant(1.5, 1e-5)
    dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, accountant=acc,
                        random_state=0).fit(X, y)
    assert 0 < acc.spent.epsilon <= 1.0 + 1e-9
    with pytest.raises(dperm.privacy.budget.BudgetExceededError):
        dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, accountant=acc,
                            random_state=0).fit(X, y)


def test_shares_override_and_unknown_names_are_refused():
    X, y = _data()
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, random_state=0,
                                shares={"privatepreprocessor": 0.5}).fit(X, y)
    # at most its share: the one accountant certifies the role release, the bounds and the
    # categories together for less than the sum (it was exactly 0.5 without the role release)
    assert 0.45 < model.budgets_["privatepreprocessor"].epsilon <= 0.5 + 1e-9
    with pytest.raises(ValueError, match="shares"):
        dperm.make_pipeline(dperm.DPLogisticRegression(), epsilon=1.0, shares={"nope": 0.1}).fit(X, y)


def test_declared_everything_gives_the_whole_budget_to_the_model():
    X, y = _data()
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, random_state=0,
                                bounds={"age": (0, 100), "income": (0, 1e6)},
                                categories={"city": ["a", "b", "c"]}).fit(X, y)
    assert model.steps[-1][1].epsilon == 1.0 and model.steps[-1][1].delta == 1e-5
    assert model.event_ == model.steps[-1][1].event_


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_numpy_input_pickle_clone_and_params():
    rng = np.random.default_rng(1)
    X = rng.normal(5.0, 2.0, size=(500, 3))
    y = (X[:, 0] > 5).astype(int)
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=2.0, random_state=0)
    params = model.get_params()
    assert params["epsilon"] == 2.0 and "dplogisticregression__alpha" in params
    copy = clone(model)
    assert copy.get_params()["epsilon"] == 2.0
    model.fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert model.score(X, y) > 0.7


def test_a_leaky_step_warns():
    X, y = _data()
    model = dperm.make_pipeline(StandardScaler(), dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                                random_state=0)
    with pytest.warns(PrivacyWarning, match="not differentially private"):
        model.fit(X[["age"]].to_numpy(dtype=float), y)


def test_regression_target_bounds_private_and_predictions_in_original_units():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    y = 300.0 + 40.0 * X["a"].to_numpy() + rng.normal(0, 5, 3000)
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=2.0, random_state=0).fit(X, y)
    assert "y" in model.budgets_
    low, high = model.y_bounds_
    assert low < 300 < high
    assert model.privacy_spent_.epsilon <= 2.0
    assert abs(np.mean(model.predict(X)) - 300) < 30  # back in the target's units


def test_regression_declared_bounds_are_set_on_the_estimator():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=500)})
    y = 10 + X["a"].to_numpy()
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, y_bounds=(5, 15),
                                target_range="declared").fit(X, y)
    assert model.steps[-1][1].y_bounds == (5.0, 15.0)
    assert "y" not in model.budgets_
    # by default a private range inside the declared bounds (issue 30), charged as the target's part
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, random_state=0, y_bounds=(5, 15)).fit(X, y)
    low, high = model.steps[-1][1].y_bounds
    assert 5.0 <= low < 10.0 < high <= 15.0 and "y" in model.budgets_


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_noise_warning_from_public_inputs():
    from dperm.expectations import NoiseDominatesWarning

    X, y = _data(n=60)
    with pytest.warns(NoiseDominatesWarning):
        dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=0.05,
                            random_state=0).fit(X, y)


def test_import_dperm_stays_light():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import dperm, sys; print('sklearn' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert "make_pipeline" in dir(dperm)


def test_dask_frame_gives_the_pandas_fit_chunk_by_chunk():
    dd = pytest.importorskip("dask.dataframe")
    X, y = _data()
    ddf = dd.from_pandas(X, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    a = PrivatePreprocessor(delta=1e-6, random_state=0).fit(X)
    b = PrivatePreprocessor(delta=1e-6, random_state=0).fit(ddf)
    np.testing.assert_array_equal(a.scaler_.centre_, b.scaler_.centre_)
    np.testing.assert_array_equal(a.scaler_.spread_, b.scaler_.spread_)
    assert [list(c) for c in a.encoder_.categories_] == [list(c) for c in b.encoder_.categories_]
    np.testing.assert_array_equal(a.transform(X), b.transform(ddf).compute().to_numpy())
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                                random_state=0).fit(ddf, dy)
    same = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                               random_state=0).fit(X, y)
    assert model.privacy_spent_ == same.privacy_spent_
    assert model.score(X, y) > 0.75


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
@pytest.mark.filterwarnings("ignore:DPLinearRegression:dperm.exceptions.NoiseDominatesWarning")
def test_regression_warns_instead_of_refusing_hopeless_private_target_bounds():
    """Issue 30: a target range that will be mostly noise (public inputs) is warned about,
    not refused; the fit goes on and its predictions stay within the range it used."""
    from dperm.expectations import NoiseDominatesWarning

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = 100 + X["a"].to_numpy()
    acc = BudgetAccountant(0.1, 1e-5)
    with pytest.warns(NoiseDominatesWarning, match="y_bounds"):
        model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=0.1, accountant=acc, random_state=0,
                                    regime="model").fit(X, y)
    assert acc.spent.epsilon <= 0.1 * (1 + 1e-9)
    assert model.budgets_["y"].epsilon == pytest.approx(0.05)  # the target's share grows at small n epsilon
    low, high = model.y_bounds_
    prediction = model.predict(X)
    assert np.all((prediction >= low) & (prediction <= high))
    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, y_bounds=(90, 110), random_state=0,
                                bounds={"a": (-4, 4)}, target_range="declared").fit(X, y)
    assert model.y_bounds_ == (90.0, 110.0)


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_replace_one_neighbours_release_the_same_public_values():
    """Same seed on neighbouring frames: the budgets, the events, the certified spend and
    the row bound are identical; only noisy statistics and the model differ."""
    X, y = _data(n=1000)
    X2, y2 = X.copy(), y.copy()
    X2.loc[0, ["age", "income", "city"]] = [10_000, 1e12, "elsewhere"]
    y2[0] = "yes" if y[0] == "no" else "no"
    fits = [dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                                random_state=3).fit(A, b) for A, b in ((X, y), (X2, y2))]
    for attribute in ("event_", "privacy_spent_", "budgets_"):
        assert repr(getattr(fits[0], attribute)) == repr(getattr(fits[1], attribute))
    params = [{k: repr(v) for k, v in f.steps[-1][1].get_params().items()} for f in fits]
    assert params[0] == params[1]  # the estimator's budget and data_norm: public


@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_scikit_learn_search_warns_and_private_search_needs_a_public_structure():
    from sklearn.model_selection import cross_val_score

    from dperm.model_selection import PrivateSearch

    X, y = _data(n=600)
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, random_state=0)
    with pytest.warns(PrivacyWarning, match="model selection"):
        cross_val_score(model, X, y, cv=2)
    # categories selected privately: each run's mechanism would depend on the data
    ledger = BudgetAccountant(5.0, 1e-5)
    search = PrivateSearch(model, {"dplogisticregression__alpha": [0.01, 0.1]}, epsilon=1.0, random_state=0,
                           accountant=ledger)
    with pytest.raises(NotImplementedError, match="every column's role public"):
        search.fit(X, y)
    # roles public (the dtypes declared public), categories still selected privately
    search = PrivateSearch(dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                                               random_state=0, schema="dtypes"),
                           {"dplogisticregression__alpha": [0.01, 0.1]}, epsilon=1.0, random_state=0,
                           accountant=ledger)
    with pytest.raises(NotImplementedError, match="categories of every categorical column declared"):
        search.fit(X, y)
    assert ledger.spent is None  # refused before anything was charged
    regression = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, categories={"city": ["a", "b", "c"]})
    with pytest.raises(NotImplementedError, match="classifiers only"):
        PrivateSearch(regression, {"dplinearregression__alpha": [0.1]}, epsilon=1.0).fit(X, X["age"].to_numpy())


@pytest.mark.parametrize("random_state", [0, None])
@pytest.mark.filterwarnings("ignore::dperm.exceptions.PreprocessingNoiseWarning")
def test_private_search_over_a_pipeline_with_declared_categories(random_state):
    """Preprocessing and model hyperparameters searched under one budget: every run is the
    mechanism planned on the table's stand-in (the search checks each run's event against
    its plan), and the whole search is one repeat-and-select charge."""
    from dperm.model_selection import PrivateSearch
    from dperm.privacy import events as ev

    X, y = _data(n=2000)
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0,
                                categories={"city": ["a", "b", "c"]}, schema="dtypes")  # roles public
    ledger = BudgetAccountant(1.0, 1e-5)
    grid = {"dplogisticregression__alpha": [1e-3, 1e-2], "privatepreprocessor__spread_multiple": [2.0, 3.0]}
    search = PrivateSearch(model, grid, epsilon=1.0, delta=1e-5, random_state=random_state,
                           accountant=ledger).fit(X, y)
    assert isinstance(search.event_, ev.RepeatAndSelectDpEvent)
    assert search.privacy_spent_.epsilon <= 1.0 and ledger.spent.epsilon <= 1.0 + 1e-9
    assert len(ledger.events) == 1
    assert search.best_params_ in list(ParameterGrid(grid))
    assert set(search.predict(X)) <= {"no", "yes"}


def test_shares_leaving_nothing_for_the_model_are_refused_before_any_charge():
    X, y = _data(n=600)
    ledger = BudgetAccountant(5.0, 1e-5)
    model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=["no", "yes"]), epsilon=1.0, accountant=ledger,
                                shares={"privatepreprocessor": 1.0}, random_state=0)
    with pytest.raises(ValueError, match="share"):
        model.fit(X, y)
    regression = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=1.0, accountant=ledger,
                                     shares={"privatepreprocessor": 0.95, "y": 0.1}, random_state=0)
    with pytest.raises(ValueError, match="leave nothing for the estimator"):
        regression.fit(X, X["age"].to_numpy(dtype=float))
    assert ledger.spent is None


def test_regression_with_an_accountant_of_exactly_the_budget_fits():
    """The steps' pure target range and delta-composed numeric draws, then the model, all
    charged to an accountant holding exactly the budget: the one accountant's joint
    composition must not refuse the model's charge (it did by 0.0002 of epsilon = 1)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = 100 + X["a"].to_numpy()
    for epsilon in (1.0, 0.1):
        acc = BudgetAccountant(epsilon, 1e-5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=epsilon, accountant=acc, random_state=0).fit(X, y)
        assert 0.97 * epsilon < acc.spent.epsilon <= epsilon * (1 + 1e-9)
