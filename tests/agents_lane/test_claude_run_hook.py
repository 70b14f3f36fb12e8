"""The real Claude Code (2.1.330) in print mode, offline, under `cursor-pilot run --headless`: the run puts
cursor-pilot's hook into the settings file it hands Claude with --settings (channels/agent/runhook.py), so an Edit and
a Write over the protected file, which Claude would make without asking anybody here, are refused inside Claude by the
run's policy in the user's words; the file stays intact, and each refusal is a `hook_decided` record of the run and a
row of its report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from agents_lane.test_claude_hook import PROMPT, USERS, project  # noqa: E402


def script(work: Path) -> list[dict]:
    fixture = str(work / "tests/fixtures/users.json")
    return [
        {"text": "Reading.", "tool_use": {"name": "Read", "input": {"file_path": fixture}}},
        {"text": "Renaming the user.", "tool_use": {"name": "Edit", "input": {"file_path": fixture, "old_string": "ada", "new_string": "bob"}}},
        {"text": "Rewriting it.", "tool_use": {"name": "Write", "input": {"file_path": fixture, "content": "{}\n"}}},
        {"text": "Done: the fixtures are as they were."},
    ]


def test_a_headless_run_of_claude_refuses_edits_of_the_protected_file_inside_claude_and_records_them(agent, tmp_path):
    fixture = tmp_path / "claude" / "work" / "tests/fixtures/users.json"
    r = agent("claude", script(fixture.parents[2]), "--headless", "--task", "clean up", "--prompt", PROMPT, prepare=project)
    assert r.code == 0, r.explain()
    assert (r.work / "tests" / "fixtures" / "users.json").read_text() == USERS and r.health["done"]
    decided = r.of("hook_decided")
    assert [(d["tool"], d["decision"], d["quote"]) for d in decided] == [
        ("Edit", "deny", "Never touch tests/fixtures"), ("Write", "deny", "Never touch tests/fixtures")], decided
    native = r.of("native_deny")[0]
    assert native["hook"] == native["file"] and "--settings" in r.of("program_started")[0]["command"]
    made = subprocess.run([sys.executable, "-m", "cursorpilot", "report", str(r.log)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    report = json.loads((r.log / "report.json").read_text())
    assert report["verdict"]["denials"] >= 2 and sum(row["source"] == "policy:hook" for row in report["ledger"]) == 2
