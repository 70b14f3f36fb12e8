"""What a question takes, where it says so: a menu's options, a yes/no's two words, the keys it offers in brackets
(unzip's `[y]es, [n]o, [A]ll, [N]one, [r]ename`).

The model's answer schema then allows only these (and the empty answer, Enter: the default), so even a small model
cannot type anything else, and a grammar-backed local server cannot produce it. A 0.5B model typed the question
itself, `package name: (work)`, into npm init; at a yes/no it can now only say y, n or Enter. Where the question does
not say (free text, a screen no rule explains, a multi-select's combinations, a form), nothing is constrained: a
constraint that is wrong would cost the user's task, a missing one only a re-ask.
"""

from __future__ import annotations

import re

from cursorpilot.decide.question import Kind, Question
from cursorpilot.decide.yesno import _LETTER, _PAIR, asked

_UNSAID = (Kind.TURN_END, Kind.UNDECIDED, Kind.FORM)
_LIST = re.compile(r"[\[(]([^\[\]()\n]{5,80})[\])]")  # git's [y,n,q,a,d,e,?]
_KEYWORD = re.compile(r"[^\W_]{1,10}")
_HELP = ("?", "")  # a list's help key (and git's "/", split away as a separator): not an answer
_RADIO = re.compile(r"[●○◉◯◻◼■□]\s*")  # clack's confirm draws its yes/no as "● Yes / ○ No"


def accepted(q: Question) -> tuple[str, ...]:
    """The answers `q` takes, in the order it offers them; () when it does not say."""
    if q.kind in _UNSAID or q.multiline:
        return ()
    if q.choices and not q.options_from_facts:  # options read from style alone: an uncertain reading never narrows it
        return ()
    if q.choices:
        return () if q.multi else tuple(dict.fromkeys(c.label for c in q.choices if c.label.strip()))
    if q.kind not in (Kind.QUESTION, Kind.INPUT):
        return ()
    if q.keys:  # a prompt that spells nothing (a pager's ':'), its keys named by its rule
        return q.keys
    takes = offered_keys(q.text) or offered_keys(asked(q))  # as shown ("│  ● Yes / ○ No" under clack's question), else as asked
    if q.single_key:  # a prompt that acts on one key (clack's ● Yes / ○ No): "yes" would be y, then e and s for the next
        takes = tuple(dict.fromkeys(w[0] if len(w) > 1 else w for w in takes))
    return takes


def offered_keys(text: str) -> tuple[str, ...]:
    """The words or keys offered by the spelling in the question's last two lines, where the yes/no reading
    (yesno.spelling) finds it: `[y/N]` takes y and n, `(yes/no)` yes and no, `[y]es, [n]o, [A]ll` y, n and A (a key's
    case counts: unzip's A is All, its N None), git's `[y,n,q,a,d,j,J,g,/,e,?]` each of its keys but the help and the search. One bracketed
    letter alone ("the (n)ame") is not a list of keys."""
    tail = _RADIO.sub("", "\n".join(text.rstrip().splitlines()[-2:]))
    for m in _LIST.finditer(tail):  # a list of three or more: the whole list, not the yes/no pair inside it
        parts = [p.strip() for p in re.split(r"[,/|]", m.group(1))]
        if len(parts) >= 3 and all(_KEYWORD.fullmatch(p) or p in _HELP for p in parts):
            return tuple(dict.fromkeys(p for p in parts if p not in _HELP))
    words: list[str] = []
    for m in _PAIR.finditer(tail):
        a, b = m.group("a").lower(), m.group("b").lower()
        if a[0] != b[0]:
            words += sorted((a, b), key=lambda w: w[0] != "y")  # yes first
    letters = [m.group("key") for m in _LETTER.finditer(tail)]
    if len(set(letters)) >= 2:
        words += letters
    return tuple(dict.fromkeys(words))
