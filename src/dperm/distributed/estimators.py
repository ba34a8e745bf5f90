"""What the scikit-learn estimators need for Dask input: validation that leaves X on
the cluster, and the intercept column appended block by block."""

from __future__ import annotations

import numpy as np

from .._validation import label_vector
from ._chunks import append_column
from .inputs import as_dask_features, is_dask_collection

__all__ = ["validate", "augment"]


def validate(estimator, X, y=None, *, reset: bool = True):
    """The Dask counterpart of scikit-learn's ``validate_data`` for dperm's estimators.

    X stays a lazy, row-chunked Dask array (its values are checked block by block when
    the problem is built). y, when given, is gathered to the client as a NumPy vector:
    the estimators map it to the signed labels of each one-vs-rest fit there (n floats,
    against n x d for X). Sets ``n_features_in_`` on ``reset``, checks it otherwise.
    """
    X = as_dask_features(X)
    if y is not None:
        y = _gather_labels(y, X.shape[0])
    d = X.shape[1]
    if reset:
        estimator.n_features_in_ = d
    elif d != getattr(estimator, "n_features_in_", d):
        raise ValueError(
            f"X has {d} features, but {type(estimator).__name__} is expecting {estimator.n_features_in_} "
            "features as input"
        )
    return X if y is None else (X, y)


def _gather_labels(y, n: int) -> np.ndarray:
    """y (any type of labels: the classifiers take strings) as a 1-D NumPy vector of
    length n; Dask labels are computed."""
    if is_dask_collection(y):
        y = y.compute()
    return label_vector(y, n, numeric=False)


def augment(X, scaling: float):
    """X with the constant intercept feature ``scaling`` appended to every block."""
    d = X.shape[1]
    return X.map_blocks(append_column, scaling, chunks=(X.chunks[0], (d + 1,)), dtype=X.dtype, meta=X._meta)
