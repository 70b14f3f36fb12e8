"""Each agent's hook protocol, both ways, PURE: the event an agent writes on the hook's stdin read into one `Call`, and a
verdict written back as that agent's answer (its stdout, its stderr, its exit code).

- Claude Code, `PreToolUse` (checked against the pinned 2.1.330's own strings): `tool_name`, `tool_input`, `cwd`; the
  answer is `hookSpecificOutput.permissionDecision` allow/deny/ask with `permissionDecisionReason` (the model reads
  it on a deny), exit 0. Exit 2 blocks too, its stderr the reason: what a hook that fails answers. No output at all
  leaves the call to Claude's own permissions (an allow would skip them, so it is given only for a call the user's
  words grant).
- Gemini CLI, `BeforeTool` (0.61's bundle, docs/hooks/reference.md and its hook runner): `tool_name`, `tool_input`,
  `mcp_context`, `cwd`; the answer is `decision` allow/deny/ask with `reason` (sent to the model as the tool's error);
  exit 2 blocks with stderr as the reason.
- Cursor: `beforeShellExecution` (`command`, `cwd`), `beforeMCPExecution` (`tool_name`, `tool_input`, a JSON text),
  `beforeReadFile`, and `preToolUse` (`tool_name`, `tool_input`) where the build has it; the answer is `permission`
  allow/deny/ask with `user_message` and `agent_message`. `afterFileEdit` comes after the edit and can block
  nothing: it is answered with nothing. Not checked against a real Cursor (none can be installed here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

AGENTS = ("claude", "gemini", "cursor")
SETTINGS = {"claude": ".claude/settings.local.json", "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json"}  # hook install's
RECORD = "cursor-pilot-hook.json"  # beside each: what hook install found there before
HOOK_FILES = (*SETTINGS.values(), ".claude/settings.json", *(f"{f.rsplit('/', 1)[0]}/{RECORD}" for f in SETTINGS.values()))
REFUSALS = ("cursor-pilot refused", "cursor-pilot hook could not decide")  # how the hook's deny reasons begin (verdict.py, failed())
_AGENT_SAID = re.compile(r"^(PreToolUse:\S+ hook [a-z ]*: )?")  # how Claude Code 2.1.330 words a hook's deny in a rejected call
ALLOW, DENY, ASK, PASS = "allow", "deny", "ask", "pass"  # PASS: nothing to say, the agent's own permissions apply
SHELL, WRITE, REMOVE, MCP, OTHER = "shell", "write", "remove", "mcp", "other"

# tool names, by agent: what runs a command, what writes a file (and the input key of its path), what removes one
_SHELL = {"Bash", "run_shell_command", "Shell", "Terminal", "run_terminal_cmd"}
_WRITE = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",  # Claude
          "write_file": "file_path", "replace": "file_path", "edit": "file_path",  # Gemini
          "StrReplace": "path", "TabWrite": "path", "edit_file": "target_file", "search_replace": "file_path"}  # Cursor
_REMOVE = {"Delete": "path", "delete_file": "target_file"}  # Cursor's file removal
_PATH_KEYS = ("file_path", "path", "target_file", "notebook_path", "filePath")


class Malformed(ValueError):
    """The event is not one this hook can read: it is answered deny."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as the hook reads it: the agent's event and tool, what kind of call it is, and what it names: the
    command, the files it writes or removes, or (an MCP tool, anything else) its input's text. `cwd`: where it runs;
    `root`: the project, against which the user's paths are read."""

    agent: str
    event: str
    tool: str
    kind: str
    command: str = ""
    paths: tuple[str, ...] = ()
    text: str = ""
    cwd: str = ""
    root: str = ""


def read(agent: str, raw: str, env: Mapping[str, str]) -> Call:
    """The event on stdin as a Call; Malformed where it is not JSON, not an object, or lacks what its event needs."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise Malformed(f"the event is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise Malformed("the event is not a JSON object")
    cwd = _text(data, "cwd") or ""
    if agent == "cursor":
        return _cursor(data, cwd)
    if agent not in AGENTS:
        raise Malformed(f"no hook protocol for {agent!r}")
    event = _text(data, "hook_event_name") or ("PreToolUse" if agent == "claude" else "BeforeTool")
    tool = _text(data, "tool_name")
    if tool is None:
        raise Malformed("the event names no tool (tool_name)")
    if not cwd:
        raise Malformed("the event names no working directory (cwd)")
    project = env.get("CLAUDE_PROJECT_DIR" if agent == "claude" else "GEMINI_PROJECT_DIR") or cwd
    mcp = tool.startswith("mcp__") or (agent == "gemini" and (tool.startswith("mcp_") or bool(data.get("mcp_context"))))
    return _tool(agent, event, tool, data.get("tool_input"), cwd, project, mcp)


def _cursor(data: dict, cwd: str) -> Call:
    event = _text(data, "hook_event_name") or ""
    roots = data.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else cwd
    cwd = cwd or root
    if event == "beforeShellExecution":
        command = _text(data, "command")
        if command is None or not cwd:
            raise Malformed("beforeShellExecution without its command or cwd")
        return Call("cursor", event, "Shell", SHELL, command=command, cwd=cwd, root=root or cwd)
    if event in ("beforeMCPExecution", "preToolUse"):
        tool = _text(data, "tool_name")
        if tool is None or not cwd:
            raise Malformed(f"{event} without its tool_name or a workspace root")
        raw = data.get("tool_input")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = {"input": raw}
        return _tool("cursor", event, tool, raw, cwd, root or cwd, event == "beforeMCPExecution")
    if event in ("beforeReadFile", "afterFileEdit", "beforeSubmitPrompt", "stop"):
        return Call("cursor", event, event, OTHER, cwd=cwd, root=root or cwd)
    raise Malformed(f"an event this hook does not know: {event!r}")


def _tool(agent: str, event: str, tool: str, raw: object, cwd: str, root: str, mcp: bool) -> Call:
    if not isinstance(raw, dict):
        raise Malformed(f"{tool}: its tool_input is not an object")
    if mcp:
        return Call(agent, event, tool, MCP, text=input_text(raw), cwd=cwd, root=root)
    if tool in _SHELL:
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise Malformed(f"{tool}: no command in its input")
        where = raw.get("dir_path") or raw.get("directory") or raw.get("cwd")
        return Call(agent, event, tool, SHELL, command=command, cwd=where if isinstance(where, str) and where else cwd, root=root)
    for table, kind in ((_WRITE, WRITE), (_REMOVE, REMOVE)):
        if tool in table:
            path = raw.get(table[tool]) or next((raw[k] for k in _PATH_KEYS if isinstance(raw.get(k), str) and raw[k]), None)
            if not isinstance(path, str) or not path:
                raise Malformed(f"{tool}: no file path in its input")
            return Call(agent, event, tool, kind, paths=(path,), text=input_text(raw), cwd=cwd, root=root)
    return Call(agent, event, tool, OTHER, text=input_text(raw), cwd=cwd, root=root)


def _text(data: dict, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def input_text(raw: dict) -> str:
    """A tool's input as lines of `key: value` (nested values as JSON), the way a person reads it."""
    lines = []
    for key, value in raw.items():
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        lines.append(f"{key}: {shown[:4000]}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class HookOutput:
    """What the hook writes and how it exits."""

    stdout: str
    stderr: str = ""
    code: int = 0


def answer(agent: str, event: str, decision: str, reason: str) -> HookOutput:
    """A verdict in the agent's own words."""
    if agent == "claude":
        if decision == PASS:
            return HookOutput("")
        out = {"hookEventName": event or "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}
        return HookOutput(json.dumps({"hookSpecificOutput": out}))
    if agent == "gemini":
        return HookOutput("{}" if decision == PASS else json.dumps({"decision": decision, "reason": reason}))
    if decision == PASS or event == "afterFileEdit":
        return HookOutput("{}")
    if event == "beforeReadFile":
        return HookOutput(json.dumps({"permission": decision}))
    return HookOutput(json.dumps({"permission": decision, "user_message": reason, "agent_message": reason}))


def refused_by_hook(said: str) -> bool:
    """Whether the words a refused call came back with are this hook's deny reason (as the agent passes it on), not
    the agent's own refusal: a pilot then takes the refusal for the run's policy (its record is the hook's)."""
    text = said.strip().strip("`").strip()
    return text[_AGENT_SAID.match(text).end():].startswith(REFUSALS)  # type: ignore[union-attr]


def failed(agent: str, event: str, reason: str) -> HookOutput:
    """A hook that could not decide answers deny: its answer on stdout, and (where the agent's protocol has it) the
    reason on stderr with the exit code that blocks by itself, so that even a reader of the exit code alone blocks."""
    said = f"cursor-pilot hook could not decide, so it refuses: {reason}"
    reply = answer(agent, event or ("PreToolUse" if agent == "claude" else "BeforeTool"), DENY, said)
    return HookOutput(reply.stdout, said + "\n", 0 if agent == "cursor" else 2)
