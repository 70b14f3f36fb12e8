"""The agent's file system, as the client serves it (`fs/read_text_file`, `fs/write_text_file`): paths resolved with
their symlinks, so that "inside the working directory" means where the bytes land. The pilot decides what may be
read and written (acp/pilot.py); this only reads, diffs and writes."""

from __future__ import annotations

import difflib
import os
from pathlib import Path


class Workspace:
    def __init__(self, cwd: str):
        self.root = os.path.realpath(cwd)

    def resolve(self, path: str) -> Path:
        return Path(path if os.path.isabs(path) else os.path.join(self.root, path)).resolve()

    def inside(self, p: Path) -> bool:
        return os.path.commonpath([str(p), self.root]) == self.root

    @staticmethod
    def read(p: Path, line: int | None, limit: int | None) -> str:
        """The text (undecodable bytes replaced), from line `line` (1-based), at most `limit` lines."""
        text = p.read_text(encoding="utf-8", errors="replace")
        if line is None and limit is None:
            return text
        start = max(0, (line or 1) - 1)
        lines = text.splitlines(keepends=True)
        return "".join(lines[start : start + limit if limit else None])

    def diff(self, p: Path, content: str) -> str:
        """What writing `content` changes, as a unified diff (a new file is all additions), named as git would."""
        old = p.read_text(encoding="utf-8", errors="replace") if p.is_file() else ""
        name = os.path.relpath(p, self.root)
        return "".join(difflib.unified_diff(old.splitlines(keepends=True), content.splitlines(keepends=True), f"a/{name}", f"b/{name}"))

    @staticmethod
    def write(p: Path, content: str) -> None:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")
