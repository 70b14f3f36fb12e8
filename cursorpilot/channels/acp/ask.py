"""The ACP channel's half of asking, PURE: what an agent requests (as plain JSON) becomes a Question for the shared
decision path, and a Decision becomes the reply the protocol wants.

No settle window, no misread menu: the tool call, its options and their kinds arrive as data. The answer is an
option chosen by name and kind, never by position; a reply that names no offered option is never sent.
"""

from __future__ import annotations

import hashlib
import json

from cursorpilot.decide.question import Choice, Kind, Question

# a tool call as a question, the option a decision selects, a turn end that asks: shared with the headless channel
from cursorpilot.decide.toolcalls import (  # noqa: F401
    UNDESCRIBED,
    PermissionReply,
    ToolAction,
    describe,
    fingerprint,
    grants_standing_permission,
    permission_question,
    permission_reply,
    turn_end_question,
)

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
