"""The real agent CLIs, offline: a fake model backend playing a script, a fresh HOME and git working directory.

Used by the real-agents lane (tests/agents_lane/) and by tests/agents_lane/refresh_captures.py. The agents are
installed, pinned, by `npm ci --prefix tests/agents` (git-ignored); the fakes are in tests/fakes/agents/ (from
shared/agents-offline). Each agent gets the HOME, config and environment that README describes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "tests" / "agents" / "node_modules" / ".bin"
FAKES = ROOT / "tests" / "fakes" / "agents"
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli",
            "claude-agent-acp": "@zed-industries/claude-agent-acp", "codex-acp": "@zed-industries/codex-acp"}
BACKENDS = {"claude": "fake_anthropic.py", "codex": "fake_openai.py", "gemini": "fake_gemini.py"}
SCRUB = ("OPENAI_", "ANTHROPIC_", "CLAUDE", "GEMINI_", "GOOGLE_", "CODEX_", "CURSORPILOT_SIM")
# codex-acp 0.16 knows only the models of its own catalog (gpt-5.2, gpt-5.3-codex, gpt-5.4, gpt-5.4-mini, gpt-5.5): for
# any other it warns "Model metadata … not found" and offers no apply_patch tool, so it can't edit a file.
CODEX_ACP_MODEL = "gpt-5.3-codex"
CLAUDE_KEY = "sk-ant-api03-" + "offline0fake0key0for0tests0" * 2
CLAUDE_OAUTH = "sk-ant-oat01-" + "offline0fake0token0for0tests0" * 2  # a subscription's token: its usage limits show


def agent_path(agent: str) -> Path | None:
    path = BIN / agent
    return path if path.exists() else None


def missing_reason(agent: str) -> str | None:
    """Why the lane can't run this agent here, or None."""
    if agent_path(agent) is None:
        return f"{PACKAGES[agent]} is not installed: run `npm ci --prefix tests/agents` (about 900 MB)"
    return None


def version(agent: str) -> str:
    path = agent_path(agent)
    if path is None:
        return "not installed"
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60, env=_base_env(Path("/tmp")))
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "unknown"


def bundled_bwrap() -> Path | None:
    """The bubblewrap the pinned Codex CLI ships (@openai/codex-<platform>/vendor/<target>/codex-resources/bwrap)."""
    return next(iter(sorted((BIN.parent / "@openai").glob("codex-*/vendor/*/codex-resources/bwrap"))), None)


def with_bwrap(path: str) -> str:
    """PATH for codex-acp, which checks an edit by reading the file in its sandbox: it takes bwrap from PATH, else from
    codex-resources/ beside its own binary, which its npm package does not ship (the Codex CLI's does). With neither
    that read panics ("bubblewrap is unavailable"), apply_patch fails before any permission is asked, and the model
    goes on. A bwrap already on PATH stays first; where there is none, the pinned Codex CLI's own comes after it."""
    bundled = bundled_bwrap()
    if bundled is None or shutil.which("bwrap", path=path):
        return path
    return os.pathsep.join([p for p in path.split(os.pathsep) if p] + [str(bundled.parent)])


def _base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUB)}
    env.update(HOME=str(home), TERM="xterm-256color", NO_COLOR="", FORCE_COLOR="1", LANG="C.UTF-8")
    env.pop("NO_COLOR")
    return env


@dataclass
class Backend:
    """One fake model API on 127.0.0.1, playing a script of assistant turns."""

    agent: str
    script: list
    cwd: Path
    log: Path
    delay: float = 0.0  # seconds before each main reply (a working screen stays up that long)
    proc: subprocess.Popen | None = None
    port: int = 0

    def start(self) -> "Backend":
        script = self.log.with_suffix(".script.yaml")
        script.write_text(yaml.safe_dump(self.script, sort_keys=False, allow_unicode=True))
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKES / BACKENDS[self.agent]), "--script", str(script), "--cwd", str(self.cwd), "--log", str(self.log),
             *(["--delay", str(self.delay)] if self.delay and self.agent == "claude" else [])],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().split()
        if len(first) != 2 or first[0] != "PORT":
            self.stop()
            raise RuntimeError(f"the fake backend for {self.agent} did not start")
        self.port = int(first[1])
        return self

    def health(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
            return json.loads(r.read())

    def requests(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


@dataclass
class Lab:
    """A fresh HOME and git working directory for one agent, wired to its backend."""

    agent: str
    root: Path
    trust_folder: bool = True
    approve_key: bool = True  # Claude: the custom API key already approved (else its menu shows)
    program: str | None = None  # the program run, when not the agent's own CLI (claude-agent-acp, codex-acp)
    home: Path = field(init=False)
    work: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.work)], check=True)
        subprocess.run(["git", "-C", str(self.work), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init"],
                       check=True)

    def backend(self, script: list, delay: float = 0.0) -> Backend:
        return Backend(self.agent, script, self.work, self.root / "backend.jsonl", delay).start()

    def env(self, backend: Backend) -> dict[str, str]:
        env = _base_env(self.home)
        url = f"http://127.0.0.1:{backend.port}"
        if self.agent == "claude":
            self._claude_config()
            env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=CLAUDE_KEY, DISABLE_TELEMETRY="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
        elif self.agent == "codex":
            codex_home = self.home / ".codex"
            self._codex_config(codex_home, url)
            env.update(FAKE_OPENAI_KEY="sk-fake-offline", CODEX_HOME=str(codex_home))
            if self.program == "codex-acp":
                # Codex will not link its sandbox helper (codex-linux-sandbox) under the temp dir ("Refusing to create
                # helper binaries under temporary dir"), and without it bwrap can't read a file apply_patch updates.
                # The lab lives under /tmp: the agent's temp dir is moved into the lab, so its CODEX_HOME is not in it.
                (self.root / "tmp").mkdir(exist_ok=True)
                env["TMPDIR"] = str(self.root / "tmp")
                env["PATH"] = with_bwrap(env.get("PATH", ""))
        else:
            self._gemini_config()
            env.update(GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="fake-gemini-key", NO_BROWSER="1")
        return env

    def command(self, *args: str) -> list[str]:
        path = agent_path(self.program or self.agent)
        assert path is not None, missing_reason(self.program or self.agent)
        return [str(path), *args]

    # -- each agent's files (shared/agents-offline/README.md) --------------------------------------------------------
    def _claude_config(self) -> None:
        config = {
            "hasCompletedOnboarding": True, "numStartups": 5, "autoUpdates": False,
            "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]] if self.approve_key else [], "rejected": []},
            "hasSeenAutoDefaultNotice": True, "hasSeenAutoDefaultNudge": True, "projects": {},
        }
        if self.trust_folder:
            config["projects"][str(self.work)] = {"hasTrustDialogAccepted": True, "allowedTools": [], "hasCompletedProjectOnboarding": True}
        (self.home / ".claude.json").write_text(json.dumps(config))
        (self.home / ".claude").mkdir(exist_ok=True)
        (self.home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}))

    def _codex_config(self, codex_home: Path, url: str) -> None:
        codex_home.mkdir(exist_ok=True)
        trust = f'\n[projects."{self.work}"]\ntrust_level = "trusted"\n' if self.trust_folder else ""
        model = CODEX_ACP_MODEL if self.program == "codex-acp" else "gpt-5-codex"
        (codex_home / "config.toml").write_text(
            f'model = "{model}"\nmodel_provider = "fake"\napproval_policy = "on-request"\nsandbox_mode = "read-only"\n'
            "check_for_update_on_startup = false\n[model_providers.fake]\nname = \"Fake\"\n"
            f'base_url = "{url}/v1"\nenv_key = "FAKE_OPENAI_KEY"\nwire_api = "responses"\n{trust}'
        )

    def _gemini_config(self) -> None:
        folder = self.home / ".gemini"
        folder.mkdir(exist_ok=True)
        (folder / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        }))
        if self.trust_folder:
            (folder / "trustedFolders.json").write_text(json.dumps({str(self.work): "TRUST_FOLDER"}))

