"""The classifier: PURE (profile, screen snapshot, timing facts) -> classification.

No clock, no sleep, no I/O, no logging: everything it needs arrives as arguments,
so it can be tested over recorded screens with made-up timings.

Rules:
- Only the live region is read: the cursor line, or a block of ``block_lines`` rows
  ending at the cursor (plus any footer below it). Old prompts in scrollback are not
  questions.
- A working marker anywhere in the live region suppresses every question kind, unless the kernel says the program
  is blocked reading its terminal: then the marker is a line it printed (`encrypting with a passphrase ...`).
- Nothing but "working" is reported until the screen has been quiet for the
  profile's settle window; rules with ``quiet_ms`` wait longer still.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cursorpilot.detect.menu import MARKERS, Menu, buttons, numbered
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.profiles import ANSWERABLE, Kind, Profile, Rule
from cursorpilot.detect.snapshot import Snapshot

SETTLING = "settling"
UNKNOWN = "unknown"


READING_SETTLE = 0.05  # a program blocked reading the terminal has written its prompt: this much quiet is enough
BUSY_RECHECK = 0.25  # a screen judged while the program was busy is looked at again this soon


@dataclass(slots=True, frozen=True)
class Timing:
    quiet_for: float  # seconds since the screen last changed
    tty: str | None = None  # the kernel's word on the foreground process: reading | polling | busy | None (unknown)

    @property
    def reading(self) -> bool:
        return self.tty == "reading"

    @property
    def waiting_on_terminal(self) -> bool:
        """The kernel says the program waits for its terminal: a prompt it shows is complete sooner."""
        return self.tty in ("reading", "polling")

    def fast_settle(self, settle: float, poll_settle: float) -> float:
        """The quiet a question, an input field or a menu needs (an idle composer or a finish needs the full settle)."""
        if self.tty == "reading":
            return min(settle, READING_SETTLE)
        if self.tty == "polling":
            return min(settle, poll_settle)
        return settle


@dataclass(slots=True, frozen=True)
class Classification:
    state: str  # a Kind value, or "settling" / "unknown"
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

    @property
    def answerable(self) -> bool:
        return self.state in ANSWERABLE

    @property
    def decision(self) -> tuple[str, str | None]:
        """What a change of classification is judged by: a working screen by its rule (its line changes all
        the time), anything else by the prompt's identity."""
        return self.state, self.rule_id if self.state == Kind.WORKING else self.key


@lru_cache(maxsize=1024)
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


@dataclass(slots=True, frozen=True)
class _Region:
    text: str
    first_row: int  # screen row of the region's first line
    rows: tuple[str, ...]


def _last_nonblank(lines: tuple[str, ...], upto: int) -> int:
    for i in range(min(upto, len(lines) - 1), -1, -1):
        if lines[i].strip():
            return i
    return -1


def _regions(profile: Profile, snap: Snapshot) -> tuple[_Region, _Region]:
    lines = snap.lines
    # cursor line: a line-mode prompt waits to the left of the cursor
    cur = snap.cursor_text
    first = snap.cursor_y
    rows = [cur]
    if cur.strip():
        while first > 0 and lines[first - 1].strip() and len(rows) < profile.block_lines:
            first -= 1
            rows.insert(0, lines[first])
    cursor_region = _Region("\n".join(rows) if cur.strip() else "", first, tuple(rows))
    # block: block_lines rows ending at the cursor (or the last text above it), plus a footer below
    anchor = snap.cursor_y if lines[snap.cursor_y].strip() else _last_nonblank(lines, snap.cursor_y)
    bottom = max(_last_nonblank(lines, len(lines) - 1), anchor)
    if anchor < 0:
        return cursor_region, _Region("", 0, ())
    top = max(0, anchor - profile.block_lines + 1)
    block_rows = lines[top : bottom + 1]
    return cursor_region, _Region("\n".join(block_rows), top, tuple(block_rows))


def _matches(rule: Rule, text: str) -> re.Match[str] | None:
    """The first match that makes the rule hold, or None."""
    if any(_rx(p).search(text) for p in rule.none):
        return None
    first: re.Match[str] | None = None
    for p in rule.all:
        m = _rx(p).search(text)
        if m is None:
            return None
        if first is None or m.start() < first.start():
            first = m
    if rule.any:
        hits = [m for p in rule.any if (m := _rx(p).search(text))]
        if not hits:
            return None
        m = min(hits, key=lambda h: h.start())
        if first is None or m.start() < first.start():
            first = m
    return first


_LISTED = re.compile(r"^\s*(?:\d{1,2}\s*[-.):]|[-*•]|\[\d{1,2}\])\s+\S")


def _list_top(rows: tuple[str, ...]) -> int:
    """Where a numbered list above a cursor-line prompt starts, with the one header row above it (earlier
    prompts above that are history, not this question)."""
    i = len(rows) - 1
    while i > 0 and _LISTED.match(rows[i - 1]):
        i -= 1
    return max(0, i - 1) if i < len(rows) - 1 else 0


def _row_of(region: _Region, offset: int) -> int:
    return region.text.count("\n", 0, offset)


_CHROME = re.compile(r"[\s▄▀─━═│┃╭╮╰╯┌┐└┘]*")


def headline(block: str) -> str:
    """The most telling line of a prompt block: its first question, else its first line with words."""
    lines = [" ".join(line.strip(" \t│┃║|╭╮╰╯┌┐└┘─━═▄▀").split()) for line in block.splitlines()]
    worded = [t for t in lines if sum(ch.isalpha() for ch in t) >= 3]
    asked = [t for t in worded if t.endswith("?") or "[y/n]" in t.lower()]
    return (asked or worded or [" ".join(block.split())[:120]])[0]


def _unmarked(block: str) -> str:
    """A menu is the same prompt wherever its highlight is: identity without the highlight markers."""
    return block.translate(_NO_MARKS)


_NO_MARKS = str.maketrans({ch: " " for ch in MARKERS})


def _normal(text: str) -> str:
    return " ".join(text.split())


def _result(rule: Rule, region: _Region, m: re.Match[str], snap: Snapshot) -> Classification:
    if rule.scope == "block":
        start = m.start()
        if rule.start:
            sm = _rx(rule.start).search(region.text)
            if sm:
                start = min(start, sm.start())
        row = _row_of(region, start)
        block = "\n".join(region.rows[row:]).strip("\n")
    elif rule.kind == Kind.MENU:
        row = _list_top(region.rows)
        block = "\n".join(region.rows[row:])  # the options above the prompt line (and their header) belong to the question
    else:
        prefill = _prefill(region.rows[-1]) if rule.kind == Kind.INPUT else ""
        row = _question_top(region.rows, snap.cols, prefill)
        block = "\n".join(region.rows[row:])  # the question's own rows; earlier lines are history
    top = region.first_row + row  # the block's first row on screen
    anchor = snap.scrolled + top
    return Classification(
        state=rule.kind.value,
        rule_id=rule.id,
        block=block,
        evidence=m.group(0).strip(),
        error=rule.error,
        key=f"{rule.id}@{anchor}:{_normal(_unmarked(block) if rule.kind == Kind.MENU else block)}",
        submit=rule.submit == "enter",
        anchor_row=anchor,
        menu=_menu(rule, block, *snap.rel(top)),
        multiline=rule.multiline,
        prefill=prefill if rule.scope == "cursor_line" and rule.kind == Kind.INPUT else "",
    )


def _menu(rule: Rule, block: str, styled: frozenset[int], faint: frozenset[int]) -> Menu | None:
    """A menu rule's options: a highlighted list, or (on a line prompt) a numbered list whose numbers are typed."""
    if rule.kind != Kind.MENU:
        return None
    return parse_menu(block, styled, faint) or (numbered(block) if rule.scope == "cursor_line" else None)


_WORD = re.compile(r"[^\W\d_]{3,}")
_PREFILLED = re.compile(r"^.*[?:>›»]\s+(?P<value>[^\s\[(<][^\[\]()<>]{0,60}?)$")
QUESTION_ROWS = 3  # rows above a wordless input row that are read as its question, at most
_QUESTION_END = re.compile(r"[?:]\s*(?:\([^()]*\)|\[[^\[\]]*\])?\s*$")  # "...?", "...:", "...? (y/n)", "...: [default]"


def _prefill(row: str) -> str:
    """Text already in the field left of the cursor (a prompt_toolkit or readline default, `? Name: my-app`), as
    far as a screen can tell: what follows the prompt's last `? `, `: ` or `> ` and is not a bracketed hint."""
    if not row or row[-1].isspace():
        return ""
    m = _PREFILLED.search(row)
    return m.group("value") if m else ""


def _question_top(rows: tuple[str, ...], cols: int, prefill: str = "") -> int:
    """The first row of a line-mode question whose input row is the last of `rows`: the rows a long question wrapped
    over, and, when the input row has no words of its own (`(Y/n)`, `> `, a field in a box), the nearest row above it
    with words (within QUESTION_ROWS, not across a blank row): the model answers the question, not its last row."""
    i = len(rows) - 1
    while i > 0 and cols and len(rows[i - 1]) >= cols - 1:
        i -= 1  # a row filled to the last column wrapped into the next one: one logical line
    own = " ".join(rows[i:])
    own = own[: len(own) - len(prefill)] if prefill else own
    if _WORD.search(own.translate(_NO_CHROME)):
        return i
    top = i
    while top > 0 and rows[top - 1].strip() and i - top < QUESTION_ROWS:
        top -= 1
        if _WORD.search(rows[top].translate(_NO_CHROME)):
            break  # the nearest row with words is the question; rows above it are history
    else:
        return i
    if not _QUESTION_END.search(rows[top].translate(_NO_CHROME)):
        return i  # a row that does not end as a question does (an earlier prompt with its answer, output): history
    while top > 0 and cols and len(rows[top - 1]) >= cols - 1:
        top -= 1
    return top


_NO_CHROME = str.maketrans({ch: " " for ch in "│┃║|+-─━═╭╮╰╯┌┐└┘"})


def _prose_question(profile: Profile, snap: Snapshot, idle: Classification) -> Classification | None:
    """An agent back at its composer whose last message asks something is waiting for an answer."""
    pattern = profile.finish.prose_question
    if not pattern:
        return None
    composer_row = idle.anchor_row - snap.scrolled
    row = composer_row - 1
    between = _rx(profile.finish.between) if profile.finish.between else None
    while row >= 0 and (_CHROME.fullmatch(snap.lines[row]) or (between is not None and between.search(snap.lines[row]))):
        row -= 1  # blank rows, the composer's box borders, and the profile's status rows
    if row < 0 or not _rx(pattern).search(snap.lines[row]):
        return None  # (only blank rows, chrome and status rows were skipped: this is the last message, however far up)
    first = row
    while first > 0 and snap.lines[first - 1].strip() and row - first < 6:
        first -= 1
    block = "\n".join(snap.lines[first : row + 1]).strip()
    anchor = snap.scrolled + first
    return Classification(
        state=Kind.QUESTION.value,
        rule_id=f"{idle.rule_id}.prose_question",
        block=block,
        evidence=snap.lines[row].strip(),
        key=f"{idle.rule_id}.prose_question@{anchor}:{_normal(block)}",
        submit=True,
        anchor_row=anchor,
    )


def classify(profile: Profile, snap: Snapshot, timing: Timing) -> Classification:
    cursor_region, block_region = _regions(profile, snap)

    def region(rule: Rule) -> _Region:
        return cursor_region if rule.scope == "cursor_line" else block_region

    for rule in profile.rules:  # a marker drawn by a program blocked reading its terminal is not moving: it asks
        if rule.kind == Kind.WORKING and not timing.reading and (m := _matches(rule, region(rule).text)):
            return _result(rule, region(rule), m, snap)

    settle = profile.settle_ms / 1000
    fast = timing.fast_settle(settle, profile.poll_settle_ms / 1000)
    if timing.quiet_for < fast:
        return Classification(state=SETTLING, recheck_after=fast - timing.quiet_for)

    recheck: float | None = None
    for rule in profile.rules:
        if rule.kind == Kind.WORKING:
            continue
        m = _matches(rule, region(rule).text)
        if m is None:
            continue
        answerable = rule.kind in ANSWERABLE
        quiet = max(rule.quiet_ms / 1000, fast if answerable else settle)
        if rule.quiet_ms and timing.tty == "busy":  # a rule that guesses from silence: the kernel says the program
            recheck = BUSY_RECHECK if recheck is None else min(recheck, BUSY_RECHECK)  # is not waiting on its terminal
            continue  # (yet: sampled busy now and then, look again); the pilot judges the screen in the end anyway
        if rule.quiet_ms and rule.scope == "cursor_line" and not _prompt_like(snap, timing.reading):
            continue  # ...or the cursor is hidden, or parked on a box's button (`│   <  OK  >`): no line prompt is there
        if answerable and rule.scope == "cursor_line" and timing.waiting_on_terminal:
            quiet = fast  # the silence a prompt rule waits for is what the kernel just confirmed
        wait = quiet - timing.quiet_for
        if wait > 0:
            recheck = wait if recheck is None else min(recheck, wait)
            continue
        found = _result(rule, region(rule), m, snap)
        if rule.needs_menu and found.menu is None:
            continue  # the words are there, but no options with a highlight under them
        if _guess(rule) and (menu := _any_menu(profile, block_region, snap)) is not None:
            return menu  # a field guessed from silence yields to a highlighted list under a question (dialog, fzf)
        if found.state == Kind.IDLE:
            return _prose_question(profile, snap, found) or found
        return found
    if recheck is not None:  # a rule is waiting for more quiet: it decides, not the menu reading
        return Classification(state=UNKNOWN, recheck_after=recheck)
    return _any_menu(profile, block_region, snap) or Classification(state=UNKNOWN)


def _guess(rule: Rule) -> bool:
    """A rule that takes a quiet cursor line for a text field (generic.waiting_input): the weakest evidence there is."""
    return rule.kind == Kind.INPUT and rule.scope == "cursor_line" and rule.quiet_ms > 0


_BOXED = str.maketrans({ch: " " for ch in "│┃║|┌┐└┘├┤─━═╭╮╰╯<>[]"})


def _prompt_like(snap: Snapshot, reading: bool) -> bool:
    """Could the cursor be at a line prompt? It shows, and the text left of it has a word once box borders and button
    brackets are gone: dialog parks its cursor on a button, `│    <`, which no reader of a line would ask at."""
    if not snap.cursor_visible:
        return False
    left = snap.cursor_text
    if _WORD.search(_BUTTONS.sub(" ", left).translate(_BOXED)) is not None:  # a word, not a button's (`< Yes >`)
        return True
    if "<" in left or "│" in left:
        return False  # a button, a box's border: a full-screen dialog, judged whole
    return reading or _PROMPT_END.search(left) is not None


_PROMPT_END = re.compile(r"[>$#%:?]\s*$")  # `>>> `, `#? `, `> `: a prompt with no word of its own


_ASKS = re.compile(r"(?m)^\s*(?:[│┃|]\s*)?(?:(?:[?◆◇◈]|\[\?\])\s+(?!for shortcuts)\S.*|.*\S.*(?:\?|:)\s*(?:\(.*\))?\s*[│┃|]?\s*)$")
QUESTION_GAP = 8  # rows between a question and its first option, at most


def _any_menu(profile: Profile, region: _Region, snap: Snapshot) -> Classification | None:
    """Whatever the profile: a highlighted option list under a question is a menu (AskUserQuestion pickers,
    clack/Inquirer/prompts selects, a numbered Yes/No drawn by a program no profile knows)."""
    styled, faint = snap.rel(region.first_row)
    menu = parse_menu(list(region.rows), styled, faint)
    if menu is None:
        return None
    first = min(o.row for o in menu.options)
    top = next((i for i in range(first - 1, max(-1, first - 1 - QUESTION_GAP), -1) if _ASKS.match(region.rows[i])), None)
    if top is None:
        return None  # options with no question above them: a picker nobody asked about, a list in output
    block = "\n".join(region.rows[top:]).strip("\n")
    anchor = snap.scrolled + region.first_row + top
    rule_id = f"{profile.name}.menu"
    return Classification(
        state=Kind.MENU.value, rule_id=rule_id, block=block, evidence=region.rows[top].strip(),
        key=f"{rule_id}@{anchor}:{_normal(_unmarked(block))}", submit=False, anchor_row=anchor,
        menu=parse_menu(block, *snap.rel(region.first_row + top)),
    )


_BUTTONS = re.compile(r"<\s*[A-Za-z][\w ]{0,15}>|\[\s*(?:OK|Ok|Yes|No|Cancel|Accept|Continue)\s*\]")


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


def undecided(profile: Profile, snap: Snapshot, answered_to: int | None = None) -> Classification:
    """A quiet screen no rule explains, as a question for a judge: the text block at the cursor (or, when nothing is
    written at or above the cursor, the whole screen: an editor's empty row, a blank REPL), and any menu read from it.

    Its key is the whole live region (the same screen is the same question however the cursor blinks); its block is
    the paragraph the cursor is in or under, which is what a rule or a model answers; the screen goes with it.
    answered_to: the last row (counted from the start) of the question answered last; while something is written below
    it, the rows down to it are history, not this question: a rule's words must be found below (create-vue's answered
    `◇ Project name` above its checklist got the project name typed into the checklist).
    """
    box = _box_around(snap)
    if box is not None:
        return _boxed(profile, snap, box)
    _, region = _regions(profile, snap)
    cut = None if answered_to is None else answered_to - snap.scrolled
    if cut is not None and region.first_row <= cut < region.first_row + len(region.rows) - 1 \
            and "".join(region.rows[cut - region.first_row + 1:]).strip():
        keep = region.rows[cut - region.first_row + 1:]
        region = _Region("\n".join(keep), cut + 1, keep)
    lines = snap.lines
    everything = not region.rows or not "".join(region.rows).strip()
    if everything:  # nothing written at or above the cursor: the whole screen is the question
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        region = _Region("\n".join(lines[: last + 1]), 0, tuple(lines[: last + 1]))
    styled, faint = snap.rel(region.first_row)
    whole = "\n".join(region.rows).strip("\n")
    rows = region.rows
    at = min(max(snap.cursor_y - region.first_row, 0), len(rows) - 1) if rows else 0
    if rows and not rows[at].strip():
        at = next((i for i in range(at, -1, -1) if rows[i].strip()), 0)
    top, bottom = (0, len(rows) - 1) if everything else _paragraph(rows, at)
    if not everything and not any(_ASKS.match(r) for r in rows[top : bottom + 1]):
        above = [i for i in range(top - 1, max(-1, top - 1 - QUESTION_GAP), -1) if rows[i].strip()]
        asked = next((i for i in above if _ASKS.match(rows[i])), next((i for i in above if _WORD.search(rows[i])), None))
        top = top if asked is None else asked  # a list under its question, a blank row apart (newt, dialog)
    block = "\n".join(rows[top : bottom + 1]).strip("\n")
    anchor = snap.scrolled + region.first_row + top
    rule_id = f"{profile.name}.undecided"
    menu = (parse_menu(list(rows), styled, faint) or buttons(lines, snap.cursor_x, snap.cursor_y)) if whole else None
    cursor_row = lines[snap.cursor_y][: snap.cursor_x] if snap.cursor_y < len(lines) else ""
    asks = bool(menu or _BUTTONS.search(whole) or any(_ASKS.match(r) for r in rows[top : bottom + 1])
                or (snap.cursor_visible and (cursor_row.strip() or not whole)))  # a field; a blank REPL
    return Classification(
        state=UNKNOWN, rule_id=rule_id, block=block, key=f"{rule_id}@{snap.scrolled + region.first_row}:{_normal(whole)}",
        anchor_row=anchor, menu=menu, submit=True, asks=asks,
    )


def _boxed(profile: Profile, snap: Snapshot, box: tuple[int, int, int, int]) -> Classification:
    """A screen whose cursor sits in a drawn box: the box is the question (its words, its list, its buttons), not the
    listing behind it (Midnight Commander's `Delete file "b.txt"?` over its panels: the panels were offered as options)."""
    top, bottom, left, right = box
    inner = tuple(line[left + 1 : right].rstrip() for line in snap.lines[top + 1 : bottom])
    styled, faint = snap.rel(top + 1)
    x, y = snap.cursor_x - left - 1, snap.cursor_y - top - 1
    menu = parse_menu(list(inner), styled, faint) or buttons(inner, x, y)
    block = "\n".join(inner).strip("\n")
    live = "\n".join(snap.lines[: max((i for i, line in enumerate(snap.lines) if line.strip()), default=0) + 1])
    rule_id = f"{profile.name}.undecided"
    return Classification(
        state=UNKNOWN, rule_id=rule_id, block=block, key=f"{rule_id}@{snap.scrolled}:{_normal(live)}",
        anchor_row=snap.scrolled + top + 1, menu=menu, submit=True, asks=True,
    )
