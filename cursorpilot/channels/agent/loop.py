"""What the two agent channels' loops share (acp/loop.py, headless/loop.py): the I/O of an agent's step, said once.

Each loop starts the agent, turns what it says into facts for its pilot and carries out the effects the pilot returns
(acp/ over the Agent Client Protocol, headless/ over a print mode's event stream). What they do alike lives here: the
step's host (channels/host.py), the agent's own deny list written before it starts (nativedeny.py), the decision path and
people asked off the event loop, a turn end's goal check, the tick that tells the pilot the time and interrupts, a task
that fails told to the pilot instead of a traceback, and the stop sequence. A loop adds only its own: how the agent is
spoken to and what its effects mean.

A loop is typed by its channel's facts and its own effects (`AgentLoop[acp.facts.Fact, acp.facts.Own]`): what the pilot
returns is `AgentEffect | Own`, and both are dispatched with a `match` that ends in `assert_never`, so an effect nobody
carries out is a type error, and raises if it comes anyway (it was dropped in silence; the PTY loop raised).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Coroutine, Sequence
from typing import Any, Generic, Protocol, TypeVar, assert_never

from cursorpilot.channels.agent import nativedeny
from cursorpilot.channels.agent.facts import (STUCK_AFTER, AgentEffect, AgentFact, AgentPilotConfig, Ask, AskHuman, Decided, DenyListWritten,
                                              End, GoalChecked, Interrupted)
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.channels.host import StepHost
from cursorpilot.decide.question import Question
from cursorpilot.decide.deliver import Delivered, Record, Tell
from cursorpilot.decide.turns import CheckGoal, Turns
from cursorpilot.errors import ExitCode

TICK = 0.1  # how often the loop looks at the clock and at interrupts while it waits
STOP_GRACE = 3.0  # stdin closed, then SIGTERM, then SIGKILL, this long apart
PIPE_LIMIT = 16 << 20  # the longest line the agent may write (a big tool call's arguments)

F = TypeVar("F")  # a channel's facts (its facts.py's Fact)
E = TypeVar("E")  # a channel's own effects (its facts.py's Own): its pilot returns them and the AgentEffects
F_in = TypeVar("F_in", contravariant=True)
E_out = TypeVar("E_out", covariant=True)


class LoopPilot(Protocol[F_in, E_out]):
    """An agent pilot as its loop sees it (acp/pilot.py, headless/pilot.py): its channel's facts in, effects out."""

    done: bool
    exit_code: ExitCode
    reason: str
    session_id: str | None
    turns: Turns

    def handle(self, now: float, fact: F_in) -> Sequence[AgentEffect | E_out]: ...

    @property
    def answers(self) -> int: ...

    @property
    def preview(self) -> dict | None: ...

    @property
    def all_said(self) -> list[str]: ...


class AgentLoop(Generic[F, E]):
    """An agent step's loop: a channel's loop derives from it and adds how its agent is spoken to (`_main`), what its
    own effects mean (`_carry_out`), the time it tells its pilot (`_tick`) and how a failed task is told (`_task_failed`)."""

    pilot: LoopPilot[AgentFact | F, E]

    def __init__(self, job: Job, *, name: str, agent: str | None):
        self.job, self.ctx, self.sink = job, job.ctx, job.sink
        self.cwd = os.path.abspath(job.cwd or os.getcwd())
        self.host = StepHost(job, workers=2, name=name, cwd=self.cwd)
        self.counts = self.host.counts
        self.suffix = f"-{job.index:02d}" if job.index > 1 else ""  # the step's files in the run's folder
        self.guard = nativedeny.Guard(agent if self.ctx.native_deny else None, self.ctx.log_dir / f"native-deny{self.suffix}",
                                      self.ctx.allow, self.cwd)
        self.child: int | None = None  # the agent's exit code, when it ended
        self._ended = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()

    def pilot_config(self, task: str) -> AgentPilotConfig:
        """What every agent pilot's config takes from the step."""
        job = self.job
        return AgentPilotConfig(task=task, governing_prompt=job.governing_prompt, cwd=self.cwd, allow=self.ctx.allow,
                                resume_session=job.session_id, max_answers=job.max_answers, deadline=job.deadline,
                                deadline_reason=job.deadline_reason, turns=job.turns, limits=self.host.limits(),
                                stuck_after=job.turns.stuck_after or STUCK_AFTER, native=self.guard.agent is not None)

    # -- the step ------------------------------------------------------------------------------------------------------
    def run(self) -> StepResult:
        try:
            asyncio.run(self._main())
        finally:
            self.hook_decisions()  # (the last ones, written as the agent ended)
            self.guard.remove()
            self.host.close()
        p = self.pilot
        code, reason = self._outcome()
        return StepResult(int(code), reason, self.child, p.answers, "".join(p.all_said), p.preview, p.session_id, goal=p.turns.goal)

    async def _main(self) -> None:
        raise NotImplementedError

    def _outcome(self) -> tuple[ExitCode, str]:
        """How the step ended: the pilot's word."""
        return self.pilot.exit_code, self.pilot.reason

    async def write_deny_list(self) -> None:
        """The deny policy in the agent's own list, and cursor-pilot's hook with the step's policy (runhook.py), before
        it starts."""
        policy = await asyncio.get_running_loop().run_in_executor(self.host.pool, self.host.policy_now) if self.guard.hook else None
        redact = self.ctx.redactor.text
        written = self.guard.write(policy, redact(self.job.governing_prompt), redact)
        if written:
            hook = written.hook
            self.feed(DenyListWritten(written.agent, written.file, tuple(written.deny), hook.where if hook is not None else None,
                                      hook.why if hook is not None and hook.where is None else None))

    def hook_decisions(self) -> None:
        """What the hook inside the agent decided since the last look, into the run's records."""
        for found in self.guard.decisions():
            self.host.hook_decided(found)

    async def start(self, argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
        """The agent's process, in a session of its own (its group is what the stop sequence signals)."""
        return await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=env, start_new_session=True,
                                                    limit=PIPE_LIMIT)

    async def until_ended(self) -> None:
        """Wait for the pilot to end the step, telling it the time (its deadline, its stuck clock) and interrupts."""
        seen = self.ctx.interrupts
        while not self._ended.is_set():
            try:
                await asyncio.wait_for(self._ended.wait(), TICK)
            except TimeoutError:
                pass
            if self.ctx.interrupts > seen:
                seen = self.ctx.interrupts
                self.feed(Interrupted())
            self.hook_decisions()
            self.feed(self._tick())

    def _tick(self) -> F:
        raise NotImplementedError

    # -- facts in, effects out ---------------------------------------------------------------------------------------------
    def feed(self, fact: AgentFact | F) -> None:
        self._apply(self.pilot.handle(self.ctx.clock.monotonic(), fact))

    def _apply(self, effects: Sequence[AgentEffect | E]) -> None:
        for e in effects:
            if isinstance(e, AgentEffect):
                self._carry_out_shared(e)
            else:
                self._carry_out(e)

    def _carry_out_shared(self, e: AgentEffect) -> None:
        """An effect every agent pilot returns."""
        match e:
            case Record() | Tell() | Delivered():
                self.host.shared(e)
            case Ask():
                self.spawn(self._decide(e.token, e.question))
            case AskHuman():
                self.spawn(self._ask_human(e.token, e.question, e.why))
            case CheckGoal():
                self.spawn(self._check_goal(e.token))
            case End():
                self._ended.set()
            case _:
                assert_never(e)

    def _carry_out(self, e: E) -> None:
        """An effect of the channel's own: a `match` on its Own that ends in `assert_never`."""
        raise NotImplementedError

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """A task of the step; if it fails, the pilot hears of it (the step ends, said why), never a traceback."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and (exc := t.exception()) is not None:
                self._task_failed(exc)

        task.add_done_callback(done)
        return task

    def _task_failed(self, exc: BaseException) -> None:
        """A task of the step failed: the pilot is told, in its channel's words."""
        raise NotImplementedError

    def cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()

    # -- deciding, the goal check: off the event loop ------------------------------------------------------------------------
    async def _decide(self, token: int, q: Question) -> None:
        self.feed(Decided(token, await self.host.decision(q)))

    async def _ask_human(self, token: int, q: Question, why: str) -> None:
        self.feed(Decided(token, await self.host.human_decision(q, why)))

    async def _check_goal(self, token: int) -> None:
        self.feed(GoalChecked(token, await self.host.goal_facts()))


async def stop(proc: asyncio.subprocess.Process) -> int | None:
    """End the agent's process: stdin closed, then SIGTERM, then SIGKILL to its process group, STOP_GRACE apart. Its
    exit code (None: it could not be reaped)."""
    if proc.returncode is not None:
        return proc.returncode
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
        try:
            return await asyncio.wait_for(proc.wait(), STOP_GRACE)
        except TimeoutError:
            continue
    return proc.returncode


