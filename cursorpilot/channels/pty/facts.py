"""What the PTY pilot (pty/pilot.py) is told and what it asks for: PURE data, like acp/facts.py for the ACP pilot.

The loop (pty/loop.py) turns a screen, a decision, a key falling due, a finished write, the program's exit into these
facts (`Pilot.handle(now, fact)`) and carries the effects out: records, questions for the decision path, bytes to write,
the end of the program. No callbacks either way: what the pilot needs read off the screen comes in a fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from cursorpilot.decide.deliver import Delivered, Record, Tell
from cursorpilot.decide.limits import LimitConfig
from cursorpilot.decide.question import Decision, Question
from cursorpilot.decide.turns import CheckGoal, TurnConfig, TurnFacts
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import Profile
from cursorpilot.keys import Modes, Write
from cursorpilot.channels.pty.typist import KeysOut, KeyView, Send


# -- effects -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ask:
    """Decide this prompt (deny policy, rules, provider). The decision comes back with `decided(token, ...)`."""

    token: int
    c: Classification
    kind: str | None = None  # Kind.UNDECIDED for a quiet screen no rule explains; Kind.TURN_END for an agent that stopped
    secret: bool = False  # what is typed here is a secret (echo off, or the prompt asks for a password)
    question: Question | None = None  # a turn end's question, built here (the loop adds the screen)
    notes: tuple[str, ...] = ()  # facts for the judge: "'y' was typed here already, and the screen did not change"


@dataclass(frozen=True, slots=True)
class AskHuman:
    token: int
    c: Classification
    why: str
    secret: bool = False  # the answer is a secret: not shown as the person types it
    prompt: str | None = None  # what to show, when not the prompt block (a turn end: the agent's last message)


@dataclass(frozen=True, slots=True)
class Type:
    """These keys, the decision's, are queued: the typist hands them out one by one (Send) as they fall due."""

    writes: tuple[Write, ...]


@dataclass(frozen=True, slots=True)
class Close:
    """End the program, if it still runs (then `record` says how): its quit keys (queued in the typist), else SIGINT;
    SIGKILL `kill_after` later if it has not exited."""

    keys: bool  # the profile's quit keys go (else SIGINT)
    kill_after: float
    record: Record
    on_kill: Record | None = None  # what is recorded if SIGKILL goes at kill_after


@dataclass(frozen=True, slots=True)
class Kill:
    """SIGKILL the program's group now (a second Ctrl-C while it is being closed)."""


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """At a turn end: read the agent's last message off the screen now (from below the echo of `after`, else below the
    message of the last turn end, `before`); it comes back in GoalChecked."""

    token: int
    c: Classification
    after: str | None
    before: str | None


# Record, Tell, Delivered: deliver.py; CheckGoal: turns.py; Send, KeysOut: typist.py
Effect = Record | Ask | AskHuman | Type | Send | KeysOut | Delivered | Tell | Close | Kill | CheckGoal | ReadMessage


# -- facts -------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ScreenFacts:
    text: str  # the rendered screen, for the step's expect regex
    content: int  # changes when what is shown changes (a repaint with equal content does not)
    quiet_for: float  # seconds since it last changed
    tty: str | None = None  # reading | polling | busy | None: the kernel on the foreground process
    modes: Modes = Modes()
    judged: Classification | None = None  # a screen no rule explains, read whole as a question (below the question
    # answered last: Pilot.answered_to); the loop reads it only for such a screen
    echo_off: bool = False  # the terminal reads a line with echo off (read -s, getpass): what is typed is a secret
    wall: datetime | None = None  # the wall clock, in the local zone: what an agent's reset time ("resets 3pm") is read against
    still_for: float | None = None  # seconds since the agent's last progress sign (pty/progress.py); None: since the screen changed
    unread: int | None = None  # bytes typed that the program has not read yet (its input queue); None: unknown
    echoes: bool | None = None  # the terminal itself echoes what is typed (ECHO): a key shown is then no sign the
    # program holds it (bash's read -n1); None: unknown
    raw: bool = False  # the terminal is in raw mode (the program reads keys, not lines)
    idle_for: float | None = None  # seconds the foreground group has used almost no CPU (pty/naps.py Idle); None: unknown
    stopped: str | None = None  # the kernel says the program is stopped by a signal: what is stopped, for a person


@dataclass(frozen=True, slots=True)
class Started:
    """The program runs (what `program_started` records)."""

    pid: int = 0
    command: tuple[str, ...] = ()
    hidden_env: tuple[str, ...] = ()  # the environment's names kept from it (CI=true and the like)


@dataclass(frozen=True, slots=True)
class Replied:
    """The loop answered a terminal probe (cursor position, device attributes) as a terminal would."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Screen:
    """A classified screen (the loop classifies when the screen changed, or when the pilot asked to look again)."""

    c: Classification
    facts: ScreenFacts


@dataclass(frozen=True, slots=True)
class Decided:
    """The decision path's answer on `token`. content: the screen now; current: how it classifies now, when it changed
    since the question was asked (a stale answer is dropped), else None."""

    token: int
    decision: Decision
    content: int
    modes: Modes
    current: Classification | None = None


@dataclass(frozen=True, slots=True)
class KeyDue:
    """A key's time has come (Pilot.key_at): the typist reads the screen before it goes."""

    view: KeyView


@dataclass(frozen=True, slots=True)
class Typed:
    """Every key of the answer is out; `content` is the screen as it was then."""

    content: int


@dataclass(frozen=True, slots=True)
class Exited:
    code: int | None
    signal: int | None
    describe: str  # "exit code 1", "killed by SIGINT"
    last_words: str | None = None  # its last lines, when it failed on its own
    ignored: tuple[tuple[str, int], ...] = ()  # escape sequences the screen ignored, by kind


@dataclass(frozen=True, slots=True)
class Interrupted:
    """Ctrl-C (or SIGTERM) reached the run: `count` so far in this step."""

    count: int


@dataclass(frozen=True, slots=True)
class Deadline:
    reason: str


@dataclass(frozen=True, slots=True)
class GoalChecked:
    """What a turn end found (the goal check, the working tree) and the agent's last message as the screen showed it."""

    token: int
    facts: TurnFacts
    message: str


@dataclass(frozen=True, slots=True)
class Taken:
    """A person took the keyboard (cursor-pilot watch --take): their keys go to the program, the pilot's do not."""

    by: str


@dataclass(frozen=True, slots=True)
class HandedBack:
    """The person gave the keyboard back, having typed `keys` bytes."""

    by: str
    keys: int = 0


Fact = Started | Replied | Screen | Decided | KeyDue | Typed | Exited | Interrupted | Deadline | GoalChecked | Taken | HandedBack


def classified_by(c: Classification, facts: ScreenFacts) -> list[str]:
    """What classified a screen, for its record (`screen_state.facts`): the kernel's word and the quiet it was read
    with, then what the reader saw (the terminal's mode, the cursor, a menu's highlight: detect/facts.py)."""
    return [f"kernel: {facts.tty or 'unknown'}", f"quiet {min(facts.quiet_for, 1e6):.2f} s", *c.facts]


@dataclass(slots=True)
class PilotConfig:
    profile: Profile
    send: str | None = None  # typed once the program is ready for input
    expect_regex: str | None = None
    max_answers: int | None = None  # this step's own cap
    started_with_task: bool = False  # an agent given its task on the command line: its idle composer is not a question yet
    echo_check: bool = False  # Enter after typed text waits until the screen shows it
    secrets: Mapping[str, str] = field(default_factory=dict)  # --secret: the values <secret:NAME> types (never shown)
    turns: TurnConfig = field(default_factory=TurnConfig)  # how an agent's turn ends are judged and bounded
    limits: LimitConfig = field(default_factory=LimitConfig)  # how a usage limit is waited out (decide/limits.py)
    stuck_after: float | None = None  # --stuck-after: instead of the profile's stuck_after_s
