"""The real Gemini CLI over the Agent Client Protocol (`gemini --acp`), offline, with the user's rules and with a model
provider (the real openai SDK against a fake OpenAI-compatible server on 127.0.0.1): each scenario runs with both.

Gemini CLI 0.61 describes a shell command by its title and its working directory as content, never rawInput; a write
or an edit by its diff. It reads a file through the client before it writes it (a new one must come back as missing);
its read_file tool reads the disk itself.
"""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import is_turn_end, verdict

GOVERNING = "Work only inside the project. Approve commands and edits the task needs; never delete anything."
PROVIDERS = ["rules", "model"]


def the_models_answer(prompt: str) -> str:
    """The pilot's model: approves what it is asked ("for the session", which the governing prompt does not grant:
    once is what goes out), and at a turn end answers the agent's closing question, or judges the work done."""
    question = prompt.split("# The question", 1)[1].split("# Answer format", 1)[0]
    if is_turn_end(prompt):
        return verdict("continue", "8080", "it asks for a port") if "Which port" in question else verdict("done")
    return json.dumps({"action": "type", "text": "Allow for this session", "submit": True})


def run_gemini(agent, provider, script, rules, task, **kw):
    opts = ("--acp", "--task", task, "--prompt", GOVERNING, "--no-native-deny")  # the pilot's own denials, over ACP
    if provider == "rules":
        return agent("gemini", script, *opts, args=("--acp",), rules=rules, **kw), None
    with FakeLLM(answer=the_models_answer) as llm:
        return agent("gemini", script, *opts, args=("--acp",), llm=llm, **kw), llm


def sources(r) -> list[str]:
    return [a["source"].split(":")[0] for a in r.of("answer")]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_gemini_over_acp_a_shell_command_allowed_once_and_a_deletion_denied(agent, provider):
    """The same governing prompt and rules as on its screen, over ACP: `gemini --acp` sends session/request_permission
    for each shell command, with "Allow for this session" listed first."""
    script = [{"text": "Creating the file.", "tool_use": {"name": "run_shell_command", "input": {"command": "touch acp.txt"}}},
              {"text": "Cleaning up.", "tool_use": {"name": "run_shell_command", "input": {"command": "rm -rf build"}}},
              {"text": "Done: acp.txt exists and build/ stays."}]
    r, llm = run_gemini(agent, provider, script, "- {id: run, match: 'touch acp.txt', reply: 'Yes'}\n", task="create acp.txt, then clean up",
                        prepare=lambda work: (work / "build").mkdir())
    assert r.code == 0, r.explain()
    assert (r.work / "acp.txt").exists() and (r.work / "build").is_dir()
    answers = r.of("answer")
    assert [a["option_kind"] for a in answers] == ["allow_once", "reject_once"]
    assert sources(r) == ["rules" if provider == "rules" else "openai", "policy"]
    if llm is not None:
        assert len(llm.requests) == 2  # the permission and the turn end; the policy's no asked no model


@pytest.mark.parametrize("provider", PROVIDERS)
def test_gemini_over_acp_new_file_edit_missing_file_command_denial_and_closing_question(agent, provider):
    """Issue 20's "done when", with each provider: in one run the real `gemini --acp` creates a new file, edits one,
    reads a missing one, runs an approved command, is denied rm -rf by the policy, and has its closing question
    answered; exit 0."""
    script = [
        {"text": "Writing the notes.", "tool_use": {"name": "write_file", "input": {"file_path": "{{cwd}}/notes.txt", "content": "hello\n"}}},
        {"text": "Editing the app.", "tool_use": {"name": "replace", "input": {
            "file_path": "{{cwd}}/app.txt", "old_string": "one", "new_string": "two", "instruction": "Use two."}}},
        {"text": "Reading the config.", "tool_use": {"name": "read_file", "input": {"file_path": "{{cwd}}/missing.txt"}}},
        {"text": "Running the tests.", "tool_use": {"name": "run_shell_command", "input": {
            "command": "echo tests pass > tested.txt", "description": "Run the tests"}}},
        {"text": "Cleaning up.", "tool_use": {"name": "run_shell_command", "input": {"command": "rm -rf build"}}},
        {"text": "Done. Which port should the server use?"},
        {"text": "Using {{last_user}}."},
    ]
    rules = ("- {id: notes, match: 'notes.txt', reply: 'Allow'}\n- {id: app, match: 'app.txt', reply: 'Allow'}\n"
             "- {id: tests, match: 'echo tests pass', reply: 'Allow'}\n- {id: port, match: 'Which port', reply: '8080'}\n")

    def prepare(work):
        (work / "build").mkdir()
        (work / "app.txt").write_text("one\n")

    r, llm = run_gemini(agent, provider, script, rules, task="write the notes, fix the app, run the tests", prepare=prepare)
    assert r.code == 0, r.explain()
    assert (r.work / "notes.txt").read_text() == "hello\n" and (r.work / "app.txt").read_text() == "two\n"
    assert (r.work / "tested.txt").read_text() == "tests pass\n" and (r.work / "build").is_dir()
    assert r.health["done"] and any("Using 8080." in json.dumps(q.get("reply")) for q in r.requests)
    who = "rules" if provider == "rules" else "openai"
    assert sources(r) == [who, who, who, "policy", who]
    assert [a["option_kind"] for a in r.of("answer")[:4]] == ["allow_once", "allow_once", "allow_once", "reject_once"]
    assert r.of("answer")[4]["rule_id"] == "acp.turn_end" and r.of("answer")[4]["reply"] == "8080"
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    # the new file was read first, through the client: missing, and Gemini wrote it anyway
    assert {"path": str(r.work / "notes.txt"), "chars": 0, "missing": True}.items() <= r.of("fs_read")[0].items()
    assert [w["path"] for w in r.of("fs_write")] == [str(r.work / "notes.txt"), str(r.work / "app.txt")]
    read_results = [json.dumps(p) for q in r.requests for c in (q.get("body") or q).get("contents", []) or []
                    for p in c.get("parts", []) if "functionResponse" in p and p["functionResponse"].get("name") == "read_file"]
    assert read_results and "not found" in read_results[-1].lower()  # its own read of the missing file, told to its model
    if llm is not None:
        assert len(llm.requests) == 5  # one call per question and per turn end (continue: 8080, then done); the policy's no asked none
        asked = [json.dumps(q["json"]) for q in llm.requests]
        assert "echo tests pass > tested.txt" in asked[2] and "current working directory" in asked[2]
