"""The deny policy in the agent's own guard: before an agent starts, the policy's classes (decide/policy.py) go into its
native deny list, so that it refuses by itself even where the pilot is not asked. Always in a file of the run's, given
on the agent's command line or in its environment; the user's own settings are never edited.

- Claude Code: `permissions.deny` in a settings file passed with `--settings` (the flag's settings weigh more than
  the user's and project's files; a deny beats any allow). Tested against the real CLI (tests/agents_lane).
- Cursor CLI: `permissions.deny` (`Shell(base)`, `Read(glob)`, `Write(glob)`) in a copy of the user's cli-config.json
  in a folder of the run's, named by `CURSOR_CONFIG_DIR` (cursor.com/docs/cli/reference/configuration); the copy is
  removed when the step ends. Checked against the simulator only: cursor-agent can't be installed here.
- Gemini CLI: deny rules of its Policy Engine (`commandPrefix`, `commandRegex`, `argsPattern`) in a TOML file given with
  `--policy` (user tier, beside the user's own). Not `tools.exclude`: in 0.61 an entry like `run_shell_command(rm)` there
  becomes a deny rule for a tool of that literal name, which matches nothing, and the setting is deprecated. A policy
  file that does not validate is dropped whole by Gemini, so this one is written by one function and tested against
  the real CLI (tests/agents_lane).
What a list can't say is left to the pilot's policy, which still judges every request: `NOT_MAPPED` says what and why.
A plan's `allow:` lifts a class here as it does in the policy. Beside the list goes cursor-pilot's hook, with the run's
compiled policy (runhook.py): Claude's in the same settings file, Gemini's and Cursor's where runhook.py says.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.channels.agent.runhook import Hooked, RunHook
from cursorpilot.decide.compiled import Policy
from cursorpilot.decide.policy import RULES
from cursorpilot.hooks.calls import AGENTS

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
# Gemini's rules for run_shell_command: `prefix:` a command's first words (each part of a compound command is judged),
# `regex:` a JavaScript regex matched from the start of the command; `read:` a pattern on read_file's arguments (JSON).
GEMINI: dict[str, tuple[str, ...]] = {
    "rm_outside": ("prefix:rm",),
    "delete": ("prefix:rm", "prefix:rmdir", "prefix:unlink", "regex:git clean -[a-zA-Z]*f", "regex:find .* -delete"),
    "force_push": ("regex:git push.*(--force| -[a-zA-Z]*f| [+])",),
    "reset_hard": ("regex:git reset.* --hard",),
    "sql_drop": ("regex:.*(DROP (TABLE|DATABASE|SCHEMA|INDEX|VIEW)|TRUNCATE )",),
    "mkfs": ("regex:mkfs",),
    "dd": ("regex:dd .*of=",),
    "curl_sh": ("regex:(curl|wget) .*[|] *(sudo )?(ba|z|da|k)?sh",),
    "chmod_777": ("regex:chmod .*(-[a-zA-Z]*R.* 777|777 .*-[a-zA-Z]*R)",),
    "secrets_read": (r"regex:.*([.]ssh/|[.]env\b)", 'read:"(file_path|absolute_path)":"[^"]*([.]env|/[.]ssh/)'),
}
NOT_MAPPED = {
    "sql_drop (claude, cursor)": "their rules match a command's words from its start; the SQL travels inside a client's arguments or stdin",
    "curl_sh (claude, cursor)": "they judge each side of a pipe apart (`curl …` and `sh`); denying `sh` would deny every script",
    "dd (cursor)": "Cursor's Shell() takes a command's base: denying `dd` whole is more than `dd … of=`",
    "force_push, reset_hard, chmod_777 (cursor)": "Cursor's Shell() takes a command's base: denying `git` or `chmod` whole is far more",
    "codex": "Codex keeps its exec policy in files of its CODEX_HOME, the user's: nothing is written for it",
}
LISTS = {"claude": CLAUDE, "cursor": CURSOR, "gemini": GEMINI}


def agent_of(command: list[str]) -> str | None:
    """Whose deny list an ACP command line can take: Gemini CLI, Claude Code through claude-agent-acp, the Cursor CLI;
    None for the rest (codex-acp, anything unknown)."""
    names = [os.path.basename(a.rstrip("/")).lower() for a in command[:3]]
    if any(n.startswith("gemini") for n in names):
        return "gemini"
    if any(n == "claude-agent-acp" for n in names):
        return "claude"
    return "cursor" if names and names[0] in ("agent", "cursor-agent") else None


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
    hook: Hooked | None = None  # cursor-pilot's hook, beside the list (None: not asked for)


class Guard:
    """One step's native deny list: written before the agent starts, handed to it, and (the copies of the user's
    configuration) removed when the step ends."""

    def __init__(self, agent: str | None, base: Path, allow: frozenset[str], cwd: str):
        """agent: claude, cursor, gemini; None: none is written (--no-native-deny, an agent without a list)."""
        self.agent, self.base, self.allow, self.cwd = agent, base, allow, cwd
        self.path: Path | None = None
        self._private: str | None = None  # a folder holding a copy of the user's own configuration
        self.hook = RunHook(agent, base, cwd) if agent in AGENTS else None

    def write(self, policy: Policy | None = None, prompt: str = "", redact: Callable[[str], str] = str) -> Written | None:
        """Write the list, and the hook with `policy` (None: no hook); what was written, for the transcript (None:
        nothing to write)."""
        agent = self.agent
        entries = deny_list(agent, self.allow) if agent in LISTS else []
        hook = self.hook if policy is not None else None
        cmd = hook.prepare(policy, prompt, redact) if hook is not None and policy is not None else None
        if agent is None or not (entries or cmd):
            return None
        hooked = hook.install(cmd) if hook is not None and cmd is not None and agent != "claude" else None
        if self.agent == "claude":
            self.path = self.base.with_suffix(".claude-settings.json")
            settings: dict = {"permissions": {"deny": entries}}
            if hook is not None and cmd is not None:
                settings["hooks"] = hook.claude_hooks(cmd)
                hooked = Hooked(str(self.path), str(hook.policy_path))
            self.path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        elif self.agent == "cursor":
            self._private = tempfile.mkdtemp(prefix="cursor-pilot-cursor-")
            config = _read_json(_cursor_config()) or {"version": 1, "editor": {"vimMode": False}, "permissions": {"allow": [], "deny": []}}
            perms = config.setdefault("permissions", {})
            perms["deny"] = [*perms.get("deny", []), *(e for e in entries if e not in perms.get("deny", []))]
            self.path = Path(self._private) / "cli-config.json"
            self.path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        else:
            self.path = self.base.with_suffix(".gemini-policy.toml")
            self.path.write_text(gemini_policy(self.allow), encoding="utf-8")
        return Written(agent, str(self.path) if self._private is None else None, entries, hooked)

    def decisions(self) -> list[dict]:
        """The hook's decisions since the last call (runhook.py)."""
        return self.hook.decisions() if self.hook is not None else []

    def settings_arg(self) -> str | None:
        """Claude Code's settings file (`--settings`)."""
        return str(self.path) if self.agent == "claude" and self.path else None

    def args(self) -> list[str]:
        """What goes on the agent's command line: Claude's --settings, Gemini's --policy."""
        if self.path is None:
            return []
        return {"claude": ["--settings", str(self.path)], "gemini": ["--policy", str(self.path)]}.get(self.agent or "", [])

    def env(self) -> dict[str, str]:
        own = {"CURSOR_CONFIG_DIR": self._private} if self.agent == "cursor" and self._private else {}
        return {**own, **(self.hook.env() if self.hook is not None else {})}

    def remove(self) -> None:
        if self.hook is not None:
            self.hook.remove()
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


def gemini_policy(allow: frozenset[str] = frozenset()) -> str:
    """Gemini's Policy Engine rules for the policy's classes, as TOML: one deny rule per entry, at the top priority of
    its tier, saying which class refused. Patterns go in literal strings (no escapes), so none may hold a quote."""
    blocks = []
    for entry in deny_list("gemini", allow):
        rule = next(r for r in [*RULES, "rm_outside"] if entry in GEMINI.get(r, ()))
        how, _, what = entry.partition(":")
        assert "'" not in what and "\n" not in what, entry
        tool, key = {"prefix": ("run_shell_command", "commandPrefix"), "regex": ("run_shell_command", "commandRegex"),
                     "read": ("read_file", "argsPattern")}[how]
        blocks.append(f"[[rule]]\ntoolName = \"{tool}\"\n{key} = '{what}'\ndecision = \"deny\"\npriority = 999\n"
                      f"denyMessage = \"cursor-pilot's deny policy refuses this ({rule})\"\n")
    return "# written by cursor-pilot for one run: the deny policy as Gemini CLI's own rules (nativedeny.py)\n\n" + "\n".join(blocks)


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
