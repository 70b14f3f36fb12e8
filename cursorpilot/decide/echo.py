"""A reply that only repeats what the model was shown is no answer.

A 0.5B model on a local server typed npm init's question back at it (`package name: (work)` as the package name) and
a line of our own prompt into sphinx-quickstart (`Kind: input (detected by rule generic.library_input)`). Typed, such a
reply answers nothing and often does harm, so the decision path asks once more, saying why, then asks a human
(`Decider.call`). Pure: text in, a reason out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cursorpilot.decide.bearing import question_line, words

BEARING_SAID = "the governing prompt says: "  # how context.py says a sentence next to the question (as own_lines keeps it)
_PROMPTISH = re.compile(r"[:?>)\]#$]")  # a line that asks: a label and its colon, a [y/N], a shell's $ or #
_DEFAULT = re.compile(r"\s*[\[(]([^\[\]()]*)[\])]")  # a default shown in the question: [en], (work), []
_PLACEHOLDER = re.compile(r"<[^<>]*\s[^<>]*>")  # the system prompt's "<what to type>" (keys are one word: <enter>)
_FENCE = "```"
_COUNTER = re.compile(r"^\s*[\[(]\d+/\d+[\])]\s*")  # cookiecutter's "[4/4] ": no word of the question's
_MARK = re.compile(r"^[\s│|◆◇▲●○◉◯❯›»?>:$#]+")  # sphinx's "> ", Inquirer's "? ", clack's "◆  ": not the question's words
ROW_WORDS = 4  # a row of the screen copied whole, of this many words or more, is no answer (a name picked off a list is one)
_TO_COPY = re.compile(r"(?i)\b(type|enter|copy|repeat|paste|write)\b.{0,40}\b(following|below|above|shown|exactly|phrase|sentence)\b")


def _norm(text: str) -> str:
    return " ".join(text.split()).strip("`'\"").strip().casefold()


def own_lines(system: str, user: str, governing_prompt: str = "") -> tuple[str, ...]:
    """The lines of a prompt that are ours: outside the TERMINAL fences (the program's text) and not the user's
    governing prompt (where answers may rightly come from). Earlier questions count without their "- Q:" mark; earlier
    answers do not count (the same answer twice is no echo)."""
    governing = {_norm(x) for x in governing_prompt.splitlines() if x.strip()}
    out: list[str] = []
    for part in (system, user):
        inside = False
        for line in part.splitlines():
            if line.startswith(_FENCE):
                inside = not inside  # ```TERMINAL opens, ``` closes; the program's own backticks are broken up (fence_escape)
                continue
            text = _norm(line)
            if inside or not text or text in governing or text.startswith("a: "):
                continue
            out.append(text)
            if text.startswith("- q: "):
                out.append(text[5:])
    return tuple(dict.fromkeys(out))


def screen_rows(user: str) -> tuple[str, ...]:
    """The program's rows in a prompt (inside its TERMINAL fences) of ROW_WORDS words or more, as compared."""
    out, inside = [], False
    for line in user.splitlines():
        if line.startswith(_FENCE):
            inside = not inside
        elif inside and len(line.split()) >= ROW_WORDS:
            out.append(_bare(line))
    return tuple(dict.fromkeys(out))


def _bare(text: str) -> str:
    return " ".join(re.sub(r"[\"'`]", "", text).split()).rstrip(".").casefold()


def echoed(reply: str, question: str, ours: Iterable[str] = (), offered: Iterable[str] = (), shown: Iterable[str] = ()) -> str | None:
    """Why `reply` is only a repetition (of the question, of a line of our prompt, of a row of the screen: `shown`, as
    screen_rows gives them), or None. An answer the question offers is never an echo ("Yes" may well be a line of a
    menu), nor a row the question says to type ("To confirm, type the phrase below")."""
    r = _norm(reply)
    if len(r) < 2 or r in {_norm(o) for o in offered}:
        return None
    for line in question.splitlines():
        q = _norm(_MARK.sub("", line))
        if len(q) < 4 or not _PROMPTISH.search(q):
            continue
        bare = _norm(_DEFAULT.sub("", q))  # "project release:" is "> Project release []:" without its default
        if r in (q, bare) or r.startswith(q) or (len(r) >= 6 and r[-1] in ":?" and (q.startswith(r) or bare.startswith(r))):
            return "repeats the question"
        if len(bare) >= 4 and r.startswith(bare) and r[len(bare):].strip(" :") in {_norm(m.group(1)) for m in _DEFAULT.finditer(q)}:
            return "repeats the question"  # "package name: work": the label and its own default
        if _opening(r, q):
            return "repeats the question's own words"
    if _PLACEHOLDER.fullmatch(r) and any(r in o for o in ours):
        return "repeats a placeholder of the prompt"
    if _copies_bearing(r, question, ours):
        return "repeats the governing prompt's sentence, not the value it gives"
    if len(r.split()) >= ROW_WORDS and _bare(reply) in set(shown) and not _TO_COPY.search(question):
        return "repeats a row of the screen, not an answer to its question"  # less's ':' answered with a commit's subject
    for o in ours:
        if len(o) < 6:
            continue
        if r == o or (r.startswith(o) and not r[len(o)].isalnum()) or (len(r) >= 12 and o.startswith(r)):
            return "repeats a line of the prompt it was given"
    return None


def _copies_bearing(reply: str, question: str, ours: Iterable[str]) -> bool:
    """The reply is the governing prompt's sentence we said next to the question (bearing.py), or words of it, and names what the
    question asks: npm init's `keywords:` was answered `Use the keywords widget and demo.` by a 0.5B model. (A sentence
    that does not name it may be the very answer: `Create the project with defaults.` at `What should I say?`.)"""
    said = [o[len(BEARING_SAID):] for o in ours if o.startswith(BEARING_SAID)]
    r = reply.rstrip(".")
    asked = words(question_line(question))
    if len(r.split()) < 2 or not words(reply) & asked:
        return False
    return any(r in s and not _the_value(r, s, asked) for s in said)


def _the_value(reply: str, sentence: str, asked: set[str]) -> bool:
    """The reply is what the sentence gives after naming what is asked: `node --test` of "The test command is node
    --test" (its own "test" is the value's), not the sentence that names it ("Use the keywords widget and demo")."""
    start = sentence.find(reply)
    before = sentence[:start]
    return start > 0 and bool(words(before) & asked)


def _opening(reply: str, line: str) -> bool:
    """The reply is the question's opening words, with or without what its brackets hold and its closing colon, or a
    bracket as shown:
    cookiecutter's `[4/4] use_docker (n):` answered `use_docker (n)`, `project_slug (rocket_lab):` answered
    `project_slug`. Typed, the label becomes the value. (Only the opening: `DELETE` at `Type DELETE to confirm` is
    the answer it asks for.)"""
    r = reply.rstrip(" :?>").strip()
    if len(r) < 4:
        return False
    if any(r == m.group(0).strip() for m in _DEFAULT.finditer(line)):
        return True  # `(rocket_lab)`: the default with the brackets it is shown in
    words = _COUNTER.sub("", line).rstrip(" :?>").split()
    for form in (words, _norm(_DEFAULT.sub("", " ".join(words))).split()):
        if any(r == " ".join(form[:k]) for k in range(1, len(form) + 1)):
            return True
    return False


def _said_in_label(reply: str, words: str) -> tuple[str, str] | None:
    """(the value, the label) for the two ways a 0.5B model said an answer inside the label, without its colon: the
    label with the value in its brackets (`Project language [fr]` at `Project language [en]:`), and the label's last
    word and one value (`release 1.4` at `Project release []:`, `version 0.2.0` at `version: (1.0.0)`)."""
    m = re.fullmatch(re.escape(words) + r"\s*[\[(]([^\[\]()\s]+)[\])]", reply.strip(), re.I)
    if len(words) >= 3 and m is not None:
        return m.group(1), reply.strip()[: m.start(1)]
    last = words.split()[-1] if words.split() else ""
    m = re.fullmatch(re.escape(last) + r"\s+(\S+)", reply.strip(), re.I)
    if len(last) >= 4 and m is not None:
        return m.group(1), last
    return None


def unlabelled(reply: str, question: str) -> tuple[str, str] | None:
    """(the answer, the label taken off) when `reply` is the question's prompt line, or its label up to the colon (with
    any default in brackets: `Project language [fr]:` at `Project language [en]:`), followed by an answer: a small model
    wrote `package name: demo-widget` and `Project name: Pilot Docs`. Typed, the label becomes part of the value; the
    words after it are what was meant. None when the reply does not start so, or when only the question's own default
    follows (the question again)."""
    lines = [x for x in question.splitlines() if x.strip()]
    if not lines:
        return None
    line = _MARK.sub("", lines[-1]).strip()
    defaults = {_norm(m.group(1)) for m in _DEFAULT.finditer(line)}
    head = reply.lstrip()
    found = None
    if len(line) >= 4 and head.casefold().startswith(line.casefold()):
        rest = head[len(line):]
        if line.endswith(":") or not rest[:1].isalnum():  # "Projects" does not start with the label "Project"
            found = rest, line
    bare = " ".join(_DEFAULT.sub("", line).split())
    if found is None and bare.find(":") >= 2:
        words = bare[: bare.find(":")].strip()
        m = re.match(re.escape(words) + r"\s*(?:[\[(][^\[\]()]*[\])])?\s*:", head, re.I)
        if len(words) >= 3 and m is not None:
            found = head[m.end():], head[: m.end()]
        found = found or _said_in_label(head, words)
    if found is None:
        return None
    rest = found[0].lstrip(" :")
    if not rest.strip() or _norm(rest) in defaults:
        return None  # the question alone, or with its own default after it: an echo, not a labelled answer
    return rest, found[1]
