"""A cascade of answerers: a small model asked first, a stronger one only when the small one's answer can't be taken.

A 0.5B model on the user's own machine is free, private and fast on a short prompt, and often wrong; the run's own
`--provider/--model` is asked first and each `--escalate-to PROVIDER:MODEL[@BASE_URL]` after it, in order. An answer
is taken only when all of these hold, else the next model is asked, told what the last one said and why it was not
taken:

- it is inside the answer space: one of the answers the question takes where it says (decide/accepts.py), not a
  repetition of the question or of our prompt (decide/echo.py), not a refusal, a WAIT where a known prompt waits, nor
  a value typed at a hidden prompt (a model types a secret by its name, `<secret:NAME>`, and makes one up otherwise);
- the model was sure: the least margin of its answer's tokens (providers/confidence.py) reaches `min_margin` where
  its server gives log-probabilities, else a second answer, sampled, agrees with the first;
- nothing objects: the program asked this question again after this very answer (it did not take it), or a check of
  the caller's (`objections`) says why not.

The last model's answer is the decision path's to check like any other. The guard's own requests, the focused judgment
of a yes (kind weigh) and the policy's compile (kind policy), go to the strongest model alone: a small model's word
is never what lets a destructive yes through (`STRONGEST_ONLY`; `strongest` is that model, for any other caller).
The reply says, model by model, who was asked and why an answer was not taken (`Reply.cascade`), for the records,
the console and the report's share answered locally and cost saved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from cursorpilot.decide.echo import echoed, own_lines, screen_rows
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest, Reply, Sampling, Tier, Usage
from cursorpilot.providers.llm import ChatProvider, cost

STRONGEST_ONLY = ("weigh", "policy")  # the guard's requests: the judgment of a yes, the policy's compile
MIN_MARGIN = 0.9  # the least token margin an answer kept locally must have (--escalate-margin; bench/README.md: the figures)
SECOND_SAMPLE = 0.8  # the temperature of the second answer, where agreement stands in for log-probabilities
_SECRET_NAME = re.compile(r"<secret:[\w.-]+>")
Objection = Callable[[AnswerRequest, Reply], "str | None"]


class CascadeProvider:
    """The run's provider when --escalate-to names more models: asks them in order (see the module's docstring)."""

    name = "cascade"
    needs_prompt = True

    def __init__(self, tiers: Sequence[ChatProvider], min_margin: float = MIN_MARGIN, objections: Sequence[Objection] = ()):
        if len(tiers) < 2:
            raise ValueError("a cascade asks two models or more")
        self.tiers = tuple(tiers)
        self.min_margin = min_margin
        self.objections = tuple(objections)

    @property
    def strongest(self) -> ChatProvider:
        """The last model named: the guard's requests go to it alone."""
        return self.tiers[-1]

    @property
    def model(self) -> str:  # what the run's records and --max-cost name: the strongest's (its price is the one that counts)
        return self.strongest.model

    @property
    def prices(self):
        return self.strongest.prices

    def answer(self, request: AnswerRequest) -> Reply:
        if request.kind in STRONGEST_ONLY:  # (no cascade to tell of: its source names the strongest)
            return self.strongest.answer(request)
        asked, tiers, spent = request, [], Usage()
        for provider in self.tiers:
            if provider is self.strongest:
                reply = provider.answer(asked)
                tiers.append(self._tier(reply, True, "the strongest model named: its answer is checked like any other", request))
            else:
                reply, why = self._tried(provider, request)
                if why is None:
                    tiers.append(self._tier(reply, True, f"sure of it ({self._sureness(reply)})", request))
                else:
                    tiers.append(self._tier(reply, False, why, request))
                    spent = spent.plus(reply.usage)
                    asked = told(request, reply, why)
                    continue
            return replace(reply, usage=spent.plus(reply.usage), cascade=tuple(tiers))
        raise AssertionError("unreachable: the strongest answers")

    def _tried(self, provider: ChatProvider, request: AnswerRequest) -> tuple[Reply, str | None]:
        """One model's answer, and why it is not taken (None: taken). Log-probabilities are asked for every time: a
        reply without them (a server that gives none, tokens that are not the reply's text) is one reply, not the
        server's last word."""
        reply = provider.answer(request, Sampling(logprobs=True))
        if (why := outside(request, reply)) is not None:
            return reply, why
        if reply.margin is None:  # no confidence from its tokens: a second answer, sampled, must agree
            second = provider.answer(request, Sampling(temperature=SECOND_SAMPLE))
            reply = replace(reply, usage=reply.usage.plus(second.usage))
            if (second.text, second.wait) != (reply.text, reply.wait):
                said = "WAIT" if second.wait else repr(_shown(request, second.text))
                return reply, f"unsure: a second answer, sampled, said {said}"
        elif reply.margin < self.min_margin:
            return reply, f"unsure: its least token margin {reply.margin:.2f} is under {self.min_margin:.2f}"
        for objection in (asked_again, *self.objections):
            if (why := objection(request, reply)) is not None:
                return reply, why
        return reply, None

    @staticmethod
    def _sureness(reply: Reply) -> str:
        return f"least token margin {reply.margin:.2f}" if reply.margin is not None else "a second answer, sampled, agreed"

    def _tier(self, reply: Reply, kept: bool, why: str, request: AnswerRequest) -> Tier:
        """One model's part, with what the strongest alone would have cost for the question where this one answered it."""
        u, strong = reply.usage, self.strongest
        per_call = max(u.calls, 1)
        alone = cost(strong.model, u.input_tokens // per_call, u.output_tokens // per_call, strong.prices, u.cached_tokens // per_call)
        return Tier(reply.source, kept, why, _shown(request, reply.text), reply.margin, u, alone if kept else None)


def outside(request: AnswerRequest, reply: Reply) -> str | None:
    """Why a reply is outside what the question takes, or None."""
    if request.kind == "turn_end":
        return None if reply.turn is not None else reply.reason or "no verdict"
    if reply.wait:
        return None if request.may_wait else "said WAIT, but a prompt the rules know is waiting for an answer"
    if reply.text is None:
        return reply.reason or "no answer"
    text = reply.text
    if request.accepts and text not in ("", *request.accepts):
        return f"{text!r} is not one of the answers the question takes ({', '.join(request.accepts)})"
    if request.secret and text.strip() and not _SECRET_NAME.fullmatch(text.strip()):
        return "typed a value at a hidden prompt (a secret is typed by its name, or asked of a person)"
    if request.user:
        ours = own_lines(request.system, request.user, request.governing_prompt)
        if (why := echoed(text, request.prompt_block, ours, request.accepts, screen_rows(request.user))) is not None:
            return why
    return None


def asked_again(request: AnswerRequest, reply: Reply) -> str | None:
    """The program asked this very question again right after this very answer: it did not take it."""
    last = request.history[-1] if request.history else None
    if last is not None and reply.text is not None and last.answer == reply.text and last.question == request.prompt_block:
        return "the program asked again right after this very answer"
    return None


def told(request: AnswerRequest, reply: Reply, why: str) -> AnswerRequest:
    """The request for the next model: the same, and what the last one said and why it was not taken."""
    said = "WAIT" if reply.wait else repr(_shown(request, reply.text)) if reply.text is not None else "nothing it could type"
    note = (f"\n\nA smaller model ({reply.source}) answered {said} here, and its answer was not taken: {why}. "
            "Answer the question yourself, from the governing prompt and the screen.")
    return replace(request, user=request.user + note)


def _shown(request: AnswerRequest, text: str | None) -> str | None:
    """A reply as the records and the next model see it: a value typed at a hidden prompt is never repeated."""
    if text is None or not request.secret or not text.strip() or _SECRET_NAME.fullmatch(text.strip()):
        return text
    return "<a value>"


def parse_escalation(spec: str) -> tuple[str, str, str | None]:
    """`PROVIDER:MODEL[@BASE_URL]` (--escalate-to): the provider, the model and its server (None: the provider's own)."""
    name, sep, rest = spec.partition(":")
    model, _, base_url = rest.partition("@")
    if not sep or not name or not model:
        raise BadInput(f"--escalate-to {spec!r}: give PROVIDER:MODEL or PROVIDER:MODEL@BASE_URL (openai:gpt-4o-mini)")
    return name, model, base_url or None
