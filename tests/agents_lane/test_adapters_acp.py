"""The real Claude Code and Codex over the Agent Client Protocol, through Zed's adapters (`claude-agent-acp` 0.23.1 with
the Claude Code it bundles, `codex-acp` 0.16.0), offline against their fake backends: the scenarios `gemini --acp` runs
(test_gemini_acp.py), each with the user's rules and with a model provider (the real openai SDK against a fake
OpenAI-compatible server on 127.0.0.1).

What differs between the two, as the pilot sees it:
- claude-agent-acp describes a call by its rawInput (`command`, `file_path`…) and offers Always Allow / Allow / Reject; a
  rejection goes back to Claude's model, and the turn goes on.
- codex-acp describes a command by rawInput (`command: [bash, -lc, …]`) and an edit by its diff, and offers Yes /
  Yes, and don't ask again / No, and tell Codex what to do differently. That "No" ends the turn with `cancelled`: the
  pilot, which rejected, judges that turn end and tells Codex what to do instead.
- Neither asks the client to read, write or run anything (no fs/*, no terminal/*): both use their agent's own tools.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests import agentlab
from tests.fakes.llm_server import FakeLLM
from tests.helpers import is_turn_end, question_of, verdict

GOVERNING = "Work only inside the project. Approve commands and edits the task needs; never delete anything."
PROVIDERS = ["rules", "model"]
ADAPTERS = {"claude": "claude-agent-acp", "codex": "codex-acp"}
INSTEAD = "Leave build/ alone and create acp.txt."


def shell(agent: str, command: str, why: str) -> dict:
    if agent == "claude":
        return {"name": "Bash", "input": {"command": command, "description": why}}
    return {"name": "auto_shell", "input": {"cmd": command, "escalate": True, "justification": why}}


def new_file(agent: str, name: str, text: str) -> list[dict]:
    if agent == "claude":
        return [{"text": "Writing the notes.", "tool_use": {"name": "Write", "input": {"file_path": "{{cwd}}/" + name, "content": text}}}]
    patch = f"*** Begin Patch\n*** Add File: {name}\n" + "".join(f"+{line}\n" for line in text.splitlines()) + "*** End Patch\n"
    return [{"text": "Writing the notes.", "tool_use": {"name": "apply_patch", "custom": True, "input": patch}}]


def edit(agent: str, name: str, old: str, new: str) -> list[dict]:
    if agent == "claude":  # Claude Code edits only a file it has read
        return [{"text": "Reading the app.", "tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/" + name}}},
                {"text": "Editing the app.", "tool_use": {"name": "Edit", "input": {
                    "file_path": "{{cwd}}/" + name, "old_string": old, "new_string": new}}}]
    patch = f"*** Begin Patch\n*** Update File: {name}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    return [{"text": "Editing the app.", "tool_use": {"name": "apply_patch", "custom": True, "input": patch}}]


def the_models_answer(prompt: str) -> str:
    """The pilot's model: it picks the option that allows for good where there is one (the governing prompt grants no
    standing permission: once is what goes out); at a turn end it says what to do instead after a cancelled turn,
    answers the closing question, or judges the work done."""
    question = question_of(prompt)
    if is_turn_end(prompt):
        if "Turn cancelled" in question:
            return verdict("continue", INSTEAD, "the agent stopped on a rejection")
        return verdict("continue", "8080", "it asks for a port") if "Which port" in question else verdict("done")
    options = re.findall(r"^\W*\d+\) (.+?) \[(allow_\w+)\]", question, re.M)
    label = next((name for name, kind in options if kind == "allow_always"), options[0][0] if options else "Yes")
    return json.dumps({"action": "type", "text": label, "submit": True})


def run_adapter(agent, name, provider, script, rules, task, **kw):
    opts = ("--acp", "--task", task, "--prompt", GOVERNING, "--no-native-deny")  # the pilot's own denials, over ACP
    if provider == "rules":
        return agent(name, script, *opts, rules=rules, program=ADAPTERS[name], **kw), None
    with FakeLLM(answer=the_models_answer) as llm:
        return agent(name, script, *opts, llm=llm, program=ADAPTERS[name], **kw), llm


def sources(r) -> list[str]:
    return [a["source"].split(":")[0] for a in r.of("answer")]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(ADAPTERS))
def test_adapter_over_acp_a_deletion_denied_then_a_command_allowed_once(agent, name, provider):
    script = [{"text": "Cleaning up.", "tool_use": shell(name, "rm -rf build", "Remove the build folder")},
              {"text": "Creating the file.", "tool_use": shell(name, "touch acp.txt", "Create acp.txt")},
              {"text": "Done: acp.txt exists and build/ stays."}]
    rules = (f"- {{id: run, match: 'touch acp\\.txt', reply: 'Yes'}}\n"
             f"- {{id: after, kind: turn_end, match: 'Turn cancelled', reply: '{INSTEAD}'}}\n")
    r, llm = run_adapter(agent, name, provider, script, rules, "clean up, then create acp.txt",
                         prepare=lambda work: (work / "build").mkdir() or (work / "build" / "x.o").write_text("x"))
    assert r.code == 0, r.explain()
    assert (r.work / "acp.txt").exists() and (r.work / "build" / "x.o").exists() and r.health["done"]
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    permissions = [a for a in r.of("answer") if a["kind"] == "permission"]
    assert [a["option_kind"] for a in permissions] == ["reject_once", "allow_once"]  # never "always"
    who = "rules" if provider == "rules" else "openai"
    if name == "codex":  # its "No" cancelled the turn: judged, and the next prompt said what to do instead
        assert sources(r) == ["policy", who, who]
        assert [t["stop_reason"] for t in r.of("turn_end")] == ["cancelled", "end_turn"]
        assert r.of("answer")[1]["reply"] == INSTEAD and r.of("answer")[1]["rule_id"] == "acp.turn_end"
        assert INSTEAD in json.dumps([q.get("body") for q in r.requests])
    else:  # Claude's model hears of the rejection and goes on in the same turn
        assert sources(r) == ["policy", who]
        assert [t["stop_reason"] for t in r.of("turn_end")] == ["end_turn"]
        if os.environ.get("IS_SANDBOX", "1") != "1" and os.geteuid() == 0:  # as on this lane's machine: it would exit at once
            assert "IS_SANDBOX" in r.of("program_started")[0]["hidden_env"]
    if llm is not None:
        assert len(llm.requests) == (3 if name == "codex" else 2)  # the permission and each turn end; the policy asked none


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(ADAPTERS))
def test_adapter_over_acp_new_file_edit_command_and_closing_question(agent, name, provider):
    script = [*new_file(name, "notes.txt", "hello\n"), *edit(name, "app.txt", "one", "two"),
              {"text": "Running the tests.", "tool_use": shell(name, "echo tests pass > tested.txt", "Run the tests")},
              {"text": "Done. Which port should the server use?"},
              {"text": "Using {{last_user}}."}]
    rules = ("- {id: notes, match: 'notes\\.txt', reply: 'Yes'}\n- {id: app, match: 'app\\.txt', reply: 'Yes'}\n"
             "- {id: tests, match: 'echo tests pass', reply: 'Yes'}\n- {id: port, match: 'Which port', reply: '8080'}\n")
    r, llm = run_adapter(agent, name, provider, script, rules, "write the notes, fix the app, run the tests",
                         prepare=lambda work: (work / "app.txt").write_text("one\n"))
    assert r.code == 0, r.explain()
    assert (r.work / "notes.txt").read_text() == "hello\n" and (r.work / "app.txt").read_text() == "two\n", r.explain()
    assert (r.work / "tested.txt").read_text() == "tests pass\n"
    assert r.health["done"] and "Using 8080." in json.dumps([q.get("reply") for q in r.requests])
    who = "rules" if provider == "rules" else "openai"
    assert sources(r) == [who] * 4
    answers = r.of("answer")
    assert [a["option_kind"] for a in answers[:3]] == ["allow_once"] * 3
    assert answers[3]["rule_id"] == "acp.turn_end" and answers[3]["reply"] == "8080"
    assert not r.of("fs_write") and not r.of("terminal_started")  # both adapters use their agent's own tools
    if llm is not None:
        assert len(llm.requests) == 5  # three permissions and two turn ends (continue: 8080, then done)
        assert any("[allow_always]" in json.dumps(q["json"]) for q in llm.requests[:3])  # "always" was offered; once went out


def test_codex_acp_edit_not_applied_on_a_machine_without_bwrap(tmp_path, monkeypatch):
    """codex-acp checks an edit by reading the file under bubblewrap, which its npm package does not ship: on a machine
    with no bwrap on PATH its apply_patch failed before any permission was asked ("bubblewrap is unavailable"), Codex's
    model went on, and app.txt kept "one" (the test above, every time). The lab lends it the pinned Codex CLI's own
    bwrap; the mirror: a bwrap the machine has on PATH is left alone, and stays the one used."""
    bundled = agentlab.bundled_bwrap()
    if agentlab.missing_reason("codex-acp") or bundled is None:
        pytest.skip("codex-acp and the Codex CLI (whose bwrap it borrows) are not installed: run `npm ci --prefix tests/agents`")
    lab = agentlab.Lab("codex", tmp_path / "codex", program="codex-acp")
    backend = agentlab.Backend("codex", [], lab.work, tmp_path / "backend.jsonl")  # not started: env() reads its port only
    bare, own = tmp_path / "bare", tmp_path / "own"
    bare.mkdir()
    own.mkdir()
    (own / "bwrap").write_text("#!/bin/sh\necho bubblewrap 0.8.0\n")
    (own / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(bare))
    lent = shutil.which("bwrap", path=lab.env(backend)["PATH"])
    assert lent == str(bundled)
    assert "bubblewrap" in subprocess.run([lent, "--version"], capture_output=True, text=True, timeout=30).stdout
    monkeypatch.setenv("PATH", f"{bare}{os.pathsep}{own}")
    assert lab.env(backend)["PATH"] == f"{bare}{os.pathsep}{own}"


@pytest.mark.parametrize("name", ["claude", "gemini"])
def test_over_acp_the_agents_own_deny_list_refuses_rm_before_the_pilot_is_asked(agent, name):
    """By default the deny policy also goes into the agent's own list before it starts: Claude Code's permissions.deny
    (a settings file of the run's, handed to claude-agent-acp in session/new's _meta as Claude's --settings) and Gemini
    CLI's Policy Engine (a TOML file given with --policy), and cursor-pilot's hook beside them (Claude runs it first).
    The agent refuses rm -rf by itself and never asks; the mirror, touch, is asked and allowed."""
    tool = {"claude": lambda c: shell("claude", c, "Run it"),
            "gemini": lambda c: {"name": "run_shell_command", "input": {"command": c}}}[name]
    script = [{"text": "Cleaning up.", "tool_use": tool("rm -rf build")}, {"text": "Creating the file.", "tool_use": tool("touch acp.txt")},
              {"text": "Done: acp.txt exists and build/ stays."}]
    kw = {"program": ADAPTERS[name]} if name == "claude" else {"args": ("--acp",)}
    r = agent(name, script, "--acp", "--task", "clean up, then create acp.txt", "--prompt", GOVERNING,
              rules="- {id: run, match: 'touch acp\\.txt', reply: 'Yes'}\n",
              prepare=lambda work: (work / "build").mkdir() or (work / "build" / "x.o").write_text("x"), **kw)
    assert r.code == 0, r.explain()
    assert (r.work / "build" / "x.o").exists() and (r.work / "acp.txt").exists() and r.health["done"]
    (native,) = r.of("native_deny")
    assert native["agent"] == name and native["file"].startswith(str(r.log))
    asked = [json.dumps(p["tool_call"]) for p in r.of("permission_request")]
    assert len(asked) == 1 and "touch acp.txt" in asked[0]  # rm -rf was never asked: the agent refused it
    told = json.dumps([q.get("body") for q in r.requests])
    assert ("cursor-pilot refused" if name == "claude" else "denied by policy") in told
    if name == "claude":  # Claude runs cursor-pilot's hook (in the same settings file) before its deny list: the user's words refuse it
        assert [(d["tool"], d["decision"], d["quote"]) for d in r.of("hook_decided")] == [("Bash", "deny", "never delete anything")]
        assert native["hook"] == native["file"] and r.of("policy_denied") == []  # the hook's refusal, counted once
