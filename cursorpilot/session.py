"""The names the channels' loops import from here (`from cursorpilot.session import Job, RunSession, StepBase,
StepResult`), kept while they move: the run's shared state is `run_context.RunContext` now, the channel contract
(`StepBase`, `Job`, `StepResult`) is `steps.py`. This module goes once the loops import those homes.

The contract is imported lazily (PEP 562), so that importing this module costs what it did and makes no import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cursorpilot.run_context import RunContext

RunSession = RunContext  # the old name

if TYPE_CHECKING:
    from cursorpilot.steps import Job, StepBase, StepResult

__all__ = ["Job", "RunContext", "RunSession", "StepBase", "StepResult"]


def __getattr__(name: str) -> Any:
    if name in ("Job", "StepBase", "StepResult"):
        from cursorpilot import steps

        return getattr(steps, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
