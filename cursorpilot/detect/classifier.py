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
from dataclasses import dataclass, replace

from cursorpilot.detect.facts import BY_FAINT, BY_STYLE, menu_facts, prompt_ended, screen_facts
from cursorpilot.detect.menu import Menu, numbered
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.profiles import ANSWERABLE, Profile, Rule, ScreenKind
from cursorpilot.detect.regions import (ASKS, BUTTONS, QUESTION_GAP, WORD, Classification, Region, headline, normal, regions, rx,
                                        unmarked)
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.detect.undecided import undecided

# what the channels import from here: the classification and the two readings of a screen
__all__ = ["BUSY_RECHECK", "READING_SETTLE", "Classification", "Timing", "classify", "headline", "undecided"]


# A program blocked reading its terminal has written its prompt: this much quiet is enough. Not less: the reader may be
# one thread of many (fzf's terminal goroutine blocks in read() at once, while others still load and draw the list; at
# 20 ms its half-drawn second list was judged), and the write must cross the pty.
READING_SETTLE = 0.05


BUSY_RECHECK = 0.25  # a screen judged while the program was busy is looked at again this soon


@dataclass(slots=True, frozen=True)
class Timing:
    quiet_for: float  # seconds since the screen last changed
    tty: str | None = None  # the kernel's word on the foreground process: reading | polling | busy | None (unknown)
    canonical: bool | None = None  # the terminal reads in canonical mode (ICANON: a line, never a menu choice); None: unknown

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


def _matches(rule: Rule, text: str) -> re.Match[str] | None:
    """The first match that makes the rule hold, or None."""
    if any(rx(p).search(text) for p in rule.none):
        return None
    first: re.Match[str] | None = None
    for p in rule.all:
        m = rx(p).search(text)
        if m is None:
            return None
        if first is None or m.start() < first.start():
            first = m
    if rule.any:
        hits = [m for p in rule.any if (m := rx(p).search(text))]
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


def _row_of(region: Region, offset: int) -> int:
    return region.text.count("\n", 0, offset)


_CHROME = re.compile(r"[\s▄▀─━═│┃╭╮╰╯┌┐└┘]*")


def _result(rule: Rule, region: Region, m: re.Match[str], snap: Snapshot, canonical: bool | None = None) -> Classification:
    if rule.scope == "block":
        start = m.start()
        if rule.start:
            sm = rx(rule.start).search(region.text)
            if sm:
                start = min(start, sm.start())
        row = _row_of(region, start)
        block = "\n".join(region.rows[row:]).strip("\n")
    elif rule.kind == ScreenKind.MENU:
        row = _list_top(region.rows)
        block = "\n".join(region.rows[row:])  # the options above the prompt line (and their header) belong to the question
    else:
        prefill = _prefill(region.rows[-1]) if rule.kind == ScreenKind.INPUT else ""
        row = _question_top(region.rows, snap.cols, prefill)
        block = "\n".join(region.rows[row:])  # the question's own rows; earlier lines are history
    top = region.first_row + row  # the block's first row on screen
    anchor = snap.scrolled + top
    menu, facts, certain = menu_facts(_menu(rule, block, *snap.rel(top)), canonical, snap.cursor_visible)
    return Classification(
        state=rule.kind,
        rule_id=rule.id,
        block=block,
        evidence=m.group(0).strip(),
        error=rule.error,
        key=f"{rule.id}@{anchor}:{normal(unmarked(block) if rule.kind == ScreenKind.MENU else block)}",
        submit=rule.submit == "enter",
        anchor_row=anchor,
        menu=menu,
        facts=facts,
        options_certain=certain,
        multiline=rule.multiline,
        prefill=prefill if rule.scope == "cursor_line" and rule.kind == ScreenKind.INPUT else "",
    )


def _menu(rule: Rule, block: str, styled: frozenset[int], faint: frozenset[int]) -> Menu | None:
    """A menu rule's options: a highlighted list, or (on a line prompt) a numbered list whose numbers are typed."""
    if rule.kind != ScreenKind.MENU:
        return None
    return parse_menu(block, styled, faint) or (numbered(block) if rule.scope == "cursor_line" else None)


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
    if WORD.search(own.translate(_NO_CHROME)):
        return i
    top = i
    while top > 0 and rows[top - 1].strip() and i - top < QUESTION_ROWS:
        top -= 1
        if WORD.search(rows[top].translate(_NO_CHROME)):
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
    between = rx(profile.finish.between) if profile.finish.between else None
    while row >= 0 and (_CHROME.fullmatch(snap.lines[row]) or (between is not None and between.search(snap.lines[row]))):
        row -= 1  # blank rows, the composer's box borders, and the profile's status rows
    if row < 0 or not rx(pattern).search(snap.lines[row]):
        return None  # (only blank rows, chrome and status rows were skipped: this is the last message, however far up)
    first = row
    while first > 0 and snap.lines[first - 1].strip() and row - first < 6:
        first -= 1
    block = "\n".join(snap.lines[first : row + 1]).strip()
    anchor = snap.scrolled + first
    return Classification(
        state=ScreenKind.QUESTION,
        rule_id=f"{idle.rule_id}.prose_question",
        block=block,
        evidence=snap.lines[row].strip(),
        key=f"{idle.rule_id}.prose_question@{anchor}:{normal(block)}",
        submit=True,
        anchor_row=anchor,
    )


def classify(profile: Profile, snap: Snapshot, timing: Timing) -> Classification:
    """The screen's reading, and the facts it rests on (the terminal's mode, the cursor, how its line ends, the
    highlight: detect/facts.py), which every question's record carries."""
    c = _classify(profile, snap, timing)
    if c.state == ScreenKind.SETTLING:
        return c
    return replace(c, facts=(*screen_facts(timing.canonical, snap.cursor_visible, snap.cursor_text), *c.facts))


def _classify(profile: Profile, snap: Snapshot, timing: Timing) -> Classification:
    cursor_region, block_region = regions(profile, snap)
    last: list[Region] = []

    def region(rule: Rule) -> Region:
        if rule.last:
            last[:] = last or [_last_region(profile, snap)]
            return last[0]
        return cursor_region if rule.scope == "cursor_line" else block_region

    for rule in profile.rules:  # a marker drawn by a program blocked reading its terminal is not moving: it asks
        if rule.kind == ScreenKind.WORKING and not timing.reading and (m := _matches(rule, region(rule).text)):
            return _result(rule, region(rule), m, snap, timing.canonical)

    settle = profile.settle_ms / 1000
    fast = timing.fast_settle(settle, profile.poll_settle_ms / 1000)
    if timing.quiet_for < fast:
        return Classification(state=ScreenKind.SETTLING, recheck_after=fast - timing.quiet_for)

    recheck: float | None = None
    for rule in profile.rules:
        if rule.kind == ScreenKind.WORKING:
            continue
        m = _matches(rule, region(rule).text)
        if m is None or (rule.reads_keys and timing.canonical is not False):
            continue  # (a ':' a line reader prints is its prompt for a line: the words alone never make it a pager)
        answerable = rule.kind in ANSWERABLE
        quiet = max(rule.quiet_ms / 1000, fast if answerable else settle)
        if rule.quiet_ms and timing.tty == "busy":  # a rule that guesses from silence: the kernel says the program
            recheck = BUSY_RECHECK if recheck is None else min(recheck, BUSY_RECHECK)  # is not waiting on its terminal
            continue  # (yet: sampled busy now and then, look again); the pilot judges the screen in the end anyway
        if rule.quiet_ms and rule.scope == "cursor_line" and not _prompt_like(snap, timing.reading):
            continue  # ...or the cursor is hidden, or parked on a box's button (`│   <  OK  >`): no line prompt is there
        if answerable and rule.scope == "cursor_line" and (timing.reading or (timing.waiting_on_terminal and prompt_ended(snap.cursor_text))):
            quiet = fast  # the silence a prompt rule waits for is what the kernel just confirmed (a line that ends mid-word
            # under a program that polls, a timer beside its terminal, may be half a prompt: its silence is waited out)
        wait = quiet - timing.quiet_for
        if wait > 0:
            recheck = wait if recheck is None else min(recheck, wait)
            continue
        found = _result(rule, region(rule), m, snap, timing.canonical)
        if rule.needs_menu and found.menu is None:
            continue  # the words are there, but no options with a highlight under them
        if _guess(rule) and (menu := _any_menu(profile, block_region, snap, timing.canonical)) is not None:
            return menu  # a field guessed from silence yields to a highlighted list under a question (dialog, fzf)
        if found.state == ScreenKind.IDLE:
            return _prose_question(profile, snap, found) or found
        return found
    if recheck is not None:  # a rule is waiting for more quiet: it decides, not the menu reading
        return Classification(state=ScreenKind.UNKNOWN, recheck_after=recheck)
    return _any_menu(profile, block_region, snap, timing.canonical) or Classification(state=ScreenKind.UNKNOWN)


MESSAGE_ROWS = 6  # an agent's last message, read above its composer: its rows, at most


def _last_region(profile: Profile, snap: Snapshot) -> Region:
    """The agent's last message above the cursor, however far up (a rule with `last` reads only it): up from the cursor's
    row past blank rows, chrome and the profile's status rows, then its rows up to the blank row above it. An agent's
    error stays in its history once it went on; read here, it counts only while it is the latest thing said."""
    lines, row = snap.lines, snap.cursor_y - 1
    between = rx(profile.finish.between) if profile.finish.between else None
    while row >= 0 and (_CHROME.fullmatch(lines[row]) or (between is not None and between.search(lines[row]))):
        row -= 1
    first = row
    while first > 0 and lines[first - 1].strip() and row - first < MESSAGE_ROWS - 1:
        first -= 1
    rows = tuple(lines[first : row + 1]) if row >= 0 else ()
    return Region("\n".join(rows), max(first, 0), rows)


def _guess(rule: Rule) -> bool:
    """A rule that takes a quiet cursor line for a text field (generic.waiting_input): the weakest evidence there is."""
    return rule.kind == ScreenKind.INPUT and rule.scope == "cursor_line" and rule.quiet_ms > 0


_BOXED = str.maketrans({ch: " " for ch in "│┃║|┌┐└┘├┤─━═╭╮╰╯<>[]"})


def _prompt_like(snap: Snapshot, reading: bool) -> bool:
    """Could the cursor be at a line prompt? It shows, and the text left of it has a word once box borders and button
    brackets are gone: dialog parks its cursor on a button, `│    <`, which no reader of a line would ask at."""
    if not snap.cursor_visible:
        return False
    left = snap.cursor_text
    if WORD.search(BUTTONS.sub(" ", left).translate(_BOXED)) is not None:  # a word, not a button's (`< Yes >`)
        return True
    if "<" in left or "│" in left:
        return False  # a button, a box's border: a full-screen dialog, judged whole
    return reading or _PROMPT_END.search(left) is not None


_PROMPT_END = re.compile(r"[>$#%:?]\s*$")  # `>>> `, `#? `, `> `: a prompt with no word of its own


def _emphasis(menu: Menu, snap: Snapshot, first_row: int) -> bool:
    """A row of a list drawn in colour above a line prompt of its own (`Project name: `, the cursor after it) is a
    paragraph's emphasis (a scaffolder's link in cyan among its docs), not a highlight: a styled menu's cursor is hidden,
    on its row or on the question above it, never on a worded prompt below its options (fzf's `> ` has no words, and
    its highlight is a marker)."""
    if menu.by not in (BY_STYLE, BY_FAINT) or not snap.cursor_visible:
        return False
    below = snap.cursor_y > first_row + max(o.row for o in menu.options)
    left = snap.cursor_text
    return below and WORD.search(left) is not None and prompt_ended(left)


def _any_menu(profile: Profile, region: Region, snap: Snapshot, canonical: bool | None = None) -> Classification | None:
    """Whatever the profile: a highlighted option list under a question is a menu (AskUserQuestion pickers,
    clack/Inquirer/prompts selects, a numbered Yes/No drawn by a program no profile knows), where its highlight is one
    (detect/facts.py: not in a program that reads a line with its cursor shown)."""
    styled, faint = snap.rel(region.first_row)
    menu, _, _ = menu_facts(parse_menu(list(region.rows), styled, faint), canonical, snap.cursor_visible)
    if menu is None or _emphasis(menu, snap, region.first_row):
        return None
    first = min(o.row for o in menu.options)
    top = next((i for i in range(first - 1, max(-1, first - 1 - QUESTION_GAP), -1) if ASKS.match(region.rows[i])), None)
    if top is None:
        return None  # options with no question above them: a picker nobody asked about, a list in output
    block = "\n".join(region.rows[top:]).strip("\n")
    anchor = snap.scrolled + region.first_row + top
    rule_id = f"{profile.name}.menu"
    options, facts, certain = menu_facts(parse_menu(block, *snap.rel(region.first_row + top)), canonical, snap.cursor_visible)
    return Classification(
        state=ScreenKind.MENU, rule_id=rule_id, block=block, evidence=region.rows[top].strip(),
        key=f"{rule_id}@{anchor}:{normal(unmarked(block))}", submit=False, anchor_row=anchor,
        menu=options, facts=facts, options_certain=certain,
    )
