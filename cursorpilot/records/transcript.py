"""The transcript: append-only JSONL, one record per line, flushed per line.

It is the record of the run (structlog is only for diagnostics). Every record has
type, seq, ts (UTC ISO), mono (monotonic seconds) and run_id. Strings pass through the
redactor before they are written; a record flagged `secret: true` has its typed text masked first.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cursorpilot.clock import Clock
from cursorpilot.records.redact import Redactor
from cursorpilot.records.secret import mask_secrets

if TYPE_CHECKING:
    from cursorpilot.records.models import Rec as Record


REMEMBERED = {"program_exited"}  # what the run's end needs to know without reading the whole transcript back


class Transcript:
    def __init__(self, path: Path, run_id: str, clock: Clock, redactor: Redactor):
        self.path = path
        self.run_id = run_id
        self._clock = clock
        self._redact = redactor
        self._seq = repair(path)
        self.latest: dict[str, dict[str, Any]] = {}  # the last record of each REMEMBERED type this process wrote
        self._fh = open(path, "a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()  # the read loop, the threads that ask people and the decision page all write here

    def write(self, rec: Record) -> dict[str, Any]:
        """Write a record model declared in records/models.py (`tx.write(R.Kill(reason=..., signal="SIGKILL"))`): its type's
        name and the fields given to it, in the order given; mypy checks each field where the model is built."""
        from cursorpilot.records.models import body, name_of

        with self._lock:
            return self._emit(name_of(rec), body(rec))

    def _emit(self, type_: str, fields: dict[str, Any]) -> dict[str, Any]:
        self._seq += 1
        record = {
            "type": type_,
            "seq": self._seq,
            "ts": self._clock.utcnow().isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "mono": round(self._clock.monotonic(), 4),
            "run_id": self.run_id,
            **self._redact.value(mask_secrets(fields)),  # type: ignore[dict-item]
        }
        if not self._fh.closed:
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()
        if type_ in REMEMBERED:
            self.latest[type_] = record
        return record

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


def repair(path: Path) -> int:
    """Drop a last line torn by a crash (no newline, or not JSON); return the last seq written."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    keep = data if data.endswith(b"\n") else data[: data.rfind(b"\n") + 1]
    lines = keep.splitlines()
    while lines:
        try:
            last = json.loads(lines[-1])
            break
        except json.JSONDecodeError:
            lines.pop()
            keep = b"".join(line + b"\n" for line in lines)
    else:
        last = {}
    if keep != data:
        with open(path, "wb") as fh:
            fh.write(keep)
    return int(last.get("seq", 0))


def read_transcript(path: Path) -> list[Record]:
    """Parse a transcript into typed records (cursorpilot/records/models.py); a last line torn by a crash is dropped, anything
    else torn is an error. (The report streams with records_read.read instead, and forgives more.)"""
    lines = path.read_text(encoding="utf-8").splitlines()
    from cursorpilot.records.reading import parse

    out: list = []
    for i, line in enumerate(lines):
        try:
            out.append(parse(json.loads(line)))
        except (json.JSONDecodeError, ValueError):
            if i == len(lines) - 1:
                break
            raise
    return out
