"""The known headless agents and how each is started (`--headless --agent NAME`); `-- AGENT ARGS...` overrides any of
them. cursor-pilot adds the print-mode flags itself (headless/stream.py): give the program and your own options."""

from __future__ import annotations

import shutil

LAUNCHERS: dict[str, list[list[str]]] = {
    "claude": [["claude"]],
    "cursor": [["agent"], ["cursor-agent"]],
}


def launcher(name: str) -> list[str] | None:
    """The command line for a known agent, or None for an unknown name."""
    options = LAUNCHERS.get(name)
    if options is None:
        return None
    for argv in options:
        if shutil.which(argv[0]):
            return list(argv)
    return list(options[-1])  # not installed: the usual name, so the error names it
