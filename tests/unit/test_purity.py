"""The purity contract as an allow-list: a pure module (a pilot and what it leans on) imports only what is listed here.

import-linter's contract says what they may not import; this says what they may, so that asyncio, a clock, a file or a
socket can't slip into a pilot under a name nobody thought to forbid. The imports are read from the source (every
`import`, at any depth), not by importing the modules."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

def pure_core(root: Path = ROOT) -> list[str]:
    """The pure core, as pyproject.toml's import contract `pure-core` lists it: the one list (.ci/types reads it too)."""
    with open(root / "pyproject.toml", "rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    return next(c["source_modules"] for c in contracts if c.get("id") == "pure-core")


PURE = pure_core()
STDLIB = {"__future__", "abc", "re", "dataclasses", "enum", "typing", "collections", "collections.abc", "functools", "itertools", "hashlib",
          "json", "math", "string", "html", "shlex",  # shlex: a command's text into its words
          "datetime"}  # dates computed from the times the loops give (a fact's `wall`): no module here calls now()
# Modules of the project a pure module may use besides the pure ones, and why they do no harm there.
LEANED_ON = {
    "cursorpilot.errors": "the exit codes: an IntEnum",
    "cursorpilot.keys": "the reply grammar: text to bytes, no terminal",
    "cursorpilot.records.secret": "how a secret is shown (its length and a hash), told and named: text in, text out",
    "cursorpilot.decide.policy": "the deny policy: a function of a text and the working directory's path (os.path only, no file read)",
    "cursorpilot.detect.profiles": "the profile models the pilots read (loading them from files is the loop's business)",
    "cursorpilot.providers.base": "the provider's request and reply types (dataclasses and a Protocol: calling one is the loop's business)",
    "cursorpilot.records.models": "the transcript's record models a pilot builds its Record effects from (declarations: writing them is the loop's business)",
}
ALLOWED = STDLIB | set(PURE) | set(LEANED_ON)


def imports(module: str, root: Path = ROOT) -> set[str]:
    path = root / (module.replace(".", "/") + ".py")
    assert path.exists(), f"{module}: no such module (renamed? update the list)"
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{module}: relative import"
            for alias in node.names:  # `from cursorpilot.channels.acp import ask` imports the module cursorpilot.channels.acp.ask
                sub = f"{node.module}.{alias.name}"
                out.add(sub if (root / (sub.replace(".", "/") + ".py")).exists() else node.module)
    return out


def test_pure_modules_import_only_what_the_allow_list_names():
    strays = {m: sorted(imports(m) - ALLOWED) for m in PURE}
    assert not {m: s for m, s in strays.items() if s}, strays


def test_the_type_check_reads_the_same_pure_core():
    """.ci/types holds the pure core to zero mypy errors: the same modules, read from the same list."""
    import types
    from importlib.machinery import SourceFileLoader

    ci_types = types.ModuleType("ci_types")
    ci_types.__file__ = str(ROOT / ".ci" / "types")
    SourceFileLoader("ci_types", ci_types.__file__).exec_module(ci_types)
    assert sorted(ci_types.pure_core_paths()) == sorted(m.replace(".", "/") + ".py" for m in PURE)
    assert all((ROOT / path).is_file() for path in ci_types.pure_core_paths())


def test_the_allow_list_catches_a_stray_import(tmp_path):
    """The check itself can fail: a pilot that reaches for asyncio or the clock, even inside a function, is caught."""
    for module, text in (("channels/acp/pilot", "import asyncio\nfrom cursorpilot.decide import question\ndef f():\n    from time import monotonic\n"),
                         ("decide/question", "")):
        (tmp_path / "cursorpilot" / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "cursorpilot" / f"{module}.py").write_text(text)
    assert imports("cursorpilot.channels.acp.pilot", tmp_path) - ALLOWED == {"asyncio", "time"}
