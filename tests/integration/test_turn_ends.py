"""An agent's turn end, judged, through the real CLI: the Cursor simulator on a real PTY and the ACP simulator on the
official SDK, the pilot's model the real openai SDK against a fake server on 127.0.0.1, goal checks real shell commands."""

import json
import subprocess
import sys

import pytest

from tests.conftest import SIM
from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, is_turn_end, question_of, verdict

pytestmark = pytest.mark.timeout(150)
AFTER_DENIAL = "If the agent stops and waits after a denial, tell it to leave the data alone and finish."
INSTRUCTION = "Leave the data alone and finish."


def judge(prompt: str) -> str:
    """The pilot's model: at a turn end, the governing prompt's instruction after a denial, done once the agent took it."""
    if not is_turn_end(prompt):
        return json.dumps({"action": "human", "text": "not expected here", "submit": False})  # (none is asked)
    q = question_of(prompt)
    if "Noted." in q or "untouched" in q:
        return verdict("done", why="the agent finished as told")
    if "deny policy refused" in prompt and "leave the data alone" in prompt:
        return verdict("continue", INSTRUCTION, "the governing prompt says what to do after a denial")
    if "Goal check" in prompt:
        return verdict("continue", "Add the missing test.", "the goal check fails")
    return verdict("blocked", why="no idea")


def cursor(pilot, scenario, *opts, rules=None, llm=None, timeout="60s"):
    llm_opts = ("--provider", "openai", "--base-url", llm.url + "/v1") if llm else ("--provider", "rules")
    env = {"OPENAI_API_KEY": KEY} if llm else None
    return pilot([*SIM, "cursor", scenario], "--profile", "cursor", "--timeout", timeout, *llm_opts, *opts, rules=rules, env=env)


def test_a_denial_then_a_wait_gets_the_governing_prompts_instruction_and_the_agent_finishes(pilot):
    with FakeLLM(answer=judge) as llm:
        r = cursor(pilot, "denial-wait", "--prompt", AFTER_DENIAL, llm=llm)
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.stdout + r.stderr
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [("delete", "rejected")]
    assert [e["text"] for e in r.sim_events("followup")] == [INSTRUCTION]
    turns = r.of("turn_end")
    assert [(t["turn"], t["verdict"], t["sent"]) for t in turns] == [(1, "continue", INSTRUCTION), (2, "done", None)]
    assert len(asked) == 2 and "Request cancelled" in asked[0] and "the deny policy refused" in asked[0]
    assert "judge_turn" in asked[0]  # the structured verdict was asked for
    assert r.of("run_finished")[0]["counters"]["turns"] == 2 and "turns: 2" in r.stdout


def test_with_rules_only_a_turn_end_rule_says_what_to_tell_the_agent(pilot):
    rules = f"- {{id: after_denial, kind: turn_end, match: 'Request cancelled', reply: '{INSTRUCTION}'}}\n"
    r = cursor(pilot, "denial-wait", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [e["text"] for e in r.sim_events("followup")] == [INSTRUCTION]
    assert [(t["verdict"], t["source"]) for t in r.of("turn_end")] == [("continue", "rules:after_denial"), ("done", "rules")]


def test_a_done_when_check_that_fails_after_the_first_turn_gets_a_second_instruction_then_passes(pilot, tmp_path):
    check = "grep -q followup received1.jsonl || { echo 'FAILED test_health: no test for /health'; exit 1; }"
    with FakeLLM(answer=judge) as llm:
        r = cursor(pilot, "approvals", "--done-when", check, llm=llm, rules="- {match: 'Workspace Trust', reply: a}\n"
                   "- {match: 'Run this command|Write to this file', reply: y}\n")
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.stdout + r.stderr
    turns = r.of("turn_end")
    assert [(t["verdict"], t["check"]["exit_code"], t["sent"]) for t in turns] == [("continue", 1, "Add the missing test."),
                                                                                 ("done", 0, None)]
    assert turns[1]["source"] == "check" and len(asked) == 1  # met: done without asking the model
    assert "no test for /health" in asked[0] and "exited 1: not met" in asked[0]  # the judge saw the check's output
    fin = r.of("run_finished")[0]
    assert fin["goal_check"] == "passed" and "goal check: passed" in r.stdout


def test_a_check_that_can_never_pass_stops_at_max_turns_and_resume_goes_on_from_the_ledger(pilot, tmp_path):
    counter = "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo \"run $n\"; test $n -ge 3"
    with FakeLLM(answer=judge) as llm:
        r = cursor(pilot, "denial-wait", "--done-when", counter, "--max-turns", "2", llm=llm)
    assert r.code == 4, r.stdout + r.stderr
    assert "max-turns reached (2 turns); the goal check" in r.stdout and "exited 1: not met" in r.stdout
    manifest = json.loads((r.log / "manifest.json").read_text())
    assert [t["turn"] for t in manifest["steps"][0]["turns"]] == [1, 2] and manifest["status"] == "aborted"
    with FakeLLM(answer=judge) as llm:
        again = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--resume", str(r.log / "manifest.json"),
                                "--max-turns", "4"], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                               env={**__import__("os").environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": llm.url + "/v1"})
    assert again.returncode == 0, again.stdout + again.stderr
    turns = [json.loads(line) for line in (r.log / "transcript.jsonl").read_text().splitlines()]
    assert [t["turn"] for t in turns if t["type"] == "turn_end"] == [1, 2, 3]  # counted on, not started over
    assert [t["type"] for t in turns].count("program_started") == 2  # the agent was started again


def test_a_garbage_judge_fails_closed_never_done(pilot):
    with FakeLLM(answer=lambda prompt: "Sure, looks fine to me!") as llm:
        r = cursor(pilot, "denial-wait", "--prompt", AFTER_DENIAL, llm=llm)
    assert r.code == 3, r.stdout + r.stderr
    assert "not a verdict" in r.of("escalation")[0]["why"] and r.of("turn_end")[0]["verdict"] == "blocked"


def test_rules_only_a_failing_check_and_no_rule_needs_a_human(pilot):
    r = cursor(pilot, "denial-wait", "--done-when", "test -f finished.txt")
    assert r.code == 3, r.stdout + r.stderr
    assert "no rule of kind turn_end says what to tell the agent" in r.of("escalation")[0]["why"]


def test_a_program_that_exits_is_checked_once_more_and_its_check_decides(pilot):
    r = pilot(["bash", "-c", "echo working; sleep 0.3; echo done"], "--provider", "rules", "--done-when", "test -f out.txt",
              "--answer", "x=y")
    assert r.code == 1 and "the goal check `test -f out.txt` exited 1: not met after the program ended" in r.stdout, r.stdout
    assert r.of("goal_check")[0]["met"] is False
    r = pilot(["bash", "-c", "echo working; sleep 0.3; touch out.txt; echo done"], "--provider", "rules", "--done-when",
              "test -f out.txt", "--answer", "x=y")
    assert r.code == 0, r.stdout + r.stderr


def test_max_cost_needs_the_models_price(pilot):
    r = pilot(["true"], "--provider", "openai", "--model", "my-local-model", "--max-cost", "0.5", env={"OPENAI_API_KEY": KEY})
    assert r.code == 2 and "--max-cost needs the price of 'my-local-model'" in r.stderr


def acp(pilot, tmp_path, scenario, *opts, llm=None, rules=None):
    llm_opts = ("--provider", "openai", "--base-url", llm.url + "/v1") if llm else ("--provider", "rules")
    return pilot(["cursor-pilot", "sim", "acp", scenario, "--record", str(tmp_path / "agent.jsonl")], "--acp", "--task", "Clean up",
                 "--timeout", "40s", *llm_opts, *opts, rules=rules, env={"OPENAI_API_KEY": KEY} if llm else None)


def prompts(tmp_path):
    return [json.loads(line)["text"] for line in (tmp_path / "agent.jsonl").read_text().splitlines() if '"prompt"' in line]


def test_acp_end_turn_is_judged_and_the_instruction_is_the_next_prompt(pilot, tmp_path):
    (tmp_path / "data").mkdir()
    with FakeLLM(answer=judge) as llm:
        r = acp(pilot, tmp_path, "acp-turns", "--prompt", AFTER_DENIAL, llm=llm)
    assert r.code == 0, r.stdout + r.stderr
    assert prompts(tmp_path) == ["Clean up", INSTRUCTION] and (tmp_path / "data").is_dir()
    assert [(t["stop_reason"], t["verdict"], t["sent"]) for t in r.of("turn_end")] == [
        ("end_turn", "continue", INSTRUCTION), ("end_turn", "done", None)]


def test_acp_done_when_decides_and_its_output_reaches_the_judge(pilot, tmp_path):
    check = f"test $(grep -c '\"prompt\"' {tmp_path / 'agent.jsonl'}) -ge 2 || {{ echo 'data/ cleanup unconfirmed'; exit 1; }}"
    with FakeLLM(answer=judge) as llm:
        r = acp(pilot, tmp_path, "acp-turns", "--done-when", check, llm=llm)
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.stdout + r.stderr
    assert [(t["verdict"], t["check"]["exit_code"]) for t in r.of("turn_end")] == [("continue", 1), ("done", 0)]
    assert len(asked) == 1 and "data/ cleanup unconfirmed" in asked[0]


TOY = [sys.executable, str(__import__("pathlib").Path(__file__).parents[1] / "programs" / "toy_agent.py")]


@pytest.mark.parametrize("echo", [True, False], ids=["echoes", "no-echo"])
def test_a_toy_agents_turn_ends_are_judged_by_its_latest_message(pilot, echo):
    """Issue 32: with a toy agent on a screen, every turn end judged the agent's first message, not its latest (it did
    not show the instruction it was given, so its message was read from the top of the screen)."""
    asked = []

    def toy_judge(prompt: str) -> str:
        asked.append(question_of(prompt))
        return verdict("continue", f"Do step {len(asked) + 1}.", "more to do") if len(asked) < 3 else verdict("done", why="all pass")

    with FakeLLM(answer=toy_judge) as llm:
        r = pilot([*TOY, *([] if echo else ["--no-echo"]), "fix the tests"], "--profile", "claude", "--provider", "openai",
                  "--base-url", llm.url + "/v1", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert [(t["turn"], t["verdict"]) for t in r.of("turn_end")] == [(1, "continue"), (2, "continue"), (3, "done")]
    assert "First message" in asked[0]
    assert "Second message" in asked[1] and "First message" not in asked[1]
    assert "Third message" in asked[2] and "First message" not in asked[2] and "Second message" not in asked[2]


def test_no_progress_at_the_last_allowed_turn_is_the_limit_exit_4_naming_both(pilot):
    """With --max-turns 3, the no-progress breaker fired first at turn 3: exit 3, not the 4 --max-turns promises."""
    with FakeLLM(answer=lambda p: verdict("continue", "Try again.", "not yet")) as llm:
        r = pilot([*TOY, "fix the tests"], "--profile", "claude", "--provider", "openai", "--base-url", llm.url + "/v1",
                  "--max-turns", "3", "--done-when", "echo 'FAILED test_x'; exit 1", env={"OPENAI_API_KEY": KEY})
    assert r.code == 4, r.stdout + r.stderr
    reason = r.of("run_finished")[0]["reason"]
    assert "max-turns reached (3 turns)" in reason and "no progress: the goal check failed the same way 3 times in a row" in reason
