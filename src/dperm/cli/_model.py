"""The estimator `dperm fit` runs and the model file it writes (model.json: public values
only; the seed is never written)."""

from __future__ import annotations

import json

from ..exceptions import CLIError


def _parse_spec(text: str | None, option: str, example: str):
    """'l2:0.1' -> ('l2', 0.1); 'elastic_net:0.1:0.5' -> ('elastic_net', 0.1, 0.5); 'none' -> None."""
    if text is None or text.lower() == "none":
        return None
    name, *values = text.split(":")
    try:
        return (name, *[float(v) for v in values])
    except ValueError:
        raise CLIError(f"cannot parse {option} {text}; write NAME:VALUE, e.g. {option} {example}") from None


def _estimator(args, loss_name: str, classes):
    """The estimator `dperm fit` runs: the one of the loss (intercept, one-vs-rest and
    clipping exactly as in Python), with the command line's regularizer when given."""
    from ..estimators import (DPGLMRegressor, DPHuberRegressor, DPLinearRegression, DPLinearSVC,
                             DPLogisticRegression, DPRobustRegressor)
    from ..estimators.linear import _DPClassifier
    from ..problem.losses import make_loss

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
        from ._private import preprocessing_record

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
