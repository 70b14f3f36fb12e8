"""The paths a tool call removes or overwrites, resolved against the disk: the user's words name things by their
place in the project, and a call may name the same thing as `./x`, `/abs/x`, `a/../x`, a link to it, or a glob.

Each touched path is shown in every form the user's words could name it by: relative to the project and absolute,
as written (links kept) and through its links (`os.path.realpath`), a glob by what it matches now. A folder a call
removes is read too (`inside`, at most LIMIT entries): `rm -rf tests` removes `tests/fixtures`, which a prohibition
may name; those entries may only forbid, never grant (hooks/verdict.py), so a grant of `build` does not reach a
`src` that holds a `build` folder.
"""

from __future__ import annotations

import glob
import os
import tempfile

from cursorpilot.hooks.acts import Target
from cursorpilot.hooks.calls import HOOK_FILES

LIMIT = 5000  # entries read inside a removed folder; past it the call is asked about, not decided
_GLOB = set("*?[")


def resolve(touches: tuple[tuple[str, str], ...], cwd: str, root: str, home: str | None,
            guarded: tuple[str, ...] = ()) -> tuple[Target, ...]:
    """Each touched path (a glob: each path it matches), in every form, with what a removed folder holds; `guarded`: the
    files the hook stands on besides the agents' settings in the project (the prompt or policy file it reads)."""
    base = os.path.abspath(cwd or root or ".")
    roots = tuple(dict.fromkeys((os.path.abspath(root or base), os.path.realpath(root or base))))
    stands_on = {os.path.realpath(p) for p in (*guarded, *(os.path.join(roots[-1], f) for f in HOOK_FILES))}
    temp = os.path.realpath(tempfile.gettempdir())
    out: list[Target] = []
    room = LIMIT
    for act, named in touches:
        for path in expanded(named, base, home):
            real = os.path.realpath(path)
            forms: list[str] = []
            for form in dict.fromkeys((path, real)):
                rel = relative(form, roots)
                forms += [rel, form] if rel is not None else [form]
            inside: list[str] = []
            truncated = act != "overwrite" and os.path.isdir(real) and _read(real, roots, inside, room)
            room -= len(inside)
            where = relative(real, roots)
            outside = where is None and not (act == "overwrite" and relative(real, (temp,)) not in (None, "."))
            guard = next((g for g in stands_on if real == g or g.startswith(real.rstrip("/") + "/") and os.path.exists(g)), None)
            out.append(Target(act, tuple(dict.fromkeys(forms)), tuple(inside), truncated, outside, where == ".", guard))
    return tuple(out)


def expanded(named: str, cwd: str, home: str | None) -> list[str]:
    """The absolute paths a word names: `~` and `$HOME` expanded, against the working directory, a glob by its matches
    (itself when it matches nothing)."""
    word = named
    if home:
        for head in ("~/", "$HOME/", "${HOME}/"):
            if word.startswith(head):
                word = os.path.join(home, word[len(head):])
        if word in ("~", "$HOME", "${HOME}"):
            word = home
    path = os.path.normpath(os.path.join(cwd, word))
    if _GLOB & set(word):
        matches = sorted(glob.glob(path, include_hidden=True))[:1000]
        return [os.path.normpath(m) for m in matches] or [path]
    return [path]


def relative(path: str, roots: tuple[str, ...]) -> str | None:
    """The path relative to the project ("." for the project itself), or None outside it."""
    for root in roots:
        if path == root:
            return "."
        if path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1:]
    return None


def _read(folder: str, roots: tuple[str, ...], out: list[str], room: int) -> bool:
    """What lies inside a folder (each entry's path relative to the project, or absolute), up to `room` entries; True
    when there was more."""
    for top, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            if room <= 0:
                return True
            full = os.path.join(top, name)
            out.append(relative(full, roots) or full)
            room -= 1
    return False
