"""`cursor-pilot hook install AGENT` / `uninstall`: the hook written into a project's own settings for work without a
run, and taken out again exactly.

- Claude Code: `.claude/settings.local.json`, the project's personal settings (Claude Code keeps it out of git), not
  the shared `settings.json`: the hook's command names this machine's `cursor-pilot` and a prompt that is the
  developer's own. One `PreToolUse` entry for the tools that run commands or write files and every MCP tool.
- Gemini CLI: `.gemini/settings.json`, one `BeforeTool` entry (shell, file writes, MCP tools).
- Cursor: `.cursor/hooks.json`, `beforeShellExecution`, `beforeMCPExecution` and `preToolUse` (its file tools).

Install keeps what the file held before (`cursor-pilot-hook.json` beside it); uninstall puts those very bytes back
when the file is as install left it. A file changed since loses only the entries whose command is the hook's, and is
written again as JSON (said so).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.errors import BadInput
from cursorpilot.hooks.calls import RECORD, SETTINGS


@dataclass(frozen=True, slots=True)
class Place:
    """Where an agent reads a project's hooks, and the entries the hook adds: (event, matcher or None)."""

    file: str
    events: tuple[tuple[str, str | None], ...]


TARGETS = {
    "claude": Place(SETTINGS["claude"], (("PreToolUse", "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"),)),
    "gemini": Place(SETTINGS["gemini"], (("BeforeTool", "run_shell_command|write_file|replace|mcp_.*"),)),
    "cursor": Place(SETTINGS["cursor"], (("beforeShellExecution", None), ("beforeMCPExecution", None), ("preToolUse", None))),
}
TIMEOUT = 30  # seconds the agent waits for the hook (it refuses by itself after commands/hook.DEADLINE)


def program() -> list[str]:
    """This cursor-pilot, as a command an agent can run from any folder."""
    beside = Path(sys.executable).parent / "cursor-pilot"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("cursor-pilot")
    return [found] if found else [sys.executable, "-m", "cursorpilot"]


def command(agent: str, prompt: str | None, policy: Path | None, record: Path | None = None) -> str:
    """The hook's command line: the prompt file or the policy file by its absolute path (the agent runs the hook from
    wherever it is), a prompt's text as it is; `record`: the file a run reads the hook's decisions from."""
    words = [*program(), "hook", agent]
    for option, path in (("--policy", policy), ("--record", record)):
        if path is not None:
            words += [option, str(path.expanduser().resolve())]
    if prompt is not None:
        as_file = Path(prompt).expanduser()
        words += ["--prompt", str(as_file.resolve()) if as_file.is_file() else prompt]
    return shlex.join(words)


def entries(agent: str, cmd: str) -> dict[str, list[dict]]:
    """The hook's entries for an agent's `hooks` object, by event (what install adds to a project's file, and a run to
    its own settings: channels/agent/runhook.py)."""
    return {event: [_entry(agent, event, matcher, cmd)] for event, matcher in TARGETS[agent].events}


def _entry(agent: str, event: str, matcher: str | None, cmd: str) -> dict:
    if agent == "cursor":
        return {"command": cmd}
    hook: dict = {"type": "command", "command": cmd, "timeout": TIMEOUT if agent == "claude" else TIMEOUT * 1000}
    if agent == "gemini":
        hook["name"] = "cursor-pilot"
    return {"matcher": matcher, "hooks": [hook]}


def install(agent: str, project: Path, cmd: str) -> Path:
    """The hook written into the project's settings for this agent (an earlier install of it replaced); the file."""
    target = TARGETS[agent]
    path = project / target.file
    record = path.parent / RECORD
    if record.exists():
        uninstall(agent, project)
    before = path.read_text(encoding="utf-8") if path.exists() else None
    data = _parsed(path, before)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise BadInput(f"{path}: its 'hooks' is not an object; fix it first")
    if agent == "cursor":
        data.setdefault("version", 1)
    for event, matcher in target.events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise BadInput(f"{path}: its hooks.{event} is not a list; fix it first")
        entries.append(_entry(agent, event, matcher, cmd))
    made_dir = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    after = json.dumps(data, indent=2) + "\n"
    path.write_text(after, encoding="utf-8")
    record.write_text(json.dumps({"file": path.name, "before": before, "after": _sha(after), "command": cmd, "made_dir": made_dir},
                                 indent=2) + "\n", encoding="utf-8")
    return path


def uninstall(agent: str, project: Path) -> tuple[Path, str]:
    """What install wrote, taken out: the file's old bytes put back where it is as install left it, else the hook's
    entries removed. The file, and how it was done."""
    path = project / TARGETS[agent].file
    record_path = path.parent / RECORD
    record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.exists() else {}
    now = path.read_text(encoding="utf-8") if path.exists() else None
    if record and now is not None and _sha(now) == record.get("after"):
        if record.get("before") is None:
            path.unlink()
        else:
            path.write_text(record["before"], encoding="utf-8")
        how = "restored as it was before install"
    elif now is not None:
        data = _parsed(path, now)
        removed = _remove(data, record.get("command"))
        if removed:
            path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        how = f"changed since install: {removed} hook entr{'y' if removed == 1 else 'ies'} of cursor-pilot's removed, the rest kept"
    else:
        how = "no settings file: nothing to remove"
    if record_path.exists():
        record_path.unlink()
    if record.get("made_dir") and path.parent.exists() and not any(path.parent.iterdir()):
        path.parent.rmdir()
    return path, how


def _remove(data: dict, cmd: str | None) -> int:
    """The hook's entries taken out of the settings (by its recorded command, else any `cursor-pilot ... hook` one);
    lists and the `hooks` object left empty by that go too."""
    def ours(entry: object) -> bool:
        if not isinstance(entry, dict):
            return False
        commands = [entry.get("command")] + [h.get("command") for h in entry.get("hooks") or [] if isinstance(h, dict)]
        return any(isinstance(c, str) and (c == cmd or (cmd is None and " hook " in c and "cursor" in c)) for c in commands)

    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        entries = hooks[event]
        if isinstance(entries, list):
            kept = [e for e in entries if not ours(e)]
            removed += len(entries) - len(kept)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def _parsed(path: Path, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadInput(f"{path}: not JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not a JSON object; fix it first")
    return data


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
