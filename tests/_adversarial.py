"""A catalogue of adversarial values for the neighbour fuzzer (tests/test_neighbour_fuzz.py).

An adversary who chooses one row of a neighbouring table writes it with these: values
that do not parse, that overflow, that compare equal but are written differently, that
are not hashable or not scalars, that a reader splits or joins differently, and (for CSV
files) whole lines that are malformed. Issue 29 lists the ones found by hand; the rest
are their relatives. Each entry is (name, value): the name is what a failing example
prints.
"""

from __future__ import annotations

import datetime
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd

HUGE_TEXT = "x" * 100_000

# Cell values for a pandas DataFrame, a target or a weight.
PYTHON_VALUES = [
    ("question mark", "?"),
    ("number with a note", "42.5 (approx)"),
    ("nan", float("nan")),
    ("numpy nan", np.nan),
    ("float32 nan", np.float32("nan")),
    ("none", None),
    ("pandas NA", pd.NA),
    ("pandas NaT", pd.NaT),
    ("inf", math.inf),
    ("-inf", -math.inf),
    ("1e309 text", "1e309"),
    ("1e308", 1e308),
    ("-1e308", -1e308),
    ("tiny", 5e-324),
    ("minus zero", -0.0),
    ("10**400", 10**400),
    ("-10**400", -(10**400)),
    ("2**63", 2**63),
    ("Decimal 1", Decimal("1")),
    ("Decimal 1.0", Decimal("1.0")),
    ("Decimal NaN", Decimal("NaN")),
    ("Decimal sNaN", Decimal("sNaN")),
    ("Decimal inf", Decimal("Infinity")),
    ("Fraction 1", Fraction(1)),
    ("Fraction 1/3", Fraction(1, 3)),
    ("complex 1", 1 + 0j),
    ("complex 1+1j", 1 + 1j),
    ("list", [1, 2]),
    ("empty list", []),
    ("dict", {"a": 1}),
    ("set", {1}),
    ("tuple", (1,)),
    ("bytes", b"1"),
    ("bytes invalid utf-8", b"\xff\xfe"),
    ("numpy array", np.array([1.0, 2.0])),
    ("zero-width space", "\u200b"),
    ("zero-width space 1", "\u200b1"),
    ("bom 1", "\ufeff1"),
    ("TRUE text", "TRUE"),
    ("True text", "True"),
    ("true bool", True),
    ("false bool", False),
    ("numpy bool", np.bool_(True)),
    ("decimal comma", "1,5"),
    ("postcode", 75001),
    ("postcode text", "75001"),
    ("numpy int", np.int64(3)),
    ("numpy uint max", np.uint64(2**64 - 1)),
    ("empty string", ""),
    ("blank", "   "),
    ("huge string", HUGE_TEXT),
    ("nul", "\x00"),
    ("newline text", "a\nb"),
    ("carriage return text", "a\rb"),
    ("quote text", '"'),
    ("comma text", ","),
    ("nan text", "nan"),
    ("NA text", "NA"),
    ("inf text", "inf"),
    ("date", datetime.date(2020, 1, 1)),
    ("timestamp", pd.Timestamp("2020-01-01")),
    ("timedelta", pd.Timedelta(1, "D")),
    ("object", object()),
    ("type", int),
    ("ellipsis", ...),
]

# Fields of a CSV file (the text between two commas; quoted where they hold a comma).
CSV_FIELDS = [
    ("question mark", "?"),
    ("number with a note", "42.5 (approx)"),
    ("1e309", "1e309"),
    ("-1e309", "-1e309"),
    ("inf", "inf"),
    ("Infinity", "Infinity"),
    ("nan", "nan"),
    ("NaN", "NaN"),
    ("NA", "NA"),
    ("empty", ""),
    ("blank", "  "),
    ("TRUE", "TRUE"),
    ("true", "true"),
    ("False", "False"),
    ("decimal comma", '"1,5"'),
    ("postcode", "75001"),
    ("huge integer", "1" + "0" * 400),
    ("10**400 float", "1" + "0" * 400 + ".5"),
    ("zero-width space", "\u200b"),
    ("zero-width space 1", "\u200b1"),
    ("huge field", "y" * 100_000),
    ("nul", "\x00"),
    ("quoted", '"paris"'),
    ("escaped quote", '"say ""hi"""'),
    ("quote inside", 'a"b'),
    ("hex", "0x10"),
    ("underscore", "1_000"),
    ("minus zero", "-0"),
    ("leading plus", "+5"),
    ("space padded", " 5 "),
    ("date", "2020-01-01"),
    ("bare carriage return", "1\r2"),
]

# Whole lines of a CSV file (bytes, no line break), replacing one record.
CSV_LINES = [
    ("extra field", lambda width: b",".join([b"1"] * (width + 1))),
    ("missing field", lambda width: b",".join([b"1"] * max(width - 1, 0))),
    ("empty line", lambda width: b""),
    ("only commas", lambda width: b"," * (width - 1)),
    ("bare carriage return", lambda width: b",".join([b"1"] * width).replace(b",", b"\r", 1)),
    ("unbalanced quote", lambda width: b'"' + b",".join([b"1"] * width)),
    ("quote after quoted field", lambda width: b'"1"x' + b",1" * (width - 1)),
    ("nul bytes", lambda width: b",".join([b"\x00"] * width)),
    ("invalid utf-8", lambda width: b",".join([b"\xff"] * width)),
    ("latin-1 text", lambda width: b",".join([b"caf\xe9"] * width)),
    ("utf-8 bom", lambda width: b"\xef\xbb\xbf" + b",".join([b"1"] * width)),
    ("many fields", lambda width: b"," * 1000),
    ("huge line", lambda width: b",".join([b"9" * 50_000] * width)),
]

# Values of a numeric array (a float64 or float32 matrix, a label or weight vector) for the
# direct fits on arrays (estimators, dperm.minimize, PrivateScaler): what one private row
# can hold once the array's dtype is fixed.
NUMERIC_VALUES = [
    ("nan", np.nan),
    ("inf", np.inf),
    ("-inf", -np.inf),
    ("1e308", 1e308),
    ("-1e308", -1e308),
    ("float32 max", float(np.finfo(np.float32).max)),
    ("tiny", 5e-324),
    ("minus zero", -0.0),
    ("1e-300", 1e-300),
]
