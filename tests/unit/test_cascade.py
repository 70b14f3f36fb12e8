"""The cascade's pure parts (issue 50): a model's confidence from its tokens, what is inside the answer space, the
--escalate-to spelling, and the report's tally. The cascade itself runs against two real servers in
tests/integration/test_cascade.py."""

import json
import math

import pytest

from cursorpilot.commands.runargs import FIELDS
from cursorpilot.decide.cascade import MIN_MARGIN, asked_again, outside, parse_escalation
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import QA, AnswerRequest, Reply, Tier, Usage
from cursorpilot.providers.confidence import answer_spans, margin
from cursorpilot.report.cascade import CascadeTally
from tests.fakes.llm_server import logprobs


def tokens(text: str, sure: float) -> list:
    return [(t["token"], t["logprob"], [(x["token"], x["logprob"]) for x in t["top_logprobs"]]) for t in logprobs(text, sure, 5)]


def test_the_margin_counts_the_answers_tokens_not_the_json_around_them():
    reply = json.dumps({"action": "type", "text": "y", "submit": True})
    assert margin(tokens(reply, 0.9), reply) == pytest.approx(0.8)
    assert margin(tokens(reply, 0.5), reply) == pytest.approx(0.0)
    spans = answer_spans(reply)
    assert [reply[a:b] for a, b in spans] == ['type"', 'y"']


def test_an_empty_answer_is_judged_by_the_quote_that_ends_it():
    """Enter alone (the default) was a choice too: the token that closes the empty text carries it."""
    reply = json.dumps({"action": "type", "text": "", "submit": True})
    toks = [(t, lp if i != 17 else math.log(0.3), top if i != 17 else [(t, math.log(0.3)), ("x", math.log(0.6))])
            for i, (t, lp, top) in enumerate(tokens(reply, 0.99))]
    assert toks[17][0] == '"' and margin(toks, reply) == pytest.approx(-0.3)


def test_a_choice_among_what_the_question_takes_is_weighed_among_those_only():
    """pip uninstall's `Proceed (Y/n)?` takes y and n; the 0.5B model's raw favourite was "yes", which the grammar never
    let it type, and the quote after its y was forced. Its confidence is its y against its n, not against "yes"."""
    reply = json.dumps({"action": "type", "text": "y", "submit": True})
    toks = tokens(reply, 0.99)
    at = next(i for i, t in enumerate(toks) if t[0] == "y")
    toks[at] = ("y", math.log(0.3), [("yes", math.log(0.6)), ("y", math.log(0.3)), ("n", math.log(0.05))])
    toks[at + 1] = ('"', math.log(0.02), [("es", math.log(0.9)), ('"', math.log(0.02))])  # the grammar closed it
    enums = {"action": ("type", "wait", "human"), "text": ("", "y", "n")}
    assert margin(toks, reply, enums) == pytest.approx((0.3 - 0.05) / 0.35, abs=1e-3)
    assert margin(toks, reply) < 0  # token by token, raw: the forced quote and the untypable "yes" look like doubt
    toks[at] = ("y", math.log(0.3), [("n", math.log(0.28)), ("y", math.log(0.3))])  # y against n, nearly even: unsure
    assert margin(toks, reply, enums) == pytest.approx(0.02 / 0.58, abs=1e-3)


def test_a_plain_reply_counts_every_token_but_blank_space_and_tokens_of_another_text_count_none():
    assert margin(tokens("y", 0.7), "y") == pytest.approx(0.4)
    assert margin(tokens("y", 0.7), "n") is None and margin([], "y") is None


def request(**kw) -> AnswerRequest:
    base = dict(governing_prompt="Deploy it.", kind="question", rule_id="r", prompt_block="Deploy? [y/n]", screen="Deploy? [y/n]",
                system="sys", user="```TERMINAL\nDeploy? [y/n]\n```", accepts=("y", "n"))
    return AnswerRequest(**{**base, **kw})


@pytest.mark.parametrize("kw,reply,why", [
    ({}, Reply("maybe", "s"), "'maybe' is not one of the answers the question takes (y, n)"),
    ({}, Reply(None, "s", reason="the answerer asks for a human"), "the answerer asks for a human"),
    ({}, Reply(None, "s", wait=True), "said WAIT, but a prompt the rules know is waiting for an answer"),
    ({"secret": True, "accepts": ()}, Reply("hunter2", "s"), "typed a value at a hidden prompt (a secret is typed by its name, or asked of a person)"),
    ({"accepts": (), "prompt_block": "package name: (work)"}, Reply("package name: (work)", "s"), "repeats the question"),
])
def test_what_is_outside_the_answer_space(kw, reply, why):
    assert outside(request(**kw), reply) == why


@pytest.mark.parametrize("kw,reply", [
    ({}, Reply("y", "s")), ({}, Reply("", "s")), ({"may_wait": True}, Reply(None, "s", wait=True)),
    ({"secret": True, "accepts": ()}, Reply("<secret:pw>", "s")), ({"secret": True, "accepts": ()}, Reply("", "s")),
    ({"accepts": (), "prompt_block": "package name: (work)"}, Reply("demo-widget", "s")),
])
def test_the_mirror_what_the_question_takes_is_inside(kw, reply):
    assert outside(request(**kw), reply) is None


def test_an_answer_the_program_asked_again_after_is_objected_to_and_another_is_not():
    again = request(history=(QA("Deploy? [y/n]", "y"),))
    assert asked_again(again, Reply("y", "s")) == "the program asked again right after this very answer"
    assert asked_again(again, Reply("n", "s")) is None and asked_again(request(), Reply("y", "s")) is None


def test_escalate_to_is_read_and_a_bad_one_is_one_clear_line():
    assert parse_escalation("openai:gpt-4o") == ("openai", "gpt-4o", None)
    assert parse_escalation("openai:qwen2.5:0.5b@http://127.0.0.1:8765/v1") == ("openai", "qwen2.5:0.5b", "http://127.0.0.1:8765/v1")
    for bad in ("openai", ":gpt-4o", "openai:"):
        with pytest.raises(BadInput, match="PROVIDER:MODEL"):
            parse_escalation(bad)


def test_the_report_says_the_share_answered_locally_and_the_cost_saved():
    tally = CascadeTally()
    local = Tier("openai:qwen", True, "sure of it", "y", 0.9, Usage(1000, 5, calls=1), usd_alone=0.003)
    passed = Tier("openai:qwen", False, "unsure: its least token margin 0.10 is under 0.50", "y", 0.1)
    strong = Tier("openai:gpt-4o", True, "the strongest", "n", None, Usage(1100, 5, cost_usd=0.0033), usd_alone=0.0033)
    tally.add([local.record()], {"cost_usd": None})
    tally.add([local.record()], {"cost_usd": None})
    tally.add([passed.record(), strong.record()], {"cost_usd": 0.0033})
    summary = tally.summary()
    assert (summary.questions, summary.local, summary.local_share) == (3, 2, 0.667)
    assert [(m.model, m.asked, m.answered) for m in summary.models] == [("openai:qwen", 3, 2), ("openai:gpt-4o", 1, 1)]
    assert [(e.why, e.n) for e in summary.escalated] == [("unsure", 1)]
    assert summary.cost_alone_usd == pytest.approx(0.0093) and summary.saved_usd == pytest.approx(0.006)
    assert CascadeTally().summary() is None  # a run that asked no cascade says nothing of one


def test_the_threshold_is_the_same_wherever_it_is_read():
    """--escalate-margin's default is the cascade's own (the figures that chose it: bench/README.md)."""
    assert FIELDS["escalate_margin"].default == MIN_MARGIN == 0.9
