"""The rendered terminal: a pyte screen fed every chunk, rendered only on demand.

Decisions are made from what a person would see, not from raw bytes: Ink and
ratatui redraw with cursor-up and erase-line, and raw-stream regexes see ghosts.
Rendering (``display``) costs about a millisecond, so it happens only when a
snapshot is asked for and the screen changed since the last one.
"""

from __future__ import annotations

import codecs
import re
from collections import deque
from dataclasses import dataclass

import pyte
from pyte.screens import StaticDefaultDict


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


class _SkippedRow(StaticDefaultDict):
    """A blank row standing in for a line that was never drawn; it carries the line's text for the scrollback."""

    def __init__(self, default: object, text: str):
        super().__init__(default)
        self.text = text


_QUERY = re.compile(r"\x1b\[[?>=]?[0-9;]*[nc]")  # cursor position / status / device attributes requests
_NOT_SGR = re.compile(r"\x1b(?!\[[0-9;]*m)")
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_UNSAFE = re.compile(r"[\x00-\x0c\x0e-\x1a\x1c-\x1f\x7f\u1100-\U0010ffff]")
FAST_MIN_CHARS = 64 * 1024  # below this, feed pyte as is
FLUSH_CHARS = 4 * 1024 * 1024  # queued text is fed at least this often (bounded memory)


class TerminalScreen:
    """Bytes in, rendered screen out.

    Text is queued and fed to pyte when a snapshot is needed (or a terminal query must be
    answered). A big batch of plain lines takes a fast path: lines that would scroll off
    before the batch ends are never drawn; their text goes straight to the scrollback. pyte
    costs about 2 µs per character, so a flood would otherwise be many times slower than the
    program producing it. The rendered screen is the same either way.
    """

    def __init__(self, cols: int = 120, rows: int = 40):
        self.cols, self.rows = cols, rows
        self._screen = _Screen(cols, rows)
        self._stream = pyte.Stream(self._screen)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._version = 0
        self._cached: Snapshot | None = None
        self._queue: list[str] = []
        self._queued = 0
        self.fast_lines = 0  # lines that took the fast path (for benchmarks)

    def feed(self, data: bytes) -> str:
        """Feed raw bytes; returns the decoded text (characters split across reads are joined)."""
        text = self._decoder.decode(data)
        if text:
            self._queue.append(text)
            self._queued += len(text)
            self._version += 1
            if self._queued >= FLUSH_CHARS or ("\x1b" in text and _QUERY.search(text)):
                self.flush()
        return text

    def flush(self) -> None:
        if not self._queue:
            return
        text = "".join(self._queue)
        self._queue.clear()
        self._queued = 0
        if len(text) < FAST_MIN_CHARS or not self._fast(text):
            self._stream.feed(text)

    def _fast(self, text: str) -> bool:
        """Feed a flood of plain lines without drawing those that scroll away. False: not applicable."""
        s = self._screen
        bottom = s.lines - 1
        if s.margins is not None:
            return False
        lines = text.split("\n")
        n = len(lines) - 1  # complete lines (each ended by \n)
        m = n - s.lines  # lines 1..m scroll off before this batch ends
        if m < 1:
            return False
        # The fast part starts after the last line that needs real drawing (escapes, wide text, wrapping),
        # and once the cursor has reached the bottom row (every linefeed then scrolls).
        start = bottom - s.cursor.y - 1  # feeding lines[0..start] and their linefeeds reaches the bottom row
        for i in range(m, max(start, 0), -1):
            line = lines[i]
            if not line.endswith("\r") or _UNSAFE.search(line) or _NOT_SGR.search(line) or len(_SGR.sub("", line)) > s.columns:
                start = i
                break
        if start >= 0:
            self._stream.feed("\n".join(lines[: start + 1]) + "\n")
            lines = lines[start + 1 :]
            m -= start + 1
            if m < 1 or s.cursor.y != bottom:
                self._stream.feed("\n".join(lines))
                return True
        skipped = lines[1 : m + 1]
        self._stream.feed(lines[0] + "\n")
        # Now the cursor is on a blank bottom row. m linefeeds after the skipped lines move every row up by m:
        # the top k rows (k = min(m, bottom)) scroll off, then the first m - k skipped lines do; the last k skipped
        # lines end up just above the (blank) bottom row, as rows that carry their text but draw nothing.
        k = min(m, bottom)
        for y in range(k):
            s.scrollback.append(s.buffer[y])
        for text_line in skipped[: m - k]:
            s.scrollback.append(_SGR.sub("", text_line).rstrip())
        for y in range(bottom - k):
            s.buffer[y] = s.buffer[y + k]
        for i in range(k):
            s.buffer[bottom - k + i] = _SkippedRow(s.default_char, _SGR.sub("", skipped[m - k + i]).rstrip())
        s.scrolled += m
        s.cursor.x = 0
        s.dirty.update(range(s.lines))
        self.fast_lines += m
        self._stream.feed("\n".join(lines[m + 1 :]))
        return True

    def scrollback(self) -> list[str]:
        """Rows that scrolled off the top, oldest first, rendered only now (when a prompt is built)."""
        self.flush()
        cols = self._screen.columns
        return [
            row if isinstance(row, str) else row.text if isinstance(row, _SkippedRow) else "".join(row[x].data for x in range(cols)).rstrip()
            for row in self._screen.scrollback
        ]

    def take_replies(self) -> bytes:
        """Answers to terminal queries (cursor position, device attributes) to write back."""
        self.flush()
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
        self.flush()
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
        self.flush()
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
