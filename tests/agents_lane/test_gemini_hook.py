"""The real Gemini CLI (0.61), offline, with `cursor-pilot hook gemini` installed by `cursor-pilot hook install gemini`
(a BeforeTool hook in the project's .gemini/settings.json) and everything else approved (`--approval-mode yolo`):
a `replace` and a `write_file` of the protected file and an `rm -rf` of the protected folder are blocked in the user's
words, the clean-up the prompt asks for and an ordinary edit go through, and the agent goes on to the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab  # noqa: E402
from agents_lane.test_claude_hook import PROMPT, USERS, pilot, project  # noqa: E402


def script(work: Path) -> list[dict]:
    fixture, app = str(work / "tests/fixtures/users.json"), str(work / "src/app.py")
    return [
        {"text": "Renaming.", "tool_use": {"name": "replace", "input": {"file_path": fixture, "old_string": "ada", "new_string": "bob",
                                                                        "instruction": "rename the user"}}},
        {"text": "Rewriting.", "tool_use": {"name": "write_file", "input": {"file_path": fixture, "content": "{}\n"}}},
        {"text": "Dropping.", "tool_use": {"name": "run_shell_command", "input": {"command": "rm -rf tests/fixtures", "description": "rm"}}},
        {"text": "Cleaning.", "tool_use": {"name": "run_shell_command", "input": {"command": "rm -rf build", "description": "rm build"}}},
        {"text": "Editing.", "tool_use": {"name": "replace", "input": {"file_path": app, "old_string": "hi", "new_string": "ho",
                                                                       "instruction": "say ho"}}},
        {"text": "Done: the build is clean and the fixtures are as they were."},
    ]


def test_gemini_cli_with_the_hook_keeps_the_protected_folder_cleans_the_granted_one_and_goes_on(tmp_path):
    reason = agentlab.missing_reason("gemini")
    if reason:
        pytest.skip(reason)
    lab = agentlab.Lab("gemini", tmp_path / "gemini")
    project(lab.work)
    installed = pilot("install", "gemini", "--prompt", PROMPT, "--project", str(lab.work), cwd=lab.work)
    assert installed.returncode == 0, installed.stderr
    backend = lab.backend(script(lab.work))
    try:
        proc = subprocess.run(lab.command("-p", "clean up", "--approval-mode", "yolo", "--output-format", "stream-json"), cwd=lab.work,
                              env={**lab.env(backend), "CURSORPILOT_RESIDENT": "0"}, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=240)
        health = backend.health()
    finally:
        backend.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [e for line in proc.stdout.splitlines() if line.startswith("{") and (e := json.loads(line)).get("type") == "tool_result"]
    assert [r["status"] for r in results] == ["error", "error", "error", "success", "success"], results
    for refused in results[:3]:
        assert "cursor-pilot refused" in refused["output"] and "Never touch tests/fixtures" in refused["output"], refused
    assert (lab.work / "tests" / "fixtures" / "users.json").read_text() == USERS
    assert not (lab.work / "build").exists() and (lab.work / "src" / "app.py").read_text() == "print('ho')\n"
    assert health["done"], health
    removed = pilot("uninstall", "gemini", "--project", str(lab.work), cwd=lab.work)
    assert removed.returncode == 0 and not (lab.work / ".gemini").exists(), removed.stdout


def test_gemini_cli_takes_the_hook_a_run_writes_in_a_private_gemini_home(tmp_path, monkeypatch):
    """What a run with Gemini does (channels/agent/runhook.py, through nativedeny.Guard): the hook in the settings of a
    private Gemini home (GEMINI_CLI_HOME, the user's ~/.gemini linked into it), the user's and the project's settings
    untouched; the real Gemini CLI runs it: the protected file's edit and write and the rm of its folder are refused in
    the user's words and recorded, the clean-up the prompt asks for and the rest go on."""
    reason = agentlab.missing_reason("gemini")
    if reason:
        pytest.skip(reason)
    from cursorpilot.channels.agent.nativedeny import Guard
    from cursorpilot.decide.compiled import lexical

    lab = agentlab.Lab("gemini", tmp_path / "gemini")
    project(lab.work)
    monkeypatch.setenv("HOME", str(lab.home))  # the lab's home is the user's here
    backend = lab.backend(script(lab.work))
    env = lab.env(backend)  # (the lab writes the user's Gemini settings)
    users = (lab.home / ".gemini" / "settings.json").read_text()
    guard = Guard("gemini", tmp_path / "native-deny", frozenset({"delete"}), str(lab.work))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where is not None
    try:
        proc = subprocess.run(lab.command("-p", "clean up", "--approval-mode", "yolo", "--output-format", "stream-json", *guard.args()),
                              cwd=lab.work, env={**env, **guard.env(), "CURSORPILOT_RESIDENT": "0"}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=240)
        health = backend.health()
    finally:
        backend.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [e for line in proc.stdout.splitlines() if line.startswith("{") and (e := json.loads(line)).get("type") == "tool_result"]
    assert [r["status"] for r in results] == ["error", "error", "error", "success", "success"], results
    assert (lab.work / "tests" / "fixtures" / "users.json").read_text() == USERS and health["done"]
    assert not (lab.work / ".gemini" / "settings.json").exists()  # the project's own settings were never written
    assert (lab.home / ".gemini" / "settings.json").read_text() == users  # nor the user's
    decided = guard.decisions()
    assert [(d["tool"], d["decision"]) for d in decided] == [("replace", "deny"), ("write_file", "deny"), ("run_shell_command", "deny"),
                                                             ("run_shell_command", "allow")], decided
    home = guard.env()["GEMINI_CLI_HOME"]
    guard.remove()
    assert not Path(home).exists() and (lab.home / ".gemini" / "settings.json").read_text() == users
