"""The deny policy: deterministic, checked on the whole prompt block before any provider is asked,
and on every reply before it is typed; and a yes is weighed by what it approves (`check_question`).

Only a plan's ``allow:`` list lifts a rule (by id); the LLM and the program's output never can. The governing prompt,
which the user wrote, can grant a *yes* to a class of question by asking for it, and forbid one (decide/consent.py
reads it clause by clause; decide/weigh.py weighs the yes). It never lifts the rules on commands.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

RULES: dict[str, re.Pattern[str]] = {
    "delete": re.compile(
        r"Delete this file\?|\brm\s+(-[\w-]+\s+)*[^\s-]|\brmdir\b|\bunlink\s|\bgit\s+clean\s+-\w*f|\bfind\b[^\n]*\s-delete\b"
        r"|\bshutil\.rmtree\b|\bdeleteToolCall\b",
        re.I,
    ),
    "force_push": re.compile(r"\bgit\s+push\b[^\n]*(\s--force(-with-lease)?\b|\s-\w*f\b|\s\+\S)"),
    "reset_hard": re.compile(r"\bgit\s+reset\s+(\S+\s+)*--hard\b"),
    "sql_drop": re.compile(r"\b(DROP\s+(TABLE|DATABASE|SCHEMA|INDEX|VIEW)|TRUNCATE\s+(TABLE\s+)?[\w\"`])"),
    "mkfs": re.compile(r"\bmkfs(\.\w+)?\b"),
    "dd": re.compile(r"\bdd\b[^\n]*\bof="),
    "curl_sh": re.compile(r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b"),
    "chmod_777": re.compile(r"\bchmod\s+(-\w*\s+)*(-R\s+(-\w*\s+)*777|777\s+(-\w*\s+)*-R|-\w*R\w*\s+777)"),
    "secrets_read": re.compile(r"(~|\$HOME|/home/[^/\s]+|/root)/\.ssh\b|(^|[\s/'\"(])\.env(\.\w+)?\b(?!\.)"),
}
# What a yes approves, read from the question's words: a yes to "Delete all files in important/? [y/N]" deletes them as
# surely as `rm -r important` would. The ids are the commands' own, so a plan's allow: lifts both at once. Words, not
# names: "remover.py", "reset.css", "delete_user" say nothing of what a yes does.
def _words(pattern: str) -> str:
    return rf"(?<![\w./-])(?:{pattern})(?![\w-]|\.\w)"


QUESTION_RULES: dict[str, re.Pattern[str]] = {
    "delete": re.compile("(?i)" + _words(r"delet(e|es|ed|ing|ion)|remov(e|es|ed|ing|al)|eras(e|es|ed|ing|ure)|purg(e|es|ed|ing)"
                                         r"|destroy(s|ed|ing)?|discard(s|ed|ing)?|unlink(s|ed|ing)?|wip(e|es|ed|ing)|uninstall(s|ed|ing)?")),
    "sql_drop": re.compile("(?i)" + _words(r"drop(s|ped|ping)?\s+(the\s+|all\s+|this\s+|these\s+)?(\S+\s+)?(tables?|databases?|db"
                                           r"|schemas?|index(es)?|views?|collections?|columns?|keyspaces?|data|everything)"
                                           r"|truncat(e|es|ed|ing)")),
    "mkfs": re.compile("(?i)" + _words(r"(re)?format(s|ted|ting)?\b[^\n]{0,40}(\b(disk|drive|partition|device|volume|card"
                                       r"|file ?system)s?\b|/dev/\S+)|(disk|drive|partition|device|volume|/dev/\S+)\b[^\n]{0,40}"
                                       r"\b(re)?format(s|ted|ting)?"
                                       r"|mk(e2)?fs|contains an? \S+ (file ?system|partition table)"
                                       r"|(re)?format(s|ted|ting)?\s+\S+\.(img|raw|iso|qcow2|vhdx?|vmdk|bin)\b")),
    "overwrite": re.compile("(?i)" + _words(r"overwr(ite|ites|itten|iting|ote)|clobber(s|ed|ing)?|replac(e|es|ed|ing|ement)")),
    "force_push": re.compile("(?i)" + _words(r"force[- ]?push(es|ed|ing)?|push\b[^\n]{0,40}\s--force")),
    "reset_hard": re.compile("(?i)" + _words(r"reset(s|ting)?")),
}
_RM_RF = re.compile(r"\brm\s+((?:-[\w-]+\s+)*)(.*)")


@dataclass(slots=True, frozen=True)
class Denial:
    rule: str
    evidence: str


def _rm_outside(text: str, cwd: str) -> Denial | None:
    """rm -r/-f of ~, /, or anything outside the working directory."""
    for line in text.splitlines():
        m = _RM_RF.search(line)
        if not m or not re.search(r"-\w*[rRf]", m.group(1) or ""):
            continue
        try:
            args = shlex.split(m.group(2), comments=True)
        except ValueError:
            args = m.group(2).split()
        for arg in args:
            if arg.startswith("-"):
                continue
            if arg in ("/", "~", "~/", "/*", "*") or arg.startswith(("~", "$HOME", "${HOME}")):
                return Denial("rm_outside", line.strip())
            path = os.path.normpath(os.path.join(cwd, arg))
            if os.path.commonpath([path, cwd]) != cwd or path == cwd:
                return Denial("rm_outside", line.strip())
    return None


def check(text: str, cwd: str | None = None, allow: frozenset[str] = frozenset()) -> Denial | None:
    """The first deny rule the text trips, unless the plan allowed it."""
    if "rm_outside" not in allow:
        hit = _rm_outside(text, os.path.abspath(cwd or os.getcwd()))
        if hit:
            return hit
    for rule, rx in RULES.items():
        if rule in allow:
            continue
        m = rx.search(text)
        if m:
            return Denial(rule, m.group(0).strip())
    return None


def check_question(text: str, allow: frozenset[str] = frozenset()) -> Denial | None:
    """The class of harm a yes to this question approves (deletes, removes, drops, formats, overwrites, force-pushes,
    resets), unless the plan allowed it; the evidence is the line that says so, the question's own line first (its
    last), then the lines that lead up to it."""
    for line in reversed(text.splitlines()):
        for rule, rx in QUESTION_RULES.items():
            if rule not in allow and rx.search(line):
                return Denial(rule, " ".join(line.split()))
    return None


_WRAPPED = re.compile(r"\n(?![ \t]*(?:[-*•]|\d+[.)]|\n))")  # a line break inside a paragraph, not before a list item
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")  # "main.py" is one word: a stop ends a sentence before a space only


def sentences(text: str) -> list[str]:
    """The governing prompt's sentences, each on one line (a sentence wrapped over lines is one)."""
    return [" ".join(part.split()).rstrip(".!?;") for part in _SENTENCE_END.split(_WRAPPED.sub(" ", text or "")) if part.strip()]


def rule_ids() -> list[str]:
    return ["rm_outside", *RULES, *(r for r in QUESTION_RULES if r not in RULES)]
