"""What the PTY pilot and its parts hold between two facts, what a part asks the pilot to do, and the pilot as its parts
see it, PURE.

The pilot (pty/pilot.py) sequences its parts: answering.py (an answer's life), quiet.py (quiet screens), turnend.py (an
agent's turn end) and goingon.py (a limit waited out, a stuck turn interrupted). Each part owns its state and reads the
pilot through `View`, which changes nothing; what a part needs done beyond its own state (a question asked, a human
asked, the state machine moved, keys queued, a wake-up) it returns among its effects as one of the wants below, and the
pilot carries it out, in order. So every rule that moves the step lives in one place, the pilot, and each part can be
read alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from cursorpilot.channels.pty.machine import Event, State
from cursorpilot.decide.question import Decision, Question
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes, Write

if TYPE_CHECKING:
    from cursorpilot.channels.pty.facts import PilotConfig, ScreenFacts
    from cursorpilot.decide.deliver import RunCounts, Tally
    from cursorpilot.decide.limits import Limits
    from cursorpilot.decide.turns import Turns
    from cursorpilot.detect.profiles import Profile


# -- held between facts ------------------------------------------------------------------------------------------------
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
    """After an answer: did the program take it? The facts say so (answering.py), never stillness."""

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
class GoOn:
    """An agent that goes on only once the pilot tells it to: a usage limit waited out (`why` limit, `until` its reset),
    or a stuck turn interrupted (`why` stuck). From `until` on, at its composer or its limit dialog, it is told to
    continue (pty/goingon.py)."""

    why: str  # limit | stuck
    until: float
    since: float
    dismissed: bool = False  # its limit dialog was closed: "continue" goes into the composer next


@dataclass(slots=True)
class Look:
    """The screen as the pilot last looked at it, and the state it last recorded of a screen."""

    content: int = -1  # what it showed (a repaint with equal content keeps it)
    echo_off: bool = False  # whether the terminal's echo was off
    modes: Modes = Modes()  # the keys' modes (a decision's, once one came back)
    text: str = ""
    quiet_since: float = 0.0  # since when it had not changed
    last: tuple[str, str | None] | None = None  # the state last recorded, and the rule or prompt that made it

    def saw(self, now: float, c: Classification, facts: ScreenFacts) -> None:
        self.content, self.echo_off, self.text, self.modes = facts.content, facts.echo_off, facts.text.rstrip(), facts.modes
        self.quiet_since = now - facts.quiet_for

    def new_state(self, c: Classification, starting: bool) -> str | None:
        """The screen's state, when it is not the one last recorded (a working screen by its rule, anything else by its
        prompt's identity): `starting` for an agent's idle composer before it was seen working."""
        if c.state == ScreenKind.SETTLING:
            return None
        state = "starting" if c.state == ScreenKind.IDLE and starting else c.state
        current = (state, c.decision[1])
        if current == self.last:
            return None
        self.last = current
        return state


# -- what a part asks the pilot to do ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AskAbout:
    """Ask the decision path about this prompt (`whole`: a screen no rule explains, asked with its record)."""

    c: Classification
    kind: str | None = None
    notes: tuple[str, ...] = ()
    not_taken: str | None = None  # the answer not taken, asked again
    whole: ScreenFacts | None = None


@dataclass(frozen=True, slots=True)
class Escalate:
    """A human is needed, and why (`shown`: what they are shown, when not the prompt block)."""

    c: Classification
    why: str
    kind: str | None = None
    shown: str | None = None


@dataclass(frozen=True, slots=True)
class Go:
    """Move the step's state machine (pty/machine.py)."""

    event: Event
    c: Classification | None = None


@dataclass(frozen=True, slots=True)
class Fail:
    reason: str
    c: Classification | None = None


@dataclass(frozen=True, slots=True)
class Abort:
    code: ExitCode
    reason: str


@dataclass(frozen=True, slots=True)
class Finish:
    """The step is done, and why."""

    reason: str
    c: Classification | None = None


@dataclass(frozen=True, slots=True)
class WakeBy:
    """Look again by then, even if nothing happens."""

    at: float


@dataclass(frozen=True, slots=True)
class Schedule:
    """Queue these keys in the typist (it hands them out as they fall due)."""

    writes: tuple[Write, ...]
    paced: bool = False


@dataclass(frozen=True, slots=True)
class TypeAnswer:
    """Type a decided answer the way its prompt takes it, and watch it taken (answering.py)."""

    c: Classification
    d: Decision
    modes: Modes
    kind: str | None
    secret: bool = False
    prompt: str | None = None  # what was answered, when not the prompt block (a turn end: the agent's last message)


@dataclass(frozen=True, slots=True)
class Working:
    """The screen shows the program at work: the quiet rules judge it (quiet.py), a stuck one is interrupted."""

    c: Classification
    facts: ScreenFacts


@dataclass(frozen=True, slots=True)
class Stuck:
    """No progress sign for stuck_after: interrupted once, then a human (goingon.py)."""

    c: Classification
    still: float
    why: str


@dataclass(frozen=True, slots=True)
class Forget:
    """The prompt answered before under this key is a new question now."""

    key: str


@dataclass(frozen=True, slots=True)
class Watched:
    """Keys of the pilot's own are out (an agent told to go on): watch them taken, as an answer's."""

    watch: Watch


@dataclass(frozen=True, slots=True)
class Waited:
    """The screen asked about was judged WAIT: nobody is asked (quiet.py backs off before it is judged again)."""

    a: Asking
    d: Decision


@dataclass(frozen=True, slots=True)
class EndTurn:
    """The agent stopped: its turn end is judged (the goal check, its last message: turnend.py)."""

    c: Classification


Want = (AskAbout | Escalate | Go | Fail | Abort | Finish | WakeBy | Schedule | TypeAnswer | Working | Stuck | Forget | Watched | Waited
        | EndTurn)


# -- the pilot as its parts see it ----------------------------------------------------------------------------------------
class Answered(Protocol):
    """What the answers left behind, as the parts read it (answering.py's Answers)."""

    @property
    def answered(self) -> Mapping[str, int]: ...  # prompts answered, by key
    @property
    def typed(self) -> Mapping[str, str]: ...  # what was last typed at each (a secret as its mask)
    @property
    def asked_on(self) -> Mapping[str, str]: ...  # the screen's text when each was answered


class View(Protocol):
    """The pilot, read-only (pty/pilot.py says what each means). Its services (tally, turns, limits) are the step's
    counters and ledgers, which a part may tell what it did."""

    @property
    def profile(self) -> Profile: ...
    @property
    def config(self) -> PilotConfig: ...
    @property
    def counts(self) -> RunCounts: ...
    @property
    def state(self) -> State: ...
    @property
    def look(self) -> Look: ...  # the screen at the last look
    @property
    def sent(self) -> bool: ...
    @property
    def answering(self) -> Answered: ...  # what the answers left behind (answering.py)
    @property
    def tally(self) -> Tally: ...
    @property
    def turns(self) -> Turns: ...
    @property
    def limits(self) -> Limits: ...

    def stopped(self, c: Classification) -> bool: ...  # an agent back at its composer: its turn has ended (turnend.py)


# what a clock or a spinner changes by itself: digits, braille and the circle, quadrant and star frames of spinners
TICKS = re.compile(r"[0-9\u2800-\u28ff\u25d0-\u25d3\u25f0-\u25f7\u2596-\u259f\u2722-\u273d\u00b7\u2219\u22c5]")


def steady(text: str) -> str:
    """The text with what a clock or a spinner changes by itself masked: the same question with its clock a second on
    is the same question (pty/view.py counts its quiet so, a WAIT on it holds, a reply chosen meanwhile is not stale)."""
    return TICKS.sub("0", text)


def still_there(c: Classification, current: Classification) -> bool:
    """The prompt asked about is still the one on screen, however its clock ticked (an input's composer counts, idle at
    the same row)."""
    if steady(current.key or "") == steady(c.key or ""):
        return True
    return (c.state == ScreenKind.INPUT and current.state == ScreenKind.IDLE and current.anchor_row == c.anchor_row)
