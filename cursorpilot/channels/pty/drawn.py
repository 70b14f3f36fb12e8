"""What pyte draws, and how a row of it reads: the pyte screen the stream talks to (charsets, faint text, the
alternate screen, the modes and replies a program asks for, every escape handler guarded so that a malformed sequence
is counted and ignored, never raised out of the parser), and a row rendered as text with its highlight and faintness.

pty/screen.py feeds it and renders snapshots from it, only when asked.
"""

from __future__ import annotations

import inspect
from collections import Counter, deque

import pyte
from pyte import modes as mo
from pyte.screens import wcwidth  # pyte's cached one: the same widths pyte draws with

SCROLLBACK_ROWS = 2000  # rows kept after they scroll off the top, for the LLM's "earlier output"


def render_row(line: dict, columns: int) -> str:
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


def is_styled(line: dict, width: int) -> tuple[bool, tuple | None]:
    """Text in reverse video, on a background colour, or all of it in one foreground colour: how menus
    with no marker character show the highlighted row. Also the row's text style (reverse, bg, fg of most of its
    letters), so that a dialog painted on a background colour (newt, dialog) does not make every row a highlight."""
    cells = [c for c in (line[x] for x in range(width)) if c.data.strip()]
    letters = [c for c in cells if c.data.isalnum()]
    style = Counter((c.reverse, c.bg, c.fg) for c in letters).most_common(1)[0][0] if letters else None
    if any(c.reverse or c.bg not in _PLAIN_BG for c in cells):
        return True, style
    return bool(cells) and cells[0].fg not in _PLAIN_FG and all(c.fg == cells[0].fg for c in cells), style


def is_faint(line: dict, width: int) -> bool:
    """Most of the row's letters are faint (kept in `blink`: `_Screen.select_graphic_rendition`)."""
    letters = [c for c in (line[x] for x in range(width)) if c.data.isalnum()]
    return bool(letters) and sum(c.blink for c in letters) * 2 > len(letters)


def highlights(styled: set[int], styles: dict[int, tuple | None]) -> frozenset[int]:
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
            (self.g1_charset if self.charset else self.g0_charset) is not _LATIN1 or not data.isascii() or not data.isprintable()
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
        self.buffer[cursor.y].update(zip(range(x, x + len(data)), map(cells.__getitem__, data), strict=True))
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
        """As xterm starts (and RIS resets it): G0 and G1 both ASCII. pyte starts G1 as DEC line drawing, the Linux
        console's default: a stray Shift Out (0x0E) in a binary blob then drew every later `Continue? [y/n]` as
        `C⎺┼├␋┼┤␊? [≤/┼]`. SO/SI switch only to what was designated (`ESC ) 0` makes G1 line drawing)."""
        super().reset()
        self.g1_charset = _LATIN1
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


class GuardedScreen(_Screen):
    """The screen the stream talks to: every escape handler guarded (drawing text is not: it is the hot path)."""


for _name in {*pyte.Stream.csi.values(), *pyte.Stream.escape.values(), *pyte.Stream.sharp.values(), "set_title", "set_icon_name",
              "define_charset"}:
    setattr(GuardedScreen, _name, _guarded(_name, getattr(_Screen, _name)))
