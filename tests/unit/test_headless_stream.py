"""Each agent's print mode, read and answered: stream lines (as Claude Code 2.1.330 and the documented Cursor CLI write
them) into facts, answers into the lines they read, failures into exit codes; the native deny lists."""

import json

import pytest

from cursorpilot.errors import ExitCode
from cursorpilot.channels.headless.facts import ControlAsked, NotJson, Other, PermissionAsked, Result, Said, SessionInit, ToolDone, ToolUse
from cursorpilot.channels.headless.stream import classify, dialect_of, read, reply_line, turn_argv
from cursorpilot.channels.agent.nativedeny import CLAUDE, CURSOR, GEMINI, NOT_MAPPED, deny_list, gemini_policy
from cursorpilot.decide.policy import RULES

CAN_USE = {"type": "control_request", "request_id": "1f1e", "request": {
    "subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"},
    "permission_suggestions": [], "blocked_path": "/w/build", "tool_use_id": "toolu_1"}}
QUERY = {"type": "interaction_query", "subtype": "request", "query_type": "shellRequestQuery",
         "query": {"id": 3, "shellRequestQuery": {"args": {"command": "mkdir logs"}, "skipApproval": False}}, "session_id": "c1"}


def test_which_print_mode_a_command_speaks():
    assert dialect_of(["/x/node_modules/.bin/claude"]) == "claude" and dialect_of(["npx", "-y", "@anthropic-ai/claude-code"]) == "claude"
    assert dialect_of(["agent"]) == "cursor" and dialect_of(["python3", "-m", "cursorpilot.sim", "cursor", "demo"]) == "cursor"


def test_one_turn_s_command_line():
    argv, first = turn_argv("claude", ["claude", "--model", "opus"], "fix it", "s1", "/w", "/log/deny.json")
    assert argv[:3] == ["claude", "--model", "opus"] and "--permission-prompt-tool" in argv and argv[argv.index("--permission-prompt-tool") + 1] == "stdio"
    assert argv[-4:] == ["--settings", "/log/deny.json", "--resume", "s1"]
    assert json.loads(first) == {"type": "user", "message": {"role": "user", "content": "fix it"}}
    argv, first = turn_argv("cursor", ["agent"], "-rf everything", None, "/w")
    assert argv == ["agent", "-p", "--output-format", "stream-json", "--workspace", "/w", "--", "-rf everything"] and first is None


def test_claudes_stream_into_facts():
    facts, _ = read("claude", json.dumps({"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-opus-5-5", "cwd": "/w"}))
    assert facts == [SessionInit("s1", "claude-opus-5-5", "/w")]
    facts, _ = read("claude", json.dumps({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Cleaning."}, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "rm -rf build"}}]}}))
    assert facts == [Said("Cleaning."), ToolUse("toolu_1", "Bash", {"command": "rm -rf build"})]
    facts, event = read("claude", json.dumps(CAN_USE))
    assert facts == [PermissionAsked("1f1e", "Bash", CAN_USE["request"]["input"], "toolu_1")] and event == CAN_USE
    rejected = {"type": "user", "message": {"content": [{"type": "tool_result", "content": "refused", "is_error": True, "tool_use_id": "toolu_1"}]},
                "tool_result_meta": [{"id": "toolu_1", "permission_decision": {"decision": "reject", "source": "user_reject"}}]}
    assert read("claude", json.dumps(rejected))[0] == [ToolDone("toolu_1", False, "refused", "refused")]
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "Done.", "session_id": "s1", "total_cost_usd": 0.0024}
    assert read("claude", json.dumps(result))[0] == [Result("s1", "Done.", False, "success", None, 0.0024)]
    assert read("claude", json.dumps({"type": "control_request", "request_id": "k", "request": {"subtype": "mcp_message"}}))[0] == [
        ControlAsked("k", "mcp_message")]


def test_cursors_documented_stream_into_facts():
    assert read("cursor", json.dumps(QUERY))[0] == [PermissionAsked("shellRequestQuery:3", "Shell", {"command": "mkdir logs"})]
    started = {"type": "tool_call", "subtype": "started", "call_id": "c\n1", "tool_call": {"shellToolCall": {"args": {"command": "ls"}}}}
    assert read("cursor", json.dumps(started))[0] == [ToolUse("c\n1", "Shell", {"command": "ls"})]
    done = {"type": "tool_call", "subtype": "completed", "call_id": "c\n1",
            "tool_call": {"shellToolCall": {"args": {}, "result": {"rejected": {"reason": "User Rejected"}}}}}
    assert read("cursor", json.dumps(done))[0][0].rejected == "User Rejected"
    assert read("cursor", json.dumps({"type": "thinking", "subtype": "delta", "text": "hm"}))[0] == []


def test_torn_lines_and_surprises_are_kept_never_fatal():
    assert read("claude", '{"type": "assistant", "mess') == ([NotJson('{"type": "assistant", "mess')], None)
    assert read("cursor", "[1, 2]")[0] == [NotJson("[1, 2]")]
    odd = {"type": "tool_call", "subtype": "started", "tool_call": {"a": {}, "b": {}}}  # two kinds in one call: unforeseen
    assert read("cursor", json.dumps(odd))[0] == [Other(odd)]
    assert read("claude", json.dumps({"type": "stream_event", "event": {}}))[0] == [Other({"type": "stream_event", "event": {}})]


def test_answers_as_the_lines_each_agent_reads():
    allow = json.loads(reply_line("claude", CAN_USE, True, ""))
    assert allow == {"type": "control_response", "response": {"subtype": "success", "request_id": "1f1e", "response": {
        "behavior": "allow", "updatedInput": {"command": "rm -rf build", "description": "Remove build"}}}}
    deny = json.loads(reply_line("claude", CAN_USE, False, "no"))["response"]["response"]
    assert deny == {"behavior": "deny", "message": "no"}
    assert json.loads(reply_line("cursor", QUERY, True, "")) == {"type": "interaction_query", "subtype": "response",
                                                                 "query_type": "shellRequestQuery",
                                                                 "response": {"id": 3, "shellRequestResponse": {"approved": {}}}}
    assert json.loads(reply_line("cursor", QUERY, False, "why"))["response"]["shellRequestResponse"] == {"rejected": {"reason": "why"}}


@pytest.mark.parametrize("text, kind, code", [
    ("Error: Authentication required. Please run 'cursor-agent login' first", "authentication", ExitCode.FAILED),
    ("Invalid API key · Please run /login", "authentication", ExitCode.FAILED),
    ("Error: You've hit your usage limit", "usage_limit", ExitCode.FAILED),
    ("API Error: 429 rate_limit_error", "usage_limit", ExitCode.FAILED),
    ("Cannot use this model: gpt-9. Available models: auto, composer-1", "unknown_model", ExitCode.USAGE),
    ("There's an issue with the selected model (claude-x). It may not exist or you may not have access to it.", "unknown_model", ExitCode.USAGE),
    ("Workspace Trust Required\nPass --trust, --yolo, or -f", "workspace_trust", ExitCode.HUMAN_NEEDED),
    ("Error: Connection failed", "connection", ExitCode.FAILED),
    ("API Error: Unable to connect to API (ECONNREFUSED)", "connection", ExitCode.FAILED),
])
def test_failures_are_classified_into_the_exit_codes(text, kind, code):
    failure = classify(text)
    assert failure is not None and (failure.kind, failure.code) == (kind, code)


def test_the_mirror_of_classification_ordinary_words_are_no_failure():
    assert classify("Done: the model of the data is in models.py; I connected the tests.") is None


def test_native_deny_lists_cover_the_policy_and_say_what_they_cannot():
    claude = deny_list("claude")
    assert "Bash(rm:*)" in claude and len(claude) == len(set(claude))
    every = {"rm_outside", *RULES}
    assert set(GEMINI) == every  # Gemini's Policy Engine takes regexes: every class maps
    for agent, table in (("claude", CLAUDE), ("cursor", CURSOR)):  # the others: every class mapped, or said why not
        unmapped = every - set(table)
        assert all(any(rule in key and (agent in key or "(" not in key) for key in NOT_MAPPED) for rule in unmapped), (agent, unmapped)
    # a plan's allow: lifts a class here as in the policy (rm outside the project stays the pilot's to judge)
    assert "Bash(rmdir:*)" not in deny_list("claude", frozenset({"delete"})) and "Bash(rm:*)" not in deny_list("claude", frozenset({"delete"}))
    assert "Bash(rm:*)" in deny_list("claude", frozenset({"rm_outside"}))
    assert deny_list("gemini")[0] == "prefix:rm" and "Shell(rm)" in deny_list("cursor")


def test_geminis_policy_file_is_valid_toml_one_deny_rule_per_entry_and_lifted_classes_left_out():
    """Gemini drops a policy file that does not validate, whole: every rule must hold the fields its schema requires."""
    import tomllib

    rules = tomllib.loads(gemini_policy())["rule"]
    assert len(rules) == len(deny_list("gemini"))
    assert all(r["decision"] == "deny" and r["priority"] == 999 and r["toolName"] in ("run_shell_command", "read_file") for r in rules)
    assert all(sum(k in r for k in ("commandPrefix", "commandRegex", "argsPattern")) == 1 for r in rules)
    assert {"commandPrefix": "rm"}.items() <= rules[0].items() and "(delete)" in rules[0]["denyMessage"]
    assert r"[.]env\b" in gemini_policy()  # a literal string: the regex's backslash reaches Gemini as one
    lifted = tomllib.loads(gemini_policy(frozenset({"delete", "rm_outside"})))["rule"]
    assert not any(r.get("commandPrefix") in ("rm", "rmdir") for r in lifted) and len(lifted) == len(rules) - 5
