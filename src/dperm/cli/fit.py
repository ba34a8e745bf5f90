"""`dperm fit`: a private model on a CSV file, written as JSON (model.json)."""

from __future__ import annotations

import json
import warnings

from .._files import check_output_file, exclusive_lock, write_text_atomic
from ..exceptions import CLIError
from ._declarations import check_against_header, parse_declarations
from ._labels import (
    _check_categorical, _declared_classes, _match_classes, _weigh_out, declared_classes, label_set, present_labels,
)
from ._model import _estimator, _model_record
from ._private import _check_ledger_affords, fit_pipeline
from .budget import _load_ledger
from .tables import _as_numbers, _columns_with_missing, _numeric_features, _read_csv, read_features, read_header
from .._warnings import user_stacklevel


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
    from ..problem.losses import make_loss

    if args.params:
        try:
            hyper = json.loads(args.params)
        except json.JSONDecodeError:
            raise CLIError('--params must be a JSON object, e.g. --params \'{"steps": 100}\'') from None
        if not isinstance(hyper, dict):
            raise CLIError('--params must be a JSON object, e.g. --params \'{"steps": 100}\'')
    loss = make_loss(args.loss)

    declared = parse_declarations(args)  # syntax only, before the data is read
    private = _preprocessing_mode(args, declared) == "private"
    regime = getattr(args, "regime", "auto")
    if regime != "auto" and not private:
        raise CLIError("--regime is for a fit through the private preprocessing (without --data-norm / "
                       "--preprocessing none)")
    if regime == "constant" and loss.binary and args.classes is None:
        raise CLIError("--regime constant for a classifier releases noisy counts of the declared classes: "
                       "give --classes")
    weight_column = args.sample_weight
    if weight_column is not None and weight_column == args.target:
        raise CLIError("--sample-weight names the target column; the weights need a column of their own")
    label_columns = [args.target] + ([weight_column] if weight_column is not None else [])
    header = read_header(args.data)
    for column, option, what in ((args.target, "--target", "label"), (weight_column, "--sample-weight", "weight")):
        if column is not None and column not in header:
            raise CLIError(f"no column {column!r} in {args.data!r}; name the {what} column with {option}")
    check_against_header(declared, header, label_columns, args.data)
    if private:
        frame, features, numeric, categorical = read_features(args.data, declared, label_columns)
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
        classes = declared_classes(args.classes) if private or prepared_total else _declared_classes(
            args.classes, target, args.target)
        if classes is None:
            # private route: a missing label weighs 0, the label set is the present labels'
            present = present_labels(target) if private else target
            _check_categorical(present, args.target, loss.name)
            from ..privacy.budget import PrivacyWarning

            warnings.warn("--classes was not given: the label set is taken from the data and treated as public "
                          "(it is released with the model, unprotected); declare it, e.g. --classes no,yes",
                          PrivacyWarning, stacklevel=user_stacklevel())
            classes = label_set(present) if private else sorted(target.unique().tolist())
            if len(classes) < 2:
                raise CLIError(f"column {args.target!r} has fewer than 2 distinct labels; a classifier needs 2")
    elif args.classes is not None:
        raise CLIError(f"--classes is for classification losses; --loss {loss.name} is a regression loss")
    elif not private and not prepared_total and target.dtype.kind not in "biuf":
        raise CLIError(f"column {args.target!r} is not numeric; --loss {loss.name} needs numeric labels")
    estimator = _estimator(args, loss.name, classes)
    if prepared_total:  # the estimator alone: the pipeline's row-by-row map made here
        y = _match_classes(target, classes) if loss.binary else _as_numbers(target).to_numpy()
        weight = None if weight_column is None else _as_numbers(frame[weight_column]).to_numpy()
        y, sample_weight = _weigh_out(y, classes, weight, loss.binary)
    else:
        y = target.to_numpy()
        y = y if loss.binary or private else y.astype(float)
        sample_weight = None if weight_column is None else frame[weight_column].to_numpy(
            dtype=object if private else float)
    if private:
        pipe = fit_pipeline(args, estimator, declared, features, numeric, categorical, y,
                                    not loss.binary, sample_weight, args.ledger)
        estimator = pipe.steps[-1][1]
        record = _model_record(estimator, args, features, loss.name, pipe=pipe, declared=declared)
        spent, what = pipe.privacy_spent_, "private preprocessing and "
    else:
        if args.ledger is not None:  # before anything is charged: the budget asked for (public)
            _check_ledger_affords(args.epsilon, args.delta, args.ledger)
        estimator.fit(features.to_numpy(dtype=float), y, sample_weight=sample_weight)
        record = _model_record(estimator, args, features, loss.name)
        spent, what = estimator.privacy_spent_, ""
    if getattr(args, "summary", False):
        from ..inference.records import inference_record

        record["inference"] = inference_record(estimator, None if private else list(features.columns))
        print(pipe.summary() if private else estimator.summary(names=list(features.columns)))
    write_text_atomic(args.out, json.dumps(record, indent=2) + "\n")
    fitted = f"{what}{estimator.solver_} ({loss.name} loss, {'no intercept' if args.no_intercept else 'with intercept'})"
    if private and getattr(pipe, "regime_", "model") == "constant":  # a released constant, not a model
        fitted = ("the released majority class (noisy class counts; --regime model fits the model)" if loss.binary
                  else "the intercept-only model (the target's private median; --regime model fits the model)")
    print(f"fitted {fitted}; privacy spent: epsilon={spent.epsilon:.6g}, delta={spent.delta:.3g}; "
          f"model written to {args.out}")
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
