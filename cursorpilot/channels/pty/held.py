"""What the PTY pilot holds between two facts, PURE: the question being decided, the answer being watched (did the
program take it?), the turn end being judged. Declared here, below the pilot and its parts (pty/pilot.py, answering.py,
turnend.py, quiet.py), which all read them.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(slots=True)
class TurnEnd:
    """An agent that stopped, while its turn end is judged."""

    c: Classification  # its composer, as a field the next message is typed into
    message: str  # its last message (read off the screen: GoalChecked)
    closing: Question | None  # the question its last message asks, if any


@dataclass(slots=True)
class Resume:
    """An agent that goes on only once the pilot tells it to: a usage limit waited out (`why` limit, `until` its reset),
    or a stuck turn interrupted (`why` stuck). From `until` on, at its composer or its limit dialog, it is told to
    continue (pty/resume.py)."""

    why: str  # limit | stuck
    until: float
    since: float
    dismissed: bool = False  # its limit dialog was closed: "continue" goes into the composer next
