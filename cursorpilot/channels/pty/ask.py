"""The PTY channel's half of asking: a classified screen becomes a Question for the shared decision path.

Pure: a classification, the rendered screen and its scrollback in, a Question out. What is being approved (the
action the deny policy judges) is the prompt block of a rule that has a "no" (`deny_reply`): the command, the
file, the diff under the approval's title. Anything else is not an approval: its reply is checked, not the
scrollback above it. What a yes approves (`asked`) is the question in the program's words: a yes is weighed by it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from cursorpilot.decide.question import Choice, Kind, Question
from cursorpilot.decide.yesno import NO_LABEL, YES_LABEL
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.facts import UNCERTAIN
from cursorpilot.detect.menu import Menu
from cursorpilot.detect.profiles import Profile, Rule
from cursorpilot.detect.snapshot import Snapshot

LEAD_ROWS = 9  # rows of text above a line question that lead up to it, read with it (mkfs: "… contains a ext4 file system")
LEAD_BLANKS = 2  # ...across at most this many blank rows in a row (gdisk leaves one between its warning and its question)
HINT_ROWS = 2  # rows of text below it, up to a blank row: a hint ("(this cannot be undone)")
_ASKING = re.compile(r"\?|(?i:(?<![\w/])(y|yes)\s*[/,|]\s*(n|no)(?!\w))")
MESSAGE_ROWS = 16  # an agent's last message, as a turn end shows it to its judge: at most this many rows
_CHROME = re.compile(r"[\s▄▀─━═│┃╭╮╰╯┌┐└┘]*")


def rule_of(profile: Profile, rule_id: str | None) -> Rule | None:
    return next((r for r in profile.rules if r.id == rule_id), None)


def choices(menu: Menu | None) -> tuple[tuple[Choice, ...], int | None]:
    if menu is None:
        return (), None
    out = tuple(Choice(str(o.index), o.label, number=o.number, detail=o.detail, meta=o.meta, checked=o.checked) for o in menu.options)
    return out, menu.shown_highlight


def confirm_menu(menu: Menu | None) -> tuple[bool, str | None]:
    """A menu that asks for a yes (an approval shown by a program no profile knows), and its "no" option."""
    if menu is None:
        return False, None
    yes = any(YES_LABEL.match(o.label) for o in menu.options)
    no = next((o.label for o in menu.options if NO_LABEL.match(o.label)), None)
    return yes and no is not None, no


def asked(rule: Rule | None, c: Classification) -> str:
    """The question in the program's own words (the deny policy's trigger for a closer look at a yes): the rows that
    ask (not the diff or the command box above them in a dialog: the policy judges those as the action)."""
    rows = c.block.split("\n")
    if rule is None:  # a screen no rule knows (a dialog box): the sentence that asks, however it wraps
        return "\n".join(rows[i] for i in _sentence_rows(rows)) or c.block
    if rule.scope != "cursor_line":
        return "\n".join(r for r in rows if _ASKING.search(r)) or headline(c.block)
    return c.block.strip("\n")


def _sentence_rows(rows: list[str]) -> list[int]:
    """The rows that ask, each with the rows of its sentence above it (`Delete file` / `"b.txt"?`): up to the blank row,
    the rule or the row ending a sentence above, two rows at most."""
    out: list[int] = []
    for i, row in enumerate(rows):
        if not _ASKING.search(row):
            continue
        first = i
        while first > 0 and i - first < 2 and rows[first - 1].strip() and not _CHROME.fullmatch(rows[first - 1]) \
                and not rows[first - 1].rstrip().endswith((".", "?", "!", ":")):
            first -= 1
        out += [k for k in range(first, i + 1) if k not in out]
    return out


def lead(rule: Rule | None, c: Classification, snap: Snapshot) -> str:
    """The rest of the question's block, what a yes to it does is read from with the rows that ask (decide/weigh.py).
    A line question: the rows that lead up to it, across the blank rows a program leaves between its warning and its
    question (gdisk: "THIS WILL OVERWRITE EXISTING PARTITIONS!!", a blank row, "Do you want to proceed?"), LEAD_ROWS
    rows of text at most, and a hint row below it. A dialog: its rows besides the ones that ask and the options (the
    command in its box, its description). Earlier questions already answered are cut off by the decision path, which
    knows them; which row a word sits on decides nothing."""
    asked_rows = set(asked(rule, c).split("\n"))
    labels = [o.label for o in c.menu.options] if c.menu is not None else []
    if rule is None or rule.scope != "cursor_line":
        return "\n".join(r for r in c.block.split("\n") if r.strip() and r not in asked_rows and not _an_option(r, labels))
    top = c.anchor_row - snap.scrolled
    above: list[str] = []
    blank, row = 0, top - 1
    while row >= 0 and sum(1 for r in above if r.strip()) < LEAD_ROWS and blank <= LEAD_BLANKS:
        line = snap.lines[row]
        blank = blank + 1 if not line.strip() else 0
        above.insert(0, line)
        row -= 1
    bottom = top + len(c.block.rstrip("\n").split("\n"))
    below = []
    for line in snap.lines[bottom:bottom + HINT_ROWS]:
        if not line.strip():
            break
        below.append(line)
    return "\n".join(r for r in [*above, *below] if r.strip() and not _an_option(r, labels))


def _an_option(row: str, labels: list[str]) -> bool:
    """A menu's option row: the options a yes does not pick are not what it does (the ones it picks are read)."""
    text = " ".join(row.split())
    return any(label.strip() and label.strip() in text for label in labels)


def question(profile: Profile, c: Classification, snap: Snapshot, earlier: list[str], *, kind: str | None = None,
             notes: tuple[str, ...] = (), secret: bool = False) -> Question:
    rule = rule_of(profile, c.rule_id)
    options, highlighted = choices(c.menu)
    deny_reply = rule.deny_reply if rule else None
    approval = deny_reply is not None
    if kind == Kind.UNDECIDED:
        approval, deny_reply = confirm_menu(c.menu)
    last = max((i for i, line in enumerate(snap.lines) if line.strip()), default=0)
    if not c.submit and c.state == Kind.QUESTION:
        notes = (*notes, "This prompt acts on a single key press: the key alone answers it, no Enter follows.")
    if c.menu is not None and c.menu.typed:
        notes = (*notes, "The options are numbered and nothing is highlighted: name one by its label or its number; "
                         "its number is typed, then Enter." + (" If the prompt asks for something else, give that text: "
                                                               "it is typed as it is." if rule and rule.free_text else ""))
    if c.prefill:
        notes = (*notes, f"The field already holds {c.prefill!r}, a default the program filled in: an empty answer keeps "
                         "it; any other answer replaces it (it is erased first).")
    certain = c.menu is None or c.options_certain
    if not certain:
        notes = (*notes, UNCERTAIN)
    return Question(
        kind=kind or c.state,
        text=c.block,
        key=c.key or "",
        source=c.rule_id or "screen",
        action=c.block if approval else "",
        asked=asked(rule, c),
        lead=lead(rule, c, snap),
        approval=approval,
        choices=options,
        multi=bool(c.menu and c.menu.multi),
        free_text=bool(rule and rule.free_text) or not certain,
        options_from_facts=certain,
        highlighted=highlighted,
        deny_reply=deny_reply,
        multiline=c.multiline,
        single_key=not c.submit,
        keys=tuple(rule.keys) if rule else (),
        may_wait=kind == Kind.UNDECIDED,
        live=tuple(snap.lines[: last + 1]),
        earlier=tuple(earlier),
        notes=notes,
        secret=secret,
    )


def last_message(profile: Profile, snap: Snapshot, c: Classification, after: str | None = None, before: str | None = None) -> str:
    """An agent's last message: the rows above its composer (or ending with the question it asks), without the
    composer's borders and the profile's status rows, from below the echo of the last instruction it was given
    (`after`) when that is on screen, else from below the end of the message judged at the last turn end (`before`:
    an agent that does not echo what it is told kept its earlier messages above, and every turn end was judged by
    its first), else at most MESSAGE_ROWS. What a turn end's judge reads as the agent's words, and what the
    no-progress breaker compares from one turn end to the next; the whole screen goes with it."""
    row = c.anchor_row - snap.scrolled
    if c.state == Kind.QUESTION:  # a closing question in prose: its block ends the message
        row += len(c.block.rstrip("\n").split("\n"))
    row = min(max(row, 0), len(snap.lines))
    between = re.compile(profile.finish.between, re.M) if profile.finish.between else None
    rows = list(snap.lines[:row])
    while rows and (_CHROME.fullmatch(rows[-1]) or (between is not None and between.search(rows[-1]))):
        rows.pop()
    kept = rows[-MESSAGE_ROWS:]
    kept = _below(kept, after, before)
    while kept and not kept[0].strip():
        kept.pop(0)
    return "\n".join(line.rstrip() for line in kept)


def _below(rows: list[str], after: str | None, before: str | None) -> list[str]:
    """The rows below the echo of the last instruction; else below the last line of the message judged last time (the
    same words again below it are said again; nothing new below it: the agent said nothing new, its last message)."""
    echo = " ".join((after or "").split())[:40]
    hits = [i for i, line in enumerate(rows) if echo and echo in " ".join(line.split())]
    if hits:
        return rows[hits[-1] + 1:] if hits[-1] + 1 < len(rows) else rows
    said = [line for line in (before or "").splitlines() if line.strip()]
    mark = " ".join(said[-1].split()) if said else ""
    hits = [i for i, line in enumerate(rows) if mark and " ".join(line.split()) == mark]
    if not hits:
        return rows
    if any(r.strip() for r in rows[hits[-1] + 1:]):
        return rows[hits[-1] + 1:]
    return rows[hits[-2] + 1:] if len(hits) > 1 else (before or "").splitlines()


def with_screen(q: Question, snap: Snapshot) -> Question:
    """A question built by the pilot (a turn end's), with the screen it was asked on (its closing question too: a
    rule's `screen:` reads it)."""
    last = max((i for i, line in enumerate(snap.lines) if line.strip()), default=0)
    live = tuple(snap.lines[: last + 1])
    return replace(q, live=live, closing=replace(q.closing, live=live) if q.closing is not None else None)
