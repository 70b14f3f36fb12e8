"""What a run's start records of its folder and its tools, asked of git (and of the Cursor CLI) on a thread while the
run sets itself up."""

from __future__ import annotations

import subprocess
import threading

from cursorpilot import resources
from cursorpilot.envsnap import head_at_start, in_a_work_tree, remember_head, worktree_snapshot
from cursorpilot.runner.spec import RunSpec


class AtStart:
    """What the run's start records of its folder and tools, asked of git (and of the Cursor CLI) on a thread while the
    run sets itself up: the working tree's snapshot (20-30 ms of git processes in a repository) and its commit, the
    agent's version. Its program already runs; the first look at its screen waited for them."""

    def __init__(self, spec: RunSpec):
        self.commit: str | None = None
        self.snapshot: dict | None = None
        self.cursor: str | None = None
        remember_head(spec.cwd)  # now, before the program can move it (startup/start.py kept it before a program it started)
        self._thread = threading.Thread(target=self._ask, args=(spec,), name="at-start", daemon=True)
        self._thread.start()

    def _ask(self, spec: RunSpec) -> None:
        if any(s.cursor is not None for s in spec.plan.steps):
            self.cursor = _version_of(spec.cursor_bin)
        self.snapshot = snapshot(spec)
        if self.snapshot is not None:  # HEAD before the program could move it, not as it is by now
            self.snapshot["commit"] = head_at_start(spec.cwd) or self.snapshot.get("commit")
        self.commit = self.snapshot.get("commit") if self.snapshot else _git_commit(spec.cwd) if in_a_work_tree(spec.cwd) else None

    def result(self) -> AtStart:
        self._thread.join()
        return self


def snapshot(spec: RunSpec) -> dict | None:
    """The working tree's files (at the run's start, and at its end): what the run changed, for the report (envsnap.py)."""
    return worktree_snapshot(spec.cwd, spec.log_dir / "git-objects", exclude=spec.log_dir)


def _version_of(binary: str) -> str | None:
    import shlex

    try:
        p = subprocess.run([*resources.self_command(shlex.split(binary)), "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (p.stdout or p.stderr).strip().splitlines()[0] if p.returncode == 0 and (p.stdout or p.stderr).strip() else None


def _git_commit(cwd: str | None) -> str | None:
    try:
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None
