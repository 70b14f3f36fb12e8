"""What the PTY pilot (pty/pilot.py) is told and what it asks for: PURE data, like acp/facts.py for the ACP pilot.

The loop (pty/loop.py) turns a screen, a decision, a finished write into these facts and carries the effects out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cursorpilot.decide.deliver import Delivered, Record, Tell
from cursorpilot.decide.question import Question
from cursorpilot.decide.turns import CheckGoal, TurnConfig
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import Profile
from cursorpilot.keys import Modes, Write


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
    writes: tuple[Write, ...]


@dataclass(frozen=True, slots=True)
class Close:
    graceful: bool  # the profile's quit keys; else SIGINT


Effect = Record | Ask | AskHuman | Type | Delivered | Tell | Close | CheckGoal  # Record, Tell, Delivered: deliver.py; CheckGoal: turns.py


# -- facts -------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ScreenFacts:
    text: str  # the rendered screen, for the step's expect regex
    content: int  # changes when what is shown changes (a repaint with equal content does not)
    quiet_for: float  # seconds since it last changed
    tty: str | None = None  # reading | polling | busy | None: the kernel on the foreground process
    modes: Modes = Modes()
    judge: Callable[[int | None], Classification] | None = None  # the whole live region as a prompt (built only when
    # judged), below the last row of the question answered last (its argument: earlier questions are history)
    echo_off: bool = False  # the terminal reads a line with echo off (read -s, getpass): what is typed is a secret
    said: Callable[[str | None, str | None], str] | None = None  # an agent's last message above its composer, from below
    # the echo of the last instruction it was given, else below its message at the last turn end (only read at a turn end)


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
