"""Recognizing Dask inputs and bringing them to one form: a row-chunked Dask array X
(one chunk across the columns) and a Dask label vector chunked like X's rows.

Nothing here reads the data: only shapes, chunk sizes and dtypes (metadata), except the
partition lengths of a Dask DataFrame, which Dask counts once (``lengths=True``) to
know where the row blocks begin; those lengths never leave the process.
"""

from __future__ import annotations

import numpy as np

from .._validation import label_vector

__all__ = ["is_dask_collection", "as_dask_xy", "as_dask_features", "as_dask_weights"]


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series), without importing
    Dask when it is not (the core install does not need it)."""
    module = type(obj).__module__ or ""
    if not (module == "dask" or module.startswith("dask.") or module.startswith("dask_")):
        return False
    return hasattr(obj, "__dask_graph__")


def _require_dask():
    try:
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ImportError(
            "Dask input needs the optional dependencies: pip install 'dperm[dask]'"
        ) from exc
    return da


def _dataframe_kind(obj) -> str | None:
    """"frame" or "series" for a Dask DataFrame / Series, else None (``hasattr`` would
    not do: a Dask frame looks unknown attributes up as column names)."""
    if not (type(obj).__module__ or "").startswith("dask.dataframe"):
        return None
    import dask.dataframe as dd

    if isinstance(obj, dd.DataFrame):
        return "frame"
    if isinstance(obj, dd.Series):
        return "series"
    return None


def _is_dataframe(obj) -> bool:
    return _dataframe_kind(obj) == "frame"


def _is_series(obj) -> bool:
    return _dataframe_kind(obj) == "series"


def _frame_to_array(frame, name: str):
    """The numeric columns of a Dask DataFrame as a row-chunked Dask array (features in
    column order); a clear error for non-numeric columns."""
    from pandas.api.types import is_bool_dtype, is_complex_dtype, is_numeric_dtype

    bad = [str(c) for c, t in frame.dtypes.items()
           if not (is_numeric_dtype(t) or is_bool_dtype(t)) or is_complex_dtype(t)]
    if bad:
        raise TypeError(f"{name} must be numeric; columns {bad[:5]} are not (encode or drop them first)")
    dtypes = set(frame.dtypes)
    dtype = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
    return _to_dask_array(frame).astype(dtype)


def _to_dask_array(frame):
    """A Dask DataFrame or Series as a Dask array with known row chunks.

    The collection is optimized first: Dask's optimizer may merge the partitions of a
    column projection (a Parquet dataset read for its label column alone has fewer,
    larger partitions than the full table), and ``to_dask_array(lengths=True)`` checks
    the lengths of the optimized partitions against the count of the unoptimized ones,
    which then fails. The row chunks may differ between X and y; y is rechunked to X's.
    """
    optimize = getattr(frame, "optimize", None)  # Dask's expression-based DataFrames
    if optimize is not None:
        frame = optimize()
    return frame.to_dask_array(lengths=True)


def as_dask_xy(X, y):
    """``(X, y)`` as Dask arrays: X 2-D with one chunk across the columns, y 1-D with the
    row chunks of X.

    X: a Dask array or a Dask DataFrame (its columns are the features). y: a Dask
    array or Series, a NumPy / pandas vector, or, with a DataFrame X, the name of one of
    its columns (that column is the target and is dropped from the features).
    """
    da = _require_dask()
    if isinstance(y, str):
        if not _is_dataframe(X):
            raise TypeError("y may name a target column only when X is a Dask DataFrame")
        if y not in X.columns:
            raise ValueError(f"y={y!r} is not a column of X")
        X, y = X.drop(columns=[y]), X[y]
    X = as_dask_features(X)
    return X, _as_dask_labels(da, y, X)


def as_dask_features(X):
    """X (a Dask array or DataFrame) as a 2-D row-chunked Dask array of floats, one chunk
    across the columns; clear errors for anything else. Reads no values."""
    da = _require_dask()
    if _is_dataframe(X):
        X = _frame_to_array(X, "X")
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a Dask array or DataFrame, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(
            f"X must be a 2-D array of shape (n_samples, n_features), got {X.ndim} dimension(s)"
        )
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "X has unknown chunk sizes; call X.compute_chunk_sizes() (or to_dask_array(lengths=True)) first"
        )
    if not _is_sparse_meta(X) and (X.dtype == object or not (np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_))):
        raise TypeError(f"X must be numeric, got dtype {X.dtype}")
    if np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError("X must be real, got complex values")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:  # a block must hold whole rows: x_i is one unit of privacy
        X = X.rechunk({1: -1})
    return X


def _is_sparse_meta(X) -> bool:
    import scipy.sparse as sp

    return sp.issparse(getattr(X, "_meta", None))


def as_dask_weights(sample_weight, X):
    """Per-example weights as a float64 Dask vector chunked like X's rows: a Dask array
    or Series, or a NumPy / pandas vector (shape checked here; values block by block by
    the problem's checking pass)."""
    return _as_dask_labels(_require_dask(), sample_weight, X, name="sample_weight")


def _as_dask_labels(da, y, X, name: str = "y"):
    n = X.shape[0]
    if _is_dataframe(y):
        if len(y.columns) != 1:
            raise ValueError(f"{name} must be 1-D of length {n}, got a DataFrame of {len(y.columns)} columns")
        y = y[y.columns[0]]
    if _is_series(y):
        y = _to_dask_array(y)
    elif not isinstance(y, da.Array):
        y = label_vector(y, n, name=name)
        # Persisted once: a graph holding the array itself would ship it on every pass.
        return da.from_array(y, chunks=(X.chunks[0],)).persist()
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D of length {n}, got {y.ndim} dimension(s)")
    if np.isnan(y.shape[0]):
        y = y.compute_chunk_sizes()
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} entries but X has {n} rows")
    if not (np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.bool_)):
        raise TypeError(f"{name} must be numeric, got dtype {y.dtype}")
    y = y.astype(np.float64)
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    return y
