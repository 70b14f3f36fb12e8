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
    retries: int = 4  # --llm-retries
    timeout: float = 60.0  # per call, seconds
    prices: dict[str, tuple[float, ...]] | None = None  # model -> (USD per 1M input, per 1M output[, per 1M cached input])


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
    system: str = ""  # the rendered prompt, for providers that send one (built and redacted by the caller)
    user: str = ""
    multiline: bool = False  # the prompt takes several lines
    may_wait: bool = False  # nothing known is asking: the answerer may say WAIT
    previous: str = ""  # who chose the last answer delivered in this step ("rules:<id>", a model, "human"): a rule's after:
    accepts: tuple[str, ...] = ()  # the answers the question takes, where it says (decide/accepts.py): the schema's enum


@dataclass(slots=True, frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    calls: int = 0  # HTTP requests made, retries included
    cached_tokens: int = 0  # of input_tokens, those the server read from its prompt cache (a prefix it had seen)

    def record(self) -> dict:
        """As the transcript's provider_reply keeps it."""
        return {"in": self.input_tokens, "out": self.output_tokens, "cached": self.cached_tokens, "latency_s": self.latency_s,
                "calls": self.calls, "cost_usd": self.cost_usd}


@dataclass(slots=True, frozen=True)
class Attempt:
    """One failed try before a retry (or before giving up)."""

    error: str
    wait_s: float | None  # None: not retried


@dataclass(slots=True, frozen=True)
class Reply:
    text: str | None  # what to type, in the reply grammar; None: no answer (escalate, or wait)
    source: str  # what chose it: "rules:<id>", "mock", a model name
    reason: str = ""  # why there is no answer, for the escalation line
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None  # the reply as received, before cleaning
    removed: tuple[str, ...] = ()  # what cleaning took out (reasoning, fences, quotes)
    attempts: tuple[Attempt, ...] = ()
    wait: bool = False  # the answerer judged that nobody is being asked (structured replies)
    submit: bool | None = None  # the answerer said whether Enter follows (structured replies)
    secret: bool = False  # the answer is a secret (a rule's `secret: true`)
    turn: str | None = None  # a turn end's verdict from the structured reply (text: the next message; reason: why)
    judged: str | None = None  # a yes weighed (kind weigh): allow | refuse (text: the governing prompt's words; reason: why)
    act: str | None = None  # ...and the act the judge says those words ask for (WEIGH_ACTS), when it says
    names: str | None = None  # ...and the question's words that name the grant's object, when it says
    matched: str | None = None  # a rule's answer: the text its pattern matched (does the rule name what a yes does?)
    named: tuple[str, ...] = ()  # ...and the words of its own its pattern spells out there (a catch-all spells none)


class Provider(Protocol):
    name: str
    needs_prompt: bool  # True: the caller must fill AnswerRequest.system/user

    def answer(self, request: AnswerRequest) -> Reply: ...
