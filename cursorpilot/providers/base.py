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
    secret: bool = False  # the question hides what is typed (a password): a model may type a secret by name only


@dataclass(slots=True, frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    calls: int = 0  # HTTP requests made, retries included
    cached_tokens: int = 0  # of input_tokens, those the server read from its prompt cache (a prefix it had seen)

    def plus(self, other: Usage) -> Usage:
        """Two calls' usage as one (a cost where either has one)."""
        spent = None if self.cost_usd is None and other.cost_usd is None else round((self.cost_usd or 0) + (other.cost_usd or 0), 8)
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     round(self.latency_s + other.latency_s, 3), spent, self.calls + other.calls, self.cached_tokens + other.cached_tokens)

    def record(self) -> dict:
        """As the transcript's provider_reply keeps it."""
        return {"in": self.input_tokens, "out": self.output_tokens, "cached": self.cached_tokens, "latency_s": self.latency_s,
                "calls": self.calls, "cost_usd": self.cost_usd}


@dataclass(slots=True, frozen=True)
class FailedAttempt:
    """One failed try before a retry (or before giving up)."""

    error: str
    wait_s: float | None  # None: not retried


@dataclass(slots=True, frozen=True)
class Sampling:
    """How a chat provider samples one call: greedy, as every answer is asked, unless a cascade (decide/cascade.py) asks
    for the tokens' log-probabilities (its confidence) or for a second, sampled answer (agreement, where a server gives
    no log-probabilities)."""

    logprobs: bool = False
    temperature: float = 0.0


@dataclass(slots=True, frozen=True)
class Tier:
    """One model a cascade asked for one question (decide/cascade.py): whether its answer was taken, and why not."""

    source: str  # provider:model
    kept: bool
    why: str  # why it was taken (its confidence), or why not (outside the answer space, unsure, an objection)
    text: str | None = None  # what it answered (masked at a hidden prompt)
    margin: float | None = None  # its confidence: the least margin of its answer's tokens (None: the server gave none)
    usage: Usage = field(default_factory=Usage)
    usd_alone: float | None = None  # what the strongest model would have cost for this call (the cost saved is the difference)

    def record(self) -> dict:
        return {"source": self.source, "kept": self.kept, "why": self.why, "text": self.text, "margin": self.margin,
                "usage": self.usage.record(), "usd_alone": self.usd_alone}


@dataclass(slots=True, frozen=True)
class Reply:
    text: str | None  # what to type, in the reply grammar; None: no answer (escalate, or wait)
    source: str  # what chose it: "rules:<id>", "mock", a model name
    reason: str = ""  # why there is no answer, for the escalation line
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None  # the reply as received, before cleaning
    removed: tuple[str, ...] = ()  # what cleaning took out (reasoning, fences, quotes)
    attempts: tuple[FailedAttempt, ...] = ()
    wait: bool = False  # the answerer judged that nobody is being asked (structured replies)
    submit: bool | None = None  # the answerer said whether Enter follows (structured replies)
    secret: bool = False  # the answer is a secret (a rule's `secret: true`)
    turn: str | None = None  # a turn end's verdict from the structured reply (text: the next message; reason: why)
    judged: str | None = None  # a yes weighed (kind weigh): allow | refuse (text: the governing prompt's words; reason: why)
    act: str | None = None  # ...and the act the judge says those words ask for (WEIGH_ACTS), when it says
    names: str | None = None  # ...and the question's words that name the grant's object, when it says
    matched: str | None = None  # a rule's answer: the text its pattern matched (does the rule name what a yes does?)
    named: tuple[str, ...] = ()  # ...and the words of its own its pattern spells out there (a catch-all spells none)
    margin: float | None = None  # the model's confidence in its answer, from its tokens' log-probabilities (confidence.py)
    cascade: tuple[Tier, ...] = ()  # a cascade's answer: each model it asked, in order, the last the one that answered


class Provider(Protocol):
    name: str
    needs_prompt: bool  # True: the caller must fill AnswerRequest.system/user

    def answer(self, request: AnswerRequest) -> Reply: ...
