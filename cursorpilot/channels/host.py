"""What every channel's loop shares, said once: the StepHost.

A channel (pty/loop.py, acp/loop.py, headless/loop.py) is a pure pilot beside a loop that does its I/O. The loops had
copied each other's scaffolding and started to drift (a turn end counted on one channel and not another, waits counted
only on the PTY). The host owns what they share: the decision path for the step (the Decider and its prompt filer),
the counts the run's limits read, the worker threads that answer off the loop, the effects every pilot returns (a
record, a word for the person watching, an answer delivered), the goal check of a turn end, the program's environment
and its mark, and the cleanup (counts handed back, nothing the program started left running). Each loop keeps only its
own effects (keys on a screen, replies over a protocol).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING


from cursorpilot.channels import goalcheck


from cursorpilot.channels import reaper
from cursorpilot.records import models as R
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.deliver import Delivered, Record, RunCounts, Tell
from cursorpilot.decide.limits import LimitConfig
from cursorpilot.decide.question import Decision, Question
from cursorpilot.decide.turns import TurnFacts
from cursorpilot.logs import get_logger
from cursorpilot.channels.program_env import program_env
from cursorpilot.channels.contract import Job

if TYPE_CHECKING:
    from cursorpilot.decide.compiled import Policy

# written with the step's number
STEP_RECORDS = (R.Answer, R.WouldSend, R.TurnEnd, R.ProgramStarted, R.ProgramExited, R.TerminalIgnored, R.NativeDeny, R.HookDecided)
LEFTOVERS_GRACE = 3.0  # what the program left running: SIGTERM, then SIGKILL after this long


class StepHost:
    def __init__(self, job: Job, *, workers: int, name: str, cwd: str | None = None):
        ctx, step, sink = job.ctx, job, job.sink
        self.ctx, self.step, self.sink, self.tx = ctx, step, sink, ctx.tx
        self.cwd = cwd
        self.counts = RunCounts(answers=ctx.answers, max_answers=ctx.max_answers, escalations=ctx.escalations,
                                dry_run=ctx.dry_run, interactive=ctx.interactive)
        label = f"{step.index}/{step.total}: {step.name}"
        self.decider = Decider(ctx, step.governing_prompt, cwd, step.rules, PromptFiler(ctx, step.index, label, cwd, step.governing_prompt),
                               step.policy)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self.mark = f"{ctx.run_id}-{step.index}"  # in the environment of everything the program starts (reaper.py)
        self._log = get_logger("cursorpilot")
        self._human: asyncio.Lock | None = None
        self.keyboard = sink.keyboard()  # a person's, who took it (commands/watched.py): only a step with a screen gives it
        if self.keyboard is not None:
            self.keyboard.step(self.tx.write, screen=False)

    @staticmethod
    def workdir(step: Job) -> str:
        return os.path.abspath(step.cwd or os.getcwd())

    def env(self) -> tuple[dict[str, str], list[str]]:
        """The program's environment (marked, the CI variables hidden unless kept) and the names hidden."""
        return program_env(self.step.env, self.mark, self.ctx.keep_ci_env)

    def limits(self) -> LimitConfig:
        """How this step waits out an agent's usage limit: --on-limit, never past --timeout or --max-wall."""
        step, turns = self.step, self.step.turns
        bounds = [(at, why) for at, why in ((step.deadline, step.deadline_reason),
                                            (turns.wall_deadline, f"--max-wall ({turns.max_wall or 0:g}s)")) if at is not None]
        deadline, why = min(bounds) if bounds else (None, "")
        return LimitConfig(on_limit=turns.on_limit, deadline=deadline, deadline_reason=why)

    def shared(self, e: object, before_answer: Callable[[], None] | None = None) -> bool:
        """Carry out an effect every pilot returns (True), or leave it to the loop (False)."""
        if isinstance(e, Record):
            rec = e.rec  # (dispatched on the model, not its name: mypy knows each type and the fields read off it)
            self.tx.write(R.numbered(rec, self.step.index) if isinstance(rec, STEP_RECORDS) else rec)
            if isinstance(rec, R.Wait):
                self.ctx.usage["waits"] += 1  # judged "nobody is asked": reported apart from answers
            elif isinstance(rec, R.LimitWaited):  # a usage limit waited out: said in the run's summary
                self.ctx.usage["limit_waits"] += 1
                self.ctx.usage["limit_wait_s"] += round(rec.waited_s or 0)
            elif isinstance(rec, R.TurnEnd) and "verdict" in e.fields:  # judged (a stop_reason alone is not)
                self.ctx.turn_ended(self.step.index, e.fields)
            elif isinstance(rec, R.State):
                self._log.debug("transition", trigger=rec.event, before=rec.from_, after=rec.to)
            return True
        if isinstance(e, Tell):
            if e.what == "answer":
                if before_answer is not None:
                    before_answer()  # (the PTY shows what was asked before what was answered)
                self.sink.answer(e.prompt, e.text, e.source, e.changed, e.granted)
            else:
                self.sink.note(e.text)
            return True
        if isinstance(e, Delivered):
            self.decider.delivered(e.prompt, e.text)
            return True
        return False

    def policy_now(self) -> Policy | None:
        """The step's policy before the agent starts, for its hook (channels/agent/runhook.py): pinned, cached, read
        lexically, or compiled by the model now (blocking: run it off an event loop)."""
        d = self.decider
        if d.policy is None and (request := d.compile_policy()) is not None:
            d.policy_compiled(d.call(request))
        return d.policy

    def hook_decided(self, found: dict) -> None:
        """A decision the hook inside the agent made (runhook.py reads them): a record of the run, and a line for the
        person watching where it refused or asked."""
        def said(key: str) -> str | None:
            value = found.get(key)
            return self.ctx.redactor.text(value) if isinstance(value, str) else None

        acts = found.get("acts")
        rec = R.HookDecided(step=self.step.index, agent=said("agent"), tool=said("tool"), target=said("target"), decision=said("decision"),
                            acts=[a for a in acts if isinstance(a, str)] if isinstance(acts, list) else None, reason=said("reason"),
                            quote=said("quote"))
        self.tx.write(rec)
        what = f"{rec.agent}'s {rec.tool} call ({(rec.target or '').splitlines()[0][:120] if rec.target else 'no target'})"
        if rec.decision == "deny":
            self.sink.note(f"the hook refused {what}: " + (f"your words forbid it: {rec.quote!r}" if rec.quote else rec.reason or ""))
        elif rec.decision == "ask":
            self.sink.note(f"the hook asked about {what}: the agent asks for permission ({rec.reason})")

    def turn_facts(self) -> TurnFacts:
        """A turn end's facts: the goal check and the working tree (slow: run it off the loop, on `pool`)."""
        return goalcheck.turn_facts(self.step.done_when, self.cwd or self.workdir(self.step), self.step.env, self.mark, self.ctx,
                                    self.step.check_timeout)

    # -- for the event-loop channels (ACP, headless): the slow parts off the loop, the agent's requests served meanwhile
    async def goal_facts(self) -> TurnFacts:
        return await asyncio.get_running_loop().run_in_executor(self.pool, self.turn_facts)

    async def decision(self, q: Question) -> Decision | None:
        return await self.decider.decide(q, self.pool)

    async def human_decision(self, q: Question, why: str) -> Decision:
        """People are asked (cursorpilot/human: the terminal, the decision page, a notice), one question at a time; the
        first answer that passes the deny policy and names an option wins, and is checked like any other (an escalation
        that says why, when nobody answered)."""
        if self._human is None:
            self._human = asyncio.Lock()  # (made on the loop that uses it)
        assert self.step.people is not None  # (the runner's, made before any step)
        async with self._human:
            return await self.step.people.decide(q, why, self.step, self.decider.check, self.pool)

    def close(self) -> None:
        """The step is over: its counts go back to the run, its workers stop, what the program left running is ended."""
        self.ctx.answers, self.ctx.escalations = self.counts.answers, self.counts.escalations
        self.pool.shutdown(wait=False, cancel_futures=True)
        ended = reaper.end_all(self.mark, grace=LEFTOVERS_GRACE)
        if ended:
            self.tx.write(R.DescendantsEnded(step=self.step.index, processes=[e.record() for e in ended]))
            self.sink.note(f"ended {len(ended)} process(es) the program left running: "
                           + ", ".join(f"{e.pid} {e.command[:60]}" for e in ended))
