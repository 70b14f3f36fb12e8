"""`cursor-pilot run` with an agent installs cursor-pilot's hook for the step (channels/agent/runhook.py), here through
the Cursor simulator's print mode, which runs the project's .cursor/hooks.json as Cursor documents it: the agent's
`rm -rf` of the protected folder and its write over the protected file are refused inside the agent by the run's
policy, the clean-up the prompt asks for goes through, each decision is a `hook_decided` record, a console line and a
ledger row of the report, and the user's own hooks file is byte for byte as it was. `--no-native-deny` leaves the hook
out (its mirror: the same agent then overwrites the file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SIM

pytestmark = pytest.mark.timeout(120)

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."
USERS = '{"users": ["ada"]}\n'
USER_HOOKS = '{\n  "version": 1,\n  "hooks": {"afterFileEdit": [{"command": "true"}]}\n}\n'  # the user's own, kept as it is


def project(work: Path) -> None:
    (work / "tests" / "fixtures").mkdir(parents=True)
    (work / "tests" / "fixtures" / "users.json").write_text(USERS)
    (work / "build").mkdir()
    (work / "build" / "app.o").write_text("o")
    (work / "src").mkdir()
    (work / ".cursor").mkdir()
    (work / ".cursor" / "hooks.json").write_text(USER_HOOKS)


def run(work: Path, log: Path, *extra: str) -> subprocess.CompletedProcess:
    """A headless step of the simulator; the plan lifts `delete` from the native deny list (Cursor's `Shell(rm)` would
    refuse every rm before any hook), so that the hook, with the user's words, decides each rm."""
    plan = work.parent / "plan.yaml"
    plan.write_text(json.dumps({"name": "guarded", "allow": ["delete"],
                                "steps": [{"name": "clean", "headless": "clean up", "agent": [*SIM, "cursor", "cursor-print-hooks"]}]}))
    env = {**os.environ, "CURSORPILOT_RESIDENT": "0", "CURSORPILOT_SIM_RECORD": str(work.parent / "sim.jsonl")}
    return subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", str(log), "--plan", str(plan), "--prompt", PROMPT,
                           "--provider", "rules", "--timeout", "60s", *extra], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=100, env=env, cwd=work)


def records(log: Path, kind: str) -> list[dict]:
    return [r for line in (log / "transcript.jsonl").read_text().splitlines() if (r := json.loads(line))["type"] == kind]


def test_a_run_with_cursor_refuses_the_protected_folder_inside_the_agent_and_records_each_decision(tmp_path: Path):
    work, log = tmp_path / "work", tmp_path / "log"
    project(work)
    done = run(work, log)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (work / "tests" / "fixtures" / "users.json").read_text() == USERS  # refused inside the agent
    assert not (work / "build").exists() and (work / "src" / "new.py").exists()  # granted, and ordinary work
    assert (work / ".cursor" / "hooks.json").read_text() == USER_HOOKS and sorted(os.listdir(work / ".cursor")) == ["hooks.json"]
    decided = records(log, "hook_decided")
    assert [(d["tool"], d["decision"], d["target"].replace(str(work) + "/", "")) for d in decided] == [
        ("Shell", "deny", "rm -rf tests/fixtures"), ("Write", "deny", "tests/fixtures/users.json"), ("Shell", "allow", "rm -rf build")]
    assert [d["quote"] for d in decided] == ["Never touch tests/fixtures", "Never touch tests/fixtures", "delete build/"]
    assert all(d["step"] == 1 and d["agent"] == "cursor" for d in decided) and decided[1]["acts"] == ["overwrite"]
    native = records(log, "native_deny")[0]
    assert native["hook"] == str(work / ".cursor" / "hooks.json") and native["no_hook"] is None
    assert not (log / "native-deny.hook-decisions.jsonl").exists()  # read into the transcript (redacted), then deleted
    policy = (log / "native-deny.hook-policy.yaml").read_text()  # the run's policy, pinned: the hook never compiles
    assert "Never touch tests/fixtures" in policy and "delete build/" in policy
    said = done.stdout + done.stderr
    assert said.count("the hook refused cursor's") == 2 and "your words forbid it: 'Never touch tests/fixtures'" in said
    assert "a human is needed" not in said  # the hook's refusals are the policy's, not an agent that asked nobody
    made = subprocess.run([sys.executable, "-m", "cursorpilot", "report", str(log)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    report = json.loads((log / "report.json").read_text())
    assert (report["verdict"]["denials"], report["verdict"]["grants"]) == (2, 1)
    rows = [(r["outcome"], r["source"], r["answer"]) for r in report["ledger"] if r["source"] == "policy:hook"]
    assert rows == [("refused", "policy:hook", "deny"), ("refused", "policy:hook", "deny"), ("answered", "policy:hook", "allow")]


def test_no_native_deny_leaves_the_hook_out_and_the_same_agent_overwrites_the_file(tmp_path: Path):
    work, log = tmp_path / "work", tmp_path / "log"
    project(work)
    done = run(work, log, "--no-native-deny")
    assert (work / "tests" / "fixtures" / "users.json").read_text() == "{}\n", done.stdout + done.stderr
    assert records(log, "hook_decided") == [] and records(log, "native_deny") == []
    assert (work / ".cursor" / "hooks.json").read_text() == USER_HOOKS and not (log / "native-deny.hook-policy.yaml").exists()
