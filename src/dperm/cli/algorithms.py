"""`dperm algorithms`: the catalogue, or one algorithm described."""

from __future__ import annotations

from ..exceptions import CLIError
from ._console import _console, _table


def cmd_algorithms(args) -> int:
    import pandas as pd

    from ..algorithms import list_algorithms

    infos = list_algorithms()
    if args.name:
        chosen = [info for info in infos if info.name == args.name]
        if not chosen:
            raise CLIError(f"no algorithm named {args.name!r}; `dperm algorithms` lists them")
        import textwrap

        row = chosen[0].as_row()
        for key in ("name", "setting", "guarantee", "requires", "paper", "gradient complexity", "summary"):
            if row.get(key):
                print(textwrap.fill(str(row[key]), width=80, initial_indent=f"{key}: ", subsequent_indent="    "))
        return 0
    frame = pd.DataFrame([info.as_row() for info in infos])[["name", "guarantee", "setting"]]
    _console().print(_table(frame, "dperm algorithm catalogue (details: dperm algorithms NAME)"))
    return 0
