"""The channel contract: what a channel is handed for a step (a Job) and what it hands back (a StepResult).

The runner builds a Job per plan step and gives it to the channel its kind names (channels/registry.py); every channel's entry
point is `drive(job) -> StepResult`. It lives above the decision path and the run's shared state (it names the turn
config and the goal check's timeout) and below every channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cursorpilot.decide.turns import TurnConfig
from cursorpilot.channels.goalcheck import CHECK_TIMEOUT
from cursorpilot.plan import Step
from cursorpilot.providers.base import Provider
from cursorpilot.run_context import RunContext

if TYPE_CHECKING:  # (events.py and the profiles sit above the contract: named for the type checker, never imported)
    from cursorpilot.detect.profiles import Profile
    from cursorpilot.events import Sink


@dataclass(slots=True, kw_only=True)
class Job:
    """A plan step handed to the channel that drives it (channels/registry.py): what every step has (a shell step reads only
    its name, place, environment and deadline), the plan's step itself, and what the run knows of it."""

    command: list[str]
    governing_prompt: str
    step: Step  # the plan's step itself
    ctx: RunContext  # the run it belongs to
    sink: Sink  # what the person watching is told
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
