"""The ACP channel's loop: an agent driven over the Agent Client Protocol (JSON-RPC on its stdio), with the official SDK.

The loop does the I/O and nothing else: it starts the agent, speaks the protocol (acp/client.py serves the agent's
requests, acp/wire.py its stdio), reads and writes files (acp/fs.py), runs commands (acp/terminals.py), asks the
decision path and humans off the event loop, and hands every outcome to the pilot (acp/pilot.py) as a fact. It
carries out the effects the pilot returns, until the pilot ends the step.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, assert_never

from cursorpilot import __version__
from cursorpilot.channels import reaper
from cursorpilot.channels.acp import facts
from cursorpilot.channels.acp.client import Client, dump, refusal
from cursorpilot.channels.acp.fs import Workspace
from cursorpilot.channels.acp.launchers import misread
from cursorpilot.channels.acp.pilot import AcpPilot
from cursorpilot.channels.acp.terminals import Terminal, Terminals
from cursorpilot.channels.acp.wire import StderrLog, pump
from cursorpilot.channels.agent import nativedeny
from cursorpilot.channels.agent.loop import AgentLoop, stop
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.channels.program_env import last_words
from cursorpilot.errors import ExitCode

if TYPE_CHECKING:
    from acp import ClientSideConnection

CANCEL_GRACE = 2.0  # after session/cancel, how long the agent may take to end its turn


class AcpLoop(AgentLoop[facts.Fact, facts.Own]):
    def __init__(self, job: Job):
        assert job.step.acp is not None  # (the registry hands this channel its own steps only)
        super().__init__(job, name="acp-answerer", agent=nativedeny.agent_of(job.command))
        ctx = self.ctx
        self.pilot: AcpPilot = AcpPilot(self.pilot_config(job.step.acp), self.counts)
        self.workspace = Workspace(self.cwd)
        self.terminals = Terminals(ctx.clock.monotonic)
        self.stderr = StderrLog(ctx.log_dir / f"agent-stderr{self.suffix}.log")
        self._conn: ClientSideConnection | None = None  # (the SDK is imported when the agent starts)
        self._waiting: dict[int, asyncio.Future] = {}  # the agent's requests, by token, until the pilot answers them
        self._tokens = 0
        self._turn: asyncio.Task | None = None
        self._cancelling: asyncio.Task | None = None
        self._said_reason: str | None = None  # the step's reason with the agent's last words, redacted as they were
        self._unstarted: str | None = None  # why the agent could not be started

    # -- public -------------------------------------------------------------------------------------------------------
    @property
    def conn(self) -> ClientSideConnection:
        """The connection to the agent, once it started (every request goes after that)."""
        assert self._conn is not None, "the agent has not been started"
        return self._conn

    def _outcome(self) -> tuple[ExitCode, str]:
        if self._unstarted is not None:
            return ExitCode.USAGE, self._unstarted
        return self.pilot.exit_code, self._said_reason if self._said_reason is not None else self.pilot.reason

    async def _main(self) -> None:
        from acp import connect_to_agent

        env, hidden = self.host.env()
        for name in misread(self.job.command, env):
            del env[name]
            hidden.append(name)
        await self.write_deny_list()
        env.update(self.guard.env())
        command = [*self.job.command, *([] if self.guard.agent == "claude" else self.guard.args())]
        try:
            proc = await self.start(command, env)
        except OSError as exc:
            self._unstarted = f"cannot start {self.job.command[0]!r}: {exc.strerror}"
            return
        self.feed(facts.Started(proc.pid, tuple(command), tuple(hidden)))
        assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
        reader = asyncio.StreamReader(limit=16 << 20)
        wire = asyncio.create_task(pump(proc.stdout, reader, lambda line: self.feed(facts.NotJson(line))))
        errors = asyncio.create_task(self.stderr.copy(proc.stderr))
        self._conn = connect_to_agent(Client(self), proc.stdin, reader, use_unstable_protocol=True)
        try:
            self.spawn(self._initialize())
            await self.until_ended()
            await self._wind_down()
        finally:
            self.child = await stop(proc)
            wire.cancel()
            try:
                await asyncio.wait_for(errors, 1.0)  # the rest of its stderr, for the last words
            except (TimeoutError, asyncio.CancelledError, OSError):  # its log failing changes nothing here
                pass
            self.terminals.kill_all()
        reason = self.pilot.reason
        self.feed(facts.Exited(self.child, self.ctx.redactor.text(last_words(self.stderr.lines()) or "")))
        if self.pilot.reason != reason:  # it took the agent's last words on stderr: the whole reason is redacted, as they were
            self._said_reason = self.ctx.redactor.text(self.pilot.reason)

    def _tick(self) -> facts.Tick:
        return facts.Tick(self.terminals.output_at(), self.ctx.clock.utcnow().astimezone())

    async def _wind_down(self) -> None:
        """The step has ended: the agent is told (session/cancel went out with the End) and given a moment to end its
        turn as the protocol asks; whatever is still pending is dropped."""
        if self._cancelling is not None:
            await asyncio.wait({self._cancelling}, timeout=CANCEL_GRACE)
        if self._turn is not None and not self._turn.done():
            await asyncio.wait({self._turn}, timeout=CANCEL_GRACE)
        self.cancel_tasks()
        for future in self._waiting.values():
            future.cancel()

    # -- facts in, effects out ---------------------------------------------------------------------------------------------
    def _carry_out(self, e: facts.Own) -> None:
        match e:
            case facts.Reply() | facts.Refuse():
                future = self._waiting.pop(e.token, None)
                if future is not None and not future.done():
                    if isinstance(e, facts.Reply):
                        future.set_result(e.payload)
                    else:
                        future.set_exception(refusal(e.error, e.message, e.target))
            case facts.OpenSession():
                self.spawn(self._open_session(e.load))
            case facts.SendPrompt():
                self._turn = self.spawn(self._prompt(e.text))
            case facts.CancelTurn():
                self._cancelling = self.spawn(self._cancel())
            case _:
                assert_never(e)

    def _task_failed(self, exc: BaseException) -> None:
        self.feed(facts.CallFailed("pilot", f"{type(exc).__name__}: {exc}", gone=False))

    def _request(self, fact_for) -> tuple[int, asyncio.Future]:
        """An agent's request, told to the pilot under a new token; the future gets the pilot's Reply or Refuse."""
        self._tokens += 1
        token, future = self._tokens, asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        self.feed(fact_for(token))
        return token, future

    async def ask(self, fact_for) -> dict:
        """A request the pilot answers, maybe after the decision path and a human: its reply."""
        return await self._request(fact_for)[1]

    def _verdict(self, fact_for) -> asyncio.Future | None:
        """The pilot's word on a request it judges at once (a file, a command): a reply or a refusal, or None: go on."""
        token, future = self._request(fact_for)
        if future.done():
            return future
        del self._waiting[token]
        return None

    # -- the protocol ----------------------------------------------------------------------------------------------------
    def _failed(self, call: str, exc: Exception) -> None:
        self.feed(facts.CallFailed(call, str(exc), gone=isinstance(exc, (ConnectionError, OSError, EOFError))))

    async def _initialize(self) -> None:
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        try:
            init = await self.conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True),
                client_info=Implementation(name="cursor-pilot", version=__version__))
        except Exception as exc:
            self._failed("initialize", exc)
            return
        caps = init.agent_capabilities
        self.feed(facts.Initialized(init.protocol_version, dump(init.agent_info), bool(caps and caps.load_session)))

    async def _open_session(self, load: str | None) -> None:
        # claude-agent-acp hands _meta.claudeCode.options to Claude Code's SDK: extraArgs become its command line (--settings)
        meta = {"claudeCode": {"options": {"extraArgs": {"settings": self.guard.settings_arg()}}}} if self.guard.settings_arg() else {}
        try:
            if load is not None:
                await self.conn.load_session(cwd=self.cwd, session_id=load, mcp_servers=[], **meta)
                session_id = load
            else:
                session_id = (await self.conn.new_session(cwd=self.cwd, mcp_servers=[], **meta)).session_id
        except Exception as exc:
            self._failed("session", exc)
            return
        self.feed(facts.SessionOpened(session_id, loaded=load is not None))

    async def _prompt(self, text: str) -> None:
        from acp import text_block

        try:
            result = await self.conn.prompt(session_id=self.pilot.session_id, prompt=[text_block(text)])
        except Exception as exc:
            self._failed("prompt", exc)
            return
        self.feed(facts.TurnEnded(result.stop_reason, dump(getattr(result, "usage", None))))

    async def _cancel(self) -> None:
        try:
            await asyncio.wait_for(self.conn.cancel(session_id=self.pilot.session_id), CANCEL_GRACE)
            self.feed(facts.CancelSent(self.pilot.session_id))
        except Exception:
            pass

    # -- the agent's file system and terminals ------------------------------------------------------------------------------
    async def read_file(self, path: str, line: int | None, limit: int | None) -> str:
        target = self.workspace.resolve(path)
        verdict = self._verdict(lambda token: facts.FileRead(token, path, self.workspace.inside(target), target.exists()))
        if verdict is not None:
            return verdict.result()["content"]
        try:
            text = self.workspace.read(target, line, limit)
        except FileNotFoundError:  # gone since it was looked at
            raise refusal(facts.NOT_FOUND, f"Resource not found: {path}", path) from None
        except OSError as exc:
            raise refusal(facts.FAILED, f"cannot read {path}: {exc.strerror}", path) from None
        self.feed(facts.FileWasRead(path, len(text)))
        return text

    async def write_file(self, path: str, content: str) -> None:
        target = self.workspace.resolve(path)
        inside = self.workspace.inside(target)
        diff = self.workspace.diff(target, content) if inside else ""
        verdict = self._verdict(lambda token: facts.FileWrite(token, path, inside, diff))
        if verdict is not None:
            verdict.result()
            return
        try:
            self.workspace.write(target, content)
        except OSError as exc:
            raise refusal(facts.FAILED, f"cannot write {path}: {exc.strerror}", path) from None
        self.feed(facts.FileWritten(path, diff))

    async def run_command(self, command: str, args: list[str], env: dict[str, str], cwd: str | None, limit: int | None) -> Terminal:
        line = " ".join([command, *args])
        where = self.workspace.resolve(cwd) if cwd else self.workspace.resolve(self.cwd)
        verdict = self._verdict(lambda token: facts.CommandAsked(token, line, self.workspace.inside(where)))
        if verdict is not None:
            verdict.result()
        full_env = reaper.marked_env({**os.environ, **self.job.env, **env}, self.host.mark)
        try:
            term = await self.terminals.start(line, [command, *args], str(where), full_env, limit)
        except OSError as exc:
            raise refusal(facts.FAILED, f"cannot start {command}: {exc.strerror}", line) from None
        self.feed(facts.CommandStarted(term.id, line))
        return term

    def terminal_done(self, term: Terminal) -> None:
        if not term.recorded and term.exit_code is not None:
            term.recorded = True
            self.feed(facts.CommandExited(term.id, term.line, term.exit_code, term.text(), term.truncated))


def drive(job: Job) -> StepResult:
    """The ACP channel's entry point (cursorpilot/channels/registry.py): a plan's `acp:` step, its task the first prompt."""
    return AcpLoop(job).run()
