"""`dperm budget`: create a ledger of a total privacy budget, or show what it has spent; the
ledger file that `dperm fit --accountant` charges."""

from __future__ import annotations

import json
import os

from .._files import check_output_file
from ..exceptions import CLIError
from ._console import _one_line


def _save_ledger(ledger, path: str) -> None:
    """``ledger.save(path)``; an error names ``path``, not the temporary file of the save."""
    try:
        ledger.save(path)
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None


def _ledger_file_class():
    """A BudgetAccountant that writes its ledger file at every charge (made on first use:
    the privacy layer is not imported at start-up)."""
    from ..privacy.budget import BudgetAccountant

    class LedgerFile(BudgetAccountant):
        """Saved to ``path`` (when set) as soon as a charge is recorded, before the mechanism
        runs on the data: a fit that fails after its charge still counts as spent."""

        path = None
        _fit_events = None  # the events of the fit being charged as one entry (begin_fit)

        def begin_fit(self, label: str) -> None:
            """Record the charges until end_fit as ONE charge, the exact composition of
            their events, grown at each charge (each still recorded, and the file saved,
            before its step reads the data)."""
            self._fit_events, self._fit_label = [], label

        def end_fit(self) -> None:
            self._fit_events = None

        def charge(self, event, label: str = ""):
            if self._fit_events is None:
                spent = super().charge(event, label)
            else:
                from ..privacy.events import composed

                # a single process charges here (the ledger file is locked by cmd_fit)
                previous = (self._events.pop(), self._labels.pop()) if self._fit_events else None
                try:
                    spent = super().charge(composed(self._fit_events + [event]), self._fit_label)
                except BaseException:
                    if previous is not None:  # refused: the entry stays what it was
                        self._events.append(previous[0])
                        self._labels.append(previous[1])
                        self._spent_epsilon = self._composed_epsilon(self._events)
                    raise
                self._fit_events.append(event)
            if self.path is not None:
                _save_ledger(self, self.path)
            return spent

    return LedgerFile


def _load_ledger(path: str, *, saving: bool = False):
    """The BudgetAccountant of a ledger file written by `dperm budget` (one line if absent);
    ``saving``: one that writes the file at every charge."""
    from ..privacy.budget import BudgetAccountant

    if not os.path.exists(path):
        raise CLIError(f"no ledger {path!r}; create one with: dperm budget {path} --epsilon E --delta D")
    try:
        ledger = (_ledger_file_class() if saving else BudgetAccountant).load(path)
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as error:
        raise CLIError(f"{path!r} is not a dperm ledger ({_one_line(error)})") from None
    if saving:
        ledger.path = path
    return ledger


def cmd_budget(args) -> int:
    """Create a ledger (a total budget that fits are charged to), or show what it has spent."""
    from ..privacy.budget import BudgetAccountant

    if args.epsilon is not None:
        if os.path.exists(args.ledger):
            raise CLIError(f"{args.ledger!r} exists; a ledger is created once (remove it to start over)")
        check_output_file(args.ledger)
        _save_ledger(BudgetAccountant(args.epsilon, args.delta), args.ledger)
        print(f"ledger {args.ledger} created: total epsilon={args.epsilon:g}, delta={args.delta:g}")
        return 0
    accountant = _load_ledger(args.ledger)
    spent = accountant.spent
    print(f"ledger {args.ledger}: total epsilon={accountant.total.epsilon:g}, delta={accountant.total.delta:g}; "
          f"{len(accountant.events)} fit(s) charged; spent epsilon="
          f"{spent.epsilon if spent else 0.0:.6g} (composed exactly at delta={accountant.total.delta:g}); "
          f"remaining epsilon={accountant.remaining_epsilon:.6g}")
    return 0
