"""The ACP channel against an ACP agent simulator built on the official SDK's agent side (`cursor-pilot sim acp`):
the same decision path as the PTY channel, answers chosen by option name and kind, every fault a clear exit code."""

import json
import signal
import subprocess
import sys

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import is_turn_end, verdict

pytestmark = pytest.mark.timeout(120)
KEY = "sk-test-0123456789abcdefghij"
GOVERNING = "Approve tests and writes inside the project; never delete anything."


def sim(scenario, tmp_path):
    return ["cursor-pilot", "sim", "acp", scenario, "--record", str(tmp_path / "agent.jsonl")]


def received(tmp_path, event=None):
    path = tmp_path / "agent.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in rows if event is None or r["event"] == event]


def acp(pilot, tmp_path, scenario, *opts, rules=None, task="Add a /health endpoint", env=None, timeout="40s"):
    return pilot(sim(scenario, tmp_path), "--acp", "--task", task, "--timeout", timeout, *opts, rules=rules, env=env)


def test_permissions_the_deny_policy_and_the_question_ending_the_turn(pilot, tmp_path):
    (tmp_path / "src" / "legacy").mkdir(parents=True)
    rules = "- {id: tests, match: 'npm test', reply: allow}\n- {id: writes, match: 'src/', reply: 'yes'}\n" \
            "- {id: db, match: 'database status', reply: 'Keep it minimal.'}\n"
    r = acp(pilot, tmp_path, "acp-demo", "--prompt", GOVERNING, rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [(p["title"], p["kind"]) for p in received(tmp_path, "permission")] == [
        ("npm test", "allow_once"), ("Write src/health.ts", "allow_once"), ("rm -rf src/legacy", "reject_once")]
    assert (tmp_path / "src" / "health.ts").read_text() == "export const ok = true;\n" and (tmp_path / "src" / "legacy").is_dir()
    assert [p["text"] for p in received(tmp_path, "prompt")] == ["Add a /health endpoint", "Keep it minimal."]
    answers = r.of("answer")
    assert [(a["source"], a.get("option_kind")) for a in answers] == [
        ("rules:tests", "allow_once"), ("rules:writes", "allow_once"), ("policy:delete", "reject_once"), ("rules:db", None)]
    assert r.of("policy_denied")[0]["policy_rule"] == "delete"
    assert r.of("fs_write")[0]["diff"].endswith("+export const ok = true;\n")
    assert r.of("terminal_exited")[0]["output"] == "tests pass\n"
    assert r.of("acp_session")[0]["session_id"] == json.loads((r.log / "manifest.json").read_text())["steps"][0]["session_id"]


def test_options_are_chosen_by_name_and_kind_never_by_position(pilot, tmp_path):
    """Gemini lists "Allow for this session" first: a bare yes is allow once. A call without rawInput may be allowed
    by the user's own rule, never by a model."""
    rules = "- {id: touch, match: 'touch g.txt', reply: 'yes'}\n- {id: fetch, match: 'Fetch', reply: 'Allow once'}\n"
    r = acp(pilot, tmp_path, "acp-gemini-options", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [(p["option"], p["kind"]) for p in received(tmp_path, "permission")] == [
        ("proceed_once", "allow_once"), ("proceed_once", "allow_once")]
    assert (tmp_path / "g.txt").exists()


def model_answers(prompt: str) -> str:
    """The pilot's model: approves what it is asked ("for the session", which the governing prompt does not grant),
    and at a turn end answers the agent's closing question, or judges the work done."""
    question = prompt.split("# The question", 1)[1].split("# Answer format", 1)[0]
    if is_turn_end(prompt):
        return verdict("continue", "8080", "the agent asks for a port") if "Which port" in question else verdict("done")
    text = "Allow for this session"
    return json.dumps({"action": "type", "text": text, "submit": True})


def test_a_model_approves_what_gemini_describes_without_raw_input(pilot, tmp_path):
    """Gemini CLI sends no rawInput: a shell command is the title (the working directory its content), a write or an
    edit a diff. The deny policy judges that description, and so may the model: it approves the command, the new file
    and the edit; rm -rf gets the policy's no without a model asked. Missing files are ACP's resource-not-found."""
    (tmp_path / "app.txt").write_text("one\n")
    (tmp_path / "build").mkdir()
    with FakeLLM(answer=model_answers) as server:
        r = acp(pilot, tmp_path, "acp-gemini-shapes", "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", GOVERNING,
                env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert [(p["title"], p["kind"]) for p in received(tmp_path, "permission")] == [
        ("npm test", "allow_once"), ("Writing to notes.txt", "allow_once"), ("app.txt: one => two", "allow_once"),
        ("rm -rf build", "reject_once")]  # "for the session" was not granted: once
    assert (tmp_path / "notes.txt").read_text() == "hello\n" and (tmp_path / "app.txt").read_text() == "two\n"
    assert (tmp_path / "build").is_dir() and received(tmp_path, "ran")[0]["output"] == "tests pass\n"
    assert [a["source"] for a in r.of("answer")] == ["openai:gpt-4o-mini"] * 3 + ["policy:delete", "openai:gpt-4o-mini"]
    assert [p["text"] for p in received(tmp_path, "prompt")] == ["Add a /health endpoint", "8080"]
    assert [(x["path"], x["code"]) for x in received(tmp_path, "read_refused")] == [("notes.txt", -32002), ("missing.txt", -32002)]
    assert len(server.requests) == 5  # the policy's no asked no model; each of the two turn ends one call
    assert [t["verdict"] for t in r.of("turn_end")] == ["continue", "done"]
    first = json.dumps(server.requests[0]["json"])
    assert "npm test" in first and "[current working directory .]" in first  # the model saw what the policy judged


def test_a_model_may_not_approve_a_call_that_says_nothing_of_what_it_runs(pilot, tmp_path):
    with FakeLLM(answer=model_answers) as server:
        r = acp(pilot, tmp_path, "acp-undescribed", "--provider", "openai", "--base-url", server.url + "/v1",
                "--prompt", "Run what the task needs.", env={"OPENAI_API_KEY": KEY})
    assert r.code == 3, r.stdout + r.stderr
    assert received(tmp_path, "permission")[0]["outcome"] == "cancelled" and not (tmp_path / "x.txt").exists()
    assert r.of("escalation")[0]["why"].startswith("the agent did not say what it will run or change")


def test_refusals_are_errors_the_agent_can_show(pilot, tmp_path):
    """Outside the working directory, a secret, an unknown terminal: JSON-RPC errors with the reason as the message
    (agents show the message), "Invalid params" for what the client refuses, "Resource not found" for what is not there."""
    (tmp_path / ".env").write_text("TOKEN=1\n")
    r = acp(pilot, tmp_path, "acp-refusals", "--provider", "rules")
    assert r.code == 0, r.stdout + r.stderr
    reads = {x["path"]: (x["code"], x["error"]) for x in received(tmp_path, "read_refused")}
    assert reads["/etc/hostname"] == (-32602, f"/etc/hostname is outside the working directory ({tmp_path})")
    assert reads[".env"] == (-32602, "reading .env is refused by the deny policy (secrets_read)")
    assert reads["../outside.txt"][0] == -32602
    [write] = received(tmp_path, "write_refused")
    assert (write["code"], write["error"]) == (-32602, f"../outside.txt is outside the working directory ({tmp_path})")
    assert not (tmp_path.parent / "outside.txt").exists()
    [run] = received(tmp_path, "run_refused")
    assert run["code"] == -32602 and "would run outside the working directory" in run["error"]
    [term] = received(tmp_path, "terminal_refused")
    assert term["code"] == -32002 and "no terminal no-such-terminal" in term["error"]
    assert [x["method"] for x in r.of("acp_refused")] == ["fs/read_text_file"] * 3 + ["fs/write_text_file", "terminal/create"]
    assert r.of("policy_denied")[0]["policy_rule"] == "secrets_read"


def test_standing_permission_in_the_governing_prompt_lets_always_through(pilot, tmp_path):
    rules = "- {id: touch, match: 'touch g.txt', reply: 'Allow for this session'}\n- {id: fetch, match: 'Fetch', reply: 'no'}\n"
    r = acp(pilot, tmp_path, "acp-gemini-options", "--prompt", "You have standing permission to run shell commands.", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [p["kind"] for p in received(tmp_path, "permission")] == ["allow_always", "reject_once"]


def test_elicitation_ask_question_and_create_plan(pilot, tmp_path):
    rules = """
- {id: port, match: 'Which port', reply: '8080'}
- {id: db, match: 'Which database', reply: PostgreSQL}
- {id: features, match: 'Which features', reply: 'Auth, Metrics'}
- {id: plan, match: 'Health endpoint plan', reply: Accept}
"""
    r = acp(pilot, tmp_path, "acp-questions", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert received(tmp_path, "elicitation")[0]["response"] == {"action": "accept", "content": {"port": 8080}}
    answers = received(tmp_path, "ask_question")[0]["response"]["outcome"]["answers"]
    assert answers == [{"questionId": "db", "selectedOptionIds": ["pg"]}, {"questionId": "feat", "selectedOptionIds": ["auth", "metrics"]}]
    assert received(tmp_path, "create_plan")[0]["response"] == {"outcome": {"outcome": "accepted"}}


def test_a_question_nobody_can_answer_escalates_and_cancels_the_turn(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-questions", rules="- {match: 'nothing like this', reply: x}\n")
    assert r.code == 3, r.stdout + r.stderr
    assert received(tmp_path, "elicitation")[0]["response"] == {"action": "cancel"}
    assert received(tmp_path, "cancel") and r.of("escalation")


def test_dry_run_records_what_it_would_answer_and_cancels(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-demo", "--dry-run", rules="- {match: 'npm test', reply: allow}\n")
    assert r.code == 0, r.stdout + r.stderr
    [would] = r.of("would_send")
    assert would["reply"] == "Allow" and received(tmp_path, "permission")[0]["outcome"] == "cancelled"
    assert not received(tmp_path, "ran")


def test_the_tool_loop_guard_stops_an_agent_repeating_a_call(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-loop", rules="- {match: 'npm test', reply: allow}\n")
    assert r.code == 3, r.stdout + r.stderr
    assert "loop" in r.of("escalation")[0]["why"]  # the loop breaker: the same call answered the same 3 times
    assert [p["outcome"] for p in received(tmp_path, "permission")] == ["selected"] * 3 + ["cancelled"]


def test_timeout_cancels_the_turn_then_ends_the_agent(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-slow", "--provider", "rules", timeout="10s")  # the SDK takes 1-2 s to import, twice
    assert r.code == 4, r.stdout + r.stderr
    assert received(tmp_path, "cancel") and r.of("acp_cancel")
    assert r.of("run_finished")[0]["exit_code"] == 4


def test_an_agent_that_crashes_after_garbage_on_stdout(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-faults", "--provider", "rules")
    assert r.code == 1, r.stdout + r.stderr
    assert "ended mid-turn" in r.of("run_finished")[0]["reason"]
    assert r.of("acp_not_json")[0]["line"] == "DEBUG: connecting to model server..."
    assert r.of("program_exited")[0]["code"] == 3 and r.records()[-1]["type"] == "run_finished"


def test_an_agent_that_never_answers_initialize(pilot, tmp_path):
    r = acp(pilot, tmp_path, "acp-stall", "--provider", "rules", timeout="4s")
    assert r.code == 4, r.stdout + r.stderr
    assert "never answered initialize" in r.of("run_finished")[0]["reason"]


def test_not_an_agent_at_all(pilot, tmp_path):
    r = pilot(["true"], "--acp", "--task", "x", "--provider", "rules")
    assert r.code == 1 and "ended before initialize" in r.stdout + r.stderr, r.stdout + r.stderr


def test_an_agent_that_dies_at_start_is_quoted_from_its_stderr(pilot, tmp_path):
    """`agent acp` without a login, say: exit 1 with the agent's own reason in the summary, not just "connection closed"."""
    r = pilot(["bash", "-c", 'echo "loading..." >&2; echo >&2; echo "Error: not signed in." >&2; echo "Run: agent login" >&2; exit 7'],
              "--acp", "--task", "x", "--provider", "rules")
    assert r.code == 1, r.stdout + r.stderr
    assert r.of("program_exited")[0]["last_words"] == "Error: not signed in. Run: agent login"
    assert r.of("run_finished")[0]["reason"].endswith("; its stderr ended: Error: not signed in. Run: agent login")


def test_resume_loads_the_session_where_the_agent_can(pilot, tmp_path):
    first = acp(pilot, tmp_path, "acp-demo", rules="- {match: 'npm test', reply: allow}\n")
    assert first.code == 3  # the write has no rule
    manifest = first.log / "manifest.json"
    session = json.loads(manifest.read_text())["steps"][0]["session_id"]
    (tmp_path / "rules1.yaml").write_text("- {match: 'npm test', reply: allow}\n- {match: 'src/', reply: allow}\n"
                                          "- {match: 'database', reply: 'Keep it minimal.'}\n")
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--resume", str(manifest), "--rules",
                        str(tmp_path / "rules1.yaml")], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert received(tmp_path, "load_session")[0]["session_id"] == session
    assert received(tmp_path, "prompt")[1]["text"].startswith("Continue the task")


def test_ctrl_c_ends_an_acp_run_it_was_ignored_until_the_timeout(tmp_path):
    """The ACP loop never looked at interrupts: Ctrl-C was counted and the run went on until --timeout."""
    from tests.integration.test_integrity_signals import wait_for

    log = tmp_path / "log"
    proc = subprocess.Popen([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(log), "--acp", "--task", "x",
                             "--provider", "rules", "--timeout", "100s", "--", *sim("acp-slow", tmp_path)],
                            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    transcript = log / "transcript.jsonl"
    try:
        wait_for(lambda: transcript.exists() and "Thinking hard" in transcript.read_text(), timeout=30, what="the agent's turn")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        proc.kill()  # the pilot, if it is still there; its agent runs in its own session and ends when its stdin closes
    assert received(tmp_path, "cancel")
    finished = json.loads(transcript.read_text().splitlines()[-1])
    assert finished["type"] == "run_finished" and finished["reason"] == "interrupted"
