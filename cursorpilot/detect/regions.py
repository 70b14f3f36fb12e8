"""Where on a screen a question is read, and what reading it gives: the live region (the cursor's line, or the block of
rows ending at the cursor), the rows that ask, a block's identity, and the Classification both readers return (the
profile's rules, classifier.py; a screen no rule explains, undecided.py). PURE, like them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cursorpilot.detect.menu import MARKERS, Menu
from cursorpilot.detect.profiles import ANSWERABLE, Profile, ScreenKind
from cursorpilot.detect.snapshot import Snapshot


@dataclass(slots=True, frozen=True)
class Classification:
    state: ScreenKind
    rule_id: str | None = None
    block: str = ""  # the prompt block text
    evidence: str = ""  # the text the rule matched
    error: str | None = None
    key: str | None = None  # identity of the logical prompt: rule + position + text
    submit: bool = True
    recheck_after: float | None = None  # more quiet time could change the answer
    anchor_row: int = 0  # absolute row of the block's first line
    menu: Menu | None = None  # kind=menu: its options and highlight, when they can be read
    multiline: bool = False  # the rule says the prompt takes several lines
    asks: bool = False  # an unexplained screen that shows a question, a menu, buttons or a field with the cursor in it
    prefill: str = ""  # an input field's text left of the cursor that the program put there (a default to keep or replace)
    answered_last: bool = False  # an unexplained screen whose last words are the question answered last: nothing new since
    facts: tuple[str, ...] = ()  # what classified it, beyond the rule's words: the mode, the cursor, the highlight (facts.py)
    options_certain: bool = True  # its menu's options were read from facts (False: from style alone, the mode unknown)

    @property
    def answerable(self) -> bool:
        return self.state in ANSWERABLE

    @property
    def decision(self) -> tuple[str, str | None]:
        """What a change of classification is judged by: a working screen by its rule (its line changes all
        the time), anything else by the prompt's identity."""
        return self.state, self.rule_id if self.state == ScreenKind.WORKING else self.key


@lru_cache(maxsize=1024)
def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


@dataclass(slots=True, frozen=True)
class Region:
    text: str
    first_row: int  # screen row of the region's first line
    rows: tuple[str, ...]


def _last_nonblank(lines: tuple[str, ...], upto: int) -> int:
    for i in range(min(upto, len(lines) - 1), -1, -1):
        if lines[i].strip():
            return i
    return -1


def regions(profile: Profile, snap: Snapshot) -> tuple[Region, Region]:
    lines = snap.lines
    # cursor line: a line-mode prompt waits to the left of the cursor
    cur = snap.cursor_text
    first = snap.cursor_y
    rows = [cur]
    if cur.strip():
        while first > 0 and lines[first - 1].strip() and len(rows) < profile.block_lines:
            first -= 1
            rows.insert(0, lines[first])
    cursor_region = Region("\n".join(rows) if cur.strip() else "", first, tuple(rows))
    # block: block_lines rows ending at the cursor (or the last text above it), plus a footer below
    anchor = snap.cursor_y if lines[snap.cursor_y].strip() else _last_nonblank(lines, snap.cursor_y)
    bottom = max(_last_nonblank(lines, len(lines) - 1), anchor)
    if anchor < 0:
        return cursor_region, Region("", 0, ())
    top = max(0, anchor - profile.block_lines + 1)
    block_rows = lines[top : bottom + 1]
    return cursor_region, Region("\n".join(block_rows), top, tuple(block_rows))


def headline(block: str) -> str:
    """The most telling line of a prompt block: its first question, else its first line with words."""
    lines = [" ".join(line.strip(" \t│┃║|╭╮╰╯┌┐└┘─━═▄▀").split()) for line in block.splitlines()]
    worded = [t for t in lines if sum(ch.isalpha() for ch in t) >= 3]
    asked = [t for t in worded if t.endswith("?") or "[y/n]" in t.lower()]
    return (asked or worded or [" ".join(block.split())[:120]])[0]


def unmarked(block: str) -> str:
    """A menu is the same prompt wherever its highlight is: identity without the highlight markers."""
    return block.translate(_NO_MARKS)


_NO_MARKS = str.maketrans({ch: " " for ch in MARKERS})


def normal(text: str) -> str:
    return " ".join(text.split())


WORD = re.compile(r"[^\W\d_]{3,}")


ASKS = re.compile(r"(?m)^\s*(?:[│┃|]\s*)?(?:(?:[?◆◇◈]|\[\?\])\s+(?!for shortcuts)\S.*|.*\S.*(?:\?|:)\s*(?:\(.*\))?\s*[│┃|]?\s*)$")


QUESTION_GAP = 8  # rows between a question and its first option, at most


BUTTONS = re.compile(r"<\s*[A-Za-z][\w ]{0,15}>|\[\s*(?:OK|Ok|Yes|No|Cancel|Accept|Continue)\s*\]")
