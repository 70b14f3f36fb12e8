"""Diagnostics through structlog: <log>/run.log always, stderr too with --debug.

The transcript is the record of the run; this log is for people debugging cursor-pilot.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import structlog


def configure_logging(log_dir: Path, debug: bool = False) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    handlers: list[logging.Handler] = [logging.FileHandler(log_dir / "run.log", encoding="utf-8")]
    if debug:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger("cursorpilot")
    root.handlers[:] = handlers
    root.setLevel(logging.DEBUG)
    root.propagate = False
    structlog.configure(
        processors=[
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.add_log_level,
            structlog.processors.KeyValueRenderer(key_order=["timestamp", "level", "event"]),
        ],
        logger_factory=lambda *args: logging.getLogger("cursorpilot"),
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        cache_logger_on_first_use=False,
    )
