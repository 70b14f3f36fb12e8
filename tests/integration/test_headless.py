"""The headless channel against the Cursor simulator's print mode (`-p --output-format stream-json`), a real process: the
real CLI drives it with rules and with a model provider (the real openai SDK against a fake server on 127.0.0.1)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import SIM
from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, is_turn_end, question_of, verdict

pytestmark = pytest.mark.timeout(90)

GOVERNING = "Work only inside the project. Approve commands the task needs; never delete anything."
RULES = "- {id: logs, match: 'mkdir -p logs', reply: 'Yes'}\n- {id: port, match: 'Which port', reply: '8080'}\n"


def cursor_print(scenario, *extra):
    return [*SIM, "cursor", scenario, *extra]


def with_build(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "data.bin").write_text("keep me")


def the_models_answer(prompt: str) -> str:
    if is_turn_end(prompt):
        return verdict("continue", "8080", "it asks for a port") if "Which port" in question_of(prompt) else verdict("done")
    return json.dumps({"action": "type", "text": "Allow", "submit": True})


@pytest.mark.parametrize("provider", ["rules", "model"])
def test_print_mode_rm_denied_through_interaction_query_mkdir_allowed_a_turn_end_continued_and_resumed_then_done(pilot, tmp_path,
                                                                                                                 provider):
    with_build(tmp_path)
    opts = ["--headless", "--task", "clean up, then make the log folder", "--prompt", GOVERNING, "--no-native-deny"]
    if provider == "rules":
        r = pilot(cursor_print("cursor-print"), *opts, "--provider", "rules", rules=RULES)
        llm = None
    else:
        with FakeLLM(answer=the_models_answer) as llm:
            r = pilot(cursor_print("cursor-print"), *opts, "--provider", "openai",
                      env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{llm.url}/v1"})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "build" / "data.bin").read_text() == "keep me" and (tmp_path / "logs").is_dir()  # the data is kept
    assert [(e["command"], "approved" in e, e["by"]) for e in r.sim_events("approval")] == [
        ("rm -rf build", False, "interaction_query"), ("mkdir -p logs", True, "interaction_query")]
    assert "deny policy refuses this (delete)" in r.sim_events("approval")[0]["rejected"]
    turns = r.sim_events("print_turn")
    assert [(t["turn"], t["prompt"]) for t in turns] == [(0, "clean up, then make the log folder"), (1, "8080")]
    session = r.of("headless_session")[0]["session_id"]
    assert turns[1]["resume"] == session and r.of("headless_session")[1]["session_id"] == session
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    who = "rules" if provider == "rules" else "openai"
    assert [(a["rule_id"], a["source"].split(":")[0], a["reply"]) for a in r.of("answer")] == [
        ("headless.permission", "policy", "Deny"), ("headless.permission", who, "Allow"), ("headless.turn_end", who, "8080")]
    assert [t["verdict"] for t in r.of("turn_end")] == ["continue", "done"]
    assert [p["turn"] for p in r.of("program_started")] == [1, 2] and not r.of("native_deny")
    if llm is not None:
        assert len(llm.requests) == 3  # the mkdir, two turn ends; the policy's no asked no model


def test_the_log_shows_each_of_the_agents_messages_on_its_own_line(tmp_path):
    """Headless output glued the agent's messages together: `│ Cleaning up first.Making the log folder.Done. Which…`."""
    with_build(tmp_path)
    (tmp_path / "rules.yaml").write_text(RULES)
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", "log", "--headless", "--task", "clean up, then make the log folder",
                        "--prompt", GOVERNING, "--no-native-deny", "--provider", "rules", "--rules", "rules.yaml", "--",
                        *cursor_print("cursor-print")], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = [line for line in p.stdout.splitlines() if line.startswith("│")]
    assert shown == ["│ Cleaning up first.", "│ ", "│ Making the log folder.", "│ ", "│ Done. Which port should the server use?", "│ ",
                     "│ Noted: the server will use that port."], p.stdout


def test_the_policy_in_the_agents_own_deny_list_refuses_rm_before_anyone_is_asked(pilot, tmp_path):
    """By default the policy also goes into Cursor's permissions (a private CURSOR_CONFIG_DIR): the agent refuses
    rm by itself; the pilot records it as the policy's denial, and the copy of the configuration is gone afterwards."""
    with_build(tmp_path)
    r = pilot(cursor_print("cursor-print"), "--headless", "--task", "clean up", "--prompt", GOVERNING, "--provider", "rules", rules=RULES)
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "build" / "data.bin").exists() and (tmp_path / "logs").is_dir()
    assert [(e["command"], e["by"]) for e in r.sim_events("approval")] == [("rm -rf build", "deny_list"), ("mkdir -p logs", "interaction_query")]
    (native,) = r.of("native_deny")
    assert native["agent"] == "cursor" and "Shell(rm)" in native["deny"] and native["file"] is None
    assert [(d["policy_rule"], d["rule_id"]) for d in r.of("policy_denied")] == [("delete", "headless.native_deny")]
    assert len(r.of("permission_request")) == 1  # only the mkdir was asked


def test_an_older_build_that_rejects_by_itself_is_reported_not_taken_for_success(pilot, tmp_path):
    r = pilot(cursor_print("cursor-print-old"), "--headless", "--task", "make the log folder", "--provider", "rules", rules=RULES)
    assert r.code == 3, r.stdout + r.stderr
    assert not (tmp_path / "logs").exists() and r.sim_events("approval")[0]["by"] == "no_force"
    assert "rejected 1 tool call(s) by itself" in r.stdout + r.stderr and "mkdir -p logs" in r.stdout + r.stderr
    assert [t["stop_reason"] for t in r.of("turn_end")] == ["rejected"] and not r.of("answer")
    assert r.of("escalation")[0]["rule_id"] == "headless.rejected"


@pytest.mark.parametrize("setup, extra, code, words", [
    ({"fail": "auth"}, [], 1, "authentication: Error: Authentication required"),
    ({}, ["--model", "gpt-9"], 2, "unknown model: Cannot use this model: gpt-9. Available models: auto, composer-1"),
    ({"trust_required": True}, [], 3, "workspace trust: Workspace Trust Required"),
    ({"fail": "connection"}, [], 1, "connection: Error: Connection failed"),
])
def test_the_agents_failures_are_classified_into_exit_codes(pilot, tmp_path, setup, extra, code, words):
    scenario = tmp_path / "faulty.yaml"
    scenario.write_text(json.dumps({"turns": [[{"say": "Hi."}]], **setup}))
    r = pilot(cursor_print(str(scenario), *extra), "--headless", "--task", "say hi", "--provider", "rules")
    assert r.code == code, r.stdout + r.stderr
    assert words in " ".join((r.stdout + r.stderr).split()) and r.of("run_finished")


def test_a_usage_limit_with_on_limit_stop_ends_with_exit_4_and_by_default_is_waited_for(pilot, tmp_path):
    scenario = tmp_path / "limited.yaml"
    scenario.write_text(json.dumps({"turns": [[{"say": "Hi."}]], "fail": "usage_limit"}))
    r = pilot(cursor_print(str(scenario)), "--headless", "--task", "say hi", "--provider", "rules", "--on-limit", "stop")
    assert r.code == 4 and "usage limit: it gives no reset time; --on-limit stop" in r.stdout + r.stderr
    waits = pilot(cursor_print(str(scenario)), "--headless", "--task", "say hi", "--provider", "rules", "--timeout", "5s")
    assert waits.code == 4 and waits.of("limit_hit")[0]["action"] == "wait" and "timeout" in waits.of("run_finished")[0]["reason"]


def test_torn_lines_and_unknown_events_are_recorded_and_skipped(pilot, tmp_path):
    scenario = tmp_path / "noisy.yaml"
    scenario.write_text(json.dumps({"noise": True, "turns": [[{"say": "Done."}]]}))
    r = pilot(cursor_print(str(scenario)), "--headless", "--task", "say done", "--provider", "rules")
    assert r.code == 0, r.stdout + r.stderr
    assert [n["line"] for n in r.of("headless_not_json")] == ['{"type": "assistant", "message": {"role": "assi', "[warn] telemetry disabled"]
    assert r.of("headless_event")[0]["event"]["type"] == "status"


def test_a_plan_step_of_kind_headless(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"name": "headless", "steps": [
        {"name": "agent", "headless": "make the log folder", "agent": [*SIM, "cursor", "cursor-print"], "answers": [
            {"id": "logs", "match": "mkdir -p logs", "reply": "Yes"}, {"id": "port", "match": "Which port", "reply": "8080"}]},
        {"name": "check", "run": ["test -d logs"]}]}))
    with_build(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(tmp_path / "planrun"), "--plan", str(plan),
                           "--provider", "rules", "--timeout", "40s"], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((tmp_path / "planrun" / "manifest.json").read_text())
    assert [s["kind"] for s in manifest["steps"]] == ["headless", "run"] and manifest["steps"][0]["session_id"]
    assert (tmp_path / "logs").is_dir() and (tmp_path / "build").is_dir()


@pytest.mark.parametrize("args, line", [
    (["--headless", "--", "claude"], "a headless run needs --task TEXT"),
    (["--headless", "--acp", "--task", "x", "--", "claude"], "--headless and --acp are two channels: pick one"),
    (["--headless", "--agent", "codex", "--task", "x"], "unknown agent 'codex'; known: claude, cursor"),
    (["--headless", "--task", "x", "--", "/nonexistent/claude"], "cannot start '/nonexistent/claude'"),
])
def test_bad_headless_usage_is_one_line_and_exit_2(tmp_path, args, line):
    proc = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--provider", "rules", "--log", str(tmp_path / "log"), *args],
                          cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and line in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
    assert not (tmp_path / "log").exists()  # nothing recorded for a run that never started
