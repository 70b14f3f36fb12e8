"""The real openai and anthropic SDKs against a local fake server: no network."""

import pytest

from cursorpilot.providers.anthropic import AnthropicProvider
from cursorpilot.providers.base import AnswerRequest, ProviderConfig
from cursorpilot.providers.llm import clean_reply, parse_retry_after
from cursorpilot.providers.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLLM, Step

pytestmark = pytest.mark.timeout(60)
REQ = AnswerRequest(governing_prompt="g", kind="question", rule_id="r", prompt_block="Continue? [y/n]", screen="",
                    system="sys", user="Continue? [y/n]")


def make(kind, server, retries=2, timeout=5.0, sleeps=None):
    sleeps = [] if sleeps is None else sleeps
    if kind == "openai":
        cfg = ProviderConfig(base_url=server.url + "/v1", retries=retries, timeout=timeout)
        return OpenAIProvider(cfg, "sk-test-key-123456789", sleep=sleeps.append)
    cfg = ProviderConfig(base_url=server.url, retries=retries, timeout=timeout)
    return AnthropicProvider(cfg, "sk-ant-test-key-1234", sleep=sleeps.append)


KINDS = ["openai", "anthropic"]


@pytest.mark.parametrize("kind", KINDS)
def test_normal_answer_with_usage_and_cost(kind):
    with FakeLLM(answer=lambda p: "y") as server:
        reply = make(kind, server).answer(REQ)
    assert reply.text == "y" and reply.usage.calls == 1
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens == 3
    assert reply.usage.cost_usd is not None and reply.usage.cost_usd > 0
    body = server.requests[0]["json"]
    assert "Continue? [y/n]" in str(body["messages"])
    assert server.requests[0]["path"] == ("/v1/chat/completions" if kind == "openai" else "/v1/messages")


@pytest.mark.parametrize("kind", KINDS)
def test_429_then_success_honours_retry_after(kind):
    sleeps = []
    with FakeLLM() as server:
        server.script = [Step(status=429, headers={"retry-after": "2"}), Step(text="n")]
        reply = make(kind, server, sleeps=sleeps).answer(REQ)
    assert reply.text == "n" and reply.usage.calls == 2
    assert sleeps == [2.0]
    assert [a.wait_s for a in reply.attempts] == [2.0] and "429" in reply.attempts[0].error


@pytest.mark.parametrize("kind", KINDS)
def test_503_until_retries_run_out_gives_no_answer(kind):
    sleeps = []
    with FakeLLM() as server:
        server.script = [Step(status=503)] * 4
        reply = make(kind, server, retries=3, sleeps=sleeps).answer(REQ)
    assert reply.text is None and "retries exhausted" in reply.reason
    assert len(server.requests) == 4 and len(sleeps) == 3
    assert sleeps == sorted(sleeps) or max(sleeps) <= 4.0  # exponential with jitter, capped


@pytest.mark.parametrize("kind", KINDS)
def test_timeout_is_retried_then_gives_up(kind):
    with FakeLLM() as server:
        server.script = [Step(delay=1.5), Step(delay=1.5)]
        reply = make(kind, server, retries=1, timeout=0.3).answer(REQ)
    assert reply.text is None and "timeout" in reply.reason
    assert reply.usage.calls == 2


@pytest.mark.parametrize("kind", KINDS)
def test_malformed_response_is_not_typed(kind):
    with FakeLLM() as server:
        server.script = [Step(raw_body=b'{"unexpected": true}')]
        reply = make(kind, server).answer(REQ)
    assert reply.text is None and "malformed" in reply.reason


@pytest.mark.parametrize("kind", KINDS)
def test_reasoning_is_never_typed(kind):
    with FakeLLM() as server:
        server.script = [Step(text="<think>the user wants yes</think>y", reasoning="long private reasoning")]
        reply = make(kind, server).answer(REQ)
    assert reply.text == "y"
    assert any("long private reasoning" in r for r in reply.removed)
    assert any("<think>" in r for r in reply.removed)


@pytest.mark.parametrize("raw,text", [
    ("```\nnpm test\n```", "npm test"),
    ("<think>hmm</think>\n'active'", "'active'"),
])
def test_cleaning_removes_reasoning_and_a_fence_around_the_whole_reply(raw, text):
    assert clean_reply(raw).text == text


@pytest.mark.parametrize("answer", ["'active'", '"a b"', "' x '", "it's", "`y`", "  y  "])
def test_cleaning_never_changes_the_answer_itself(answer):
    """At a Python prompt 'active' is a string and active a NameError: quotes and spaces belong to the answer."""
    cleaned = clean_reply(answer)
    assert cleaned.text == answer and cleaned.removed == ()


@pytest.mark.parametrize("raw,text,submit,wait", [
    ('{"action": "type", "text": "\'active\'", "submit": true}', "'active'", True, False),
    ('{"action": "type", "text": "q", "submit": false}', "q", False, False),
    ('{"action": "type", "text": "", "submit": true}', "", True, False),
    ('{"action": "wait", "text": "", "submit": false}', None, None, True),
])
def test_structured_replies_say_exactly_what_to_type(raw, text, submit, wait):
    cleaned = clean_reply(raw)
    assert (cleaned.text, cleaned.submit, cleaned.wait) == (text, submit, wait)


def test_structured_human_reply_escalates_with_its_question():
    cleaned = clean_reply('{"action": "human", "text": "Which license?", "submit": false}')
    assert cleaned.text is None and "Which license?" in cleaned.reason


def test_cleaning_refuses_multi_line_and_empty():
    assert clean_reply("line one\nline two").text is None
    assert "multi-line" in clean_reply("a\nb").reason
    assert clean_reply("<think>only thoughts</think>").text is None


def test_retry_after_forms():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("999") == 60.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


TURN = AnswerRequest(governing_prompt="If the agent stops and waits, tell it to leave the data alone and finish.", kind="turn_end",
                     rule_id="claude.idle", prompt_block="Request cancelled.", screen="", system="sys", user="Request cancelled.")
VERDICT = '{"verdict": "continue", "message": "Leave the data alone and finish.", "why": "the governing prompt says so"}'


@pytest.mark.parametrize("kind", KINDS)
def test_a_turn_end_asks_for_a_verdict_by_schema_or_forced_tool_and_gets_the_next_message(kind):
    with FakeLLM(answer=lambda p: VERDICT) as server:
        reply = make(kind, server).answer(TURN)
    assert (reply.turn, reply.text, reply.reason) == ("continue", "Leave the data alone and finish.", "the governing prompt says so")
    body = server.requests[0]["json"]
    if kind == "openai":
        schema = body["response_format"]["json_schema"]
        assert schema["name"] == "judge_turn" and schema["schema"]["properties"]["verdict"]["enum"] == ["done", "continue", "blocked", "impossible"]
    else:
        assert body["tool_choice"] == {"type": "tool", "name": "judge_turn"} and body["tools"][0]["name"] == "judge_turn"


@pytest.mark.parametrize("raw,turn,text,reason", [
    ('{"verdict": "done", "message": "ignored", "why": "the tests pass"}', "done", None, "the tests pass"),
    ('{"verdict": "blocked", "message": "", "why": "needs the deploy key"}', "blocked", None, "needs the deploy key"),
    ('{"verdict": "continue", "message": "one\\ntwo", "why": "w"}', None, None, "multi-line reply refused: the agent's composer takes one line"),
    ('{"verdict": 3, "message": "", "why": ""}', None, None, "malformed structured reply: verdict 3"),
])
def test_structured_turn_verdicts_and_what_fails_closed(raw, turn, text, reason):
    cleaned = clean_reply(raw)
    assert (cleaned.turn, cleaned.text, cleaned.reason) == (turn, text, reason)
