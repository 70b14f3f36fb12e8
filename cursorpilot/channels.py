"""Which channel drives each kind of step: one registry, keyed by the plan's StepKind. A channel is a module whose
`drive(job)` takes a Job and returns a StepResult; a new channel is a folder, one small wrapper here and one line in
CHANNELS.

Each wrapper imports its channel when a step of that kind runs, not before (a run of shell steps never loads the PTY,
the ACP SDK or the event streams), and still names it in code, so the import graph (lint-imports) and mypy see every
edge."""

from __future__ import annotations

from collections.abc import Callable

from cursorpilot.plan import StepKind
from cursorpilot.steps import Job, StepResult


def _shell(job: Job) -> StepResult:
    from cursorpilot.shell import drive

    return drive(job)


def _pty(job: Job) -> StepResult:
    from cursorpilot.pty.loop import drive

    return drive(job)


def _acp(job: Job) -> StepResult:
    from cursorpilot.acp.step import drive

    return drive(job)


def _headless(job: Job) -> StepResult:
    from cursorpilot.headless.step import drive

    return drive(job)


CHANNELS: dict[StepKind, Callable[[Job], StepResult]] = {
    StepKind.RUN: _shell,
    StepKind.CURSOR: _pty,
    StepKind.DRIVE: _pty,
    StepKind.ACP: _acp,
    StepKind.HEADLESS: _headless,
}


def drive(kind: StepKind, job: Job) -> StepResult:
    return CHANNELS[kind](job)
