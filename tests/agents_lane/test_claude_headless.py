"""The real Claude Code (2.1.330) in print mode, offline, driven by the headless channel (`--headless`): its
permissions through `--permission-prompt-tool stdio`, its turn ends judged, `continue` resumed with `--resume`, with the
user's rules and with a model provider (the real openai SDK against a fake server on 127.0.0.1). And its own deny list,
written by cursor-pilot (channels/agent/nativedeny.py), refusing `rm -rf` by itself: with the pilot in the loop, and with the pilot
out of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab  # noqa: E402

from cursorpilot.channels.agent.nativedeny import deny_list  # noqa: E402
from tests.fakes.llm_server import FakeLLM  # noqa: E402
from tests.helpers import is_turn_end, question_of, verdict  # noqa: E402

GOVERNING = "Work only inside the project. Approve commands the task needs; never delete anything."
RULES = "- {id: logs, match: 'mkdir -p logs', reply: 'Yes'}\n- {id: port, match: 'Which port', reply: '8080'}\n"
SCRIPT = [{"text": "Cleaning up first.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"}}},
          {"text": "Making the log folder.", "tool_use": {"name": "Bash", "input": {"command": "mkdir -p logs", "description": "Make logs"}}},
          {"text": "Done. Which port should the server use?"},
          {"text": "Using {{last_user}}."}]


def the_models_answer(prompt: str) -> str:
    if is_turn_end(prompt):
        return verdict("continue", "8080", "it asks for a port") if "Which port" in question_of(prompt) else verdict("done")
    return json.dumps({"action": "type", "text": "Allow", "submit": True})


def with_build(work: Path) -> None:
    (work / "build").mkdir()
    (work / "build" / "data.bin").write_text("keep me")


def main_requests(r) -> list[dict]:
    return [q for q in r.requests if q.get("kind") == "main"]


@pytest.mark.parametrize("provider", ["rules", "model"])
def test_claude_print_mode_rm_denied_through_the_permission_tool_mkdir_allowed_continued_resumed_then_done(agent, provider):
    opts = ("--headless", "--task", "clean up, then make the log folder", "--prompt", GOVERNING, "--no-native-deny")
    if provider == "rules":
        r, llm = agent("claude", SCRIPT, *opts, rules=RULES, prepare=with_build), None
    else:
        with FakeLLM(answer=the_models_answer) as llm:
            r = agent("claude", SCRIPT, *opts, llm=llm, prepare=with_build)
    assert r.code == 0, r.explain()
    assert (r.work / "build" / "data.bin").read_text() == "keep me" and (r.work / "logs").is_dir() and r.health["done"]
    who = "rules" if provider == "rules" else "openai"
    assert [(a["rule_id"], a["source"].split(":")[0], a["reply"]) for a in r.of("answer")] == [
        ("headless.permission", "policy", "Deny"), ("headless.permission", who, "Allow"), ("headless.turn_end", who, "8080")]
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    assert [t["verdict"] for t in r.of("turn_end")] == ["continue", "done"]
    # the denial's words reached Claude's model as the tool's result; the next turn resumed the same session
    bodies = json.dumps([q["body"] for q in main_requests(r)])
    assert "deny policy refuses this (delete)" in bodies and "Using 8080." in json.dumps([q.get("reply") for q in r.requests])
    started = r.of("program_started")
    assert len(started) == 2 and "--resume" not in started[0]["command"]
    assert started[1]["command"][started[1]["command"].index("--resume") + 1] == r.of("headless_session")[0]["session_id"]
    assert {s["session_id"] for s in r.of("headless_session")} == {r.of("headless_session")[0]["session_id"]}
    assert "--settings" not in started[0]["command"] and not r.of("native_deny")
    if llm is not None:
        assert len(llm.requests) == 3  # the mkdir and two turn ends; the policy's no asked no model


def test_claude_refuses_rm_by_its_own_deny_list_the_pilot_wrote(agent):
    """By default the policy also goes into Claude Code's own `permissions.deny` (a settings file of the run's, given
    with --settings), and cursor-pilot's hook beside it (channels/agent/runhook.py), which Claude runs first: rm -rf is
    refused inside Claude without asking anyone, in the user's words (a hook_decided record); mkdir is asked and allowed
    as before."""
    r = agent("claude", SCRIPT, "--headless", "--task", "clean up, then make the log folder", "--prompt", GOVERNING, rules=RULES,
              prepare=with_build)
    assert r.code == 0, r.explain()
    assert (r.work / "build" / "data.bin").exists() and (r.work / "logs").is_dir()
    (native,) = r.of("native_deny")
    settings = Path(native["file"])
    assert settings.parent == r.log and json.loads(settings.read_text())["permissions"]["deny"] == deny_list("claude")
    assert r.of("program_started")[0]["command"][-2:] == ["--settings", str(settings)]
    assert [p["tool_call"]["input"]["command"] for p in r.of("permission_request")] == ["mkdir -p logs"]  # rm was never asked
    assert [(d["tool"], d["decision"], d["quote"]) for d in r.of("hook_decided")] == [("Bash", "deny", "never delete anything")]
    assert native["hook"] == str(settings) and "PreToolUse" in json.loads(settings.read_text())["hooks"]
    assert "cursor-pilot refused" in json.dumps([q["body"] for q in main_requests(r)])


def test_with_the_pilot_out_of_the_loop_claude_itself_refuses_rm(tmp_path):
    """The native list alone: Claude Code run by hand with the settings file cursor-pilot writes, every Bash command
    allowed (`--allowedTools Bash`, so nothing asks anyone): rm -rf is refused by Claude itself; the mirror, touch, runs."""
    reason = agentlab.missing_reason("claude")
    if reason:
        pytest.skip(reason)
    lab = agentlab.Lab("claude", tmp_path / "claude")
    with_build(lab.work)
    backend = lab.backend([{"text": "Cleaning.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "rm"}}},
                           {"text": "Touching.", "tool_use": {"name": "Bash", "input": {"command": "touch kept.txt", "description": "t"}}},
                           {"text": "Done."}])
    try:
        settings = tmp_path / "deny.json"
        settings.write_text(json.dumps({"permissions": {"deny": deny_list("claude")}}))
        proc = subprocess.run(lab.command("-p", "--output-format", "stream-json", "--verbose", "--settings", str(settings),
                                          "--allowedTools", "Bash", "--", "clean up"),
                              cwd=lab.work, env=lab.env(backend), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        backend.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [c for line in proc.stdout.splitlines() if (e := json.loads(line)).get("type") == "user"
               for c in e["message"]["content"] if isinstance(c, dict) and c.get("type") == "tool_result"]
    assert [r["is_error"] for r in results] == [True, False]
    assert "Permission to use Bash with command rm -rf build has been denied" in str(results[0]["content"])
    assert (lab.work / "build" / "data.bin").exists() and (lab.work / "kept.txt").exists()
