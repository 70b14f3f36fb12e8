"""The deny policy: deterministic, checked on the whole prompt block before any provider is asked,
and on every reply before it is typed.

Only a plan's ``allow:`` list lifts a rule (by id). The governing prompt and the LLM cannot.
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


def rule_ids() -> list[str]:
    return ["rm_outside", *RULES]
