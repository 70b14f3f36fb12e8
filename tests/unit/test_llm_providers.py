"""The real openai and anthropic SDKs against a local fake server: no network."""

from dataclasses import replace

import pytest

from cursorpilot.providers.anthropic import AnthropicProvider
from cursorpilot.providers.base import AnswerRequest, ProviderConfig
from cursorpilot.providers.llm import clean_reply, parse_retry_after
from cursorpilot.providers.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLLM, Step, llama_cpp_python

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


def base_of(kind, server) -> str:
    return server.url + ("/v1" if kind == "openai" else "")


@pytest.mark.parametrize("kind", KINDS)
def test_a_501_is_not_retried_and_says_the_server_named_is_not_the_api(kind):
    """A plain web server given as the base URL answers a POST with 501: it was asked 5 times (retries exhausted), and
    the message named no URL."""
    sleeps = []
    with FakeLLM() as server:
        server.script = [Step(status=501)] * 5
        reply = make(kind, server, retries=4, sleeps=sleeps).answer(REQ)
    assert reply.text is None and len(server.requests) == 1 and sleeps == []
    assert reply.reason.startswith(f"provider error: HTTP 501 from {base_of(kind, server)}: ") and "check --base-url" in reply.reason
    assert reply.reason.endswith("(not retryable after 1 call(s))")


@pytest.mark.parametrize("kind", KINDS)
def test_a_timeout_names_the_server_and_how_long_it_waited(kind):
    with FakeLLM() as server:
        server.script = [Step(delay=1.5)]
        reply = make(kind, server, retries=0, timeout=0.3).answer(REQ)
    assert f"no reply within 0.3s (--llm-timeout), from {base_of(kind, server)} (retries exhausted" in reply.reason


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


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind,path", [("openai", "/v1/chat/completions"), ("anthropic", "/v1/messages")])
def test_a_connection_error_names_the_url_it_tried(kind, path):
    """'connection error: Connection error.' left a user guessing which setting was wrong."""
    port = closed_port()
    base = f"http://127.0.0.1:{port}" + ("/v1" if kind == "openai" else "")
    cfg = ProviderConfig(base_url=base, retries=0, timeout=5.0)
    provider = OpenAIProvider(cfg, "sk-test-key-123456789") if kind == "openai" else AnthropicProvider(cfg, "sk-ant-test-key-1234")
    reply = provider.answer(REQ)
    assert reply.text is None and f"tried http://127.0.0.1:{port}{path}" in reply.reason


@pytest.mark.parametrize("kind", KINDS)
def test_the_offered_answers_are_the_enum_of_the_schema_or_the_forced_tool(kind):
    with FakeLLM(answer=lambda p: '{"action": "type", "text": "n", "submit": true}') as server:
        reply = make(kind, server).answer(replace(REQ, accepts=("y", "n")))
    assert reply.text == "n"
    body = server.requests[0]["json"]
    schema = body["response_format"]["json_schema"]["schema"] if kind == "openai" else body["tools"][0]["input_schema"]
    assert schema["properties"]["text"]["enum"] == ["", "y", "n"]


def test_a_human_asked_for_under_an_enum_carries_no_question():
    """The text was limited to the offered answers: 'y' there is not a question for a person."""
    with FakeLLM(answer=lambda p: '{"action": "human", "text": "y", "submit": false}') as server:
        reply = make("openai", server).answer(replace(REQ, accepts=("y", "n")))
    assert reply.text is None and reply.reason == "the answerer asks for a human"


def test_a_server_of_ones_own_needs_no_key_and_the_public_one_does(monkeypatch):
    from cursorpilot.errors import BadInput
    from cursorpilot.providers.openai import create

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeLLM(answer=lambda p: "y") as server:
        reply = create(ProviderConfig(base_url=server.url + "/v1", retries=0)).answer(REQ)
    assert reply.text == "y"
    with pytest.raises(BadInput, match="needs an API key: set OPENAI_API_KEY"):
        create(ProviderConfig(base_url="https://api.openai.com/v1"))
    with pytest.raises(BadInput, match="needs an API key"):
        create(ProviderConfig())
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert create(ProviderConfig()).base_url == "http://localhost:11434/v1"


def test_llama_cpp_pythons_real_500_for_json_schema_moves_the_run_to_json_object_with_the_schema_at_once():
    """llama-cpp-python 0.3.36 answers json_schema with HTTP 500 (its body replayed verbatim): the fallback fired only
    on 400/422, so every question was retried five times, then escalated. Now the first refusal moves the run to
    json_object with the schema beside it (the server's grammar keeps the model to it), and it stays there."""
    sleeps = []
    with FakeLLM(answer=lambda p: '{"action": "type", "text": "y", "submit": true}', refuse=llama_cpp_python) as server:
        provider = make("openai", server, retries=4, sleeps=sleeps)
        first = provider.answer(replace(REQ, accepts=("y", "n")))
        second = provider.answer(REQ)
    assert (first.text, second.text) == ("y", "y") and sleeps == []  # no retry of a refusal
    formats = [r["json"].get("response_format") for r in server.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[1]["schema"]["properties"]["text"]["enum"] == ["", "y", "n"]  # llama.cpp turns it into a grammar
    assert first.usage.calls == 2 and second.usage.calls == 1
    assert [a.wait_s for a in first.attempts] == [None] and "Input should be 'text' or 'json_object'" in first.attempts[0].error
    assert "json_object from now on" in first.attempts[0].error and second.attempts == ()


def test_a_server_that_refuses_json_object_too_gets_the_one_line_grammar_and_keeps_it():
    refused = Step(status=400, raw_body=b'{"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}')
    with FakeLLM(answer=lambda p: "n") as server:
        server.script = [refused, refused]
        provider = make("openai", server)
        replies = [provider.answer(REQ), provider.answer(REQ)]
    assert [r.text for r in replies] == ["n", "n"]
    assert [(r["json"].get("response_format") or {}).get("type") for r in server.requests] == ["json_schema", "json_object", None, None]


def test_mirror_a_500_that_names_no_structured_parameter_is_retried_as_before():
    sleeps = []
    with FakeLLM() as server:
        server.script = [Step(status=500), Step(text="y")]
        provider = make("openai", server, sleeps=sleeps)
        reply = provider.answer(REQ)
    assert reply.text == "y" and len(sleeps) == 1 and provider.form == "json_schema"
