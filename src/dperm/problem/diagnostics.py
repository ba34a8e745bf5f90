"""Non-private diagnostics for the data holder: how much of a table the declared bounds clip.

**Not private.** These functions read the data and return exact statistics of it. They
are for the data holder choosing ``data_norm`` and ``label_bound`` on data they may look
at (their own copy, a public sample of the same source); their output must never be part
of a release, a message, a file or a choice of a private fit's parameters on the data it
is fit to. The fits clip silently (docs/privacy.md, "Totality"); the private routes to a
bound are the pipeline's scaling of raw columns and ``row_norm="scale"``.
"""

from __future__ import annotations

import numpy as np

from .erm import _row_norms

__all__ = ["fraction_clipped"]


def fraction_clipped(X, data_norm: float, y=None, label_bound: float | None = None) -> dict[str, float]:
    """The exact fractions of rows of X with L2 norm above ``data_norm`` and, when ``y``
    and ``label_bound`` are given, of labels with ``|y_i| > label_bound``: the rows a fit
    with these bounds would clip. NOT PRIVATE (module docstring): never release it.

    NaN and infinite entries of X count as the fits read them (as 0); a label that is not
    finite counts as not clipped (the fits give its row weight 0). X is not modified.
    """
    sparse = hasattr(X, "tocsr")
    X = X.tocsr().astype(np.float64) if sparse else np.array(X, dtype=np.float64)  # a copy: X is not changed
    values = X.data if sparse else X
    values[~np.isfinite(values)] = 0.0
    out = {"rows_above_data_norm": float(np.mean(_row_norms(X) > float(data_norm)))}
    if y is not None and label_bound is not None:
        y = np.asarray(y, dtype=np.float64)
        # a label that is not finite gets weight 0 in the fits: it is not clipped
        out["labels_above_label_bound"] = float(np.mean(np.isfinite(y) & (np.abs(y) > float(label_bound))))
    return out
