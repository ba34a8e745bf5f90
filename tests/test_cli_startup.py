"""Start-up of the command line: `dperm --version` and `dperm --help` import nothing heavy
(the timings are in benchmarks/bench_cli_startup.py, not here)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dperm

HEAVY = ("numpy", "pandas", "scipy", "sklearn", "dp_accounting", "matplotlib", "numba", "rich",
         "dperm.algorithms", "dperm.privacy", "dperm.estimators", "dperm.bench.demo", "dperm.bench.scaling", "dperm.bench.table3",
         "dperm.problem", "dperm.audit")

_PROBE = """
import json, sys
from dperm.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def _imported_by(argv):
    env = dict(os.environ, DPERM_WARMUP="0", PYTHONPATH=str(Path(dperm.__file__).parents[1]))
    done = subprocess.run([sys.executable, "-c", _PROBE.format(argv=argv, heavy=HEAVY)], env=env,
                          capture_output=True, text=True, timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["fit", "--help"], ["bench", "scaling", "--help"]])
def test_version_and_help_import_nothing_heavy(argv):
    imported, out = _imported_by(argv)
    assert imported == [], imported
    assert out  # it did answer


def test_the_defaults_copied_into_the_parser_are_the_bench_modules():
    from dperm import cli
    from dperm.bench import demo, scaling

    assert cli.DEMO_ALGORITHMS == tuple(demo.DEFAULT_ALGORITHMS)
    assert cli.DEMO_EPSILONS == tuple(demo.DEFAULT_EPSILONS)
    assert cli.SCALING_SIZES == tuple(scaling.DEFAULT_SIZES)
    assert cli.SCALING_PROBLEMS == tuple(scaling.PROBLEMS)
