"""`dperm fit` and `dperm predict` through the private preprocessing: the pipeline of
:func:`dperm.make_pipeline`, the ledger check on a stand-in table before anything is
charged, and the preprocessing kept in model.json."""

from __future__ import annotations

from pathlib import Path

from ._console import _error
from ._declarations import Declarations
from .tables import read_header, read_text


def fit_pipeline(args, estimator, declared: Declarations, features, numeric: list, categorical: list, y,
                 regression: bool, sample_weight, ledger):
    """Fit dperm.make_pipeline(estimator) on the features; every check that needs no
    data is done before the pipeline charges anything. Returns the fitted pipeline."""
    from ..pipeline import make_pipeline
    from ..privacy.budget import PrivacyBudget

    undeclared_categorical = [c for c in categorical if c not in declared.categories]
    if undeclared_categorical and not args.delta > 0:
        raise _error(f"categorical columns {undeclared_categorical} have no declared categories: selecting them "
                     "privately needs --delta > 0; declare them with --categories COLUMN=A,B,C")
    undeclared = [c for c in features.columns if c not in numeric and c not in categorical]
    if undeclared and not args.delta > 0:
        raise _error(f"columns {undeclared[:10]} have no declared role; one released categorical would need "
                     "--delta > 0 to select its categories; give --delta, or declare their roles (--bounds, "
                     "--categories, or the schema's 'numeric' / 'categorical')")
    options = dict(epsilon=args.epsilon, delta=args.delta, accountant=ledger, random_state=args.seed,
                   numeric=numeric, categorical=categorical, bounds=dict(declared.bounds),
                   categories=dict(declared.categories), missing_indicator="auto", schema="private")
    if getattr(args, "summary", False):  # intervals: no all-zero indicator columns; rows scaled linearly
        options.update(missing_indicator=False, row_norm="scale")  # (per-unit rows, docs/inference.md)
    if regression:
        options["y_bounds"] = declared.y_bounds if declared.y_bounds is not None else "auto"
    elif declared.y_bounds is not None:
        raise _error("--y-bounds (or the schema's y_bounds) is for regression losses")
    pipe = make_pipeline(estimator, **options)
    if regression and declared.y_bounds is None:
        try:  # public inputs only (n, epsilon), before anything is charged
            pipe._check_target_feasible(pipe.steps[-1][1], features, PrivacyBudget(args.epsilon, args.delta))
        except ValueError as error:
            head = str(error).split(": declare")[0]
            raise _error(f"{head}: declare them with --y-bounds LOW:HIGH (e.g. the range the data's documentation "
                         "gives)") from None
    final_name = pipe.steps[-1][0]
    params = {} if sample_weight is None else {f"{final_name}__sample_weight": sample_weight}
    if ledger is not None:
        _check_ledger_affords(estimator, options, features, numeric, categorical, y, regression, final_name,
                              sample_weight is not None, ledger)
        ledger.begin_fit(f"dperm fit {Path(args.data).name}: private preprocessing and model")
    try:
        pipe.fit(features, y, **params)
    finally:
        if ledger is not None:
            ledger.end_fit()
    return pipe


def _stand_in(features, numeric: list, categorical: list, declared: Declarations):
    """A table of the features' shape and column roles holding no data: zeros in the
    numeric columns, a declared category (else one fixed text) in the categorical ones."""
    import numpy as np
    import pandas as pd

    n = len(features)
    columns = {}
    for c in features.columns:
        if c in categorical:
            columns[c] = np.full(n, declared.categories.get(c, ["?"])[0], dtype=object)
        else:  # numeric, or a role the fit releases privately (its cost is in the events either way)
            columns[c] = np.zeros(n)
    return pd.DataFrame(columns, columns=list(features.columns))


def _check_ledger_affords(estimator, options: dict, features, numeric, categorical, y, regression: bool,
                          final_name: str, weighted: bool, ledger) -> None:
    """Before the data is read: run the same pipeline on a stand-in of the table (public
    inputs only: the number of rows, the column roles, the declared values and labels)
    against a copy of the ledger, so that a fit the ledger cannot afford is refused with
    nothing charged. Its events are those of the real fit (they depend on the shape, the
    declarations and the budget), up to the number of categories the real selection
    releases; the real fit is still charged step by step, each step before it reads."""
    import warnings

    import numpy as np
    from sklearn.base import clone

    from ..pipeline import make_pipeline
    from ..privacy.budget import BudgetAccountant, BudgetExceededError

    scratch = BudgetAccountant(ledger.total)
    scratch._events, scratch._labels = list(ledger.events), [label for label, _ in ledger.history]
    scratch._spent_epsilon = ledger.spent_epsilon
    n = len(features)
    if regression:
        y0 = np.zeros(n)
    else:
        labels = estimator.get_params(deep=False).get("classes")
        y0 = np.resize(np.asarray(labels if labels is not None else np.unique(y), dtype=object), n)
    declared = Declarations(bounds=options["bounds"], categories=options["categories"])
    dry = make_pipeline(clone(estimator), **{**options, "accountant": scratch})
    params = {f"{final_name}__sample_weight": np.ones(n)} if weighted else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dry.fit(_stand_in(features, numeric, categorical, declared), y0, **params)
    except BudgetExceededError:
        raise
    except Exception:  # noqa: BLE001 - a stand-in the solver cannot take: the real charges still guard
        return


def preprocessing_record(pipe, declared: Declarations) -> dict:
    """model.json's preprocessing: the declared values and what the private steps
    released (PrivatePreprocessor.released_values), the budgets each step was given."""
    pre = pipe.steps[0][1]
    record = pre.released_values()
    record["declared"] = {"bounds": {c: list(v) for c, v in declared.bounds.items()},
                          "categories": {c: list(v) for c, v in declared.categories.items()}}
    return record


def transform_for_predict(model: dict, path: str):
    """The rows of ``path`` mapped by the model's preprocessing (a post-processing of the
    released values): the matrix the coefficients apply to."""
    from ..exceptions import CLIError
    from ..preprocessing import PrivatePreprocessor

    released = model["preprocessing"]
    try:
        pre = PrivatePreprocessor.from_released(released)
    except ValueError as error:
        raise CLIError(f"the model's preprocessing is damaged ({error})") from None
    columns = list(pre.feature_names_in_)
    header = read_header(path)
    absent = [c for c in columns if c not in header]
    if absent:
        raise CLIError(f"columns {absent} of the model are missing from {path!r}")
    frame = read_text(path, columns)  # the file's text; the model's casts map each value
    return pre.transform(frame[columns])
