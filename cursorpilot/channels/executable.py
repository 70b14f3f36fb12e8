"""Why a program file would not start, in the words a user needs, before (and when) exec refuses it.

The kernel answers a failed exec with one errno for several causes: ENOENT for a missing file and for a script whose
`#!` names a missing interpreter; EACCES for a file without its execute bit and for a directory. The user needs the
cause, so it is looked for here, on the file itself. Stdlib only: the preflight (before a run folder exists) and the
PTY driver (a later step's program, started mid-run) both read it.
"""

from __future__ import annotations

import os
import shutil


def shebang(path: str) -> list[str] | None:
    """The interpreter and its argument from a script's `#!` line (None without one, or unreadable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    return line.split(None, 1) if line else []


def problem(path: str) -> str | None:
    """Why exec would refuse this file, or None when nothing is seen to stop it."""
    if os.path.isdir(path):
        return "it is a directory"
    if not os.path.exists(path):
        return "no such file"
    if not os.access(path, os.X_OK):
        return f"it is not executable (no execute permission: chmod +x {path})"
    interp = shebang(path)
    if interp == []:
        return "its #! line names no interpreter"
    if interp:
        name = interp[0]
        if not os.path.exists(name):
            return f"its #! line names an interpreter that does not exist: {name}"
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            return f"its #! line names an interpreter that is not executable: {name}"
        args = interp[1].split() if len(interp) > 1 else []
        if os.path.basename(name) == "env" and args and not args[0].startswith("-") and "=" not in args[0] \
                and shutil.which(args[0]) is None:
            return f"its #! line runs {args[0]!r}, which is not found on PATH"
    return None
