"""What a screen's reading rests on, said once: the facts that tell a menu from a line prompt and a whole prompt from
half of one. PURE, like the readers that use it (classifier.py, undecided.py).

A row, a style or a keyword may call for a closer look; the facts decide (issue 39). What the pilot knows without
guessing: where the cursor is and whether it is shown, whether the terminal reads in canonical mode (ICANON: the program
takes a line, never a menu choice: arrows would only be typed into it), what the last write drew and how it ends, and
the kernel's word. A highlighted list is a menu when its highlight is one: a marker drawn in front of a row, or a
row's style in a program that reads keys (out of canonical mode) or hides its cursor. In a program that reads a line
with its cursor shown, a bold or coloured row is emphasis: a wizard's question in bold above its explanations was taken
for the highlighted option, the paragraphs for the others, and the model could answer nothing but them.
"""

from __future__ import annotations

import re

from cursorpilot.detect.menu import Menu

# how a menu's highlight was read (Menu.by): these are facts on screen; a style alone is a fact only with the mode's
BY_MARKER, BY_STYLE, BY_FAINT, BY_NUMBERS, BY_BUTTONS = "marker", "style", "faint", "numbers", "buttons"
_DRAWN = (BY_MARKER, BY_NUMBERS, BY_BUTTONS)

UNCERTAIN = ("The options above were read from the rows' styling alone (the terminal's mode is unknown): this may "
             "be a menu, or a line prompt whose question is drawn in bold or colour. Name an option, or type the line "
             "the question asks for: either is typed as it is.")


def line_mode(canonical: bool | None, cursor_visible: bool) -> bool:
    """The program reads a line where its cursor is: the terminal is in canonical mode and the cursor is shown."""
    return canonical is True and cursor_visible


def menu_facts(menu: Menu | None, canonical: bool | None, cursor_visible: bool) -> tuple[Menu | None, tuple[str, ...], bool]:
    """(the menu, or None where its highlight is no highlight; the facts it was read by; whether those facts are
    certain). A list that reads as a menu only by its highlight is no menu in a program reading a line with its cursor
    shown; numbers typed at a line prompt are (bash's `select`). Where the mode is unknown, a highlight read from style
    alone is uncertain: the answer is not narrowed to the options."""
    if menu is None:
        return None, (), True
    if menu.typed:
        return menu, ("numbered list above a line prompt: its numbers are typed",), True
    if line_mode(canonical, cursor_visible):
        return None, (f"highlight by {menu.by} ignored: the program reads a line (canonical mode, cursor shown)",), True
    said = {BY_MARKER: "highlight: a marker in front of the row", BY_STYLE: "highlight: one row's style among plain ones",
            BY_FAINT: "highlight: the one row not drawn faint", BY_BUTTONS: "highlight: the button the cursor is on"}
    facts = [said.get(menu.by, f"highlight: {menu.by}")]
    if menu.by in _DRAWN:
        return menu, tuple(facts), True
    if canonical is False:
        return menu, (*facts, "the program reads keys (out of canonical mode)"), True
    if not cursor_visible:
        return menu, (*facts, "the cursor is hidden"), True
    return menu, (*facts, "terminal mode unknown: the options are uncertain"), False


def screen_facts(canonical: bool | None, cursor_visible: bool, cursor_text: str) -> tuple[str, ...]:
    """The facts every reading starts from: the terminal's mode, the cursor, how the line left of it ends."""
    mode = {True: "canonical mode (reads a line)", False: "raw mode (reads keys)", None: "terminal mode unknown"}[canonical]
    cursor = "cursor hidden" if not cursor_visible else "cursor shown"
    if cursor_visible and cursor_text.strip():
        cursor += ", after a complete prompt" if prompt_ended(cursor_text) else ", after a line with no prompt ending"
    return mode, cursor


_ENDING = re.compile(r"(?:[?:>»›$#%)\]]|\.\.\.|…)\s*$")  # `? `, `: `, `> `, `[y/N] `, `(yes) `, `$ `
_MID_WORD = re.compile(r"[^\W_]$")


def prompt_ended(text: str) -> bool:
    """Does the text left of the cursor end as a prompt does (`? `, `: `, `] `, `> `, `) `), rather than in the middle
    of a word or a sentence? A program that writes `Overwrite the exis`, works 0.3 s, then writes the rest was judged
    on the half. A line that ends mid-word is not yet a question until the kernel says the program reads it."""
    stripped = text.rstrip("\n")
    if not stripped.strip():
        return True
    if _MID_WORD.search(stripped):
        return False
    return _ENDING.search(stripped) is not None
