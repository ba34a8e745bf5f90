"""Intervals on dperm's linear estimators: the ``inference`` parameter's fit and the
``conf_int`` / ``bse_`` / ``pvalues_`` / ``summary`` surface (docs/inference.md).

With ``inference=True`` (or a dict of :func:`~dperm.inference.mechanism.newton_inference`
options) the estimator's whole budget goes to the inference fit: the unregularized,
unconstrained model (the coefficients statsmodels estimates) by noisy Newton steps, with a
released covariance. ``coef_`` and ``intercept_`` are then that fit's; ``alpha_`` is 0.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..distributed import is_dask_collection
from ..privacy.accountant import epsilon as certified_epsilon
from ..privacy.mechanisms import charging, single_release
from ..problem.erm import ERMProblem
from ..problem.multinomial import MultinomialProblem
from .mechanism import newton_inference, public_outlook
from .scaled import DEFAULT_LEAST_SQUARES_METHOD, scaled_huber_inference, scaled_outlook
from .softmax import ReferenceSoftmax
from .table import CoefficientTable, InferenceWarning
from .._warnings import user_stacklevel

__all__ = ["InferenceMixin", "INFERENCE_OPTIONS"]

INFERENCE_OPTIONS = ("steps", "covariance", "gradient_share", "meat_share", "failure_probability", "separation",
                     "method", "tuning")
# least squares' two fits (docs/inference.md): the delta method on the noisy sufficient
# statistics, or the Huber fit at a multiple of a private residual scale
LEAST_SQUARES_METHODS = ("auto", "sufficient_statistics", "scaled_huber")


def _options(value) -> dict | None:
    """None when inference is off; else the options for newton_inference (public)."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(INFERENCE_OPTIONS))
        if unknown:
            raise ValueError(f"inference options {unknown} are unknown; the options are {list(INFERENCE_OPTIONS)}")
        return dict(value)
    raise ValueError(f"inference must be None, True/False or a dict of options, got {value!r}")


class InferenceMixin:
    """Adds the inference fit and its intervals to a dperm linear estimator (first base).

    Attributes set by a fit with ``inference``: ``inference_`` (a
    :class:`~dperm.inference.table.CoefficientTable`, intercept first), ``bse_`` and
    ``pvalues_`` (same order), ``inference_spent_`` (the guarantee of the releases used
    for the intervals only, alone).
    """

    def _inference_loss(self):
        """The loss of the model the intervals are for (the estimator's own by default)."""
        return self._loss()

    def fit(self, X, y, sample_weight=None):
        options = _options(getattr(self, "inference", None))
        for name in ("inference_", "bse_", "pvalues_", "inference_spent_"):
            if hasattr(self, name):
                delattr(self, name)
        self._inference_scale = 1.0
        if options is not None and is_dask_collection(X):
            raise ValueError("inference has no Dask path yet; pass the data in memory")
        super().fit(X, y, sample_weight)
        if options is not None:
            self._finish_inference()
        return self

    def _set_target_map(self, coef, intercept, offset: float, scale: float) -> None:
        self._inference_scale = float(scale)  # public: from the declared y_bounds
        super()._set_target_map(coef, intercept, offset, scale)

    def _fit_multinomial(self, X, y, budget, rng, sample_weight=None):
        """The multinomial model's inference fit: class 0 (the first of ``classes_``) the
        reference, its coefficients 0, as statsmodels' MNLogit (dperm.inference.softmax)."""
        options = _options(getattr(self, "inference", None))
        if options is None:
            return super()._fit_multinomial(X, y, budget, rng, sample_weight=sample_weight)
        if self.constraint is not None:
            raise ValueError("inference estimates the unconstrained model; leave constraint=None")
        k = len(self.classes_)
        scaling = float(self.intercept_scaling) if self.fit_intercept else 0.0
        self.alpha_ = 0.0
        base = MultinomialProblem(X, np.searchsorted(self.classes_, y), k, None, None,
                                  data_norm=self._effective_norm(), intercept_scaling=scaling,
                                  sample_weight=sample_weight)
        fit = self._run_inference(ReferenceSoftmax(base), budget, rng, options)
        p = base.n_inputs
        W = np.column_stack([np.zeros(p), fit.coef.reshape(p, k - 1)])  # class 0 the reference
        return self._set_multinomial_fit(fit, W, X.shape[1], scaling)

    def _run_inference(self, problem, budget, rng, options):
        """The public warning, the charged fit, the refusal's warning."""
        fit_inference, outlook, options = _least_squares_method(problem, budget, options)
        message = outlook(problem, budget, **options)
        if message is not None:
            warnings.warn(f"{type(self).__name__}: {message}", InferenceWarning, stacklevel=user_stacklevel())
        self.solver_ = "newton_inference"
        with charging(getattr(self, "accountant", None)):  # charged before the data is read
            fit = fit_inference(problem, budget, rng=rng, **options)
        if fit.info["refused"]:
            warnings.warn(f"{type(self).__name__}: the released Hessian did not clear its noise; the intervals are "
                          "refused (infinite). Use a larger epsilon, more rows or fewer features.",
                          InferenceWarning, stacklevel=user_stacklevel())
        return fit

    def _fit_binary(self, X, y_signed, budget, rng, label_bound=1.0, sample_weight=None):
        options = _options(getattr(self, "inference", None))
        if options is None:
            return super()._fit_binary(X, y_signed, budget, rng, label_bound=label_bound,
                                       sample_weight=sample_weight)
        if getattr(self, "classes_", None) is not None and len(self.classes_) > 2:
            raise ValueError("inference covers the binary and the multinomial logistic models, not one-vs-rest; "
                             "use multi_class='multinomial'")
        if self.constraint is not None:
            raise ValueError("inference estimates the unconstrained model; leave constraint=None")
        scaling = float(self.intercept_scaling) if self.fit_intercept else 0.0
        self.alpha_ = 0.0  # the unregularized model: the coefficients a person means
        problem = ERMProblem(X, y_signed, self._inference_loss(), None, None, data_norm=self._effective_norm(),
                             label_bound=label_bound, intercept_scaling=scaling, sample_weight=sample_weight)
        fit = self._run_inference(problem, budget, rng, options)
        if self.fit_intercept:
            return fit.coef[:-1], fit.coef[-1] * scaling, fit
        return fit.coef, 0.0, fit

    def _finish_inference(self) -> None:
        """The coefficient table in the estimator's units (intercept first): a
        post-processing of the released estimate and covariance."""
        fit = self.fits_[0]
        info = fit.info
        order, factors, params, names = self._inference_layout()
        cov = np.asarray(info["covariance"])[np.ix_(order, order)] * np.outer(factors, factors)
        noise = np.asarray(info["noise_covariance"])[np.ix_(order, order)] * np.outer(factors, factors)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(np.isfinite(np.diag(cov)), np.diag(noise) / np.diag(cov), np.nan)
        variance_leaf = _variance_event(fit)
        budget_delta = self.privacy_spent_.delta
        inference_eps = certified_epsilon(variance_leaf, budget_delta) if variance_leaf is not None else 0.0
        privacy = {"epsilon": float(self.privacy_spent_.epsilon), "delta": float(budget_delta),
                   "inference_share": float(fit.hyperparameters["meat_share"]),
                   "inference_epsilon": float(inference_eps)}
        covariance = fit.hyperparameters["covariance"]
        if fit.hyperparameters.get("method") == "scaled_huber":
            method = (f"least squares by a Huber fit at {fit.hyperparameters['tuning']:g} private residual scales "
                      f"(a sufficient-statistics pilot, then {fit.hyperparameters['steps']} noisy Newton steps), "
                      f"{covariance} covariance (Avella-Medina, Bradshaw, Loh 2023)")
        else:
            method = (f"noisy Newton ({fit.hyperparameters['steps']} steps), {covariance} covariance "
                      "(Avella-Medina, Bradshaw, Loh 2023)")
        self.inference_ = CoefficientTable(names, params, cov, bool(info["refused"]), method, privacy, share)
        self.bse_ = self.inference_.bse
        self.pvalues_ = self.inference_.pvalues
        self.inference_spent_ = type(self.privacy_spent_)(min(inference_eps, self.privacy_spent_.epsilon),
                                                          budget_delta) if variance_leaf is not None else None

    def _multinomial_inference(self) -> bool:
        return getattr(self, "multi_class_", None) == "multinomial"

    def _inference_layout(self):
        """(order, factors, params, names): the table's rows as indices into the fit's
        coordinates (intercept column last), the unit factor of each, the estimates in
        the estimator's units and the names. Binary and regression: intercept first. The
        multinomial model: per class but the reference (class 0, coefficients 0), its
        intercept then its features, named ``class:feature``."""
        scale = self._inference_scale
        lead = float(self.intercept_scaling)
        if self._multinomial_inference():
            k = len(self.classes_)
            d = np.asarray(self.coef_).shape[1]
            p, m = d + (1 if self.fit_intercept else 0), k - 1
            feature_names = self._inference_feature_names(d)
            order, factors, params, names = [], [], [], []
            for c in range(m):
                label = self.classes_[c + 1]
                if self.fit_intercept:
                    order.append((p - 1) * m + c)
                    factors.append(lead)
                    params.append(float(self.intercept_[c + 1]))
                    names.append(f"{label}:intercept")
                order += [j * m + c for j in range(d)]
                factors += [1.0] * d
                params += [float(v) for v in self.coef_[c + 1]]
                names += [f"{label}:{n}" for n in feature_names]
            return order, np.asarray(factors) * scale, np.asarray(params), tuple(names)
        d = np.asarray(self.coef_).reshape(-1).shape[0]
        order = ([d] if self.fit_intercept else []) + list(range(d))
        factors = np.full(len(order), scale)
        if self.fit_intercept:
            factors[0] = scale * lead
        params = np.concatenate(([float(np.ravel(self.intercept_)[0])] if self.fit_intercept else [],
                                 np.asarray(self.coef_, dtype=np.float64).reshape(-1)))
        names = tuple((["intercept"] if self.fit_intercept else []) + list(self._inference_feature_names(d)))
        return order, factors, params, names

    def _inference_feature_names(self, d: int) -> list:
        names = getattr(self, "feature_names_in_", None)
        return [str(n) for n in names] if names is not None and len(names) == d else [f"x{j}" for j in range(d)]

    def _inference_table(self) -> CoefficientTable:
        if not hasattr(self, "inference_"):
            raise AttributeError(f"{type(self).__name__} has no intervals: fit it with inference=True "
                                 "(docs/inference.md)")
        return self.inference_

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals at level ``1 - alpha`` for ``[intercept, coef...]`` (intercept
        first, as ``inference_.names``), shape (p, 2); they cover the sampling error of
        the unregularized model's estimate and the privacy noise (docs/inference.md).
        A post-processing of the released model: free."""
        return self._inference_table().conf_int(alpha)

    def f_test(self, names=None) -> dict:
        """The joint Wald / F test of H0: the named coefficients (``inference_.names``; None:
        every coefficient but the intercepts, the regression's overall F test) are all 0,
        with the covariance of the intervals (sampling error and privacy noise).
        Returns ``{"F", "df_num", "df_denom", "p_value", "wald", "names", "refused"}``
        (``df_denom`` infinite: the chi-square form). A post-processing: free. The size
        and power measured in docs/inference.md; Alabi and Vadhan (2022) study private
        F tests for linear regression."""
        table = self._inference_table()
        if names is None:
            rows = [i for i, n in enumerate(table.names) if not str(n).endswith("intercept")]
        else:
            index = {str(n): i for i, n in enumerate(table.names)}
            unknown = [str(n) for n in names if str(n) not in index]
            if unknown:
                raise ValueError(f"unknown coefficient names {unknown}; the names are {list(table.names)}")
            rows = [index[str(n)] for n in names]
        return table.f_test(rows)

    def summary(self, alpha: float = 0.05, names=None, per_unit: dict | None = None,
                privacy: dict | None = None) -> str:
        """A statsmodels-like table: coef, std err, z, P>|z|, the interval, and the
        privacy spent (with the part released for the intervals only). ``names``
        replaces the feature names; ``per_unit`` ({name: spread}) adds the rows per
        original unit of linearly scaled columns; ``privacy`` overrides the privacy facts
        shown (a pipeline's total)."""
        table = self._inference_table()
        if privacy:
            table = CoefficientTable(table.names, table.params, table.covariance, table.refused, table.method,
                                     {**table.privacy, **privacy}, table.noise_share)
        d = np.asarray(self.coef_).shape[-1]
        labels = [str(c) for c in self.classes_[1:]] if self._multinomial_inference() else None
        if names is not None:
            names = [str(n) for n in names]
            if len(names) != d:
                raise ValueError(f"names must list the {d} features")
            if labels is None:
                full = (["intercept"] if self.fit_intercept else []) + names
            else:  # per class but the reference, as _inference_layout
                full = [f"{c}:{n}" for c in labels for n in (["intercept"] if self.fit_intercept else []) + names]
            table = CoefficientTable(tuple(full), table.params, table.covariance, table.refused, table.method,
                                     table.privacy, table.noise_share)
        if per_unit and labels is not None:
            per_unit = {f"{c}:{n}": v for c in labels for n, v in per_unit.items()}
        units = table.rescaled(per_unit) if per_unit else None
        return table.text(alpha, title=f"{type(self).__name__}: private coefficients with error bars",
                          per_unit=units)


def _least_squares_method(problem, budget, options: dict):
    """``(fit, outlook, options)``: least squares' fit by its ``method`` option ("auto": the
    scaled Huber fit, :data:`~dperm.inference.scaled.DEFAULT_LEAST_SQUARES_METHOD`), the
    other losses' Newton fit; a clear error, before any charge, for an option the fit does
    not take."""
    options = dict(options)
    method = options.pop("method", "auto")
    if method not in LEAST_SQUARES_METHODS:
        raise ValueError(f"inference method must be one of {LEAST_SQUARES_METHODS}, got {method!r}")
    squared = getattr(problem, "loss", None) is not None and problem.loss.name == "squared"
    if not squared:
        if method != "auto" or "tuning" in options:
            raise ValueError("the inference options 'method' and 'tuning' are least squares' (DPLinearRegression)")
        return newton_inference, public_outlook, options
    if method == "auto":
        method = DEFAULT_LEAST_SQUARES_METHOD
    if method == "scaled_huber":
        if options.get("covariance") not in (None, "sandwich"):
            raise ValueError("method='scaled_huber' uses the sandwich covariance; for covariance='model' use "
                             "method='sufficient_statistics'")
        return scaled_huber_inference, scaled_outlook, options
    if "tuning" in options:
        raise ValueError("'tuning' is an option of method='scaled_huber'")
    return newton_inference, public_outlook, options


def _variance_event(fit):
    """The event of the release used for the intervals only (the last leaf), or None."""
    if not fit.hyperparameters.get("meat_share"):
        return None
    return single_release(fit.event.events[-1])
