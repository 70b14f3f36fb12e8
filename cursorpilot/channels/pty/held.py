"""What a PTY step holds, PURE: its whole state in one place you can print (`StepState`), and the records it is made of.

The pilot (pty/pilot.py) sequences a step; its parts are functions of this state: asking.py (the question being
decided), answering.py (an answer's life), turnend.py (an agent's turn end), quiet.py (quiet screens, a stuck turn
interrupted) and goingon.py (an agent told to go on). Each takes the state, the time and what the screen showed, changes
the state and returns the pilot's own effects (pty/facts.py); the state machine's moves they share are step.py's. No
part holds the pilot, and nothing routes a part's request to another: a part calls the part below it (step.py, then
asking, answering, turnend, quiet, goingon, each importing only those before it). Each part owns one record below and
writes no other, but for the few step-wide rules tests/unit/test_step_state.py names (an answer typed restarts the WAIT
backoff, say); it reads any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.pty.typist import Typist
from cursorpilot.decide.deliver import RunCounts, Tally
from cursorpilot.decide.limits import Limits
from cursorpilot.decide.question import Question
from cursorpilot.decide.turns import Turns
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes

if TYPE_CHECKING:
    from cursorpilot.channels.pty.facts import PilotConfig, ScreenFacts
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
    answer: str = field(repr=False)  # the answer as decided (a secret in clear, here only: never recorded nor printed), to tell a repeat
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


# -- each part's own records -------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Questions:
    """The question being decided (asking.py)."""

    asking: Asking | None = None  # the question being decided, until its decision comes back
    token: int = 0
    early_miss: dict[str, float] = field(default_factory=dict)  # rules-only misses on a screen not yet settled: asked again then
    judged_rec: str | None = None  # the screen no rule explains last recorded as judged (its key)


@dataclass(slots=True)
class Answers:
    """What the answers left behind, and the answer being watched (answering.py)."""

    watch: Watch | None = None  # the answer being watched: did the program take it?
    answered: dict[str, int] = field(default_factory=dict)  # prompts answered, by key
    typed: dict[str, str] = field(default_factory=dict)  # what was last typed at each prompt (a secret as its mask)
    asked_on: dict[str, str] = field(default_factory=dict)  # the screen's text when each prompt was answered
    answered_to: int | None = None  # the last row of the question answered last: rows down to it are history

    def forget(self) -> None:
        """Everything answered before (a person had the keyboard: they may have answered, or changed everything)."""
        self.watch, self.answered_to = None, None
        for memory in (self.answered, self.typed, self.asked_on):
            memory.clear()


@dataclass(slots=True)
class Quiet:
    """Quiet screens (quiet.py): those judged WAIT (and how many in a row), the kernel's word on a quiet program, a
    stuck agent's interrupts."""

    waited: dict[str, float] = field(default_factory=dict)  # screens no rule explains judged WAIT, and when
    waits_in_a_row: int = 0
    busy_since: float | None = None  # the kernel has seen the quiet program busy since then (recorded once)
    stopped_since: float | None = None  # the kernel has said the program is stopped since then
    idle_said: int | None = None  # the screen (its content) the kernel's "busy" was last overruled on, as idle

    def forget(self) -> None:
        self.waited.clear()
        self.busy_since, self.waits_in_a_row = None, 0


@dataclass(slots=True)
class TurnEnds:
    """An agent's turn (turnend.py): whether it worked, was given its task and not seen working, the end being judged."""

    starting: bool = False  # given its task, the agent has not been seen working yet
    starting_since: float | None = None
    worked: bool = False  # a working marker was seen, or we answered something
    turn: TurnEnd | None = None  # the turn end being judged


@dataclass(slots=True)
class GoingOn:
    """An agent that goes on once told to (goingon.py, quiet.py's stuck turn)."""

    waiting: GoOn | None = None  # a limit's wait, or a stuck agent's interrupt, until it is told to go on
    nudged: int = 0  # a stuck agent interrupted and told to continue, in this step
    went_on: str | None = None  # the key of the limit screen the agent was last told to go on from

    @property
    def stuck(self) -> bool:
        """A stuck agent was interrupted and is not back yet."""
        return self.waiting is not None and self.waiting.why == "stuck"


# -- the step's state --------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class StepState:
    """Everything a PTY step holds between two facts. `config` and `counts` are what it was given (the run's counters
    are shared with the run's other steps); tally, turns and limits are its ledgers. Printed, it is the step as it is
    (`str(state)`, the config left out)."""

    config: PilotConfig = field(repr=False)  # (its secrets never printed)
    counts: RunCounts
    state: State = State.INIT  # the state machine's (pty/machine.py)
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    sent: bool = False  # the step's `send` was typed (or there is none)
    taken: bool = False  # a person has the keyboard (cursor-pilot watch --take): nothing is typed or asked
    wake: float | None = None  # look again by then, even if nothing happens
    look: Look = field(default_factory=Look)  # the screen at the last look
    questions: Questions = field(default_factory=Questions)
    answering: Answers = field(default_factory=Answers)
    quiet: Quiet = field(default_factory=Quiet)
    turn_ends: TurnEnds = field(default_factory=TurnEnds)
    going_on: GoingOn = field(default_factory=GoingOn)
    typist: Typist = field(default_factory=Typist)  # the keys queued, and when each goes (typist.py)
    tally: Tally = field(init=False)
    turns: Turns = field(init=False)
    limits: Limits = field(init=False)

    def __post_init__(self) -> None:
        self.sent = self.config.send is None
        self.turn_ends.starting = self.config.started_with_task
        self.tally = Tally(self.counts, self.config.max_answers)
        self.turns = Turns(self.config.turns)
        self.limits = Limits(self.config.limits)

    @property
    def profile(self) -> Profile:
        return self.config.profile

    def __str__(self) -> str:
        return "\n".join(f"{f.name}: {getattr(self, f.name)!r}" for f in fields(self) if f.name not in ("config", "counts"))

    def wake_by(self, t: float) -> None:
        self.wake = t if self.wake is None else min(self.wake, t)

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
