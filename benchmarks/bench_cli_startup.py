"""Start-up and end-to-end time of the command line (issue 25's targets).

Measures, as a person runs them, in fresh processes:

- ``dperm --version`` and ``dperm --help`` (target: under 0.3 s),
- ``dperm fit data.csv --target y --classes 0,1 --epsilon 1`` on a 1000-row, 10-feature
  CSV (target: under 1.5 s end to end, the secure noise path of ``random_state=None``;
  with warm numba caches, as after ``dperm warmup``).

Prints the median and the smallest of ``--repeats`` runs of each, and the machine's load
average before and after (the figures are wall times: on a loaded machine they say so).

Run by hand from the repository root::

    python benchmarks/bench_cli_startup.py [--repeats 7]

The ``dperm`` of this checkout is run (``python -m dperm.cli`` with ``src`` on the path),
with ``DPERM_WARMUP=0`` (no background compilation during the measurement).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dperm.cli", *argv], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"dperm {' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds


def _csv(folder: Path, rows: int = 1000, features: int = 10) -> Path:
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, features)) / np.sqrt(features)
    y = (X @ np.linspace(-1, 1, features) + 0.1 * rng.normal(size=rows) > 0).astype(int)
    path = folder / "data.csv"
    header = ",".join([f"x{i}" for i in range(features)] + ["y"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.6g")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(SRC), DPERM_WARMUP="0")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        data = _csv(Path(tmp))
        commands = {
            "dperm --version": ["--version"],
            "dperm --help": ["--help"],
            "dperm fit (1000 x 10 CSV)": ["fit", str(data), "--target", "y", "--classes", "0,1", "--epsilon", "1",
                                          "--out", str(Path(tmp) / "model.json")],
        }
        _run(commands["dperm fit (1000 x 10 CSV)"], env)  # fills the OS file cache and numba's disk cache
        print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}; load average before {load_before[0]:.2f}")
        print(f"{'command':30s} {'median s':>9s} {'min s':>9s}  target")
        targets = {"dperm --version": 0.3, "dperm --help": 0.3, "dperm fit (1000 x 10 CSV)": 1.5}
        for name, argv in commands.items():
            times = [_run(argv, env) for _ in range(args.repeats)]
            print(f"{name:30s} {statistics.median(times):9.3f} {min(times):9.3f}  < {targets[name]} s")
    print(f"load average after {os.getloadavg()[0]:.2f} (2 cores: above ~1 the figures include waiting)")


if __name__ == "__main__":
    main()
