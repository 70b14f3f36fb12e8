"""A tool call an agent asks to run, as a Question for the shared decision path, and the option a Decision selects,
PURE and shared by the protocol channels (ACP, headless), so that "allow once", "never always" and "a call that says
nothing is not a model's to approve" mean the same thing whichever way the agent asked.

A tool call is given in ACP's shape (`title`, `kind`, `rawInput`, `locations`, `content`); the headless channel
describes a print-mode request the same way. The answer is an option chosen by name and kind, never by position; a
reply that names no offered option is never sent.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict
from cursorpilot.records.answerer import Answerer, Source

# A governing prompt that grants standing permission lets "allow always" through; otherwise it becomes "allow once".
_STANDING = re.compile(r"(?i)\b(always allow|allow always|standing permission|don'?t ask again|for the (whole )?session)\b")
_INPUT_KEYS = ("command", "cmd", "commands", "args", "file_path", "filePath", "path", "paths", "pattern", "url", "query",
               "content", "new_string", "newText", "old_string", "description")


def grants_standing_permission(governing_prompt: str) -> bool:
    return bool(_STANDING.search(governing_prompt))


# Titles that name a tool, not what it does: alone, they say nothing of what will run or change.
_GENERIC_TITLES = {"shell", "bash", "terminal", "run", "execute", "command", "run command", "run shell command", "edit", "write",
                   "write file", "read", "read file", "delete", "move", "fetch", "search", "think", "tool", "tool call", "other"}


@dataclass(frozen=True, slots=True)
class ToolAction:
    """What approving a tool call carries out, as the agent described it. The one text the deny policy, the rules and
    the model all read: the title, the input, the locations, the diff, the content."""

    kind: str
    text: str
    says_what: bool  # something in it says what will run or change (else no model may approve it)


def describe(tool_call: dict) -> ToolAction:
    """The tool call in one text. Agents describe differently: Gemini CLI sends a shell command as the title and the
    working directory as content, never rawInput; Claude's and Codex's adapters send rawInput; edits come as diffs."""
    kind = str(tool_call.get("kind") or "")
    title = " ".join(str(tool_call.get("title") or "").split())
    lines, says = [title], title.lower().replace("_", " ") not in _GENERIC_TITLES | {kind.lower(), ""}
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        keys = [k for k in _INPUT_KEYS if k in raw] + sorted(k for k in raw if k not in _INPUT_KEYS)
        for key in keys:
            value = raw[key]
            if isinstance(value, list):
                value = " ".join(map(str, value))
            elif isinstance(value, dict):
                value = json.dumps(value, default=str)
            if value in (None, "", False):
                continue
            says = True
            text = str(value)[:2000]
            lines.append(f"$ {text}" if key in ("command", "cmd", "commands") else f"{key}: {text}")
    elif raw not in (None, "", [], {}):
        says = True
        lines.append(json.dumps(raw, default=str)[:2000])
    for loc in tool_call.get("locations") or []:
        if isinstance(loc, dict) and loc.get("path"):
            says = True
            lines.append(f"path: {loc['path']}")
    for item in tool_call.get("content") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "diff" and item.get("path"):
            says = True
            new_file = not item.get("oldText")
            lines.append(f"--- {item.get('path')}{' (a new file)' if new_file else ''}")
            lines += [f"+{line}" for line in str(item.get("newText") or "").splitlines()[:80]]
        elif item.get("type") == "content":
            text = str((item.get("content") or {}).get("text") or "").strip()
            if text:
                says = True
                lines.append(text[:2000])
    return ToolAction(kind, "\n".join(line for line in lines if line), says)


def fingerprint(tool_call: dict) -> str:
    """The same tool call, however often it is asked for: what it carries out (for the tool-loop guard)."""
    action = describe(tool_call)
    return hashlib.sha256(f"{action.kind}\n{action.text}".encode()).hexdigest()[:16]


def permission_question(tool_call: dict, options: list[dict], source: str = "acp.permission") -> Question:
    action = describe(tool_call)
    choices = tuple(Choice(str(o.get("optionId")), str(o.get("name")), kind=o.get("kind")) for o in options)
    text = f"Permission for {action.kind or 'a tool'}: {action.text or '(the agent did not say what)'}"
    return Question(
        kind=Kind.PERMISSION.value, text=text, key=f"{source}:{fingerprint(tool_call)}", source=source,
        action=action.text, approval=True, choices=choices, live=tuple(text.splitlines()),
        asked=f"{action.kind} {action.text.partition(chr(10))[0]}".strip(),  # "delete Delete important/": what a yes does
    )


@dataclass(frozen=True, slots=True)
class PermissionReply:
    """The protocol's reply to a request, or why none can be sent."""

    reply: dict | None
    choice: Choice | None = None
    why: str = ""  # set when reply is None: escalate


UNDESCRIBED = "the agent did not say what it will run or change (no title, input, locations, diff or content): a model may not approve it"


def _trusted(by: Source) -> bool:
    """The user's own word (a rule of theirs, a person, the plan), or the policy's."""
    return by.rule is not None or by.kind in (Answerer.PERSON, Answerer.POLICY, Answerer.PLAN)


def permission_reply(q: Question, d: Decision, standing: bool, described: bool = True) -> PermissionReply:
    """The option to select: an exact name wins, a bare yes/no means once; "always" only with standing permission.
    A model may approve whatever the deny policy was able to judge; a call that says nothing of what it does is
    approved only by the user's own rule or a human."""
    if d.verdict != Verdict.ANSWER or not d.choices:
        return PermissionReply(None, why=d.why or f"the reply {d.text!r} names none of the options")
    choice = d.choices[0]
    if choice.kind == "allow_always" and not standing:
        once = next((c for c in q.choices if c.kind == "allow_once"), None)
        if once is not None:
            choice = once  # no standing permission in the governing prompt: once is what was granted
    if (choice.kind or "").startswith("allow") and not described and not _trusted(d.by):
        return PermissionReply(None, why=UNDESCRIBED)
    return PermissionReply({"outcome": {"outcome": "selected", "optionId": choice.key}}, choice)


_ENDS_ASKING = re.compile(r"\?\s*\**\s*$")


def turn_end_question(message: str) -> str | None:
    """The agent's last message, when it ends by asking the user something: the paragraph that asks."""
    text = message.strip()
    if not text or not _ENDS_ASKING.search(text.splitlines()[-1]):
        return None
    return text.split("\n\n")[-1].strip()
