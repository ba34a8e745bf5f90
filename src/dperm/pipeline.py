"""One budget for a whole pipeline: private preprocessing and a private model, composed
exactly through their events (docs/your-data.md).

``make_pipeline(*steps, epsilon, delta)`` returns a :class:`DPPipeline`, a scikit-learn
``Pipeline`` whose private steps (dperm's private transformers, the target bounds of a
regression, the final dperm estimator) share the one total budget:

1. each private transformer gets ``shares[name] * epsilon`` (default
   :data:`DEFAULT_TRANSFORMER_SHARE`) and, if it takes a delta, ``DEFAULT_DELTA_SHARE *
   delta`` (a category selection without a declared list needs it; the numeric draws
   compose better with it); it charges its event before reading the data;
2. a regressor's target range is estimated privately at ``shares["y"] * epsilon``
   (default :func:`~dperm.preprocessing.target.target_share`: 0.1 to 0.5 by n and
   epsilon), inside the declared ``y_bounds`` when they are given (a private
   winsorization; ``target_range="declared"`` maps the declared bounds themselves, free,
   and is the default for an estimator fitted with ``inference``),
   never refused (a warning where the noise will dominate), and the predictions are
   clipped into the range used. Where the public inputs say the model will be noise
   (:func:`regression_regime`), the pipeline predicts the target's private median
   instead (the intercept-only model), drawn with the whole budget (the unused
   preprocessing and model are fitted on a public stand-in, no row of the data). A
   classifier with declared classes has the same regime (:mod:`dperm.preprocessing.labels`):
   the class counts are released with the whole budget and the released majority class
   is predicted;
3. the estimator gets what is left by basic composition, ``epsilon`` minus what the one
   accountant certifies for each step before it at the step's delta (``budgets_``), and
   ``delta`` minus those deltas, and the public row-norm bound of the last private
   transformer as its ``data_norm``. Each step charges the ledger inside its own part of
   the budget (:func:`dperm.privacy.mechanisms.budget_part`), so the ledger certifies the
   whole for at most the sum of the parts, that is at most the total.

Before any step is charged, y and the sample weights pass the estimator's own checks
(labels within the declared classes, a finite regression target, weights in [0, 1]): an
error after the preprocessing's charge would release what it says about the data.

All events are charged to one :class:`~dperm.privacy.budget.BudgetAccountant` (the one
given, else the pipeline's own with the total budget, which refuses any overspending);
``event_`` is their composition and ``privacy_spent_`` what the one accountant
certifies for the parts as charged: the smaller of their joint composition and the sum
of the parts (at most the total; often less, because the exponential-mechanism draws are
bounded-range and compose with the Gaussian model better than additively).
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings

import numpy as np
from sklearn.base import is_regressor
from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.preprocessing import FunctionTransformer

from .privacy import events as ev
from .privacy.budget import BudgetAccountant, PrivacyBudget, PrivacyWarning
from .distributed import is_dask_collection
from .estimators._base import final_class_weights
from ._warnings import user_stacklevel

__all__ = ["DPPipeline", "make_pipeline", "check_searchable", "DEFAULT_TRANSFORMER_SHARE", "DEFAULT_TARGET_SHARE", "DEFAULT_DELTA_SHARE"]

DEFAULT_TRANSFORMER_SHARE = 0.4  # of epsilon, per private transformer (docs/your-data.md, measured)
DEFAULT_TARGET_SHARE = 0.1  # of epsilon, for a regression target's private range (more at small n epsilon:
# dperm.preprocessing.target.target_share)
DEFAULT_DELTA_SHARE = 0.1  # of delta, for a transformer that takes one

# The "constant" regime of a regression (regression_regime): the model would be noise, so the
# pipeline predicts the target's private median, which gets the whole budget.
CONSTANT_SNR = 0.1  # below this public signal-to-noise estimate of the model (docs/results.md, measured)
CONSTANT_TARGET_SHARE = 1.0  # of epsilon, the target's median in that regime: the whole budget (the
# preprocessing and the model, unused there, are fitted on a public stand-in and charge nothing)
CONSTANT_TRANSFORMER_SHARE = 0.02  # of epsilon, the nominal budget of a transformer's stand-in fit in that regime


def regression_regime(final, n, n_columns: int, epsilon: float, delta: float, *, transformers: int = 1,
                      target_share: float = DEFAULT_TARGET_SHARE) -> str:
    """``"constant"`` when a regressor's fit at the budget the pipeline would leave it is
    predicted to be noise, else ``"model"``. Public inputs only: the rows n, the table's
    columns (a lower bound on the model's features, so the estimate errs towards
    ``"model"``), the budget and the default shares; the estimate is
    :func:`dperm.expectations.signal_to_noise` of the estimator's own loss, solver and
    constraint, below :data:`CONSTANT_SNR`. A model within noise of a constant should
    predict the constant: measured on 27 regression tables (docs/results.md, "The
    regression solver per regime"), fits below this estimate were never better than
    the target's median, and the median drawn with the whole budget instead of half of
    a range's share no longer lands off the data (R^2 of -4e15 at n = 373, epsilon =
    0.1)."""
    from .expectations import signal_to_noise

    if not (is_regressor(final) and hasattr(final, "_loss") and isinstance(n, numbers.Integral) and n > 0):
        return "model"
    if final.get_params(deep=False).get("inference"):  # intervals are asked for: they come with a model
        return "model"
    model_share = 1.0 - DEFAULT_TRANSFORMER_SHARE * transformers - target_share
    if not model_share > 0:
        return "model"
    params = final.get_params(deep=False)
    try:
        ratio = signal_to_noise(int(n), int(n_columns) + int(bool(params.get("fit_intercept", True))),
                                model_share * float(epsilon), float(delta), loss=final._loss(),
                                alpha=params.get("alpha", "auto"), data_norm=1.0,
                                label_bound=float(params.get("label_bound", 1.0)), constraint=final._constraint(),
                                solver=params.get("solver", "auto"))
    except (ValueError, TypeError, AttributeError):  # an estimator whose noise the estimate does not cover
        return "model"
    return "constant" if ratio < CONSTANT_SNR else "model"


def check_schema_dtypes(step) -> bool:
    """Whether a PrivatePreprocessor declares the dtypes public (``schema="dtypes"``)."""
    from .preprocessing.schema import check_schema

    return check_schema(step.get_params(deep=False).get("schema", "private")) == "dtypes"


def _public_standin(X):
    """Two rows of missing values with X's columns (their names and dtypes where a missing
    value fits them): what a transformer is fitted on where its output goes unused (the
    ``"constant"`` regime). Public: X's header and type, no value."""
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        return X.iloc[:0].reindex(range(2))
    width = int(np.shape(X)[1]) if np.ndim(X) == 2 else 1
    return np.full((2, width), np.nan)


def _is_private_transformer(step) -> bool:
    from .preprocessing import PrivateTransformerMixin

    return isinstance(step, PrivateTransformerMixin)


def _is_dperm_estimator(step) -> bool:
    from .estimators._base import DPLinearModelMixin

    return isinstance(step, DPLinearModelMixin)


def _seed_list(random_state, count: int) -> list:
    if random_state is None:
        return [None] * count
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(random_state)).spawn(count)]


def _inside_private_search() -> bool:
    """Whether this fit runs inside :class:`dperm.model_selection.PrivateSearch` (its plan
    or one of its runs). Reads module names of the call stack only."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "") == "dperm.model_selection" and frame.f_code.co_name in (
                "fit", "_plan", "_runs"):
            return True
        frame = frame.f_back
    return False


def check_searchable(pipeline, X) -> None:
    """Refuse (before anything is charged) a pipeline that :class:`~dperm.model_selection.
    PrivateSearch` cannot account for. The search plans each run's event on a stand-in of
    the table (its shape and column types, no data) and requires every run to be that
    mechanism. A pipeline qualifies when everything its event depends on is public: a
    classifier (a regressor's noisy score is in the units of its private target bounds),
    and no category selected privately (the number of released categories sets the
    model's dimension, and with it ``alpha="auto"``): every categorical column needs its
    declared categories."""
    final = pipeline.steps[-1][1]
    if is_regressor(final):
        raise NotImplementedError("PrivateSearch over a DPPipeline takes classifiers only: a regressor's noisy score "
                                  "would be in the units of privately estimated target bounds")
    from .preprocessing.table import PrivatePreprocessor

    for _, step in pipeline.steps[:-1]:
        if isinstance(step, PrivatePreprocessor) and hasattr(X, "columns"):
            private_roles = step._undeclared(X)
            if private_roles:
                raise NotImplementedError(
                    f"PrivateSearch over a DPPipeline needs every column's role public (undeclared: "
                    f"{private_roles[:10]}): roles released privately would make each run's mechanism depend on the "
                    "data; declare them (numeric=[...], categories={column: [...]}) or declare the DataFrame's "
                    "dtypes public (schema='dtypes'), and the categories of every categorical column declared")
            _, categorical = step._roles(X)
            undeclared = [c for c in categorical if c not in (step.categories or {})]
            if undeclared:
                raise NotImplementedError(
                    f"PrivateSearch over a DPPipeline needs the categories of every categorical column declared "
                    f"(undeclared: {undeclared}): privately selected categories would make each run's mechanism "
                    "depend on the data; declare them, e.g. make_pipeline(..., categories={column: [...]})")


class DPPipeline(Pipeline):
    """A scikit-learn Pipeline whose private steps share one (epsilon, delta) budget.

    Build it with :func:`make_pipeline`. See the module docstring for the accounting.

    Parameters
    ----------
    steps : list of (name, estimator)
        As for ``Pipeline``; the last is a dperm estimator.
    epsilon, delta : float
        The total budget of the whole fit (replace-one).
    accountant : BudgetAccountant or None
        Charged with every step's event; None: the pipeline's own ledger with the total
        budget (``accountant_``).
    shares : dict or None
        Shares of epsilon: a step name -> its share, ``"y"`` -> the target bounds' share.
        Missing names take the defaults; the estimator takes the rest.
    y_bounds : "auto" or (low, high)
        A regressor's declared target bounds; "auto": the estimator's own ``y_bounds``
        if declared, else none. Without declared bounds the target's range is estimated
        privately (private quantiles, as :class:`~dperm.preprocessing.PrivateScaler`).
    target_range : {"auto", "private", "declared"}, default="auto"
        With declared ``y_bounds``: ``"private"`` estimates the range privately inside
        them (the target clipped into the declared bounds, its private range intersected
        with them, at the target's share; the declared bounds where the two do not
        overlap), so that a wide declared range (a skewed target's (min, max)) neither
        centres the model far from the bulk of the values nor spreads the noise over it
        (measured in docs/results.md); ``"declared"`` maps the declared bounds
        themselves, free. ``"auto"``: ``"declared"`` when the estimator is fitted with
        ``inference`` (a private winsorization would change the coefficients the intervals
        are for, and its share would widen them: docs/inference.md), else ``"private"``.
    regime : {"auto", "model", "constant"}, default="auto"
        A regressor's regime: ``"model"`` fits the model; ``"constant"`` predicts the
        target's private median (drawn with the whole epsilon, :data:`CONSTANT_TARGET_SHARE`;
        the preprocessing and the estimator, whose output goes unused, are fitted on a
        public stand-in of X's header, charged to a scratch ledger); ``"auto"`` chooses by
        :func:`regression_regime` from public inputs only. A classifier's ``"constant"``
        (declared ``classes`` only, not with ``inference``): the declared classes' counts
        released with the whole epsilon, the released majority predicted for every row, the
        released frequencies as ``predict_proba`` (:mod:`dperm.preprocessing.labels`).
    random_state : None or int
        None: every private step keeps its own ``random_state`` (None: the secure
        samplers); an int seeds every private step (experiments).
    memory, verbose : as for ``Pipeline``.

    Attributes
    ----------
    event_ : the composition of every step's event.
    privacy_spent_ : PrivacyBudget, certified by the one accountant for ``event_``.
    accountant_ : the BudgetAccountant charged.
    budgets_ : dict step name -> the PrivacyBudget of its part: what the one accountant
        certifies for the step's events at the delta it was given (the estimator: the
        budget it was given). They add up to at most (epsilon, delta).
    y_bounds_ : the target bounds used (regressors): declared, or the private map
        (:func:`~dperm.preprocessing.target.target_range`).
    y_range_ : the range the predictions are clipped into (declared, or released).
    regime_ : "model" or "constant" (public inputs only).
    constant_ : the target's private median, the prediction of a regressor's ``"constant"`` regime.
    class_frequencies_ : a classifier's released class frequencies (``"constant"``), else None.
    selected_ : the columns the feature selection kept (None: no selection ran).
    """

    def __init__(self, steps, *, epsilon=1.0, delta=1e-5, accountant=None, shares=None, y_bounds="auto",
                 random_state=None, memory=None, verbose=False, target_range="auto", regime="auto",
                 feature_selection="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.shares = shares
        self.y_bounds = y_bounds
        self.target_range = target_range
        self.regime = regime
        self.feature_selection = feature_selection
        self.random_state = random_state
        super().__init__(steps, memory=memory, verbose=verbose)

    # ------------------------------------------------------------------ budgets
    def _share(self, name: str, default: float) -> float:
        shares = self.shares or {}
        share = shares.get(name, default)
        if isinstance(share, bool) or not isinstance(share, numbers.Real) or not 0.0 < share < 1.0:
            raise ValueError(f"the share of {name!r} must be a number in (0, 1), got {share!r}")
        return float(share)

    def _default_target_share(self, X, total) -> float:
        """A regressor's default target share from public inputs (n, epsilon):
        :func:`~dperm.preprocessing.target.target_share`; :data:`DEFAULT_TARGET_SHARE` when
        n is not known before the fit (a Dask frame's is computed at its fit)."""
        from .preprocessing.target import target_share

        if getattr(self, "regime_", "model") == "constant":
            return CONSTANT_TARGET_SHARE
        final = self.steps[-1][1]
        declared = (is_regressor(final) and self._declared_y_bounds(final) is not None
                    and self._target_range(final) == "private")
        n = getattr(X, "shape", (None,))[0]
        if n is None or hasattr(n, "compute") or not isinstance(n, numbers.Integral):
            return DEFAULT_TARGET_SHARE
        return target_share(int(n), total.epsilon, declared=declared)

    def _declared_y_bounds(self, final):
        """The declared target bounds (the pipeline's, else the estimator's own), or None."""
        if not isinstance(self.y_bounds, str):
            return self.y_bounds
        return final.get_params(deep=False).get("y_bounds")

    def _target_range(self, final) -> str:
        """``target_range`` resolved (public parameters only): ``"auto"`` is ``"declared"``
        for an estimator fitted with ``inference`` (the intervals are for the coefficients
        of the declared target, not of a privately winsorized one), else ``"private"``."""
        if self.target_range != "auto":
            return self.target_range
        return "declared" if final.get_params(deep=False).get("inference") else "private"

    def _target_is_private(self, final) -> bool:
        """Whether a regressor's target takes a private draw (public parameters only)."""
        if not is_regressor(final):
            return False
        return (self._declared_y_bounds(final) is None or self._target_range(final) == "private"
                or getattr(self, "regime_", "model") == "constant")

    def _plan_regime(self, final, X, total) -> None:
        """``regime_`` and the target's default share, from public inputs only (n, the
        columns, the budget, the default shares)."""
        self.regime_ = "model"
        self._target_default = self._default_target_share(X, total)
        self.regime_ = self._choose_regime(final, X, total)
        self._target_default = self._default_target_share(X, total)

    def _choose_regime(self, final, X, total) -> str:
        """``regime_`` from public inputs (:func:`regression_regime`), or the one asked for."""
        if self.regime not in ("auto", "model", "constant"):
            raise ValueError(f"regime must be 'auto', 'model' or 'constant', got {self.regime!r}")
        if self.target_range not in ("auto", "private", "declared"):
            raise ValueError(f"target_range must be 'auto', 'private' or 'declared', got {self.target_range!r}")
        from sklearn.base import is_classifier

        from .preprocessing import labels

        if is_classifier(final):
            if self.regime == "constant":
                labels.check_constant(final)
        elif not is_regressor(final):
            return "model"
        if self.regime != "auto":
            return self.regime
        n = getattr(X, "shape", (None,))[0]
        if n is None or hasattr(n, "compute") or not isinstance(n, numbers.Integral):
            return "model"
        transformers = sum(1 for _, step in self.steps[:-1] if _is_private_transformer(step))
        if is_classifier(final):
            return labels.classifier_regime(final, int(n), int(X.shape[1]) if len(X.shape) > 1 else 1, total.epsilon,
                                            total.delta, model_share=1.0 - DEFAULT_TRANSFORMER_SHARE * transformers)
        return regression_regime(final, int(n), int(X.shape[1]) if len(X.shape) > 1 else 1, total.epsilon,
                                 total.delta, transformers=transformers, target_share=self._target_default)

    def _plan_selection(self, final, X, total) -> None:
        """``self._selection``: (step name, candidate columns, k, share) of the private
        feature selection, or None. Public inputs only (the parameters, the header, the
        declarations, n, epsilon): checked, and refused with a clear error, before anything
        is charged."""
        from .preprocessing.selection import SELECTION_SHARE, selection_size

        self._selection = None
        choice = self.feature_selection
        forced = isinstance(choice, numbers.Integral) and not isinstance(choice, bool)
        if not (forced or (isinstance(choice, str) and choice in ("auto", "off"))):
            raise ValueError(f"feature_selection must be 'auto', 'off' or a number of columns >= 1, got {choice!r}")
        if forced and choice < 1:
            raise ValueError(f"feature_selection must be 'auto', 'off' or a number of columns >= 1, got {choice!r}")
        if choice == "off":
            return
        import pandas as pd
        from sklearn.base import is_classifier

        from .preprocessing import PrivatePreprocessor

        private = [(name, step) for name, step in self.steps[:-1] if step is not None and step != "passthrough"]
        classes = final.get_params(deep=False).get("classes") if is_classifier(final) else None
        why = None
        if not private or not isinstance(private[0][1], PrivatePreprocessor):
            why = "the pipeline's first step to be a PrivatePreprocessor (make_pipeline(estimator) inserts one)"
        elif not isinstance(X, pd.DataFrame):
            why = "a pandas DataFrame (columns with names)"
        elif not (is_regressor(final) or (classes is not None and len(classes) == 2)):
            why = "a regressor or a binary classifier with declared classes"
        if why is not None:
            if forced:
                raise ValueError(f"feature_selection={choice!r} needs {why}")
            return
        if getattr(self, "regime_", "model") == "constant":  # the model is not used: nothing to select for
            return
        if getattr(self, "_in_search", False) and not forced:  # PrivateSearch plans every run's mechanism alike
            return
        name, step = private[0]
        columns = list(X.columns)
        if len(set(columns)) != len(columns):  # public: the header
            raise ValueError("X has duplicate column names; give each column its own name before the fit")
        if check_schema_dtypes(step):
            candidates = list(step._roles(X)[0])
        else:
            _, categorical, dropped = step._declared_roles(columns)
            candidates = [c for c in columns if c not in categorical and c not in dropped]
        share = self._share("select", SELECTION_SHARE)
        if forced:
            if choice > len(candidates):
                raise ValueError(f"feature_selection={choice} asks for more columns than the {len(candidates)} "
                                 "candidates (the columns not declared categorical or dropped)")
            k = int(choice)
        else:
            k = selection_size(int(X.shape[0]), len(candidates), share * total.epsilon)
        if k >= 1:
            self._selection = (name, candidates, k, share)

    def _transformer_default(self, name, step, X) -> float:
        """A private transformer's default share: :data:`CONSTANT_TRANSFORMER_SHARE` in the
        constant regime, else :func:`~dperm.preprocessing.shares.transformer_share`, less
        the feature selection's share for the step the selection runs before."""
        from .preprocessing.shares import MIN_SHARE, transformer_share

        if getattr(self, "regime_", "model") == "constant":  # its output goes unused
            return CONSTANT_TRANSFORMER_SHARE
        default = transformer_share(step, X, DEFAULT_TRANSFORMER_SHARE)  # public: the schema
        selection = getattr(self, "_selection", None)
        if selection is not None and selection[0] == name:
            default = max(MIN_SHARE, default - selection[3])
        return default

    def _check_shares(self) -> None:
        """Names and sum of the shares, checked before anything is charged: the private
        steps (and a regressor's private target bounds) must leave the estimator a part
        of epsilon (public parameters only)."""
        known = {name for name, _ in self.steps} | {"y", "select"}
        unknown = [k for k in (self.shares or {}) if k not in known]
        if unknown:
            raise ValueError(f"shares names no step of the pipeline: {unknown}")
        final = self.steps[-1][1]
        if getattr(self, "regime_", "model") == "constant":  # only the median is drawn from the data
            for name in (self.shares or {}):
                self._share(name, 0.5)  # each given share a number in (0, 1)
            return
        transformer_default = DEFAULT_TRANSFORMER_SHARE
        selection = getattr(self, "_selection", None)
        total = sum(self._share(name, transformer_default - (selection[3] if selection is not None
                                                             and selection[0] == name else 0.0))
                    for name, step in self.steps[:-1] if _is_private_transformer(step))
        if selection is not None:
            total += selection[3]
        if self._target_is_private(final):
            total += self._share("y", self._target_default)
        if not total < 1.0:
            raise ValueError(f"the preprocessing shares add up to {total:g} of epsilon and leave nothing for the "
                             "estimator; lower them (shares={step name: fraction})")

    # ---------------------------------------------------------------------- fit
    def fit(self, X, y=None, **params):
        """Fit the steps in order, each private step charged before it reads the data."""
        total = PrivacyBudget(self.epsilon, self.delta)
        self._in_search = _inside_private_search()
        if self._in_search:
            check_searchable(self, X)
        from ._sklearn_search import warn_if_model_selection

        warn_if_model_selection(self)  # GridSearchCV & co.: each of their fits spends the budget again
        if self.accountant is not None and not isinstance(self.accountant, BudgetAccountant):
            raise TypeError(f"accountant must be a dperm.BudgetAccountant or None, got {self.accountant!r}")
        final_name, final = self.steps[-1]
        self._plan_regime(final, X, total)
        self._validate_steps()
        if not _is_dperm_estimator(final):
            raise TypeError("the last step of a DPPipeline must be a dperm estimator (DPLogisticRegression, ...)")
        class_weight = final_class_weights(final)  # public: refused before any charge
        self._plan_selection(final, X, total)
        self._check_shares()
        if y is not None:
            y, params = self._check_target_before_any_charge(final, final_name, y, params,
                                                             always_weight=is_dask_collection(X))
        if y is not None and (is_regressor(final) or self.regime_ == "constant"):
            self._check_target_feasible(final, X, total)
        accountant = self.accountant if self.accountant is not None else BudgetAccountant(total)
        self.accountant_ = accountant
        from .privacy.accountant import epsilon as certified_epsilon
        from .privacy.mechanisms import budget_part, next_part

        # Each private step runs in a part of the budget (docs/privacy.md, "Basic composition
        # is always a candidate"): the one accountant certifies the whole pipeline for at most
        # the sum of what it certifies for each part at the part's delta, so the estimator gets
        # exactly what is left and the total never exceeds the budget (public inputs only).
        first_part = next_part(accountant)
        seeds = _seed_list(self.random_state, len(self.steps) + 2)  # the last: the feature selection's
        events, budgets, parts = [], {}, []

        def charge_part(name, event, delta):
            if isinstance(event, ev.NoOpDpEvent):
                return
            parts.append((event, delta))
            budgets[name] = PrivacyBudget(certified_epsilon(event, delta), delta)

        self._n_rows = int(X.shape[0]) if isinstance(getattr(X, "shape", (None,))[0], numbers.Integral) else None
        self.selected_ = None
        for _, step in self.steps[:-1]:
            if hasattr(step, "_unselected"):
                step._unselected = ()  # a previous fit's selection does not carry over
        if self._selection is not None and y is not None:
            event = self._select(X, y, final, final_name, params, total, accountant, seeds[-1],
                                 first_part + len(parts))
            events.append(event)
            charge_part("select", event, 0.0)
        Xt, norm = X, None
        for i, (name, step) in enumerate(self.steps[:-1]):
            if step is None or step == "passthrough":
                continue
            if _is_private_transformer(step):
                default = self._transformer_default(name, step, Xt)
                settings = {"epsilon": self._share(name, default) * total.epsilon,
                            "accountant": accountant}
                if "delta" in step.get_params(deep=False):
                    settings["delta"] = DEFAULT_DELTA_SHARE * total.delta
                if self.random_state is not None:
                    settings["random_state"] = seeds[i]
                if self.regime_ == "constant":
                    # its output goes unused (the intercept-only model): fitted on a public stand-in of
                    # X's columns without a row of the data, charged to a scratch ledger; the budget
                    # goes to the target's median
                    from .preprocessing._base import PreprocessingNoiseWarning

                    settings["accountant"] = BudgetAccountant(total)
                    step.set_params(**settings)
                    with warnings.catch_warnings():
                        warnings.filterwarnings("ignore", category=PreprocessingNoiseWarning)
                        Xt = step.fit_transform(_public_standin(Xt), None)
                    norm = getattr(step, "output_norm_", getattr(step, "row_norm_bound_", norm))
                    continue
                step.set_params(**settings)
                with warnings.catch_warnings(), budget_part(settings.get("delta", 0.0), first_part + len(parts)):
                    Xt = step.fit_transform(Xt, y)
                events.append(step.event_)
                if step.privacy_spent_ is not None:
                    charge_part(name, step.event_, settings.get("delta", 0.0))
                norm = getattr(step, "output_norm_", getattr(step, "row_norm_bound_", norm))
            else:
                if not isinstance(step, FunctionTransformer):
                    warnings.warn(
                        f"step {name!r} is not a dperm private transformer: if its fit learns from the data "
                        "(scikit-learn's scalers, encoders and imputers do), what it learned is released "
                        "unprotected and the pipeline is not differentially private", PrivacyWarning, stacklevel=user_stacklevel())
                Xt = step.fit_transform(Xt, y)
        y_model, self._y_map = y, None
        if is_regressor(final) and y is not None:
            with budget_part(0.0, first_part + len(parts)):
                y_model, event = self._target(final, y, total, accountant, seeds[-2])
            # a target that did not parse (NaN here) has weight 0 (set above): any finite value
            y_model = np.where(np.isnan(y_model), 0.0, y_model)
            events.append(event)
            charge_part("y", event, 0.0)
        # basic composition of the parts: the estimator gets the rest, at the delta left
        spent_epsilon = math.fsum(b.epsilon for b in budgets.values())
        spent_delta = math.fsum(delta for _, delta in parts)
        model_epsilon = total.epsilon - spent_epsilon
        model_delta = total.delta - spent_delta
        while model_delta > 0 and math.fsum([spent_delta, model_delta]) > total.delta:  # the parts' deltas add
            model_delta = math.nextafter(model_delta, 0.0)  # up to at most the total, as floats too
        while model_epsilon > 0 and math.fsum([spent_epsilon, model_epsilon]) > total.epsilon:
            model_epsilon = math.nextafter(model_epsilon, 0.0)
        self.class_frequencies_ = None
        if self.regime_ == "constant" and not is_regressor(final):
            self.constant_ = None
            if y is not None:
                from .preprocessing.labels import declared_classes, release_frequencies

                with budget_part(0.0, first_part + len(parts)):  # the whole budget: nothing else reads the data
                    self.class_frequencies_, event = release_frequencies(
                        y, declared_classes(final), params.get(f"{final_name}__sample_weight"), total.epsilon,
                        accountant, seeds[-2] if self.random_state is not None else None, class_weight)
                events.append(event)
                charge_part("y", event, 0.0)
        if self.regime_ == "constant":
            return self._fit_constant(final, final_name, Xt, norm, total, events, budgets, parts, first_part)
        if not model_epsilon > 0 or model_delta < 0:
            raise ValueError("the preprocessing shares leave no budget for the estimator; lower shares")
        settings = {"epsilon": model_epsilon, "delta": model_delta, "accountant": accountant}
        if norm is not None:
            settings["data_norm"] = float(norm)
        if self.random_state is not None:
            settings["random_state"] = int(np.random.SeedSequence(int(self.random_state)).generate_state(1)[0])
        final.set_params(**settings)
        budgets[final_name] = PrivacyBudget(model_epsilon, model_delta)
        # the estimator warns, from public inputs only, when the noise will dominate its fit
        # (dperm.expectations: the output dimension and row bound it sees are public)
        with warnings.catch_warnings(), budget_part(model_delta, first_part + len(parts)):
            if self._y_map is not None:  # the pipeline clipped y into label_bound itself
                warnings.filterwarnings("ignore", message=".*label.*")
            final.fit(Xt, y_model, **{key.split("__", 1)[1]: value for key, value in params.items()
                                      if key.startswith(final_name + "__")})
        events.append(final.event_)
        self.event_ = ev.composed(events)
        # what the one accountant certifies for the parts as charged: the smaller of their
        # joint composition and the sum of the parts (at most the total by the above)
        charged = [ev.BudgetPart(event, delta=delta, part=first_part + k) for k, (event, delta) in
                   enumerate(parts + [(final.event_, model_delta)]) if not isinstance(event, ev.NoOpDpEvent)]
        certified = certified_epsilon(ev.composed(charged), total.delta)
        if certified > total.epsilon * (1 + 1e-9):  # basic composition of the parts makes this impossible
            raise RuntimeError(f"the pipeline's composition certifies epsilon={certified}, over its budget")
        self.privacy_spent_ = PrivacyBudget(min(certified, total.epsilon), total.delta)
        self.budgets_ = budgets
        return self

    def _fit_constant(self, final, final_name, Xt, norm, total, events, budgets, parts, first_part):
        """The ``"constant"`` regime's end of the fit: the released model is the intercept-only
        model (``coef_`` 0, ``intercept_`` the target's private median, a post-processing of
        the one release). The estimator is fitted on a public stand-in (zeros of the
        preprocessing's output width, n rows: no row of the data) charged to a scratch
        ledger, so that whoever reads it (its predict, ``dperm fit``'s model.json) finds a
        fitted estimator; the pipeline's ledger holds the median's draw alone."""
        from .expectations import NoiseDominatesWarning
        from .privacy.accountant import epsilon as certified_epsilon

        width = int(np.shape(Xt)[1]) if np.ndim(Xt) == 2 else 1
        rows = max(self._n_rows or 2, 2)  # the public n
        settings = {"epsilon": total.epsilon, "delta": total.delta, "accountant": BudgetAccountant(total)}
        if norm is not None:
            settings["data_norm"] = float(norm)
        if self.random_state is not None:
            settings["random_state"] = int(np.random.SeedSequence(int(self.random_state)).generate_state(1)[0])
        final.set_params(**settings)
        from .preprocessing import labels as classes

        classifier = not is_regressor(final)  # its stand-in labels: the declared classes in turn
        labels = np.resize(classes.declared_classes(final), rows) if classifier else np.zeros(rows)
        with warnings.catch_warnings():  # said once, by _check_target_feasible
            warnings.filterwarnings("ignore", category=NoiseDominatesWarning)
            final.fit(np.zeros((rows, width)), labels)
        final.coef_ = np.zeros_like(np.asarray(final.coef_, dtype=np.float64))
        if classifier:  # intercepts whose probabilities are the released frequencies
            classes.set_intercepts(final, getattr(self, "class_frequencies_", None))
        else:
            final.intercept_ = np.float64(self.constant_)
        self.event_ = ev.composed(events)
        charged = [ev.BudgetPart(event, delta=delta, part=first_part + k) for k, (event, delta) in enumerate(parts)
                   if not isinstance(event, ev.NoOpDpEvent)]
        certified = certified_epsilon(ev.composed(charged), total.delta) if charged else 0.0
        if certified > total.epsilon * (1 + 1e-9):
            raise RuntimeError(f"the pipeline's composition certifies epsilon={certified}, over its budget")
        self.privacy_spent_ = PrivacyBudget(min(certified, total.epsilon), total.delta)
        self.budgets_ = budgets
        return self

    def _select(self, X, y, final, final_name, params, total, accountant, seed, part):
        """The private feature selection (:func:`~dperm.preprocessing.selection.kendall_select`),
        charged before it reads X or y, in its own part of the budget; its unkept candidates
        are handed to the preprocessor (dropped there if their role is numeric). Returns
        the event."""
        from .preprocessing.cast import real_column
        from .preprocessing.labels import binary_codes
        from .preprocessing.selection import kendall_select, selection_event
        from .privacy.mechanisms import budget_part, charge, charging

        name, candidates, k, share = self._selection
        epsilon = share * total.epsilon
        event = selection_event(epsilon, k, len(candidates))
        with budget_part(0.0, part):
            with charging(accountant):
                charge(event, "feature selection")
            target = np.asarray(y, dtype=object if not is_regressor(final) else np.float64).ravel()
            if is_regressor(final):
                target = target.astype(np.float64)
            else:  # a binary label's code: |tau| does not depend on which class is 1
                target = binary_codes(target, final.get_params(deep=False)["classes"])
            weight = params.get(f"{final_name}__sample_weight")
            if weight is not None:  # a row of weight 0 (an unparsed target, a label outside the classes) is out
                target = np.where(np.asarray(weight, dtype=np.float64) > 0, target, np.nan)
            matrix = np.empty((X.shape[0], len(candidates)), dtype=np.float64, order="F")
            for j, c in enumerate(candidates):
                matrix[:, j] = real_column(X[c])  # any value: text, None, inf are missing (ties: 0)
            rng = seed if self.random_state is not None else None
            picked = set(int(i) for i in kendall_select(matrix, target, k, epsilon, rng))
        self.selected_ = [c for i, c in enumerate(candidates) if i in picked]
        dict(self.steps)[name]._unselected = tuple(c for i, c in enumerate(candidates) if i not in picked)
        return event

    @staticmethod
    def _check_target_before_any_charge(final, final_name: str, y, params: dict, always_weight: bool = False):
        """Make y and the sample weights total, before the first private step charges
        anything (docs/privacy.md, "Totality"): each row's target and weight mapped by
        itself, never an error that depends on a value.

        - a regression target is cast to a finite number (:func:`~dperm.preprocessing.
          cast.real_column`: text, ``None``, NaN, inf, ``10**400`` fail the cast) and a row
          whose target fails gets weight 0 (its target is then irrelevant);
        - a classification label outside the declared ``classes`` gets weight 0 (labels
          match by value: ``1``, ``1.0`` and ``"1"`` are the declared ``1``); without
          declared classes the label set is taken from y (public by that choice, warned)
          and y must look categorical (a public-by-contract check);
        - a weight is cast to a number, NaN to 0, and clamped into [0, 1].

        A Dask y or weight vector is gathered to the client here (the estimator gathers it
        anyway). ``always_weight`` (X is a Dask collection, a public fact): the estimator
        gets a weight vector whatever the values, since on Dask data a weight vector
        changes which solvers run (``dperm.distributed.supports``); so it is there for
        every neighbour, not only for the one holding a bad target. Returns (y, params) to
        fit with."""
        from sklearn.base import is_classifier

        from .preprocessing.cast import canonical_label, label_column, match_declared, real_column

        def local(values):
            if is_dask_collection(values):
                values = values.compute()
            if hasattr(values, "to_numpy"):
                values = values.to_numpy(dtype=object) if getattr(values, "ndim", 1) == 1 else values.to_numpy()
            values = np.asarray(values) if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
            if values.ndim == 2 and values.shape[1] == 1:
                values = values[:, 0]
            return values

        key = f"{final_name}__sample_weight"
        weight = params.get(key)
        labels = local(y)
        if labels.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {labels.shape}")
        n = labels.shape[0]
        keep = np.ones(n, dtype=bool)
        if is_classifier(final):
            classes = final.get_params(deep=False).get("classes")
            if classes is not None:
                from .estimators.linear import resolve_classes

                declared = resolve_classes(classes, np.asarray(classes, dtype=object)[:0])  # public checks only
                canonical = [canonical_label(c) for c in declared]
                matched = match_declared(label_column(labels), canonical)
                index = {c: i for i, c in enumerate(canonical)}
                codes = np.fromiter((index.get(v, -1) for v in matched), dtype=np.int64, count=n)
                keep = codes >= 0
                y = declared[np.where(keep, codes, 0)]  # outside: any declared label, weight 0
            else:
                from .estimators._base import check_categorical_target

                check_categorical_target(labels, type(final).__name__)
                y = labels
        else:
            y = real_column(labels)
            keep = ~np.isnan(y)
        if weight is not None or always_weight or not keep.all():
            if weight is None:
                w = np.ones(n)
            else:
                w = real_column(local(weight)) if np.ndim(local(weight)) == 1 else None
                if w is None or w.shape[0] != n:
                    raise ValueError(f"sample_weight must be 1-D of length {n} (the number of rows)")
                w = np.clip(np.where(np.isnan(w), 0.0, w), 0.0, 1.0)
            params = {**params, key: np.where(keep, w, 0.0)}
        return y, params

    def _check_target_feasible(self, final, X, total) -> None:
        """Public inputs only, before anything is charged: warn (do not refuse) when a
        regression target's private range will be mostly noise
        (:func:`~dperm.preprocessing.target.warn_if_target_noisy`)."""
        if not hasattr(self, "regime_"):  # called before fit (dperm fit's checks): the same public plan
            self._plan_regime(final, X, total)
        if self.regime_ == "constant":
            from .expectations import NoiseDominatesWarning
            from .preprocessing.labels import constant_message

            message = constant_message(int(X.shape[0]), int(X.shape[1]), total.epsilon)  # a classifier's
            warnings.warn(message if not is_regressor(final) else
                f"a regression model at n={int(X.shape[0])} rows, {int(X.shape[1])} columns and epsilon={total.epsilon:g} "
                "would be mostly privacy noise: the pipeline predicts the target's private median (the intercept-only "
                "model, drawn with the whole budget). More rows, a larger epsilon or fewer columns give a model; "
                "regime='model' (dperm fit --regime model) fits one anyway", NoiseDominatesWarning,
                stacklevel=user_stacklevel())
            return
        if self._declared_y_bounds(final) is not None:
            return
        from .preprocessing.target import warn_if_target_noisy

        n = X.shape[0]
        if hasattr(n, "compute"):
            n = n.compute()
        default = self._target_default
        warn_if_target_noisy(int(n), self._share("y", default) * total.epsilon)

    def _target(self, final, y, total, accountant, seed):
        """Declared or private target bounds, set on the estimator (``y_bounds``) or, for an
        estimator without that parameter, applied here: y clipped into the bounds and
        mapped onto [-label_bound, label_bound], predictions mapped back."""
        from .preprocessing.numeric import _check_pair

        y = np.asarray(y, dtype=np.float64).ravel()
        declared = self.y_bounds
        own = final.get_params(deep=False).get("y_bounds")
        if isinstance(declared, str):
            if declared != "auto":
                raise ValueError(f"y_bounds must be 'auto' or (low, high), got {declared!r}")
            declared = own
        if declared is not None:
            declared = _check_pair(declared, "y_bounds")
        if self.regime_ == "constant" and "y" not in (self.shares or {}):
            epsilon = CONSTANT_TARGET_SHARE * total.epsilon  # the whole budget: nothing else reads the data
        else:
            epsilon = self._share("y", self._target_default) * total.epsilon
        seed = seed if self.random_state is not None else None
        from .preprocessing import target as tr

        self.constant_ = None
        if self.regime_ == "constant":  # the intercept-only model: one private median, the whole budget
            centre, event = tr.target_centre(y, epsilon, bounds=declared, accountant=accountant, random_state=seed)
            self.constant_ = centre
            self.y_range_ = (centre, centre)
            half = declared[1] - declared[0] if declared is not None else max(abs(centre), 1.0)
            low, high = centre - half, centre + half  # the (unused) model's map
        elif declared is not None and self._target_range(final) == "declared":
            low, high = declared
            self.y_range_ = (low, high)
            event = ev.NoOpDpEvent()
        elif declared is not None:  # a private range inside the declared bounds (a private winsorization)
            with warnings.catch_warnings():  # a noisy draw stays inside the declared bounds (within_declared)
                from .preprocessing._base import PreprocessingNoiseWarning

                warnings.filterwarnings("ignore", category=PreprocessingNoiseWarning)
                mapped, released, event = tr.target_range(np.clip(y, *declared), epsilon, accountant=accountant,
                                                          random_state=seed)
            low, high = tr.within_declared(mapped, declared)
            self.y_range_ = tr.within_declared(released, declared)
        else:
            (low, high), self.y_range_, event = tr.target_range(y, epsilon, accountant=accountant, random_state=seed)
        self.y_bounds_ = (low, high)
        if "y_bounds" in final.get_params(deep=False):
            final.set_params(y_bounds=(low, high))
            return y, event
        # fallback for estimators without y_bounds: the same map, done by the pipeline
        bound = float(final.get_params(deep=False).get("label_bound", 1.0))
        centre, half = 0.5 * (low + high), 0.5 * (high - low)
        self._y_map = (centre, half / bound)
        return np.clip((y - centre) / half, -1.0, 1.0) * bound, event

    # ------------------------------------------------------------------ predict
    def predict(self, X, **params):
        """The steps' predictions; a regressor's clipped into the target range it was fitted
        with (``y_bounds_``, declared or released: a free post-processing)."""
        prediction = super().predict(X, **params)
        if getattr(self, "constant_", None) is not None:  # the "constant" regime: the intercept-only model
            return np.asarray(prediction, dtype=np.float64) * 0.0 + self.constant_
        if getattr(self, "_y_map", None) is not None:
            centre, scale = self._y_map
            prediction = centre + scale * np.asarray(prediction, dtype=np.float64)
        bounds = getattr(self, "y_range_", None)
        if bounds is not None and is_regressor(self.steps[-1][1]):
            prediction = np.clip(prediction, bounds[0], bounds[1])
        return prediction

    def score(self, X, y=None, sample_weight=None, **params):
        if getattr(self, "_y_map", None) is None and getattr(self, "y_range_", None) is None:
            return super().score(X, y, sample_weight=sample_weight, **params)
        from sklearn.metrics import r2_score

        return r2_score(y, self.predict(X), sample_weight=sample_weight)

    # ----------------------------------------------------------------- inference
    def conf_int(self, alpha: float = 0.05):
        """The final estimator's intervals (fitted with ``inference=True``), intercept
        first, in the model's feature order (docs/inference.md)."""
        return self._final_estimator.conf_int(alpha)

    def summary(self, alpha: float = 0.05) -> str:
        """The final estimator's coefficient table with the transformers' feature names,
        rows per original unit for linearly scaled numeric columns, and the whole
        pipeline's privacy spent (docs/inference.md)."""
        from .inference.units import feature_names, unit_divisors

        names = feature_names(self[:-1])
        per_unit = unit_divisors(self[:-1], names)
        spent = self.privacy_spent_
        privacy = {"epsilon": float(spent.epsilon), "delta": float(spent.delta),
                   "scope": "the whole pipeline: preprocessing, target bounds and the model"}
        return self._final_estimator.summary(alpha, names=names, per_unit=per_unit, privacy=privacy)


def make_pipeline(*steps, epsilon: float = 1.0, delta: float = 1e-5, accountant: BudgetAccountant | None = None,
                  shares: dict | None = None, y_bounds="auto", random_state=None, target_range: str = "auto",
                  regime: str = "auto", feature_selection="auto", **preprocessing) -> DPPipeline:
    """A :class:`DPPipeline` of ``steps`` sharing one (epsilon, delta) budget.

    Given only an estimator, a :class:`~dperm.preprocessing.PrivatePreprocessor` is
    inserted before it (numeric, categorical and missing values by the table's column
    types), configured by ``preprocessing`` keyword arguments (``bounds=``,
    ``categories=``, ``row_norm=``, ...): a raw DataFrame goes in, a private model comes
    out, and no ``data_norm`` is computed by hand.

    Examples
    --------
    >>> import dperm
    >>> model = dperm.make_pipeline(dperm.DPLogisticRegression(classes=[0, 1]), epsilon=1.0)  # doctest: +SKIP
    >>> model.fit(frame, y).privacy_spent_  # doctest: +SKIP
    """
    if not steps:
        raise ValueError("make_pipeline needs at least an estimator")
    steps = list(steps)
    if len(steps) == 1:
        from .preprocessing import PrivatePreprocessor

        steps = [PrivatePreprocessor(**preprocessing)] + steps
    elif preprocessing:
        raise TypeError(f"preprocessing options {sorted(preprocessing)} apply only when make_pipeline inserts the "
                        "default preprocessing (given only an estimator)")
    return DPPipeline(_name_estimators(steps), epsilon=epsilon, delta=delta, accountant=accountant, shares=shares,
                      y_bounds=y_bounds, random_state=random_state, target_range=target_range, regime=regime,
                      feature_selection=feature_selection)
