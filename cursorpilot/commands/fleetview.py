"""What a person watching a fleet sees: on a terminal, the fleet's table live (rich) under one line per event that
matters (a task started, asked a person, ended); elsewhere (CI, a pipe) those lines alone. `fleet status` shows the
same table, read from the fleet's manifest."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from cursorpilot.fleet.manifest import FleetState
from cursorpilot.fleet.report import COLUMNS, figures, totals

STYLE = {"done": "green", "failed": "red", "needs-person": "yellow", "limit": "yellow", "interrupted": "magenta", "killed": "red",
         "waiting": "bold yellow", "running": "cyan", "pending": "dim"}


def table(state: FleetState) -> Table:
    t = Table(title=f"fleet {state.name}: {state.status}" + (f" (exit {state.exit_code})" if state.exit_code is not None else ""),
              caption=" · ".join(f"{k} {v}" for k, v in totals(state).items()))
    for c in COLUMNS[:-1]:
        t.add_column(c, no_wrap=c in ("task", "status", "branch"))
    for row in state.rows:
        cells = figures(row)
        t.add_row(*(Text(cells[c], style=STYLE.get(row.status, "") if c == "status" else "") for c in COLUMNS[:-1]))
    return t


class LineView:
    """Not a terminal: a line per event, no table."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(width=160)

    def say(self, text: str) -> None:
        self.console.print(Text(text), soft_wrap=True)

    def update(self, state: FleetState) -> None:
        pass

    def close(self) -> None:
        pass


class LiveView(LineView):
    """A terminal: the table kept live at the bottom, the event lines printed above it."""

    def __init__(self, console: Console | None = None):
        super().__init__(console or Console())
        self.live: Live | None = None

    def update(self, state: FleetState) -> None:
        if self.live is None:
            self.live = Live(table(state), console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
        else:
            self.live.update(table(state))

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def make_view(tty: bool) -> LineView:
    return LiveView() if tty else LineView()


def watch(folder: Path, live: bool) -> int:
    """`fleet status`: the table, kept live on a terminal while the fleet runs."""
    from cursorpilot.fleet import manifest

    console = Console() if live else Console(width=200)
    state = manifest.read(folder)
    if not live or state.status != "running":
        console.print(table(state))
        return 0
    try:
        with Live(table(state), console=console, refresh_per_second=2) as view:
            while state.status == "running":
                time.sleep(0.5)
                state = manifest.read(folder)
                view.update(table(state))
    except KeyboardInterrupt:
        pass
    return 0
