"""cursor-pilot's hook (commands/hook.py) in the agent's settings for one step, beside its native deny list
(nativedeny.py), so that the run's policy decides every tool call the agent makes, even the ones it asks nobody about.

The run's policy is pinned in a file of the step's (the hook reads it with `--policy`: it never compiles), and the hook
appends each decision to another (`--record`), which the step's loop reads into the transcript as `hook_decided`
records (`decisions()`). Where each agent takes a step's hooks, never changing the user's own files:
- Claude Code: `hooks.PreToolUse` in the settings file the run already hands it with `--settings` (nativedeny.py).
- Gemini CLI: `hooks.BeforeTool` in a private Gemini home of the step's, named by `GEMINI_CLI_HOME`: the user's
  ~/.gemini entries linked into it (credentials, trusted folders, history stay where they are) and settings.json a
  copy of the user's with the hook added (project hooks still run: Gemini concatenates hook lists). Not its system
  settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`): 0.61 skips a system file that root does not own, in a folder root does
  not own alone. Gemini runs hooks only in a folder it trusts.
- Cursor: no place of a run's own. It reads hooks from the project's `.cursor/hooks.json` and `~/.cursor/hooks.json`
  only, and no variable moves them. The step adds its entries to the project's file as `hook install` does and puts
  the file's very bytes back when the step ends (a run killed first: `cursor-pilot hook uninstall cursor` does it, and
  so does the next run's step, which takes a run's leftover out before it puts its own in); a project where `hook
  install cursor` already put a hook is left as it is (that hook guards it; nothing is recorded).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.records.reading import Tail
from cursorpilot.channels.contract import Job
from cursorpilot.channels.host import StepHost
from cursorpilot.decide.compiled import Policy
from cursorpilot.decide.policyfile import dump
from cursorpilot.errors import BadInput
from cursorpilot.hooks import install
from cursorpilot.hooks.calls import AGENTS, RECORD, SETTINGS
from cursorpilot.records import models as R

GEMINI_HOME = "GEMINI_CLI_HOME"


@dataclass(frozen=True, slots=True)
class Hooked:
    """Where a step's hook went: the settings file that holds it (None: not installed, `why`), the policy it reads."""

    where: str | None
    policy: str
    why: str = ""


class RunHook:
    """One step's hook: its policy and record files in the run's folder, its place in the agent's settings, undone
    when the step ends."""

    def __init__(self, agent: str, base: Path, cwd: str):
        self.agent, self.cwd, self.base = agent, cwd, base
        self.policy_path = base.with_suffix(".hook-policy.yaml")
        self.record_path = base.with_suffix(".hook-decisions.jsonl")
        self.settings: Path | None = None  # Gemini: the settings of the step's private home
        self._private: str | None = None  # Gemini: that home (GEMINI_CLI_HOME), removed when the step ends
        self._project: Path | None = None  # Cursor: the project whose .cursor/hooks.json holds the step's hook
        self._decided = Tail(self.record_path)

    def prepare(self, policy: Policy, prompt: str, redact: Callable[[str], str]) -> str:
        """The policy (redacted as the transcript is: a run's folder holds no secret) and the (empty) record written;
        the hook's command line."""
        assert self.agent in AGENTS
        self.policy_path.write_text(redact(dump(policy, prompt)), encoding="utf-8")
        self.record_path.write_text("", encoding="utf-8")
        return install.command(self.agent, None, self.policy_path, self.record_path)

    def install(self, cmd: str) -> Hooked:
        """Gemini's and Cursor's place for the hook (Claude's is nativedeny's settings file: `claude_hooks`)."""
        if self.agent == "gemini":
            return self._gemini_home(cmd)
        project = Path(self.cwd)
        record = (project / SETTINGS["cursor"]).with_name(RECORD)
        if record.exists() and "--record" not in str(_read(record).get("command")):
            return Hooked(None, str(self.policy_path), "`cursor-pilot hook install cursor` already guards this project")
        try:
            where = install.install("cursor", project, cmd)
        except (BadInput, OSError) as exc:
            return Hooked(None, str(self.policy_path), f"the project's Cursor hooks can't take it: {exc}")
        self._project = project
        return Hooked(str(where), str(self.policy_path))

    def _gemini_home(self, cmd: str) -> Hooked:
        """A private Gemini home for the step: every entry of the user's ~/.gemini linked into it (credentials, trusted
        folders, history stay where they are), but settings.json, a copy of the user's with the hook added."""
        real = Path(os.environ.get(GEMINI_HOME) or Path.home()) / ".gemini"
        mine = real / "settings.json"
        try:
            data = json.loads(mine.read_text(encoding="utf-8")) if mine.is_file() else {}
        except (OSError, ValueError) as exc:
            return Hooked(None, str(self.policy_path), f"your Gemini settings {mine} can't be copied as JSON: {exc}")
        hooks = data.setdefault("hooks", {}) if isinstance(data, dict) else None
        if not isinstance(hooks, dict):
            return Hooked(None, str(self.policy_path), f"your Gemini settings {mine}: their 'hooks' is not an object")
        for event, entries in install.entries("gemini", cmd).items():
            hooks[event] = [*(hooks.get(event) or []), *entries]
        self._private = tempfile.mkdtemp(prefix="cursor-pilot-gemini-")
        own = Path(self._private) / ".gemini"
        own.mkdir()
        for entry in real.iterdir() if real.is_dir() else ():
            if entry.name != "settings.json":
                (own / entry.name).symlink_to(entry)
        self.settings = own / "settings.json"
        self.settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return Hooked(str(self.settings), str(self.policy_path))

    def claude_hooks(self, cmd: str) -> dict:
        return install.entries("claude", cmd)

    def env(self) -> dict[str, str]:
        return {GEMINI_HOME: self._private} if self._private is not None else {}

    def remove(self) -> None:
        """The project's Cursor hooks file as it was; the record, read by now, deleted (it holds the agent's commands
        unredacted: the transcript keeps them redacted). The policy and Gemini's settings stay in the run's folder."""
        if self._project is not None:
            install.uninstall("cursor", self._project)
            self._project = None
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)  # (the links, never what they point to)
            self._private = None
        self.record_path.unlink(missing_ok=True)

    def decisions(self) -> list[dict]:
        """The decisions the hook appended since the last call (whole lines only: one being written waits)."""
        return self._decided.read()


def screen_agent(command: list[str]) -> str | None:
    """Which agent a program on the screen channel is, by its name or what npx runs (Claude Code, Gemini CLI, the
    Cursor CLI); None for any other program, which gets no hook."""
    names = [os.path.basename(a.rstrip("/")).lower() for a in command[:3]]
    if any(n in ("claude", "claude-code") for n in names):
        return "claude"
    if any(n.startswith("gemini") and "acp" not in n for n in names):
        return "gemini"
    return "cursor" if names and names[0] in ("agent", "cursor-agent") else None


class ScreenHook:
    """The hook for an agent on the screen channel (`run -- claude`, a `cursor:` or `drive:` step), where no deny list
    is written: Claude's in a settings file of the step's given with `--settings`, Gemini's and Cursor's as RunHook
    puts them."""

    def __init__(self, agent: str, base: Path, cwd: str):
        self.hook = RunHook(agent, base, cwd)

    def start(self, command: list[str], policy: Policy, prompt: str, redact: Callable[[str], str]) -> tuple[list[str], dict[str, str], Hooked]:
        """The hook written; the program's command line and the environment it adds, and where the hook went."""
        cmd = self.hook.prepare(policy, prompt, redact)
        if self.hook.agent != "claude":
            return command, self.hook.env(), self.hook.install(cmd)
        settings = self.hook.base.with_suffix(".claude-settings.json")
        settings.write_text(json.dumps({"hooks": self.hook.claude_hooks(cmd)}, indent=2) + "\n", encoding="utf-8")
        return [*command, "--settings", str(settings)], {}, Hooked(str(settings), str(self.hook.policy_path))

    def pass_on(self, host: StepHost) -> None:
        """The hook's decisions since the last look, into the run's records (host.hook_decided)."""
        for found in self.hook.decisions():
            host.hook_decided(found)

    def remove(self) -> None:
        self.hook.remove()


def screen_hook(job: Job, host: StepHost, env: dict[str, str]) -> tuple[list[str], ScreenHook | None]:
    """A screen step's command line, with the hook where the program is a known agent (unless --no-native-deny); the
    environment it needs added to `env`, and where it went recorded (`native_deny`, with no deny list)."""
    agent = screen_agent(job.command) if job.ctx.native_deny else None
    policy = host.policy_now() if agent is not None else None
    if agent is None or policy is None:
        return job.command, None
    suffix = f"-{job.index:02d}" if job.index > 1 else ""
    hook = ScreenHook(agent, job.ctx.log_dir / f"native-deny{suffix}", host.workdir(job))
    redact = job.ctx.redactor.text
    command, more, hooked = hook.start(job.command, policy, redact(job.governing_prompt), redact)
    env.update(more)
    host.tx.write(R.NativeDeny(step=job.index, agent=agent, file=None, deny=[], hook=hooked.where, no_hook=hooked.why or None))
    return command, hook


def _read(path: Path) -> dict:
    """A JSON object from a file (install's record of what it found), or {}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
