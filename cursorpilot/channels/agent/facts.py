"""What the two agent channels (acp/ over the Agent Client Protocol, headless/ over a print mode's event stream) tell
their pilots and are asked by them alike, PURE: the facts and effects of an agent's step that mean the same on both,
and the pilot's config. Declared once (h11's `_events.py`), so that the two can't drift apart on them; each channel's
facts.py adds only its own (the protocol's requests, the stream's events) and says which it takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cursorpilot.decide.deliver import Delivered, Record, Tell
from cursorpilot.decide.limits import LimitConfig
from cursorpilot.decide.question import Decision, Question
from cursorpilot.decide.turns import CheckGoal, TurnConfig, TurnFacts
from cursorpilot.errors import ExitCode

STUCK_AFTER = 600.0  # a turn in which nothing at all happens this long is stuck (channels/agent/waits.py)


# -- what the loop tells the pilot at the start ---------------------------------------------------------------------------
@dataclass(slots=True)
class AgentPilotConfig:
    task: str  # the first prompt
    governing_prompt: str
    cwd: str
    allow: frozenset[str] = frozenset()  # deny rules the plan lifted
    resume_session: str | None = None  # go on with this session (cursor-pilot --resume), where the agent can
    max_answers: int | None = None  # the step's own cap
    deadline: float | None = None
    deadline_reason: str = "timeout"
    stuck_after: float = STUCK_AFTER
    turns: TurnConfig = field(default_factory=TurnConfig)  # how turn ends are judged and bounded (decide/turns.py)
    limits: LimitConfig = field(default_factory=LimitConfig)  # how a usage limit is waited out (decide/limits.py)
    native: bool = False  # the deny policy is in the agent's own deny list too (channels/agent/nativedeny.py)


# -- facts -------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DenyListWritten:
    """The deny policy went into the agent's own deny list before it started (channels/agent/nativedeny.py)."""

    agent: str
    file: str | None  # None: a private copy of the user's configuration
    deny: tuple[str, ...]
    hook: str | None = None  # the settings file that holds cursor-pilot's hook (runhook.py)
    no_hook: str | None = None  # why none was installed where one was asked for


@dataclass(frozen=True, slots=True)
class Exited:
    """The agent's process ended (over ACP: the step is over; in print mode: the turn's): its exit code (negative: a
    signal) and the last it said on stderr, redacted."""

    code: int | None
    last_words: str = ""

    @property
    def describe(self) -> str:
        """The exit, as the transcript says it."""
        return f"exit code {self.code}" if self.code is not None and self.code >= 0 else f"killed by signal {-(self.code or 0)}"


@dataclass(frozen=True, slots=True)
class NotJson:
    line: str  # a line on the agent's stdout that is not JSON (not JSON-RPC, not an event): recorded and skipped


@dataclass(frozen=True, slots=True)
class Decided:
    token: int
    decision: Decision | None  # after a human was asked, an escalation (or None): nobody answered, and why


@dataclass(frozen=True, slots=True)
class GoalChecked:
    """What a turn end found (channels/goalcheck.py): the goal check, the working tree, the cost so far."""

    token: int
    facts: TurnFacts


@dataclass(frozen=True, slots=True)
class Interrupted:
    """Ctrl-C (or SIGTERM) reached the run."""


# -- effects (besides decide/'s Record, Tell, Delivered and CheckGoal) ----------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ask:
    """Decide this question (deny policy, rules, provider); the decision comes back as Decided(token, ...)."""

    token: int
    question: Question


@dataclass(frozen=True, slots=True)
class AskHuman:
    token: int
    question: Question
    why: str


@dataclass(frozen=True, slots=True)
class End:
    """The step is over (the one way it ends)."""

    code: ExitCode
    reason: str


# what the loop's base feeds every agent pilot (channels/agent/loop.py): each channel's Fact takes them all
AgentFact = DenyListWritten | Decided | GoalChecked | Interrupted
# the effects every agent pilot returns, carried out by the loop's base; a channel's Effect is these and its own
AgentEffect = Record | Tell | Delivered | CheckGoal | Ask | AskHuman | End
