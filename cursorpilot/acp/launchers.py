"""The known ACP agents and how each is started (`--agent NAME`); `-- AGENT ARGS...` overrides any of them."""

from __future__ import annotations

import shutil

# name -> the command lines tried in order; the first whose program is on PATH wins
LAUNCHERS: dict[str, list[list[str]]] = {
    "cursor": [["agent", "acp"], ["cursor-agent", "acp"]],
    "gemini": [["gemini", "--acp"]],
    "claude": [["claude-agent-acp"], ["npx", "-y", "@zed-industries/claude-agent-acp"]],  # Zed's adapter for Claude Code
    "codex": [["codex-acp"], ["npx", "-y", "@zed-industries/codex-acp"]],  # Zed's adapter for Codex
}


def launcher(name: str) -> list[str] | None:
    """The command line for a known agent, or None for an unknown name."""
    options = LAUNCHERS.get(name)
    if options is None:
        return None
    for argv in options:
        if shutil.which(argv[0]):
            return list(argv)
    return list(options[0])  # not installed: the first form, so the error names the usual program
