"""Private preprocessing: scikit-learn transformers that are differentially private
mechanisms (docs/your-data.md).

Each ``fit`` releases only declared values or noisy statistics, describes the release as
an event (:mod:`dperm.privacy.events`), charges it to the accountant before reading the
data, and exposes ``event_`` and ``privacy_spent_``; ``transform`` maps each row by itself
with the released values (a post-processing). scikit-learn's own scalers, encoders and
imputers fitted on private data are *not* private: their fitted minimums, means and
category lists are the data's.

- :class:`PrivateScaler`: numeric columns between declared or private-quantile bounds;
- :class:`PrivateOneHotEncoder`: declared or privately selected categories;
- :class:`PrivatePreprocessor`: a whole table by its column types, rows bounded with a
  public norm (``output_norm_``);
- :mod:`~dperm.preprocessing.quantiles`: the exponential-mechanism quantile.
"""

from .categorical import MISSING, PrivateOneHotEncoder
from .numeric import PrivateScaler
from .quantiles import linear_grid, log_grid, private_quantile
from .table import PrivatePreprocessor
from ._base import PreprocessingNoiseWarning, PrivateTransformerMixin

__all__ = ["PrivateScaler", "PrivateOneHotEncoder", "PrivatePreprocessor", "PrivateTransformerMixin", "PreprocessingNoiseWarning", "MISSING",
           "private_quantile", "log_grid", "linear_grid"]
