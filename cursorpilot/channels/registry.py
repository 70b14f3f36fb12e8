"""Which channel drives each kind of step, and what a channel is: one registry, keyed by the plan's StepKind.

A channel is a folder here (pty/, acp/, headless/; shell.py for a plan's `run:` steps) whose loop's `drive(job)` takes a
Job and returns a StepResult (contract.py). Its entry says all the run needs to know of it: how it is driven, the
command line its step starts (the Cursor binary with a `cursor:` step's arguments, a known agent by name, a `drive:`
step's command as written), the agents it knows by name (`--agent`), and whether it reads a screen (then its step gets
its detector profile; the others read none). A new channel is a folder and one entry.

Each entry imports its channel when a step of that kind runs, not before (a run of shell steps never loads the PTY, the
ACP SDK or the event streams), and still names it in code, so the import graph (lint-imports) and mypy see every edge.
The plan stays a model of its file: it imports no channel, this reads it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.plan import Step, StepKind


@dataclass(frozen=True, slots=True)
class Channel:
    drive: Callable[[Job], StepResult]
    command_line: Callable[[Step, str], list[str]]  # the step's program (given the Cursor binary, for a cursor: step)
    reads_screen: bool = False  # its step gets its detector profile
    agents: Callable[[], list[str]] | None = None  # the agents it knows by name (--agent NAME)
    launcher: Callable[[str], list[str] | None] | None = None  # a known agent's command line (None: not known)


def _shell(job: Job) -> StepResult:
    from cursorpilot.channels.shell import drive

    return drive(job)


def _pty(job: Job) -> StepResult:
    from cursorpilot.channels.pty.loop import drive

    return drive(job)


def _acp(job: Job) -> StepResult:
    from cursorpilot.channels.acp.step import drive

    return drive(job)


def _headless(job: Job) -> StepResult:
    from cursorpilot.channels.headless.step import drive

    return drive(job)


def _acp_launcher(name: str) -> list[str] | None:
    from cursorpilot.channels.acp.launchers import launcher

    return launcher(name)


def _acp_agents() -> list[str]:
    from cursorpilot.channels.acp.launchers import LAUNCHERS

    return list(LAUNCHERS)


def _headless_launcher(name: str) -> list[str] | None:
    from cursorpilot.channels.headless.launchers import launcher

    return launcher(name)


def _headless_agents() -> list[str]:
    from cursorpilot.channels.headless.launchers import LAUNCHERS

    return list(LAUNCHERS)


def _run_line(step: Step, cursor_bin: str) -> list[str]:
    assert step.run is not None
    return list(step.run)


def _cursor_line(step: Step, cursor_bin: str) -> list[str]:
    assert step.cursor is not None
    return [*shlex.split(cursor_bin), *step.cursor]


def _drive_line(step: Step, cursor_bin: str) -> list[str]:
    assert isinstance(step.drive, list)
    return step.drive


def _agent_line(launcher: Callable[[str], list[str] | None]) -> Callable[[Step, str], list[str]]:
    """An agent's step: its command as written, or a known agent's by name (else the name as a command line)."""

    def line(step: Step, cursor_bin: str) -> list[str]:
        if not isinstance(step.agent, str):
            return list(step.agent or [])
        return launcher(step.agent) or shlex.split(step.agent)

    return line


CHANNELS: dict[StepKind, Channel] = {
    StepKind.RUN: Channel(_shell, _run_line),
    StepKind.CURSOR: Channel(_pty, _cursor_line, reads_screen=True),
    StepKind.DRIVE: Channel(_pty, _drive_line, reads_screen=True),
    StepKind.ACP: Channel(_acp, _agent_line(_acp_launcher), agents=_acp_agents, launcher=_acp_launcher),
    StepKind.HEADLESS: Channel(_headless, _agent_line(_headless_launcher), agents=_headless_agents, launcher=_headless_launcher),
}


def drive(kind: StepKind, job: Job) -> StepResult:
    return CHANNELS[kind].drive(job)


def command_line(step: Step, cursor_bin: str) -> list[str]:
    """The command line a plan step starts (the runner's, and the preflight check's: the first program is looked up
    before a run folder is made)."""
    return CHANNELS[step.kind].command_line(step, cursor_bin)
