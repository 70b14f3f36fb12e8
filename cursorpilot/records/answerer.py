"""Who answered a question, as a type. A record's `source` ("rules:<id>", "policy:<rule>", "human", "plan:send",
"openai:gpt-4o", ...) is this type's string form: it is made here where an answer is made (`str(Source(...))`) and
read back here alone (`Source.read`), so that a check asks `by.kind is Answerer.RULES` or `by.rule` rather than a
prefix of its own (decide/gate.py's "rules:" and channels/pty/asking.py's "rules" had drifted apart).

The string form is the records' stable format (docs/records.md): `str(Source.read(s)) == s` for every string, so a
run's records read the same after as before. Stdlib only: the records, the decision path and the providers all use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Answerer(StrEnum):
    """The kinds of answerer a source names; the value is how a record spells it."""

    RULES = "rules"  # "rules:<id>": the rule that answered; bare "rules": the rules were asked and none matched
    POLICY = "policy"  # "policy:<rule>": the deny policy changed or refused the answer ("policy:hook": an agent's hook)
    PLAN = "plan"  # "plan:send": the plan's own words
    PERSON = "human"  # a person answered
    TIMEOUT = "on-human-timeout"  # nobody answered in time, and --on-human-timeout gave the no
    NOBODY = "nobody"  # the people asked gave no answer
    BREAKER = "loop-breaker"  # the report's row for an escalation the loop breaker made
    MODEL = "model"  # anything else: a provider's "<name>:<model>", "mock", a script
    NONE = ""  # nobody is named


_PREFIXED = (Answerer.RULES, Answerer.POLICY, Answerer.PLAN)  # written "<kind>" or "<kind>:<detail>"
_WHOLE = {a.value: a for a in (Answerer.PERSON, Answerer.TIMEOUT, Answerer.NOBODY, Answerer.BREAKER, Answerer.NONE)}


@dataclass(frozen=True, slots=True)
class Source:
    """Who answered, and which of them: the rule's id, the policy's rule, the plan's word, a model's whole name."""

    kind: Answerer
    detail: str | None = None  # RULES, POLICY, PLAN: what follows the colon (None: no colon); MODEL: the whole name

    def __str__(self) -> str:
        if self.kind is Answerer.MODEL:
            return self.detail or ""
        return self.kind.value if self.detail is None else f"{self.kind.value}:{self.detail}"

    @property
    def rule(self) -> str | None:
        """The id of the rule that answered, when a rule did (not a bare "rules": the rules asked, none matched)."""
        return self.detail if self.kind is Answerer.RULES else None

    @classmethod
    def read(cls, text: str) -> Source:
        """A record's source read back: the one place its spelling is parsed."""
        if text in _WHOLE:
            return cls(_WHOLE[text])
        head, colon, rest = text.partition(":")
        for kind in _PREFIXED:
            if head == kind.value:
                return cls(kind, rest if colon else None)
        return cls(Answerer.MODEL, text)


def rule(rid: str) -> str:
    """The source of an answer a rule gave (`after:` names the rule the same way)."""
    return str(Source(Answerer.RULES, rid))


RULES_MISS = str(Source(Answerer.RULES))  # the rules were asked and none matched
PERSON = str(Source(Answerer.PERSON))
NOBODY = str(Source(Answerer.NOBODY))
BY_TIMEOUT = str(Source(Answerer.TIMEOUT))
LOOP_BREAKER = str(Source(Answerer.BREAKER))
PLAN_SEND = str(Source(Answerer.PLAN, "send"))  # a step's `send:`, typed as the plan says


def policy(rule_name: str) -> str:
    """The source of an answer the deny policy gave (or of its escalation): the policy's rule."""
    return str(Source(Answerer.POLICY, rule_name))
