"""A yes told apart from other answers, and the question's own no: the deny policy weighs a yes by what the question
says it does (`Decider.check`), whoever chose it. Shared by both channels, so that a `y` typed at `[y/N]`, the "Yes"
of a numbered menu, Enter on `[Y/n]` and an ACP `allow_once` are the same yes.
"""

from __future__ import annotations

import re

from cursorpilot.decide.choices import Offered, find, normal
from cursorpilot.decide.policy import check_question
from cursorpilot.decide.question import Choice, Decision, Question

YES_LABEL = re.compile(r"(?i)^(yes|allow|approve|accept|proceed|continue|confirm|trust|run|ok)\b")
NO_LABEL = re.compile(r"(?i)^(no|deny|reject|decline|cancel|don.?t|do not|skip|quit|exit|abort|keep)\b")
YES_WORDS = {"y", "yes", "yeah", "yep", "sure", "ok", "okay", "allow", "approve", "accept", "proceed", "continue", "confirm",
             "true", "go", "go ahead", "do it", "all", "always"}
# a yes/no spelling: [y/N], (y,N), (yes/no), [Y/n]:, (Y/N)?, [yes/no], (y or n), [y|n], (yes/no/[fingerprint])?, y/n?
_PAIR = re.compile(r"(?i)(?<![\w/])(?P<a>y(?:es)?|n(?:o)?)\s*(?:[/,|]|\s+or\s+)\s*(?P<b>y(?:es)?|n(?:o)?)(?![\w])")
_DEFAULT = re.compile(r"(?i)[\[(](?P<d>yes|no)[\])]:?\s*$")  # npm's "Is this OK? (yes)", aider's "[Yes]:"
_NO_LETTER = re.compile(r"(?i)[(\[]n[)\]]o\b")  # aider's (Y)es/(N)o, unzip's [y]es, [n]o
_LETTER = re.compile(r"[(\[](?P<key>\w)[)\]](?P<rest>\w+)")  # a key offered with its word: [A]ll, (Y)es
_KEY = re.compile(r"<key:(.)>")
# a confirmation typed out: "Type the database name to confirm", "enter the project's name to continue", "confirm by typing"
_TYPE_TO_CONFIRM = re.compile(r"(?i)\b(type|enter|write|re-?type|input)\b[^\n]{0,80}?\bto (confirm|continue|proceed)\b"
                              r"|\bconfirm\w* by typing\b|\bto confirm\b[^\n]{0,60}\b(type|enter)\b")
_NO_WORDS = {"n", "no", "nope", "cancel", "abort", "quit", "exit", "stop", "skip", "q"}
_ENTER = ("", "<enter>", "<kp-enter>")
_REJECT = ("reject_once", "reject_always")


def spelling(text: str) -> tuple[str | None, str | None]:
    """(the default, the spelling of no) offered by the last yes/no spelling in the question's last lines: [Y/n] is
    (yes, n), (yes/no) is (None, no). A capital marks the default when the other part is lower case."""
    tail = "\n".join(text.rstrip().splitlines()[-2:])
    default = no = None
    for m in _PAIR.finditer(tail):
        a, b = m.group("a"), m.group("b")
        if a[0].lower() == b[0].lower():
            continue
        yes, n = (a, b) if a[0].lower() == "y" else (b, a)
        no = n.lower()
        default = "yes" if yes[0].isupper() and n[0].islower() else "no" if n[0].isupper() and yes[0].islower() else None
    if _NO_LETTER.search(tail):
        no = "n"
    if (found := _DEFAULT.search(tail)) is not None:
        default = found.group("d").lower()
    return default, no


def asked(q: Question) -> str:
    """What a yes to this question approves, in the program's words."""
    return q.asked or q.text


def chose_yes(c: Choice) -> bool:
    """An option that says yes (or names the harm itself: "Delete all")."""
    if c.kind:
        return c.kind.startswith("allow")
    return not NO_LABEL.match(c.label) and (bool(YES_LABEL.match(c.label)) or check_question(c.label) is not None)


def said_yes(q: Question, d: Decision) -> bool:
    """A yes: the option it picks says yes; a yes word (`y`, `yes`, `allow` …, or `<key:y>`); Enter on a prompt whose
    default (or highlighted option) is yes; the harm typed out ("DELETE" at "Type DELETE to confirm"); or whatever is
    typed where the question asks for a confirmation typed out ("Type the database name to confirm:": the name is the
    yes, and anything but a no is an attempt at it)."""
    if d.choices:
        return any(chose_yes(c) for c in d.choices)
    text = (d.text or "").strip()
    if (key := _KEY.fullmatch(text)) is not None:
        text = key.group(1)
    if text in _ENTER:
        if q.choices and q.highlighted is not None:
            return chose_yes(q.choices[q.highlighted])
        return spelling(asked(q))[0] == "yes"
    if normal(text) in YES_WORDS or _letter_word(q, text) in YES_WORDS or check_question(text) is not None:
        return True
    return bool(text) and normal(text) not in _NO_WORDS and _TYPE_TO_CONFIRM.search(f"{q.lead}\n{asked(q)}") is not None


def _letter_word(q: Question, text: str) -> str | None:
    """The word a one-letter reply stands for where the question offers it so: unzip's `A` is [A]ll (case counts:
    its `N` is [N]one)."""
    if len(text) != 1:
        return None
    return next((m.group("key").lower() + m.group("rest").lower() for m in _LETTER.finditer(asked(q)) if m.group("key") == text), None)


def refusal(q: Question) -> tuple[str, tuple[Choice, ...]] | None:
    """The question's no: its reject option, the profile's no, a No option, the no its spelling offers ([y/N]: n,
    (yes/no): no). None: it offers none (a human decides)."""
    if q.choices:
        if (pick := next((c for kind in _REJECT for c in q.choices if c.kind == kind), None)) is not None:
            return pick.label, (pick,)
        offered = [Offered(c.label, c.detail, c.number, c.kind) for c in q.choices]
        if q.deny_reply and (at := find(offered, q.deny_reply)) is not None:
            return q.deny_reply, (q.choices[at],)  # the profile's words for it ("No" for "No, and tell Claude …")
        if (pick := next((c for c in q.choices if NO_LABEL.match(c.label)), None)) is not None:
            return pick.label, (pick,)
        return (q.deny_reply, ()) if q.deny_reply else None
    no = spelling(asked(q))[1] or q.deny_reply
    return (no, ()) if no else None


_OPTION_ROW = re.compile(r"^\s*[\[(]?(?P<key>\d{1,2}|[a-zA-Z])[.)\]]\s+(?P<label>\S.*)$")
_CANCEL = ("<esc>", "<ctrl-c>", "<ctrl-d>")


def said_no(q: Question, d: Decision) -> bool:
    """Known to be this question's no: its no option, a no word or the no its spelling offers, Enter where the default
    (or the highlighted option) is no, Esc or cancel."""
    if d.choices:
        return all(c.kind.startswith("reject") if c.kind else bool(NO_LABEL.match(c.label)) for c in d.choices)
    text = (d.text or "").strip()
    if (key := _KEY.fullmatch(text)) is not None:
        text = key.group(1)
    if text.lower() in _CANCEL:
        return True
    if text in _ENTER:
        if q.choices and q.highlighted is not None:
            c = q.choices[q.highlighted]
            return c.kind.startswith("reject") if c.kind else bool(NO_LABEL.match(c.label))
        return spelling(asked(q))[0] == "no"
    no = refusal(q)
    return normal(text) in _NO_WORDS or (no is not None and not no[1] and normal(text) == normal(no[0])) or _letter_word(q, text) in _NO_WORDS


def may_say_yes(q: Question, d: Decision) -> bool:
    """An answer weighed as a yes (fail closed): a yes (`said_yes`), or anything but a known no where the question
    offers a yes: a yes/no spelling, its options, or option rows in its block ("1. Yes" above a `Choice:` line, where
    `1` is the yes)."""
    if said_no(q, d):
        return False
    if said_yes(q, d) or q.choices or any(spelling(asked(q))):
        return True
    text = normal((d.text or "").strip())
    rows = [m for line in f"{q.lead}\n{asked(q)}".splitlines() if (m := _OPTION_ROW.match(line))]
    return any(m.group("key").lower() == text and not NO_LABEL.match(m.group("label")) for m in rows)
