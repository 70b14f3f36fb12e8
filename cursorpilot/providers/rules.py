"""The offline provider: a YAML list of {match: regex, reply: text}; first match wins.

`match` is checked against the prompt block only, so text elsewhere on screen cannot trigger an answer by itself.
Where one prompt looks like the next (pdb's `(Pdb)`), a rule may also require `screen:` (a regex over the whole
live screen) and `after:` (the id of the rule whose answer was the last one delivered). No match means "I don't
know": escalate.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from cursorpilot.errors import BadInput
from cursorpilot.records import answerer
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Reply
from cursorpilot.yamlpos import explain, load_with_positions, where

EXAMPLE = "- {id: go, match: 'Continue\\?', reply: y}"
SHAPE = f"; a rules file is a list of rules like: {EXAMPLE}"
FLAGS = re.MULTILINE | re.IGNORECASE
NOTHING_CHOSEN = ("no answerer was chosen: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or give --rules FILE or --answer 'REGEX=REPLY' "
                  "(or --provider)")


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str
    reply: str
    id: str | None = None
    # only prompts of this kind; turn_end: an agent that stopped (docs/turns.md), and only rules that say so answer one
    kind: Literal["question", "input", "menu", "permission", "form", "turn_end"] | None = None
    screen: str | None = None  # a regex that must also be found anywhere on the live screen
    after: str | None = None  # only when the last answer delivered came from the rule with this id
    secret: bool = False  # the reply is a secret: masked wherever it is shown or kept (`<secret:NAME>` replies are anyway)
    # the acts a yes of this rule may carry out, named by you (the deny policy's words): your grant for them where the
    # rule answers (`match: Proceed`, `grants: [overwrite]` at gdisk's write); the hard floor still holds
    grants: list[Literal["delete", "overwrite", "format", "drop", "reset", "force-push"]] = []


def rule_id(entry: RuleEntry, i: int) -> str:
    return entry.id or f"#{i + 1}"


def _regex_error(entry: RuleEntry) -> tuple[str, str] | None:
    """(the field, what is wrong) for the first regex that does not compile."""
    for field in ("match", "screen"):
        pattern = getattr(entry, field)
        try:
            if pattern is not None:
                re.compile(pattern, FLAGS)
        except re.error as exc:
            return field, f"invalid regex in {field}: {pattern!r}: {exc}"
    return None


def compile_rules(entries: list[RuleEntry], origin: str) -> list[tuple[str, re.Pattern[str], re.Pattern[str] | None, RuleEntry]]:
    out = []
    for i, entry in enumerate(entries):
        bad = _regex_error(entry)
        if bad is not None:
            raise BadInput(f"{origin}: rule {rule_id(entry, i)}: {bad[1]}")
        out.append((rule_id(entry, i), re.compile(entry.match, FLAGS), re.compile(entry.screen, FLAGS) if entry.screen else None, entry))
    return out


def read_entries(path: Path) -> list[RuleEntry]:
    """A rules file, every error with its line and column, the key at fault, and the shape expected."""
    data, positions = load_with_positions(path, hint=SHAPE, text_scalars=True)
    prefix: tuple = ()
    if isinstance(data, dict) and set(data) == {"rules"}:
        data, prefix = data["rules"], ("rules",)
    if data is None:
        raise BadInput(f"{path}:1:1: no rules in the file{SHAPE}")
    if not isinstance(data, list):
        single = isinstance(data, dict) and "match" in data
        what = "one rule without its '- ' (a list item)" if single else f"{_kind(data)}, not a list"
        raise BadInput(f"{path}{where(positions, prefix)}: the file holds {what}{SHAPE}")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise BadInput(f"{path}{where(positions, (*prefix, i))}: rule {i + 1} is {_kind(item)}, not a mapping{SHAPE}")
    try:
        entries = TypeAdapter(list[RuleEntry]).validate_python(data)
    except ValidationError as exc:
        msg, loc = explain(exc, positions, RuleEntry.model_fields, prefix)
        n = loc[len(prefix)] if len(loc) > len(prefix) else None
        named = f" ({data[n]['id']})" if isinstance(n, int) and isinstance(data[n].get("id"), str) else ""
        rule = f"rule {n + 1}{named}: " if isinstance(n, int) else ""
        raise BadInput(f"{path}{where(positions, loc)}: {rule}{msg}{SHAPE}") from None
    ids = {rule_id(e, i) for i, e in enumerate(entries)}
    for i, entry in enumerate(entries):
        bad = _regex_error(entry)
        if bad is not None:
            raise BadInput(f"{path}{where(positions, (*prefix, i, bad[0]))}: rule {rule_id(entry, i)}: {bad[1]}")
        if entry.after is not None and entry.after not in ids:
            raise BadInput(f"{path}{where(positions, (*prefix, i, 'after'))}: rule {rule_id(entry, i)}: after: no rule has the id "
                           f"{entry.after!r} (ids: {', '.join(sorted(ids))})")
    return entries


def _kind(value: object) -> str:
    return {dict: "a mapping", list: "a list", str: "text", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def parse_answer(value: str, n: int) -> RuleEntry:
    """--answer 'REGEX=REPLY': split at the first '=' that is not part of the regex (written \\= there, or a
    (?=, (?<=, (?!= group)."""
    for i, ch in enumerate(value):
        if ch == "=" and not value[:i].endswith(("\\", "(?", "(?<", "(?<!", "(?!")):
            pattern, reply = value[:i], value[i + 1:]
            break
    else:
        raise BadInput(f"--answer {value!r}: expected REGEX=REPLY, e.g. --answer 'Continue\\?=y'")
    entry = RuleEntry(match=pattern, reply=reply, id=f"answer{n}")
    compile_rules([entry], f"--answer {value!r}")
    return entry


class RulesProvider:
    name = "rules"
    needs_prompt = False

    def __init__(self, entries: list[RuleEntry], origin: str):
        self.origin = origin
        self.rules = compile_rules(entries, origin)

    @classmethod
    def from_entries(cls, entries: list[RuleEntry], origin: str) -> RulesProvider:
        return cls(entries, origin)

    def answer(self, request: AnswerRequest) -> Reply:
        for rid, rx, screen, entry in self.rules:
            if entry.kind != request.kind and (entry.kind or request.kind == "turn_end"):
                continue
            if entry.after is not None and request.previous != answerer.rule(entry.after):
                continue
            if (m := rx.search(request.prompt_block)) and (screen is None or screen.search(request.screen)):
                return Reply(text=entry.reply, source=answerer.rule(rid), secret=entry.secret, matched=m.group(0),
                             named=(*(w for w in spelled(entry.match) if w.lower() in m.group(0).lower()), *entry.grants))
        if not self.rules and not self.origin:  # nothing was chosen to answer: say how to choose
            return Reply(text=None, source=answerer.RULES_MISS, reason=NOTHING_CHOSEN)
        return Reply(text=None, source=answerer.RULES_MISS, reason="no rule matches this prompt")


def spelled(pattern: str) -> list[str]:
    """The words a rule's pattern spells out (4 letters or more, not a yes/no): `continue\\?` says continue; `.`, `.*`
    and `\\[y/N\\]` say nothing. A rule that names a question in words of its own is the user's rule for it."""
    plain = re.sub(r"\\[A-Za-z]|\[[^\]]*\]|\(\?[^)]*\)|[{}+*?|^$()]", " ", pattern)
    plain = re.sub(r"\\(.)", r"\1", plain)
    return [w for w in re.findall(r"[A-Za-z]{4,}", plain) if w.lower() not in ("yes",)]


def create(config: ProviderConfig) -> RulesProvider:
    if config.rules_file is None:
        raise BadInput(f"--provider rules needs --rules FILE or --answer 'REGEX=REPLY' (a rules file looks like: {EXAMPLE})")
    return RulesProvider(read_entries(config.rules_file), str(config.rules_file))
