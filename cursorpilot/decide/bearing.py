"""What a small model needs beside the question, where it looks: the line that asks, the default it shows, and the
governing prompt's sentences that bear on it.

A 0.5B model read a governing prompt of five sentences at the top of a long prompt and then answered the question at
the bottom from the screen alone: cookiecutter's `project_slug (rocket_lab):` got the project's name (the prompt said
"keep whatever slug the template suggests"), sphinx's `Project release []:` the project's name (the prompt said
"release 1.4"), create-vite's `Install with npm and start now?` a yes (the prompt said "do not install dependencies and
do not start a dev server"). The sentence that decides each of those shares a word with the question (slug, release,
install, start), so that sentence is said again next to the question. A word shared is only a reason to show a
sentence; the model still decides. Pure: text in, text out.
"""

from __future__ import annotations

import re

from cursorpilot.decide.policy import sentences

_WORD = re.compile(r"[^\W_]+")
# A default shown after the question's label: `(rocket_lab)`, `[en]`, `[]`, `(1)`: the last bracket of the line.
_DEFAULT = re.compile(r"(?:^|\s)[\[(]([^\[\]()\n]{0,60})[\])]\s*[:?>]?\s*$")  # not `name(s):`
_KEYS = re.compile(r"^\s*\w{1,5}\s*([/,|]\s*\w{1,5}\s*)+$")  # (y/n), [Y/n], [1/2/3]: the keys a prompt takes, not a default
_COUNTER = re.compile(r"^\s*[\[(]\d+/\d+[\])]\s*")  # cookiecutter's "[2/4] ", not the question's words
_ASKS = re.compile(r"[?:>\[(]")
# A line that offers an answer rather than asks: a marked or numbered option, or one that ends with the key it takes
# (the Cursor CLI's `→ Run (once) (y)`, `Add Shell(npm) to allowlist? (tab)`, `Skip (esc or n)`).
_OPTION = re.compile(r"^\s*(?:[→❯›»●○◉◯]\s|\d+[.)]\s)|\((?:[a-zA-Z]|tab|shift\+tab|esc[^()]*|enter|ctrl\+\w)\)\s*$")
_MARKS = re.compile(r"^[\s│|◆◇▲●○◉◯❯›»?>]+")
_STOP = frozenset("""a an and are as at be by can do does for from have how in into is it its of on or please the this
that to was what which will with would you your yes no default enter choose select pick now want like new use""".split())
_SAME = {w: "confirm" for w in ("ok", "okay", "proceed", "continue", "correct", "sure", "confirm", "confirmed")}
MAX_SENTENCES = 1
LONG = 60  # a sentence longer than this is shown by its clauses that bear on the question
_CLAUSE = re.compile(r",\s+|;\s+| and (?:the|a|an) ")


def stem(word: str) -> str:
    """A word's stem, enough to meet its other forms: install / installs / installing, licence / license."""
    w = word.casefold()
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if len(w) - len(suffix) >= 4 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:5] if len(w) > 5 else w


def words(text: str) -> set[str]:
    """The content words of a text, stemmed: `project_slug` is project and slug; a word that asks for a go-ahead is
    one word (npm's `Is this OK?` and "Confirm the result when asked")."""
    found = (_SAME.get(w.casefold(), w) for w in _WORD.findall(text))
    return {stem(w) for w in found if len(w) >= 3 and w.casefold() not in _STOP and not w.isdigit()}


def question_line(text: str, labels: tuple[str, ...] = ()) -> str:
    """The line that asks: a menu's first line that is not one of its options (its title); else the last line that
    asks (a `?`, a `:`, a `>`, a bracket: not clack's `│  ● Yes / ○ No` or its closing `└`), else the last."""
    lines = [x.rstrip() for x in text.splitlines() if _WORD.search(x)]
    if not lines:
        return text.strip()
    if labels:
        own = {" ".join(label.split()).casefold() for label in labels}
        for line in lines:
            bare = " ".join(_MARKS.sub("", line).split()).casefold()
            if bare and not any(bare == o or bare.startswith(o + " ") for o in own):
                return line
    asking = [x for x in lines if not _OPTION.search(x)] or lines
    return next((x for x in reversed(asking) if _ASKS.search(x)), asking[-1])


def shown_default(line: str) -> str | None:
    """The default a line prompt shows in brackets or parentheses (`project_slug (rocket_lab):` -> rocket_lab,
    `Project release []:` -> ""), or None: it shows none, or the brackets hold the keys it takes (`[y/N]`, `[1/2/3]`:
    those are its options, accepts.py)."""
    m = _DEFAULT.search(_COUNTER.sub("", line))
    if m is None or _KEYS.match(m.group(1)):
        return None
    return m.group(1).strip()


def bearing(governing_prompt: str, question: str, labels: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The governing prompt's sentences that share a content word with the question or its options: only those that
    hold the label's head word when any does (`slug` in `project_slug`, not `project`), a word fewer sentences hold
    counting for more, the shorter first of two alike ("When it asks whether to deploy, answer y" before "This script
    installs dependencies and then may ask whether to deploy"), MAX_SENTENCES at most, in the prompt's own order; a
    long one by its clauses that share it
    (`release 1.4` out of sphinx's sentence of five facts). None when the governing prompt is one sentence: it is
    already right above."""
    said = sentences(governing_prompt)
    if len(said) < 2:
        return ()
    asked = words(_COUNTER.sub("", question)) | {w for label in labels for w in words(label)}
    held = [words(s) & asked for s in said]
    df = {w: sum(w in h for h in held) for w in asked}
    head = _head(question)
    if any(head in h for h in held):  # the sentences that name what is asked, when any does
        held = [h if head in h else set() for h in held]
    scored = sorted(((sum(1 / df[w] for w in h), i) for i, h in enumerate(held) if h), key=lambda t: (-t[0], len(said[t[1]])))
    return tuple(_focus(said[i], asked, head) for _, i in sorted(scored[:MAX_SENTENCES], key=lambda t: t[1]))


def _head(question: str) -> str | None:
    """The label's last content word, which names what is asked: `release` in `Project release []:`."""
    label = _DEFAULT.sub("", _COUNTER.sub("", question.strip().splitlines()[-1] if question.strip() else ""))
    found = [stem(w) for w in _WORD.findall(label) if stem(w) in words(w)]
    return found[-1] if found else None


def _focus(sentence: str, asked: set[str], head: str | None) -> str:
    """A long sentence's clauses (split at commas outside brackets and quotes) that share a word with the question:
    those that hold the label's head word, when any does."""
    if len(sentence) <= LONG:
        return sentence
    clauses = _clauses(sentence)
    kept = [c for c in clauses if head in words(c)] or [c for c in clauses if words(c) & asked]
    return " … ".join(c.strip() for c in kept) if kept and len(kept) < len(clauses) else sentence


def _clauses(sentence: str) -> list[str]:
    out, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(sentence):
        depth += ch in "([{" and not quoted
        depth -= ch in ")]}" and not quoted and depth > 0
        quoted ^= ch == '"'
        m = _CLAUSE.match(sentence, i) if depth == 0 and not quoted and ch in ", " else None
        if m is not None:  # at a comma, or " and the …" (npm's "the MIT license and the module type")
            out.append(sentence[start:i])
            start = i + (1 if ch == "," or ch == ";" else 5)
    merged: list[str] = []
    for clause in (c for c in (*out, sentence[start:]) if c.strip()):
        if merged and len(clause.split()) < 2:  # ", refuse": a clause of one word is the verb of the one before it
            merged[-1] += "," + clause
        else:
            merged.append(clause)
    return merged
