"""`cursor-pilot detect`: replay a recording through the screen and the classifier, offline.

Inputs, by content:
- an asciicast v2 file (`session.cast`): output events with their times, and what was typed;
- raw terminal bytes (`session.raw`, no timing): fed whole, classified once at the end;
- a plain screen text (a `tmux capture-pane -p` file): classified as it stands.

A decision point is where the classification changes: the state, the rule, or the prompt.
Between two output events, the screen is classified as the live loop would be. It is classified
as the events arrive, for working markers, and again once it has been quiet for the gap before the
next output, or for good at the end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.detect.classifier import Classification, Timing, classify
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.profiles import Profile
from cursorpilot.errors import BadInput
from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.channels.pty.screen import TerminalScreen

QUIET_AT_END = 3600.0  # the recording is over: as quiet as it will ever be


@dataclass(frozen=True, slots=True)
class DecisionPoint:
    t: float | None  # seconds into the recording; None when it has no timing
    state: str
    rule_id: str | None
    block: str
    typed: str | None = None  # an input event instead of a classification
    menu: str = ""  # a menu's options and highlight, as read

    def describe(self) -> str:
        when = f"{self.t:9.3f}s" if self.t is not None else "        -"
        if self.typed is not None:
            return f"{when}  typed     {self.typed!r}"
        head = f"{when}  {self.state:<9} {self.rule_id or '-'}"
        if not self.block.strip() or self.state in ("working", "unknown"):
            return head
        text = head + "\n" + "\n".join("            | " + line for line in self.block.rstrip().split("\n"))
        if self.menu:
            text += "\n" + "\n".join("            menu: " + line for line in self.menu.split("\n"))
        return text


@dataclass(frozen=True, slots=True)
class Recording:
    kind: str  # cast | raw | screen
    events: list[tuple[float, str, str]]  # (t, "o"|"i", text) for casts
    data: bytes  # raw bytes, or the screen text
    cols: int
    rows: int
    command: list[str]


def load(path: Path, cols: int = 120, rows: int = 40) -> Recording:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}") from None
    first = data.split(b"\n", 1)[0].strip()
    if first.startswith(b"{"):
        try:
            header = json.loads(first)
            events = [tuple(json.loads(line)) for line in data.split(b"\n")[1:] if line.strip()]
        except ValueError as exc:
            raise BadInput(f"{path}: not an asciicast v2 file ({exc})") from None
        if header.get("version") != 2:
            raise BadInput(f"{path}: asciicast version {header.get('version')!r}; only version 2 is read")
        command = str(header.get("command") or "").split()
        return Recording("cast", [(float(t), str(c), str(x)) for t, c, x in events], b"", int(header.get("width", cols)),
                         int(header.get("height", rows)), command)
    if b"\x1b" in data or b"\r" in data:
        return Recording("raw", [], data, cols, rows, [])
    return Recording("screen", [], data, cols, rows, [])


def decisions(rec: Recording, profile: Profile) -> list[DecisionPoint]:
    if rec.kind == "screen":
        # A capture has no cursor: put it at the end of the last line with text, where a line-mode prompt waits.
        snap = snapshot_from_text(rec.data.decode(errors="replace"), cols=rec.cols, rows=rec.rows, at_line_end=True)
        return [_decision(None, classify(profile, snap, Timing(QUIET_AT_END)))]
    screen = TerminalScreen(rec.cols, rec.rows)
    if rec.kind == "raw":
        screen.feed(rec.data)
        return [_decision(None, classify(profile, screen.snapshot(), Timing(QUIET_AT_END)))]
    out: list[DecisionPoint] = []
    last: tuple | None = None

    def note(t: float, c: Classification) -> None:
        nonlocal last
        if c.state != ScreenKind.SETTLING and c.decision != last:
            last = c.decision
            out.append(_decision(t, c))

    times = [t for t, code, _ in rec.events if code == "o"]
    n = 0  # output events fed so far
    for t, code, text in rec.events:
        if code == "i":
            out.append(DecisionPoint(t, "", None, "", typed=text))
            continue
        if code != "o":
            continue
        n += 1
        screen.feed(text.encode())
        snap = screen.snapshot()
        note(t, classify(profile, snap, Timing(0.0)))  # while output streams: working markers only
        gap = times[n] - t if n < len(times) else QUIET_AT_END
        note(t + min(gap, profile.settle_ms / 1000), classify(profile, snap, Timing(gap)))
    return out


def _decision(t: float | None, c: Classification) -> DecisionPoint:
    return DecisionPoint(t, c.state, c.rule_id, c.block or "", menu=c.menu.describe() if c.menu else "")
