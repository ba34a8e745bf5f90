"""`dperm predict`: predictions of a model written by `dperm fit`."""

from __future__ import annotations

import sys

from .._files import check_output_file, write_atomic
from ..exceptions import CLIError
from .tables import _columns_with_missing, _numeric_features, _read_csv, _read_model


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
        from ._private import transform_for_predict

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
        from ..inference.records import prediction_intervals

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
