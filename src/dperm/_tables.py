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
(a text that Python's ``float`` does not parse, or whose value is not finite, becomes
missing),
the cast a column whose role is numeric gets. :func:`infer_types` types each column as
``pandas.read_csv`` would (int, float, bool or text, per column): it looks at every value
of a column, so it may be used only where the role decision it feeds is a public-schema
rule (the command line's current rule, which refuses a column whose values mix numbers and
text, or labels and weights, whose checks precede any charge).

**How it is read fast** (docs/performance.md, "The CSV reader"). With pandas' text dtype
Arrow-backed (pandas >= 3 with pyarrow), a file is parsed by Arrow's CSV reader into Arrow
strings, never a Python object per field: a file without ``"`` or ``\r`` whose lines
are valid UTF-8 goes to it as it is (Arrow refuses a line of another width); otherwise
the lines are checked with NumPy and Arrow's kernels and only the lines that need it are
rewritten (a line with quotes or a ``\r`` with every field quoted, a malformed one as
empty fields) before Arrow reads them. :func:`infer_types`, :func:`numbers` and
:func:`is_number` cast plain decimal texts (bytes ``0-9 . e E + -``) with Arrow's cast,
which parses them as Python's ``float`` does, and send every other text through
``float`` itself. Without Arrow-backed text the lines go to pandas' C parser. The output
is the same on every file: tests/test_tables_fast.py checks it against the reference
reader (tests/_tables_reference.py, this module before the Arrow path) on generated files
mixing every hazard of the fuzzer's catalogue.

A leaf module: NumPy, pandas and (where pandas uses it) pyarrow only (no command-line
imports), so that the command line's ``fit`` and ``predict`` and the Python API can share
it.
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
# a plain decimal number (RE2 syntax, ASCII digits only): a text Python's float and
# Arrow's cast parse to the same double
_DECIMAL = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
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


def _arrow_text_dtype():
    """pandas' ``"str"`` dtype where it is Arrow-backed (pandas >= 3 with pyarrow), the
    dtype the Arrow path builds its columns in; else None (the C-parser path)."""
    import pandas as pd

    dtype = pd.Series([], dtype="str").dtype
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow":
        return None
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:  # pragma: no cover - the "str" dtype being Arrow-backed implies pyarrow
        return None
    return dtype


def _lines_holding(raw, breaks, byte: int):
    """The sorted distinct indices of the lines holding ``byte`` (vectorized)."""
    import numpy as np

    return np.unique(np.searchsorted(breaks, np.flatnonzero(raw == byte)))


def _arrow_body(body: bytes, width: int, n: int):
    """(body, quoted): the n records of ``body`` (no final line break) as bytes that
    Arrow's CSV parser (``,``, no line break but ``\n`` in an unquoted field) reads as
    this module's rule says, one line per record in place; ``quoted`` if some line was
    rewritten with its fields quoted. A well-formed line with neither ``"`` nor ``\r`` is
    kept as it is (checked with NumPy and Arrow's kernels, no Python loop); one holding
    either is split by the rule and rewritten with every field quoted; a malformed line
    becomes ``width - 1`` commas (``width`` empty fields, all missing)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = np.frombuffer(body, dtype=np.uint8)
    breaks = np.flatnonzero(raw == 10)
    bounds = np.empty(n + 1, dtype=np.int64)  # line i is body[bounds[i]:bounds[i + 1]], its "\n" included
    bounds[0], bounds[1:n], bounds[n] = 0, breaks + 1, len(raw)
    lines = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(bounds), pa.py_buffer(body)])
    commas = np.asarray(pc.count_substring(lines, ",").to_numpy(zero_copy_only=False))
    special = set()
    if b'"' in body:
        special.update(_lines_holding(raw, breaks, 34).tolist())
    if b"\r" in body:
        special.update(_lines_holding(raw, breaks, 13).tolist())
    ends = bounds[1:] - 1
    ends[-1] = len(raw)
    undecodable = set()
    if not body.isascii():
        try:
            body.decode("utf-8")  # a "\n" byte is never inside a UTF-8 sequence: the lines decode too
        except UnicodeDecodeError:
            for i in np.unique(np.searchsorted(breaks, np.flatnonzero(raw >= 128))).tolist():
                try:
                    body[bounds[i]:ends[i]].decode("utf-8")
                except UnicodeDecodeError:
                    undecodable.add(i)
    blank = b"," * (width - 1)
    replace = {i: blank for i in np.flatnonzero(commas != width - 1).tolist() if i not in special}
    for i in undecodable:
        replace[i] = blank
    for i in special - undecodable:
        line = body[bounds[i]:ends[i]].decode("utf-8")
        if i == 0 and line.startswith("\ufeff") and '"' not in line:
            # a byte order mark opening the first record is dropped, as pandas' and Arrow's
            # parsers drop it from a line they read as it is (the reference's rule)
            line = line[1:]
        fields = _split(line)
        replace[i] = (_quoted(fields).encode("utf-8") if fields is not None and len(fields) == width else blank)
    if not replace:
        return body, False
    pieces, position = [], 0
    for i in sorted(replace):
        pieces += [body[position:bounds[i]], replace[i]]
        position = int(ends[i])
    pieces.append(body[position:])
    return b"".join(pieces), bool(special)


def _arrow_csv(buffer, width: int, wanted: list, quoted: bool = False, carriage_returns: bool = False):
    """Arrow's CSV parser on the records (the columns ``wanted``, as text, no missing-value
    or type conversion), or None where it refuses them (a line of another width)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    names = [str(j) for j in range(width)]
    try:
        return csv.read_csv(
            pa.BufferReader(buffer),
            read_options=csv.ReadOptions(column_names=names, use_threads=True, block_size=1 << 22),
            # a "\r" only ever inside quotes; Arrow's chunker must then respect them
            parse_options=csv.ParseOptions(delimiter=",", quote_char='"' if quoted else False, double_quote=quoted,
                                           escape_char=False, newlines_in_values=carriage_returns,
                                           ignore_empty_lines=False),
            convert_options=csv.ConvertOptions(column_types={names[j]: pa.large_string() for j in wanted},
                                               include_columns=[names[j] for j in wanted], null_values=[],
                                               strings_can_be_null=False, quoted_strings_can_be_null=False,
                                               check_utf8=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _decodes(data: bytes, start: int) -> bool:
    if data.isascii():
        return True
    try:
        str(memoryview(data)[start:], "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_arrow(data: bytes, start: int, end: int, width: int, n: int, keep: list, positions: list, dtype):
    """The records (``data[start:end]``, n >= 1 lines) as a DataFrame of text columns read
    by Arrow's CSV parser, or None where Arrow does not read them as the rule says (the
    caller then takes the C-parser path; the row count is checked, never assumed).

    A file with no ``"``, no ``\r`` and valid UTF-8 goes to Arrow as it is, without a
    copy: Arrow refuses it if a line has another width, and then (as a file with quotes,
    carriage returns or bytes that are not UTF-8) its lines are checked and rewritten by
    :func:`_arrow_body` first."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = sorted(set(positions))
    table = None
    if data.find(b'"', start) < 0 and data.find(b"\r", start) < 0 and _decodes(data, start):
        table = _arrow_csv(pa.py_buffer(data).slice(start), width, wanted, quoted=False)
    if table is None or table.num_rows != n:
        body, quoted = _arrow_body(data[start:end], width, n)
        table = _arrow_csv(pa.py_buffer(body + b"\n"), width, wanted, quoted, carriage_returns=b"\r" in body)
        if table is None or table.num_rows != n:
            return None
    missing = pa.array(sorted(MISSING_TEXTS), type=pa.large_string())
    null = pa.scalar(None, type=pa.large_string())
    columns = {}
    for name, j in zip(keep, positions):
        column = table.column(str(j))
        if _only_digit_bytes(column) and pc.min(pc.binary_length(column)).as_py() > 0:
            pass  # every missing text but "" holds a letter, "#" or "<": none here
        else:
            is_missing = pc.is_in(column, value_set=missing)
            if pc.any(is_missing).as_py():
                column = pc.if_else(is_missing, null, column)
        columns[name] = pd.array(column, dtype=dtype)
    return pd.DataFrame(columns, columns=keep, index=pd.RangeIndex(n))


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
    The lines are checked here (vectorized) and those that need it rewritten (quoted
    fields or a ``\r``: every field quoted; malformed: empty fields); the records are
    then parsed by Arrow's CSV reader (pandas' C parser where pandas' text is not
    Arrow-backed) with ``\n`` as the only line break and no missing-value or type
    conversion, which gives the fields this module's rule defines; the row count is
    checked, never assumed (tests/test_tables_fast.py: the same frame as the reference
    reader on generated files with every hazard).
    """
    import io

    import numpy as np
    import pandas as pd

    _open(path, what)
    data = Path(path).read_bytes()
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")  # "\r\n" is one line break; a bare "\r" is data
    newline = data.find(b"\n")
    first, start = (data, len(data)) if newline < 0 else (data[:newline], newline + 1)
    if not first.strip(b" \t\r\xef\xbb\xbf"):
        raise TableError(f"cannot read {what} {path!r} as CSV (no header line)")
    header = _header(first, path)
    width = len(header)
    end = len(data)
    if end > start and data.endswith(b"\n"):
        end -= 1  # the file's final line break starts no record...
        n = data.count(b"\n", start, end) + 1  # ...but an empty line before it is one
    else:
        n = data.count(b"\n", start, end) + 1 if end > start else 0
    keep = header if columns is None else list(columns)
    positions = [header.index(name) for name in keep]
    if n == 0:
        return pd.DataFrame({name: pd.Series([], dtype="str") for name in keep}, columns=keep)
    dtype = _arrow_text_dtype()
    if dtype is not None:  # the Arrow path: no Python object per field
        frame = _read_arrow(data, start, end, width, n, keep, positions, dtype)
        if frame is not None:
            return frame
    body = data[start:end]
    text = _fast_text(body, width, n)
    if text is None:  # a line with quotes, a malformed line or bytes that are not UTF-8
        texts = []
        for line in body.split(b"\n"):
            try:
                texts.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)  # an undecodable line: a row of missing values
        text = "\n".join(_clean_lines(texts, width, quotes=b'"' in body))
    if width == 1 and not text.removeprefix("\ufeff").replace("\n", ""):
        # only empty records (the parser drops a byte order mark opening its input): pandas'
        # C parser would find no column
        frame = pd.DataFrame({0: [""] * n}, dtype=object)
    else:
        frame = pd.read_csv(io.StringIO(text + "\n"), header=None, names=list(range(width)), usecols=positions,
                            dtype=object, na_filter=False, keep_default_na=False, lineterminator="\n",
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


def _arrow_strings(series):
    """The column's Arrow strings (an Array or ChunkedArray, no copy) where it is
    Arrow-backed text, else None."""
    import pandas as pd

    dtype = series.dtype
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow":
        return None
    import pyarrow as pa

    return pa.array(series.array)  # __arrow_array__: the stored array, no copy


def _byte_classes():
    import numpy as np

    classes = np.full(256, 2, dtype=np.uint8)
    classes[np.frombuffer(b"0123456789-", dtype=np.uint8)] = 0
    classes[np.frombuffer(b".eE+", dtype=np.uint8)] = 1
    return classes


def _chunk_bytes(chunk):
    """(offsets, bytes) of one Arrow string array as NumPy views, or None (another type)."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_large_string(chunk.type):
        width = np.int64
    elif pa.types.is_string(chunk.type):
        width = np.int32
    else:
        return None
    _, offsets, data = chunk.buffers()
    offsets = np.frombuffer(offsets, dtype=width, count=len(chunk) + 1, offset=chunk.offset * np.dtype(width).itemsize)
    raw = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.empty(0, np.uint8)
    return offsets, raw


def _quick_kind(raw):
    """_byte_class of these bytes by comparisons only (the common case, several times
    faster than a table look-up): 0 for ``-0-9`` only, 1 for ``-0-9 . e E +`` only, None
    for any other byte."""
    import numpy as np

    if not len(raw):
        return 0
    low, high = int(raw.min()), int(raw.max())
    if low < 43 or high > 101:  # below "+" or above "e": a text column's letters, mostly
        return None
    kind = 0
    if high > 57:
        over = raw[raw > 57]
        if not bool(np.all((over == 69) | (over == 101))):  # "E", "e"
            return None
        kind = 1
    if (raw == 44).any() or (raw == 47).any():  # ",", "/"
        return None
    return 1 if kind or low == 43 or (raw == 46).any() else 0  # "+", "."


def _digits_kind(strings):
    """_byte_class where every byte of the strings (missing entries' included) is of class
    at most 1, by comparisons only; None otherwise (then the table look-up decides)."""
    import pyarrow as pa

    kind = 0
    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        parts = _chunk_bytes(chunk)
        quick = None if parts is None else _quick_kind(parts[1])
        if quick is None:
            return None
        kind = max(kind, quick)
    return kind


def _only_digit_bytes(strings) -> bool:
    """Whether every byte of these Arrow strings (missing entries' included) is one of
    ``-./0-9``: comparisons only."""
    import pyarrow as pa

    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        parts = _chunk_bytes(chunk)
        if parts is None:
            return False
        raw = parts[1]
        if len(raw) and (int(raw.min()) < 45 or int(raw.max()) > 57):
            return False
    return True


def _byte_class(strings) -> int:
    """0 if every present text is made of the bytes ``0-9 -`` only, 1 if of ``0-9 . e E +
    -`` only, else 2; read on the Arrow buffers with NumPy (the bytes of missing entries
    are skipped). A text of class 0 is an integer, and one of class 1 a decimal number,
    exactly where Arrow's cast accepts it (tests/test_tables_fast.py)."""
    import numpy as np
    import pyarrow as pa

    classes = _byte_classes()
    worst = 0
    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        if chunk.null_count == len(chunk):
            continue
        parts = _chunk_bytes(chunk)
        if parts is None:
            return 2
        offsets, raw = parts
        if not len(raw):  # only empty texts
            continue
        top = _quick_kind(raw)
        if top is None:  # some byte of class 2, maybe a missing entry's: one pass through the table
            of_bytes = classes[raw]
            top = int(of_bytes.max())
        if top > worst and chunk.null_count:  # the largest class per present text
            of_bytes = classes[raw]
            lengths = np.diff(offsets)
            filled = lengths > 0
            per_text = np.zeros(len(chunk), dtype=np.uint8)
            if filled.any():
                per_text[filled] = np.maximum.reduceat(of_bytes, (offsets[:-1] - offsets[0])[filled])
            valid = np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            top = int(per_text[valid].max(initial=0))
        worst = max(worst, top)
        if worst == 2:
            break
    return worst


def _cast(strings, kind: str):
    """Arrow's cast of the strings to ``int64`` or ``float64`` as a NumPy array (missing:
    NaN for float64), or None where some present text does not parse."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        values = pc.cast(strings, pa.int64() if kind == "int" else pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if kind == "int" and values.null_count:
        return None
    values = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64 if kind == "int" else np.float64)
    return values if values.flags.writeable else values.copy()  # Arrow's own memory is read-only


def _all_true(mask) -> bool:
    """Whether every present entry of an Arrow boolean array is true (False if none is)."""
    import pyarrow.compute as pc

    return mask.null_count < len(mask) and bool(pc.all(mask).as_py())


def _parsed_arrow(strings, kind: int | None = None):
    """_parsed's values on Arrow strings when every present text is of byte class at most
    1 (``kind``, computed if not given) and Arrow's cast parses it, else None. Arrow's cast
    parses these texts with fast_float, correctly rounded as Python's ``float`` is, and
    refuses exactly those ``float`` refuses (tests/test_tables_fast.py compares the two bit
    for bit); a text of class 2 (any other byte) takes the path through ``float``."""
    if strings.null_count == len(strings):
        return None
    kind = _byte_class(strings) if kind is None else kind
    return None if kind == 2 else _cast(strings, "float")


def _parsed(series):
    """(values, parses): each value by Python's float() (NaN where it does not parse),
    and whether it parsed; each distinct text parsed once."""
    import numpy as np
    import pandas as pd

    text = _text(series)
    strings = _arrow_strings(text)
    if strings is not None:
        values = _parsed_arrow(strings)
        if values is not None:  # every present text parses
            return values, text.notna().to_numpy()
    codes, uniques = pd.factorize(text, use_na_sentinel=True)
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


def _some_text_is_no_number(strings) -> bool:
    """Whether a present text of these Arrow strings is one Python's ``float`` does not
    parse, trying only the distinct texts that are not plain decimals (a text column
    fails on its first few)."""
    import pyarrow.compute as pc

    uniques = pc.unique(strings).drop_null()
    for text in uniques.filter(pc.invert(pc.match_substring_regex(uniques, _DECIMAL))).to_pylist():
        try:
            float(text)
        except ValueError:
            return True
    return False


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


def _all_words(text, strings, words) -> bool:
    """Whether every value of a column without missing values is one of ``words``."""
    if strings is None:
        return bool(text.isin(words).all())
    import pyarrow as pa
    import pyarrow.compute as pc

    return _all_true(pc.is_in(strings, value_set=pa.array(sorted(words), type=strings.type)))


def _integral(values) -> bool:
    """Whether every finite value is an integer."""
    import numpy as np

    return bool(np.all(values[np.isfinite(values)] % 1 == 0))


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
        # Arrow-backed text (pandas >= 3): the common columns are typed on Arrow's buffers;
        # every other case, and every doubt, takes the general path below
        strings = _arrow_strings(text) if n_present else None
        kind = None if strings is None else _digits_kind(strings)  # comparisons only
        if kind is None and n_present == len(text) and n_present and _all_words(text, strings, _TRUE | _FALSE):
            typed[name] = text.isin(_TRUE).astype(bool)  # (a True/False word has a byte of class 2)
            continue
        if kind is None and strings is not None:
            if _some_text_is_no_number(strings):
                typed[name] = text  # a text column, decided on its distinct texts
                continue
            kind = _byte_class(strings)
        if kind == 0 and n_present == len(text):
            integers = _cast(strings, "int")  # "-?[0-9]+" within int64: pandas' int64 too
            if integers is not None:
                typed[name] = pd.Series(integers, index=text.index, name=name)
                continue
        values = None if strings is None else _parsed_arrow(strings, kind)
        if values is not None:
            parses = present
        else:
            values, parses = _parsed(text)
        if not bool(parses[present].all()):
            typed[name] = text
            continue
        finite = values[present]
        if n_present == len(text) and _integral(finite[:1000]) and _integral(finite):
            distinct = pd.Series(text.unique(), dtype="str")
            if bool(distinct.str.fullmatch(_INTEGER).all()):
                as_int = pd.to_numeric(text.str.strip(), errors="coerce")
                if as_int.dtype.kind == "i":
                    typed[name] = as_int.astype(np.int64)
                    continue
        typed[name] = pd.Series(values, index=text.index, name=name)
    return pd.DataFrame(typed, columns=list(frame.columns), index=frame.index)
