"""The command line's CSV reader (dperm._tables) against ``pandas.read_csv`` in the same run.

Times, on generated files of 6 columns at each ``--rows``:

- ``numeric``: integers and decimals only;
- ``mixed``: integers, decimals and words;
- ``malformed``: ``mixed`` with ``--bad`` of its lines replaced by malformed or odd ones
  (an extra field, a missing field, an unbalanced quote, bytes that are not UTF-8, a bare
  carriage return, a quoted field holding a comma), spread through the file;

three readers, interleaved (one after the other, per repeat, so load hits all alike):

- ``pandas``: ``pd.read_csv(path)`` (on ``malformed``, the file without its malformed lines:
  pandas refuses the unbalanced quote);
- ``read_table``: ``dperm._tables.read_table`` (every field as text, a malformed line a row
  of missing values), what ``dperm predict`` and the schema rule read;
- ``read+types``: ``infer_types(read_table(path))``, what ``dperm fit`` reads (its
  ``_read_csv``: each column typed as pandas would);
- ``reference`` (with ``--reference``): the reader before the Arrow path
  (``tests/_tables_reference.py``), read + types.

Prints the median and smallest wall time of ``--repeats`` runs and the ratio of medians to
pandas; the machine's load average before and after. Run from the repository root::

    python benchmarks/bench_tables.py [--rows 2e5 1e6] [--repeats 5] [--reference]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from dperm._tables import infer_types, read_table  # noqa: E402

BAD_LINES = [b"1,2", b"1,2,3,4,5,6,7", b'"x,1,2,3,4,5', b"\xff\xfe,1,2,3,4,5", b"1\r2,x,3,y,4,z", b'5,"a,b",6,c,7,d']


def _columns(kind: str, n: int, rng) -> tuple[list, list]:
    ints = rng.integers(18, 90, n).astype(str)
    decimals = np.round(rng.normal(size=n), 6).astype(str)
    money = np.round(rng.lognormal(10, 1, n), 2).astype(str)
    if kind == "numeric":
        return (["a", "b", "c", "d", "e", "f"],
                [ints, decimals, money, rng.integers(-5, 5, n).astype(str),
                 np.round(rng.exponential(size=n), 4).astype(str), rng.integers(0, 2, n).astype(str)])
    return (["age", "city", "income", "job", "score", "label"],
            [ints, rng.choice(["paris", "lyon", "marseille", "nice"], n), money,
             rng.choice(["clerk", "engineer", "nurse", "teacher", "driver"], n), decimals,
             rng.choice(["no", "yes"], n)])


def write_file(directory: str, kind: str, n: int, bad: int, seed: int = 0) -> tuple[str, str]:
    """(path, clean path): the file, and the same file without its malformed lines."""
    rng = np.random.default_rng(seed)
    names, columns = _columns("numeric" if kind == "numeric" else "mixed", n, rng)
    lines = [",".join(row).encode() for row in zip(*columns)]
    header = ",".join(names).encode()
    path = os.path.join(directory, f"{kind}-{n}{'-clean' if kind == 'malformed' else ''}.csv")
    Path(path).write_bytes(b"\n".join([header, *lines]) + b"\n")
    if kind != "malformed":
        return path, path
    for k, i in enumerate(np.linspace(0, n - 1, bad).astype(int)):
        lines[i] = BAD_LINES[k % len(BAD_LINES)]
    bad_path = os.path.join(directory, f"malformed-{n}.csv")
    Path(bad_path).write_bytes(b"\n".join([header, *lines]) + b"\n")
    return bad_path, path


def _reference():
    sys.path.insert(0, str(ROOT / "tests"))
    import _tables_reference

    return lambda path: _tables_reference.infer_types(_tables_reference.read_table(path))


def _time(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[2e5, 1e6])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bad", type=int, default=12, help="malformed lines in the 'malformed' file")
    parser.add_argument("--reference", action="store_true", help="also time the reader before the Arrow path")
    args = parser.parse_args(argv)
    print(f"pandas {pd.__version__}, numpy {np.__version__}, load {os.getloadavg()}")
    readers = {"pandas": None, "read_table": read_table, "read+types": lambda p: infer_types(read_table(p))}
    if args.reference:
        readers["reference"] = _reference()
    print(f"{'file':>10} {'rows':>8} " + " ".join(f"{name:>20}" for name in readers) + "   (median s [min], x pandas)")
    with tempfile.TemporaryDirectory() as directory:
        for n in (int(r) for r in args.rows):
            for kind in ("numeric", "mixed", "malformed"):
                path, clean = write_file(directory, kind, n, args.bad)
                times = {name: [] for name in readers}
                for _ in range(args.repeats):
                    for name, reader in readers.items():
                        times[name].append(_time(pd.read_csv, clean) if reader is None else _time(reader, path))
                base = statistics.median(times["pandas"])
                cells = []
                for name in readers:
                    median = statistics.median(times[name])
                    cells.append(f"{median:6.3f} [{min(times[name]):5.3f}] {median / base:4.1f}x")
                print(f"{kind:>10} {n:>8} " + " ".join(f"{c:>20}" for c in cells), flush=True)
    print(f"load after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
