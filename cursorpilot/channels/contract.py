"""The channel contract: what a channel is handed for a step (a Job) and what it hands back (a StepResult).

The runner builds a Job per plan step and gives it to the channel its kind names (channels/registry.py); every channel's entry
point is `drive(job) -> StepResult`. It lives above the decision path and the run's shared state (it names the turn
config and the goal check's timeout) and reading screens (detect/: a screen's step carries its detector profile), and
below every channel.

The people a step may ask are named here as a Protocol (`People`), below human/humans.py that serves it: the run's
state (run_context.py) held them and named them for the type checker, an import upward that closed a circle
(contract -> run_context -> human.humans -> contract). A Job's detector profile is detect/'s, a layer below the
contract (reading screens knows no channel), imported as any other. Its sink is still events.py's, named for the type
checker alone: the screen channel builds the sink's Status from events.py, so events.py cannot import the contract's
own Protocol without closing a circle through the channels.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

from cursorpilot.decide.compiled import Policy
from cursorpilot.decide.question import Decision, Question
from cursorpilot.decide.turns import TurnConfig
from cursorpilot.channels.goalcheck import CHECK_TIMEOUT
from cursorpilot.detect.profiles import Profile
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.providers.base import Provider
from cursorpilot.run_context import RunContext

AnswerCheck = Callable[[Question, Decision], Decision]  # the decision path's check of an answer (decide.decider.Decider.check)


@dataclass(slots=True, frozen=True)
class Status:
    """A step's state line, shown under its screen."""

    state: str
    answers: int
    elapsed: float
    detail: str = ""


class Keyboard(Protocol):
    """Who else may type into the program: a person who took the keyboard (`cursor-pilot watch --take`, commands/watched.py)."""

    def step(self, record: Callable[[Any], Any], screen: bool) -> None: ...  # a step begins (screen: its keyboard can be taken)

    def poll(self) -> list[tuple[str, bytes]]: ...  # since the last call: ("take", who), ("keys", bytes), ("give", who)

    def told(self, message: dict) -> None: ...  # said to the watchers: {"t": "taken"}, {"t": "given"}


class StepSink(Protocol):
    """What a step tells the person watching, as its loop sees it (events.py's Sink is one: the run's part is there)."""

    @property
    def wants_screen(self) -> bool: ...  # the PTY loop hands screen() a snapshot (at most every 0.1 s) only when this is set

    def screen(self, snap: Snapshot, status: Status) -> None: ...

    def answer(self, prompt: str, typed: str, source: str, changed: str = "", granted: str = "") -> None: ...  # the policy changed
    # the answer chosen (`changed`), or weighed a yes and let it through (`granted`: by whose words)

    def note(self, text: str) -> None: ...

    def keyboard(self) -> Keyboard | None: ...  # the run's keyboard, when a person may take it (commands/watched.py)


class Expected(Protocol):
    """A step's `expect:`, as the channels read it."""

    @property
    def regex(self) -> str | None: ...  # seen on screen: the step is done


class PlanStep(Protocol):
    """The plan's step as the channels read it (plan.Step is one: the plan sits above the channels, as it reads the
    registry's entries to know its kinds)."""

    @property
    def kind(self) -> object: ...  # which entry of the registry drives it
    @property
    def send(self) -> str | None: ...  # typed once the program is ready for input
    @property
    def expect(self) -> Expected | None: ...
    @property
    def allow_failure(self) -> bool: ...
    @property
    def run(self) -> list[str] | None: ...  # a shell step's commands
    @property
    def acp(self) -> str | None: ...  # an ACP step's agent
    @property
    def headless(self) -> str | None: ...  # a headless step's agent


class People(Protocol):
    """Who is asked when nothing else can answer, as a step's loop sees them (human/humans.py's Humans): one question
    at a time, the first answer that passes `check` wins, or an escalation that says why nobody answered."""

    async def decide(self, q: Question, why: str, step: Job, check: AnswerCheck, pool: Executor) -> Decision: ...

    def ask(self, q: Question, why: str, step: Job, check: AnswerCheck | None = None, shown: str | None = None) -> Decision: ...

    def withdraw(self, why: str) -> None: ...


@dataclass(slots=True, kw_only=True)
class Job:
    """A plan step handed to the channel that drives it (channels/registry.py): what every step has (a shell step reads only
    its name, place, environment and deadline), the plan's step itself, and what the run knows of it."""

    command: list[str]
    governing_prompt: str
    step: PlanStep  # the plan's step itself
    ctx: RunContext  # the run it belongs to
    sink: StepSink  # what the person watching is told (events.py's Sink is one)
    name: str = "command"
    index: int = 1
    total: int = 1
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    max_answers: int | None = None  # this step's own cap
    deadline: float | None = None  # monotonic; the earlier of the run's and the step's
    deadline_reason: str = "timeout"
    rules: Provider | None = None  # consulted before the run's provider when that is an LLM
    done_when: str | None = None  # the goal check, run at each turn end (goalcheck.py)
    check_timeout: float = CHECK_TIMEOUT
    turns: TurnConfig = field(default_factory=TurnConfig)  # how turn ends are judged and bounded (decide/turns.py)
    profile: Profile | None = None  # the detector profile, for a channel that reads a screen
    session_id: str | None = None  # the session a previous attempt left (ACP, headless: resumed)
    people: People | None = None  # who is asked when nothing else can answer (the runner's: every run has them)
    policy: Policy | None = None  # --policy: the run's pinned deny policy (else the step compiles its governing prompt)


@dataclass(slots=True)
class StepResult:
    """How a step ended, whichever channel drove it."""

    exit_code: int
    reason: str
    child: int | None  # the program's exit code, when it exited by itself
    answers: int = 0
    text: str = ""  # what the program showed (scrollback and screen) or said (ACP messages), for expect checks
    preview: dict | None = None  # dry run: what would have been answered
    session_id: str | None = None  # ACP: the agent's session, for --resume
    goal: str | None = None  # the step's last goal check: passed | failed (None: none ran)
    listed: list[dict] = field(default_factory=list)  # dry run: what a step that asks nothing would do, a preview row each
    text_top: int | None = None  # a screen's text: the number of its first row (the rows scrolled off before it)
