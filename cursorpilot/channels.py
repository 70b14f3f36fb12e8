"""Which channel drives each kind of interactive step: one registry, keyed by the plan step's kind. A new channel is a
folder whose entry point takes a Job and returns a StepResult, and one line here."""

from __future__ import annotations

from importlib import import_module

from cursorpilot.session import Job, StepResult

CHANNELS: dict[str, str] = {
    "cursor": "cursorpilot.pty.loop:drive",
    "drive": "cursorpilot.pty.loop:drive",
    "acp": "cursorpilot.acp.step:drive",
    "headless": "cursorpilot.headless.step:drive",
}


def drive(kind: str, job: Job) -> StepResult:
    module, _, name = CHANNELS[kind].partition(":")
    return getattr(import_module(module), name)(job)
