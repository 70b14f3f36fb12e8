"""What ships inside the package: detector profiles, prompt templates, example plans, simulator scenarios, the demo.

The top-level ``detectors/``, ``prompts/`` and ``plans/`` are the source. ``cursorpilot/detectors`` (and the
others) are symlinks to them, which the wheel build follows and copies in: one copy in the checkout, and the
checkout, an editable install and an installed wheel all read the same files, found through importlib.resources.
pexpect needs a real file system anyway, so the files are handed out as paths.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path
from stat import S_ISDIR

KINDS = ("detectors", "prompts", "plans")
DATA_SUFFIXES = (".yaml", ".yml", ".json")


@cache
def folder(kind: str) -> Path:
    """The installed folder of one kind of bundled file (where the package is does not change while it runs; asking
    importlib.resources took a millisecond, once per bundled profile when `--profile auto` chooses one)."""
    return Path(str(files("cursorpilot") / kind))


_listed: dict[tuple[str, tuple[str, ...]], tuple[int, list[Path]]] = {}  # (kind, suffixes) -> (folder's mtime, files)


def listing(kind: str, suffixes: tuple[str, ...] = DATA_SUFFIXES) -> list[Path]:
    """Bundled files of one kind, sorted by name (empty when the folder is missing: a broken install). Listed again
    only when the folder changed (its mtime): a run asked for it at every profile it looked at, nine stats each time,
    and the resident pilot lists it once for all its runs."""
    root = folder(kind)
    try:
        st = os.stat(root)
    except OSError:
        return []
    if not S_ISDIR(st.st_mode):
        return []
    stamp = st.st_mtime_ns
    hit = _listed.get((kind, suffixes))
    if hit is None or hit[0] != stamp:
        hit = _listed[(kind, suffixes)] = (stamp, sorted(p for p in root.iterdir() if p.suffix in suffixes and p.is_file()))
    return list(hit[1])


def find(kind: str, name: str, suffixes: tuple[str, ...] = DATA_SUFFIXES) -> Path | None:
    """A bundled file by its name without suffix (``cursor`` -> detectors/cursor.yaml)."""
    return next((p for p in listing(kind, suffixes) if p.stem == name), None)


SELF = "cursor-pilot"


def self_command(argv: list[str]) -> list[str]:
    """A command whose program is ``cursor-pilot`` runs this very installation (its simulators, say),
    whatever is or is not on PATH: a plan works from an unactivated venv and from a pipx install alike."""
    if argv and argv[0] == SELF:
        return [sys.executable, "-m", "cursorpilot", *argv[1:]]
    return argv


def summary(path: Path, width: int = 110) -> str:
    """What a bundled file is for, from its leading comment (its first sentence): `plans` and `sim --help` list
    them with it, so the description lives in one place, beside what it describes."""
    words: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    for line in lines:
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        words.append(text.rstrip(":"))
        if text.endswith((":", ".")):
            break
    text = " ".join(words)
    text = text.split(". ")[0].rstrip(".")
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
