"""A table's schema: each column's role (numeric, categorical, dropped), from public
inputs or from a small private release. The same rule in Python
(:class:`~dperm.preprocessing.PrivatePreprocessor`) and on the command line
(``dperm fit``).

Roles come, in this order, from

1. the declarations (public, free): ``numeric=`` or ``bounds=`` make a column numeric,
   ``categorical=``, ``categories=`` or ``candidates=`` make it categorical, ``drop=``
   drops it. Declaring one column never changes another's role;
2. for the undeclared columns, with ``schema="dtypes"``: the DataFrame's dtypes, which the
   user thereby declares public (numeric and nullable-integer dtypes and datetimes:
   numeric; object, string, ``category``, ``bool``/``boolean``: categorical). The
   guarantee then holds among tables of those dtypes only: a dtype that one row can
   change (``pd.read_csv`` reads a column of numbers with one ``"?"`` as text) is data;
3. otherwise (``schema="private"``, the default) the **role release**: per undeclared
   column the statistic ``s = (values that are finite numbers) - (present values that
   are not)`` (missing values count for neither; :func:`~dperm.preprocessing.cast.
   role_statistic`) plus discrete Laplace noise of integer scale t (the geometric
   mechanism, Ghosh, Roughgarden, Sundararajan 2009), and the column is numeric when the
   noisy value is >= 0, categorical otherwise. Only those bits are released.

Privacy of the role release: replace-one changes one row, which moves each column's s by
at most 2 (a number replaced by a text), so each column's noisy s is ``2/t``-DP and the
p columns' together ``2p/t``-DP (basic composition; one row touches every column); the
released bits are a post-processing. Accounted as p
:class:`~dperm.privacy.events.DiscreteLaplaceRelease` events of sensitivity 2, composed
into the preprocessing's event. ``tests/test_totality.py`` checks the bit's loss on the
exact output law (sums over the discrete Laplace pmf).

The scale: ``t = floor(n / ROLE_MARGIN)`` (n is public under replace-one), so a clean
column of n present values (all numbers, or all text) gets the role of its dtype except
with probability ``P(N >= n) <= e^(-ROLE_MARGIN) ~ 2e-9``; its cost is about
``2 ROLE_MARGIN p / n`` (0.027 for 2 columns of 3000 rows, 0.017 for ADULT's 14 columns
of 32561 rows). The cost is capped at ``ROLE_CAP`` of the preprocessing's epsilon (the
scale is then raised, with a warning from public inputs: declare the roles or set
``schema="dtypes"``). A column with many missing values has a smaller ``|s|``, so its
role is less certain; a column of numbers with a few text values (``"?"``) stays numeric
and those values become missing.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import events as ev
from ..privacy.exact_sampling import GeneratorSource, SecureRandom, discrete_laplace
from .cast import role_statistic

__all__ = ["SCHEMAS", "ROLE_MARGIN", "ROLE_CAP", "role_scale", "role_event", "release_roles", "dtype_role",
           "check_schema", "role_epsilon", "statistics_of"]

SCHEMAS = ("private", "dtypes")
ROLE_MARGIN = 20.0  # a clean column flips with probability <= e^-20
ROLE_CAP = 0.5  # the role release takes at most this share of the preprocessing's epsilon


def check_schema(schema) -> str:
    if not isinstance(schema, str) or schema not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS}: 'private' (the default: the roles of undeclared "
                         "columns released privately, at a small cost) or 'dtypes' (you declare the DataFrame's "
                         f"dtypes public), got {schema!r}")
    return schema


def role_scale(n: int, columns: int, epsilon: float) -> tuple[int, bool]:
    """The integer noise scale t of the role release of ``columns`` columns of ``n`` rows
    within a preprocessing budget ``epsilon`` (public inputs only), and whether the cap
    ``ROLE_CAP * epsilon`` raised it above ``n / ROLE_MARGIN``."""
    t = max(1, int(math.floor(n / ROLE_MARGIN)))
    floor = math.ceil(2.0 * columns / (ROLE_CAP * float(epsilon)) - 1e-9)
    if t < floor:
        return int(floor), True
    return t, False


def role_event(t: int, columns: int):
    """The event of the role release: ``columns`` discrete Laplace releases of sensitivity
    2, pure ``2 columns / t``-DP, wrapped as an ``ApproximateDpRelease`` with delta 0 so
    that the one accountant adds it to the rest by basic composition (exactly its cost;
    composed inside a privacy-loss distribution with the bounded-range quantile draws it
    certified a little more than the sum, and the pipeline's shares assume the sum)."""
    if columns == 0:
        return ev.NoOpDpEvent()
    noise = ev.composed([ev.DiscreteLaplaceRelease(scale=int(t), sensitivity=2)] * columns)
    return ev.ApproximateDpRelease(role_epsilon(t, columns), 0.0, noise=noise)


def role_epsilon(t: int, columns: int) -> float:
    """The pure epsilon of the role release (basic composition of its columns)."""
    return 2.0 * columns / float(t) if columns else 0.0


def role_bit(statistic: int, noise: int) -> bool:
    """The released bit: numeric when ``s + N >= 0``."""
    return statistic + noise >= 0


def release_roles(statistics: list[int], t: int, rng=None) -> list[str]:
    """"numeric" or "categorical" per column, from its statistic plus discrete Laplace
    noise of scale t (exact sampler; ``rng`` a NumPy Generator for reproducible draws)."""
    if not statistics:
        return []
    source = SecureRandom() if rng is None else GeneratorSource(rng)
    noise = discrete_laplace(source, int(t), len(statistics))
    return ["numeric" if role_bit(int(s), int(z)) else "categorical" for s, z in zip(statistics, noise)]


def statistics_of(frame, columns) -> list[int]:
    """The role statistic of each column (a Dask frame: summed over its partitions)."""
    from ._base import is_dask

    if is_dask(frame):
        import dask

        parts = frame[list(columns)].to_delayed()
        per_part = dask.compute(*[dask.delayed(lambda part: [role_statistic(part[c]) for c in columns])(p)
                                  for p in parts])
        return [int(sum(r[j] for r in per_part)) for j in range(len(columns))]
    return [role_statistic(frame[c]) for c in columns]


def dtype_role(dtype) -> str:
    """A column's role from its dtype (``schema="dtypes"``): numeric for numbers (not
    booleans) and datetimes, categorical otherwise."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        if pd.api.types.is_complex_dtype(dtype):
            return "categorical"
        return "numeric"
    return "categorical"
