"""The real-agents lane: the real Claude Code, Codex and Gemini CLI, offline against fake model backends.

Install them once with `npm ci --prefix tests/agents` (pinned, about 900 MB, git-ignored); without them every test
here is skipped, saying so. Each test gets a fresh HOME and git working directory, a backend playing its script, and
runs `cursor-pilot run` against the agent as a user would; it checks what happened on disk and in the backend.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab  # noqa: E402

from tests.conftest import checked  # noqa: E402
from tests.fakes.llm_server import FakeLLM  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@dataclass
class AgentRun:
    code: int
    stdout: str
    log: Path
    work: Path
    health: dict
    requests: list[dict]
    seconds: float

    def records(self) -> list[dict]:
        path = self.log / "transcript.jsonl"
        return checked([json.loads(line) for line in path.read_text().splitlines()] if path.exists() else [])

    def of(self, type_: str) -> list[dict]:
        return [r for r in self.records() if r["type"] == type_]

    def answers(self) -> list[tuple[str, str]]:
        return [(a["rule_id"], a["reply"]) for a in self.of("answer")]

    def explain(self) -> str:
        lines = [self.stdout, f"health: {self.health}"]
        for r in self.records():
            if r["type"] in ("screen_state", "answer", "escalation", "policy_denied", "wait", "menu_choice", "keys_sent", "agent_started"):
                lines.append(f"{r['mono']:.2f} {r['type']} {r.get('state') or ''} {r.get('rule_id') or ''} "
                             f"{(r.get('prompt') or '')[-100:]!r} {r.get('reply') or r.get('keys') or r.get('why') or ''}")
        stderr = self.log / "agent-stderr.log"  # an ACP agent's own complaints (a tool that failed before it was asked)
        if stderr.exists():
            lines += ["agent stderr:", *stderr.read_text(errors="replace").splitlines()[-10:]]
        return "\n".join(lines)


@pytest.fixture
def agent(tmp_path):
    """Run cursor-pilot against a real agent: agent(name, script, *pilot_options, args=[...], rules=YAML, ...)."""
    started: list = []

    def run(name: str, script: list, *opts: str, args: tuple[str, ...] = (), rules: str | None = None, trust: bool = True,
            approve_key: bool = True, prepare=None, llm: FakeLLM | None = None, timeout: str = "150s",
            env: dict[str, str | None] | None = None, program: str | None = None) -> AgentRun:
        reason = agentlab.missing_reason(program or name)
        if reason:
            pytest.skip(reason)
        lab = agentlab.Lab(name, tmp_path / name, trust_folder=trust, approve_key=approve_key, program=program)
        if prepare is not None:
            prepare(lab.work)
        backend = lab.backend(script)
        started.append(backend)
        env = {k: v for k, v in {**lab.env(backend), **(env or {})}.items() if v is not None}  # None: taken out
        log = tmp_path / f"log-{name}"
        pilot_opts = list(opts)
        if rules is not None:
            (tmp_path / "rules.yaml").write_text(rules)
            pilot_opts += ["--rules", str(tmp_path / "rules.yaml")]
        if llm is not None:
            env.update(OPENAI_API_KEY="sk-test-pilot-key-000000000000", OPENAI_BASE_URL=f"{llm.url}/v1")
            pilot_opts += ["--provider", "openai"]
        elif "--provider" not in pilot_opts:
            pilot_opts += ["--provider", "rules"]
        command = [sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(log), "--timeout", timeout, *pilot_opts,
                   "--", *lab.command(*args)]
        t0 = time.monotonic()
        proc = subprocess.run(command, cwd=lab.work, env={**env, "PYTHONPATH": str(agentlab.ROOT)}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=400)
        seconds = time.monotonic() - t0
        health = backend.health()
        return AgentRun(proc.returncode, proc.stdout + proc.stderr, log, lab.work, health, backend.requests(), seconds)

    yield run
    for backend in started:
        backend.stop()


def pytest_collection_modifyitems(items):
    for item in items:
        if "agents_lane" in str(item.fspath):
            item.add_marker(pytest.mark.agents)
