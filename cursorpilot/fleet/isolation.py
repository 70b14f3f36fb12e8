"""A task's own folder: a git worktree on a branch of its own (left for review), a copy of a folder, or an empty
folder. Made where the task runs (this machine, or a Ray node), before its program starts; made again by a resumed
task, it is found as it was left."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cursorpilot.errors import PilotError
from cursorpilot.fleet.command import Isolated


def prepare(place: Isolated) -> None:
    folder = Path(place.folder)
    if place.kind == "worktree":
        _worktree(place, folder)
    elif place.kind == "copy":
        if not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(place.source, folder, symlinks=True)
    else:
        folder.mkdir(parents=True, exist_ok=True)


def _worktree(place: Isolated, folder: Path) -> None:
    if (folder / ".git").exists():  # a resumed task: its worktree, as it was left
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    has_branch = _git(place.repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{place.branch}", check=False) == 0
    args = ["worktree", "add", str(folder), place.branch] if has_branch else \
        ["worktree", "add", "-b", place.branch, str(folder), place.base]
    _git(place.repo, *args)


def _git(repo: str, *args: str, check: bool = True) -> int:
    proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise PilotError(f"git {args[0]} in {repo}: {last}")
    return proc.returncode
