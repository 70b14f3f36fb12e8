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
from collections.abc import Mapping, Sequence

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
    return [(begin, end) for _, begin, end in _fields(content)]


def choice_margin(token: str, logprob: float, top: Sequence[tuple[str, float]], offset: int, values: Sequence[str]) -> float:
    """The margin of a choice among a field's values (an enum: the answers a question takes, the actions), at the token
    where the value starts (`offset` characters into it): only the likeliest tokens that can start one of the values
    count, their probabilities taken as a share of those. The model's raw favourite may be a word the grammar never let
    it type ("yes" at a question that takes y and n); what it chose among what it could is the confidence that counts."""
    closed = [v + '"' for v in values]

    def can_start(alt: str) -> bool:
        if alt[:offset] != token[:offset] or len(alt) <= offset:
            return False
        piece = alt[offset:]
        return any(c.startswith(piece) or piece.startswith(c) for c in closed)

    shares = {alt: math.exp(lp) for alt, lp in top if alt != token and can_start(alt)}
    mine = math.exp(logprob)
    whole = mine + sum(shares.values())
    return (mine - max(shares.values(), default=0.0)) / whole


def margin(tokens: Sequence[Token], content: str, enums: Mapping[str, Sequence[str]] | None = None) -> float | None:
    """The least margin over the tokens that carry the answer; None where the tokens are not the reply's text (a
    server that gives them for another text, or none). A structured field whose values are an enum (`enums`: the
    answers the question takes, the actions) counts once, at the token where its value starts (choice_margin): the
    grammar chose the rest (the 'es' never typed after a y, the quote that closes it)."""
    if not tokens or "".join(t for t, _, _ in tokens) != content:
        return None
    spans = _fields(content)
    least: float | None = None
    at = 0
    done: set[int] = set()
    for token, logprob, top in tokens:
        start, at = at, at + len(token)
        if not token.strip() and spans == [("", 0, len(content))]:
            continue  # blank space around a one-line answer decides nothing
        for n, (field, begin, end) in enumerate(spans):
            if not (start < end and at > begin) or n in done:
                continue
            values = (enums or {}).get(field)
            if values is not None:
                done.add(n)
                m = choice_margin(token, logprob, top, max(begin - start, 0), values)
            else:
                m = token_margin(token, logprob, top)
            least = m if least is None else min(least, m)
    return None if least is None else round(least, 4)


def _fields(content: str) -> list[tuple[str, int, int]]:
    """(field, start, end) of the answer's values, each with its closing quote; ("", 0, len) for a reply not structured."""
    if content.lstrip().startswith("{"):
        found = [(m.group(1), m.start(2), m.end(2) + 1) for m in _VALUE.finditer(content)]
        if found:
            return found
    return [("", 0, len(content))]
