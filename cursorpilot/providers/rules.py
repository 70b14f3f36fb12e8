"""The offline provider: a YAML list of {match: regex, reply: text}; first match wins.

Checked against the prompt block only (not the whole screen), so text elsewhere on
screen cannot trigger an answer. No match means "I don't know": escalate.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Reply


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str
    reply: str
    id: str | None = None
    kind: str | None = None  # only for prompts of this kind (question, input, menu)


def compile_rules(entries: list[RuleEntry], origin: str) -> list[tuple[str, re.Pattern[str], RuleEntry]]:
    out = []
    for i, entry in enumerate(entries):
        rid = entry.id or f"#{i + 1}"
        try:
            out.append((rid, re.compile(entry.match, re.MULTILINE | re.IGNORECASE), entry))
        except re.error as exc:
            raise BadInput(f"{origin}: rule {rid}: invalid regex {entry.match!r}: {exc}") from None
    return out


def read_entries(path: Path) -> list[RuleEntry]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: rules file not found") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{path}: invalid YAML: {exc}".splitlines()[0]) from None
    if isinstance(data, dict) and set(data) == {"rules"}:
        data = data["rules"]
    try:
        entries = TypeAdapter(list[RuleEntry]).validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise BadInput(f"{path}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    compile_rules(entries, str(path))  # fail early on a bad regex, naming the file
    return entries


class RulesProvider:
    name = "rules"
    needs_prompt = False

    def __init__(self, entries: list[RuleEntry], origin: str):
        self.origin = origin
        self.rules = compile_rules(entries, origin)

    @classmethod
    def from_entries(cls, entries: list[RuleEntry], origin: str) -> "RulesProvider":
        return cls(entries, origin)

    def answer(self, request: AnswerRequest) -> Reply:
        for rid, rx, entry in self.rules:
            if entry.kind and entry.kind != request.kind:
                continue
            if rx.search(request.prompt_block):
                return Reply(text=entry.reply, source=f"rules:{rid}")
        return Reply(text=None, source="rules", reason="no rule matches this prompt")


def create(config: ProviderConfig) -> RulesProvider:
    if config.rules_file is None:
        raise BadInput("--provider rules needs --rules FILE (a YAML list of {match, reply})")
    return RulesProvider(read_entries(config.rules_file), str(config.rules_file))
