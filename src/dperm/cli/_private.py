"""`dperm fit` and `dperm predict` through the private preprocessing: the pipeline of
:func:`dperm.make_pipeline`, the ledger check before anything is charged (against the
budget asked for: public inputs only), and the preprocessing kept in model.json."""

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
        options["target_range"] = "declared"  # --y-bounds are mapped as declared, free (the README's promise)
    elif declared.y_bounds is not None:
        raise _error("--y-bounds (or the schema's y_bounds) is for regression losses")
    options["regime"] = getattr(args, "regime", "auto")
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
        _check_ledger_affords(args.epsilon, args.delta, ledger)
        ledger.begin_fit(f"dperm fit {Path(args.data).name}: private preprocessing and model")
    try:
        pipe.fit(features, y, **params)
    finally:
        if ledger is not None:
            ledger.end_fit()
    return pipe


def planned_charge(epsilon: float, delta: float):
    """The charge the ledger is checked against before a fit, from public inputs only (the
    budget asked for): one mechanism known only by its guarantee,
    ``ApproximateDpRelease(epsilon, delta)``.

    The fit's own events depend on what its private steps release (each undeclared
    column's role, the number of categories selected: the scaler's and the encoder's
    events and the model's calibration follow them), so no public computation can give
    them before the fit; the fit is charged those events, step by step, each before it
    reads the data. But the pipeline certifies its events within (epsilon, delta), and a
    mechanism that is (epsilon, delta)-DP composes with anything no worse than the worst
    (epsilon, delta) mechanism does (Kairouz, Oh, Viswanath 2015, the composition theorem's
    dominance): a ledger that affords this charge affords the fit's events whatever its
    releases turn out to be, so no fit stops after a partial spend. Measured (tests/
    test_cli_ledger.py): on files whose undeclared columns are numeric, text or mixed,
    the fit's real charge is at most this one, and equal to it in a ledger's worst case."""
    from ..privacy.events import ApproximateDpRelease

    return ApproximateDpRelease(float(epsilon), float(delta))


def _check_ledger_affords(epsilon: float, delta: float, ledger) -> None:
    """Before the data is read: refuse, with nothing charged, a fit whose budget the ledger
    cannot afford (:func:`planned_charge`; public inputs only: epsilon and delta). The
    message is the ledger's own (what the total would be, what remains)."""
    from ..privacy.budget import BudgetAccountant

    if ledger.can_afford(planned_charge(epsilon, delta)):
        return
    scratch = BudgetAccountant(ledger.total)  # the ledger's refusal, on a copy: nothing recorded
    scratch._events, scratch._labels = list(ledger.events), [label for label, _ in ledger.history]
    scratch._spent_epsilon = ledger.spent_epsilon
    scratch.charge(planned_charge(epsilon, delta))  # raises BudgetExceededError with the ledger's message


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
