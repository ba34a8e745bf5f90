"""Input validation shared by the problem layer, the estimators and the CLI.

Bad public input (a shape, a type, a parameter) gets a clear exception naming the
problem, never a silent wrong answer. The values of a private record (an entry of X, a
label, a weight) are never refused: a refusal that depends on one row releases that row.
They are mapped, each by itself (docs/privacy.md, "Totality").
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_matrix", "check_vector", "finite_features", "total_labels", "check_positive", "check_fraction", "check_sample_weight", "DataNormWarning",
    "non_numeric_columns_error", "check_bounds_pair",
]


from .exceptions import DataNormWarning  # defined in the leaf, re-exported here


def check_positive(name: str, value, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """A real number > 0 (or >= 0), finite unless ``allow_inf``; else a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def check_fraction(name: str, value) -> float:
    """A real number in (0, 1]."""
    value = check_positive(name, value)
    if value > 1:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return value


def check_matrix(X, *, name: str = "X", min_rows: int = 1) -> np.ndarray | sp.csr_matrix:
    """A finite 2-D float matrix: dense ndarray (float32 kept, else float64) or CSR.

    pandas DataFrames and other array-likes are converted; any SciPy sparse format is
    converted to CSR. The shape and the dtype are the caller's (public) and are checked;
    a NaN or infinite entry is not refused but mapped to 0 (:func:`finite_features`).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        shape = X.shape
    else:
        if hasattr(X, "to_numpy") and hasattr(X, "dtypes"):  # pandas, without importing it
            X = X.to_numpy()
        X = np.asarray(X)
        if X.dtype == object or not (
            np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_)
        ):
            raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
        if np.iscomplexobj(X):
            raise TypeError(f"{name} must be real, got complex values")
        if X.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D array of shape (n_samples, n_features), got shape {X.shape}"
                + (" (reshape a single feature with X.reshape(-1, 1))" if X.ndim == 1 else "")
            )
        X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype in (np.float32, np.float64) else np.float64)
        shape = X.shape
    if shape[0] < min_rows:
        raise ValueError(f"{name} has {shape[0]} row(s); at least {min_rows} are required")
    if shape[1] < 1:
        raise ValueError(f"{name} has 0 features; at least 1 is required")
    return finite_features(X)


def finite_features(X):
    """``X`` (a validated float ndarray or CSR matrix) with every NaN or infinite entry
    replaced by 0: the total map of a direct fit on numeric arrays (docs/privacy.md,
    "Totality"). A non-finite value is a missing one, and 0 is the imputation that reads
    no other row (the estimators' rows are clipped to ``data_norm`` around 0, so 0 is also
    the value that moves a row least). A refusal would tell whether some row holds such a
    value; nothing is said.

    No copy of X when every value is finite: a finite sum means every value is finite
    (NaN and inf propagate), with no temporary of X's size; only a non-finite sum (a
    non-finite value, or an overflow of finite ones) takes the elementwise check, and only
    a non-finite value makes the copy (of the stored values of a sparse matrix)."""
    data = X.data if sp.issparse(X) else X
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(data, dtype=np.float64)
    if np.isfinite(total) or np.all(np.isfinite(data)):
        return X
    finite = np.where(np.isfinite(data), data, data.dtype.type(0))
    if sp.issparse(X):
        return sp.csr_matrix((finite, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    return np.ascontiguousarray(finite)


def label_vector(y, n: int, *, name: str = "y", numeric: bool = True) -> np.ndarray:
    """``y`` (array-like, pandas) as a 1-D NumPy vector of length ``n`` (a column vector is
    flattened), float64 when ``numeric``; a clear error otherwise. No finiteness check."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D of length {n}, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} entries but X has {n} rows")
    if not numeric:
        return y
    try:
        return y.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from None


def check_vector(y, n: int, *, name: str = "y") -> np.ndarray:
    """A finite 1-D float64 vector of length ``n`` (for public vectors; a private target
    goes through :func:`total_labels`)."""
    y = label_vector(y, n, name=name)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return y


def total_labels(y, n: int, sample_weight: np.ndarray | None, *, binary: bool):
    """The labels of a direct fit made total (docs/privacy.md, "Totality"): ``(y, weights)``
    with ``y`` a float64 vector of length ``n`` (its length and numeric type are public
    and checked) and each row's label mapped by itself, without a message:

    - a label that is not a finite number (NaN, +-inf), and for a binary loss any label
      other than -1 and +1, gets weight 0 (the row stays and n does not change; its label
      is set to 0, or +1 for a binary loss, a value that is then irrelevant);
    - a finite label beyond ``label_bound`` is the problem's to clamp, as before.

    ``sample_weight`` is a checked weight vector or None; None stays None when no label
    needs weight 0 (the fit is then unweighted, as before)."""
    y = label_vector(y, n)
    bad = ~np.isfinite(y)
    if binary:
        bad |= (y != 1.0) & (y != -1.0)
    if not bad.any():
        return y, sample_weight
    y = np.where(bad, 1.0 if binary else 0.0, y)
    weights = np.ones(n) if sample_weight is None else sample_weight
    return y, np.where(bad, 0.0, weights)


def check_bounds_pair(pair, what: str) -> tuple[float, float]:
    """``(low, high)`` as floats with finite ``low < high``, or a ValueError naming ``what``
    (declared public bounds: no data involved)."""
    try:
        low, high = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a pair (low, high) of numbers, got {pair!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"{what} must be a pair (low, high) of finite numbers with low < high, got {pair!r}")
    return low, high


def non_numeric_columns_error(X) -> ValueError:
    """The error for features that are not numbers, naming the columns (the table's schema),
    never a value (values are data; scikit-learn's own message quotes the first one)."""
    columns = getattr(X, "columns", None)
    dtypes = getattr(X, "dtypes", None)
    if columns is not None and dtypes is not None:
        import pandas as pd

        names = [str(c) for c, t in zip(columns, dtypes) if not (pd.api.types.is_numeric_dtype(t)
                                                                  or pd.api.types.is_bool_dtype(t))]
        where = f"columns {names}" if names else "columns"
    else:
        where = "entries"
    return ValueError(f"X has non-numeric {where}; encode categorical features first, privately: "
                      "dperm.make_pipeline(estimator, epsilon=...) does it with declared or privately chosen "
                      "categories (docs/your-data.md)")


def check_sample_weight(sample_weight, n: int) -> np.ndarray | None:
    """Per-example weights as a float64 vector of length ``n`` with every entry in [0, 1],
    or ``None`` (unweighted). Its shape and type are public and checked (a clear error);
    its values are private (part of each record), so they are mapped, never refused
    (docs/privacy.md, "Totality"): NaN and +-inf become 0 and every weight is clamped
    into [0, 1], each by itself and without a message.

    Weights are part of each private record, so a weight outside [0, 1] would break the
    replace-one sensitivity the constants give (a weight w scales that record's gradient
    by w): the clamp keeps every weight where the constants hold.
    """
    if sample_weight is None:
        return None
    if sp.issparse(sample_weight):
        raise TypeError("sample_weight must be a 1-D array of length n_samples, not a sparse matrix")
    w = label_vector(sample_weight, n, name="sample_weight")
    if np.all((w >= 0.0) & (w <= 1.0)):  # NaN fails both: the common case costs no copy
        return w
    return np.clip(np.where(np.isfinite(w), w, 0.0), 0.0, 1.0)
