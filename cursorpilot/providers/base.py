"""The provider interface: one method, answer(request) -> reply."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(slots=True, frozen=True)
class ProviderConfig:
    rules_file: Path | None = None
    model: str | None = None
    base_url: str | None = None


@dataclass(slots=True, frozen=True)
class QA:
    question: str
    answer: str


@dataclass(slots=True, frozen=True)
class AnswerRequest:
    governing_prompt: str
    kind: str  # question | input | menu
    rule_id: str
    prompt_block: str  # the detected prompt, as rendered on screen
    screen: str  # the live region
    history: tuple[QA, ...] = ()


@dataclass(slots=True, frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0


@dataclass(slots=True, frozen=True)
class Reply:
    text: str | None  # None: the provider cannot answer -> escalate
    source: str  # what chose it: "rules:<id>", "mock", a model name
    reason: str = ""  # why there is no answer, for the escalation line
    usage: Usage = field(default_factory=Usage)


class Provider(Protocol):
    name: str

    def answer(self, request: AnswerRequest) -> Reply: ...
