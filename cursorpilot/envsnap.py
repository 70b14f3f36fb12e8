"""A small snapshot of the working directory's git state, for the LLM's context."""

from __future__ import annotations

import subprocess


def _git(cwd: str | None, *args: str) -> str | None:
    try:
        p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def git_snapshot(cwd: str | None, max_lines: int = 30) -> str:
    """Branch, `git status --porcelain` and `git diff --shortstat`; empty outside a git repository."""
    if _git(cwd, "rev-parse", "--is-inside-work-tree") != "true":
        return ""
    branch = _git(cwd, "branch", "--show-current") or "(detached)"
    status = (_git(cwd, "status", "--porcelain") or "").splitlines()
    if len(status) > max_lines:
        status = [*status[:max_lines], f"… {len(status) - max_lines} more"]
    diff = _git(cwd, "diff", "--shortstat") or "no unstaged changes"
    return "\n".join([f"branch: {branch}", "git status --porcelain:", *(status or ["(clean)"]), f"git diff --shortstat: {diff}"])
