"""What a log (CI, a file: no terminal to mirror on) shows of a program: each screen row once, when it is new or has
changed, at the moments the log speaks (an answer, an escalation, the step's end). Pure: rows in, rows to print out.

A row is placed by its position, not by its text: pdb prints `(Pdb)` again and again, and each one is a new row.
The screen's `scrolled` count gives every row an absolute number; a row whose number was printed before is printed
again only if it changed (an Ink dialog redrawn in place), not if an answer was merely typed onto it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ScreenLog:
    rows: list[str] = field(default_factory=list)  # the rows last printed, top row first
    top: int = 0  # the absolute number of rows[0]

    def fresh(self, lines: list[str], top: int) -> tuple[int, list[str]]:
        """(rows that scrolled past unseen since the last print, the rows to print) for a screen whose row 0 is
        absolute row `top`; the screen becomes what was printed."""
        end = self.top + len(self.rows)  # the first absolute row never printed
        skipped = max(0, top - end)
        out = [line for i, line in enumerate(lines) if self._changed(top + i, line)]
        self.rows, self.top = list(lines), top
        return skipped, out

    def fresh_text(self, lines: list[str]) -> list[str]:
        """The rows of a step's whole text (scrollback and screen) not printed yet. The text carries no positions: it
        is placed by finding the printed rows in it from their first non-blank one, searched from the end (the
        longest run of them first). Not found: the screen was redrawn entirely, and all of it is new."""
        first = next((i for i, row in enumerate(self.rows) if row.strip()), None)
        if first is None:
            return lines
        for k in range(len(self.rows) - first, 0, -1):
            head = self.rows[first:first + k]
            at = next((i for i in range(len(lines) - k, -1, -1) if lines[i:i + k] == head), None)
            if at is not None:
                start = at - first  # where the printed rows' top is in the text (before it, when it began with blanks)
                return self.fresh([""] * -start + lines if start < 0 else lines[start:], self.top)[1]
        return lines

    def _changed(self, row: int, line: str) -> bool:
        i = row - self.top
        if not 0 <= i < len(self.rows):
            return i >= len(self.rows)  # below what was printed: new; above it: printed before (or scrolled past)
        old = self.rows[i]
        return line != old and not (old.strip() and line.startswith(old))  # an answer typed onto a prompt is no news
