"""One place where a command's errors become exit codes (errors.py): a user's mistake or a refusal is one line on
stderr, never a traceback (unless --debug).

It ends in SystemExit, not typer.Exit: a run read without typer (startup/start.py) comes through here too, and typer is not
imported for it."""

from __future__ import annotations

import sys
from collections.abc import Callable

from cursorpilot.errors import ExitCode, PilotError


def as_exit_code(debug: bool, fn: Callable[[], int]) -> None:
    """Run a command's body; its exit code, or its error as one line and the code the error names."""
    from cursorpilot.ui import error_line

    try:
        code = fn()
    except PilotError as exc:
        if debug:
            raise
        error_line(str(exc))
        raise SystemExit(int(exc.exit_code)) from None
    except KeyboardInterrupt:
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except SystemExit:
        raise
    except OSError as exc:
        import errno

        if debug or exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
            raise
        error_line(f"cannot write the run's records: {exc.strerror} ({exc.filename or 'log directory'}); what was written is kept")
        raise SystemExit(int(ExitCode.FAILED)) from None
    except Exception as exc:
        if debug or _typer_exit(exc):
            raise
        error_line(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        raise SystemExit(int(ExitCode.FAILED)) from None
    raise SystemExit(code)


def _typer_exit(exc: Exception) -> bool:
    """typer's own exit (a command's body raised it): it passes through, as SystemExit does."""
    typer = sys.modules.get("typer")
    return typer is not None and isinstance(exc, typer.Exit)
