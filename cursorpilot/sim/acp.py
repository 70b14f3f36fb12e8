"""An ACP agent simulator on the official SDK's agent side: `cursor-pilot sim acp SCENARIO`.

Each session/prompt plays the scenario's next turn, a list of steps:
  say: TEXT                          an agent_message_chunk
  plan: [ENTRY, ...]                 a plan update
  tool: {title, kind, rawInput, content: TEXT, locations: [PATH], diff: {path, old, new},
         options: standard|gemini|[...], write: {path, content}, run: COMMAND, cwd: DIR}
                                     a tool call (described as the agent chooses: Gemini CLI sends no rawInput, its
                                     command as the title and text or a diff as content); asks permission (unless
                                     permission: false), then on allow does it: writes through the client's
                                     fs/write_text_file (reading the file first, as Gemini does), runs through terminal/*
  read: PATH                         fs/read_text_file
  terminal_output: ID                terminal/output of a terminal (an unknown one: the client must say not found)
  elicit: {message, schema}          elicitation/create (a form)
  ask_question: {questions: [...]}   Cursor's cursor/ask_question (sent as Cursor sends it, no "_" prefix)
  create_plan: {name, plan, todos}   Cursor's cursor/create_plan
  sleep: SECONDS                     work that takes a while
  garbage: TEXT                      a line on stdout that is not JSON-RPC
  crash: CODE                        exit at once, mid-turn
A scenario may also say `stall_initialize: true` (never answers initialize) and `load_session: true`.
What the simulator received is appended to --record FILE (or $CURSORPILOT_SIM_RECORD) as JSON lines.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import TYPE_CHECKING, Any, cast

from cursorpilot.sim.common import Recorder

if TYPE_CHECKING:  # (named for the type checker: this module imports the SDK inside the functions that use it)
    from acp.interfaces import Agent, Client

OPTIONS = {
    "standard": [{"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
                 {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
                 {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"}],
    # Gemini CLI lists "for this session" first: position means nothing
    "gemini": [{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
               {"optionId": "proceed_once", "name": "Allow once", "kind": "allow_once"},
               {"optionId": "cancel", "name": "No, suggest changes", "kind": "reject_once"}],
}


def main(scenario: dict, record: Recorder) -> int:
    try:
        asyncio.run(_run(scenario, record))
    except KeyboardInterrupt:
        return 130
    return 0


async def _run(scenario: dict, record: Recorder) -> None:
    from acp import run_agent

    # The SDK's Agent protocol lists every method of the protocol, but its router looks each one up with getattr and
    # answers "method not found" (or a default) for those an agent lacks: a partial agent is the SDK's own design
    await run_agent(cast("Agent", _Agent(scenario, record)), use_unstable_protocol=True)


class _Agent:
    def __init__(self, scenario: dict, record: Recorder):
        self.sc = scenario
        self.record = record
        self.turns = list(scenario.get("turns") or [])
        self._client: Client | None = None
        self.cancelled = False
        self.last_prompt = ""

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        """The client's side of the connection: the SDK hands it over (on_connect) before it routes any request."""
        if self._client is None:
            raise RuntimeError("acp sim: a request came before the connection")
        return self._client

    async def _send_raw(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request under Cursor's own method name (cursor/ask_question, no "_" prefix): the SDK's ext_method
        would put an "_" before it, so this goes through the connection the SDK's AgentSideConnection holds."""
        from acp.agent.connection import AgentSideConnection  # the class run_agent builds (its name in `acp` is deprecated)

        conn = self.client
        if not isinstance(conn, AgentSideConnection):
            raise TypeError(f"acp sim: {method} needs the SDK's AgentSideConnection, got {type(conn).__name__}")
        return await conn._conn.send_request(method, params)

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs):
        from acp.schema import AgentCapabilities, Implementation, InitializeResponse

        self.record("initialize", client=getattr(client_info, "name", None),
                    fs=bool(client_capabilities and client_capabilities.fs and client_capabilities.fs.write_text_file),
                    terminal=bool(client_capabilities and client_capabilities.terminal))
        if self.sc.get("stall_initialize"):
            await asyncio.sleep(3600)
        return InitializeResponse(protocol_version=protocol_version, agent_info=Implementation(name="acp-sim", version="1.0"),
                                  agent_capabilities=AgentCapabilities(load_session=bool(self.sc.get("load_session"))))

    async def authenticate(self, method_id: str, **kwargs):
        return None

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs):
        from acp.schema import NewSessionResponse

        sid = "sess-" + uuid.uuid4().hex[:8]
        self.record("new_session", session_id=sid, cwd=cwd)
        return NewSessionResponse(session_id=sid)

    async def load_session(self, cwd: str, session_id: str, mcp_servers=None, **kwargs):
        from acp.schema import LoadSessionResponse

        self.record("load_session", session_id=session_id)
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs) -> None:
        self.cancelled = True
        self.record("cancel", session_id=session_id)

    async def prompt(self, session_id: str, prompt, **kwargs):
        from acp.schema import PromptResponse

        text = "".join(getattr(block, "text", "") for block in prompt)
        self.last_prompt = text
        self.record("prompt", text=text)
        self.cancelled = False
        steps = self.turns.pop(0) if self.turns else [{"say": "Done."}]
        for step in steps:
            if self.cancelled:
                return PromptResponse(stop_reason="cancelled")
            await self._step(session_id, step)
        return PromptResponse(stop_reason="cancelled" if self.cancelled else "end_turn")

    async def _step(self, sid: str, step: dict) -> None:
        from acp import update_agent_message_text

        if "say" in step:
            await self.client.session_update(sid, update_agent_message_text(step["say"].replace("{last}", self.last_prompt)))
        elif "plan" in step:
            from acp import plan_entry, update_plan

            await self.client.session_update(sid, update_plan([plan_entry(e) for e in step["plan"]]))
        elif "tool" in step:
            await self._tool(sid, step["tool"])
        elif "read" in step:
            try:
                got = await self.client.read_text_file(session_id=sid, path=step["read"])
                self.record("read", path=step["read"], content=got.content)
            except Exception as exc:
                self.record("read_refused", path=step["read"], error=str(exc), code=getattr(exc, "code", None))
        elif "terminal_output" in step:
            try:
                await self.client.terminal_output(session_id=sid, terminal_id=step["terminal_output"])
                self.record("terminal_output", terminal_id=step["terminal_output"])
            except Exception as exc:
                self.record("terminal_refused", terminal_id=step["terminal_output"], error=str(exc), code=getattr(exc, "code", None))
        elif "elicit" in step:
            from acp.schema import ElicitationFormSessionMode, ElicitationSchema

            e = step["elicit"]
            mode = ElicitationFormSessionMode(session_id=sid, requested_schema=ElicitationSchema.model_validate(e["schema"]))
            answer = await self.client.create_elicitation(message=e["message"], mode=mode)
            self.record("elicitation", response=answer.model_dump(mode="json", by_alias=True, exclude_none=True))
        elif "ask_question" in step:
            got = await self._send_raw("cursor/ask_question", {"toolCallId": "q1", **step["ask_question"]})
            self.record("ask_question", response=got)
        elif "create_plan" in step:
            got = await self._send_raw("cursor/create_plan", {"toolCallId": "p1", **step["create_plan"]})
            self.record("create_plan", response=got)
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "garbage" in step:
            sys.stdout.write(step["garbage"] + "\n")
            sys.stdout.flush()
        elif "crash" in step:
            self.record("crash", code=step["crash"])
            os._exit(int(step["crash"]))

    async def _tool(self, sid: str, tool: dict) -> None:
        from acp import start_tool_call, update_tool_call
        from acp.schema import PermissionOption, ToolCallUpdate

        call_id = "call-" + uuid.uuid4().hex[:6]
        raw = tool.get("rawInput")
        await self.client.session_update(sid, start_tool_call(call_id, tool["title"], kind=tool.get("kind", "execute"),
                                                              status="pending", raw_input=raw))
        allowed = True
        if tool.get("permission", True):
            options = tool.get("options", "standard")
            options = OPTIONS[options] if isinstance(options, str) else options
            call = {"toolCallId": call_id, "title": tool["title"], "kind": tool.get("kind", "execute"), "rawInput": raw,
                    "content": _content(tool), "locations": [{"path": path} for path in tool.get("locations") or []] or None}
            response = await self.client.request_permission(
                session_id=sid, tool_call=ToolCallUpdate.model_validate({k: v for k, v in call.items() if v is not None}),
                options=[PermissionOption.model_validate(o) for o in options])
            outcome = response.outcome.model_dump(mode="json", by_alias=True, exclude_none=True)
            chosen = next((o for o in options if o["optionId"] == outcome.get("optionId")), None)
            self.record("permission", title=tool["title"], outcome=outcome.get("outcome"), option=outcome.get("optionId"),
                        kind=chosen and chosen["kind"])
            allowed = chosen is not None and chosen["kind"].startswith("allow")
            if outcome.get("outcome") == "cancelled":
                self.cancelled = True
        if not allowed:
            await self.client.session_update(sid, update_tool_call(call_id, status="failed"))
            return
        if "write" in tool:
            try:
                try:  # Gemini reads a file before it writes it: a missing one must come back as not found
                    await self.client.read_text_file(session_id=sid, path=tool["write"]["path"])
                except Exception as exc:
                    self.record("read_refused", path=tool["write"]["path"], error=str(exc), code=getattr(exc, "code", None))
                await self.client.write_text_file(session_id=sid, path=tool["write"]["path"], content=tool["write"]["content"])
                self.record("wrote", path=tool["write"]["path"])
            except Exception as exc:
                self.record("write_refused", path=tool["write"]["path"], error=str(exc), code=getattr(exc, "code", None))
        if "run" in tool:
            await self._run_command(sid, tool["run"], tool.get("cwd"))
        await self.client.session_update(sid, update_tool_call(call_id, status="completed"))

    async def _run_command(self, sid: str, command: str, cwd: str | None = None) -> None:
        try:
            term = await self.client.create_terminal(session_id=sid, command="sh", args=["-c", command], cwd=cwd)
        except Exception as exc:
            self.record("run_refused", command=command, error=str(exc), code=getattr(exc, "code", None))
            return
        done = await self.client.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
        out = await self.client.terminal_output(session_id=sid, terminal_id=term.terminal_id)
        await self.client.release_terminal(session_id=sid, terminal_id=term.terminal_id)
        self.record("ran", command=command, exit_code=done.exit_code, output=out.output)



def _content(tool: dict) -> list[dict] | None:
    """The tool call's content as the agent would send it: a text, or a diff."""
    out = []
    if tool.get("content"):
        out.append({"type": "content", "content": {"type": "text", "text": tool["content"]}})
    if tool.get("diff"):
        d = tool["diff"]
        out.append({"type": "diff", "path": d["path"], "oldText": d.get("old"), "newText": d.get("new", "")})
    return out or None
