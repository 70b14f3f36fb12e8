"""Which channel drives each kind of interactive step: one registry, keyed by the plan step's kind. A new channel is a
folder whose entry point takes a Job and returns a StepResult, and one line here."""

from __future__ import annotations

from importlib import import_module

from cursorpilot.session import Job, StepResult

CHANNELS: dict[str, str] = {
    "cursor": "cursorpilot.channels:drive_pty",
    "drive": "cursorpilot.channels:drive_pty",
    "acp": "cursorpilot.acp.step:drive",
}


def drive(kind: str, job: Job) -> StepResult:
    module, _, name = CHANNELS[kind].partition(":")
    return getattr(import_module(module), name)(job)


def drive_pty(job: Job) -> StepResult:
    """The screen channel's entry point (kept here until pty/ has its own)."""
    from cursorpilot.pty.loop import PtyStep, StepConfig

    step = job.step
    config = StepConfig(**job.base(), profile=job.profile, send=step.send, expect_regex=step.expect.regex if step.expect else None)
    return PtyStep(config, job.run, job.sink).run()
