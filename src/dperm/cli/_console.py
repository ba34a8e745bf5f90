"""The command line's output: one-line errors and warnings, rich tables, progress of long
work on stderr (a live bar on a terminal; otherwise a line at most every tenth of the work
or every 30 seconds)."""

from __future__ import annotations

import math
import os
import sys
import time


def _console():
    from rich.console import Console

    return Console()


def _table(frame, title: str, floats: dict | None = None):
    from rich.table import Table

    table = Table(title=title)
    for i, column in enumerate(frame.columns):
        table.add_column(str(column), justify="right" if frame[column].dtype.kind in "fi" else "left",
                         no_wrap=i == 0)
    for _, row in frame.iterrows():
        cells = []
        for column in frame.columns:
            value = row[column]
            if isinstance(value, float):
                fmt = (floats or {}).get(column, ".4g")
                cells.append("non-private" if math.isinf(value) else format(value, fmt))
            else:
                cells.append(str(value))
        table.add_row(*cells)
    return table


class _Progress:
    """Progress of long work on stderr: a live bar when stderr is a terminal; otherwise a
    line at most every tenth of the work (when the total is known) or every
    ``PIPED_SECONDS`` seconds, and the last unit's, so a log file or a CI job shows the work
    advancing without thousands of lines."""

    PIPED_SECONDS = 30.0

    def __init__(self, description: str, total: int | None = None):
        self.description, self.total, self.done = description, total, 0
        self._bar = None
        self._start = time.monotonic()
        self._last_line = None  # (time, tenth of the work) of the last line written

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                 transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def advance(self) -> None:
        self.update(self.done + 1)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total)
            return
        now = time.monotonic()
        tenth = None if not self.total else (10 * done) // self.total
        finished = self.total is not None and done >= self.total
        if self._last_line is not None and not finished:
            last_time, last_tenth = self._last_line
            if now - last_time < self.PIPED_SECONDS and (tenth is None or tenth <= last_tenth):
                return
        self._last_line = (now, tenth)
        of = "" if self.total is None else f"/{self.total}"
        what = "to run" if done == 0 else "done"
        print(f"dperm: {self.description}: {done}{of} {what} ({now - self._start:.0f} s)",
              file=sys.stderr, flush=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line, without the internal file and source line."""
    print(f"dperm: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _budget_exceeded(error: BaseException) -> bool:
    """Whether ``error`` is a BudgetExceededError (looked up only if the privacy layer was
    imported: it cannot have been raised otherwise, and start-up stays light)."""
    budget = sys.modules.get("dperm.privacy.budget")
    return budget is not None and isinstance(error, budget.BudgetExceededError)


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of a
    closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _error(message: str):
    """A CLIError (bad input: one line, exit status 2)."""
    from ..exceptions import CLIError

    return CLIError(message)
