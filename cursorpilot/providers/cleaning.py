"""A model's reply made into what is typed, PURE: reasoning never typed, a code fence around the whole reply unwrapped,
several lines refused where one is typed (unless the rest is commentary: ramble.py), and a structured reply (the
answer schema, a turn end's verdict, a yes weighed) read field by field. The answer's own characters are never changed;
everything removed is returned, for the transcript. Every chat provider cleans its replies here (llm.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from cursorpilot.providers.ramble import first_and_remarks

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|\Z)", re.S | re.I)
_FENCED = re.compile(r"\A```[\w-]*\n?(.*?)\n?```\Z", re.S)

@dataclass(slots=True, frozen=True)
class Cleaned:
    text: str | None  # None: nothing typeable remains
    removed: tuple[str, ...]
    reason: str = ""
    wait: bool = False
    submit: bool | None = None
    turn: str | None = None  # a turn end's verdict (TURN_SCHEMA)
    judged: str | None = None  # a yes weighed (WEIGH_SCHEMA): allow | refuse; text: the quote, reason: why
    act: str | None = None  # ...and the act the quoted words ask for
    names: str | None = None  # ...and the question's words that name the grant's object


def clean_reply(raw: str, multiline_ok: bool = False, constrained: bool = False) -> Cleaned:
    """Never type reasoning; unwrap a code fence around the whole reply; refuse several lines. constrained: the
    structured reply's text was limited to the answers the question takes, so a human's reply carries no question.

    The answer's own characters are never changed: quotes, spaces and punctuation belong to it ('active' is a
    Python string, active a NameError). Everything removed is returned, for the transcript.
    """
    removed: list[str] = []

    def drop(m: re.Match[str]) -> str:
        removed.append(m.group(0))
        return ""

    text = _THINK.sub(drop, raw)
    if removed:
        text = text.strip("\n")
    m = _FENCED.match(text.strip())
    if m:
        removed.append("code fence")
        text = m.group(1)
    structured = _structured(text)
    if structured is not None:
        return _from_structured(structured, tuple(removed), multiline_ok, constrained)
    text = text.strip("\r\n")
    if not text:
        return Cleaned(None, tuple(removed), "the reply was empty after removing reasoning")
    if "\n" in text and not multiline_ok:
        return _one_line(text, tuple(removed))
    return Cleaned(text, tuple(removed))


def _one_line(text: str, removed: tuple[str, ...], submit: bool | None = None) -> Cleaned:
    """Several lines where one is typed: the first, when the rest is commentary (kept in `removed`); else refused."""
    split = first_and_remarks(text)
    if split is None:
        return Cleaned(None, removed, "multi-line reply refused: the prompt asked for one line")
    return Cleaned(split[0], (*removed, f"commentary after the answer: {split[1]!r}"), submit=submit)


def _structured(text: str) -> dict | None:
    t = text.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        data = json.loads(t)
    except ValueError:
        return None
    return data if isinstance(data, dict) and ("action" in data or "verdict" in data or "decision" in data) else None


def _from_structured(data: dict, removed: tuple[str, ...], multiline_ok: bool, constrained: bool = False) -> Cleaned:
    if "verdict" in data:
        return _turn_verdict(data, removed, multiline_ok)
    if "decision" in data:
        decision, quote, why, act = data.get("decision"), data.get("quote"), data.get("why"), data.get("act")
        if decision not in ("allow", "refuse"):
            return Cleaned(None, removed, f"malformed structured reply: decision {decision!r}")
        names = data.get("names")
        return Cleaned(quote if isinstance(quote, str) else "", removed, why if isinstance(why, str) else "", judged=decision,
                       act=act if isinstance(act, str) else None, names=names if isinstance(names, str) else None)
    action, text, submit = data.get("action"), data.get("text"), data.get("submit")
    if not isinstance(text, str):
        text = ""
    if action == "wait":
        return Cleaned(None, removed, "the answerer says nobody is being asked", wait=True)
    if action == "human":
        question = data.get("question") if isinstance(data.get("question"), str) and data.get("question") else ("" if constrained else text)
        return Cleaned(None, removed, "the answerer asks for a human" + (f": {question}" if question else ""))
    if action != "type":
        return Cleaned(None, removed, f"malformed structured reply: action {action!r}")
    submit = submit if isinstance(submit, bool) else None
    if ("\n" in text or "\r" in text) and not multiline_ok:
        return _one_line(text, removed, submit)
    return Cleaned(text, removed, submit=submit)


def _turn_verdict(data: dict, removed: tuple[str, ...], multiline_ok: bool) -> Cleaned:
    """A turn end's verdict; its message is the agent's next instruction, delivered as given (one line unless the
    channel takes several). What is not a verdict is left for the decision path to refuse."""
    verdict, message, why = data.get("verdict"), data.get("message"), data.get("why")
    why = why if isinstance(why, str) else ""
    if not isinstance(verdict, str):
        return Cleaned(None, removed, f"malformed structured reply: verdict {verdict!r}")
    message = message if isinstance(message, str) and verdict == "continue" else None
    if message is not None and ("\n" in message.strip() or "\r" in message.strip()) and not multiline_ok:
        return Cleaned(None, removed, "multi-line reply refused: the agent's composer takes one line")
    return Cleaned(message, removed, why, turn=verdict)
