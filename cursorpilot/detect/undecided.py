"""A quiet screen no rule explains, read as a question for a judge (the model, or a person): the text block at the
cursor, or the box drawn around it, with any menu or buttons in it. PURE, like the classifier.
"""

from __future__ import annotations

from dataclasses import replace

from cursorpilot.detect.facts import menu_facts, prompt_ended, screen_facts
from cursorpilot.detect.menu import buttons
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.profiles import Profile, ScreenKind
from cursorpilot.detect.regions import ASKS, BUTTONS, QUESTION_GAP, WORD, Classification, Region, normal, regions
from cursorpilot.detect.snapshot import Snapshot


def _paragraph(rows: tuple[str, ...], anchor: int) -> tuple[int, int]:
    """The rows of the text block around `anchor`: up to the blank row above it, down to the blank row below."""
    top = anchor
    while top > 0 and rows[top - 1].strip():
        top -= 1
    bottom = anchor
    while bottom + 1 < len(rows) and rows[bottom + 1].strip():
        bottom += 1
    return top, bottom


_VERT, _LEFT_T, _RIGHT_T = "│┃║|", "├┠╟╠+", "┤┨╢╣+"


_TL, _TR, _BL, _BR = "┌╭╔┏+", "┐╮╗┓+", "└╰╚┗+", "┘╯╝┛+"


def _box_around(snap: Snapshot) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right): the innermost box drawn around the cursor (a dialog over a file manager's listing,
    a whiptail or dialog window), its border rows and columns; None when the cursor is in none."""
    lines, x, y = snap.lines, snap.cursor_x, snap.cursor_y
    if y >= len(lines):
        return None
    row = lines[y]
    left = next((i for i in range(min(x, len(row)) - 1, -1, -1) if row[i] in _VERT), None)
    right = next((i for i in range(max(x, 0), len(row)) if row[i] in _VERT), None)
    if left is None or right is None or right - left < 4:
        return None

    def at(t: int, i: int) -> str:
        return lines[t][i] if i < len(lines[t]) else " "

    def edge(rows: range, corners: tuple[str, str]) -> int | None:
        for t in rows:
            a, b = at(t, left), at(t, right)
            if a in corners[0] and b in corners[1]:
                return t
            if not (a in _VERT + _LEFT_T and b in _VERT + _RIGHT_T):
                return None
        return None

    top, bottom = edge(range(y - 1, -1, -1), (_TL, _TR)), edge(range(y + 1, len(lines)), (_BL, _BR))
    return None if top is None or bottom is None else (top, bottom, left, right)


def undecided(profile: Profile, snap: Snapshot, answered_to: int | None = None, canonical: bool | None = None) -> Classification:
    """A quiet screen no rule explains, as a question for a judge: the text block at the cursor (or, when nothing is
    written at or above the cursor, the whole screen: an editor's empty row, a blank REPL), and any menu read from it.

    Its key is the whole live region (the same screen is the same question however the cursor blinks); its block is
    the paragraph the cursor is in or under, which is what a rule or a model answers; the screen goes with it.
    answered_to: the last row (counted from the start) of the question answered last; while something is written below
    it, the rows down to it are history, not this question: a rule's words must be found below (create-vue's answered
    `◇ Project name` above its checklist got the project name typed into the checklist).
    """
    box = _box_around(snap)
    base = screen_facts(canonical, snap.cursor_visible, snap.cursor_text)
    if box is not None:
        c = _boxed(profile, snap, box, canonical)
        return replace(c, facts=(*base, "the cursor is inside a drawn box: the box is the question", *c.facts))
    _, region = regions(profile, snap)
    cut = None if answered_to is None else answered_to - snap.scrolled
    inside = cut is not None and region.first_row <= cut < region.first_row + len(region.rows)
    below = "".join(region.rows[cut - region.first_row + 1:]).strip() if cut is not None and inside else None
    if cut is not None and below:  # something is written under the question answered last: that is what asks now
        keep = region.rows[cut - region.first_row + 1:]
        region = Region("\n".join(keep), cut + 1, keep)
    lines = snap.lines
    everything = not region.rows or not "".join(region.rows).strip()
    if everything:  # nothing written at or above the cursor: the whole screen is the question
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        region = Region("\n".join(lines[: last + 1]), 0, tuple(lines[: last + 1]))
    styled, faint = snap.rel(region.first_row)
    whole = "\n".join(region.rows).strip("\n")
    rows = region.rows
    at = min(max(snap.cursor_y - region.first_row, 0), len(rows) - 1) if rows else 0
    if rows and not rows[at].strip():
        at = next((i for i in range(at, -1, -1) if rows[i].strip()), 0)
    top, bottom = (0, len(rows) - 1) if everything else _paragraph(rows, at)
    if not everything and not any(ASKS.match(r) for r in rows[top : bottom + 1]):
        above = [i for i in range(top - 1, max(-1, top - 1 - QUESTION_GAP), -1) if rows[i].strip()]
        asked = next((i for i in above if ASKS.match(rows[i])), next((i for i in above if WORD.search(rows[i])), None))
        top = top if asked is None else asked  # a list under its question, a blank row apart (newt, dialog)
    block = "\n".join(rows[top : bottom + 1]).strip("\n")
    anchor = snap.scrolled + region.first_row + top
    rule_id = f"{profile.name}.undecided"
    read = (parse_menu(list(rows), styled, faint) or buttons(lines, snap.cursor_x, snap.cursor_y)) if whole else None
    menu, facts, certain = menu_facts(read, canonical, snap.cursor_visible)
    cursor_row = lines[snap.cursor_y][: snap.cursor_x] if snap.cursor_y < len(lines) else ""
    # a field: the cursor shown after a line that ends as a prompt does (half a prompt, `Overwrite the exis`, is judged
    # once the kernel says the program reads it, or at the never-silent deadline: pty/quiet.py); a blank REPL
    field = snap.cursor_visible and ((cursor_row.strip() and prompt_ended(cursor_row)) or not whole)
    asks = bool(menu or BUTTONS.search(whole) or any(ASKS.match(r) for r in rows[top : bottom + 1]) or field)
    return Classification(
        state=ScreenKind.UNKNOWN, rule_id=rule_id, block=block, key=f"{rule_id}@{snap.scrolled + region.first_row}:{normal(whole)}",
        anchor_row=anchor, menu=menu, submit=True, asks=asks, answered_last=below == "", facts=(*base, *facts),
        options_certain=certain,
    )


def _boxed(profile: Profile, snap: Snapshot, box: tuple[int, int, int, int], canonical: bool | None) -> Classification:
    """A screen whose cursor sits in a drawn box: the box is the question (its words, its list, its buttons), not the
    listing behind it (Midnight Commander's `Delete file "b.txt"?` over its panels: the panels were offered as options)."""
    top, bottom, left, right = box
    inner = tuple(line[left + 1 : right].rstrip() for line in snap.lines[top + 1 : bottom])
    styled, faint = snap.rel(top + 1)
    x, y = snap.cursor_x - left - 1, snap.cursor_y - top - 1
    menu, facts, certain = menu_facts(parse_menu(list(inner), styled, faint) or buttons(inner, x, y), canonical, snap.cursor_visible)
    block = "\n".join(inner).strip("\n")
    live = "\n".join(snap.lines[: max((i for i, line in enumerate(snap.lines) if line.strip()), default=0) + 1])
    rule_id = f"{profile.name}.undecided"
    return Classification(
        state=ScreenKind.UNKNOWN, rule_id=rule_id, block=block, key=f"{rule_id}@{snap.scrolled}:{normal(live)}",
        anchor_row=snap.scrolled + top + 1, menu=menu, submit=True, asks=True, facts=facts, options_certain=certain,
    )
