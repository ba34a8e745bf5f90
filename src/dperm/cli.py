"""The ``dperm`` command line: demo, bench (table3, scaling), fit, predict, algorithms.

Conventions: errors are one line on stderr, ``dperm: error: ...``, with exit status 2 for
bad usage or bad input and 1 for an internal failure (never a traceback); warnings are one
line, ``dperm: warning: ...``. Every output path is checked before any data is read, and
files are written atomically, so a fit (which spends privacy budget) is never lost to a
bad ``--out``. Progress of long work goes to stderr: a live bar on a terminal, otherwise
a line at most every tenth of the work or every 30 seconds.

Start-up: this module imports only the standard library and dperm's light modules
(``dperm.__init__``, ``dperm._files``); NumPy, pandas, scikit-learn, dp-accounting, the
algorithms and the bench modules are imported inside the commands that use them, so
``dperm --version`` and ``dperm --help`` answer in a fraction of a second
(benchmarks/bench_cli_startup.py; tests/test_cli_startup.py checks the imports).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

from ._version import __version__
from ._files import check_output_dir, check_output_file, exclusive_lock, write_atomic, write_text_atomic
from .exceptions import CLIError  # bad usage or input: one line, status 2 (defined in the leaf)

__all__ = ["main", "build_parser", "CLIError"]

PAPER = "Zhang, Zheng, Mou, Wang (IJCAI 2017)"  # the source of `dperm bench table3`
TABLE3_DATASETS = ["bank", "adult", "credit_card", "wine", "bike"]
# `dperm demo`'s and `dperm bench scaling`'s defaults, copied here so that building the
# parser imports no bench module (dperm.bench.scaling imports NumPy, pandas and the
# algorithms); tests/test_cli_startup.py checks that they equal dperm.bench.demo's
# DEFAULT_ALGORITHMS, DEFAULT_EPSILONS and dperm.bench.scaling's DEFAULT_SIZES, PROBLEMS.
DEMO_ALGORITHMS = ("output_perturbation", "objective_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd")
DEMO_EPSILONS = (0.1, 0.5, 1.0, 2.0)
SCALING_SIZES = (500, 1000, 2000, 4000, 8000, 16000)
SCALING_PROBLEMS = ("logistic_l2", "logistic_ball", "pl_least_squares", "glm_sigmoid", "glm_sigmoid_ball",
                    "glm_sigmoid_l2")
# The estimators' default delta (dperm.estimators), the default of `dperm fit` and `dperm budget`
# too: the same data gets the same solver from the command line and from Python.
DEFAULT_DELTA = 1e-5
# A classification target (no --classes) with more distinct values than this looks like a
# regression target: the same rule as the estimators' (MAX_UNDECLARED_CLASSES).
MAX_UNDECLARED_CLASSES = 20


# ----------------------------------------------------------------------------- output
def _console():
    from rich.console import Console

    return Console()


def _table(frame, title: str, floats: dict | None = None):
    from rich.table import Table

    table = Table(title=title)
    for i, column in enumerate(frame.columns):
        table.add_column(str(column), justify="right" if frame[column].dtype.kind in "fi" else "left",
                         no_wrap=i == 0)
    for _, row in frame.iterrows():
        cells = []
        for column in frame.columns:
            value = row[column]
            if isinstance(value, float):
                fmt = (floats or {}).get(column, ".4g")
                cells.append("non-private" if math.isinf(value) else format(value, fmt))
            else:
                cells.append(str(value))
        table.add_row(*cells)
    return table


class _Progress:
    """Progress of long work on stderr: a live bar when stderr is a terminal; otherwise a
    line at most every tenth of the work (when the total is known) or every
    ``PIPED_SECONDS`` seconds, and the last unit's, so a log file or a CI job shows the work
    advancing without thousands of lines."""

    PIPED_SECONDS = 30.0

    def __init__(self, description: str, total: int | None = None):
        self.description, self.total, self.done = description, total, 0
        self._bar = None
        self._start = time.monotonic()
        self._last_line = None  # (time, tenth of the work) of the last line written

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                 transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def advance(self) -> None:
        self.update(self.done + 1)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total)
            return
        now = time.monotonic()
        tenth = None if not self.total else (10 * done) // self.total
        finished = self.total is not None and done >= self.total
        if self._last_line is not None and not finished:
            last_time, last_tenth = self._last_line
            if now - last_time < self.PIPED_SECONDS and (tenth is None or tenth <= last_tenth):
                return
        self._last_line = (now, tenth)
        of = "" if self.total is None else f"/{self.total}"
        what = "to run" if done == 0 else "done"
        print(f"dperm: {self.description}: {done}{of} {what} ({now - self._start:.0f} s)",
              file=sys.stderr, flush=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line, without the internal file and source line."""
    print(f"dperm: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def _parse_spec(text: str | None, option: str, example: str):
    """'l2:0.1' -> ('l2', 0.1); 'elastic_net:0.1:0.5' -> ('elastic_net', 0.1, 0.5); 'none' -> None."""
    if text is None or text.lower() == "none":
        return None
    name, *values = text.split(":")
    try:
        return (name, *[float(v) for v in values])
    except ValueError:
        raise CLIError(f"cannot parse {option} {text}; write NAME:VALUE, e.g. {option} {example}") from None


# ----------------------------------------------------------------------------- reading
def _read_csv(path: str, what: str = "data file"):
    """The file typed column by column as pandas.read_csv would type it, read by the
    total reader of dperm._tables (one row per line, a malformed line a row of missing
    values)."""
    from ._tables import TableError, infer_types, read_table

    try:
        return infer_types(read_table(path, what=what))
    except TableError as error:
        raise CLIError(str(error)) from None


def _numeric_features(frame, columns, path: str):
    """The feature columns as numbers (rows declared prepared: --data-norm): the total
    cast of dperm._tables.numbers, a value that is not a finite number missing."""
    import pandas as pd

    from .cli_raw import _as_numbers

    return pd.DataFrame({c: _as_numbers(frame[c]) for c in columns}, columns=list(columns), index=frame.index)


def _columns_with_missing(frame) -> list:
    return [c for c in frame.columns if frame[c].isna().any()]


def _read_model(path: str) -> dict:
    if not Path(path).is_file():
        raise CLIError(f"model file {path!r} not found")
    try:
        model = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise CLIError(f"{path!r} is not a model written by `dperm fit` (not JSON)") from None
    missing = [k for k in ("coef", "feature_names") if not isinstance(model, dict) or k not in model]
    if missing:
        raise CLIError(f"{path!r} is not a model written by `dperm fit` (no {', '.join(missing)})")
    return model


# ----------------------------------------------------------------------------- fit / predict
def _declared_classes(text: str | None, target, column: str):
    """The --classes values in the type of the target column."""
    import pandas as pd

    if text is None:
        return None
    values = [v for v in text.replace(",", " ").split() if v]
    try:
        if target.dtype.kind == "b":
            return [{"true": True, "false": False}[v.lower()] for v in values]
        if target.dtype.kind in "iu":
            return [int(v) for v in values]
        if target.dtype.kind == "f":
            return [float(v) for v in values]
        return [str(v) for v in pd.Series(values, dtype=object)]
    except (ValueError, KeyError):
        raise CLIError(f"--classes must be values of the kind in column {column!r} (numbers), e.g. --classes 0,1") from None


def _label_key(text):
    """The class of equal labels a text belongs to, by itself: a True/False word (any
    case) its truth, a finite number its value (``1``, ``1.0``, `` 1 ``: one label),
    any other text itself; None for a missing value."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    text = str(text)
    if text.strip().lower() in ("true", "false"):
        return ("bool", text.strip().lower() == "true")
    try:
        number = float(text)
    except ValueError:
        return ("text", text)
    return ("number", number) if math.isfinite(number) else ("text", text)


def _match_classes(target, classes: list):
    """Each row's label mapped to the declared class it equals (``_label_key``), by
    itself; a label outside the classes (or missing) becomes None, which the pipeline
    gives weight 0. The column's dtype (which every row decides) plays no part."""
    import numpy as np

    index = {_label_key(str(c)): c for c in classes}
    values = target.to_numpy(dtype=object, na_value=None)
    return np.fromiter((index.get(_label_key(v)) for v in values), dtype=object, count=len(values))


def _weigh_out(y, classes, sample_weight, classification: bool):
    """The rows declared prepared (--data-norm): a label outside the classes (None) or a
    target that is not a number gets weight 0 (and a stand-in value), a weight that is not
    a number is 0, one outside [0, 1] clamped; each row by itself, as the pipeline does.
    The weights are always passed, so whether some row is out does not choose the
    estimator's path."""
    import numpy as np

    n = len(y)
    weight = np.ones(n) if sample_weight is None else np.clip(np.nan_to_num(sample_weight, nan=0.0), 0.0, 1.0)
    if classification:
        inside = np.array([v is not None for v in y], dtype=bool)
        y = np.asarray([v if ok else classes[0] for v, ok in zip(y, inside)])  # typed as the classes are
    else:
        inside = np.isfinite(y)
        y = np.where(inside, y, 0.0)
    return y, np.where(inside, weight, 0.0)


def _check_categorical(target, column: str, loss_name: str) -> None:
    """Stop a classification fit whose undeclared target looks like a regression target
    (non-integer numbers, or more than MAX_UNDECLARED_CLASSES distinct values): a forgotten
    --loss. Input validation before any charge, for the person running the fit; it quotes
    no value of the column."""
    non_integer = target.dtype.kind == "f" and not bool((target == target.round()).all())
    if non_integer or target.nunique() > MAX_UNDECLARED_CLASSES:
        what = "non-integer numbers" if non_integer else f"more than {MAX_UNDECLARED_CLASSES} distinct values"
        raise CLIError(f"column {column!r} has {what}, as a regression target has, and --loss {loss_name} is a "
                       "classification loss: for regression pass --loss squared or --loss huber (with "
                       "--y-bounds LOW:HIGH, the target's public range); for a classifier with that many classes declare them with --classes")


def _estimator(args, loss_name: str, classes):
    """The estimator `dperm fit` runs: the one of the loss (intercept, one-vs-rest and
    clipping exactly as in Python), with the command line's regularizer when given."""
    from .estimators import (DPGLMRegressor, DPHuberRegressor, DPLinearRegression, DPLinearSVC,
                             DPLogisticRegression, DPRobustRegressor)
    from .estimators.linear import _DPClassifier
    from .problem.losses import make_loss

    named = {"logistic": DPLogisticRegression, "huberized_hinge": DPLinearSVC, "huber": DPHuberRegressor,
             "squared": DPLinearRegression, "sigmoid_squared": DPGLMRegressor, "biweight": DPRobustRegressor}

    class HingeClassifier(_DPClassifier):  # the hinge loss has no named estimator
        def _loss(self):
            return make_loss("hinge")

    base = named.get(loss_name, HingeClassifier if loss_name == "hinge" else None)
    if base is None:
        make_loss(loss_name)  # a clear error for an unknown loss
        raise CLIError(f"--loss {loss_name} has no estimator")
    params = dict(epsilon=args.epsilon, delta=args.delta, solver=args.algorithm, data_norm=args.data_norm,
                  fit_intercept=not args.no_intercept, intercept_scaling=args.intercept_scaling,
                  constraint=_parse_spec(args.constraint, "--constraint", "l2_ball:10"),
                  solver_params=json.loads(args.params) if args.params else None, random_state=args.seed,
                  accountant=getattr(args, "ledger", None))
    if issubclass(base, _DPClassifier):
        params["classes"] = classes
    else:
        params["label_bound"] = args.label_bound
    if getattr(args, "summary", False):  # the inference fit (docs/inference.md)
        if loss_name not in ("logistic", "huber", "squared") or args.regularizer is not None:
            raise CLIError("--summary (intervals) runs with --loss logistic, huber or squared and no --regularizer")
        params["inference"] = True
    if args.regularizer is None:
        return base(**params)
    regularizer = _parse_spec(args.regularizer, "--regularizer", "l2:0.01")
    l2 = regularizer[1] if regularizer is not None and regularizer[0] == "l2" and len(regularizer) == 2 else 0.0

    class WithRegularizer(base):  # the regularizer named on the command line, instead of alpha's l2
        def _regularizer(self, n_samples, n_features, budget, label_bound=1.0, loss=None, n_classes=2):
            self.alpha_ = l2  # the l2 strength used (0 for none, l1 or elastic net)
            self._warn_if_noise_dominates(n_samples, n_features, budget, label_bound,
                                          self._loss() if loss is None else loss, n_classes, l2)
            return regularizer

    WithRegularizer.__name__ = base.__name__
    return WithRegularizer(**params)


_SOLVER_COUNTS = ("iterations", "gradient_evaluations")  # data-dependent: never written (issue 12)


def _constraint_spec(constraint) -> str | None:
    """A constraint as ``--constraint`` takes it (``"l2_ball:1.0"``), or None."""
    return None if constraint is None else ":".join(str(part) for part in constraint)


def _model_record(estimator, args, features, loss_name: str, pipe=None, declared=None) -> dict:
    """model.json: the public description of the fit (PrivateFit.summary) with the
    estimator's coefficients, intercept, label set, declared bounds and every public
    hyper-parameter needed to run the same fit again (the budget asked for, the loss, the
    regularization used ``alpha``, the solver, the constraint, the intercept); nothing else
    computed from the data (tests/test_cli.py compares the files of two neighbouring data
    sets). The seed is never written: it would let anyone subtract the noise."""
    import numpy as np

    fits = estimator.fits_
    model = {k: v for k, v in fits[0].summary().items() if k not in _SOLVER_COUNTS}
    coef = np.asarray(estimator.coef_, dtype=float)
    intercept = np.asarray(estimator.intercept_, dtype=float)
    classes = getattr(estimator, "classes_", None)
    binary = classes is not None and len(classes) == 2
    model.update({
        "epsilon": estimator.privacy_spent_.epsilon,
        "delta": estimator.privacy_spent_.delta,
        "coef": (coef.ravel() if binary or classes is None else coef).tolist(),
        "intercept": float(intercept.ravel()[0]) if binary or classes is None else intercept.ravel().tolist(),
        "fit_intercept": not args.no_intercept,
        "intercept_scaling": args.intercept_scaling,
        "loss": loss_name,
        "feature_names": list(features.columns),
        "target": args.target,
        "classes": None if classes is None else [c.item() if hasattr(c, "item") else c for c in classes],
        "data_norm": args.data_norm,
        "label_bound": None if classes is not None else args.label_bound,
        "solver": estimator.solver_,
        "requested": {"epsilon": args.epsilon, "delta": args.delta},
        "alpha": estimator.alpha_,
        "regularizer": args.regularizer if args.regularizer is not None else f"l2:{estimator.alpha_!r}",
        "constraint": _constraint_spec(estimator._constraint()),  # the one the fit used
        "classes_declared": args.classes is not None,
        "params": json.loads(args.params) if args.params else None,
    })
    if classes is not None:
        model["multi_class"] = estimator.multi_class_
    if args.sample_weight is not None:
        model["sample_weight"] = args.sample_weight  # the weight column's name (public), not a feature
    if classes is not None and len(fits) > 1:
        model["one_vs_rest_fits"] = len(fits)  # each with the budget split len(fits) ways
    if loss_name == "sigmoid_squared":
        model["link"] = estimator.link
    if pipe is not None:  # the private preprocessing: what its steps released, and the whole fit's guarantee
        from .cli_raw import preprocessing_record

        model.update({
            "epsilon": pipe.privacy_spent_.epsilon,
            "delta": pipe.privacy_spent_.delta,
            "data_norm": float(pipe.steps[0][1].output_norm_),
            "preprocessing": preprocessing_record(pipe, declared),
            "budgets": {name: {"epsilon": b.epsilon, "delta": b.delta} for name, b in pipe.budgets_.items()},
        })
        if classes is None:
            model["y_bounds"] = list(pipe.y_bounds_)
            model["y_bounds_declared"] = declared.y_bounds is not None
        if hasattr(estimator, "y_offset_"):  # a link model maps its mean back to the target's units
            model["y_offset"], model["y_scale"] = estimator.y_offset_, estimator.y_scale_
    return model


def _save_ledger(ledger, path: str) -> None:
    """``ledger.save(path)``; an error names ``path``, not the temporary file of the save."""
    try:
        ledger.save(path)
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None


def _ledger_file_class():
    """A BudgetAccountant that writes its ledger file at every charge (made on first use:
    the privacy layer is not imported at start-up)."""
    from .privacy.budget import BudgetAccountant

    class LedgerFile(BudgetAccountant):
        """Saved to ``path`` (when set) as soon as a charge is recorded, before the mechanism
        runs on the data: a fit that fails after its charge still counts as spent."""

        path = None
        _fit_events = None  # the events of the fit being charged as one entry (begin_fit)

        def begin_fit(self, label: str) -> None:
            """Record the charges until end_fit as ONE charge, the exact composition of
            their events, grown at each charge (each still recorded, and the file saved,
            before its step reads the data)."""
            self._fit_events, self._fit_label = [], label

        def end_fit(self) -> None:
            self._fit_events = None

        def charge(self, event, label: str = ""):
            if self._fit_events is None:
                spent = super().charge(event, label)
            else:
                from .privacy.events import composed

                # a single process charges here (the ledger file is locked by cmd_fit)
                previous = (self._events.pop(), self._labels.pop()) if self._fit_events else None
                try:
                    spent = super().charge(composed(self._fit_events + [event]), self._fit_label)
                except BaseException:
                    if previous is not None:  # refused: the entry stays what it was
                        self._events.append(previous[0])
                        self._labels.append(previous[1])
                        self._spent_epsilon = self._composed_epsilon(self._events)
                    raise
                self._fit_events.append(event)
            if self.path is not None:
                _save_ledger(self, self.path)
            return spent

    return LedgerFile


def _load_ledger(path: str, *, saving: bool = False):
    """The BudgetAccountant of a ledger file written by `dperm budget` (one line if absent);
    ``saving``: one that writes the file at every charge."""
    from .privacy.budget import BudgetAccountant

    if not os.path.exists(path):
        raise CLIError(f"no ledger {path!r}; create one with: dperm budget {path} --epsilon E --delta D")
    try:
        ledger = (_ledger_file_class() if saving else BudgetAccountant).load(path)
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as error:
        raise CLIError(f"{path!r} is not a dperm ledger ({_one_line(error)})") from None
    if saving:
        ledger.path = path
    return ledger


def cmd_budget(args) -> int:
    """Create a ledger (a total budget that fits are charged to), or show what it has spent."""
    from .privacy.budget import BudgetAccountant

    if args.epsilon is not None:
        if os.path.exists(args.ledger):
            raise CLIError(f"{args.ledger!r} exists; a ledger is created once (remove it to start over)")
        check_output_file(args.ledger)
        _save_ledger(BudgetAccountant(args.epsilon, args.delta), args.ledger)
        print(f"ledger {args.ledger} created: total epsilon={args.epsilon:g}, delta={args.delta:g}")
        return 0
    accountant = _load_ledger(args.ledger)
    spent = accountant.spent
    print(f"ledger {args.ledger}: total epsilon={accountant.total.epsilon:g}, delta={accountant.total.delta:g}; "
          f"{len(accountant.events)} fit(s) charged; spent epsilon="
          f"{spent.epsilon if spent else 0.0:.6g} (composed exactly at delta={accountant.total.delta:g}); "
          f"remaining epsilon={accountant.remaining_epsilon:.6g}")
    return 0


def cmd_audit(args) -> int:
    """Black-box lower bound on a mechanism's epsilon (dperm.audit); exit 1 if above the claim."""
    from .audit import audit

    with _Progress(f"auditing {args.algorithm}", total=None) as bar:
        result = audit(args.algorithm, args.epsilon, args.delta, runs=args.runs, seed=args.seed,
                       confidence=args.confidence, miscalibrated=args.miscalibrated,
                       progress=lambda done, total: bar.update(done, total))
    verdict = "above the claim: a privacy bug" if result.epsilon_lower_bound > result.epsilon else "below the claim"
    print(f"{result.algorithm}: claim epsilon={result.epsilon:.6g}, delta={result.delta:g}; run at epsilon="
          f"{result.epsilon_run:.6g}; epsilon lower bound {result.epsilon_lower_bound:.4g} at confidence "
          f"{result.confidence:g} from {result.runs} runs per neighbour: {verdict}")
    return 1 if result.epsilon_lower_bound > result.epsilon and not args.miscalibrated else 0


def cmd_fit(args) -> int:
    check_output_file(args.out)
    if not args.accountant:
        args.ledger = None
        return _fit(args)
    # read, charge and save the ledger under one lock: two fits charging the same ledger
    # at once would otherwise both start from the same state and one charge be lost. The
    # ledger file is written at the charge itself, before the mechanism runs on the data:
    # a fit that fails after its charge (or is interrupted) still counts as spent.
    with exclusive_lock(args.accountant):
        args.ledger = _load_ledger(args.accountant, saving=True)
        return _fit(args)


def _fit(args) -> int:
    from .problem.losses import make_loss

    if args.params:
        try:
            hyper = json.loads(args.params)
        except json.JSONDecodeError:
            raise CLIError('--params must be a JSON object, e.g. --params \'{"steps": 100}\'') from None
        if not isinstance(hyper, dict):
            raise CLIError('--params must be a JSON object, e.g. --params \'{"steps": 100}\'')
    loss = make_loss(args.loss)
    from . import cli_raw

    declared = cli_raw.parse_declarations(args)  # syntax only, before the data is read
    private = _preprocessing_mode(args, declared) == "private"
    weight_column = args.sample_weight
    if weight_column is not None and weight_column == args.target:
        raise CLIError("--sample-weight names the target column; the weights need a column of their own")
    label_columns = [args.target] + ([weight_column] if weight_column is not None else [])
    header = cli_raw.read_header(args.data)
    for column, option, what in ((args.target, "--target", "label"), (weight_column, "--sample-weight", "weight")):
        if column is not None and column not in header:
            raise CLIError(f"no column {column!r} in {args.data!r}; name the {what} column with {option}")
    cli_raw.check_against_header(declared, header, label_columns, args.data)
    if private:
        frame, features, numeric, categorical = cli_raw.read_features(args.data, declared, label_columns)
    else:
        frame = _read_csv(args.data)
        features = _numeric_features(frame, [c for c in frame.columns if c not in label_columns], args.data)
    # the private route makes labels, targets and weights total (make_pipeline: weight 0 or
    # clamped, docs/privacy.md "Totality"); the prepared route (--data-norm) maps them here
    # alike when the label set is declared or the loss is a regression: refusing on their
    # values would release the row
    prepared_total = not private and (not loss.binary or args.classes is not None)
    if not private and not prepared_total and weight_column is not None \
            and frame[weight_column].dtype.kind not in "biuf":
        raise CLIError(f"column {weight_column!r} is not numeric; sample weights are numbers in [0, 1]")
    if not private:  # rows declared prepared: a feature that is not a finite number is 0 (a centred value)
        features = features.fillna(0.0)
    missing = [] if private or prepared_total else _columns_with_missing(frame[label_columns])
    if missing:
        raise CLIError(f"columns {missing} of {args.data!r} have missing values; drop or fill those rows first"
                       + ("" if private else " (or fit with the private preprocessing: drop --data-norm)"))
    target = frame[args.target]
    classes = None
    if loss.binary:
        # the classes from the command line alone (not the column's dtype, which one row
        # can change); labels are matched to them by value
        classes = cli_raw.declared_classes(args.classes) if private or prepared_total else _declared_classes(
            args.classes, target, args.target)
        if classes is None:
            # private route: a missing label weighs 0, the label set is the present labels'
            present = cli_raw.present_labels(target) if private else target
            _check_categorical(present, args.target, loss.name)
            from .privacy.budget import PrivacyWarning

            warnings.warn("--classes was not given: the label set is taken from the data and treated as public "
                          "(it is released with the model, unprotected); declare it, e.g. --classes no,yes",
                          PrivacyWarning, stacklevel=2)
            classes = cli_raw.label_set(present) if private else sorted(target.unique().tolist())
            if len(classes) < 2:
                raise CLIError(f"column {args.target!r} has fewer than 2 distinct labels; a classifier needs 2")
    elif args.classes is not None:
        raise CLIError(f"--classes is for classification losses; --loss {loss.name} is a regression loss")
    elif not private and not prepared_total and target.dtype.kind not in "biuf":
        raise CLIError(f"column {args.target!r} is not numeric; --loss {loss.name} needs numeric labels")
    estimator = _estimator(args, loss.name, classes)
    if prepared_total:  # the estimator alone: the pipeline's row-by-row map made here
        y = _match_classes(target, classes) if loss.binary else cli_raw._as_numbers(target).to_numpy()
        weight = None if weight_column is None else cli_raw._as_numbers(frame[weight_column]).to_numpy()
        y, sample_weight = _weigh_out(y, classes, weight, loss.binary)
    else:
        y = target.to_numpy()
        y = y if loss.binary or private else y.astype(float)
        sample_weight = None if weight_column is None else frame[weight_column].to_numpy(
            dtype=object if private else float)
    if private:
        pipe = cli_raw.fit_pipeline(args, estimator, declared, features, numeric, categorical, y,
                                    not loss.binary, sample_weight, args.ledger)
        estimator = pipe.steps[-1][1]
        record = _model_record(estimator, args, features, loss.name, pipe=pipe, declared=declared)
        spent, what = pipe.privacy_spent_, "private preprocessing and "
    else:
        estimator.fit(features.to_numpy(dtype=float), y, sample_weight=sample_weight)
        record = _model_record(estimator, args, features, loss.name)
        spent, what = estimator.privacy_spent_, ""
    if getattr(args, "summary", False):
        from .inference.records import inference_record

        record["inference"] = inference_record(estimator, None if private else list(features.columns))
        print(pipe.summary() if private else estimator.summary(names=list(features.columns)))
    write_text_atomic(args.out, json.dumps(record, indent=2) + "\n")
    print(f"fitted {what}{estimator.solver_} ({loss.name} loss, "
          f"{'no intercept' if args.no_intercept else 'with intercept'}); privacy spent: "
          f"epsilon={spent.epsilon:.6g}, delta={spent.delta:.3g}; model written to {args.out}")
    return 0


def _preprocessing_mode(args, declared) -> str:
    """'private' (dperm.make_pipeline's private preprocessing) or 'none' (numeric rows
    used as they are, clipped at --data-norm). auto: none when --data-norm is given
    (the rows are declared prepared) and nothing else is declared, else private."""
    mode = args.preprocessing
    if mode == "auto":
        mode = "none" if args.data_norm is not None and not declared.any else "private"
    if mode == "none":
        if declared.any:
            raise CLIError("--bounds, --categories, --y-bounds and --schema declare columns for the private "
                           "preprocessing; they do not apply with --preprocessing none or --data-norm")
        if args.data_norm is None:
            args.data_norm = 1.0
    elif args.data_norm is not None:
        raise CLIError("--data-norm declares rows already prepared (--preprocessing none); the private "
                       "preprocessing bounds the rows itself: drop --data-norm, or pass --preprocessing none")
    return mode


def _link(model: dict):
    if model.get("link") is None:
        return lambda s: s
    from scipy.special import expit, ndtr

    return expit if model["link"] == "sigmoid" else ndtr


def cmd_predict(args) -> int:
    import numpy as np

    to_file = bool(args.out) and args.out != "-"  # "-" is standard output, as in every Unix tool
    if to_file:
        check_output_file(args.out)
    model = _read_model(args.model)
    if "preprocessing" in model:
        from .cli_raw import transform_for_predict

        X = transform_for_predict(model, args.data)  # missing values as in the fit
        incomplete = np.zeros(X.shape[0], dtype=bool)
        return _write_predictions(args, model, X, incomplete, to_file)
    frame = _read_csv(args.data)
    names = model["feature_names"]
    absent = [c for c in names if c not in frame.columns]
    if absent:
        raise CLIError(f"columns {absent} of the model are missing from {args.data!r}")
    features = _numeric_features(frame, names, args.data)
    incomplete = features.isna().any(axis=1).to_numpy()
    if incomplete.any() and args.on_missing == "error":
        raise CLIError(f"columns {_columns_with_missing(features)} of {args.data!r} have missing values; fill them, "
                       "or pass --on-missing empty to leave those predictions empty")
    X = features.to_numpy(dtype=float, copy=True)
    X[incomplete] = 0.0  # placeholder rows; their predictions are blanked below
    return _write_predictions(args, model, X, incomplete, to_file)


def _write_predictions(args, model: dict, X, incomplete, to_file: bool) -> int:
    import numpy as np
    import pandas as pd

    coef = np.asarray(model["coef"], dtype=float)
    intercept = np.asarray(model.get("intercept", 0.0), dtype=float)  # models before 0.2 had none
    scores = X @ coef.T + intercept
    classes = model.get("classes")
    if classes:
        chosen = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        predictions = pd.Series(np.asarray(classes, dtype=object)[chosen], dtype=object)
    else:
        mean = _link(model)(scores)
        if "y_offset" in model:  # a link model fitted with target bounds: back to the target's units
            mean = model["y_offset"] + model["y_scale"] * mean
        predictions = pd.Series(mean, dtype=object)
    predictions[incomplete] = None
    result = pd.DataFrame({"prediction": predictions})
    if getattr(args, "interval", None) is not None:  # prediction intervals (docs/inference.md)
        from .inference.records import prediction_intervals

        if classes or "inference" not in model:
            raise CLIError("--interval needs a regression model fitted with --summary (--loss squared)")
        try:
            lower, upper = prediction_intervals(model["inference"], X, args.interval)
        except ValueError as error:
            raise CLIError(str(error)) from None
        result["lower"], result["upper"] = pd.Series(lower, dtype=object), pd.Series(upper, dtype=object)
        result.loc[incomplete, ["lower", "upper"]] = None
    if to_file:
        write_atomic(args.out, lambda p: result.to_csv(p, index=False))
        print(f"{len(result)} predictions written to {args.out}")
    else:
        result.to_csv(sys.stdout, index=False)
    return 0


# ----------------------------------------------------------------------------- demo / bench
def cmd_demo(args) -> int:
    from .bench.demo import DemoConfig, plot_demo, run_demo

    out = check_output_dir(args.out)
    config = DemoConfig(
        algorithms=tuple(args.algorithms), epsilons=tuple(args.epsilons), delta=args.delta,
        mu=args.mu, repeats=args.repeats, seed=args.seed,
    )
    total = len(config.algorithms) * len(config.epsilons) * config.repeats
    with _Progress("demo: private fits on ADULT", total) as progress:
        table, context = run_demo(config, progress=progress.advance)
    console = _console()
    console.print(_table(
        table, f"dperm demo: ADULT ({context['n_train']} train x {context['n_features']} features, "
        f"{context['n_test']} test), logistic loss + (mu/2)||w||^2, mu={config.mu:g}, delta={config.delta:g}",
        floats={"excess_risk": ".3e", "test_accuracy": ".4f", "seconds": ".3f", "epsilon": "g"},
    ))
    write_atomic(out / "demo.csv", lambda p: table.to_csv(p, index=False))
    png = write_atomic(out / "demo.png", lambda p: plot_demo(table, p))
    console.print(f"table written to {out / 'demo.csv'}; plot written to {png}")
    return 0


def cmd_bench_scaling(args) -> int:
    from .bench.scaling import scaling_command

    check_output_dir(args.out)
    with _Progress(f"bench scaling: {args.algorithm} over n", len(set(args.sizes)) * args.repeats) as progress:
        report = scaling_command(
            args.algorithm, sizes=args.sizes, repeats=args.repeats, out=args.out, epsilon=args.epsilon,
            delta=args.delta, d=args.d, seed=args.seed, problem=args.problem, mu=args.mu, radius=args.radius,
            progress=progress.advance,
        )
    s = report.summary
    console = _console()
    console.print(_table(
        report.frame[["n", "measured", "measured_sem", "bound", "seconds"]],
        f"dperm bench scaling: {s['algorithm']} on {s['problem']} ({s['setting']}), d={s['d']}, "
        f"epsilon={s['epsilon']:g}, delta={s['delta']:g}; measured: {s['quantity']}; bound: {s['source']}",
        floats={"n": ".0f", "measured": ".3e", "measured_sem": ".2e", "bound": ".3e", "seconds": ".4f"},
    ))
    console.print(report.text())
    console.print("The bound holds up to hidden constants: only its slope compares with the measurement.")
    console.print(f"table written to {report.csv}; plot written to {report.png}; summary in {report.json}")
    return 0


def cmd_bench_table3(args) -> int:
    from .bench.table3 import Table3Config, comparison_frame, plot_table3, run_table3, summarize

    out = check_output_dir(args.out)
    config = Table3Config(
        datasets=tuple(args.datasets), epsilons=tuple(args.epsilons), delta=args.delta,
        algorithms=tuple(args.algorithms) if args.algorithms else None,
        repeats=args.repeats,
        other_repeats=args.other_repeats if args.other_repeats is not None else min(args.repeats, 20),
        algorithm_repeats={} if args.sgd_repeats is None else {"dp_sgd": args.sgd_repeats},
        radius=args.radius if args.radius > 0 else None, max_rows=args.max_rows, seed=args.seed, n_jobs=args.n_jobs,
    )
    with _Progress("bench table3: private fits", None) as progress:
        frame = run_table3(config, out, progress=progress.update)
    summarize(frame, out)
    ok = frame[frame["status"] == "ok"]
    runs = ok.groupby(["dataset", "mu", "epsilon", "algorithm"]).size().max() if len(ok) else 0
    console = _console()
    comparison = comparison_frame(frame)
    console.print(_table(
        comparison[["dataset", "mu", "eps", "Out-GD error", "DP-SGD error", "best (all algorithms)"]],
        f"dperm bench table3 ({PAPER}, Table 3), delta={config.delta:g}: mean excess empirical risk ± s.e. "
        f"over {runs} runs at most",
    ))
    console.print(_table(
        comparison[["dataset", "mu", "eps", "Out-GD s", "DP-SGD s", "paper Out-GD s", "paper DP-SGD s"]],
        "CPU seconds per run (ours ± s.e.; the paper's, on its own machine)",
    ))
    pngs = plot_table3(frame, out)
    console.print(f"runs in {out / 'runs.csv'} (rerun to resume or extend); every algorithm and the paper's "
                  f"figures in {out / 'table3.md'}; plots {', '.join(str(p) for p in pngs)}")
    return 0


def cmd_algorithms(args) -> int:
    import pandas as pd

    from .algorithms import list_algorithms

    infos = list_algorithms()
    if args.name:
        chosen = [info for info in infos if info.name == args.name]
        if not chosen:
            raise CLIError(f"no algorithm named {args.name!r}; `dperm algorithms` lists them")
        import textwrap

        row = chosen[0].as_row()
        for key in ("name", "setting", "guarantee", "requires", "paper", "gradient complexity", "summary"):
            if row.get(key):
                print(textwrap.fill(str(row[key]), width=80, initial_indent=f"{key}: ", subsequent_indent="    "))
        return 0
    frame = pd.DataFrame([info.as_row() for info in infos])[["name", "guarantee", "setting"]]
    _console().print(_table(frame, "dperm algorithm catalogue (details: dperm algorithms NAME)"))
    return 0


# ----------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """Usage errors as one line with the help hint, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.HelpFormatter):
    """Every option with its meaning and its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or not action.option_strings or action.default in (None, argparse.SUPPRESS):
            return text
        default = action.default
        if isinstance(default, bool):
            shown = "on" if default else "off"
        elif isinstance(default, (list, tuple)):
            shown = " ".join(str(v) for v in default)
        else:
            shown = str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value}")
    return value


def _sub(sub, name: str, help: str, description: str | None = None):
    return sub.add_parser(name, help=help, description=description or help, formatter_class=_HelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dperm`` (every option documented with its default)."""
    parser = _Parser(prog="dperm", description="Differentially private empirical risk minimization.",
                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"dperm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = _sub(sub, "demo", "private learners x epsilons on the embedded ADULT data (about 1.5 min on 2 cores)",
                "Fit several private learners at several epsilons on ADULT (logistic loss, l2 "
                "regularizer); print excess empirical risk, test accuracy and seconds next to the "
                "non-private optimum; write demo.csv and demo.png.")
    demo.add_argument("--algorithms", nargs="+", default=list(DEMO_ALGORITHMS), metavar="NAME",
                      help="catalogue names of the learners (see dperm algorithms)")
    demo.add_argument("--epsilons", nargs="+", type=float, default=list(DEMO_EPSILONS), metavar="EPS",
                      help="privacy parameters epsilon to run (each > 0)")
    demo.add_argument("--delta", type=float, default=1e-5, help="privacy parameter delta of every fit")
    demo.add_argument("--mu", type=float, default=1e-3, help="l2 regularization strength mu of (mu/2)||w||^2")
    demo.add_argument("--repeats", type=_positive_int, default=1, help="private fits per cell (averaged)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the noise (reproducible runs)")
    demo.add_argument("--out", default="dperm_output", help="folder for demo.csv and demo.png")
    demo.set_defaults(func=cmd_demo)

    fit = _sub(sub, "fit", "fit a private model on a CSV file, write it as JSON",
               "Fit a private linear model on a raw CSV file (numeric, categorical and missing values) and "
               "write it as JSON. By default the table goes through dperm.make_pipeline's private "
               "preprocessing under the one budget: numeric columns scaled between declared (--bounds, free) "
               "or privately estimated bounds, with a missing-value indicator; categorical columns one-hot "
               "over declared (--categories, free) or privately selected categories; rows bounded with a "
               "public norm; a regression target between declared (--y-bounds) or private bounds. model.json "
               "holds the declared values and the released noisy statistics, the model, the privacy spent "
               "and the public hyper-parameters; `dperm predict` applies the same preprocessing. With "
               "--data-norm (rows already prepared, numbers only) the rows are used as they are. See "
               "docs/your-data.md.")
    fit.add_argument("data", help="CSV file with a header row; every column but the target (and the weights) "
                                  "is a feature")
    fit.add_argument("--target", required=True, help="name of the label column (required)")
    fit.add_argument("--sample-weight", default=None, metavar="COLUMN",
                     help="name of a column of per-row weights in [0, 1] (not a feature; the privacy guarantee "
                          "is unchanged, each weight part of its row's private record) (default: unweighted)")
    fit.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0 (required)")
    fit.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                     help="privacy parameter delta in [0, 1), well below 1/rows; 0 asks for pure epsilon-DP "
                          f"(several algorithms need delta > 0) (default: {DEFAULT_DELTA:g}, the estimators' default)")
    fit.add_argument("--loss", default="logistic",
                     choices=["logistic", "huberized_hinge", "hinge", "squared", "huber", "sigmoid_squared",
                              "biweight"],
                     help="logistic, huberized_hinge, hinge: classification; the others: regression")
    fit.add_argument("--classes", default=None, metavar="LABELS",
                     help="the label set, declared (public), comma-separated, e.g. no,yes (default: taken from "
                          "the data with a warning that the label set is then released unprotected)")
    fit.add_argument("--algorithm", default="auto",
                     help="a catalogue name (dperm algorithms), or auto: chosen from the problem's properties")
    fit.add_argument("--regularizer", default=None, metavar="SPEC",
                     help="l2:MU, l1:LAMBDA, elastic_net:LAMBDA:RATIO or none (default: the estimator's "
                          "l2 regularizer with its default alpha, see docs/estimators.md)")
    fit.add_argument("--constraint", default=None, metavar="SPEC",
                     help="l2_ball:R, l1_ball:R or box:R (default: none; squared loss: l2_ball:1)")
    fit.add_argument("--preprocessing", default="auto", choices=["auto", "private", "none"],
                     help="private: dperm.make_pipeline's private preprocessing (any column types, missing "
                          "values); none: numeric rows used as they are, clipped at --data-norm; auto: none when "
                          "--data-norm is given and nothing is declared, else private")
    fit.add_argument("--bounds", action="append", default=None, metavar="COLUMN=LOW:HIGH",
                     help="declared public bounds of a numeric column (free; repeatable), e.g. --bounds age=0:100 "
                          "(default: estimated privately within the budget)")
    fit.add_argument("--categories", action="append", default=None, metavar="COLUMN=A,B,C",
                     help="declared public categories of a column, which makes it categorical (free; repeatable; "
                          "other values encode as zeros), e.g. --categories sex=female,male (default: a column "
                          "that is not all numbers is categorical, its frequent categories selected privately)")
    fit.add_argument("--y-bounds", default=None, metavar="LOW:HIGH",
                     help="declared public bounds of a regression target, in its units (free); predictions come "
                          "back in those units (default: estimated privately within the budget); a negative LOW "
                          "takes the form --y-bounds=-10:10")
    fit.add_argument("--schema", default=None, metavar="JSON",
                     help="a JSON file of declarations: bounds, categories, numeric, categorical, y_bounds (format "
                          "in docs/your-data.md) (default: none)")
    fit.add_argument("--data-norm", type=float, default=None,
                     help="declared public bound on the L2 norm of each feature row of a numeric CSV whose rows are "
                          "already prepared; longer rows are scaled down; implies --preprocessing none (default: "
                          "none, the private preprocessing bounds the rows)")
    fit.add_argument("--label-bound", type=float, default=1.0,
                     help="declared public bound on |label| in the model's units (regression losses; after "
                          "--y-bounds or the private target bounds); larger labels are clipped")
    fit.add_argument("--no-intercept", action="store_true",
                     help="fit no intercept (default: an intercept, as a constant feature of value "
                          "--intercept-scaling)")
    fit.add_argument("--intercept-scaling", type=float, default=1.0,
                     help="value of the constant intercept feature (> 0)")
    fit.add_argument("--params", default=None, metavar="JSON",
                     help='algorithm hyper-parameters as a JSON object, e.g. \'{"steps": 100}\' (default: the '
                          "algorithm's theorem)")
    fit.add_argument("--seed", type=int, default=None,
                     help="seed of the noise, for reproducible experiments (default: fresh OS entropy)")
    fit.add_argument("--out", default="model.json", help="file for the model (JSON)")
    fit.add_argument("--summary", action="store_true",
                     help="fit the unregularized model with error bars (--loss logistic, huber or squared) and print "
                          "the table: coef, std err, z, P>|z|, 95%% interval; model.json holds the intervals "
                          "(docs/inference.md)")
    fit.add_argument("--accountant", default=None, metavar="LEDGER",
                     help="charge this fit to a ledger made by `dperm budget` (composed exactly with its earlier "
                          "fits; refused before the data is read if the total would be exceeded) (default: none)")
    fit.set_defaults(func=cmd_fit)

    aud = _sub(sub, "audit", "black-box audit: a lower bound on a mechanism's epsilon from worst-case neighbours",
               "Run a catalogue algorithm many times on two worst-case replace-one neighbours and report a "
               "Clopper-Pearson lower bound on its epsilon (docs/audit.md); exit status 1 if the bound exceeds "
               "the claim.")
    aud.add_argument("algorithm", help="a catalogue name with an audit scenario (see docs/audit.md)")
    aud.add_argument("--epsilon", type=float, default=2.0, help="the claimed epsilon (default: 2)")
    aud.add_argument("--delta", type=float, default=0.01, help="the claimed delta (default: 0.01)")
    aud.add_argument("--runs", type=_positive_int, default=4000, help="runs on each neighbour (default: 4000)")
    aud.add_argument("--confidence", type=float, default=0.95, help="confidence of the bound (default: 0.95)")
    aud.add_argument("--seed", type=int, default=0, help="seed of the runs (default: 0)")
    aud.add_argument("--miscalibrated", action="store_true",
                     help="run with about half the noise the claim needs (the audit should catch it)")
    aud.set_defaults(func=cmd_audit)

    budget = _sub(sub, "budget", "create a ledger of a total privacy budget, or show what it has spent",
                  "With --epsilon: create LEDGER, a total budget that `dperm fit --accountant LEDGER` charges. "
                  "Without: show what the fits charged to it have spent, composed exactly.")
    budget.add_argument("ledger", metavar="LEDGER", help="the ledger file (JSON)")
    budget.add_argument("--epsilon", type=float, default=None,
                        help="total epsilon > 0 of a new ledger (default: show an existing ledger)")
    budget.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                        help=f"total delta in [0, 1) of a new ledger (default: {DEFAULT_DELTA:g}, as dperm fit)")
    budget.set_defaults(func=cmd_budget)

    predict = _sub(sub, "predict", "predict with a model written by `dperm fit`",
                   "Predict the label (classification) or value (regression) of every row of a CSV file.")
    predict.add_argument("model", help="model file written by dperm fit")
    predict.add_argument("data", help="CSV file holding at least the model's feature columns")
    predict.add_argument("--on-missing", choices=["error", "empty"], default="error",
                         help="models fitted with --data-norm (no preprocessing): rows with a missing feature: error "
                              "stops, empty leaves their prediction empty (a model with the private preprocessing "
                              "handles missing values as in its fit)")
    predict.add_argument("--out", default=None,
                         help="CSV file for the predictions; - for standard output (default: standard output)")
    predict.add_argument("--interval", nargs="?", type=float, const=0.95, default=None, metavar="LEVEL",
                         help="add lower and upper columns: the prediction interval of a new observation at LEVEL "
                              "(default 0.95), for a model fitted with --loss squared --summary")
    predict.set_defaults(func=cmd_predict)

    bench = _sub(sub, "bench", "benchmarks: table3, scaling")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    scaling = _sub(bench_sub, "scaling", "run an algorithm over growing n; plot the measured error against its "
                                         "bound's slope")
    scaling.add_argument("--algorithm", default="gd_output_perturbation", help="catalogue name of the algorithm")
    scaling.add_argument("--sizes", nargs="+", type=_positive_int, default=list(SCALING_SIZES), metavar="N",
                         help="sample sizes n")
    scaling.add_argument("--repeats", type=_positive_int, default=5,
                         help="independent runs per size (fresh noise at every size)")
    scaling.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter epsilon")
    scaling.add_argument("--delta", type=float, default=None,
                         help="privacy parameter delta, fixed over n (default: 1e-5; 0 for algorithms that give "
                              "pure DP only)")
    scaling.add_argument("--d", type=_positive_int, default=10, help="dimension of the synthetic problem")
    scaling.add_argument("--problem", default="auto", choices=["auto", *SCALING_PROBLEMS],
                         help="synthetic problem; auto picks one that meets the algorithm's assumptions")
    scaling.add_argument("--mu", type=float, default=0.1, help="l2 strength of the strongly convex problems")
    scaling.add_argument("--radius", type=float, default=2.0, help="L2-ball radius of the constrained problems")
    scaling.add_argument("--seed", type=int, default=0, help="seed of the data and the noise")
    scaling.add_argument("--out", default="dperm_output",
                         help="folder for scaling_<algorithm>.csv, .png and .json")
    scaling.set_defaults(func=cmd_bench_scaling)

    table3 = _sub(bench_sub, "table3",
                  f"Table 3 of {PAPER}: Out-GD vs DP-SGD (and every other applicable algorithm) on five UCI datasets",
                  f"Reproduce Table 3 of {PAPER}: output-perturbation gradient descent (Out-GD) against "
                  "DP-SGD, and every other applicable algorithm, on five UCI datasets at four epsilons. "
                  "Rows are scaled to unit norm and the mu = 0 problems constrained to an L2 ball "
                  "(--radius), unlike the paper: compare dperm's algorithms with each other, not the "
                  "error values with the paper's (see docs/results.md).")
    table3.add_argument("--datasets", nargs="+", default=list(TABLE3_DATASETS), choices=TABLE3_DATASETS,
                        metavar="NAME", help=f"datasets among {', '.join(TABLE3_DATASETS)}")
    table3.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0], metavar="EPS",
                        help="privacy parameters epsilon")
    table3.add_argument("--delta", type=float, default=1e-3, help="privacy parameter delta (the paper's)")
    table3.add_argument("--algorithms", nargs="+", default=None, metavar="NAME",
                        help="catalogue names (default: gd_output_perturbation, dp_sgd and every other "
                             "registered algorithm)")
    table3.add_argument("--repeats", type=_positive_int, default=100,
                        help="runs per cell of the paper's two methods (the paper's 100)")
    table3.add_argument("--other-repeats", type=_count, default=None,
                        help="runs per cell of the other algorithms (default: min(repeats, 20))")
    table3.add_argument("--sgd-repeats", type=_count, default=None,
                        help="runs per cell of dp_sgd, overriding --repeats (default: --repeats; dp_sgd dominates "
                             "the running time)")
    table3.add_argument("--radius", type=float, default=10.0,
                        help="L2-ball radius of the mu = 0 problems (0: unconstrained; DP-SGD is then n/a)")
    table3.add_argument("--max-rows", type=_positive_int, default=None,
                        help="use a fixed random subset of this many rows of each dataset (default: all rows)")
    table3.add_argument("--n-jobs", type=int, default=-1, help="worker processes (-1: all cores)")
    table3.add_argument("--seed", type=int, default=0, help="root seed of every run's noise")
    table3.add_argument("--out", default="table3_output", help="folder for runs.csv, table3.md and the plots")
    table3.set_defaults(func=cmd_bench_table3)

    warm = _sub(sub, "warmup", "compile the stochastic algorithms' kernels once (run after installing)",
                "Compile the numba kernels (dp_sgd's, dp_svrg's and the secure path's exact samplers), or "
                "load them from numba's disk cache, so that the first fit of a new process does not "
                "compile them (seconds per kernel). The first 'import dperm' of an installation starts "
                "this in the background (DPERM_WARMUP=0 turns that off).")
    warm.set_defaults(func=cmd_warmup)

    algorithms = _sub(sub, "algorithms", "list the algorithm catalogue, or describe one algorithm")
    algorithms.add_argument("name", nargs="?", default=None, help="an algorithm to describe (default: list all)")
    algorithms.set_defaults(func=cmd_algorithms)
    return parser


def cmd_warmup(args) -> int:
    from ._warmup import warm_all

    print(f"dperm: kernels ready in {warm_all():.1f} s")
    return 0


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _budget_exceeded(error: BaseException) -> bool:
    """Whether ``error`` is a BudgetExceededError (looked up only if the privacy layer was
    imported: it cannot have been raised otherwise, and start-up stays light)."""
    budget = sys.modules.get("dperm.privacy.budget")
    return budget is not None and isinstance(error, budget.BudgetExceededError)


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of a
    closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad usage or input, 1 internal failure)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.func(args)
        except (CLIError, ValueError, TypeError) as error:
            print(f"dperm: error: {_one_line(error)}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            # the reader of standard output went away (`dperm predict ... --out - | head`):
            # stop quietly, as Unix tools do, with the status of a SIGPIPE death
            _silence_stdout()
            return 141
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            print(f"dperm: error: {error.strerror or _one_line(error)}{where}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("dperm: interrupted", file=sys.stderr)
            return 130
        except Exception as error:  # noqa: BLE001 - one line instead of a traceback
            if _budget_exceeded(error):  # a refused charge: bad input, like the others
                print(f"dperm: error: {_one_line(error)}", file=sys.stderr)
                return 2
            print(f"dperm: internal error: {type(error).__name__}: {_one_line(error)} (please report it)",
                  file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
