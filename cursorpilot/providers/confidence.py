"""How sure a model was of its answer, from the log-probabilities of the tokens it chose, PURE.

A cascade (decide/cascade.py) keeps a small model's answer only when the model was sure of it. OpenAI-compatible
servers (OpenAI, vLLM, llama.cpp's server, llama-cpp-python) give, with `logprobs: true, top_logprobs: N`, each token's
log-probability and the N likeliest tokens there. A token's margin is its probability less the best other token's:
0.98 where the model had no doubt, near 0 where two answers were as likely, below 0 where a grammar made it take a
token the model did not prefer. The answer's margin is its least token's, over the tokens that carry the answer only:
the values of a structured reply's `action`, `text` (with the quote that ends it: stopping there was a choice too),
`verdict` and `decision`; the JSON around them is the format, not the answer, and a grammar makes it certain anyway.
A reply in the one-line form counts every token that is not blank space.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

Token = tuple[str, float, Sequence[tuple[str, float]]]  # the token, its log-probability, the likeliest tokens there (token, lp)

_VALUE = re.compile(r'"(action|text|verdict|decision)"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)


def token_margin(token: str, logprob: float, top: Sequence[tuple[str, float]]) -> float:
    """The token's probability less the best other token's (the token itself may or may not be among `top`)."""
    others = [lp for t, lp in top if t != token]
    runner_up = math.exp(max(others)) if others else 0.0
    return math.exp(logprob) - runner_up


def answer_spans(content: str) -> list[tuple[int, int]]:
    """Where the answer is in the reply's text: the structured reply's answer values, each with its closing quote;
    the whole reply when it is not structured."""
    if content.lstrip().startswith("{"):
        spans = [(m.start(2), m.end(2) + 1) for m in _VALUE.finditer(content)]
        if spans:
            return spans
    return [(0, len(content))]


def margin(tokens: Sequence[Token], content: str) -> float | None:
    """The least margin over the tokens that carry the answer; None where the tokens are not the reply's text (a
    server that gives them for another text, or none)."""
    if not tokens or "".join(t for t, _, _ in tokens) != content:
        return None
    spans = answer_spans(content)
    least: float | None = None
    at = 0
    for token, logprob, top in tokens:
        start, at = at, at + len(token)
        if not token.strip() and spans == [(0, len(content))]:
            continue  # blank space around a one-line answer decides nothing
        if any(start < end and at > begin for begin, end in spans):
            m = token_margin(token, logprob, top)
            least = m if least is None else min(least, m)
    return None if least is None else round(least, 4)
