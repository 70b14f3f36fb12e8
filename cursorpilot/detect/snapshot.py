"""A rendered screen, as the classifier reads it: rows of text, the cursor, what is styled. Pure data.

The PTY channel's screen (pty/screen.py) makes these from a program's bytes; captures and tests make them from text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Snapshot:
    lines: tuple[str, ...]  # every row, right-stripped
    cursor_x: int
    cursor_y: int
    scrolled: int  # rows that have scrolled off the top since the start
    version: int  # increases with every change; equal versions mean equal screens
    styled: frozenset[int] = frozenset()  # rows in reverse video, on a background colour, or all in one colour
    cursor_visible: bool = True  # full-screen and Ink programs hide it: what is left of it is then no line prompt
    cols: int = 0  # the screen's width: a row as long as this wrapped into the next (0: unknown)
    faint: frozenset[int] = frozenset()  # rows whose text is drawn faint (SGR 2): clack dims every option but the one highlighted

    def rel(self, top: int) -> tuple[frozenset[int], frozenset[int]]:
        """(styled, faint) counted from row `top`: what a menu parser of the rows from there needs."""
        return frozenset(y - top for y in self.styled if y >= top), frozenset(y - top for y in self.faint if y >= top)

    @property
    def cursor_text(self) -> str:
        """Text left of the cursor on its row: a line-mode prompt waits here."""
        row = self.lines[self.cursor_y] if self.cursor_y < len(self.lines) else ""
        return row[: self.cursor_x]

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n")



def snapshot_from_text(
    text: str, cursor: tuple[int, int] | None = None, cols: int = 120, rows: int = 40, at_line_end: bool = False
) -> Snapshot:
    """A snapshot of a plain-text screen (a capture file). Without a cursor: on the row after the last
    one with text, or with at_line_end at the end of that row (where a line-mode prompt waits)."""
    lines = [line.rstrip() for line in text.split("\n")][:rows]
    lines += [""] * (rows - len(lines))
    if cursor is None:
        last = max((i for i, line in enumerate(lines) if line.strip()), default=0)
        cursor = (len(lines[last]), last) if at_line_end else (0, min(last + 1, rows - 1))
    return Snapshot(tuple(lines), cursor[0], cursor[1], 0, 0, cols=cols)
