"""The records of an agent driven over the Agent Client Protocol or its print mode (records/models.py gathers every
type). Which channel writes which is its registry entry's word (channels/registry.py, `records`), held to these
declarations by tests/unit/test_registry_one_entry.py; a new channel may declare its own in its folder with `declare`."""

from typing import Any

from cursorpilot.records.base import Rec, declare


# -- the Agent Client Protocol ----------------------------------------------------------------------------------------------
@declare("acp_initialized")
class AcpInitialized(Rec):
    """The agent answered `initialize`: its protocol version, whether it can load sessions, its name and version."""

    protocol_version: int | None
    load_session: bool | None
    agent: dict[str, Any] | None


@declare("acp_session")
class AcpSession(Rec):
    """The ACP session's id (`loaded`: an earlier session resumed)."""

    session_id: str | None
    loaded: bool | None


@declare("acp_update")
class AcpUpdate(Rec):
    """A session update: message and thought chunks (`text`), other updates as they came (`data`)."""

    update: str | None
    text: str | None = None
    data: dict[str, Any] | None = None


@declare("tool_call")
class ToolCall(Rec):
    """The agent reported a tool call or its progress: title, kind, status, raw input."""

    update: str | None
    tool_call_id: str | None
    title: str | None = None
    kind: str | None = None
    status: str | None
    raw_input: Any


@declare("plan")
class Plan(Rec):
    """The agent's plan (its entries as sent)."""

    entries: list[Any] | None


@declare("permission_request")
class PermissionRequest(Rec):
    """`session/request_permission`: the tool call, the options offered, its fingerprint and how often it was seen."""

    tool_call: dict[str, Any] | None
    options: list[dict[str, Any]] | None
    fingerprint: str | None
    seen: int | None = None


@declare("elicitation")
class Elicitation(Rec):
    """`elicitation/create`: a form (or a URL) the agent asks the user to fill."""

    message: str | None
    mode: dict[str, Any] | None


@declare("acp_extension")
class AcpExtension(Rec):
    """An extension request or notification (Cursor's `cursor/…`): the method and its parameters."""

    method: str | None
    params: Any
    notification: bool | None = None


@declare("acp_cancel")
class AcpCancel(Rec):
    """`session/cancel` was sent (the deadline, an escalation, a dry run)."""

    session_id: str | None


@declare("acp_not_json")
class AcpNotJson(Rec):
    """A line on the agent's stdout that is not JSON-RPC: dropped."""

    line: str | None


@declare("acp_refused")
class AcpRefused(Rec):
    """A request of the agent the client answered with a JSON-RPC error (a missing file, a path outside the working
    directory, the deny policy, a dry run): the method, what it named, the error code and the message the agent shows."""

    method: str | None
    target: str | None
    error: int | str | None
    message: str | None


@declare("acp_client_error")
class AcpClientError(Rec):
    """Something unforeseen failed while the client served a request: the method and the error, answered as an
    Internal error instead of a traceback."""

    method: str | None
    error: str | None


# -- the headless channel (docs/headless.md) ----------------------------------------------------------------------------
@declare("native_deny")
class NativeDeny(Rec):
    """The deny policy written into the agent's own deny list before it started (channels/agent/nativedeny.py): which agent's list,
    the file given to it (None: a private copy of the user's configuration, removed when the step ends), the entries;
    and where cursor-pilot's hook went beside it (`hook`; its decisions are `hook_decided` records), or why not."""

    step: int | None = None
    agent: str | None
    file: str | None
    deny: list[str] | None
    hook: str | None = None  # the settings file that holds cursor-pilot's hook, with the step's policy (runhook.py)
    no_hook: str | None = None  # why the hook was not installed


@declare("headless_session")
class HeadlessSession(Rec):
    """The agent's print mode started a turn on this session (its `system/init`): the session id, model and cwd."""

    session_id: str | None
    model: str | None
    cwd: str | None


@declare("headless_message")
class HeadlessMessage(Rec):
    """Text of the agent's message, one segment as its stream gave it."""

    text: str | None


@declare("headless_event")
class HeadlessEvent(Rec):
    """An event of the agent's stream the pilot does not read, kept as it came (or a request it answered with an error:
    `answered`)."""

    event: dict[str, Any] | None
    answered: str | None = None


@declare("headless_not_json")
class HeadlessNotJson(Rec):
    """A line on the agent's stdout that is not a JSON object (a torn line, a warning): recorded and skipped."""

    line: str | None


@declare("fs_read")
class FsRead(Rec):
    """The agent read a file through the pilot (`chars` read); `missing`: it did not exist and the agent got an empty
    file (Gemini CLI 0.61 can't take ACP's Resource not found there)."""

    path: str | None
    chars: int | None
    missing: bool | None = None


@declare("fs_write")
class FsWrite(Rec):
    """The agent wrote a file through the pilot, with the unified diff."""

    path: str | None
    diff: str | None


@declare("would_write")
class WouldWrite(Rec):
    """Dry run: a write the agent asked for, not made, with its diff."""

    path: str | None
    diff: str | None


@declare("terminal_started")
class TerminalStarted(Rec):
    """The agent started a command in a pilot-run terminal."""

    terminal_id: str | None
    command: str | None


@declare("terminal_exited")
class TerminalExited(Rec):
    """A pilot-run terminal's command ended: exit code and the tail of its output."""

    terminal_id: str | None
    command: str | None
    exit_code: int | None
    output: str | None
    truncated: bool | None
