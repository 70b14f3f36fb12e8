"""Reading transcripts through the record declarations (records/models.py): forgiving for readers (the report, learn), strict
for the tests (`problems`), and `docs/records.md` generated from the declarations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cursorpilot.records.models import COMMON, TYPES, Rec, mask_secrets


def parse(obj: dict[str, Any]) -> Rec:
    """One record, typed by its declaration; forgiving (see the module's docstring). Raises ValueError only when even
    the five common fields are missing."""
    obj = mask_secrets(obj)
    if any(k not in obj for k in COMMON):
        raise ValueError("not a transcript record: Field required")
    cls = TYPES.get(obj.get("type"))  # type: ignore[arg-type]
    if cls is not None:
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            missing = [e["loc"][0] for e in exc.errors() if e["type"] == "missing" and len(e["loc"]) == 1]
            if len(missing) == len(exc.errors()):  # written by an older version, before its field was given everywhere
                try:
                    return cls.model_validate({**dict.fromkeys(missing), **obj})
                except ValidationError:
                    pass
    try:
        return Rec.model_validate(obj)
    except ValidationError as exc:
        raise ValueError(f"not a transcript record: {exc.errors()[0]['msg']}") from None


def problems(obj: dict[str, Any]) -> list[str]:
    """What a record written by this version does wrong against its declaration: the strict check tests run."""
    cls = TYPES.get(obj.get("type"))  # type: ignore[arg-type]
    if cls is None:
        return [f"unknown record type {obj.get('type')!r}"]
    missing = [f"{obj['type']}: {k}: Field required" for k in COMMON if k not in obj]
    if missing:
        return missing
    try:
        rec = cls.model_validate(obj)
    except ValidationError as exc:
        return [f"{obj['type']}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return [f"{obj['type']}: undeclared field {k!r}" for k in (rec.model_extra or {})]


def fields_of(type_name: str) -> set[str]:
    """The field names a type declares, as written in the transcript (`from`, not `from_`)."""
    cls = TYPES[type_name]
    return {f.alias or k for k, f in cls.model_fields.items()}


@dataclass
class ReadStats:
    """What reading a transcript met besides good records."""

    lines: int = 0
    bad_lines: int = 0  # not JSON, or not a record, before the last line
    torn_last: bool = False  # the last line is torn (a crash mid-write)
    misfits: int = 0  # a known type whose shape did not fit its declaration
    unknown: dict[str, int] = field(default_factory=dict)  # types this version does not know, counted


def read(path: Path, stats: ReadStats | None = None) -> Iterator[Rec]:
    """Stream a transcript's records, line by line (bounded memory, whatever its size). A garbled line is counted in
    `stats` and skipped, never an error; a last line torn by a crash (no newline, or not a record) is dropped, as
    transcript.repair drops it: a crashed run's transcript is read up to where it stopped."""
    stats = stats if stats is not None else ReadStats()
    previous: str | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            stats.lines += 1
            if previous is not None:
                rec = _one(previous, stats)
                if rec is not None:
                    yield rec
            previous = line
    if previous is not None:
        rec = _one(previous, stats, last=True) if previous.endswith("\n") else None
        if rec is None:
            stats.torn_last = True
        else:
            yield rec


def _one(line: str, stats: ReadStats, last: bool = False) -> Rec | None:
    try:
        obj = json.loads(line)
        rec = parse(obj) if isinstance(obj, dict) else None
    except (json.JSONDecodeError, ValueError):
        rec = None
    if rec is None:
        if not last:
            stats.bad_lines += 1
        return None
    if type(rec) is Rec:
        if rec.type in TYPES:
            stats.misfits += 1
        else:
            stats.unknown[rec.type] = stats.unknown.get(rec.type, 0) + 1
    return rec


def markdown() -> str:
    """docs/records.md: every type, what it means and its fields (generated; a test keeps it equal)."""
    out = ["# Transcript records", "",
           "<!-- generated from cursorpilot/records/models.py: python -c 'from cursorpilot.records import reading; "
           "print(reading.markdown(), end=\"\")' > docs/records.md -->", "",
           "`transcript.jsonl` holds one JSON object per line. Every record has `type`, `seq` (1, 2, …), `ts` (UTC, ISO 8601), "
           "`mono` (monotonic seconds) and `run_id`; the other fields depend on the type and may be absent or null. "
           "Readers ignore fields they do not know.", ""]
    for name, cls in TYPES.items():
        doc = " ".join((cls.__doc__ or "").split())
        names = [f"`{f.alias or k}` ({_type_name(f.annotation)})" for k, f in cls.model_fields.items() if k not in COMMON]
        out += [f"## `{name}`", "", doc, "", f"Fields: {', '.join(names) or '(only the common ones)'}.", ""]
    return "\n".join(out)


def _type_name(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace(" | None", "").replace("NoneType", "null")


class Tail:
    """The complete lines a file gained since the last read (a line still being written waits for its end)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.partial = b""

    def read(self) -> list[dict]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        out = []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out
