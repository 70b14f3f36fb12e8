"""No import circle between the package's modules, counting every import: at any depth, and those under
`if TYPE_CHECKING:` too. import-linter's acyclic contract leaves type-only imports out (pyproject's
exclude_type_checking_imports), and a circle hid there: channels/contract.py -> run_context.py (RunContext) ->
human/humans.py (Humans, for the type checker) -> channels/contract.py (Job). A seam that must be named across the
layers is a Protocol in the lower module (contract.People), never an import upward."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for path in (root / "cursorpilot").rglob("*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imported(path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules `path` imports, at any depth (a package's module by name: `from a import b` is a.b when b
    is a module)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names}
    return out & set(known)


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph, as the path around it, or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node] - {node}):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := walk(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := walk(start, [])):
            return found
    return None


def test_no_module_of_the_package_imports_its_way_back_to_itself_not_even_for_the_type_checker():
    known = modules()
    found = circle({name: imported(path, known) for name, path in known.items()})
    assert found is None, " -> ".join(found or [])


def test_the_check_finds_a_circle_through_a_type_only_import(tmp_path):
    """The mirror: the circle this check was written for, in a package of its own, is found."""
    pkg = tmp_path / "cursorpilot"
    pkg.mkdir()
    (pkg / "contract.py").write_text("from cursorpilot.run_context import RunContext\n")
    (pkg / "run_context.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cursorpilot.humans import Humans\n")
    (pkg / "humans.py").write_text("def ask():\n    from cursorpilot.contract import Job\n")
    known = modules(tmp_path)
    found = circle({name: imported(path, known) for name, path in known.items()})
    assert found is not None and set(found) == {"cursorpilot.contract", "cursorpilot.run_context", "cursorpilot.humans"}
