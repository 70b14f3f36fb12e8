"""The command line a plan step starts: the Cursor binary with a cursor: step's arguments, a known agent's launcher
for acp: and headless: steps (each channel names its own agents), a drive: step's command as written.

Apart from plan.py so that the plan stays a model of the file (it imports no channel), and read by the runner and by
the preflight check (the first program looked up before a run folder is made).
"""

from __future__ import annotations

import shlex

from cursorpilot.plan import Step, StepKind


def command_line(step: Step, cursor_bin: str) -> list[str]:
    kind = step.kind
    if kind is StepKind.CURSOR:
        assert step.cursor is not None
        return [*shlex.split(cursor_bin), *step.cursor]
    if kind in (StepKind.ACP, StepKind.HEADLESS):
        if not isinstance(step.agent, str):
            return list(step.agent or [])
        if kind is StepKind.HEADLESS:
            from cursorpilot.headless.launchers import launcher as headless_launcher

            return headless_launcher(step.agent) or shlex.split(step.agent)
        from cursorpilot.acp.launchers import launcher

        return launcher(step.agent) or shlex.split(step.agent)
    assert isinstance(step.drive, list)
    return step.drive
