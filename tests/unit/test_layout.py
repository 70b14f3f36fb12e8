"""The house's shape, checked: docs/internals.md's layout names every module where it is (and none that is not), the
root of cursorpilot/ keeps at most 16 modules (what the whole program shares), no module is over 400 lines and no
function over 60. A module added, moved or gone fails here until it is said in the layout."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cursorpilot"
MAX_ROOT, MAX_LINES, MAX_FUNCTION = 16, 400, 60
NOT_OURS = {"tests/", "bench/", "docs/"}  # paths the layout names that are not modules of a folder


def layout(text: str) -> dict[str, set[str]]:
    """The modules the layout section names, by folder: each bullet opens with its folder and names its modules."""
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n(?=- `)", section)
    out: dict[str, set[str]] = {}
    for bullet in bullets:
        head = re.match(r"- `([\w/]+/)`", bullet)
        if head is None:
            continue
        folder = head.group(1).removeprefix("cursorpilot/")
        named = {m for m in re.findall(r"`([\w/]+\.py)`", bullet) if not m.startswith(tuple(NOT_OURS))}
        out.setdefault(folder, set()).update(named)
    return out


def modules(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}


def test_the_layout_names_every_module_where_it_is():
    said = layout((ROOT / "docs" / "internals.md").read_text(encoding="utf-8"))
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    for folder in folders:
        rel = "" if folder == PACKAGE else folder.relative_to(PACKAGE).as_posix() + "/"
        if not modules(folder):
            continue  # a package of files only (demo/)
        assert rel in said, f"docs/internals.md's layout has no bullet for `{rel or 'cursorpilot/'}`"
        here = modules(folder)
        assert not here - said[rel], f"{rel or 'cursorpilot/'}: not in the layout: {sorted(here - said[rel])}"
        assert not said[rel] - here, f"{rel or 'cursorpilot/'}: the layout names what is not there: {sorted(said[rel] - here)}"


def test_the_check_reads_a_layout_as_it_is_written():
    """The check itself can fail: a module the layout forgets, or one it names in the wrong folder."""
    text = "# x\n\n## Layout\n\n- `cursorpilot/`: `cli.py`, `ui.py`.\n- `startup/`: `start.py` and `gone.py`.\n\n## Next\n"
    assert layout(text) == {"": {"cli.py", "ui.py"}, "startup/": {"start.py", "gone.py"}}


def test_the_root_keeps_what_the_whole_program_shares():
    assert len(modules(PACKAGE) | {"__init__.py"}) <= MAX_ROOT, sorted(modules(PACKAGE))


def test_no_module_over_400_lines_no_function_over_60():
    long_modules, long_functions = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        if len(text.splitlines()) > MAX_LINES:
            long_modules.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION:
                long_functions.append(f"{rel}:{node.lineno} {node.name}")
    assert not long_functions, long_functions
    assert not long_modules, long_modules
