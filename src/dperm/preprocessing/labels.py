"""A classification target in the pipeline's ``"constant"`` regime (issue 30): the public
rule that chooses it, and the release of the declared classes' frequencies that replaces
the model there (docs/your-data.md; the threshold measured in docs/results.md, "A
classifier's constant regime").

Where a classifier's fit would be noise at the budget the pipeline leaves it (the public
estimate :func:`dperm.expectations.signal_to_noise`), the pipeline releases the counts of
the declared classes with the whole budget, by the geometric mechanism (Ghosh,
Roughgarden, Sundararajan 2009: integer counts plus discrete Laplace noise, sampled
exactly by Canonne, Kamath, Steinke 2020, Algorithm 2), and predicts the released
majority class. Replace-one moves one row from one class to another: two counts move by
one each, an L1 sensitivity of 2, so integer scale t gives ``2 / t``-DP (pure).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..privacy import events as ev

__all__ = ["CLASSIFIER_CONSTANT_SNR", "classifier_regime", "classifier_signal_to_noise", "count_noise_scale",
           "class_counts", "release_class_counts", "released_frequencies", "release_frequencies",
           "declared_classes", "check_constant", "constant_message", "set_intercepts", "binary_codes"]

# The "constant" regime of a classifier (classifier_regime): the model would be noise, so the
# pipeline releases the class frequencies with the whole budget and predicts the released majority.
CLASSIFIER_CONSTANT_SNR = 0.095  # below this public signal-to-noise estimate (docs/results.md, "A classifier's
# constant regime": on 17 tables every fit at epsilon 0.1 was at or under the majority class, and the
# smallest estimate at epsilon 1 was 0.097; from 0.091 to 0.097 the same 9 tables go constant at 0.1)


def classifier_regime(final, n, n_columns: int, epsilon: float, delta: float, *, model_share: float = 0.6) -> str:
    """``"constant"`` when a classifier's fit at the budget the pipeline would leave it is
    predicted to be noise, else ``"model"``: the counterpart of
    :func:`dperm.pipeline.regression_regime`. Public inputs only: the rows n, the table's
    columns, the budget, the model's default share of it (``model_share``) and the
    estimator's declared ``classes``, loss, solver and constraint; the estimate is
    :func:`classifier_signal_to_noise`, below :data:`CLASSIFIER_CONSTANT_SNR`. Never
    ``"constant"`` without declared classes (the label set would come from the data) or
    with ``inference`` (the intervals are for a model)."""
    ratio = classifier_signal_to_noise(final, n, n_columns, epsilon, delta, model_share=model_share)
    return "constant" if ratio < CLASSIFIER_CONSTANT_SNR else "model"


def classifier_signal_to_noise(final, n, n_columns: int, epsilon: float, delta: float, *,
                               model_share: float = 0.6) -> float:
    """:func:`dperm.expectations.signal_to_noise` of a classifier's fit in a pipeline (of
    one one-vs-rest fit at its share of the budget, or of the multinomial fit), from
    public inputs only; ``inf`` where no constant regime applies (not a dperm classifier,
    classes not declared, ``inference`` asked for, an estimate that does not cover it)."""
    from sklearn.base import is_classifier

    from ..expectations import signal_to_noise

    if not (is_classifier(final) and hasattr(final, "_loss") and isinstance(n, numbers.Integral) and n > 0):
        return math.inf
    params = final.get_params(deep=False)
    if params.get("inference") or params.get("classes") is None:
        return math.inf
    try:
        k = len(params["classes"])
    except TypeError:
        return math.inf
    if not (k >= 2 and model_share > 0):
        return math.inf
    fit_epsilon, loss, classes = model_share * float(epsilon), final._loss(), 2
    try:
        if k > 2:
            if final._multi_class(np.zeros((0, 1))) == "multinomial":  # public: the parameters
                loss, classes = "multinomial", k
            else:  # one-vs-rest: each fit gets epsilon / K (PrivacyBudget.split)
                fit_epsilon /= k
        return float(signal_to_noise(int(n), int(n_columns) + int(bool(params.get("fit_intercept", True))),
                                     fit_epsilon, float(delta), loss=loss, alpha=params.get("alpha", "auto"),
                                     data_norm=1.0, constraint=final._constraint(),
                                     solver=params.get("solver", "auto"), n_classes=classes))
    except (ValueError, TypeError, AttributeError):  # an estimator whose noise the estimate does not cover
        return math.inf


def count_noise_scale(epsilon: float) -> int:
    """The integer scale t of the discrete Laplace noise on a vector of class counts of
    replace-one L1 sensitivity 2: the smallest t with ``2 / t <= epsilon`` (as floats)."""
    t = max(1, math.ceil(2.0 / float(epsilon)))
    while 2.0 / t > float(epsilon):
        t += 1
    return t


def class_counts(codes: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Weighted counts of the classes ``codes`` (0..k-1), each rounded to an integer so that
    replacing one row (weight in [0, 1]) moves at most two counts by at most one each
    (L1 sensitivity 2): weights quantized to multiples of 2^-20 and summed exactly as
    integers, then rounded half up, ``floor(S + 1/2)``, which commutes with adding 1."""
    unit = 1 << 20
    weights = np.clip(np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0), 0.0, 1.0)
    quantized = np.floor(weights * unit + 0.5).astype(np.int64)
    # float64 sums of integers below 2^53 are exact: n up to 8e9 rows
    totals = np.bincount(codes, weights=quantized, minlength=k).astype(np.int64)
    return (totals + unit // 2) // unit


def release_class_counts(codes: np.ndarray, weights: np.ndarray, k: int, epsilon: float, source):
    """(noisy counts, event): the k class counts (:func:`class_counts`) plus iid discrete
    Laplace noise of scale :func:`count_noise_scale` (the geometric mechanism; Ghosh,
    Roughgarden, Sundararajan 2009), ``2 / t <= epsilon``-DP under replace-one. The
    event is built from public inputs; the caller charges it before calling."""
    from ..privacy.exact_sampling import discrete_laplace

    t = count_noise_scale(epsilon)
    return class_counts(codes, weights, k) + discrete_laplace(source, t, k), ev.DiscreteLaplaceRelease(scale=t,
                                                                                                     sensitivity=2)


def released_frequencies(noisy: np.ndarray) -> np.ndarray:
    """Class probabilities from noisy counts (a post-processing): clipped at 0, plus one
    half each (strictly positive, so that intercepts can give them), normalized."""
    counts = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0) + 0.5
    return counts / counts.sum()


def release_frequencies(y, declared: np.ndarray, sample_weight, epsilon: float, accountant, seed,
                        class_weight: np.ndarray | None = None):
    """(frequencies, event): the declared classes' counts released with ``epsilon``
    (:func:`release_class_counts`), their event charged to ``accountant`` before y is
    read, and the frequencies (:func:`released_frequencies`, in the order of
    ``declared``). A row counts with its weight (None: 1; 0 for a label outside the
    declared classes, as the estimator weighs it) times its class's ``class_weight``
    (one per declared class, in [0, 1]: the estimator's declared class weights,
    :func:`dperm.estimators._base.class_weights`), as a class-weighted intercept-only
    model weighs it; ``seed`` None draws from the operating system's secure generator."""
    import pandas as pd

    from ..privacy.exact_sampling import GeneratorSource, SecureRandom
    from ..privacy.mechanisms import charge, charging

    event = ev.DiscreteLaplaceRelease(scale=count_noise_scale(epsilon), sensitivity=2)
    with charging(accountant):  # before y is read
        charge(event, "class counts")
    y = np.asarray(y, dtype=object).ravel()
    codes = pd.Index(list(declared)).get_indexer(y)
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if class_weight is not None:  # public per-class weights in [0, 1]: the sensitivity stays 2
        weights = weights * np.asarray(class_weight, dtype=np.float64)[np.maximum(codes, 0)]
    weights = np.where(codes >= 0, weights, 0.0)  # a label outside the classes counts 0 (total, as the fit)
    source = SecureRandom() if seed is None else GeneratorSource(np.random.default_rng(seed))
    noisy, _ = release_class_counts(np.maximum(codes, 0), weights, len(declared), epsilon, source)
    return released_frequencies(noisy), event


def binary_codes(y, classes) -> np.ndarray:
    """1.0 where a label equals the second of the declared ``classes``, else 0.0: a binary
    label's code, vectorized. ``y`` holds declared (hashable) labels: the pipeline maps
    every other label to a declared one of weight 0 before any charge."""
    import pandas as pd

    y = np.asarray(y, dtype=object).ravel()
    return (pd.Index([list(classes)[1]]).get_indexer(y) == 0).astype(np.float64)


def declared_classes(final) -> np.ndarray:
    """The estimator's declared classes, sorted as its ``classes_`` (public; as
    :func:`dperm.estimators.linear.resolve_classes` sorts them, checked there)."""
    return np.unique(np.asarray(final.get_params(deep=False)["classes"]))


def check_constant(final) -> None:
    """``regime="constant"`` asked for a classifier: a clear error, before any charge,
    without declared classes (the label set would come from the data) or with
    ``inference`` (the intervals are for a model)."""
    params = final.get_params(deep=False)
    if params.get("classes") is None or params.get("inference"):
        raise ValueError("regime='constant' for a classifier needs declared classes (classes=[...]) and no "
                         "inference (the intervals are for a model)")


def constant_message(n: int, columns: int, epsilon: float) -> str:
    """The pipeline's warning in a classifier's constant regime (public inputs only)."""
    return (f"the privacy noise will likely dominate a classification model at n={n} rows, {columns} columns and "
            f"epsilon={epsilon:g}: the pipeline releases the class frequencies instead (noisy counts, the whole "
            "budget) and predicts the released majority class. More rows, a larger epsilon or fewer columns give a "
            "model; regime='model' fits one anyway")


def set_intercepts(final, frequencies) -> None:
    """Intercepts of a fitted classifier whose ``coef_`` is 0 such that its probabilities
    are ``frequencies`` p (None: uniform) and its prediction their argmax: log p for a
    softmax model, logit p_j for one-vs-rest (normalized to p by ``predict_proba``), logit
    p_1 for a binary model. A post-processing of the release."""
    k = len(final.classes_)
    p = np.full(k, 1.0 / k) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
    if getattr(final, "multi_class_", "ovr") == "multinomial":
        intercept = np.log(p)
    else:
        intercept = np.log(p) - np.log1p(-p)
        intercept = intercept[1:] if k == 2 else intercept
    final.intercept_ = np.asarray(intercept, dtype=np.float64).reshape(np.shape(final.intercept_))
