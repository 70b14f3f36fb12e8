"""What goes into the headless pilot and what comes out of it (headless/pilot.py), as plain values: facts parsed from
the agent's NDJSON event stream (headless/stream.py) and about the run, effects for the loop (headless/loop.py) to
carry out. What both agent channels say alike (the config, an exit, a decision, a turn end's goal check, an interrupt,
Ask, AskHuman, End: channels/agent/facts.py) is declared there once; the shared effects (Record, Tell, Delivered,
CheckGoal) are decide/'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cursorpilot.channels.agent.facts import (STUCK_AFTER, AgentEffect, AgentPilotConfig, Ask, AskHuman, Decided, DenyListWritten, End, Exited,
                                              GoalChecked, Interrupted, NotJson)

HeadlessPilotConfig = AgentPilotConfig  # (nothing of its own)


# -- facts from the stream ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionInit:
    session_id: str
    model: str = ""
    cwd: str = ""


@dataclass(frozen=True, slots=True)
class Said:
    """Text of the agent's message (one assistant segment)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """The agent announced a tool call: Claude's tool_use block, Cursor's tool_call/started."""

    call_id: str
    name: str
    input: dict


@dataclass(frozen=True, slots=True)
class ToolDone:
    call_id: str
    ok: bool
    rejected: str | None = None  # why the call was not run, when it was rejected (by the pilot, or by the agent itself)
    output: str = ""


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """The agent waits for a yes or no on its stdin: Claude's control_request can_use_tool, Cursor's interaction_query.
    `key` names the request for the reply (the loop keeps the request itself)."""

    key: str
    tool: str
    input: dict
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ControlAsked:
    """Another request on the stream the pilot does not serve (it gets an error, never silence)."""

    key: str
    subtype: str


@dataclass(frozen=True, slots=True)
class Result:
    """The turn's `result` event: the end of a turn."""

    session_id: str
    text: str
    is_error: bool = False
    subtype: str = ""
    usage: dict | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class Other:
    """An event the pilot does not read (kept in the transcript, never fatal)."""

    event: dict



# -- facts about the run ------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Started:
    pass


@dataclass(frozen=True, slots=True)
class Spawned:
    """The turn's process started (StartTurn's outcome)."""

    pid: int = 0
    command: tuple[str, ...] = ()
    hidden_env: tuple[str, ...] = ()  # the environment's names kept from it (CI=true and the like)



@dataclass(frozen=True, slots=True)
class SpawnFailed:
    message: str




@dataclass(frozen=True, slots=True)
class Tick:
    wall: datetime | None = None  # the wall clock, in the local zone: what an agent's reset time is read against


@dataclass(frozen=True, slots=True)
class RateLimited:
    """The agent's own word on its usage limit (Claude's rate_limit_event): `rejected` when requests are refused, and
    when it resets (epoch seconds), exactly."""

    status: str
    resets_at: float | None = None
    kind: str = ""  # five_hour, seven_day, ...



Fact = (SessionInit | Said | ToolUse | ToolDone | PermissionAsked | ControlAsked | Result | Other | NotJson | DenyListWritten | Started
        | Spawned | Exited | SpawnFailed | Decided | GoalChecked | Tick | Interrupted | RateLimited)


# -- effects (besides the shared Record, Tell, Delivered, CheckGoal) ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StartTurn:
    """Start the agent's print mode for one turn: this prompt, resuming this session (None: a new one)."""

    prompt: str
    resume: str | None




@dataclass(frozen=True, slots=True)
class Reply:
    """Answer a permission request on the agent's stdin: allowed, or denied with a message the agent's model reads."""

    key: str
    allow: bool
    message: str = ""


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Answer a request the pilot does not serve with an error."""

    key: str
    message: str


@dataclass(frozen=True, slots=True)
class EndInput:
    """The turn is over: close the agent's stdin, so that its print mode exits."""


@dataclass(frozen=True, slots=True)
class StopAgent:
    """End the turn's process now (the step ended while it ran)."""



Own = StartTurn | Reply | Unsupported | EndInput | StopAgent  # what only this channel's loop carries out (headless/loop.py)
Effect = AgentEffect | Own

# the facts both agent channels share, declared in channels/agent/facts.py and taken here as this channel's own
__all__ = ["STUCK_AFTER", "AgentPilotConfig", "Ask", "AskHuman", "Decided", "DenyListWritten", "End", "Exited", "GoalChecked", "Interrupted",
           "NotJson"]
