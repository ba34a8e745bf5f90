"""Reading a CSV file as a table, total on its rows: one record per line, every field as
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
(a text that is not a decimal number, or whose value is not finite, becomes missing),
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

# A decimal number: optional sign, digits with an optional point (or a point and digits),
# optional exponent; or inf / infinity. Surrounding blanks (spaces, tabs) are allowed.
# No thousands separators, no decimal comma ("1,5" is two fields, "1.5e" text), no
# underscores, no hexadecimal.
_NUMBER = r"[ \t]*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)[ \t]*"
_INTEGER = r"[ \t]*[+-]?\d+[ \t]*"
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


def _lines(data: bytes) -> list:
    """The file's lines as bytes, by the record rule (``\\n`` or ``\\r\\n`` ends a line)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the file ended with a line break
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


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
    """
    import numpy as np
    import pandas as pd

    _open(path, what)
    lines = _lines(Path(path).read_bytes())
    if not lines or not lines[0].strip(b" \t\r\xef\xbb\xbf"):
        raise TableError(f"cannot read {what} {path!r} as CSV (no header line)")
    header = _header(lines[0], path)
    width = len(header)
    body = lines[1:]
    try:  # the common case: the whole file decodes, line by line in one pass
        texts = b"\n".join(body).decode("utf-8").split("\n") if body else []
    except UnicodeDecodeError:
        texts = []
        for line in body:
            try:
                texts.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)  # an undecodable line: a row of missing values
    missing_row = [None] * width
    rows = []
    for text in texts:
        fields = None if text is None else _split(text)
        rows.append(fields if fields is not None and len(fields) == width else missing_row)
    keep = header if columns is None else list(columns)
    index = {name: i for i, name in enumerate(header)}
    data = {}
    for name in keep:
        j = index[name]
        values = np.array([row[j] for row in rows], dtype=object)
        if values.size:
            values[pd.Series(values, dtype=object).isin(MISSING_TEXTS).to_numpy() | (values == None)] = np.nan  # noqa: E711
        data[name] = pd.Series(values, dtype="str")
    return pd.DataFrame(data, columns=keep, index=pd.RangeIndex(len(rows)))


def _text(series):
    import pandas as pd

    return pd.Series(series, dtype="str") if not pd.api.types.is_string_dtype(series.dtype) else series


def is_number(series):
    """Boolean Series: which values are decimal numbers (this module's grammar; missing: False)."""
    return _text(series).str.fullmatch(_NUMBER).fillna(False).astype(bool)


def numbers(series):
    """The total cast of a text column to numbers: float64, a value that is not a decimal
    number, or whose value is not finite (``1e309``, ``inf``), missing (NaN). Decided
    value by value: no other row is read."""
    import numpy as np
    import pandas as pd

    text = _text(series)
    mask = is_number(text).to_numpy()
    out = np.full(len(text), np.nan)
    if mask.any():
        with np.errstate(over="ignore", invalid="ignore"):
            parsed = pd.to_numeric(text[mask].str.strip(" \t"), errors="coerce").to_numpy(dtype=float, copy=True)
        parsed[~np.isfinite(parsed)] = np.nan
        out[mask] = parsed
    return pd.Series(out, index=series.index, name=series.name)


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
        present = text.notna()
        n_present = int(present.sum())
        words = text[present]
        if n_present and bool(words.isin(_TRUE | _FALSE).all()) and n_present == len(text):
            typed[name] = words.isin(_TRUE).astype(bool)
            continue
        if not bool(is_number(words).all()):
            typed[name] = text
            continue
        if n_present == len(text) and bool(words.str.fullmatch(_INTEGER).all()):
            as_int = pd.to_numeric(words.str.strip(" \t"), errors="coerce")
            if as_int.dtype.kind == "i":
                typed[name] = as_int.astype(np.int64)
                continue
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.full(len(text), np.nan)
            values[present.to_numpy()] = pd.to_numeric(words.str.strip(" \t"), errors="coerce").to_numpy(float)
        typed[name] = pd.Series(values, index=text.index, name=name)
    return pd.DataFrame(typed, columns=list(frame.columns), index=frame.index)
