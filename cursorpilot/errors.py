"""Exit codes and the errors a user can cause.

One IntEnum for every way a run can end, and one exception type that carries a
one-line message and its exit code, so the CLI can print one clear line instead of
a traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # the program completed
    FAILED = 1  # non-zero exit, crash, or a detected error (login, usage limit)
    USAGE = 2  # bad usage or bad input
    HUMAN_NEEDED = 3  # escalated while stdin is not a terminal
    LIMIT = 4  # --timeout or --max-steps reached
    INTERRUPTED = 130  # Ctrl-C / SIGTERM


class PilotError(Exception):
    """An error with a one-line message meant for the user."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(self, message: str, exit_code: ExitCode | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class BadInput(PilotError):
    """Bad usage, a bad file, an unknown name: exit 2."""

    exit_code = ExitCode.USAGE
