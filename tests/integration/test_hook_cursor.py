"""`cursor-pilot hook cursor` through the Cursor simulator's print mode (sim/cursor_print.py runs the workspace's
.cursor/hooks.json as Cursor documents it; no real Cursor can be installed here): installed by `hook install cursor`,
with every command approved (`--force`), an `rm -rf` of the protected folder and a write over the protected file are
refused in the user's words, the clean-up the prompt asks for and a new file go through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."


def test_cursor_with_the_hook_refuses_the_protected_folder_and_cleans_the_granted_one(tmp_path: Path):
    work = tmp_path / "work"
    (work / "tests" / "fixtures").mkdir(parents=True)
    (work / "tests" / "fixtures" / "users.json").write_text("{}")
    (work / "build").mkdir()
    (work / "build" / "app.o").write_text("o")
    (work / "src").mkdir()
    env = {**os.environ, "CURSORPILOT_RESIDENT": "0"}
    pilot = [sys.executable, "-m", "cursorpilot"]
    done = subprocess.run([*pilot, "hook", "install", "cursor", "--prompt", PROMPT, "--project", str(work)], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    hooks = json.loads((work / ".cursor" / "hooks.json").read_text())
    assert hooks["version"] == 1 and set(hooks["hooks"]) == {"beforeShellExecution", "beforeMCPExecution", "preToolUse"}
    run = subprocess.run([*pilot, "sim", "cursor", "cursor-print-hooks", "-p", "--output-format", "stream-json", "--force",
                          "--workspace", str(work), "--", "clean up"], capture_output=True, text=True, timeout=60, env=env, cwd=work)
    assert run.returncode == 0, run.stderr
    completed = [e["tool_call"] for e in map(json.loads, run.stdout.splitlines()) if e.get("subtype") == "completed"]
    results = [next(iter(c.values()))["result"] for c in completed]
    assert [next(iter(r)) for r in results] == ["rejected", "rejected", "success", "success"], results
    for refused in results[:2]:
        assert "Never touch tests/fixtures" in refused["rejected"]["reason"], refused
    assert (work / "tests" / "fixtures" / "users.json").read_text() == "{}"
    assert not (work / "build").exists() and (work / "src" / "new.py").exists()
    done = subprocess.run([*pilot, "hook", "uninstall", "cursor", "--project", str(work)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not (work / ".cursor").exists()
