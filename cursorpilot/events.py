"""What a step tells the outside world while it runs.

A step calls a Sink; ui.py implements it with rich, tests with a list.
Nothing below the CLI knows how events are shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from cursorpilot.detect.snapshot import Snapshot


@dataclass(slots=True, frozen=True)
class Status:
    state: str
    answers: int
    elapsed: float
    detail: str = ""


@dataclass(slots=True)
class Outcome:
    exit_code: int
    reason: str
    answers: int = 0
    escalations: int = 0
    transcript: str = ""
    log_dir: str = ""
    child: str = ""  # how the program ended, e.g. "exit code 0"
    counters: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    preview: list[dict] | None = None  # dry run: one row per step
    manifest: str = ""


class Sink(Protocol):
    wants_screen: bool

    def screen(self, snap: Snapshot, status: Status) -> None: ...

    def answer(self, prompt: str, typed: str, source: str) -> None: ...

    def note(self, text: str) -> None: ...

    def ask_human(self, prompt: str, why: str) -> str | None: ...

    def finished(self, outcome: Outcome) -> None: ...


class NullSink:
    """Collects events; used by tests and --quiet wiring."""

    wants_screen = False

    def __init__(self) -> None:
        self.answers: list[tuple[str, str, str]] = []
        self.notes: list[str] = []
        self.outcome: Outcome | None = None

    def screen(self, snap: Snapshot, status: Status) -> None:  # pragma: no cover - not wanted
        pass

    def answer(self, prompt: str, typed: str, source: str) -> None:
        self.answers.append((prompt, typed, source))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def ask_human(self, prompt: str, why: str) -> str | None:
        return None

    def finished(self, outcome: Outcome) -> None:
        self.outcome = outcome
