"""The transcript's record types are declared once (cursorpilot/records.py): every writer uses them, every reader
reads through them, and the docs are generated from them.

Writers that build the models (`tx.write(R.Kill(...))`, `Record(R.Answer(...))`) are checked by mypy; the scan below
checks the writers that still pass a type's name and a dict (`tx.emit("kill", ...)`, `Record("answer", {...})`), and
counts both kinds for "every declared type is written somewhere". It goes when no writer passes strings any more."""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cursorpilot import records, records_read

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cursorpilot"
# emit() calls whose type is not a literal: the PTY loop writes the pilot's Record effects, scanned as Record(...) below
DYNAMIC_EMITS = {"host.py": 1,  # (the host and the loops write their pilot's Records)
                 "transcript.py": 1}  # (Transcript.write: a model's type and fields)
MODELS = {cls.__name__: name for name, cls in records.TYPES.items()}


@dataclass
class Site:
    where: str
    type: str
    fields: set[str]
    typed: bool = False  # a record model built (R.Kill(...)): mypy checks its fields


def _model(node: ast.AST) -> str | None:
    """The record type a declared model names, `R.Kill` (records imported as R), built there or picked there to be built."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("R", "records"):
        return MODELS.get(node.attr)
    return None


def _functions(tree: ast.AST) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _dict_keys(node: ast.AST) -> set[str] | None:
    """The literal keys of a dict display; a `**part` in it adds the keys of a literal part, and an open one (fields a
    channel passes through, `**a.extra`) is left to the runtime check every test's transcript gets (conftest.py)."""
    if isinstance(node, ast.Dict) and all(k is None or isinstance(k, ast.Constant) for k in node.keys):
        keys = {k.value for k in node.keys if k is not None}  # type: ignore[union-attr]
        for k, v in zip(node.keys, node.values):
            if k is None:
                keys |= _dict_keys(v) or set()
        return keys
    if isinstance(node, ast.IfExp):
        a, b = _dict_keys(node.body), _dict_keys(node.orelse)
        return None if a is None or b is None else a | b
    return None


def _constants(node: ast.AST) -> list[str] | None:
    """A literal type, or each branch of `"a" if c else "b"`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        a, b = _constants(node.body), _constants(node.orelse)
        return None if a is None or b is None else a + b
    return None


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def scan() -> tuple[list[Site], dict[str, int], list[str]]:
    """Every record the package writes: emit("type", ...) and the pilot's Record("type", {...}), with its fields."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}
    calls_by_name: dict[str, list[ast.Call]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called_name(node):
                calls_by_name.setdefault(_called_name(node), []).append(node)  # type: ignore[arg-type]
    sites, dynamic, unresolved = [], {}, []
    for path, tree in trees.items():
        rel = str(path.relative_to(PACKAGE))
        functions = _functions(tree)
        for fn in functions.values():
            for node in ast.walk(fn):
                if (model := _model(node)) is not None and rel != "records.py":
                    sites.append(Site(f"{rel}:{node.lineno}", model, set(), typed=True))
                    continue
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                name = _called_name(node)
                first = node.args[0]
                if name == "Record" and isinstance(first, ast.Constant) and len(node.args) == 2:
                    keys = _dict_keys(node.args[1])
                    if keys is None:
                        unresolved.append(f"{rel}:{node.lineno} Record fields are not a dict literal")
                        continue
                    sites.append(Site(f"{rel}:{node.lineno}", first.value, keys))
                    continue
                if name != "emit" or not isinstance(node.func, ast.Attribute):
                    continue
                types = _constants(first)
                if types is None:
                    dynamic[rel] = dynamic.get(rel, 0) + 1
                    continue
                fields: set[str] = set()
                for kw in node.keywords:
                    if kw.arg is not None:
                        fields.add(kw.arg)
                        continue
                    keys = _dict_keys(kw.value)
                    if keys is None and isinstance(kw.value, ast.Name) and fn.args.kwarg and kw.value.id == fn.args.kwarg.arg:
                        # **extra forwarded from the enclosing function: the keywords its callers pass
                        keys = {k.arg for c in calls_by_name.get(fn.name, []) for k in c.keywords if k.arg}
                    elif keys is None and isinstance(kw.value, ast.Call) and _called_name(kw.value) in functions:
                        # **self.helper(...): the keys of the dicts that helper returns
                        helper = functions[_called_name(kw.value)]  # type: ignore[index]
                        returned = [_dict_keys(r.value) for r in ast.walk(helper) if isinstance(r, ast.Return) and r.value]
                        keys = set().union(*returned) if returned and None not in returned else None
                    if keys is None:
                        unresolved.append(f"{rel}:{node.lineno} **{ast.unparse(kw.value)} can't be resolved statically")
                    else:
                        fields |= keys
                sites += [Site(f"{rel}:{node.lineno}", t, fields) for t in types]
    return sites, dynamic, unresolved


def test_every_emitted_record_uses_a_declared_type_with_declared_fields():
    sites, dynamic, unresolved = scan()
    assert len(sites) > 60, "the scan found too few writers: it is broken"
    assert unresolved == []
    assert dynamic == DYNAMIC_EMITS
    sites = [s for s in sites if not s.typed]  # (mypy checks those)
    wrong = [f"{s.where}: unknown record type {s.type!r}" for s in sites if s.type not in records.TYPES]
    wrong += [f"{s.where}: {s.type} has undeclared field(s) {sorted(s.fields - records_read.fields_of(s.type))}"
              for s in sites if s.type in records.TYPES and s.fields - records_read.fields_of(s.type)]
    assert wrong == [], "declare them in cursorpilot/records.py (and regenerate docs/records.md)"


def test_every_declared_type_is_written_somewhere():
    sites, _, _ = scan()
    assert sorted(set(records.TYPES) - {s.type for s in sites}) == []


def test_the_scan_catches_an_undeclared_field(tmp_path, monkeypatch):
    """The check can fail: a writer with a made-up field and one with a made-up type are both reported."""
    fake = tmp_path / "cursorpilot"
    fake.mkdir()
    (fake / "m.py").write_text("def f(tx):\n    tx.emit('answer', reply='y', colour='red')\n    tx.emit('answr', reply='y')\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    sites, _, _ = scan()
    assert [(s.type, sorted(s.fields - records_read.fields_of(s.type)) if s.type in records.TYPES else None) for s in sites] == [
        ("answer", ["colour"]), ("answr", None)]


def test_an_old_or_newer_record_is_read_without_a_crash():
    base = {"seq": 1, "ts": "2026-01-01T00:00:00.000Z", "mono": 1.0, "run_id": "r"}
    newer = records_read.parse({**base, "type": "answer", "reply": "y", "colour": "red"})
    assert isinstance(newer, records.Answer) and newer.reply == "y" and newer.model_extra == {"colour": "red"}
    old = records_read.parse({**base, "type": "answer"})  # fields missing: None
    assert isinstance(old, records.Answer) and old.reply is None
    misfit = records_read.parse({**base, "type": "answer", "n": "not a number"})
    assert type(misfit) is records.Rec and misfit.type == "answer"
    unknown = records_read.parse({**base, "type": "from_the_future", "x": 1})
    assert type(unknown) is records.Rec and unknown.model_extra == {"x": 1}
    with pytest.raises(ValueError):
        records_read.parse({"type": "answer"})


def test_a_secret_is_masked_when_read_even_if_written_in_clear():
    base = {"seq": 1, "ts": "t", "mono": 1.0, "run_id": "r"}
    clear = records_read.parse({**base, "type": "keys_sent", "keys": "hunter2", "data": "hunter2", "hex": "68756e74657232", "secret": True})
    assert "hunter2" not in clear.model_dump_json() and "68756e74657232" not in clear.model_dump_json()
    assert clear.data == records.masked("hunter2") and clear.data.startswith("•••••• (7 chars, hmac:")
    enter = records_read.parse({**base, "type": "keys_sent", "keys": "<enter>", "data": "\r", "hex": "0d", "secret": True})
    assert enter.keys == "<enter>"
    already = records.masked("hunter2")
    assert records_read.parse({**base, "type": "answer", "reply": already, "secret": True}).reply == already  # not masked twice


def test_reading_a_crashed_transcript_drops_only_the_torn_last_line(tmp_path):
    path = tmp_path / "transcript.jsonl"
    good = {"type": "step_started", "seq": 1, "ts": "t", "mono": 1.0, "run_id": "r", "step": 1}
    path.write_text(json.dumps(good) + "\n" + "garbage\n" + json.dumps({**good, "seq": 3}) + "\n" + '{"type": "answ')
    stats = records_read.ReadStats()
    assert [r.seq for r in records_read.read(path, stats)] == [1, 3]
    assert (stats.lines, stats.bad_lines, stats.torn_last) == (4, 1, True)


def test_docs_records_md_is_generated_from_the_declarations():
    assert (ROOT / "docs" / "records.md").read_text(encoding="utf-8") == records_read.markdown(), (
        "regenerate: python -c 'from cursorpilot import records_read; print(records_read.markdown(), end=\"\")' > docs/records.md")


def test_the_docs_name_every_record_type():
    readme = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+)`", readme))
    assert sorted(set(records.TYPES) - named) == []
