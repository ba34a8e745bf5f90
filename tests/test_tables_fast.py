"""The fast CSV reader (dperm._tables: Arrow's parser and casts, NumPy line checks) gives
exactly what the reference reader gives (tests/_tables_reference.py, the reader before
the fast path: a line split in Python, the fields parsed by pandas' C parser, the numbers
by Python's ``float``) on every file: the same n, the same row for each line, the same
text, the same types. The row-per-line rule is a privacy property (issue 29: n and each
row depend on that line only), so the fast path is checked against the reference on
generated files mixing every hazard of tests/_adversarial.py's CSV catalogue.

Default run: seeded (``derandomize=True``), a few seconds. Deep run:
``DPERM_FUZZ=deep python -m pytest -n 0 tests/test_tables_fast.py`` (random seeds, many
more examples; ``DPERM_FUZZ_EXAMPLES=N`` sets the number).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import _tables_reference as reference
from _adversarial import CSV_FIELDS, CSV_LINES
from dperm import _tables
from dperm._tables import TableError, infer_types, is_number, numbers, read_header, read_table

DEEP = os.environ.get("DPERM_FUZZ", "") == "deep"


def _settings(default: int, deep: int):
    examples = int(os.environ.get("DPERM_FUZZ_EXAMPLES", 0)) or (deep if DEEP else default)
    return settings(max_examples=examples, derandomize=not DEEP, deadline=None, database=None,
                    phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if DEEP else []),
                    suppress_health_check=list(HealthCheck))


ARROW = _tables._arrow_text_dtype() is not None
_DIRECTORY = tempfile.TemporaryDirectory(prefix="dperm-tables-")


def _write(data: bytes, name: str = "t.csv") -> str:
    path = Path(_DIRECTORY.name) / name
    path.write_bytes(data)
    return str(path)


def _same_floats(a, b) -> bool:
    """Equal bit for bit up to NaN's payload: the same values, NaN and signs of zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan])
                and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))


def _assert_same_frame(ours, theirs):
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    for name in theirs.columns:
        if theirs[name].dtype.kind == "f":
            assert _same_floats(ours[name], theirs[name]), name


def _assert_same_reading(path: str, columns=None):
    """read_table, infer_types, numbers and is_number equal the reference on this file (or
    both refuse it with the same message)."""
    try:
        theirs = reference.read_table(path, columns)
    except reference.TableError as error:
        with pytest.raises(TableError) as ours:
            read_table(path, columns)
        assert str(ours.value) == str(error)
        return None
    except pd.errors.ParserError:
        # the reference's one known failure, fixed: a one-column file whose every record is
        # empty or malformed (pandas' C parser finds no column); the rule gives n rows missing
        ours = read_table(path, columns)
        assert len(ours.columns) == 1 and ours.iloc[:, 0].isna().all() and len(ours) == _records(path)
        assert ours.iloc[:, 0].dtype == pd.Series([], dtype="str").dtype
        return ours
    ours = read_table(path, columns)
    _assert_same_frame(ours, theirs)
    _assert_same_frame(infer_types(ours), reference.infer_types(theirs))
    for name in theirs.columns:
        assert _same_floats(numbers(ours[name]), reference.numbers(theirs[name])), name
        np.testing.assert_array_equal(is_number(ours[name]), reference.is_number(theirs[name]))
    return ours


def _records(path: str) -> int:
    """n by the rule: the lines after the header, a final line break starting none."""
    body = Path(path).read_bytes().replace(b"\r\n", b"\n").partition(b"\n")[2]
    return body.count(b"\n") + (0 if body.endswith(b"\n") or not body else 1)


def test_a_one_column_file_of_empty_records_is_read_not_refused():
    """The reference's failure the fast reader fixes (both paths): n rows of missing values."""
    for data in (b"c\n\n", b"c\n\n\n", b"c\r\n\xff\n", b"c\n\xef\xbb\xbf\n"):
        for arrow in (True, False):
            with mock.patch.object(_tables, "_arrow_text_dtype", return_value=None) if not arrow else mock.MagicMock():
                table = read_table(_write(data))
            assert table.shape == (_records(_write(data)), 1) and table["c"].isna().all()


# -- generated files --------------------------------------------------------------------

MISSING = sorted(reference.MISSING_TEXTS)
WORDS = ["paris", "lyon", "x", "True", "false", "TRUE", "yes", "caf\u00e9", "a b", " 5", "5 ", "-", "e", "."]


def _catalogue_field(text: str) -> bytes:
    return text.encode("utf-8")


# a column's kind decides its ordinary values, so that every type of infer_types appears
KINDS = {
    "int": st.integers(-(10**19), 10**19).map(str),
    "small int": st.integers(-9, 99).map(str),
    "float": st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    "bool": st.sampled_from(["True", "False", "TRUE", "false", "true", "FALSE"]),
    "word": st.sampled_from(WORDS),
    "number text": st.text(alphabet="0123456789.eE+-", max_size=8),
    "any": st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=6),
}
HAZARD_FIELDS = st.sampled_from([text for _, text in CSV_FIELDS] + MISSING + ['"', '""', '"a""', 'x"', '" 1"'])


@st.composite
def _field(draw, kind: str) -> bytes:
    if draw(st.integers(0, 5)) == 0:  # one field in six a hazard
        return _catalogue_field(draw(HAZARD_FIELDS))
    text = draw(KINDS[kind])
    if "," in text or '"' in text or "\r" in text or draw(st.integers(0, 9)) == 0:
        text = '"' + text.replace('"', '""') + '"'  # quoted, as a writer would
    return text.encode("utf-8")


@st.composite
def _line(draw, kinds: list) -> bytes:
    choice = draw(st.integers(0, 9))
    width = len(kinds)
    if choice == 0:  # a malformed or odd line of the catalogue
        return draw(st.sampled_from([make for _, make in CSV_LINES]))(width)
    if choice == 1:  # any bytes
        return draw(st.binary(max_size=12)).replace(b"\n", b"")
    if choice == 2:  # a random number of fields
        return b",".join(draw(st.lists(_field("any"), max_size=width + 2)))
    return b",".join(draw(_field(kind)) for kind in kinds)


@st.composite
def _header(draw, width: int) -> bytes:
    names = [f"c{j}" for j in range(width)]
    case = draw(st.integers(0, 5))
    if case == 1 and width > 1:
        names[draw(st.integers(0, width - 1))] = ""  # "Unnamed: j"
    elif case == 2 and width > 1:
        names[-1] = names[0]  # a repeated name: "c0.1"
    elif case == 3:
        names[0] = '"c,0"'  # a quoted name
    header = ",".join(names).encode()
    if draw(st.booleans()):
        header = b"\xef\xbb\xbf" + header
    return header


@st.composite
def _files(draw) -> bytes:
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))
    lines = [draw(_header(len(kinds)))] + draw(st.lists(_line(kinds), max_size=25))
    breaks = [draw(st.sampled_from([b"\n", b"\n", b"\r\n"])) for _ in lines]
    if len(lines) > 1 and draw(st.integers(0, 5)) == 0:  # a byte order mark opening the first record
        lines[1] = b"\xef\xbb\xbf" + lines[1]
    data = b"".join(line + end for line, end in zip(lines, breaks))
    ending = draw(st.integers(0, 3))
    if ending == 1:  # no line break at the end
        data = data[:-len(breaks[-1])]
    elif ending == 2:  # an empty line at the end
        data += b"\n"
    return data


@given(data=_files(), subset=st.integers(0, 3))
@_settings(default=60, deep=20000)
def test_the_fast_reader_equals_the_reference_on_generated_files(data, subset):
    path = _write(data)
    ours = _assert_same_reading(path)
    if ours is not None and subset == 0 and len(ours.columns) > 1:  # a subset of the columns, reordered
        _assert_same_reading(path, list(ours.columns[::-2]))


@given(data=_files())
@_settings(default=15, deep=2000)
def test_without_arrow_the_reader_is_the_reference(data):
    """Where pandas' text dtype is not Arrow-backed (pandas < 3, or no pyarrow), the reader
    takes the C-parser path, which must equal the reference too."""
    path = _write(data)
    with mock.patch.object(_tables, "_arrow_text_dtype", return_value=None), \
            mock.patch.object(_tables, "_arrow_strings", return_value=None):
        _assert_same_reading(path)


@pytest.mark.parametrize("data", [b"a,b\n\xef\xbb\xbf1\r2,x\n", b"a,b\n\xef\xbb\xbf\xef\xbb\xbf1\r2,x\n3,4",
                                  b'a,b\n\xef\xbb\xbf1,"x"\n', b'a,b\n\xef\xbb\xbf"1",x\n', b"a\n\xef\xbb\xbf\n",
                                  b"a,b\n\xef\xbb\xbf1,2\n3\r,4\n", b"a,b\n1,2\n\xef\xbb\xbf3\r,4\n"])
def test_a_byte_order_mark_opening_the_first_record_equals_the_reference(data):
    """pandas' C parser (the reference's) drops a byte order mark at the start of its input,
    the first record's when that line is passed as it is; so does the fast reader."""
    _assert_same_reading(_write(data))


@pytest.mark.parametrize("data", [b"", b"\n", b"\r\n1,2\n", b"\n1,2\n", b'a,"b\n1,2\n', b"a,\xff\n1,2\n",
                                  b"\xef\xbb\xbf\n1\n", b"a", b"a\n", b"a\r\n", b"a,b\r\n\r\n", b"a\n\n\n"])
def test_header_cases_equal_the_reference(data):
    path = _write(data)
    _assert_same_reading(path)
    try:
        theirs = reference.read_header(path)
    except reference.TableError as error:
        with pytest.raises(TableError, match="cannot read") as ours:
            read_header(path)
        assert str(ours.value) == str(error)
    else:
        assert read_header(path) == theirs


# -- the number casts -------------------------------------------------------------------

@given(texts=st.lists(st.one_of(st.text(alphabet="0123456789.eE+-", max_size=30),
                                st.text(alphabet="0123456789-", max_size=22),
                                st.sampled_from(["1e309", "-1e309", "1" + "0" * 400, "0x10", "1_0", " 1", "inf",
                                                 "nan", "-0", "+0", "-0.0e5", "4.9e-324", "2.4703282292062328e-324",
                                                 "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                                 "-9223372036854775809", "1e", "e1", ".", "-", "+", ""]),
                                st.floats(width=64).map(repr), st.integers(-(10**20), 10**20).map(str)),
                      min_size=1, max_size=8),
       missing=st.booleans())
@_settings(default=100, deep=50000)
def test_the_arrow_casts_equal_python_float_and_pandas(texts, missing):
    """Arrow's cast is used only on texts of the byte classes ``0-9 -`` and ``0-9 . e E + -``:
    on those it parses exactly where Python's float (and pandas' int64) does, to the same
    value; every other text goes through float itself."""
    series = pd.Series(texts + ([None] if missing else []), dtype="str")
    assert _same_floats(numbers(series), reference.numbers(series))
    np.testing.assert_array_equal(is_number(series), reference.is_number(series))
    frame = pd.DataFrame({"x": series})
    _assert_same_frame(infer_types(frame), reference.infer_types(frame))


@pytest.mark.skipif(not ARROW, reason="pandas' text dtype is not Arrow-backed here")
def test_the_fast_paths_are_taken_on_ordinary_columns():
    """The reader's speed rests on these paths being taken (benchmarks/bench_tables.py):
    a file without quotes or carriage returns is read by Arrow as it is, and integer and
    decimal columns are cast by Arrow, the byte classes read on its buffers."""
    text = pd.Series(["1", "-20", "NA", "3"], dtype="str").mask(lambda s: s == "NA")
    assert _tables._byte_class(_tables._arrow_strings(text)) == 0  # the missing entry's bytes are skipped
    assert _tables._byte_class(_tables._arrow_strings(pd.Series(["1.5e3", "-2"], dtype="str"))) == 1
    assert _tables._byte_class(_tables._arrow_strings(pd.Series(["0x10"], dtype="str"))) == 2
    body = b"1,x\n2,y\n3,z"
    assert _tables._arrow_body(body, 2, 3) == (body, False)  # kept as it is: no Python loop over lines
    assert _tables._arrow_body(b'1,"x"\n2,y\rz\n3\n\xff,1', 2, 4) == (b'"1","x"\n"2","y\rz"\n,\n,', True)


def test_a_large_file_with_hazards_in_several_arrow_blocks_equals_the_reference():
    """More than one 4 MB block of Arrow's parser, special lines (quotes, bare carriage
    returns, malformed, not UTF-8) on and around the blocks' edges."""
    rng = np.random.default_rng(0)
    n = 60_000
    lines = [f"{i},{rng.normal():.6f},{'abcdefghij'[i % 10] * 130}".encode() for i in range(n)]
    hazards = [b'7,"1,5",x', b'"a\rb",1,2', b"1\r2,3,4", b"1,2", b"1,2,3,4", b"\xff,1,2", b'"x,1,2', b'1,"2"x,3', b""]
    for k, i in enumerate(rng.choice(n, 300, replace=False)):
        lines[i] = hazards[k % len(hazards)]
    data = b"id,value,text\r\n" + b"\n".join(lines) + b"\r\n"
    assert len(data) > 2 * (1 << 22)
    _assert_same_reading(_write(data, "large.csv"))
