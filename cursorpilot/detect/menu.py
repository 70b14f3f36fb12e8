"""The menu model: options, highlight and kind of a selection prompt, read from rendered rows.

Pure text in, data out. A menu is found from its highlighted row: a marker (❯ › » > ● ▶ → ➤)
at the start of a row, optionally inside a box border. Its siblings are the rows that start
their text in the same column: the number column when options are numbered (``1.``, ``2)``),
else the label column. Rows indented further belong to the option above (a second line or a
description). Dividers are skipped; a blank row (except between numbered options) or a row
starting left of the options ends it. A checkbox on the options (``[ ]``, ``[x]``, ``◯``, ``◉``,
``☐``, ``☑``; questionary's ``○``/``●`` after its ``»``) makes it multi-select.

Reverse-video or colour-only highlights carry no marker in text: the caller passes the rows the
screen saw styled (``styled``), and the one styled option is taken as the highlighted one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cursorpilot.decide.choices import Offered, find
from cursorpilot.keys import only_keys

MARKERS = "❯›>●▶→➤»"  # a highlighted row starts with one of these
UNMARKED = "○"  # a radio button that is not the highlighted one (@clack/prompts)
_PIPES = re.compile(r"^\s*\||\|\s*$")  # an ASCII border: only at either end of a row (inside one it is text)
_VERTICAL = str.maketrans({ch: " " for ch in "│┃║"})
_ROW = re.compile(
    rf"^(?P<lead>\s*)(?P<mark>[{MARKERS}{UNMARKED}])?(?P<gap>\s*)"
    r"(?P<check>\[[ xX✓✔*]\]|[◯◉○●◎☐☑■□◻◼])?\s*"
    r"(?:(?P<num>\d{1,2})[.)]\s+)?(?:(?P<numcheck>\[[ xX✓✔*]\])\s+)?(?P<label>\S.*?)\s*$"  # "1. [ ] Auth" (Claude)
)
_DIVIDER = re.compile(r"^[\s─━═┄┈╌\-└┘┌┐╰╯╭╮├┤┬┴┼╔╗╚╝╠╣╦╩╬]+$")  # rules and box corners: never an option
_RESULT = re.compile(r"^\s*⎿")  # an agent's result row (Claude Code's "⎿  You've hit your limit"): never an option
_CHECKED = set("xX✓✔*◉●◎☑■◼")
_RADIO = UNMARKED + "●"  # a radio button, or (questionary) a checkbox where the options' boxes are
_ACTION = re.compile(r"(?i)^(submit|done|confirm|continue|next)$")
_QUESTION = re.compile(r"^\s*(?:[?◆◇▲]|\[\?\])\s")  # a prompt library's question line, coloured like a highlight
_META = re.compile(r"(?i)^(type something|other|chat about this|something else)\b")


@dataclass(frozen=True, slots=True)
class Option:
    index: int  # 0-based position in the menu
    label: str
    number: int | None = None  # the number shown before it, if any
    detail: str = ""  # lines under the label
    checked: bool | None = None  # multi-select: its box; None in single-select
    meta: bool = False  # "Type something", "Other": not an answer by itself
    row: int = -1  # its first row in the rows parsed
    action: bool = False  # a multi-select's "Submit" row: Enter there confirms the selection


@dataclass(frozen=True, slots=True)
class Menu:
    options: tuple[Option, ...]
    highlighted: int  # index of the highlighted option
    multi: bool
    across: bool = False  # buttons side by side (<Yes>  <No>): Right and Left move between them
    typed: bool = False  # a numbered list above a line prompt (bash `select`): no highlight, an option's number is typed
    by: str = "marker"  # how its highlight was read: marker | style | faint | numbers | buttons (detect/facts.py weighs it)

    @property
    def current(self) -> Option:
        return self.options[self.highlighted]

    @property
    def shown_highlight(self) -> int | None:
        """The option highlighted on screen; None where nothing is (a typed menu)."""
        return None if self.typed else self.highlighted

    def describe(self) -> str:
        """For the LLM prompt and for `detect`: one option per line, the highlighted one marked."""
        lines = []
        for o in self.options:
            mark = "→" if o.index == self.shown_highlight else " "
            box = "" if o.checked is None else ("[x] " if o.checked else "[ ] ")
            num = f"{o.number}. " if o.number is not None else ""
            extra = f"  ({o.detail})" if o.detail else ""
            lines.append(f"{mark} {o.index + 1}) {box}{num}{o.label}{extra}")
        if self.typed:
            return "single choice, answered by typing its number\n" + "\n".join(lines)
        kind = "multi-select (Space toggles, Enter confirms)" if self.multi else "single choice"
        return f"{kind}; highlighted: {self.current.label}\n" + "\n".join(lines)


def _strip(row: str) -> str:
    """A row without its box borders, each turned into a space so columns stay where they were: a list nested in two
    boxes (dialog's menu inside its frame) lines up like one drawn without any."""
    return _PIPES.sub(lambda m: " " * len(m.group(0)), row).translate(_VERTICAL).rstrip()


def parse(rows: list[str] | str, styled: frozenset[int] | set[int] = frozenset(),
          faint: frozenset[int] | set[int] = frozenset()) -> Menu | None:
    """The menu in these rows (a prompt block), or None when there is no highlighted option.

    styled: rows drawn in reverse video or on a coloured background; with no marker character
    on screen, such a row is taken as the highlighted one. faint: rows drawn faint; the one option
    of a list that is not faint, when all its siblings are, is the highlighted one (@clack/prompts).
    """
    lines = [_strip(r) for r in (rows.split("\n") if isinstance(rows, str) else rows)]
    parsed = [_ROW.match(line) if line.strip() and not _DIVIDER.match(line) and not _RESULT.match(line) else None for line in lines]
    # The first highlighted row that has siblings ("> " in a banner is not a menu). Pointers first: a "●" may be
    # a highlighted radio button (@clack/prompts) or a ticked box (questionary, whose pointer is "»").
    for marks in (MARKERS.replace("●", ""), "●"):
        for at, m in enumerate(parsed):
            if m and m.group("mark") and m.group("mark") in marks and not _is_prose(m):
                menu = _menu_at(lines, parsed, at)
                if menu is not None and not _bulleted(menu, parsed, m.group("mark")):
                    return menu
    for at in sorted(styled):  # a highlight drawn only in reverse video or colour: one styled option, the others plain
        if 0 <= at < len(lines) and parsed[at] is not None and not _QUESTION.match(lines[at]):
            menu = _menu_at(lines, parsed, at)
            if menu is not None and sum(1 for o in menu.options if o.row in styled) == 1:
                return replace(menu, by="style")
    if faint:  # every option faint but one: that one is highlighted
        for at in range(len(lines)):
            if parsed[at] is None or at in faint or _QUESTION.match(lines[at]):
                continue
            menu = _menu_at(lines, parsed, at)
            if menu is not None and all(o.row in faint for o in menu.options if o.row != at):
                return replace(menu, by="faint")
    return None


def _menu_at(lines: list[str], parsed: list, at: int) -> Menu | None:
    head = parsed[at]
    numbered = head.group("num") is not None
    col = head.start("num") if numbered else (head.start("check") if head.group("check") else head.start("label"))
    boxed = head.group("check") is not None or head.group("numcheck") is not None
    radio = not boxed and any(m is not None and m.group("mark") == UNMARKED for m in parsed)  # every option has a radio
    start = at
    while start > 0 and _sibling(lines, parsed, start - 1, col, numbered, radio, boxed, -1) != "end":
        start -= 1
    options: list[Option] = []
    highlighted = 0
    current: dict | None = None
    for i in range(start, len(lines)):
        kind = _sibling(lines, parsed, i, col, numbered, radio, boxed) if i != at else "option"
        if kind == "end":
            if i > at:
                break
            continue
        if kind == "skip":
            continue
        m = parsed[i]
        if kind == "detail":
            if current is not None and boxed and _ACTION.match(lines[i].strip()):
                options.append(Option(**current))  # Claude's multi-select: "Submit" under the options, indented
                current = {"index": len(options), "row": i, "label": lines[i].strip(), "number": None, "detail": "", "checked": None,
                           "meta": True, "action": True}
                continue
            if current is not None:
                current["detail"] = (current["detail"] + " " + m.group(0).strip()).strip()
            continue
        if current is not None:
            options.append(Option(**current))
        if i == at:
            highlighted = len(options)
        check = m.group("check") or m.group("numcheck") or (m.group("mark") if boxed and _radio(m) and m.start("mark") == col else None)
        current = {"index": len(options), "row": i, "label": m.group("label"), "number": int(m.group("num")) if m.group("num") else None,
                   "detail": "", "checked": None if check is None else any(ch in _CHECKED for ch in check),
                   "meta": bool(_META.match(m.group("label")))}
    if current is not None:
        options.append(Option(**current))
    if len(options) < 2:
        return None
    return Menu(tuple(options), highlighted, any(o.checked is not None for o in options))


def _bulleted(menu: Menu, parsed: list, mark: str) -> bool:
    """Every option starts with the same marker: a bulleted list (a scaffolder's `→ https://…` links), not a highlight,
    which marks one row among its siblings."""
    return all(parsed[o.row] is not None and parsed[o.row].group("mark") == mark for o in menu.options)


def _radio(m: re.Match[str]) -> bool:
    return m.group("mark") is not None and m.group("mark") in _RADIO


def _is_prose(m: re.Match[str]) -> bool:
    """'> ' quoting a line of prose is not a highlight; an option label is short."""
    return m.group("mark") == ">" and m.group("num") is None and len(m.group("label")) > 80


def _sibling(lines: list[str], parsed: list, i: int, col: int, numbered: bool, radio: bool, boxed: bool, step: int = 1) -> str:
    """option | detail | skip | end, for row i of a menu whose options start at column col (scanning by step)."""
    m = parsed[i]
    if not lines[i].strip():  # blank: inside a numbered menu when the next row with text is an option (Codex)
        if not numbered:
            return "end"
        j = i + step
        while 0 <= j < len(lines) and not lines[j].strip():
            j += step
        inside = 0 <= j < len(lines) and _sibling(lines, parsed, j, col, numbered, radio, boxed, step) in ("option", "detail")
        return "skip" if inside else "end"
    if m is None:  # a divider
        return "skip"
    text_col = len(lines[i]) - len(lines[i].lstrip())
    if numbered:
        if m.group("num") is not None and m.start("num") == col:
            return "option"
        return "detail" if text_col > col else "end"
    if boxed and _radio(m) and m.start("mark") == col:
        return "option"  # its box stands where the highlighted row's box is
    if boxed and not (m.group("check") or m.group("numcheck")):
        return "detail" if text_col > col else "end"  # no box: a wrapped question's tail, a hint row, not an option
    own = m.start("check") if m.group("check") else m.start("label")
    marked = m.group("mark") is not None and (m.group("mark") == UNMARKED or m.start("mark") < col)
    if own == col and (marked or (m.group("mark") is None and not radio)):
        return "option"
    return "detail" if text_col >= col else "end"


def keys_for(menu: Menu, reply: str) -> tuple[str, list[Option]] | None:
    """The reply as keys (reply grammar) when it names options by label or number; None to type it as it is.

    Single choice: arrows from the highlighted row to the option, then Enter. Multi-select
    (labels separated by commas): for each option whose box must change, move there and
    press Space; then Enter. Returns the keys and the options chosen, in order.
    """
    reply = _as_word(menu, reply)
    if reply.strip() in ("", "<enter>"):  # Enter alone takes the default: the highlighted option, the boxes as they are
        chosen = [] if menu.typed else [o for o in menu.options if o.checked] if menu.multi else [menu.current]
        submit = submit_row(menu)  # where Enter toggles a box, the selection is confirmed on the Submit row
        return (_move(submit.index - menu.highlighted) if submit is not None else "") + "<enter>", chosen
    if only_keys(reply):
        return None
    if menu.typed:  # no highlight to move: the option's number, then Enter (the prompt reads a line)
        option = _find(menu, reply)
        return None if option is None else (f"{option.number}<enter>", [option])
    wanted = [w.strip() for w in (reply.split(",") if menu.multi else [reply]) if w.strip()]
    if not wanted:
        return None
    chosen = []
    for w in wanted:
        option = _find(menu, w)
        if option is None:
            return None
        chosen.append(option)
    keys, pos = [], menu.highlighted
    targets = chosen if not menu.multi else [o for o in menu.options if (o in chosen) != bool(o.checked) and not o.action]
    for option in targets:
        keys.append(_move(option.index - pos, menu.across))
        pos = option.index
        if menu.multi:
            keys.append("<space>")
    submit = next((o for o in menu.options if o.action), None) if menu.multi else None
    if submit is not None:  # where Enter toggles a box, the selection is confirmed on the Submit row
        keys.append(_move(submit.index - pos))
    keys.append("<enter>")
    return "".join(keys), chosen


_LETTER_WORDS = {"y": "yes", "n": "no"}


def _as_word(menu: Menu, reply: str) -> str:
    """`y` or `n` answering a menu means its Yes or No option, unless the menu offers that letter as a key of its own
    (Cursor's `[y] Yes`, `Proceed (y)`): a numbered Yes/No ignores a bare `y`, and the run would wait for nothing."""
    letter = reply.strip().lower()
    word = _LETTER_WORDS.get(letter)
    if word is None:
        return reply
    hotkey = re.compile(rf"(?i)\[{letter}\]|\((?:[^()]*\bor\s+)?{letter}\)")
    if any(hotkey.search(f"{o.label} {o.detail}") for o in menu.options):
        return reply
    return word if _find(menu, word) is not None else reply


# One numbered option: `1) apple` (bash/zsh `select`), `1. apple`, `[1] apple`, `1 - apple` (cookiecutter). A row may
# hold several, in columns two spaces or more apart (`select` lays a long list out column by column).
_NUMBER = r"(?:\[\d{1,3}\]|\d{1,3}[.)]|\d{1,3}\s+-)"
_ENTRY = re.compile(rf"\s*(?:\[(?P<b>\d{{1,3}})\]|(?P<n>\d{{1,3}})(?:[.)]|\s+-))\s+(?P<label>\S.*?)(?=\s{{2,}}{_NUMBER}\s|\s*$)")


def _entries(row: str) -> list[tuple[int, str]] | None:
    """The numbered options a row holds, or None when it holds anything else."""
    out, pos = [], 0
    while pos < len(row.rstrip()):
        m = _ENTRY.match(row, pos)
        if m is None:
            return None
        out.append((int(m.group("b") or m.group("n")), m.group("label")))
        pos = m.end()
    return out or None


def numbered(rows: list[str] | str) -> Menu | None:
    """A numbered list right above a line prompt (the last row), answered by typing a number: bash/zsh `select`
    (`1) apple` … `#? `), a PS3 prompt, cookiecutter's `1 - MIT` … `Choose from [1/2/3]`. No highlight to read or
    move. The numbers must run 1, 2, 3 … (in whatever columns), so a list of results above a prompt is not taken
    for one; None otherwise."""
    lines = rows.split("\n") if isinstance(rows, str) else list(rows)
    found: list[tuple[int, str, int]] = []
    i = len(lines) - 2
    while i >= 0 and (entries := _entries(lines[i])) is not None:
        found[:0] = [(n, label, i) for n, label in entries]
        i -= 1
    found.sort()
    if len(found) < 2 or [n for n, _, _ in found] != list(range(1, len(found) + 1)):
        return None
    options = tuple(Option(k, label, number=n, row=row) for k, (n, label, row) in enumerate(found))
    return Menu(options, 0, multi=False, typed=True, by="numbers")


def highlighted_row(rows, label: str) -> bool:
    """A row with the highlight marker on this label (a Submit row the menu model files under the options)."""
    pattern = re.compile(rf"^\s*(?:[│┃|]\s*)?[{MARKERS}]\s*(?:\d{{1,2}}[.)]\s+)?(?:\[.\]\s+)?{re.escape(label)}\s*$")
    return any(pattern.match(row) for row in rows)


def submit_row(menu: Menu) -> Option | None:
    """The row Enter confirms a multi-select on, if it has one."""
    return next((o for o in menu.options if o.action), None) if menu.multi else None


def _move(step: int, across: bool = False) -> str:
    if across:
        return ("<right>" if step > 0 else "<left>") * abs(step)
    return ("<down>" if step > 0 else "<up>") * abs(step)


_BUTTON = re.compile(r"<\s*([A-Za-z][^<>\n]{0,18}?)\s*>|\[\s+([A-Za-z][^\[\]\n]{1,18}?)\s+\]")  # <Yes> < Yes > [ Yes ]


def buttons(lines: tuple[str, ...] | list[str], cursor_x: int, cursor_y: int) -> Menu | None:
    """A dialog's buttons (newt/whiptail, dialog: `<Yes>  <No>`, Midnight Commander: `[ Yes ]  [ No ]`) as a menu
    across, the focused one being where the cursor sits (these toolkits park it on the focused widget). None when the
    cursor is on no button."""
    for y in range(len(lines) - 1, -1, -1):
        found = list(_BUTTON.finditer(lines[y]))
        if len(found) < 2:
            continue
        focused = next((i for i, m in enumerate(found) if y == cursor_y and m.start() <= cursor_x < m.end()), None)
        if focused is None:
            return None
        options = tuple(Option(i, (m.group(1) or m.group(2)).strip(), row=y) for i, m in enumerate(found))
        return Menu(options, focused, multi=False, across=True, by="buttons")
    return None


def _find(menu: Menu, wanted: str) -> Option | None:
    if only_keys(wanted):
        return None
    at = find([Offered(o.label, o.detail, o.number) for o in menu.options], wanted)
    return None if at is None else menu.options[at]
