"""The rendered terminal: a pyte screen fed every chunk, rendered only on demand.

Decisions are made from what a person would see, not from raw bytes: Ink and
ratatui redraw with cursor-up and erase-line, and raw-stream regexes see ghosts.
Rendering (``display``) costs about a millisecond, so it happens only when a
snapshot is asked for and the screen changed since the last one.
"""

from __future__ import annotations

import codecs
import inspect
import re
from collections import Counter, deque

import pyte
from pyte import modes as mo
from pyte.screens import wcwidth  # pyte's cached one: the same widths pyte draws with
from pyte.screens import StaticDefaultDict

from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.pty import vt


def _render_row(line: dict, columns: int) -> str:
    """One row as text, right-stripped: what pyte's Screen.display gives for it."""
    text = "".join([line[x].data for x in range(columns)])
    if len(text) == columns and text.isascii():
        return text.rstrip()
    out, skip = [], False
    for x in range(columns):  # wide characters: the cell after one is its stub, never shown
        if skip:
            skip = False
            continue
        data = line[x].data
        out.append(data)
        skip = bool(data) and wcwidth(data[0]) == 2
    return "".join(out).rstrip()


def _is_styled(line: dict, width: int) -> tuple[bool, tuple | None]:
    """Text in reverse video, on a background colour, or all of it in one foreground colour: how menus
    with no marker character show the highlighted row. Also the row's text style (reverse, bg, fg of most of its
    letters), so that a dialog painted on a background colour (newt, dialog) does not make every row a highlight."""
    cells = [c for c in (line[x] for x in range(width)) if c.data.strip()]
    letters = [c for c in cells if c.data.isalnum()]
    style = Counter((c.reverse, c.bg, c.fg) for c in letters).most_common(1)[0][0] if letters else None
    if any(c.reverse or c.bg not in _PLAIN_BG for c in cells):
        return True, style
    return bool(cells) and cells[0].fg not in _PLAIN_FG and all(c.fg == cells[0].fg for c in cells), style


def _is_faint(line: dict, width: int) -> bool:
    """Most of the row's letters are faint (kept in `blink`: `_Screen.select_graphic_rendition`)."""
    letters = [c for c in (line[x] for x in range(width)) if c.data.isalnum()]
    return bool(letters) and sum(c.blink for c in letters) * 2 > len(letters)


def _highlights(styled: set[int], styles: dict[int, tuple | None]) -> frozenset[int]:
    """The styled rows, less those in the style most text rows share when that style is itself a colour: on a
    whiptail dialog every row is on a white background, and only the chosen item is on red."""
    common = Counter(v for v in styles.values() if v is not None).most_common(1)
    if not common:
        return frozenset(styled)
    reverse, bg, _ = common[0][0]
    if not reverse and bg in _PLAIN_BG:
        return frozenset(styled)
    return frozenset(y for y in styled if styles.get(y) is not None and styles.get(y) != common[0][0])


# ncurses paints everything white on black once it starts colours: that is the screen, not a highlight
_PLAIN_BG = {"default", "black"}
_PLAIN_FG = {"default", "white"}


class _Cells(dict):
    """Cells (immutable pyte Chars) for one set of attributes, made once per character."""

    def __init__(self, attrs: pyte.screens.Char):
        super().__init__()
        self.attrs = attrs

    def __missing__(self, ch: str) -> pyte.screens.Char:
        cell = self[ch] = self.attrs._replace(data=ch)
        return cell


_LATIN1 = pyte.charsets.LAT1_MAP  # G0 as a terminal starts: a drawn character is itself
_ALT_SCREEN = (47, 1047, 1049)


class _Screen(pyte.Screen):
    """pyte screen that counts scrolled rows and queues replies to terminal queries."""

    def __init__(self, cols: int, rows: int):
        super().__init__(cols, rows)
        self.scrolled = 0
        self.replies: list[str] = []
        self.scrollback: deque = deque(maxlen=SCROLLBACK_ROWS)
        self._cells: dict[object, _Cells] = {}
        self.ignored: Counter[str] = Counter()  # sequences ignored: unsupported, private forms, bad arguments
        self.keypad_app = False  # DECKPAM (ESC =) is on

    def draw(self, data: str) -> None:
        """Printable ASCII that fits on the row: the cells pyte would make, without a namedtuple copy per character."""
        cursor = self.cursor
        if (
            self.charset or self.g0_charset is not _LATIN1 or not data.isascii() or not data.isprintable()
            or cursor.x + len(data) > self.columns or mo.IRM in self.mode
        ):
            super().draw(data)
            return
        cells = self._cells.get(cursor.attrs)
        if cells is None:
            if len(self._cells) > 256:
                self._cells.clear()
            cells = self._cells[cursor.attrs] = _Cells(cursor.attrs)
        x = cursor.x
        self.buffer[cursor.y].update(zip(range(x, x + len(data)), map(cells.__getitem__, data)))
        cursor.x = x + len(data)
        self.dirty.add(cursor.y)

    def index(self) -> None:
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:
            self.scrolled += 1
            self.scrollback.append(self.buffer[top])  # keep the row object; O(1), rendered on demand
        super().index()

    def select_graphic_rendition(self, *attrs: int) -> None:  # type: ignore[override]
        """pyte has no faint (SGR 2): it is kept in the cell's `blink` flag, which no program read here draws with, so
        that a list whose options are all faint but the highlighted one (@clack/prompts) shows its highlight."""
        super().select_graphic_rendition(*attrs)
        faint = None
        for attr in attrs or (0,):
            if attr == 2:
                faint = True
            elif attr in (0, 22, 5, 25):
                faint = False
        if faint is not None and self.cursor.attrs.blink != faint:
            self.cursor.attrs = self.cursor.attrs._replace(blink=faint)

    def write_process_input(self, data: str) -> None:
        self.replies.append(data)

    # The alternate screen (CSI ? 1049/1047/47 h … l), as a terminal keeps it: what the program printed on the main
    # screen before a full-screen program started (`menu=cherry` between two whiptail dialogs) comes back when it
    # ends, instead of being drawn over and lost to the screen, the console and the classifier.
    _main: tuple | None = None  # the main screen's rows and cursor while the alternate one is shown

    def set_mode(self, *modes: int, **kwargs: object) -> None:
        super().set_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is None and any(m in _ALT_SCREEN for m in modes):
            self._main = (self.buffer.copy(), self.cursor.x, self.cursor.y, 1049 in modes)
            self.buffer.clear()
            self.dirty.update(range(self.lines))

    def reset_mode(self, *modes: int, **kwargs: object) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is not None and any(m in _ALT_SCREEN for m in modes):
            rows, x, y, cursor = self._main
            self._main = None
            self.buffer.clear()
            self.buffer.update({k: v for k, v in rows.items() if k < self.lines})
            if cursor:  # 1049 saved the cursor with the screen
                self.cursor.x, self.cursor.y = min(x, self.columns - 1), min(y, self.lines - 1)
            self.dirty.update(range(self.lines))

    def reset(self) -> None:
        super().reset()
        self._main = None

    def report_device_status(self, mode: int = 0, **kwargs: object) -> None:  # type: ignore[override]
        # pyte passes private=True for "CSI ? 6 n"; answer both forms.
        super().report_device_status(mode)

    def debug(self, *args: object, **kwargs: object) -> None:
        """pyte's sink for sequences it has no handler for: ignored, and counted."""
        self.ignored["unsupported private sequence (CSI ? …)" if kwargs.get("private") else "unsupported sequence"] += 1


def _guarded(name: str, method):
    """A handler that never raises out of pyte's parser (an exception there loses the rest of the text):
    a private form the handler does not take (``CSI ? 4 m``), or arguments it chokes on, are counted and ignored."""
    params = inspect.signature(method).parameters
    takes_private = "private" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())

    def handler(self, *args, **kwargs):
        if kwargs and kwargs.get("private") and not takes_private:
            self.ignored[f"CSI ? {name}"] += 1
            return None
        try:
            return method(self, *args, **kwargs) if kwargs else method(self, *args)
        except (TypeError, ValueError, IndexError, KeyError, OverflowError):
            self.ignored[f"bad arguments to {name}"] += 1
            return None

    handler.__name__ = name
    return handler


class _GuardedScreen(_Screen):
    """The screen the stream talks to: every escape handler guarded (drawing text is not: it is the hot path)."""


for _name in {*pyte.Stream.csi.values(), *pyte.Stream.escape.values(), *pyte.Stream.sharp.values(), "set_title", "set_icon_name",
              "define_charset"}:
    setattr(_GuardedScreen, _name, _guarded(_name, getattr(_Screen, _name)))


SCROLLBACK_ROWS = 2000  # rows kept after they scroll off the top, for the LLM's "earlier output"


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
        self._screen = _GuardedScreen(cols, rows)
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
        except Exception as exc:  # noqa: BLE001 - no byte a program prints may crash the pilot; pyte resets its parser
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
            row if isinstance(row, str) else row.text if isinstance(row, _SkippedRow) else _render_row(row, cols)
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
                rows[y] = _render_row(s.buffer[y], s.columns)
                styled.discard(y)
                faint.discard(y)
                is_styled, styles[y] = _is_styled(s.buffer[y], len(rows[y]))
                if is_styled:
                    styled.add(y)
                if _is_faint(s.buffer[y], len(rows[y])):
                    faint.add(y)
        s.dirty.clear()
        self._cached = Snapshot(
            lines=tuple(rows),
            cursor_x=s.cursor.x,
            cursor_y=s.cursor.y,
            scrolled=s.scrolled,
            version=self._version,
            styled=_highlights(styled, styles),
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
