"""The headless channel's loop: an agent's print mode (`claude -p`, `cursor-agent -p`) with its NDJSON event stream.

The loop does the I/O and nothing else: it starts one process per turn (headless/stream.py says how), reads its stdout
line by line into facts, writes the pilot's answers to its stdin, keeps its stderr, asks the decision path and humans
off the event loop, runs the goal check, and hands every outcome to the pilot (headless/pilot.py) as a fact. It
carries out the effects the pilot returns, until the pilot ends the step. Before the agent starts, the deny policy
goes into the agent's own deny list (channels/agent/nativedeny.py), in a file of the run's, never the user's.
"""

from __future__ import annotations

import asyncio
from typing import assert_never

from cursorpilot.channels.agent.loop import STOP_GRACE, AgentLoop, stop
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.channels.headless import facts, stream
from cursorpilot.channels.headless.pilot import HeadlessPilot
from cursorpilot.channels.program_env import last_words


class HeadlessLoop(AgentLoop[facts.Fact, facts.Own]):
    def __init__(self, job: Job):
        assert job.step.headless is not None  # (the registry hands this channel its own steps only)
        self.dialect = stream.dialect_of(job.command)
        super().__init__(job, name="headless-answerer", agent=self.dialect)
        self.pilot: HeadlessPilot = HeadlessPilot(self.pilot_config(job.step.headless), self.counts)
        self.stderr_path = self.ctx.log_dir / f"agent-stderr{self.suffix}.log"
        self._proc: asyncio.subprocess.Process | None = None
        self._turn_task: asyncio.Task | None = None
        self._requests: dict[str, dict] = {}  # the agent's open requests, by key, for the answer's shape
        self._tail = b""

    async def _main(self) -> None:
        await self.write_deny_list()
        self.feed(facts.Started())
        self.feed(self._tick())  # (the wall clock, before anything the agent says)
        await self.until_ended()
        await self._stop()
        if self._turn_task is not None and not self._turn_task.done():  # its exit is recorded before the step ends
            await asyncio.wait({self._turn_task}, timeout=STOP_GRACE)
        self.cancel_tasks()

    def _tick(self) -> facts.Tick:
        return facts.Tick(self.ctx.clock.utcnow().astimezone())

    # -- facts in, effects out ----------------------------------------------------------------------------------------
    def _carry_out(self, e: facts.Own) -> None:
        match e:
            case facts.StartTurn():
                self._turn_task = self.spawn(self._run_turn(e.prompt, e.resume))
            case facts.Reply():
                self._answer(e.key, stream.reply_line(self.dialect, self._requests.get(e.key, {}), e.allow, e.message))
            case facts.Unsupported():
                self._answer(e.key, stream.error_line(self.dialect, self._requests.get(e.key, {}), e.message))
            case facts.EndInput():
                self._close_input()
            case facts.StopAgent():
                self.spawn(self._stop())
            case _:
                assert_never(e)

    def _task_failed(self, exc: BaseException) -> None:
        if not self.pilot.done:
            self.feed(facts.SpawnFailed(f"cursor-pilot failed while driving the agent: {type(exc).__name__}: {exc}"))

    # -- one turn: one process ------------------------------------------------------------------------------------------
    async def _run_turn(self, prompt: str, resume: str | None) -> None:
        argv, first = stream.turn_argv(self.dialect, self.job.command, prompt, resume, self.cwd, self.guard.settings_arg())
        env, hidden = self.host.env()
        env.update(self.guard.env())
        try:
            proc = await self.start(argv, env)
        except OSError as exc:
            self.feed(facts.SpawnFailed(f"cannot start {argv[0]!r}: {exc.strerror}"))
            return
        self._proc = proc
        self.feed(facts.Spawned(proc.pid, tuple(argv), tuple(hidden)))
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        errors = asyncio.ensure_future(self._copy_stderr(proc.stderr))
        if first is not None:
            self._write(first)
        while line := await proc.stdout.readline():
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if not text.strip():
                continue
            found, event = stream.read(self.dialect, text)
            for fact in found:
                if isinstance(fact, (facts.PermissionAsked, facts.ControlAsked)) and event is not None:
                    self._requests[fact.key] = event
                self.feed(fact)
        code = await proc.wait()
        try:
            await asyncio.wait_for(errors, 1.0)
        except (TimeoutError, asyncio.CancelledError, OSError):
            pass
        self.child = code
        words = last_words(self._tail.decode("utf-8", "replace").splitlines()) or ""
        self.feed(facts.Exited(code, self.ctx.redactor.text(words)))

    async def _copy_stderr(self, source: asyncio.StreamReader) -> None:
        self._tail = b""
        with open(self.stderr_path, "ab") as fh:  # noqa: ASYNC230 (a local log, opened once per turn: no wait worth a thread)
            while chunk := await source.read(65536):
                fh.write(chunk)
                fh.flush()
                self._tail = (self._tail + chunk)[-8192:]

    def _write(self, line: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            return
        try:
            proc.stdin.write((line + "\n").encode())
        except (BrokenPipeError, ConnectionResetError):  # it is gone: its exit tells the pilot
            pass

    def _answer(self, key: str, line: str) -> None:
        self._requests.pop(key, None)
        self._write(line)

    def _close_input(self) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()

    async def _stop(self) -> None:
        """The turn's process ended (stdin closed, then SIGTERM, then SIGKILL to its group, STOP_GRACE apart)."""
        if self._proc is not None:
            await stop(self._proc)


def drive(job: Job) -> StepResult:
    """The headless channel's entry point (cursorpilot/channels/registry.py): a plan's `headless:` step, its task the first prompt."""
    return HeadlessLoop(job).run()
