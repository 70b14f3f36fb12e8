"""The rendered terminal: a pyte screen fed every chunk, rendered only on demand.

Decisions are made from what a person would see, not from raw bytes: Ink and
ratatui redraw with cursor-up and erase-line, and raw-stream regexes see ghosts.
Rendering (``display``) costs about a millisecond, so it happens only when a
snapshot is asked for and the screen changed since the last one.
"""

from __future__ import annotations

import codecs
from collections import deque
from dataclasses import dataclass

import pyte


@dataclass(slots=True, frozen=True)
class Snapshot:
    lines: tuple[str, ...]  # every row, right-stripped
    cursor_x: int
    cursor_y: int
    scrolled: int  # rows that have scrolled off the top since the start
    version: int  # increases with every change; equal versions mean equal screens

    @property
    def cursor_text(self) -> str:
        """Text left of the cursor on its row: a line-mode prompt waits here."""
        row = self.lines[self.cursor_y] if self.cursor_y < len(self.lines) else ""
        return row[: self.cursor_x]

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n")


class _Screen(pyte.Screen):
    """pyte screen that counts scrolled rows and queues replies to terminal queries."""

    def __init__(self, cols: int, rows: int):
        super().__init__(cols, rows)
        self.scrolled = 0
        self.replies: list[str] = []
        self.scrollback: deque = deque(maxlen=SCROLLBACK_ROWS)

    def index(self) -> None:
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:
            self.scrolled += 1
            self.scrollback.append(self.buffer[top])  # keep the row object; O(1), rendered on demand
        super().index()

    def write_process_input(self, data: str) -> None:
        self.replies.append(data)

    def report_device_status(self, mode: int, **kwargs: object) -> None:  # type: ignore[override]
        # pyte passes private=True for "CSI ? 6 n"; answer both forms.
        super().report_device_status(mode)


SCROLLBACK_ROWS = 2000  # rows kept after they scroll off the top, for the LLM's "earlier output"


class TerminalScreen:
    def __init__(self, cols: int = 120, rows: int = 40):
        self.cols, self.rows = cols, rows
        self._screen = _Screen(cols, rows)
        self._stream = pyte.Stream(self._screen)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._version = 0
        self._cached: Snapshot | None = None

    def feed(self, data: bytes) -> str:
        """Feed raw bytes; returns the decoded text (characters split across reads are joined)."""
        text = self._decoder.decode(data)
        if text:
            self._stream.feed(text)
            self._version += 1
        return text

    def scrollback(self) -> list[str]:
        """Rows that scrolled off the top, oldest first, rendered only now (when a prompt is built)."""
        cols = self._screen.columns
        return ["".join(row[x].data for x in range(cols)).rstrip() for row in self._screen.scrollback]

    def take_replies(self) -> bytes:
        """Answers to terminal queries (cursor position, device attributes) to write back."""
        if not self._screen.replies:
            return b""
        out = "".join(self._screen.replies).encode()
        self._screen.replies.clear()
        return out

    @property
    def version(self) -> int:
        return self._version

    def snapshot(self) -> Snapshot:
        if self._cached is not None and self._cached.version == self._version:
            return self._cached
        s = self._screen
        self._cached = Snapshot(
            lines=tuple(line.rstrip() for line in s.display),
            cursor_x=s.cursor.x,
            cursor_y=s.cursor.y,
            scrolled=s.scrolled,
            version=self._version,
        )
        return self._cached

    def resize(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self._screen.resize(rows, cols)
        self._version += 1


def snapshot_from_text(text: str, cursor: tuple[int, int] | None = None, cols: int = 120, rows: int = 40) -> Snapshot:
    """A snapshot of a plain-text screen (a capture file); cursor defaults to after the last non-blank row."""
    lines = [line.rstrip() for line in text.split("\n")][:rows]
    lines += [""] * (rows - len(lines))
    if cursor is None:
        last = max((i for i, line in enumerate(lines) if line.strip()), default=0)
        cursor = (0, min(last + 1, rows - 1))
    return Snapshot(tuple(lines), cursor[0], cursor[1], 0, 0)
