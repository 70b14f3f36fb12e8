"""The rendered terminal: a pyte screen fed every chunk, rendered only on demand.

Decisions are made from what a person would see, not from raw bytes: Ink and
ratatui redraw with cursor-up and erase-line, and raw-stream regexes see ghosts.
Rendering (``display``) costs about a millisecond, so it happens only when a
snapshot is asked for and the screen changed since the last one.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter

import pyte
from pyte.screens import (
    StaticDefaultDict,  # pyte's cached one: the same widths pyte draws with
)

from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.channels.pty import vt
from cursorpilot.channels.pty.drawn import (
    SCROLLBACK_ROWS,
    GuardedScreen,
    highlights,
    is_faint,
    is_styled,
    render_row,
)


class _SkippedRow(StaticDefaultDict):
    """A blank row standing in for a line that was never drawn; it carries the line's text for the scrollback."""

    def __init__(self, default: object, text: str):
        super().__init__(default)
        self.text = text


# requests a terminal answers: cursor position / status, device attributes, XTVERSION, DECRQM, OSC colours
_QUERY = re.compile(rb"\x1b\[(?:[?>=]?[0-9;]*[nc]|>[0-9;]*q|\??[0-9]+\$p)|\x1b\]1[0-2];\?")
_NOT_SGR = re.compile(r"\x1b(?!\[[0-9;]*m)")
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_UNSAFE = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\u1100-\U0010ffff]")
_HEAD_SAFE = bytes(range(0x20, 0x7F)) + b"\r\n\t\b\x07"  # what a skipped line may hold: none of it changes modes
FAST_MIN_CHARS = 64 * 1024  # below this, feed pyte as is
FLUSH_BYTES = 4 * 1024 * 1024  # queued bytes are fed at least this often (bounded memory)


def _skippable(part: bytes) -> bool:
    """Printable ASCII and the controls that only move the cursor: a skipped line changed no mode,
    margin or charset. (pyte's drawing of other controls depends on what the row held before.)"""
    return not part.translate(None, _HEAD_SAFE)


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
        self._screen = GuardedScreen(cols, rows)
        self._stream = pyte.Stream(self._screen)
        # The text arrives decoded, so pyte's UTF-8 flag only makes it drop charset designations (ESC ( 0) and SI/SO.
        # ncurses draws its boxes with the DEC line-drawing set even in a UTF-8 locale, and xterm honours it: dialog's
        # `lqqqk` is `┌───┐` and its `x` is `│`, or a box reads as letters and a `< Yes >` button row as `x <`.
        self._stream.use_utf8 = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._version = 0
        self._cached: Snapshot | None = None
        self._queue: list[bytes] = []  # reads not fed to pyte yet
        self._queued = 0
        self._tail = b""
        self._held = ""  # the start of an escape sequence the filter must see whole (vt.incomplete_tail)
        self._rows: list[str] = []  # rendered rows, right-stripped, kept between snapshots
        self._styled: set[int] = set()  # rows with reverse-video or coloured-background text
        self._styles: dict[int, tuple | None] = {}  # each row's text style
        self._faint: set[int] = set()  # rows whose letters are drawn faint
        self.fast_lines = 0  # lines that took the fast path (for benchmarks)

    def feed(self, data: bytes) -> None:
        """Feed raw bytes. They are queued as they are: nothing is decoded or drawn until a snapshot is asked for."""
        if not data:
            return
        self._queue.append(data)
        self._queued += len(data)
        self._version += 1
        # A query may be split across reads: look at the end of the last read too, but copy nothing
        # unless there is an escape at all (a flood hands over up to 1 MB per read).
        query = (b"\x1b" in data or b"\x1b" in self._tail) and _QUERY.search(self._tail + data)
        self._tail = data[-16:] if len(data) >= 16 else (self._tail + data)[-16:]
        if query:
            self.flush()
        elif self._queued >= FLUSH_BYTES:
            self._trim()

    def _trim(self) -> None:
        """The queue is full: skip what even the scrollback would lose and keep the rest queued (the
        fast path then runs once per snapshot, not once per FLUSH_BYTES), or feed it all."""
        if self._screen.margins is not None or self._queued < FAST_MIN_CHARS:
            self.flush()
            return
        self._queue = self._skip_head(self._queue)
        self._queued = sum(map(len, self._queue))
        if self._queued > FLUSH_BYTES // 2:  # nothing skipped, or the kept lines are long ones
            self.flush()

    def flush(self) -> None:
        if not self._queue:
            return
        chunks, queued = self._queue, self._queued
        self._queue, self._queued = [], 0
        if queued >= FAST_MIN_CHARS and self._screen.margins is None:
            chunks = self._skip_head(chunks)
        text = self._decoder.decode(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        text = self._filtered(self._held + text if self._held else text)
        try:
            if len(text) < FAST_MIN_CHARS or not self._fast(text):
                self._stream.feed(text)
        except Exception as exc:
            self._screen.ignored[f"parser error: {type(exc).__name__}"] += 1

    def _filtered(self, text: str) -> str:
        """Answer the probes pyte misparses, track the keypad mode, and hold back a sequence cut in two."""
        self._held = ""
        if "\x1b" not in text:
            return text
        cut = vt.incomplete_tail(text)
        text, self._held = text[:cut], text[cut:]
        if not vt.needs_filter(text):
            return text
        s = self._screen
        f = vt.filter_text(text, {m >> 5 for m in s.mode if m >= 32})
        s.replies.extend(f.replies)
        s.ignored.update(f.ignored)
        if f.keypad is not None:
            s.keypad_app = f.keypad
        return f.text

    def _skip_head(self, chunks: list[bytes]) -> list[bytes]:
        """Drop the lines of a flood that even the scrollback would lose; returns the reads still to feed.

        Applies when more than SCROLLBACK_ROWS + rows lines follow and the lines before them hold no
        escape or state-changing control: the kept lines alone decide the screen and the scrollback,
        so the lines before them only move the cursor and count as scrolled rows. Skipped bytes are
        never decoded: they cost a count of line feeds and one translate pass.
        (A skipped line longer than the screen is wide counts as one row, not as the rows it wraps to.)
        """
        s = self._screen
        keep = (s.scrollback.maxlen or SCROLLBACK_ROWS) + s.lines
        counts = [c.count(b"\n") for c in chunks]
        n = sum(counts)
        if n <= keep + 1:
            return chunks
        i = next(k for k, c in enumerate(counts) if c)  # the read holding the first line feed
        first = chunks[i].index(b"\n") + 1
        j, need = len(chunks) - 1, keep  # the read where the last `keep` lines begin, and where in it
        while counts[j] < need:
            need -= counts[j]
            j -= 1
        cut = len(chunks[j].rsplit(b"\n", need)[0]) + 1
        head = [chunks[i][first:cut]] if i == j else [chunks[i][first:], *chunks[i + 1 : j], chunks[j][:cut]]
        before_lf = chunks[j][cut - 2] if cut >= 2 else chunks[j - 1][-1]
        if before_lf != 0x0D or not all(map(_skippable, head)):
            return chunks  # an escape or control in the head could change modes, margins or charsets
        self._stream.feed(self._decoder.decode(b"".join([*chunks[:i], chunks[i][:first]])))  # ends the current line the normal way
        h = n - keep  # line feeds: 1 before the head, h in it (its last ends it), keep - 1 after
        y = s.cursor.y
        s.scrolled += max(0, h - (s.lines - 1 - y))
        s.buffer.clear()  # every row on screen now is overwritten or scrolled away by the kept lines
        s.cursor.y, s.cursor.x = min(s.lines - 1, y + h), 0
        s.dirty.update(range(s.lines))
        self.fast_lines += h
        rest = chunks[j][cut:]
        return [rest, *chunks[j + 1 :]] if rest else chunks[j + 1 :]  # no empty read: one before the cut is looked at

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
        if not self._plain_text(text, lines, s.columns) and not self._plain(lines[max(start, 0) + 1 : m + 1], s.columns):
            for i in range(m, max(start, 0), -1):
                if not self._plain([lines[i]], s.columns):
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
        kept = skipped[max(0, m - k - (s.scrollback.maxlen or len(skipped))) : m - k]  # older ones would fall out anyway
        s.scrollback.extend(map(str.rstrip, kept) if "\x1b" not in text else (_SGR.sub("", line).rstrip() for line in kept))
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

    @staticmethod
    def _plain_text(text: str, lines: list[str], columns: int) -> bool:
        """The common case in one pass over the batch: every line of it is plain (see _plain)."""
        flat = text.replace("\r\n", "")  # printable ASCII once every CRLF is gone: no escapes, controls, lone CR/LF
        return flat.isascii() and flat.isprintable() and max(map(len, lines)) <= columns + 1

    @staticmethod
    def _plain(lines: list[str], columns: int) -> bool:
        """Lines that draw as themselves: CRLF-ended, no control or wide characters, no escapes but colours, no wrap."""
        text = "\n".join(lines)
        crlf = text.count("\r\n")
        if crlf != len(lines) - 1 or text.count("\r") != crlf + 1 or not text.endswith("\r") or _UNSAFE.search(text):
            return False
        if "\x1b" in text:
            if _NOT_SGR.search(text):
                return False
            text = _SGR.sub("", text)
        return max(map(len, text.split("\n")), default=0) <= columns + 1  # + the \r

    def scrollback(self) -> list[str]:
        """Rows that scrolled off the top, oldest first, rendered only now (when a prompt is built)."""
        self.flush()
        cols = self._screen.columns
        return [
            row if isinstance(row, str) else row.text if isinstance(row, _SkippedRow) else render_row(row, cols)
            for row in self._screen.scrollback
        ]

    def take_replies(self) -> bytes:
        """Answers to terminal queries (cursor position, device attributes) to write back.

        feed() has already fed pyte any text holding a query, so nothing queued needs an answer.
        """
        if not self._screen.replies:
            return b""
        out = "".join(self._screen.replies).encode()
        self._screen.replies.clear()
        return out

    @property
    def bracketed_paste(self) -> bool:
        """The program asked for pasted text to be bracketed (CSI ? 2004 h)."""
        self.flush()
        return (2004 << 5) in self._screen.mode  # pyte keeps private modes shifted left by 5

    @property
    def app_cursor_keys(self) -> bool:
        """DECCKM (CSI ? 1 h): arrows, Home and End are sent as SS3 (ESC O A), not CSI (ESC [ A)."""
        self.flush()
        return (1 << 5) in self._screen.mode

    @property
    def app_keypad(self) -> bool:
        """DECKPAM (ESC =): the numeric keypad sends application sequences (ESC O p ...)."""
        self.flush()
        return self._screen.keypad_app

    @property
    def ignored(self) -> Counter[str]:
        """Escape sequences ignored so far, by kind (for the transcript)."""
        return self._screen.ignored

    @property
    def version(self) -> int:
        return self._version

    def snapshot(self) -> Snapshot:
        if self._cached is not None and self._cached.version == self._version:
            return self._cached
        self.flush()
        s = self._screen
        rows, styled, faint = self._rows, self._styled, self._faint
        styles = self._styles
        if len(rows) != s.lines:
            rows[:] = [""] * s.lines
            styled.clear()
            faint.clear()
            styles.clear()
            s.dirty.update(range(s.lines))
        for y in s.dirty:  # only rows pyte changed since the last snapshot are rendered again
            if 0 <= y < s.lines:
                rows[y] = render_row(s.buffer[y], s.columns)
                styled.discard(y)
                faint.discard(y)
                has_style, styles[y] = is_styled(s.buffer[y], len(rows[y]))
                if has_style:
                    styled.add(y)
                if is_faint(s.buffer[y], len(rows[y])):
                    faint.add(y)
        s.dirty.clear()
        self._cached = Snapshot(
            lines=tuple(rows),
            cursor_x=s.cursor.x,
            cursor_y=s.cursor.y,
            scrolled=s.scrolled,
            version=self._version,
            styled=highlights(styled, styles),
            cursor_visible=not s.cursor.hidden,
            cols=s.columns,
            faint=frozenset(faint),
        )
        return self._cached

    def resize(self, cols: int, rows: int) -> None:
        self.flush()
        self.cols, self.rows = cols, rows
        self._screen.resize(rows, cols)
        self._version += 1
