"""The deny policy in the agent's own guard: before an agent starts, the policy's classes (decide/policy.py) go into its
native deny list, so that it refuses by itself even where the pilot is not asked. Always in a file of the run's, given
on the agent's command line or in its environment; the user's own settings are never edited.

- Claude Code: `permissions.deny` in a settings file passed with `--settings` (the flag's settings weigh more than
  the user's and project's files; a deny beats any allow). Tested against the real CLI (tests/agents_lane).
- Cursor CLI: `permissions.deny` (`Shell(base)`, `Read(glob)`, `Write(glob)`) in a copy of the user's cli-config.json
  in a folder of the run's, named by `CURSOR_CONFIG_DIR` (cursor.com/docs/cli/reference/configuration); the copy is
  removed when the step ends. Checked against the simulator only: cursor-agent can't be installed here.
- Gemini CLI: `tools.exclude` (`run_shell_command(prefix)`) in a system settings file named by
  `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, merged (union) with the user's own exclusions.
What a list can't say is left to the pilot's policy, which still judges every request: `NOT_MAPPED` says what and why.
A plan's `allow:` lifts a class here as it does in the policy.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.decide.policy import RULES

CLAUDE: dict[str, tuple[str, ...]] = {
    "rm_outside": ("Bash(rm:*)",),
    "delete": ("Bash(rm:*)", "Bash(rmdir:*)", "Bash(unlink:*)", "Bash(git clean -*f*)", "Bash(find * -delete*)"),
    "force_push": ("Bash(git push --force*)", "Bash(git push -f*)", "Bash(git push * --force*)", "Bash(git push * -f*)", "Bash(git push * +*)"),
    "reset_hard": ("Bash(git reset --hard*)", "Bash(git reset * --hard*)"),
    "mkfs": ("Bash(mkfs:*)", "Bash(mkfs.*)"),
    "dd": ("Bash(dd * of=*)", "Bash(dd of=*)"),
    "chmod_777": ("Bash(chmod -*R* 777*)", "Bash(chmod 777 -*R*)"),
    "secrets_read": ("Read(~/.ssh/**)", "Read(**/.env)", "Read(**/.env.*)", "Edit(**/.env)", "Edit(**/.env.*)", "Bash(cat .env*)"),
}
CURSOR: dict[str, tuple[str, ...]] = {
    "rm_outside": ("Shell(rm)",),
    "delete": ("Shell(rm)", "Shell(rmdir)", "Shell(unlink)"),
    "mkfs": ("Shell(mkfs)",),
    "secrets_read": ("Read(~/.ssh/**)", "Read(**/.env*)", "Write(**/.env*)"),
}
GEMINI: dict[str, tuple[str, ...]] = {
    "rm_outside": ("run_shell_command(rm)",),
    "delete": ("run_shell_command(rm)", "run_shell_command(rmdir)", "run_shell_command(unlink)", "run_shell_command(git clean -f)"),
    "force_push": ("run_shell_command(git push --force)", "run_shell_command(git push -f)"),
    "reset_hard": ("run_shell_command(git reset --hard)",),
    "mkfs": ("run_shell_command(mkfs)",),
    "chmod_777": ("run_shell_command(chmod -R 777)",),
}
NOT_MAPPED = {
    "sql_drop": "SQL travels inside a client's arguments or its stdin, which no agent's list reads",
    "curl_sh": "the agents judge each side of a pipe apart (`curl …` and `sh`); denying `sh` would deny every script",
    "dd (cursor, gemini)": "their lists match a command's first words: denying `dd` whole is more than `dd … of=`",
    "force_push, reset_hard, chmod_777 (cursor)": "Cursor's Shell() takes a command's base: denying `git` or `chmod` whole is far more",
    "secrets_read (gemini)": "Gemini excludes tools by name, not files",
}
LISTS = {"claude": CLAUDE, "cursor": CURSOR, "gemini": GEMINI}


def deny_list(agent: str, allow: frozenset[str] = frozenset()) -> list[str]:
    """The agent's native deny entries for the policy's classes the plan did not lift, in order, once each."""
    table = LISTS[agent]
    out: list[str] = []
    for rule in ["rm_outside", *RULES]:
        if rule in allow:
            continue
        out += [entry for entry in table.get(rule, ()) if entry not in out]
    if "delete" in allow and "rm_outside" not in allow:  # rm outside the project stays denied, but the list can't tell where
        out = [e for e in out if e not in table.get("rm_outside", ())]
    return out


@dataclass(frozen=True, slots=True)
class Written:
    agent: str
    file: str | None  # None: a private copy of the user's configuration (removed when the step ends)
    deny: list[str]


class Guard:
    """One step's native deny list: written before the agent starts, handed to it, and (the copies of the user's
    configuration) removed when the step ends."""

    def __init__(self, agent: str | None, base: Path, allow: frozenset[str], cwd: str):
        """agent: claude, cursor, gemini; None: none is written (--no-native-deny, an agent without a list)."""
        self.agent, self.base, self.allow, self.cwd = agent, base, allow, cwd
        self.path: Path | None = None
        self._private: str | None = None  # a folder holding a copy of the user's own configuration

    def write(self) -> Written | None:
        """Write the list; what was written, for the transcript (None: nothing to write)."""
        entries = deny_list(self.agent, self.allow) if self.agent in LISTS else []
        if not entries:
            return None
        if self.agent == "claude":
            self.path = self.base.with_suffix(".claude-settings.json")
            self.path.write_text(json.dumps({"permissions": {"deny": entries}}, indent=2) + "\n", encoding="utf-8")
        elif self.agent == "cursor":
            self._private = tempfile.mkdtemp(prefix="cursor-pilot-cursor-")
            config = _read_json(_cursor_config()) or {"version": 1, "editor": {"vimMode": False}, "permissions": {"allow": [], "deny": []}}
            perms = config.setdefault("permissions", {})
            perms["deny"] = [*perms.get("deny", []), *(e for e in entries if e not in perms.get("deny", []))]
            self.path = Path(self._private) / "cli-config.json"
            self.path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        else:
            self._private = tempfile.mkdtemp(prefix="cursor-pilot-gemini-")
            system = _read_json(Path(os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")) or {}
            tools = system.setdefault("tools", {})
            tools["exclude"] = [*tools.get("exclude", []), *(e for e in entries if e not in tools.get("exclude", []))]
            self.path = Path(self._private) / "settings.json"
            self.path.write_text(json.dumps(system, indent=2) + "\n", encoding="utf-8")
        return Written(self.agent, str(self.path) if self._private is None else None, entries)

    def settings_arg(self) -> str | None:
        return str(self.path) if self.agent == "claude" and self.path else None

    def env(self) -> dict[str, str]:
        if self.path is None or self._private is None:
            return {}
        return {"CURSOR_CONFIG_DIR": self._private} if self.agent == "cursor" else {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(self.path)}

    def remove(self) -> None:
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


def _cursor_config() -> Path:
    if os.environ.get("CURSOR_CONFIG_DIR"):
        return Path(os.environ["CURSOR_CONFIG_DIR"]) / "cli-config.json"
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / "cursor" / "cli-config.json"
    return Path.home() / ".cursor" / "cli-config.json"


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
