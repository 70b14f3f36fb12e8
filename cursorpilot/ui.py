"""Rendering of run events with rich. The Console is injected; nothing below the CLI imports this."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.events import BaseSink, Outcome, Status
from cursorpilot.records.answerer import Answerer, Source
from cursorpilot.records.pastruns import PastRun
from cursorpilot.records.secret import is_masked

if TYPE_CHECKING:
    from cursorpilot.human.asked import Asked

CHOSEN_BY = {Answerer.RULES: "rules", Answerer.POLICY: "the deny policy", Answerer.PERSON: "you", Answerer.PLAN: "the plan",
             Answerer.TIMEOUT: "--on-human-timeout"}  # else a model (the script provider's replies: "the script")


def chosen_by(source: str) -> str:
    """Who chose an answer, as the run's summary counts them."""
    by = Source.read(source)
    if by.kind is Answerer.MODEL and (by.detail or "").split(":")[0] == "script":
        return "the script"
    return CHOSEN_BY.get(by.kind, "the model")
LOG_TAIL = 200  # at most this many of a step's last lines go to a log at its end (all of them are in session.raw)
TICKS_PER_SECOND = 2  # the live view is drawn again this often by itself, so that its clock runs while nothing changes


class StatusBar:
    """The status line under the live view, its clock read when it is drawn: a program that worked silently drew
    nothing, and the clock stood at 0.0s (the read loop hands a status only with a screen that changed)."""

    def __init__(self, status: Status | None, handed_at: float, now: Callable[[], float]):
        self.status, self.handed_at, self.now = status, handed_at, now

    def __rich__(self) -> Text:
        s = self.status
        if s is None:
            return Text("")
        elapsed = s.elapsed + max(0.0, self.now() - self.handed_at)
        return Text(f" {s.state} · answers {s.answers} · {elapsed:5.1f}s {s.detail}", style="reverse", no_wrap=True,
                    overflow="ellipsis")


class ConsoleSink(BaseSink):
    """On a terminal: the program's screen mirrored live, cropped to the terminal (the program keeps its own
    --cols/--rows), under a status line. Elsewhere (a CI log, a file): the program's new lines are printed at each
    answer, escalation and step end, so the log explains itself; the read loop only hands over snapshots it rendered
    anyway, and nothing is formatted until one of those events. --quiet: the summary only."""

    def __init__(self, console: Console, *, quiet: bool = False, mirror: bool | None = None,
                 now: Callable[[], float] = time.monotonic):
        self.console = console
        self._now = now  # the status line's clock (StatusBar)
        self._status_at = 0.0  # when the status was handed over
        self.quiet = quiet
        self.mirror = (console.is_terminal if mirror is None else mirror) and not quiet
        self.wants_screen = not quiet
        self._live: Live | None = None
        self._snap: Snapshot | None = None  # the screen last handed over (kept as it is: a log reads it only at an event)
        self._status: Status | None = None
        self._log = ScreenLog()  # not on a terminal: what was printed of the program
        self._chosen_by: dict[str, int] = {}  # who chose the answers: rules, the deny policy, the model, you
        self._redact: Callable[[str], str] = lambda s: s
        self._at_prompt = False  # the "> " of a question put to people was the last thing written (no newline yet)

    def redact_with(self, redact: Callable[[str], str]) -> None:
        self._redact = redact

    def _ensure_live(self) -> Live:
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=True, refresh_per_second=TICKS_PER_SECOND, transient=False)
            self._live.start()
        return self._live

    def screen(self, snap: Snapshot, status: Status) -> None:
        self._snap, self._status, self._status_at = snap, status, self._now()
        if self.mirror:
            self._mirror(_live_region(snap))

    def _mirror(self, lines: list[str]) -> None:
        """The live region's last rows that fit the terminal, each cropped to its width: a 120-column program on an
        80-column terminal is cut at the edge, not wrapped into a screen that no longer looks like it."""
        height = max(1, self.console.height - 2)  # the status line, and a row for the cursor
        body = Text("\n".join(lines[-height:]), no_wrap=True, overflow="ellipsis")
        self._ensure_live().update(Group(body, StatusBar(self._status, self._status_at, self._now)), refresh=True)

    def _print(self, *args, **kwargs) -> None:
        if self._live is not None:
            self._live.console.print(*args, **kwargs)
        else:
            self.console.print(*args, **kwargs)

    def _log_screen(self, text: str | None = None, top: int | None = None) -> None:
        """Not on a terminal: print the rows the program showed since the last time (the live region, or at a step's
        end its whole text, whose first row is row `top` when the channel knows it), each once. The rows left out are
        counted by their numbers where they are known (`seq 1 300000` left out 299,800, not the "1839+" of its
        scrollback), else as at least so many."""
        if self.mirror or self.quiet:
            return
        lines = (text.split("\n") if text else []) if text is not None else []
        exact = text is None or top is not None
        if text is None:
            snap = self._snap
            skipped, fresh = self._log.fresh(_live_region(snap), snap.scrolled) if snap is not None else (0, [])
        elif top is not None:
            skipped, fresh = self._log.fresh(lines, top)
        else:
            skipped, fresh = 0, self._log.fresh_text(lines)
        if len(fresh) > LOG_TAIL:
            skipped, fresh = skipped + len(fresh) - LOG_TAIL, fresh[-LOG_TAIL:]
        if skipped:
            self.console.print(Text(f"│ … {skipped:,}{'' if exact else '+'} rows above were not shown (session.raw has them all)",
                                    style="dim"))
        if fresh:
            self.console.print(Text("\n".join("│ " + line for line in self._redact("\n".join(fresh)).split("\n")), style="dim"),
                               soft_wrap=True)

    def answer(self, prompt: str, typed: str, source: str, changed: str = "", granted: str = "") -> None:
        who = chosen_by(source)
        self._chosen_by[who] = self._chosen_by.get(who, 0) + 1
        if self.quiet:
            return
        self._log_screen()
        question = " ".join(self._redact(prompt).split())
        question = question if len(question) <= 80 else question[:79] + "…"
        shown = typed if is_masked(typed) else repr(self._redact(typed))  # a secret comes masked: its length and a hash
        self._print(Text.assemble(("answer ", "bold green"), (shown, "bold"), (f"  [{source}]  ", "cyan"), (question, "dim"),
                                  no_wrap=True, overflow="ellipsis"))
        if changed:  # the deny policy overrode the answer chosen: said where the answer is, never only in the transcript
            self._print(Text(f"  changed by the deny policy: {self._redact(changed)}", style="bold yellow"))
        if granted:  # a yes the deny policy weighed went through: by whose words, said as a refusal is
            self._print(Text(f"  {self._redact(granted)}", style="yellow"))

    def note(self, text: str) -> None:
        asked_here = self._at_prompt  # a question's "> " waits here: what became of it is said, even with --quiet
        if asked_here:
            self._at_prompt = False
            self.console.file.write("\n")
        if not self.quiet or asked_here:
            self._log_screen()
            self._print(Text(text, style="yellow"))

    def step_ended(self, name: str, text: str, top: int | None = None) -> None:
        lines = text.split("\n") if text else []
        if self.mirror and self._live is not None and lines:
            self._mirror(lines[-(self.console.height or 24):])  # what came after the last mirrored frame (the exit drain)
        self._log_screen(text, top)
        self._snap, self._status, self._log = None, None, ScreenLog()  # the next step is another program

    def ask_human(self, asked: Asked, *, link: str | None = None, qr: bool = False, typed_here: bool = False,
                  again: str = "") -> None:
        """A question put to people (cursorpilot/human reads the answers): what the program shows, the page's link
        (and a QR code of it on a terminal, when a phone can reach it), how to answer here. Printed even with --quiet:
        someone is needed."""
        self._log_screen()
        self._stop_live()
        self._at_prompt = False  # a line typed here ended with Enter
        if again:
            self.console.print(Text(f"not taken: {again}. Type another answer:", style="yellow"))
        else:
            self.console.print(Text(f"cursor-pilot needs you ({asked.why}). The program shows:", style="bold yellow"))
            self.console.print(Text(asked.prompt))
            if asked.choices:
                self.console.print(Text("options: " + " · ".join(asked.choices), style="cyan"))
            if link:
                self.console.print(Text.assemble(("answer on the decision page: ", "bold"), (link, "bold cyan")), soft_wrap=True)
                if qr and self.console.is_terminal:
                    from cursorpilot.human.qr import drawn

                    self.console.print(Text(drawn(link)), soft_wrap=True)
            if typed_here:
                hidden = " It is a secret: not shown as you type." if asked.secret else ""
                self.console.print(Text(("Or type" if link else "Type") + " the answer here (reply grammar: text, <enter>, <down>, "
                                        "...); empty line = Enter; Ctrl-D = give up." + hidden, style="dim"))
            elif link:
                self.console.print(Text("Nobody can type here (stdin is not a terminal): answer on the page.", style="dim"))
        if typed_here:
            self.console.file.write("> ")
            self.console.file.flush()
            self._at_prompt = True

    def finished(self, outcome: Outcome) -> None:
        self._stop_live()
        if outcome.preview is not None:
            table = Table(title="dry run: nothing was typed (each program ran up to its first question)", show_lines=False)
            for col in ("step", "kind", "question seen", "would type", "chosen by"):
                table.add_column(col)
            for row in outcome.preview:  # Text cells: screen text such as "[y/n]" is not rich markup
                typed = repr(row["would_send"]) if row["source"] != "not run" else row["would_send"]
                table.add_row(*(Text(str(v)) for v in (row["step"], row["kind"], row["question"], typed, row["source"])))
            self.console.print(table, soft_wrap=False)  # its cells wrap within it, even in a log
        style = "bold green" if outcome.exit_code == 0 else "bold red"
        self.console.print(Text(f"cursor-pilot: {outcome.reason} (exit {outcome.exit_code})", style=style))
        c = outcome.counters
        llm = ""
        if c.get("llm_calls"):  # rules answered before the model was asked: their hits beside its calls
            cost = f" · est. cost ${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else ""
            waits = f" · waits: {c['waits']}" if c.get("waits") else ""
            llm = (f"\n  llm calls: {c.get('llm_calls', 0)} · tokens in/out: {c.get('tokens_in', 0)}/{c.get('tokens_out', 0)}{_cached(c)}"
                   f" · rule hits: {c.get('rule_hits', 0)}{waits}{cost}")
        turns = f" · turns: {c['turns']}" if c.get("turns") else ""  # an agent's turn ends judged (docs/turns.md)
        goal = f" · goal check: {outcome.goal}" if outcome.goal else ""
        goal += f" · changed by the deny policy: {c['policy_changed']}" if c.get("policy_changed") else ""
        goal += f" · granted by your words: {c['policy_granted']}" if c.get("policy_granted") else ""
        goal += f" · usage limits waited out: {c['limit_waits']} ({c.get('limit_wait_s', 0)}s)" if c.get("limit_waits") else ""
        if c.get("cascade_questions"):  # --escalate-to: the share the first (local) model answered
            llm += f"\n  cascade: {c.get('cascade_local', 0)} of {c['cascade_questions']} questions answered by the first model"
        self.console.print(Text(
            f"  answers: {outcome.answers}{self._by_whom(outcome.answers)} · escalations: {outcome.escalations}{turns}{goal}"
            f" · program: {outcome.child}{llm}\n  transcript: {outcome.transcript}"
        ))

    def _by_whom(self, answers: int) -> str:
        """' (4 by rules, 1 by the deny policy)': who chose this session's answers, when they are all of the run's."""
        if not answers or sum(self._chosen_by.values()) != answers:
            return ""  # a resumed run: earlier sessions' answers are counted, not seen here
        return " (" + ", ".join(f"{n} by {who}" for who, n in self._chosen_by.items()) + ")"

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _cached(counters: dict) -> str:
    """The prompt tokens the model's server read from its cache, of those sent, when it said any."""
    cached = counters.get("tokens_cached")
    return f" (cached {cached})" if isinstance(cached, int) and cached > 0 else ""


def _live_region(snap: Snapshot) -> list[str]:
    """The screen's rows down to its last non-blank one."""
    last = max((i for i, line in enumerate(snap.lines) if line.strip()), default=0)
    return list(snap.lines[: last + 1])


def _when(iso: str) -> str:
    return iso.replace("T", " ")[:19] + "Z" if iso else ""


def runs_table(console: Console, runs: list[PastRun], root: str) -> None:
    table = Table(box=None, pad_edge=False)
    for col in ("run", "started", "status", "exit", "answers", "escalations", "program", "folder"):
        table.add_column(col, no_wrap=col != "program", max_width=60 if col == "program" else None)
    for r in runs:
        m = r.manifest
        table.add_row(*(Text(str(v)) for v in (r.folder.name, _when(m.created), r.status, "" if m.exit_code is None else m.exit_code,
                                                m.counters.get("answers", 0), m.counters.get("escalations", 0), r.what,
                                                _folder(r.folder))))
    wide = Console(width=max(console.width, 400), color_system=None)  # a folder is never cut: it is what you copy
    with wide.capture() as captured:
        wide.print(table)
    console.file.write(f"runs in {root}\n" + "\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n")


def _folder(path: Path) -> str:
    """A run's folder as short as it reads: from the working directory when it is under it, from ~ when under home."""
    full = path.resolve()
    for base, shown in ((Path.cwd(), "."), (Path.home(), "~")):
        if full.is_relative_to(base) and str(base) != "/":
            return f"{shown}/{full.relative_to(base)}"
    return str(full)


def run_summary(console: Console, r: PastRun) -> None:
    """One run, as its summary said when it ended, and what to do with it next."""
    m, c = r.manifest, r.manifest.counters
    lines = [
        f"run {m.run_id}  ({r.folder})",
        f"  program: {r.what}",
        f"  started {_when(m.created)}, last written {_when(m.updated)}" + (f", resumed {m.resumes}x" if m.resumes else ""),
        f"  status: {r.status}" + ("" if m.exit_code is None else f", exit {m.exit_code}") + (f": {m.reason}" if m.reason else ""),
    ]
    for i, step in enumerate(m.steps, 1):
        last = step.attempts[-1] if step.attempts else None
        ended = f" (exit code {last.exit_code})" if last and last.exit_code is not None else ""
        why = f": {last.reason}" if last and last.reason and last.reason != step.status else ""  # not "interrupted: interrupted"
        lines.append(f"  step {i} {step.name} [{step.kind}]: {step.status}{ended}{why}")
    cost = f" · est. cost ${c['cost_usd']:.4f}" if isinstance(c.get("cost_usd"), (int, float)) else ""
    lines.append(f"  answers: {c.get('answers', 0)} · escalations: {c.get('escalations', 0)} · rule hits: {c.get('rule_hits', 0)}"
                 f" · llm calls: {c.get('llm_calls', 0)} · tokens in/out: {c.get('tokens_in', 0)}/{c.get('tokens_out', 0)}{_cached(c)}{cost}")
    lines += [f"  deny policy: {line}" for line in r.guarded()]  # every weighed yes, refused or granted, by whose words
    lines.append(f"  transcript: {r.folder / 'transcript.jsonl'}")
    cast = r.folder / "session.cast"
    if cast.exists():
        lines.append(f"  replay: asciinema play {cast}")
    if m.status != "completed":
        lines.append(f"  continue: cursor-pilot run --resume {r.folder / 'manifest.json'}")
    console.print(Text("\n".join(lines)), soft_wrap=not console.is_terminal)  # a log keeps each line whole


def error_line(message: str) -> None:
    sys.stderr.write(f"cursor-pilot: error: {message}\n")


# What a log (CI, a file: no terminal to mirror on) shows of a program: each screen row once, when it is new or has
# changed, at the moments the log speaks (an answer, an escalation, the step's end). Pure: rows in, rows to print out.
#
# A row is placed by its position, not by its text: pdb prints `(Pdb)` again and again, and each one is a new row.
# The screen's `scrolled` count gives every row an absolute number; a row whose number was printed before is printed
# again only if it changed (an Ink dialog redrawn in place), not if an answer was merely typed onto it.
@dataclass(slots=True)
class ScreenLog:
    rows: list[str] = field(default_factory=list)  # the rows last printed, top row first
    top: int = 0  # the absolute number of rows[0]

    def fresh(self, lines: list[str], top: int) -> tuple[int, list[str]]:
        """(rows that scrolled past unseen since the last print, the rows to print) for a screen whose row 0 is
        absolute row `top`; the screen becomes what was printed."""
        end = self.top + len(self.rows)  # the first absolute row never printed
        skipped = max(0, top - end)
        out = [line for i, line in enumerate(lines) if self._changed(top + i, line)]
        self.rows, self.top = list(lines), top
        return skipped, out

    def fresh_text(self, lines: list[str]) -> list[str]:
        """The rows of a step's whole text (scrollback and screen) not printed yet. The text carries no positions: it
        is placed by finding the printed rows in it from their first non-blank one, searched from the end (the
        longest run of them first). Not found: the screen was redrawn entirely, and all of it is new."""
        first = next((i for i, row in enumerate(self.rows) if row.strip()), None)
        if first is None:
            return lines
        for k in range(len(self.rows) - first, 0, -1):
            head = self.rows[first:first + k]
            at = next((i for i in range(len(lines) - k, -1, -1) if lines[i:i + k] == head), None)
            if at is not None:
                start = at - first  # where the printed rows' top is in the text (before it, when it began with blanks)
                return self.fresh([""] * -start + lines if start < 0 else lines[start:], self.top)[1]
        return lines

    def _changed(self, row: int, line: str) -> bool:
        i = row - self.top
        if not 0 <= i < len(self.rows):
            return i >= len(self.rows)  # below what was printed: new; above it: printed before (or scrolled past)
        old = self.rows[i]
        return line != old and not (old.strip() and line.startswith(old))  # an answer typed onto a prompt is no news
