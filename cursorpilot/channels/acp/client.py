"""The SDK's Client: each request of the agent handed to the step as plain JSON, each answer or refusal sent back the
way the protocol says.

Refusals are JSON-RPC errors with a message the agent can show: a missing file or an unknown terminal is ACP's
"Resource not found" (-32002); a path outside the working directory, a command or write the deny policy refuses, or a
dry run is "Invalid params" (-32602: a value this client does not take), with the reason as the message (agents show
the message, not the data). What fails while it is done (a file that can't be read, a command that can't start) and
anything unforeseen is an Internal error (-32603) that says what failed; the unforeseen is also recorded. Never a
traceback on the console.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from cursorpilot.channels.acp.facts import FAILED, NOT_FOUND, ExtensionAsked, Fact, FormAsked, PermissionAsked, ServeFailed, Update
from cursorpilot.channels.acp.terminals import Terminal, Terminals, UnknownTerminal

RESOURCE_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32002, -32602, -32603


def refusal(error: str, message: str, target: str) -> RequestError:
    if error == NOT_FOUND:
        return RequestError(RESOURCE_NOT_FOUND, message, {"uri": target})
    return RequestError(INTERNAL_ERROR if error == FAILED else INVALID_PARAMS, message, {"details": message})


def dump(obj: Any) -> Any:
    """An SDK model as the plain JSON it came as."""
    if obj is None:
        return None
    as_json = getattr(obj, "model_dump", None)
    return as_json(mode="json", by_alias=True, exclude_none=True) if as_json else obj


def _served(method: str):
    """Every way a request can fail ends as a JSON-RPC error the agent gets, and a record: never a traceback."""

    def wrap(fn):
        @functools.wraps(fn)
        async def serve(self: Client, *args, **kwargs):
            try:
                return await fn(self, *args, **kwargs)
            except RequestError:
                raise
            except UnknownTerminal as exc:
                raise RequestError(RESOURCE_NOT_FOUND, f"Resource not found: no terminal {exc.args[0]}", {"uri": exc.args[0]}) from None
            except Exception as exc:
                self.step.feed(ServeFailed(method, f"{type(exc).__name__}: {exc}"))  # the pilot records it
                raise RequestError(INTERNAL_ERROR, f"{method} failed: {exc}", {"details": str(exc)}) from None

        return serve

    return wrap


class Served(Protocol):
    """What the client hands the agent's requests to: the ACP step's loop (acp/loop.py), known here only by what it
    does, so that the client and the loop don't import each other."""

    terminals: Terminals

    async def ask(self, fact_for: Callable[[int], Fact]) -> dict: ...

    def feed(self, fact: Fact) -> None: ...

    async def read_file(self, path: str, line: int | None, limit: int | None) -> str: ...

    async def write_file(self, path: str, content: str) -> None: ...

    async def run_command(self, command: str, args: list[str], env: dict[str, str], cwd: str | None, limit: int | None) -> Terminal: ...

    def terminal_done(self, term: Terminal) -> None: ...


class Client:
    def __init__(self, step: Served):
        self.step = step

    def on_connect(self, conn) -> None:
        pass

    @_served("session/request_permission")
    async def request_permission(self, session_id: str, tool_call, options, **kwargs):
        reply = await self.step.ask(lambda token: PermissionAsked(token, dump(tool_call), [dump(o) for o in options]))
        return RequestPermissionResponse.model_validate(reply)

    @_served("elicitation/create")
    async def create_elicitation(self, message: str, mode, **kwargs):
        return await self.step.ask(lambda token: FormAsked(token, message, dump(mode) or {}))

    async def complete_elicitation(self, elicitation_id: str, **kwargs) -> None:
        return None

    @_served("extension")
    async def ext_method(self, method: str, params: dict) -> dict:
        return await self.step.ask(lambda token: ExtensionAsked(token, method, params))

    async def ext_notification(self, method: str, params: dict) -> None:
        self.step.feed(ExtensionAsked(0, method, params, notification=True))

    async def session_update(self, session_id: str, update, **kwargs) -> None:
        self.step.feed(Update(dump(update)))

    @_served("fs/read_text_file")
    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs):
        return ReadTextFileResponse(content=await self.step.read_file(path, line, limit))

    @_served("fs/write_text_file")
    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs):
        await self.step.write_file(path, content)
        return None

    @_served("terminal/create")
    async def create_terminal(self, session_id: str, command: str, args=None, env=None, cwd=None, output_byte_limit=None, **kwargs):
        variables = {e.name: e.value for e in env or []}
        term = await self.step.run_command(command, list(args or []), variables, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=term.id)

    @_served("terminal/output")
    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs):
        term = self.step.terminals.get(terminal_id)
        status = TerminalExitStatus(exit_code=term.exit_code) if term.exit_code is not None else None
        self.step.terminal_done(term)
        return TerminalOutputResponse(output=term.text(), truncated=term.truncated, exit_status=status)

    @_served("terminal/wait_for_exit")
    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs):
        term = self.step.terminals.get(terminal_id)
        code = await term.wait()
        self.step.terminal_done(term)
        return WaitForTerminalExitResponse(exit_code=code)

    @_served("terminal/kill")
    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs):
        self.step.terminals.get(terminal_id).kill()
        return None

    @_served("terminal/release")
    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs):
        self.step.terminal_done(self.step.terminals.release(terminal_id))
        return None
