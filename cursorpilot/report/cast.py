"""The terminal replay: the run's recordings (session.cast, session-02.cast, …) joined into one asciicast for the
embedded player, with the transcript's times mapped onto it so a ledger row can seek to its moment.

Mapping: a step's cast counts from its recorder's start, the transcript from the run's monotonic clock. Every
keys_sent record is one input event of the cast, written together, so the first of each pins the offset exactly;
a step that typed nothing falls back to its program_started (a few milliseconds after the recorder began).
That one-for-one pairing also says which input events were a secret: those are masked here, whatever the
recorder wrote, and the output events pass the report's redactor (a recorder before redaction wrote them in clear). Steps
follow each other after a short gap with a reset and a banner. The joined cast is capped (Caps.cast_bytes): past it the replay stops, and says where.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.records.models import masked
from cursorpilot.records.redact import Redactor, Stream
from cursorpilot.report.build import Draft, StepDraft

GAP_S = 1.0


@dataclass
class Joined:
    text: str  # the asciicast v2 document
    cols: int
    rows: int
    duration: float
    casts: list[str]
    cut: bool
    note: str
    offsets: dict[int, tuple[float, float, float]]  # step -> (replay start, mono at its cast's time 0, its duration)

    def at(self, step: int | None, mono: float) -> float | None:
        """Where a moment of the run is in the replay (None: that step has no recording)."""
        if step not in self.offsets:
            return None
        start, zero, length = self.offsets[step]  # type: ignore[index]
        return round(start + min(max(mono - zero, 0.0), length), 3)


def cast_path(log_dir: Path, step: int) -> Path:
    return log_dir / ("session.cast" if step == 1 else f"session-{step:02d}.cast")


def join(d: Draft, log_dir: Path, redactor: Redactor | None = None) -> Joined:
    budget = d.caps.cast_bytes
    lines: list[str] = []
    cols = rows = 0
    offset, cut, where = 0.0, False, ""
    casts: list = []
    offsets: dict = {}
    for s in sorted(d.steps.values(), key=lambda s: s.n):
        path = cast_path(log_dir, s.n)
        if s.channel != "pty" or not path.is_file():
            continue
        part = _Part(s, path, redactor)
        if part.header is None:
            continue
        cols, rows = max(cols, part.header.get("width", 80)), max(rows, part.header.get("height", 24))
        if casts:
            offset += GAP_S
            banner = f"\x1bc\x1b[7m step {s.n}: {s.name} \x1b[0m\r\n"
            lines.append(json.dumps([round(offset, 6), "o", banner], ensure_ascii=False))
        casts.append(path.name)
        for t, code, data in part.events():
            line = json.dumps([round(offset + t, 6), code, data], ensure_ascii=False)
            if len(line) + 1 > budget:
                cut, where = True, f"{offset + t:.1f} s"
                break
            budget -= len(line) + 1
            lines.append(line)
        zero = part.zero()
        offsets[s.n] = (offset, zero, part.duration)
        offset += part.duration
        if cut:
            break
    header = json.dumps({"version": 2, "width": cols or 80, "height": rows or 24, "title": d.first.run_id if d.first else ""})
    note = "" if casts else _why_none(d)
    if cut:
        note = f"The replay stops at {where}: the recordings are larger than the report embeds ({d.caps.cast_bytes >> 20} MB)."
    return Joined("\n".join([header, *lines]) + "\n", cols or 80, rows or 24, round(offset, 3), casts, cut, note, offsets)


def _why_none(d: Draft) -> str:
    channels = {s.channel for s in d.steps.values()}
    if channels and channels <= {"acp", "shell"}:
        return "No terminal to replay: this run drove its agent over ACP (or ran shell steps); the ledger shows each request."
    return "No terminal recording was found beside the transcript (session.cast)."


class _Part:
    """One step's cast, read line by line, with its input events paired with the step's keys_sent records."""

    def __init__(self, step: StepDraft, path: Path, redactor: Redactor | None = None):
        self.step, self.path, self.redactor = step, path, redactor
        self.header: dict | None = None
        self.first_input: float | None = None
        self.duration = 0.0
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                head = json.loads(fh.readline() or "null")
                self.header = head if isinstance(head, dict) else None
        except (OSError, json.JSONDecodeError):
            self.header = None

    def events(self):
        """The cast's events, its input events paired with keys_sent (a secret's masked) and its output redacted."""
        stream = Stream(self.redactor.text, lambda: self.redactor.longest) if self.redactor is not None else None
        for t, code, data in self._read():
            if code == "o" and stream is not None and isinstance(data, str):
                yield from ((at, "o", piece) for at, piece in stream.feed(t, data))
                continue
            if stream is not None:
                yield from ((at, "o", piece) for at, piece in stream.flush())
            yield t, code, data
        if stream is not None:
            yield from ((at, "o", piece) for at, piece in stream.flush())

    def _read(self):
        inputs = 0
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            fh.readline()
            for line in fh:
                try:
                    t, code, data = json.loads(line)
                    t = float(t)
                except (ValueError, TypeError):
                    continue  # a torn last line, or garbage: skipped
                if code == "i":
                    if self.first_input is None:
                        self.first_input = t
                    if inputs in self.step.secret_keys and isinstance(data, str) and data not in ("\r", "\n"):
                        data = masked(data)
                    inputs += 1
                elif code not in ("o", "r", "m"):
                    continue
                self.duration = max(self.duration, t)
                yield t, code, data

    def zero(self) -> float:
        """The run's monotonic time at this cast's time 0."""
        s = self.step
        if s.first_keys_mono is not None and self.first_input is not None:
            return s.first_keys_mono - self.first_input
        return s.program_mono if s.program_mono is not None else 0.0
