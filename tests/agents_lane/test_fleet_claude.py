"""A fleet with a real agent: the real Claude Code in print mode, offline against its fake backend, as one task of a
fleet beside the Cursor simulator, each in a worktree of the project on a branch of its own. The agent's work lands in
its worktree (not in the project), its run answers by the user's rules, and both tasks end done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab

from tests import fleetlab

RULES = "- {id: logs, match: 'mkdir -p logs', reply: 'Yes'}\n- {id: port, match: 'Which port', reply: '8080'}\n"
SCRIPT = [{"text": "Making the log folder.", "tool_use": {"name": "Bash", "input": {"command": "mkdir -p logs", "description": "Make logs"}}},
          {"text": "Done. Which port should the server use?"},
          {"text": "Using {{last_user}}."}]


def test_a_fleet_runs_claude_code_in_a_worktree_beside_the_cursor_simulator(tmp_path):
    reason = agentlab.missing_reason("claude")
    if reason:
        pytest.skip(reason)
    lab = agentlab.Lab("claude", tmp_path / "claude")
    backend = lab.backend(SCRIPT)
    try:
        env = lab.env(backend)
        (tmp_path / "rules.yaml").write_text(RULES)
        fleet_file = lab.work / "fleet.yaml"
        fleet_file.write_text(json.dumps({
            "name": "agents",
            "defaults": {"isolation": "worktree", "timeout": "150s", "provider": "rules"},
            "tasks": [
                {"id": "claude", "agent": "claude", "channel": "headless", "task": "make the log folder", "rules": str(tmp_path / "rules.yaml"),
                 "prompt": "Work only inside the project. Approve what the task needs; never delete anything.",
                 "env": {k: v for k, v in env.items() if k not in ("PATH",)}},
                {"id": "sim", "command": ["cursor-pilot", "sim", "cursor", "demo", "Add a /health endpoint"],
                 "rules": str(fleetlab.PACKAGE / "demo" / "rules.yaml"), "prompt": str(fleetlab.PACKAGE / "demo" / "prompt.md")},
            ]}))
        folder = tmp_path / "fleet"
        env_path = f"{agentlab.BIN}:{env.get('PATH', '')}"
        r = subprocess.run([*fleetlab.PILOT, "fleet", "run", str(fleet_file), "-j", "2", "--dir", str(folder)], cwd=tmp_path,
                           env={**fleetlab.env(), "PATH": env_path}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=400)
        health = backend.health()
    finally:
        backend.stop()
    rows = fleetlab.rows(folder)
    assert r.returncode == 0, r.stdout + r.stderr + json.dumps(rows, indent=1)
    assert {t: x["status"] for t, x in rows.items()} == {"claude": "done", "sim": "done"}
    assert (folder / "work" / "claude" / "logs").is_dir() and not (lab.work / "logs").exists()
    assert health["done"]
    records = [json.loads(ln) for ln in (folder / "runs" / "claude" / "transcript.jsonl").read_text().splitlines()]
    assert [a["reply"] for a in records if a["type"] == "answer"][-1] == "8080"
    branches = subprocess.run(["git", "-C", str(lab.work), "branch", "--list", "cursor-pilot/agents/*"], capture_output=True, text=True).stdout
    assert sorted(b.strip(" *+") for b in branches.splitlines()) == ["cursor-pilot/agents/claude", "cursor-pilot/agents/sim"]
