"""Shared helpers: run the real CLI as a process, read what it recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIM = [sys.executable, "-m", "cursorpilot.sim"]


def checked(written: list[dict]) -> list[dict]:
    """Every record a test reads is checked against its declaration (cursorpilot/records/models.py): a writer that drifts
    from it fails the test that made it write."""
    from cursorpilot.records.reading import problems

    wrong = [p for r in written for p in problems(r)]
    assert not wrong, f"records that do not fit cursorpilot/records/models.py: {wrong[:5]}"
    return written


@dataclass
class PilotRun:
    code: int
    stdout: str
    stderr: str
    log: Path
    received: Path

    def records(self) -> list[dict]:
        path = self.log / "transcript.jsonl"
        out = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return checked(out)

    def of(self, type_: str) -> list[dict]:
        return [r for r in self.records() if r["type"] == type_]

    def sim(self) -> list[dict]:
        if not self.received.exists():
            return []
        return [json.loads(line) for line in self.received.read_text().splitlines()]

    def sim_events(self, event: str) -> list[dict]:
        return [r for r in self.sim() if r["event"] == event]


@pytest.fixture(autouse=True)
def _own_state_home(tmp_path_factory, monkeypatch):
    """Every test (and every cursor-pilot it starts) keeps its runs and the runs index in a folder of its own, never
    in the user's ~/.local/state (cursorpilot/records/pastruns.py)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # compiled policies are cached per prompt
    monkeypatch.delenv("CURSORPILOT_RUNS", raising=False)
    monkeypatch.setenv("CURSORPILOT_PAGE_AFTERLIFE", "30")  # an ended run's page answers 410 this long (human/ended.py), not an hour


@pytest.fixture
def pilot(tmp_path):
    """Run `cursor-pilot run ... -- COMMAND` as a real process with stdin closed (non-interactive)."""
    counter = {"n": 0}

    def run(command: list[str], *opts: str, rules: str | None = None, timeout: float = 60, env: dict | None = None) -> PilotRun:
        counter["n"] += 1
        log = tmp_path / f"run{counter['n']}"
        received = tmp_path / f"received{counter['n']}.jsonl"
        if "--timeout" not in opts:
            opts = (*opts, "--timeout", "40s")  # a hang fails the test with exit 4, not a pytest timeout
        args = [sys.executable, "-m", "cursorpilot", "run", "--log", str(log), "--quiet", *opts]
        if rules is not None:
            rules_file = tmp_path / f"rules{counter['n']}.yaml"
            rules_file.write_text(rules)
            args += ["--rules", str(rules_file)]
        base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")}
        full_env = {**base, "CURSORPILOT_SIM_RECORD": str(received), **(env or {})}
        proc = subprocess.run(
            [*args, "--", *command], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=tmp_path
        )
        return PilotRun(proc.returncode, proc.stdout, proc.stderr, log, received)

    return run
