"""The files the run changed: git's diff between the working tree's snapshots at the run's start and end.

The runner records both snapshots (envsnap.worktree_snapshot: tracked and untracked files, the objects kept in the
run's folder), so a tree that was dirty before the run shows only what changed during it. A run that crashed has
no end snapshot: one is taken now, and the page says so. Without git (or with an old transcript), an ACP run's
writes still show, from the transcript's fs_write records. Every git call has a timeout and a failure is a note,
never an error of the report.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cursorpilot.envsnap import snapshot_env, worktree_snapshot
from cursorpilot.report.build import Draft, cut
from cursorpilot.report.model import Changes, FileChange, HeadMove

GIT_TIMEOUT_S = 20.0
STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "type changed"}


def changes(d: Draft, log_dir: Path) -> Changes:
    base = d.started.git if d.started else None
    if not base or not base.get("tree"):
        return _from_transcript(d, "The working directory was not a git work tree when the run started"
                                   if d.started and d.started.cwd else "This transcript records no snapshot of the working tree")
    end, note = (d.finished.git if d.finished else None), ""
    if not end or not end.get("tree"):
        end = worktree_snapshot(base["top"], log_dir / "git-objects", exclude=log_dir)
        note = " The run recorded no end state (it did not finish): its working tree as it is now stands for it."
        if not end:
            return _from_transcript(d, f"git could not read {base['top']} now")
    git = _Git(base["top"], Path(base.get("objects") or log_dir / "git-objects"))
    names = git.run("diff", "--name-status", "-z", "-M", base["tree"], end["tree"])
    numstat = git.run("diff", "--numstat", "-z", "-M", base["tree"], end["tree"])
    if names is None or numstat is None:
        return _from_transcript(d, f"git could not compare the snapshots in {base['top']}")
    files, budget = [], d.caps.diff_total
    entries = _name_status(names)
    counts = _numstat(numstat)
    for status, path, old in entries[: d.caps.files]:
        allowed = min(d.caps.diff_file, budget)
        text = git.run("diff", "-M", "--no-color", "--no-ext-diff", base["tree"], end["tree"], "--", *([old] if old else []), path,
                       limit=allowed + 1) if allowed > 0 else ""
        diff = cut(text or "", max(allowed, 0)) or ""
        budget -= len(diff)
        added, removed = counts.get(path, (None, None))
        files.append(FileChange(path=f"{old} → {path}" if old else path, status=STATUS.get(status[:1], status), added=added,
                                removed=removed, diff=diff, cut=len(text or "") > allowed or allowed <= 0))
    stat = git.run("diff", "--stat=100", "-M", base["tree"], end["tree"]) or ""
    where = base["top"]
    during = f"during the run (its files at the start, on commit {base['commit'][:12]}, against its files at the end)" \
        if base.get("commit") else "during the run"
    left_out = sorted({*(base.get("left_out") or []), *(end.get("left_out") or [])})
    if left_out:
        note += f" Untracked files over 10 MB are not compared: {', '.join(left_out[:5])}."
    if len(entries) > d.caps.files:
        note += f" {len(entries) - d.caps.files} more files changed; the stat lists them all."
    summary = f"{len(entries)} file(s) changed in {where} {during}." if entries else f"No file changed in {where} {during}."
    head = _head_move(git, base.get("commit"), end.get("commit"))
    summary += f" {_moved(head)}" if head is not None else ""
    return Changes(source="git", note=(summary + note).strip(), stat=stat, files=files, files_total=len(entries), head=head)


def _head_move(git: _Git, before: str | None, after: str | None) -> HeadMove | None:
    """HEAD's move during the run, when it moved: the commits it gained and the ones it no longer has (a squash keeps
    every file as it was, and said "No file changed" and nothing else)."""
    if not before or not after or before == after:
        return None
    lists = []
    for span in (f"{before}..{after}", f"{after}..{before}"):
        count = git.run("rev-list", "--count", span)
        shown = git.run("log", "--no-color", "--format=%h %s", "-n", "20", span)
        lists.append((int(count.strip()) if count and count.strip().isdigit() else 0, shown.splitlines() if shown else []))
    (added_total, added), (dropped_total, dropped) = lists
    return HeadMove(before=before, after=after, added=added, dropped=dropped, added_total=added_total, dropped_total=dropped_total)


def _moved(h: HeadMove) -> str:
    said = f"HEAD moved from {h.before[:7]} to {h.after[:7]}"
    if h.added_total and h.dropped_total:
        return (f"{said}: {h.dropped_total} commit(s) were replaced by {h.added_total} (the history was rewritten: a rebase, "
                "an amend or a reset).")
    if h.dropped_total:
        return f"{said}: {h.dropped_total} commit(s) are no longer on it (a reset)."
    if h.added_total:
        return f"{said}: {h.added_total} new commit(s)."
    return f"{said} (git could not compare the two: an old commit may be gone)."


def _from_transcript(d: Draft, why: str) -> Changes:
    files = [FileChange(path=w.path or "?", status="written", added=None, removed=None, diff=cut(w.diff, d.caps.diff_file) or "",
                        cut=len(w.diff or "") > d.caps.diff_file) for w in d.writes]
    if files:
        return Changes(source="transcript", note=f"{why}: the files the agent wrote through the pilot, from the transcript.",
                       stat="", files=files, files_total=len(files))
    return Changes(source="none", note=f"{why}: the files the run changed are not known.", stat="", files=[], files_total=0)


def _name_status(out: str) -> list[tuple[str, str, str | None]]:
    parts, i = out.split("\0"), 0
    out_list: list[tuple[str, str, str | None]] = []
    while i < len(parts) and parts[i]:
        status = parts[i]
        if status[:1] in "RC":
            out_list.append((status, parts[i + 2], parts[i + 1]))
            i += 3
        else:
            out_list.append((status, parts[i + 1], None))
            i += 2
    return out_list


def _numstat(out: str) -> dict[str, tuple[int | None, int | None]]:
    """path -> (added, removed); binary files are (None, None). Renames name the new path."""
    parts, i = out.split("\0"), 0
    counts: dict[str, tuple[int | None, int | None]] = {}
    while i < len(parts) and parts[i]:
        added, removed, path = (parts[i].split("\t", 2) + ["", ""])[:3]
        if not path:  # a rename: the old and new paths follow
            path, i = parts[i + 2], i + 3
        else:
            i += 1
        counts[path] = (int(added), int(removed)) if added.isdigit() and removed.isdigit() else (None, None)
    return counts


class _Git:
    def __init__(self, top: str, objects: Path):
        repo_objects = subprocess.run(["git", "rev-parse", "--git-path", "objects"], cwd=top, capture_output=True, text=True,
                                      timeout=GIT_TIMEOUT_S).stdout.strip() if os.path.isdir(top) else ""
        self.top, self.env = top, snapshot_env(top, objects, os.path.join(top, repo_objects))

    def run(self, *args: str, limit: int | None = None) -> str | None:
        """git's output (the first `limit` characters), or None when it fails."""
        try:
            with subprocess.Popen(["git", "-c", "core.quotepath=off", *args], cwd=self.top, env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL) as proc:
                assert proc.stdout is not None
                data = proc.stdout.read(limit) if limit else proc.stdout.read()
                if limit:
                    proc.kill()
                code = proc.wait(GIT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if code != 0 and not limit:
            return None
        return data.decode("utf-8", "replace")
