"""The structured reply a model is asked for, and how a server says it can't give one.

Sent as a JSON schema (OpenAI-compatible servers), as a JSON object with the schema beside it (servers such as
llama-cpp-python, which turn that schema into a grammar), or as the one tool the model must call (Anthropic). Where the
question says what it takes (a menu's options, a yes/no, unzip's keys: `AnswerRequest.accepts`), the text is an enum of
exactly those, so even a small model cannot type anything else, and a grammar-backed server cannot produce it.
"""

from __future__ import annotations

import re
from typing import Any

# A JSON Schema document as it is sent: its values are any JSON (nested objects, lists, strings, booleans)
JsonSchema = dict[str, Any]

REPLY_ACTIONS = ("type", "wait", "human")
REPLY_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(REPLY_ACTIONS)},
        "text": {"type": "string"},
        "submit": {"type": "boolean"},
        # what to ask a person (action human): its own field, so that a text limited to the options can't lose it
        "question": {"type": "string"},
    },
    "required": ["action", "text", "submit", "question"],
    "additionalProperties": False,
}
# A turn end's structured reply (kind turn_end): the verdict, the next message for the agent (continue), and why.
TURN_VERDICTS = ("done", "continue", "blocked", "impossible")
TURN_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(TURN_VERDICTS)},
        "message": {"type": "string"},
        "why": {"type": "string"},
    },
    "required": ["verdict", "message", "why"],
    "additionalProperties": False,
}


def reply_schema(accepts: tuple[str, ...] = ()) -> JsonSchema:
    """The answer schema; with `accepts`, its text may only be one of them or empty. The empty text stays: it is Enter
    alone (the prompt's default), and the text of a wait or a human (whose question is then not carried: the
    escalation says the model asked for a human)."""
    if not accepts:
        return REPLY_SCHEMA
    values = list(dict.fromkeys(("", *accepts)))
    return {**REPLY_SCHEMA, "properties": {**REPLY_SCHEMA["properties"], "text": {"type": "string", "enum": values}}}


# A yes weighed (kind weigh, decide/weigh.py): allow or refuse, the person's grant that covers it (its words), the act of
# that grant, the question's words that name the grant's object ("names"), and why. "none" and "other" stay in the enum
# for a judge that says so; they grant nothing.
WEIGH_ACTS = ["delete", "overwrite", "format", "drop", "reset", "force-push", "none", "other"]
WEIGH_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["allow", "refuse"]},
        "quote": {"type": "string"},
        "act": {"type": "string", "enum": WEIGH_ACTS},
        "names": {"type": "string"},
        "why": {"type": "string"},
    },
    "required": ["decision", "quote", "act", "why"],
    "additionalProperties": False,
}

# The governing prompt compiled into a policy (kind policy, decide/compiled.py), from the prompt alone: the destructive
# acts it asks for and what it forbids, each with its object and the person's exact words (issue 47's form, which the
# yardstick's oracle answers from a scenario's `policy:`).
POLICY_ACTS = ["delete", "overwrite", "format", "drop", "reset", "force-push", "any"]
_POLICY_ENTRY: JsonSchema = {
    "type": "object",
    "properties": {"act": {"enum": POLICY_ACTS}, "object": {"type": "string"}, "quote": {"type": "string"},
                   "except": {"type": "array", "items": {"type": "string"}}},
    "required": ["act", "object", "quote"],
}
POLICY_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"grants": {"type": "array", "items": _POLICY_ENTRY}, "prohibitions": {"type": "array", "items": _POLICY_ENTRY}},
    "required": ["grants", "prohibitions"],
}


def lean(schema: JsonSchema) -> JsonSchema:
    """The answer schema without its `question` field, for a server that turns the schema into a grammar (json_object
    with the schema: llama-cpp-python): a 0.5B model filled it at every answer ("question": "Deploy now? [y/N]"), 15 to
    20 tokens at 0.1-0.2 s each on two cores, for nothing. A person's question then comes in the text (clean_reply),
    unless the text is limited to the answers the question takes."""
    props = schema.get("properties") or {}
    if "question" not in props or "action" not in props:
        return schema
    return {**schema, "properties": {k: v for k, v in props.items() if k != "question"},
            "required": [k for k in schema.get("required", []) if k != "question"]}


def schema_for(kind: str, accepts: tuple[str, ...] = ()) -> tuple[str, JsonSchema]:
    """The structured reply a question of this kind asks for: its name (the Anthropic tool's) and its JSON schema."""
    if kind == "weigh":
        return "weigh_yes", WEIGH_SCHEMA
    if kind == "policy":
        return "policy", POLICY_SCHEMA
    return ("judge_turn", TURN_SCHEMA) if kind == "turn_end" else ("answer", reply_schema(accepts))


def enums_for(kind: str, accepts: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """The structured reply's fields whose value is one of a few (confidence.py weighs a choice among them)."""
    if kind == "weigh":
        return {"decision": ("allow", "refuse")}
    if kind == "turn_end":
        return {"verdict": TURN_VERDICTS}
    return {"action": REPLY_ACTIONS, "text": ("", *accepts)} if accepts else {"action": REPLY_ACTIONS}


# Words by which a server's error names the structured-output parameters. llama-cpp-python 0.3.36 answers a
# json_schema response_format with HTTP 500 ("Input should be 'text' or 'json_object'"), others with 400 or 422:
# the status does not say it, the words do.
_STRUCTURED_WORDS = re.compile(r"(?i)\b(response_format|json_schema|json_object|tool_choice|tools|structured[ _]output)\b")


def names_structured(error: str) -> bool:
    """An error that names the structured-output parameters: the server refuses the form we asked in."""
    return _STRUCTURED_WORDS.search(error) is not None
