"""Diagnostics: <log>/run.log always, stderr too with --debug, as key=value lines.

The transcript is the record of the run; this log is for people debugging cursor-pilot. It is written through the
standard library's logging, not structlog: importing structlog (its dev console, and rich with it) cost a tenth of a
second before a run could read its program's first screen, for one kind of line (a state's transition).
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from pathlib import Path


def configure_logging(log_dir: Path, debug: bool = False) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    handlers: list[logging.Handler] = [logging.FileHandler(log_dir / "run.log", encoding="utf-8")]
    if debug:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger("cursorpilot")
    root.handlers[:] = handlers
    root.setLevel(logging.DEBUG)
    root.propagate = False


class KeyValueLogger:
    """`log.debug("transition", trigger=..., before=...)` as one line: timestamp=... level=debug event='transition'
    trigger=... (what structlog's KeyValueRenderer wrote)."""

    def __init__(self, name: str = "cursorpilot"):
        self._logger = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict) -> None:
        if not self._logger.isEnabledFor(level):
            return
        stamp = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        parts = [f"timestamp={stamp!r}", f"level={logging.getLevelName(level).lower()!r}", f"event={event!r}",
                 *(f"{k}={v!r}" for k, v in fields.items())]
        self._logger.log(level, " ".join(parts))

    def debug(self, event: str, **fields) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields) -> None:
        self._log(logging.ERROR, event, fields)


def get_logger(name: str = "cursorpilot") -> KeyValueLogger:
    return KeyValueLogger(name)
