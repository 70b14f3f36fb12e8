"""The ACP channel's half of asking, PURE: what an agent requests (as plain JSON) becomes a Question for the shared
decision path, and a Decision becomes the reply the protocol wants.

No settle window, no misread menu: the tool call, its options and their kinds arrive as data. The answer is an
option chosen by name and kind, never by position; a reply that names no offered option is never sent.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict

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
class Action:
    """What approving a tool call carries out, as the agent described it. The one text the deny policy, the rules and
    the model all read: the title, the input, the locations, the diff, the content."""

    kind: str
    text: str
    says_what: bool  # something in it says what will run or change (else no model may approve it)


def describe(tool_call: dict) -> Action:
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
    return Action(kind, "\n".join(line for line in lines if line), says)


def fingerprint(tool_call: dict) -> str:
    """The same tool call, however often it is asked for: what it carries out (for the tool-loop guard)."""
    action = describe(tool_call)
    return hashlib.sha256(f"{action.kind}\n{action.text}".encode()).hexdigest()[:16]


def permission_question(tool_call: dict, options: list[dict]) -> Question:
    action = describe(tool_call)
    choices = tuple(Choice(str(o.get("optionId")), str(o.get("name")), kind=o.get("kind")) for o in options)
    text = f"Permission for {action.kind or 'a tool'}: {action.text or '(the agent did not say what)'}"
    return Question(
        kind=Kind.PERMISSION.value, text=text, key=f"acp.permission:{fingerprint(tool_call)}", source="acp.permission",
        action=action.text, approval=True, choices=choices, live=tuple(text.splitlines()),
        asked=f"{action.kind} {action.text.partition(chr(10))[0]}".strip(),  # "delete Delete important/": what a yes does
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """The protocol's reply to a request, or why none can be sent."""

    reply: dict | None
    choice: Choice | None = None
    why: str = ""  # set when reply is None: escalate


UNDESCRIBED = "the agent did not say what it will run or change (no title, input, locations, diff or content): a model may not approve it"
_TRUSTED = ("rules:", "human", "policy:", "plan:")  # the user's own word, or the policy's


def permission_reply(q: Question, d: Decision, standing: bool, described: bool = True) -> Outcome:
    """The option to select: an exact name wins, a bare yes/no means once; "always" only with standing permission.
    A model may approve whatever the deny policy was able to judge; a call that says nothing of what it does is
    approved only by the user's own rule or a human."""
    if d.verdict != Verdict.ANSWER or not d.choices:
        return Outcome(None, why=d.why or f"the reply {d.text!r} names none of the options")
    choice = d.choices[0]
    if choice.kind == "allow_always" and not standing:
        once = next((c for c in q.choices if c.kind == "allow_once"), None)
        if once is not None:
            choice = once  # no standing permission in the governing prompt: once is what was granted
    if (choice.kind or "").startswith("allow") and not described and not d.source.startswith(_TRUSTED):
        return Outcome(None, why=UNDESCRIBED)
    return Outcome({"outcome": {"outcome": "selected", "optionId": choice.key}}, choice)


CANCELLED = {"outcome": {"outcome": "cancelled"}}


# -- questions -------------------------------------------------------------------------------------------------------
def form_question(message: str, schema: dict, key: str) -> Question:
    """An elicitation form: its fields described for the answerer; one field takes the reply as it is."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    lines = [message]
    choices: tuple[Choice, ...] = ()
    for name, spec in props.items():
        kind = spec.get("type", "string")
        options = spec.get("enum") or [o.get("const") for o in spec.get("oneOf") or [] if isinstance(o, dict)]
        desc = f" ({spec['description']})" if spec.get("description") else ""
        one_of = f"; one of: {', '.join(map(str, options))}" if options else ""
        lines.append(f"- {name}: {kind}{' (required)' if name in required else ''}{desc}{one_of}")
        if len(props) == 1 and options:
            choices = tuple(Choice(str(o), str(o)) for o in options)
    if len(props) > 1:
        lines.append("Answer with a JSON object of these fields.")
    return Question(kind=Kind.FORM.value, text="\n".join(lines), key=key, source="acp.elicitation", choices=choices,
                    live=tuple(lines))


def form_content(schema: dict, text: str) -> dict | None:
    """The form's content from the answer text, typed as the schema says; None when it does not fit."""
    props = schema.get("properties") or {}
    if len(props) == 1:
        (name, spec), = props.items()
        value = _typed(spec, text)
        return None if value is None else {name: value}
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    out = {}
    for name, spec in props.items():
        if name in data:
            value = _typed(spec, data[name] if isinstance(data[name], str) else json.dumps(data[name]))
            if value is None:
                return None
            out[name] = value
    missing = set(schema.get("required") or []) - set(out)
    return None if missing else out


def _typed(spec: dict, text: str):
    kind = spec.get("type", "string")
    t = text.strip()
    try:
        if kind == "boolean":
            return {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}.get(t.lower())
        if kind == "integer":
            return int(t)
        if kind == "number":
            return float(t)
        if kind == "array":
            return [w.strip() for w in t.split(",") if w.strip()]
    except ValueError:
        return None
    return text


def ask_question_questions(params: dict) -> list[tuple[str, Question]]:
    """Cursor's `cursor/ask_question`: each question with its options (id, label) and whether several may be chosen."""
    out = []
    for i, item in enumerate(params.get("questions") or [params]):
        if not isinstance(item, dict):
            continue
        qid = str(item.get("id") or item.get("questionId") or i)
        prompt = str(item.get("prompt") or item.get("question") or item.get("text") or "")
        options = item.get("options") or []
        choices = tuple(Choice(str(o.get("id") or o.get("optionId") or o.get("label")), str(o.get("label") or o.get("name") or o.get("id")))
                        for o in options if isinstance(o, dict))
        multi = bool(item.get("allowMultiple") or item.get("multiSelect") or item.get("allow_multiple"))
        out.append((qid, Question(kind=Kind.MENU.value if choices else Kind.INPUT.value, text=prompt, key=f"cursor.ask_question:{qid}:{prompt}",
                                  source="cursor/ask_question", choices=choices, multi=multi, live=(prompt,))))
    return out


def plan_question(params: dict) -> Question:
    """Cursor's `cursor/create_plan`: a plan to accept or reject. Accepting it carries it out: the policy reads it."""
    body = str(params.get("plan") or params.get("body") or params.get("markdown") or "")
    name = str(params.get("name") or params.get("title") or "the plan")
    todos = [str(t.get("content") or t.get("title") or t) for t in params.get("todos") or [] if t]
    text = f"Accept {name}?\n{params.get('overview') or ''}\n{body}\n" + "\n".join(f"- {t}" for t in todos)
    choices = (Choice("accept", "Accept", kind="allow_once"), Choice("reject", "Reject", kind="reject_once"))
    return Question(kind=Kind.PERMISSION.value, text=text.strip(), key=f"cursor.create_plan:{hashlib.sha256(text.encode()).hexdigest()[:12]}",
                    source="cursor/create_plan", action=text, approval=True, choices=choices, live=tuple(text.splitlines()),
                    asked=f"Accept {name}?")


_ENDS_ASKING = re.compile(r"\?\s*\**\s*$")


def turn_end_question(message: str) -> str | None:
    """The agent's last message, when it ends by asking the user something: the paragraph that asks."""
    text = message.strip()
    if not text or not _ENDS_ASKING.search(text.splitlines()[-1]):
        return None
    return text.split("\n\n")[-1].strip()
