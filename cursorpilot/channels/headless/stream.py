"""Each agent's print mode, PURE: the command line of one turn, its NDJSON event stream read into typed facts, the
answer to a permission request as the line the agent reads on stdin, and its failures classified.

Two dialects:
- **claude**: `claude -p --output-format stream-json --verbose --input-format stream-json --permission-prompt-tool stdio`.
  The prompt is the first line on stdin; permissions arrive as `control_request` (subtype `can_use_tool`: `tool_name`,
  `input`, `tool_use_id`) and are answered with a `control_response` carrying `{"behavior": "allow", "updatedInput": …}`
  or `{"behavior": "deny", "message": …}`: the protocol Anthropic's Agent SDKs speak to the CLI.
- **cursor**: `agent -p --output-format stream-json … -- PROMPT` (shared/CURSOR_CLI.md §3–4). Newer builds ask with
  `interaction_query` lines and read the answer on stdin; older ones reject by themselves (`rejected` in the tool call's
  result), which is reported, never taken for success.
A turn is one process; the next turn resumes the session (`--resume ID`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from cursorpilot.errors import ExitCode
from cursorpilot.channels.headless.facts import (ControlAsked, Fact, NotJson, Other, PermissionAsked, RateLimited, Result, Said, SessionInit,
                                        ToolDone, ToolUse)

DIALECTS = ("claude", "cursor")
PRINT_FLAGS = ("-p", "--print", "--output-format", "--input-format", "--permission-prompt-tool", "--resume")


def dialect_of(argv: list[str]) -> str:
    """Which print mode a command speaks: Claude Code's when the program (or what npx runs) is claude, else Cursor's
    (agent, cursor-agent, the simulator)."""
    names = [a.rstrip("/").rsplit("/", 1)[-1].lower() for a in argv[:3]]
    return "claude" if any(n.startswith("claude") for n in names) else "cursor"


def turn_argv(dialect: str, base: list[str], prompt: str, resume: str | None, cwd: str,
              settings: str | None = None) -> tuple[list[str], str | None]:
    """The command line of one turn, and the first line for its stdin (None: stdin stays open, empty, for answers)."""
    if dialect == "claude":
        argv = [*base, "-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                "--permission-prompt-tool", "stdio", *(["--settings", settings] if settings else []), *(["--resume", resume] if resume else [])]
        return argv, json.dumps({"type": "user", "message": {"role": "user", "content": prompt}})
    return [*base, "-p", "--output-format", "stream-json", "--workspace", cwd, *(["--resume", resume] if resume else []), "--", prompt], None


# -- the stream ---------------------------------------------------------------------------------------------------------
def read(dialect: str, line: str) -> tuple[list[Fact], dict | None]:
    """One line of the agent's stdout: its facts, and the event itself (None: not a JSON object)."""
    try:
        event = json.loads(line)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        return [NotJson(line[:2000])], None
    try:
        facts = (_claude if dialect == "claude" else _cursor)(event)
    except (AttributeError, TypeError, KeyError, ValueError):  # a known type in a shape nobody expected: kept, never fatal
        facts = [Other(event)]
    return facts, event


def _claude(e: dict) -> list[Fact]:
    kind, sub = e.get("type"), e.get("subtype")
    if kind == "system" and sub == "init":
        return [SessionInit(str(e.get("session_id") or ""), str(e.get("model") or ""), str(e.get("cwd") or ""))]
    if kind == "assistant":
        out: list[Fact] = []
        for block in (e.get("message") or {}).get("content") or []:
            if block.get("type") == "text" and block.get("text"):
                out.append(Said(block["text"]))
            elif block.get("type") == "tool_use":
                out.append(ToolUse(str(block.get("id") or ""), str(block.get("name") or ""), block.get("input") or {}))
        return out
    if kind == "user":
        content = (e.get("message") or {}).get("content")
        rejected = {m.get("id") for m in e.get("tool_result_meta") or []
                    if ((m.get("permission_decision") or {}).get("decision") == "reject")}
        return [ToolDone(str(b.get("tool_use_id") or ""), not b.get("is_error"), _text(b.get("content")) if b.get("tool_use_id") in rejected else None,
                         _text(b.get("content"))[:2000])
                for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(content, list) else []
    if kind == "control_request":
        request = e.get("request") or {}
        if request.get("subtype") == "can_use_tool":
            return [PermissionAsked(str(e.get("request_id")), str(request.get("tool_name") or ""), request.get("input") or {},
                                    request.get("tool_use_id"))]
        return [ControlAsked(str(e.get("request_id")), str(request.get("subtype") or ""))]
    if kind == "result":
        return [_result(e)]
    if kind == "rate_limit_event":
        info = e.get("rate_limit_info") or {}
        resets = info.get("resetsAt")
        return [RateLimited(str(info.get("status") or ""), float(resets) if isinstance(resets, (int, float)) else None,
                            str(info.get("rateLimitType") or ""))]
    return [Other(e)]


_CURSOR_TOOLS = {"shell": "Shell", "read": "Read", "edit": "Edit", "write": "Write", "delete": "Delete", "ls": "List", "glob": "Glob",
                 "grep": "Grep", "semSearch": "Search", "updateTodos": "Todos", "webFetch": "WebFetch", "mcp": "Mcp"}


def _cursor(e: dict) -> list[Fact]:
    kind, sub = e.get("type"), e.get("subtype")
    if kind == "system" and sub == "init":
        return [SessionInit(str(e.get("session_id") or ""), str(e.get("model") or ""), str(e.get("cwd") or ""))]
    if kind == "assistant":
        return [Said(b["text"]) for b in (e.get("message") or {}).get("content") or [] if b.get("type") == "text" and b.get("text")]
    if kind in ("user", "thinking"):
        return []  # the prompt's echo; the model's thinking
    if kind == "tool_call":
        (key, call), = (e.get("tool_call") or {}).items()
        name = _CURSOR_TOOLS.get(key.removesuffix("ToolCall"), key)
        if sub == "started":
            return [ToolUse(str(e.get("call_id") or ""), name, call.get("args") or {})]
        result = call.get("result") or {}
        rejected = result.get("rejected")
        return [ToolDone(str(e.get("call_id") or ""), "success" in result,
                         str((rejected or {}).get("reason") or "rejected") if rejected is not None else None, json.dumps(result)[:2000])]
    if kind == "interaction_query" and sub == "request":
        query_type, query = str(e.get("query_type") or ""), e.get("query") or {}
        inner = query.get(query_type) or {}
        tool = _CURSOR_TOOLS.get(query_type.removesuffix("RequestQuery"), query_type.removesuffix("Query"))
        return [PermissionAsked(f"{query_type}:{query.get('id')}", tool, inner.get("args") or {})]
    if kind == "result":
        return [_result(e)]
    return [Other(e)]


def _result(e: dict) -> Result:
    cost = e.get("total_cost_usd")
    return Result(str(e.get("session_id") or ""), str(e.get("result") or ""), bool(e.get("is_error")), str(e.get("subtype") or ""),
                  e.get("usage") if isinstance(e.get("usage"), dict) else None, float(cost) if isinstance(cost, (int, float)) else None)


def _text(content) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return str(content or "")


# -- answers on stdin ---------------------------------------------------------------------------------------------------
def reply_line(dialect: str, request: dict, allow: bool, message: str) -> str:
    """The answer to a permission request, as the line the agent reads on its stdin."""
    if dialect == "claude":
        tool = request.get("request") or {}
        verdict = {"behavior": "allow", "updatedInput": tool.get("input") or {}} if allow else {"behavior": "deny", "message": message}
        return json.dumps({"type": "control_response", "response": {"subtype": "success", "request_id": request.get("request_id"),
                                                                    "response": verdict}})
    query_type = str(request.get("query_type") or "")
    answer = {"approved": {}} if allow else {"rejected": {"reason": message}}
    return json.dumps({"type": "interaction_query", "subtype": "response", "query_type": query_type,
                       "response": {"id": (request.get("query") or {}).get("id"), query_type.removesuffix("Query") + "Response": answer}})


def error_line(dialect: str, request: dict, message: str) -> str:
    """A request the pilot does not serve, answered with an error (Claude's control protocol; Cursor asks none)."""
    return json.dumps({"type": "control_response", "response": {"subtype": "error", "request_id": request.get("request_id"), "error": message}})


# -- failures -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AgentFailure:
    kind: str  # authentication | usage_limit | unknown_model | workspace_trust | connection
    code: ExitCode
    reason: str


_FAILURES = (
    ("unknown_model", ExitCode.USAGE, re.compile(r"Cannot use this model|issue with the selected model|model[^\n]{0,60}\b(not found|does not "
                                                 r"exist|may not exist|is not supported)|\b(invalid|unknown) model\b", re.I)),
    ("authentication", ExitCode.FAILED, re.compile(r"Authentication required|Not logged in|/login\b|Invalid API key|authentication_error"
                                                  r"|\b401\b|cursor-agent login|Press any key to sign in|invalid x-api-key", re.I)),
    ("usage_limit", ExitCode.FAILED, re.compile(r"usage limit|rate.limit|\b429\b|quota|Too many free trial|credit balance is too low"
                                              r"|hit your .{0,20}limit", re.I)),
    ("workspace_trust", ExitCode.HUMAN_NEEDED, re.compile(r"Workspace Trust Required|trust (this|the) (folder|workspace|directory)", re.I)),
    ("connection", ExitCode.FAILED, re.compile(r"Connection failed|Unable to connect|ECONNREFUSED|ENOTFOUND|FailedToOpenSocket"
                                              r"|connection (refused|error)|fetch failed|network error", re.I)),
)
_HINT = {"authentication": "log the agent in (or give it its API key)", "usage_limit": "the agent hit its usage limit (docs/turns.md)",
         "unknown_model": "give a model the agent knows", "workspace_trust":
         "the agent asks whether to trust this folder: trust it yourself (e.g. pass --trust to cursor-agent) and run again",
         "connection": "the agent can't reach its model service"}
_MODELS = re.compile(r"Available models:\s*([^\n]+)", re.I)


def classify(text: str) -> AgentFailure | None:
    """What the agent's own words say went wrong (its result, its stderr, lines that are not JSON), or None."""
    for kind, code, rx in _FAILURES:
        m = rx.search(text)
        if m:
            line = next((line.strip() for line in text.splitlines() if rx.search(line)), m.group(0))[:300]
            models = _MODELS.search(text)
            extra = f" (it offers: {models.group(1).strip()[:300]})" if kind == "unknown_model" and models else ""
            return AgentFailure(kind, code, f"{kind.replace('_', ' ')}: {line}{extra}; {_HINT[kind]}")
    return None
