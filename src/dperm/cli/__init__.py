"""The ``dperm`` command line: demo, bench (table3, scaling), fit, predict, budget, audit,
algorithms, warmup.

Conventions: errors are one line on stderr, ``dperm: error: ...``, with exit status 2 for
bad usage or bad input and 1 for an internal failure (never a traceback); warnings are one
line, ``dperm: warning: ...``. Every output path is checked before any data is read, and
files are written atomically, so a fit (which spends privacy budget) is never lost to a
bad ``--out``. Progress of long work goes to stderr: a live bar on a terminal, otherwise
a line at most every tenth of the work or every 30 seconds.

One module per verb (:mod:`.fit`, :mod:`.predict`, :mod:`.budget`, :mod:`.audit`,
:mod:`.bench`, :mod:`.demo`, :mod:`.algorithms`, :mod:`.warmup`); :mod:`.tables` reads the
tables and the model file; :mod:`._console` holds the errors, the console and the
progress; :mod:`._parser` the parser and :func:`main`; the fit's parts in
:mod:`._declarations`, :mod:`._labels`, :mod:`._model` and :mod:`._private`.

Start-up: importing this package loads only the standard library, the parser and the
constants; a verb's module is imported when that verb runs (``COMMANDS``), and NumPy,
pandas, scikit-learn, dp-accounting, the algorithms and the bench modules inside the
functions that use them, so ``dperm --version`` and ``dperm --help`` answer in a fraction
of a second (benchmarks/bench_cli_startup.py; tests/test_cli_startup.py checks the imports).
"""

from __future__ import annotations

import importlib

from ..exceptions import CLIError
from ._defaults import (  # noqa: F401  (the parser's defaults, public as they were)
    DEFAULT_DELTA, DEMO_ALGORITHMS, DEMO_EPSILONS, MAX_UNDECLARED_CLASSES, PAPER, SCALING_PROBLEMS, SCALING_SIZES,
    TABLE3_DATASETS,
)
from ._parser import COMMANDS, build_parser, main

__all__ = ["main", "build_parser", "CLIError"]


def __getattr__(name: str):
    """A verb's function (``dperm.cli.cmd_fit``, ...), from its module, imported on first use."""
    if name in COMMANDS:
        return getattr(importlib.import_module(f".{COMMANDS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
