"""The working directory's git state: a small summary for the LLM's context, and snapshots of its files for the report."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def _git(cwd: str | None, *args: str) -> str | None:
    """git's output, stripped; None when it failed, took over 5 s or is not there."""
    return _output(_start(cwd, *args))


def git_snapshot(cwd: str | None, max_lines: int = 30) -> str:
    """Branch, `git status --porcelain` and `git diff --shortstat`; empty outside a git repository. Asked at every
    question a model is asked, so: no git started outside a work tree (in_a_work_tree), and two git processes side by
    side (the branch comes with the status), not four one after another (16 ms a question in `git add -p`)."""
    if not in_a_work_tree(cwd):
        return ""
    asked = [_start(cwd, "status", "--porcelain", "--branch"), _start(cwd, "diff", "--shortstat")]
    found = [_output(p) for p in asked]
    if found[0] is None:  # not a work tree after all (inside .git, a bare repository), or no git
        return ""
    head, *status = found[0].splitlines() or [""]
    if len(status) > max_lines:
        status = [*status[:max_lines], f"… {len(status) - max_lines} more"]
    diff = found[1] or "no unstaged changes"
    return "\n".join([f"branch: {_branch(head)}", "git status --porcelain:", *(status or ["(clean)"]), f"git diff --shortstat: {diff}"])


def _branch(head: str) -> str:
    """The branch from `git status --branch`'s first line: `## main...origin/main [ahead 1]`, `## No commits yet on
    main`, `## HEAD (no branch)`."""
    name = head.removeprefix("## ").removeprefix("No commits yet on ").removeprefix("Initial commit on ")
    name = name.split("...", 1)[0].split(" [", 1)[0].strip()
    return "(detached)" if not name or name == "HEAD (no branch)" else name


def _start(cwd: str | None, *args: str) -> subprocess.Popen | None:
    try:
        return subprocess.Popen(["git", "--no-optional-locks", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None


def _output(p: subprocess.Popen | None) -> str | None:
    if p is None:
        return None
    try:
        out, _ = p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None
    return out.strip() if p.returncode == 0 else None


_HEADS: dict[str, str | None] = {}  # a folder's HEAD as it was before the run's program started (remember_head)


def remember_head(cwd: str | None) -> None:
    """HEAD's commit now, before the program starts: the start's snapshot is taken while the program already runs (it
    starts first), and a `git rebase` done in 50 ms had moved HEAD before it was asked. The first word kept wins."""
    _HEADS.setdefault(os.path.abspath(cwd or os.getcwd()), head_commit(cwd))


def head_at_start(cwd: str | None) -> str | None:
    """HEAD's commit as remember_head kept it (None: not kept, or no commit)."""
    return _HEADS.get(os.path.abspath(cwd or os.getcwd()))


def head_commit(cwd: str | None) -> str | None:
    """HEAD's commit read from the repository's own files, with no git process (a tenth of a millisecond, not the 2 ms
    of `git rev-parse HEAD` on the way to a program): a loose ref, a packed one, a worktree's `.git` file. None when
    there is no repository or no commit yet, or its files do not read as expected."""
    found = _git_dir(cwd)
    if found is None:
        return None
    git, common = found
    try:
        head = _read(os.path.join(git, "HEAD"))
        if not head.startswith("ref: "):
            return head if _is_sha(head) else None
        ref = head[5:].strip()
        for base in (git, common):
            if os.path.isfile(os.path.join(base, ref)):
                sha = _read(os.path.join(base, ref))
                return sha if _is_sha(sha) else None
        packed = os.path.join(common, "packed-refs")
        lines = _read(packed).splitlines() if os.path.isfile(packed) else []
    except (OSError, UnicodeDecodeError):
        return None
    return next((sha for sha, _, name in (line.partition(" ") for line in lines) if name == ref and _is_sha(sha)), None)


def _git_dir(cwd: str | None) -> tuple[str, str] | None:
    """(the repository's folder for this work tree, its common folder) found from cwd upwards, through a `.git` file
    (`gitdir: …`, a linked worktree or a submodule); None outside one, or where git's environment names another."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return None
    here = os.path.abspath(cwd or os.getcwd())
    while not os.path.lexists(os.path.join(here, ".git")):
        if os.path.dirname(here) == here:
            return None
        here = os.path.dirname(here)
    git = os.path.join(here, ".git")
    try:
        if os.path.isfile(git):
            git = os.path.join(here, _read(git).removeprefix("gitdir:").strip())
        common = os.path.join(git, _read(os.path.join(git, "commondir"))) if os.path.isfile(os.path.join(git, "commondir")) else git
    except (OSError, UnicodeDecodeError):
        return None
    return git, common


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read().strip()


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


SNAPSHOT_TIMEOUT_S = 20.0
SNAPSHOT_MAX_FILE = 10 << 20  # an untracked file larger than this is left out of the snapshot (and named)


def in_a_work_tree(cwd: str | None) -> bool:
    """Whether git may find a work tree here: a `.git` in the folder or in one above it, or git's environment names
    its repository (GIT_DIR, GIT_WORK_TREE). Elsewhere no git process is started: each costs a run milliseconds, at
    its start and at its end."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    here = os.path.abspath(cwd or os.getcwd())
    while not os.path.lexists(os.path.join(here, ".git")):
        up = os.path.dirname(here)
        if up == here:
            return False
        here = up
    return True


def worktree_snapshot(cwd: str | None, objects: Path, exclude: Path | None = None) -> dict | None:
    """The working tree's files, tracked and untracked (.gitignore respected), as a git tree, without touching the
    repository: a throwaway index, new objects written under `objects` (the run's folder) and the repository's own
    read as alternates. A snapshot at the run's start and one at its end give the files the run changed, even in a
    tree that was dirty before. None outside a git work tree, or when git fails or takes too long."""
    if not in_a_work_tree(cwd):
        return None
    found = (_git(cwd, "rev-parse", "--show-toplevel", "--git-path", "objects", "--git-path", "index") or "").split("\n")
    if len(found) != 3 or not all(found):
        return None
    here = os.path.abspath(cwd or os.getcwd())  # the two paths are given from where git was asked
    top, repo_objects, index = found[0], os.path.join(here, found[1]), os.path.join(here, found[2])
    objects.mkdir(parents=True, exist_ok=True)
    env = snapshot_env(top, objects, repo_objects)
    pathspec = ["."]
    if exclude is not None:
        rel = os.path.relpath(os.path.abspath(exclude), top)
        if not rel.startswith(".."):
            pathspec.append(f":(exclude){rel}")
    left_out = []
    for name in (_git(top, "ls-files", "--others", "--exclude-standard", "-z", "--", *pathspec) or "").split("\0"):
        path = os.path.join(top, name)
        if name and os.path.isfile(path) and os.path.getsize(path) > SNAPSHOT_MAX_FILE:
            left_out.append(name)
            pathspec.append(f":(exclude,literal){name}")
    with tempfile.TemporaryDirectory() as tmp:
        env["GIT_INDEX_FILE"] = os.path.join(tmp, "index")
        if os.path.isfile(index):
            shutil.copyfile(index, env["GIT_INDEX_FILE"])  # git reuses its stat data: fast
        try:
            added = subprocess.run(["git", "add", "-A", "--", *pathspec], cwd=top, env=env, capture_output=True,
                                   timeout=SNAPSHOT_TIMEOUT_S, stdin=subprocess.DEVNULL)
            tree = subprocess.run(["git", "write-tree"], cwd=top, env=env, capture_output=True, text=True, timeout=SNAPSHOT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if added.returncode != 0 or tree.returncode != 0:
        return None
    return {"top": top, "commit": _git(top, "rev-parse", "--verify", "-q", "HEAD"), "tree": tree.stdout.strip(),
            "objects": str(objects.resolve()), "left_out": left_out or None}


def snapshot_env(top: str, objects: Path, repo_objects: str) -> dict[str, str]:
    """git's environment for reading (and writing) snapshots: new objects in the run's folder, the repository's read."""
    return {**os.environ, "GIT_OBJECT_DIRECTORY": str(objects.resolve()), "GIT_ALTERNATE_OBJECT_DIRECTORIES": repo_objects,
            "GIT_TERMINAL_PROMPT": "0"}
