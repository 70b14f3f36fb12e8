"""The real Claude Code (2.1.330), offline, with `cursor-pilot hook claude` installed in the project by `cursor-pilot
hook install` and nothing else between it and its tools: in `acceptEdits` (edits go through unasked) and in
`bypassPermissions` (everything does), under a prompt that protects a folder and asks to clean another. An Edit of the
protected file, a Write over it and an `rm -rf` of the protected folder are each refused by the hook, in the user's
words, and the files stay; the same tools on paths nothing protects, and the `rm -rf` the prompt asks for, go through;
the agent reads each refusal and goes on to the end of its script. Then `hook uninstall` leaves the project as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab  # noqa: E402

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."
USERS = '{"users": ["ada"]}\n'


def script(work: Path) -> list[dict]:
    fixture, app = str(work / "tests/fixtures/users.json"), str(work / "src/app.py")
    return [
        {"text": "Reading.", "tool_use": {"name": "Read", "input": {"file_path": fixture}}},
        {"text": "Renaming the user.", "tool_use": {"name": "Edit", "input": {"file_path": fixture, "old_string": "ada", "new_string": "bob"}}},
        {"text": "Rewriting it.", "tool_use": {"name": "Write", "input": {"file_path": fixture, "content": "{}\n"}}},
        {"text": "Dropping the fixtures.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf tests/fixtures", "description": "rm"}}},
        {"text": "Cleaning the build.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "rm build"}}},
        {"text": "Reading the app.", "tool_use": {"name": "Read", "input": {"file_path": app}}},
        {"text": "Editing the app.", "tool_use": {"name": "Edit", "input": {"file_path": app, "old_string": "hi", "new_string": "ho"}}},
        {"text": "A new module.", "tool_use": {"name": "Write", "input": {"file_path": str(work / "src/new.py"), "content": "x = 1\n"}}},
        {"text": "Done: the build is clean and the fixtures are as they were."},
    ]


def project(work: Path) -> None:
    (work / "tests" / "fixtures").mkdir(parents=True)
    (work / "tests" / "fixtures" / "users.json").write_text(USERS)
    (work / "build").mkdir()
    (work / "build" / "app.o").write_text("obj")
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("print('hi')\n")


def pilot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursorpilot", "hook", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
def test_claude_code_with_the_hook_keeps_the_protected_folder_cleans_the_granted_one_and_goes_on(tmp_path, mode):
    reason = agentlab.missing_reason("claude")
    if reason:
        pytest.skip(reason)
    lab = agentlab.Lab("claude", tmp_path / "claude")
    project(lab.work)
    installed = pilot("install", "claude", "--prompt", PROMPT, "--project", str(lab.work), cwd=lab.work)
    assert installed.returncode == 0, installed.stderr
    backend = lab.backend(script(lab.work))
    env = {**lab.env(backend), "CURSORPILOT_RESIDENT": "0", "IS_SANDBOX": "1"}  # (IS_SANDBOX: bypass mode as root, here)
    try:
        proc = subprocess.run(lab.command("-p", "--output-format", "stream-json", "--verbose", "--permission-mode", mode, "--", "clean up"),
                              cwd=lab.work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
        health = backend.health()
    finally:
        backend.stop()
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    results = [c for line in proc.stdout.splitlines() if line.startswith("{") and (e := json.loads(line)).get("type") == "user"
               for c in e["message"]["content"] if isinstance(c, dict) and c.get("type") == "tool_result"]
    said = [str(r["content"]) for r in results]
    assert [bool(r.get("is_error")) for r in results] == [False, True, True, True, False, False, False, False], said
    for refused in said[1:4]:
        assert "cursor-pilot refused" in refused and "Never touch tests/fixtures" in refused, refused
    assert (lab.work / "tests" / "fixtures" / "users.json").read_text() == USERS
    assert not (lab.work / "build").exists()
    assert (lab.work / "src" / "app.py").read_text() == "print('ho')\n" and (lab.work / "src" / "new.py").exists()
    assert health["done"], health  # it read each refusal and went on to the end of its script
    bodies = json.dumps([q.get("body") for q in backend.requests() if q.get("kind") == "main"])
    assert "Never touch tests/fixtures" in bodies  # the refusal's words reached the model
    removed = pilot("uninstall", "claude", "--project", str(lab.work), cwd=lab.work)
    assert removed.returncode == 0 and not (lab.work / ".claude").exists(), removed.stdout
