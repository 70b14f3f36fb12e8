"""What a step tells the outside world while it runs.

A step calls a Sink; ui.py implements it with rich, tests with a list.
Nothing below the CLI knows how events are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from cursorpilot.channels.contract import Keyboard, Status, StepSink
from cursorpilot.detect.snapshot import Snapshot

if TYPE_CHECKING:
    from cursorpilot.human.asked import Asked


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
    goal: str | None = None  # the last goal check: passed | failed (None: none ran)


class Sink(StepSink, Protocol):
    """What a run tells the outside world: a step's part (channels/contract.py's StepSink: the screen, the answers,
    the notes, the keyboard), and the run's own."""

    def redact_with(self, redact: Callable[[str], str]) -> None: ...  # the run's redaction, for text the sink prints

    # a question put to people (cursorpilot/human): shown with the page's link (a QR code of it for a phone, when it is
    # reachable beyond this machine); typed_here: the terminal is read for the answer; again: why the last one typed
    # here was not taken (the question stays open). The answer itself is read by cursorpilot.human, not by the sink.
    def ask_human(self, asked: Asked, *, link: str | None = None, qr: bool = False, typed_here: bool = False,
                  again: str = "") -> None: ...

    # what the program showed last (scrollback and screen); top: the number of its first row since the program started
    # (the rows that scrolled off before it), when the channel knows it (a screen does, a protocol has no rows)
    def step_ended(self, name: str, text: str, top: int | None = None) -> None: ...

    def finished(self, outcome: Outcome) -> None: ...


class BaseSink:
    """Does nothing: a sink overrides what it shows, and a new event costs the others nothing."""

    wants_screen = False

    def redact_with(self, redact: Callable[[str], str]) -> None:
        pass

    def screen(self, snap: Snapshot, status: Status) -> None:
        pass

    def answer(self, prompt: str, typed: str, source: str, changed: str = "", granted: str = "") -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def ask_human(self, asked: Asked, *, link: str | None = None, qr: bool = False, typed_here: bool = False,
                  again: str = "") -> None:
        pass

    def step_ended(self, name: str, text: str, top: int | None = None) -> None:
        pass

    def finished(self, outcome: Outcome) -> None:
        pass

    def keyboard(self) -> Keyboard | None:
        return None


class NullSink(BaseSink):
    """Collects events; used by tests."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, str, str]] = []
        self.notes: list[str] = []
        self.outcome: Outcome | None = None

    def answer(self, prompt: str, typed: str, source: str, changed: str = "", granted: str = "") -> None:
        self.answers.append((prompt, typed, source))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finished(self, outcome: Outcome) -> None:
        self.outcome = outcome
