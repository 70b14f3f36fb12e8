"""What goes into the ACP pilot and what comes out of it (acp/pilot.py), as plain values: facts about the agent and
the run, effects for the loop (acp/loop.py) to carry out. What both agent channels say alike (the config, an exit, a
decision, a turn end's goal check, an interrupt, Ask, AskHuman, End: channels/agent/facts.py) is declared there once;
the shared effects (Record, Tell, Delivered, CheckGoal) are decide/'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cursorpilot.channels.agent.facts import (STUCK_AFTER, AgentEffect, AgentPilotConfig, Ask, AskHuman, Decided, DenyListWritten, End, Exited,
                                              GoalChecked, Interrupted, NotJson)

# How the client answers a request it does not carry out (acp/client.py maps them to JSON-RPC error codes): what is
# not there, what it will not do, what went wrong while doing it.
NOT_FOUND, REFUSED, FAILED = "not_found", "refused", "failed"


AcpPilotConfig = AgentPilotConfig  # (its `native` is the shared config's: a print mode's agent has a deny list too)


# -- facts -------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Started:
    """The agent's process started."""

    pid: int = 0
    command: tuple[str, ...] = ()
    hidden_env: tuple[str, ...] = ()  # the environment's names kept from it (CI=true and the like)



@dataclass(frozen=True, slots=True)
class Initialized:
    protocol_version: int
    agent: dict | None  # its name, title, version
    can_load: bool  # it offers session/load


@dataclass(frozen=True, slots=True)
class SessionOpened:
    session_id: str
    loaded: bool


@dataclass(frozen=True, slots=True)
class Update:
    update: dict  # a session/update, as plain JSON



@dataclass(frozen=True, slots=True)
class PermissionAsked:
    token: int
    tool_call: dict
    options: list[dict]


@dataclass(frozen=True, slots=True)
class FormAsked:
    token: int
    message: str
    mode: dict


@dataclass(frozen=True, slots=True)
class ExtensionAsked:
    token: int
    method: str  # as the agent sent it: cursor/ask_question, cursor/create_plan, ...
    params: dict
    notification: bool = False  # no reply expected



@dataclass(frozen=True, slots=True)
class FileRead:
    token: int
    path: str
    inside: bool  # within the working directory, symlinks resolved
    exists: bool


@dataclass(frozen=True, slots=True)
class FileWrite:
    token: int
    path: str
    inside: bool
    diff: str  # what the write would change


@dataclass(frozen=True, slots=True)
class CommandAsked:
    token: int
    line: str  # the command and its arguments
    inside: bool  # its working directory is within the step's


@dataclass(frozen=True, slots=True)
class FileWasRead:
    """A read the pilot let through was done: this many characters went to the agent."""

    path: str
    chars: int


@dataclass(frozen=True, slots=True)
class FileWritten:
    """A write the pilot let through was done."""

    path: str
    diff: str


@dataclass(frozen=True, slots=True)
class CommandStarted:
    """A command the pilot let through runs, in the agent's terminal `terminal_id`."""

    terminal_id: str
    line: str


@dataclass(frozen=True, slots=True)
class CommandExited:
    """A command run for the agent ended (told once): its exit code and all of its output kept."""

    terminal_id: str
    line: str
    exit_code: int
    output: str
    truncated: bool  # its output outgrew the terminal's limit: the start is gone


@dataclass(frozen=True, slots=True)
class TurnEnded:
    stop_reason: str
    usage: dict | None = None



@dataclass(frozen=True, slots=True)
class CallFailed:
    call: str  # initialize | session | prompt | pilot (a task of the loop failed)
    message: str
    gone: bool  # the connection closed (the agent died), rather than an error reply

    @property
    def why(self) -> str:
        """What failed, as the step's reason says it."""
        if self.call == "pilot":
            return f"cursor-pilot failed while serving the agent: {self.message}"
        if self.call == "initialize":
            return f"the agent ended before initialize ({self.message})" if self.gone else f"the agent answered initialize with an error: {self.message}"
        if self.gone:
            return f"the agent ended mid-turn ({self.message or 'connection closed'})"
        return f"the agent answered with an error: {self.message}"


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed: the deadline, the initialize timeout and the stuck clock are looked at. `output_at`: when a command
    the client runs for the agent (terminal/*) last wrote output, if one is running (the agent waits on it)."""

    output_at: float | None = None
    wall: datetime | None = None  # the wall clock, in the local zone: what an agent's reset time is read against



@dataclass(frozen=True, slots=True)
class CancelSent:
    """session/cancel reached the agent (CancelTurn's outcome)."""

    session_id: str | None


@dataclass(frozen=True, slots=True)
class ServeFailed:
    """Serving a request of the agent failed in a way nobody foresaw (acp/client.py): the agent got an Internal error."""

    method: str
    error: str  # the exception, as "Type: message"


Done = FileWasRead | FileWritten | CommandStarted | CommandExited  # what the agent read, wrote and ran (acp/workspace.py records it)
Fact = (DenyListWritten | Started | Exited | Initialized | SessionOpened | Update | NotJson | PermissionAsked | FormAsked | ExtensionAsked
        | Decided | FileRead | FileWrite | CommandAsked | Done | TurnEnded | GoalChecked | CallFailed | Tick | Interrupted | CancelSent
        | ServeFailed)


# -- effects (besides the shared Record, Tell, Delivered) ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class OpenSession:
    load: str | None  # the session to load (resume), else a new one


@dataclass(frozen=True, slots=True)
class SendPrompt:
    text: str




@dataclass(frozen=True, slots=True)
class Reply:
    token: int
    payload: dict


@dataclass(frozen=True, slots=True)
class Refuse:
    """Answer the agent's request with an error it can show: NOT_FOUND or REFUSED, and why."""

    token: int
    error: str
    message: str
    target: str  # the path or the command


@dataclass(frozen=True, slots=True)
class CancelTurn:
    pass



Own = OpenSession | SendPrompt | Reply | Refuse | CancelTurn  # what only this channel's loop carries out (acp/loop.py)
Effect = AgentEffect | Own

# the facts both agent channels share, declared in channels/agent/facts.py and taken here as this channel's own
__all__ = ["STUCK_AFTER", "AgentPilotConfig", "Ask", "AskHuman", "Decided", "DenyListWritten", "End", "Exited", "GoalChecked", "Interrupted",
           "NotJson"]
