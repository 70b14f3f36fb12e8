"""The known ACP agents and how each is started (`--agent NAME`); `-- AGENT ARGS...` overrides any of them."""

from __future__ import annotations

import os
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


def misread(command: list[str], env: dict[str, str]) -> list[str]:
    """Variables an adapter misreads, to leave out of its environment (their names, recorded like the hidden CI markers).

    claude-agent-acp (0.23) takes any IS_SANDBOX as leave to start Claude Code with --allow-dangerously-skip-permissions
    when it runs as root; Claude Code takes that flag from root only with IS_SANDBOX=1 and otherwise exits at once
    ("cannot be used with root/sudo privileges"), so session/new fails with "Query closed before response received".
    Without IS_SANDBOX the adapter leaves the flag out, and nothing else changes (permissions are asked as always)."""
    adapter = any("claude-agent-acp" in os.path.basename(arg) or arg.endswith("/claude-agent-acp") for arg in command[:3])
    value = env.get("IS_SANDBOX")
    if adapter and value and value != "1" and hasattr(os, "geteuid") and os.geteuid() == 0:
        return ["IS_SANDBOX"]
    return []
