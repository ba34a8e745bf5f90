"""The reference CSV reader for tests/test_tables_fast.py: dperm._tables as it was before
its Arrow path (commit 3c05c52), kept unchanged as the specification the fast reader must
equal on every file (a line split in Python, the fields parsed by pandas' C parser with
``dtype=object``, the numbers by Python's ``float``). Not imported by dperm.

The module's original docstring follows.

Reading a CSV file as a table, total on its rows: one record per line, every field as
text, a malformed line a row of missing values.

The rule (public, docs/your-data.md "How a CSV file is read"):

* **Records are lines.** The file is split at every ``\\n``; a ``\\r`` just before it is
  part of the line break (``\\r\\n``). The first line is the header; every later line is
  one record, an empty line included; the text after the last ``\\n`` is a record unless
  it is empty (a file ending with a line break). A bare ``\\r`` inside a line is data.
  So the number of rows n is a function of the file's line structure only, never of
  what a line holds.
* **Fields.** Fields are separated by ``,``. A field that starts with ``"`` is quoted: it
  runs to the next ``"`` not doubled (``""`` stands for one ``"``) and must be followed
  by ``,`` or the end of the line. A quote elsewhere in a field is data. A quoted field
  never spans lines: a line break inside quotes ends the line as usual, and that line
  (with its unbalanced quote) is malformed.
* **Malformed lines.** A line that is not valid UTF-8, whose quotes are unbalanced, or
  whose number of fields differs from the header's becomes a row of missing values, in
  its place: it is never dropped and never shifts a column.
* **Text and missing values.** Every field is read as text; the texts pandas treats as
  missing by default (``""``, ``NA``, ``NaN``, ``null``, ``None``, ``#N/A``, ...: the set
  ``MISSING_TEXTS``) are missing. A NUL byte or a zero-width space is data.
* **The header is public.** An unreadable header (no line, invalid UTF-8, unbalanced
  quotes) is refused with :class:`TableError`, which quotes no field of the data rows.
  Empty column names become ``"Unnamed: i"`` and repeated ones ``"name.1"``, ... (as
  pandas names them).

Typing is a separate step. :func:`numbers` is the total cast of a text column to numbers
(a text that Python's ``float`` does not parse, or whose value is not finite, becomes
missing),
the cast a column whose role is numeric gets. :func:`infer_types` types each column as
``pandas.read_csv`` would (int, float, bool or text, per column): it looks at every value
of a column, so it may be used only where the role decision it feeds is a public-schema
rule (the command line's current rule, which refuses a column whose values mix numbers and
text, or labels and weights, whose checks precede any charge).

A leaf module: NumPy and pandas only (no command-line imports), so that the command
line's ``fit`` and ``predict`` and the Python API can share it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["TableError", "MISSING_TEXTS", "read_header", "read_table", "numbers", "is_number", "infer_types"]

# pandas' default missing-value texts (pandas._libs.parsers.STR_NA_VALUES), written out
# so that the rule does not move with a pandas release.
MISSING_TEXTS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                           "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})

_INTEGER = r"\s*[+-]?\d+\s*"  # an integer as pandas.read_csv reads one
_TRUE = frozenset({"True", "TRUE", "true"})
_FALSE = frozenset({"False", "FALSE", "false"})
# one field of a line holding a quote, at a given position: a quoted field, or an
# unquoted one (which may hold a quote after its first character), then "," or the end
_FIELD = re.compile(r'"((?:[^"]|"")*)"(,|$)|([^,"][^,]*|)(,|$)', re.DOTALL)


class TableError(ValueError):
    """A file that cannot be read as a table (not found, no header, unreadable header): a
    refusal decided by public inputs. The message quotes no data field."""


def _split_quoted(line: str):
    """The fields of a line holding a quote, or None if its quotes are unbalanced."""
    fields, position, end = [], 0, len(line)
    while True:
        match = _FIELD.match(line, position)
        if match is None:
            return None
        if match.group(2) is not None:  # quoted
            fields.append(match.group(1).replace('""', '"'))
            separator = match.group(2)
        else:
            fields.append(match.group(3))
            separator = match.group(4)
        position = match.end()
        if not separator:  # the end of the line
            return fields if position == end else None
        if position == end:  # a trailing "," : one more empty field
            fields.append("")
            return fields


def _split(line: str):
    return _split_quoted(line) if '"' in line else line.split(",")


def _header(first: bytes, path: str) -> list:
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]  # a UTF-8 byte order mark
    try:
        names = _split(first.decode("utf-8"))
    except UnicodeDecodeError:
        names = None
    if names is None:
        raise TableError(f"cannot read data file {path!r} as CSV (its header line is not valid UTF-8 text with "
                         "balanced quotes)")
    seen, header = {}, []
    for i, name in enumerate(names):
        name = name if name != "" else f"Unnamed: {i}"
        base, k = name, seen.get(name, 0)
        while name in seen:  # a repeated name: name.1, name.2, ...
            k += 1
            name = f"{base}.{k}"
        seen[base] = k
        seen.setdefault(name, 0)
        header.append(name)
    return header


def _open(path: str, what: str) -> None:
    if not Path(path).is_file():
        raise TableError(f"{what} {path!r} not found")


def read_header(path: str, what: str = "data file") -> list:
    """The column names of the file's first line (public); reads that line only."""
    _open(path, what)
    with open(path, "rb") as handle:
        first = handle.readline()
    if first.endswith(b"\n"):
        first = first[:-1]
    if first.endswith(b"\r"):
        first = first[:-1]
    if not first.strip(b" \t\r\xef\xbb\xbf"):
        raise TableError(f"cannot read {what} {path!r} as CSV (no header line)")
    return _header(first, path)


def _quoted(fields: list) -> str:
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields)


def _clean_lines(texts: list, width: int, quotes: bool) -> list:
    """Each record as a line pandas' C parser reads as this module's rule says (in place):
    a well-formed line without quotes as it is, a well-formed line with quotes rewritten
    with every field quoted, a malformed one (None: not UTF-8) as ``width`` empty fields."""
    blank, commas = "," * (width - 1), width - 1
    for i, text in enumerate(texts):
        if text is None:
            texts[i] = blank
        elif quotes and '"' in text:
            fields = _split_quoted(text)
            texts[i] = _quoted(fields) if fields is not None and len(fields) == width else blank
        elif text.count(",") != commas:
            texts[i] = blank
    return texts


def _fast_text(body: bytes, width: int, n: int):
    """The records' text as it is when no line needs the careful path (no quote, every
    line ``width`` fields, valid UTF-8), else None; the comma count per line vectorized."""
    import numpy as np

    if b'"' in body:
        return None
    raw = np.frombuffer(body, dtype=np.uint8)
    breaks = np.flatnonzero(raw == 10)
    commas = np.flatnonzero(raw == 44)
    per_line = np.diff(np.concatenate(([0], np.searchsorted(commas, breaks), [len(commas)])))
    if len(per_line) != n or not bool(np.all(per_line == width - 1)):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_table(path: str, columns: list | None = None, what: str = "data file"):
    """The file as a DataFrame of text columns (missing values NaN), one row per record.

    Parameters
    ----------
    path : str
        A CSV file, UTF-8, ``,``-separated, its first line the header.
    columns : list of str, optional
        Keep only these columns (names of the header; all by default).

    Returns
    -------
    pandas.DataFrame
        n rows (the number of records by the line rule of this module, whatever the
        lines hold), the header's columns, each of pandas' string dtype.

    Raises
    ------
    TableError
        The file is missing or its header cannot be read (public inputs only).

    Notes
    -----
    The lines are split and checked here; the well-formed ones (rewritten where they
    hold quotes) are then parsed by pandas' C parser with ``\n`` as the only line break
    and no missing-value or type conversion, which gives the fields this module's rule
    defines (tests/test_tables.py: a file read on the fast path and on the careful one
    give the same rows).
    """
    import io

    import numpy as np
    import pandas as pd

    _open(path, what)
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")  # "\r\n" is one line break; a bare "\r" is data
    first, _, body = data.partition(b"\n")
    if not first.strip(b" \t\r\xef\xbb\xbf"):
        raise TableError(f"cannot read {what} {path!r} as CSV (no header line)")
    header = _header(first, path)
    width = len(header)
    if body.endswith(b"\n"):
        body = body[:-1]  # the file's final line break starts no record...
        n = body.count(b"\n") + 1  # ...but an empty line before it is one
    else:
        n = body.count(b"\n") + 1 if body else 0
    keep = header if columns is None else list(columns)
    positions = [header.index(name) for name in keep]
    if n == 0:
        return pd.DataFrame({name: pd.Series([], dtype="str") for name in keep}, columns=keep)
    text = _fast_text(body, width, n)
    if text is None:  # a line with quotes, a malformed line or bytes that are not UTF-8
        texts = []
        for line in body.split(b"\n"):
            try:
                texts.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)  # an undecodable line: a row of missing values
        text = "\n".join(_clean_lines(texts, width, quotes=b'"' in body))
    frame = pd.read_csv(io.StringIO(text + "\n"), header=None, names=list(range(width)),
                        usecols=positions, dtype=object, na_filter=False, keep_default_na=False, lineterminator="\n",
                        skip_blank_lines=False, quotechar='"', doublequote=True, escapechar=None, comment=None,
                        skipinitialspace=False, engine="c")
    if len(frame) != n:  # cannot happen for lines cleaned as above; never let n move
        raise AssertionError("the CSV reader lost a record")
    data = {}
    for name, j in zip(keep, positions):
        column = frame[j].astype("str")
        data[name] = column.mask(column.isin(MISSING_TEXTS), np.nan)
    return pd.DataFrame(data, columns=keep, index=pd.RangeIndex(n))


def _text(series):
    import pandas as pd

    return pd.Series(series, dtype="str") if not pd.api.types.is_string_dtype(series.dtype) else series


def _parsed(series):
    """(values, parses): each value by Python's float() (NaN where it does not parse),
    and whether it parsed; each distinct text parsed once."""
    import numpy as np
    import pandas as pd

    codes, uniques = pd.factorize(_text(series), use_na_sentinel=True)
    uniques = np.asarray(uniques, dtype=object)
    try:  # the common case, every distinct text a number: NumPy calls float() on each
        values, ok = uniques.astype(np.float64), np.ones(len(uniques), dtype=bool)
    except (TypeError, ValueError):
        values = np.empty(len(uniques))
        ok = np.zeros(len(uniques), dtype=bool)
        for i, text in enumerate(uniques):
            try:
                values[i], ok[i] = float(text), True
            except (TypeError, ValueError):
                values[i] = np.nan
    values, ok = np.append(values, np.nan), np.append(ok, False)  # code -1: missing
    return values[codes], ok[codes]


def is_number(series):
    """Boolean array: which values are numbers, i.e. texts Python's ``float`` parses
    (surrounding whitespace allowed; ``inf`` and ``1e309`` included; missing: False)."""
    return _parsed(series)[1]


def numbers(series):
    """The total cast of a text column to numbers: float64; a value that Python's
    ``float`` does not parse (``?``, ``42.5 (approx)``, ``1,5``, ``TRUE``, a zero-width
    space), or whose value is not finite (``1e309``, ``inf``), is missing (NaN). The
    same rule as the Python pipeline's cast of a text value; decided value by value, no
    other row is read."""
    import numpy as np
    import pandas as pd

    values = _parsed(series)[0]
    values[~np.isfinite(values)] = np.nan
    return pd.Series(values, index=series.index, name=series.name)


def infer_types(frame):
    """Each text column typed as ``pandas.read_csv`` would type it: int64 when every value
    is an integer (none missing, within int64), float64 when every present value is a
    number (``inf`` and overflows kept as infinite), bool when every value is a True/False
    word (none missing), text otherwise. The dtype depends on every row of the column:
    see the module's docstring for where that is allowed."""
    import numpy as np
    import pandas as pd

    typed = {}
    for name in frame.columns:
        text = _text(frame[name])
        present = text.notna().to_numpy()
        n_present = int(present.sum())
        if n_present == len(text) and n_present and bool(text.isin(_TRUE | _FALSE).all()):
            typed[name] = text.isin(_TRUE).astype(bool)
            continue
        values, parses = _parsed(text)
        if not bool(parses[present].all()):
            typed[name] = text
            continue
        finite = values[present]
        if n_present == len(text) and bool(np.all(finite[np.isfinite(finite)] % 1 == 0)):
            distinct = pd.Series(text.unique(), dtype="str")
            if bool(distinct.str.fullmatch(_INTEGER).all()):
                as_int = pd.to_numeric(text.str.strip(), errors="coerce")
                if as_int.dtype.kind == "i":
                    typed[name] = as_int.astype(np.int64)
                    continue
        typed[name] = pd.Series(values, index=text.index, name=name)
    return pd.DataFrame(typed, columns=list(frame.columns), index=frame.index)
