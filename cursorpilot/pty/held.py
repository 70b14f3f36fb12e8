"""What the PTY pilot holds between two facts, PURE: the question being decided, the answer being watched (did the
program take it?), the turn end being judged. Declared here, below the pilot and its parts (pty/pilot.py, answering.py,
turnend.py, quiet.py), which all read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cursorpilot.decide.question import Question
from cursorpilot.detect.classifier import Classification


@dataclass(slots=True)
class Asking:
    """A question handed to the decision path, until its decision comes back."""

    token: int
    c: Classification
    content: int
    kind: str | None
    secret: bool = False
    not_taken: str | None = None  # asked again because this answer was not taken (the screen stayed as it was)
    quiet_since: float = 0.0  # when its screen last changed before it was asked


@dataclass(slots=True)
class Watch:
    """After an answer: did the program take it? The facts say so (`_follow_watch`), never stillness."""

    c: Classification  # the prompt as it was answered
    submit: bool
    typed: str  # what was typed (a secret as its mask): the note when the screen stays exactly as it was
    answer: str  # the answer as decided (a secret in clear, here only: never recorded), to tell a repeat
    due: float
    retries: int = 0
    content: int | None = None  # the screen when the last key went out: until it changes, the program has not reacted
    text: str = ""  # ...and its text: a change only in the rows it repaints by itself (Paint) is no reaction


@dataclass(slots=True)
class TurnEnd:
    """An agent that stopped, while its turn end is judged."""

    c: Classification  # its composer, as a field the next message is typed into
    message: str  # its last message (read off the screen: GoalChecked)
    closing: Question | None  # the question its last message asks, if any


@dataclass(slots=True)
class Paint:
    """The rows a program repaints by itself while a question waits (a clock, a spinner beside `Proceed? [y/n]`): seen
    changing between two looks at the same question with no key sent between them, or while the keys typed still sat
    unread in its input. A change there is paint, not the program's answer: the question is the same question, and
    it is not answered again (answering.py, quiet.py)."""

    key: str | None = None  # the question at the last look
    text: str = ""  # ...and the screen then
    keyed: bool = False  # a key went out since the last look
    rows: set[int] = field(default_factory=set)

    def look(self, key: str | None, text: str, unread: int | None) -> None:
        if key is None:
            return  # still rendering: the next reading is compared with the last one
        if key != self.key:
            self.rows = set()
        elif text != self.text and (not self.keyed or (unread or 0) > 0):
            old, new = self.text.split("\n"), text.split("\n")
            self.rows |= {i for i in range(max(len(old), len(new))) if _row(old, i) != _row(new, i)}
        self.key, self.text, self.keyed = key, text, False

    def masked(self, text: str) -> str:
        """The screen without the rows it repaints by itself."""
        return "\n".join("" if i in self.rows else row for i, row in enumerate(text.rstrip().split("\n")))


def _row(rows: list[str], i: int) -> str:
    return rows[i] if i < len(rows) else ""
