"""The headless channel's loop: an agent's print mode (`claude -p`, `cursor-agent -p`) with its NDJSON event stream.

The loop does the I/O and nothing else: it starts one process per turn (headless/stream.py says how), reads its stdout
line by line into facts, writes the pilot's answers to its stdin, keeps its stderr, asks the decision path and humans
off the event loop, runs the goal check, and hands every outcome to the pilot (headless/pilot.py) as a fact. It
carries out the effects the pilot returns, until the pilot ends the step. Before the agent starts, the deny policy
goes into the agent's own deny list (nativedeny.py), in a file of the run's, never the user's.
"""

from __future__ import annotations

import asyncio
import os
import signal

from cursorpilot import nativedeny
from cursorpilot.decide.question import Question
from cursorpilot.decide.turns import CheckGoal
from cursorpilot.headless import facts, stream
from cursorpilot.headless.pilot import HeadlessPilot, HeadlessPilotConfig
from cursorpilot.program_env import last_words
from cursorpilot.host import StepHost
from cursorpilot.steps import Job, StepResult

TICK = 0.1  # how often the loop looks at the clock and at interrupts
STOP_GRACE = 3.0  # stdin closed, then SIGTERM, then SIGKILL, this long apart


class HeadlessStep:
    def __init__(self, job: Job):
        assert job.step.headless is not None  # (the registry hands this channel its own steps only)
        ctx = job.ctx
        self.job, self.ctx, self.sink = job, ctx, job.sink
        self.cwd = os.path.abspath(job.cwd or os.getcwd())
        self.host = StepHost(job, workers=2, name="headless-answerer", cwd=self.cwd)
        self.counts = self.host.counts
        self.pilot = HeadlessPilot(HeadlessPilotConfig(
            task=job.step.headless, governing_prompt=job.governing_prompt, cwd=self.cwd, allow=ctx.allow, resume_session=job.session_id,
            max_answers=job.max_answers, deadline=job.deadline, deadline_reason=job.deadline_reason, turns=job.turns,
            limits=self.host.limits(), stuck_after=job.turns.stuck_after or facts.STUCK_AFTER), self.counts)
        self.dialect = stream.dialect_of(job.command)
        suffix = f"-{job.index:02d}" if job.index > 1 else ""
        self.stderr_path = ctx.log_dir / f"agent-stderr{suffix}.log"
        self.guard = nativedeny.Guard(self.dialect if ctx.native_deny else None, ctx.log_dir / f"native-deny{suffix}", ctx.allow, self.cwd)
        self._ended = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self._proc: asyncio.subprocess.Process | None = None
        self._turn_task: asyncio.Task | None = None
        self._requests: dict[str, dict] = {}  # the agent's open requests, by key, for the answer's shape
        self._child: int | None = None
        self._tail = b""

    # -- public -------------------------------------------------------------------------------------------------------
    def run(self) -> StepResult:
        try:
            asyncio.run(self._main())
        finally:
            self.guard.remove()
            self.host.close()
        p = self.pilot
        return StepResult(int(p.exit_code), p.reason, self._child, p.answers, "".join(p.all_said), p.preview, p.session_id, goal=p.turns.goal)

    async def _main(self) -> None:
        written = self.guard.write()
        if written:
            self.feed(facts.DenyListWritten(written.agent, written.file, tuple(written.deny)))
        self.feed(facts.Started())
        self.feed(facts.Tick(self.ctx.clock.utcnow().astimezone()))  # (the wall clock, before anything the agent says)
        seen = self.ctx.interrupts
        while not self._ended.is_set():
            try:
                await asyncio.wait_for(self._ended.wait(), TICK)
            except TimeoutError:
                pass
            if self.ctx.interrupts > seen:
                seen = self.ctx.interrupts
                self.feed(facts.Interrupted())
            self.feed(facts.Tick(self.ctx.clock.utcnow().astimezone()))
        await self._stop()
        if self._turn_task is not None and not self._turn_task.done():  # its exit is recorded before the step ends
            await asyncio.wait({self._turn_task}, timeout=STOP_GRACE)
        for task in self._tasks:
            task.cancel()

    # -- facts in, effects out ----------------------------------------------------------------------------------------
    def feed(self, fact: facts.Fact) -> None:
        self._apply(self.pilot.handle(self.ctx.clock.monotonic(), fact))

    def _apply(self, effects: list[facts.Effect]) -> None:
        for e in effects:
            if self.host.shared(e):
                continue
            if isinstance(e, facts.StartTurn):
                self._turn_task = self._spawn(self._run_turn(e.prompt, e.resume))
            elif isinstance(e, facts.Ask):
                self._spawn(self._decide(e.token, e.question))
            elif isinstance(e, facts.AskHuman):
                self._spawn(self._ask_human(e.token, e.question, e.why))
            elif isinstance(e, facts.Reply):
                self._answer(e.key, stream.reply_line(self.dialect, self._requests.get(e.key, {}), e.allow, e.message))
            elif isinstance(e, facts.Unsupported):
                self._answer(e.key, stream.error_line(self.dialect, self._requests.get(e.key, {}), e.message))
            elif isinstance(e, facts.EndInput):
                self._close_input()
            elif isinstance(e, facts.StopAgent):
                self._spawn(self._stop())
            elif isinstance(e, facts.End):
                self._ended.set()
            elif isinstance(e, CheckGoal):
                self._spawn(self._check_goal(e.token))

    def _spawn(self, coro) -> asyncio.Task:
        """A task of the step; if it fails, the step ends saying why, never with a traceback."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None and not self.pilot.done:
                exc = t.exception()
                self.feed(facts.SpawnFailed(f"cursor-pilot failed while driving the agent: {type(exc).__name__}: {exc}"))

        task.add_done_callback(done)
        return task

    # -- one turn: one process ------------------------------------------------------------------------------------------
    async def _run_turn(self, prompt: str, resume: str | None) -> None:
        argv, first = stream.turn_argv(self.dialect, self.job.command, prompt, resume, self.cwd, self.guard.settings_arg())
        env, hidden = self.host.env()
        env.update(self.guard.env())
        try:
            proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=env, start_new_session=True,
                                                        limit=16 << 20)
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
        self._child = code
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
        """Stdin closed, then SIGTERM, then SIGKILL to the turn's process group, STOP_GRACE apart."""
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        self._close_input()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    return
            try:
                await asyncio.wait_for(proc.wait(), STOP_GRACE)
                return
            except TimeoutError:
                continue

    # -- deciding, the goal check ---------------------------------------------------------------------------------------
    async def _check_goal(self, token: int) -> None:
        self.feed(facts.GoalChecked(token, await self.host.goal_facts()))

    async def _decide(self, token: int, q: Question) -> None:
        self.feed(facts.Decided(token, await self.host.decision(q)))

    async def _ask_human(self, token: int, q: Question, why: str) -> None:
        self.feed(facts.Decided(token, await self.host.human_decision(q, why)))


def drive(job: Job) -> StepResult:
    """The headless channel's entry point (cursorpilot/channels.py): a plan's `headless:` step, its task the first prompt."""
    return HeadlessStep(job).run()
