"""Rendering of run events with rich. The Console is injected; nothing below the CLI imports this."""

from __future__ import annotations

import sys

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from cursorpilot.events import Outcome, Status
from cursorpilot.detect.snapshot import Snapshot


class ConsoleSink:
    """Mirror the program's screen live with a status line (on a terminal); print answers; summarise."""

    def __init__(self, console: Console, *, quiet: bool = False, mirror: bool | None = None):
        self.console = console
        self.quiet = quiet
        self.wants_screen = (console.is_terminal if mirror is None else mirror) and not quiet
        self._live: Live | None = None

    def _ensure_live(self) -> Live:
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=False, transient=False)
            self._live.start()
        return self._live

    def screen(self, snap: Snapshot, status: Status) -> None:
        last = max((i for i, line in enumerate(snap.lines) if line.strip()), default=0)
        body = Text("\n".join(snap.lines[: last + 1]))
        bar = Text(f" {status.state} · answers {status.answers} · {status.elapsed:5.1f}s {status.detail}", style="reverse")
        live = self._ensure_live()
        live.update(Group(body, bar), refresh=True)

    def _print(self, *args, **kwargs) -> None:
        if self._live is not None:
            self._live.console.print(*args, **kwargs)
        else:
            self.console.print(*args, **kwargs)

    def answer(self, prompt: str, typed: str, source: str) -> None:
        if self.quiet:
            return
        self._print(Text.assemble(("answer ", "bold green"), (repr(typed), "bold"), (f"  [{source}]  ", "cyan"), (prompt[:80], "dim")))

    def note(self, text: str) -> None:
        if not self.quiet:
            self._print(Text(text, style="yellow"))

    def ask_human(self, prompt: str, why: str) -> str | None:
        self._stop_live()
        self.console.print(Text(f"cursor-pilot needs you ({why}). The program shows:", style="bold yellow"))
        self.console.print(Text(prompt))
        self.console.print(Text("Type the answer (reply grammar: text, <enter>, <down>, ...); empty line = Enter; Ctrl-D = give up.", style="dim"))
        try:
            return input("> ")
        except EOFError:
            return None

    def finished(self, outcome: Outcome) -> None:
        self._stop_live()
        if outcome.preview is not None:
            table = Table(title="dry run: nothing was typed", show_lines=False)
            for col in ("step", "kind", "question seen", "would type", "chosen by"):
                table.add_column(col)
            for row in outcome.preview:  # Text cells: screen text such as "[y/n]" is not rich markup
                typed = repr(row["would_send"]) if row["source"] != "not run" else row["would_send"]
                table.add_row(*(Text(str(v)) for v in (row["step"], row["kind"], row["question"], typed, row["source"])))
            self.console.print(table)
        style = "bold green" if outcome.exit_code == 0 else "bold red"
        self.console.print(Text(f"cursor-pilot: {outcome.reason} (exit {outcome.exit_code})", style=style))
        c = outcome.counters
        llm = ""
        if c.get("llm_calls") or c.get("rule_hits"):
            cost = f" · est. cost ${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else ""
            waits = f" · waits: {c['waits']}" if c.get("waits") else ""
            llm = (f"\n  llm calls: {c.get('llm_calls', 0)} · tokens in/out: {c.get('tokens_in', 0)}/{c.get('tokens_out', 0)}"
                   f" · rule hits: {c.get('rule_hits', 0)}{waits}{cost}")
        self.console.print(Text(
            f"  answers: {outcome.answers} · escalations: {outcome.escalations} · program: {outcome.child}{llm}\n"
            f"  transcript: {outcome.transcript}"
        ))

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def error_line(message: str) -> None:
    sys.stderr.write(f"cursor-pilot: error: {message}\n")
