"""An agent's turn end, judged, on the real Claude Code, Codex and Gemini CLI (offline against their fake backends), with
the pilot's model the real openai SDK against a fake OpenAI-compatible server on 127.0.0.1 answering the turn-end
question: after a denial the agent stops and waits, and the governing prompt's instruction reaches it; a goal check that
fails after the first turn gets a second instruction; a check that can never pass stops at --max-turns. The screen's
own prompts are what these judge: --no-native-deny leaves cursor-pilot's hook out (it would refuse the rm inside the
agent, and compile the policy before any yes needs it: test_claude.py has the run with the hook)."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import is_turn_end, verdict

AGENTS = ["claude", "codex", "gemini"]
GOVERNING = ("Work only inside the project; never delete anything. If the agent stops and waits after a denial, tell it to "
             "leave the data alone and finish.")
INSTRUCTION = "Leave the data alone and finish."
FIX = "Write final to out.txt."


def shell(agent: str, command: str, why: str) -> dict:
    """A tool call that runs a shell command, in each agent's own words (tests/fakes/agents/README.md)."""
    if agent == "claude":
        return {"name": "Bash", "input": {"command": command, "description": why}}
    if agent == "codex":
        return {"name": "auto_shell", "input": {"cmd": command, "escalate": True, "justification": why}}
    return {"name": "run_shell_command", "input": {"command": command, "description": why}}


def args(agent: str, task: str) -> tuple[str, ...]:
    return ("-i", task) if agent == "gemini" else (task,)


def judge(prompt: str) -> str:
    """The pilot's model at a turn end: the governing prompt's instruction after a denial; the next step while the goal
    check fails; else done. Anything else it is asked (there should be nothing) it sends to a human."""
    if not is_turn_end(prompt):
        return json.dumps({"action": "human", "text": "only turn ends are expected here", "submit": False})
    if "the deny policy refused" in prompt:
        return verdict("continue", INSTRUCTION, "the governing prompt says what to do when the agent waits after a denial")
    if "# Goal check" in prompt:
        return verdict("continue", FIX if "out.txt" in prompt else "Keep going.", "the goal check fails")
    return verdict("done", why="the agent did what it was told")


def said_to_agent(r) -> str:
    """Everything the agent sent its (fake) model: the pilot's instructions reach it as user messages."""
    return json.dumps([q.get("body") for q in r.requests if q.get("kind", "main") == "main"])


def turn_ends(r) -> list[tuple]:
    return [(t["turn"], t["verdict"], t["source"].split(":")[0] if t["source"] else None, t["sent"]) for t in r.of("turn_end")]


@pytest.mark.parametrize("name", AGENTS)
def test_after_a_denial_the_agent_waits_and_gets_the_governing_prompts_instruction_then_finishes(agent, name):
    script = [{"text": "The data folder looks unused: removing it.", "tool_use": shell(name, "rm -rf data", "Remove the data folder")},
              {"text": "Understood: I left data/ alone. Finished."}]
    with FakeLLM(answer=judge) as llm:
        r = agent(name, script, "--prompt", GOVERNING, "--no-native-deny", args=args(name, "tidy up the project"), llm=llm,
                  prepare=lambda work: (work / "data").mkdir() or (work / "data" / "keep.db").write_text("x"))
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.explain()
    assert (r.work / "data" / "keep.db").exists() and r.health["done"]
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    assert turn_ends(r) == [(1, "continue", "openai", INSTRUCTION), (2, "done", "openai", None)], r.explain()
    assert INSTRUCTION in said_to_agent(r)
    assert len(asked) == 2 and "the deny policy refused" in asked[0]  # one model call per turn end, the denial in front of it
    print(f"{name}: the agent stopped showing {r.of('answer')[-1]['prompt']!r}; sent {INSTRUCTION!r}; then done")


@pytest.mark.parametrize("name", AGENTS)
def test_a_done_when_check_that_fails_after_the_first_turn_gets_a_second_instruction_and_passes(agent, name):
    script = [{"text": "Writing a draft.", "tool_use": shell(name, "echo draft > out.txt", "Write the draft")},
              {"text": "Wrote the draft to out.txt."},
              {"text": "Writing the final version.", "tool_use": shell(name, "echo final > out.txt", "Write the final version")},
              {"text": "out.txt now says final."}]
    rules = "- {id: writes, match: 'echo (draft|final) > out.txt', reply: 'Yes'}\n"
    with FakeLLM(answer=judge) as llm:
        r = agent(name, script, "--prompt", GOVERNING, "--no-native-deny", "--done-when", "grep -q final out.txt", args=args(name, "write out.txt"),
                  rules=rules, llm=llm)
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.explain()
    assert (r.work / "out.txt").read_text() == "final\n" and r.health["done"]
    assert turn_ends(r) == [(1, "continue", "openai", FIX), (2, "done", "check", None)], r.explain()
    assert [t["check"]["exit_code"] for t in r.of("turn_end")] == [1, 0]
    assert len(asked) == 1 and "grep -q final out.txt` exited 1: not met" in asked[0]  # met: no model asked
    assert FIX in said_to_agent(r) and r.of("run_finished")[0]["goal_check"] == "passed"


@pytest.mark.parametrize("name", AGENTS)
def test_a_check_that_can_never_pass_stops_at_max_turns_with_exit_4(agent, name):
    script = [{"text": "Working on it."}, {"text": "Still working on it."}, {"text": "Nearly there."}]
    with FakeLLM(answer=judge) as llm:
        r = agent(name, script, "--prompt", GOVERNING, "--no-native-deny", "--done-when", "test -f never.txt", "--max-turns", "2",
                  args=args(name, "make never.txt appear"), llm=llm)
        calls = len(llm.requests)
    assert r.code == 4, r.explain()
    assert "max-turns reached (2 turns); the goal check `test -f never.txt` exited 1: not met" in r.stdout
    assert turn_ends(r) == [(1, "continue", "openai", "Keep going."), (2, None, "limit", None)], r.explain()
    assert calls == 1  # at the last allowed turn a failing check stops the step without asking the model
    manifest = json.loads((r.log / "manifest.json").read_text())
    assert [t["turn"] for t in manifest["steps"][0]["turns"]] == [1, 2] and manifest["exit_code"] == 4


def test_gemini_over_acp_end_turn_after_a_denial_gets_the_instruction_as_its_next_prompt(agent):
    """The same over the Agent Client Protocol (`gemini --acp`): end_turn is judged, and continue is the next
    session/prompt; the done_when check then decides."""
    script = [{"text": "The data folder looks unused: removing it.", "tool_use": {"name": "run_shell_command", "input": {
        "command": "rm -rf data"}}},
              {"text": "The deletion was refused, so I stopped."},
              {"text": "Understood: data/ stays.", "tool_use": {"name": "write_file", "input": {
                  "file_path": "{{cwd}}/report.txt", "content": "data kept\n"}}},
              {"text": "Finished: report.txt says data kept."}]
    with FakeLLM(answer=judge) as llm:
        r = agent("gemini", script, "--acp", "--task", "tidy up the project", "--prompt", GOVERNING, "--done-when", "test -f report.txt",
                  "--no-native-deny",  # the pilot's own denial, which the judge is told of
                  args=("--acp",), rules="- {id: report, match: 'report.txt', reply: Allow}\n", llm=llm,
                  prepare=lambda work: (work / "data").mkdir())
        asked = [json.dumps(q["json"]) for q in llm.requests]
    assert r.code == 0, r.explain()
    assert (r.work / "data").is_dir() and (r.work / "report.txt").read_text() == "data kept\n" and r.health["done"]
    assert turn_ends(r) == [(1, "continue", "openai", INSTRUCTION), (2, "done", "check", None)], r.explain()
    assert [t["stop_reason"] for t in r.of("turn_end")] == ["end_turn", "end_turn"]
    assert len(asked) == 1 and "the deny policy refused" in asked[0] and "test -f report.txt` exited 1" in asked[0]
    assert INSTRUCTION in json.dumps(r.requests)


DONT = "Do not delete anything, leave it in place and finish."


def judge_after_a_proposal(prompt: str) -> str:
    """The pilot's model: after the denial it asks what the agent plans; when the agent proposes the removal again in
    prose, it says not to; then done."""
    if not is_turn_end(prompt):
        return json.dumps({"action": "human", "text": "only turn ends are expected here", "submit": False})
    if "data/ stays" in prompt:
        return verdict("done", why="the agent left data/ in place")
    if "Shall I remove it" in prompt:
        return verdict("continue", DONT, "the governing prompt forbids deleting")
    return verdict("continue", "Tell me what you plan for data/ instead.", "the agent waits after a denial")


@pytest.mark.parametrize("name", AGENTS)
def test_a_continue_that_says_do_not_delete_is_sent_not_weighed_as_a_yes_to_the_removal_proposed(agent, name):
    """The turn-end judge answered continue with "Do not delete anything, leave it in place and finish." after the
    agent proposed the removal again in prose: the pilot weighed that continue as a yes to the removal, refused it, and
    stopped the run for a person. The message is what the agent will act on, and it asks for no removal."""
    script = [{"text": "The data folder looks unused: removing it.", "tool_use": shell(name, "rm -rf data", "Remove the data folder")},
              {"text": "data/ still looks unused. Shall I remove it with rm -rf data?"},
              {"text": "Understood: data/ stays where it is. Finished."}]
    with FakeLLM(answer=judge_after_a_proposal) as llm:
        r = agent(name, script, "--prompt", GOVERNING, "--no-native-deny", args=args(name, "tidy up the project"), llm=llm,
                  prepare=lambda work: (work / "data").mkdir() or (work / "data" / "keep.db").write_text("x"))
    assert r.code == 0, r.explain()
    assert (r.work / "data" / "keep.db").exists() and r.health["done"]
    assert [d["on"] for d in r.of("policy_denied")] == [None]  # the command, denied as a command; nothing weighed as a yes
    assert [t[1] for t in turn_ends(r)] == ["continue", "continue", "done"], r.explain()
    assert DONT in said_to_agent(r)
