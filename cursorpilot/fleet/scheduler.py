"""The rules of a fleet, PURE: which task starts, which stops and why, what each task's end means, when the fleet is
done and with which exit code. Facts and the time in, effects out (facts.py), one entry point (`handle`), no I/O: the
engines, the inbox and the page only carry out what it says. tests/unit/test_fleet_scheduler.py drives it with a fake
clock, as tests/unit/test_pilot.py drives a step's pilot.

The rules, said once:
- at most `concurrency` tasks run; the rest wait their turn, in the file's order;
- one task's end (a crash, exit 3) never stops another;
- the budget (`--max-cost`): once the runs' costs add up to it, no task starts, and a running one is stopped at its
  next question (exit 4, said in its row);
- a task whose worker died before its program started is started again (twice at most); after, never: a run has
  side effects;
- a task whose run was killed by a signal (the OOM killer's SIGKILL) or whose worker was lost is `killed`: not its
  verdict, so `fleet resume` runs it again (its run goes on: run --resume);
- Ctrl-C (or SIGTERM) stops every running task and starts none; what has not stopped `GRACE` seconds later is forced;
  a second one forces at once;
- the fleet's exit: 130 interrupted; else 1 if a task failed or was killed; else 3 if one needs a person; else 4 if a
  limit stopped one (or kept it from starting); else 0.
"""

from __future__ import annotations

from cursorpilot.fleet.facts import (AskedPerson, Changed, Effect, Ended, Fact, Finished, Interrupt, Lost, Post, ProgramStarted,
                                     Progressed, Questioned, RunResult, Say, Settled, Spawned, Start, Stop, TaskRow, Tick, Withdraw)

GRACE = 20.0  # seconds a stopped run has to end by itself (it stops its program: SIGINT, then SIGKILL after 3 s)
RETRIES = 2  # starts again of a task whose worker died before its program started
STATUS = {0: "done", 1: "failed", 2: "failed", 3: "needs-person", 4: "limit", 130: "interrupted"}
ENDED = ("done", "failed", "needs-person", "limit", "interrupted", "killed")
FINISHED = ("done", "failed")  # a task that reached its verdict keeps it; the others are what `fleet resume` runs again


class Scheduler:
    def __init__(self, rows: list[TaskRow], concurrency: int, max_cost: float | None = None):
        self.rows = {r.id: r for r in rows}
        self.order = [r.id for r in rows]
        self.concurrency = concurrency
        self.max_cost = max_cost
        self.interrupted_at: float | None = None
        self.forced = False
        self.over_budget = False
        self.stopping: dict[str, str] = {}  # task -> why the fleet stopped it: budget | interrupt
        self.finished = False

    # -- the one entry point ------------------------------------------------------------------------------------------
    def handle(self, now: float, fact: Fact) -> list[Effect]:
        out: list[Effect] = []
        match fact:
            case Spawned(task, node):
                row = self.rows[task]
                row.node = node
            case ProgramStarted(task):
                self.rows[task].started_program = True
            case Progressed(task, answers, cost):
                row = self.rows[task]
                row.answers, row.cost_usd = answers, cost
                out.append(Changed(task))
                out += self._budget()
            case Questioned(task):
                if self.over_budget and task not in self.stopping and self._running(task):
                    self.stopping[task] = "budget"
                    out.append(Stop(task, f"the fleet's budget (--max-cost {self.max_cost:g} USD) is spent"))
            case AskedPerson(task, decision, page, headline):
                row = self.rows[task]
                row.waiting.append(decision)
                row.status = "waiting"
                out += [Post(task, decision, page), Say(f"{task}: asks a person: {headline}"), Changed(task)]
            case Settled(task, decision):
                row = self.rows[task]
                if decision in row.waiting:
                    row.waiting.remove(decision)
                    out.append(Withdraw(task, decision))
                if not row.waiting and row.status == "waiting":
                    row.status = "running"
                out.append(Changed(task))
            case Ended(task, result):
                out += self._ended(task, result)
            case Lost(task, why):
                out += self._lost(task, why)
            case Interrupt(force):
                out += self._interrupt(now, force)
            case Tick():
                if self.interrupted_at is not None and not self.forced and now - self.interrupted_at >= GRACE:
                    out += self._interrupt(now, True)
        return out + self._next()

    # -- the rules ----------------------------------------------------------------------------------------------------
    def _running(self, task: str) -> bool:
        return self.rows[task].status in ("running", "waiting")

    def spent(self) -> float:
        """What the runs have cost, those of an earlier sitting of the fleet too (a resumed run counts its whole transcript)."""
        return sum(r.cost_usd for r in self.rows.values())

    def _budget(self) -> list[Effect]:
        if self.max_cost is None or self.over_budget or self.spent() < self.max_cost:
            return []
        self.over_budget = True
        return [Say(f"the fleet's budget is spent ({self.spent():.4f} of {self.max_cost:g} USD): no task starts now, and each "
                    "running one stops at its next question")]

    def _ended(self, task: str, result: RunResult, lost: bool = False) -> list[Effect]:
        """The task's end: its run's exit (or the signal that killed it), or its worker `lost` (no exit at all)."""
        row = self.rows[task]
        why = self.stopping.pop(task, "")
        status = "killed" if lost or result.signal else STATUS.get(result.exit_code, "failed")
        if why == "budget" and status != "done":
            status, result.exit_code = "limit", 4
            result.reason = f"stopped at a question: the fleet's budget (--max-cost {self.max_cost:g} USD) was spent"
        elif why == "interrupt" and status != "done":
            status, result.exit_code = "interrupted", 130
        row.status, row.reason, row.result = status, result.reason, result
        row.exit_code = None if lost and status == "killed" else result.exit_code
        row.answers, row.cost_usd = result.answers, result.cost_usd or row.cost_usd
        row.run_dir = result.run_dir or row.run_dir
        out: list[Effect] = [Withdraw(task)] if row.waiting else []
        row.waiting = []
        said = result.reason if row.exit_code is None else f"exit {row.exit_code}{': ' + result.reason if result.reason else ''}"
        return [*out, Say(f"{task}: {status} ({said})"), Changed(task, ended=True), *self._budget()]

    def _lost(self, task: str, why: str) -> list[Effect]:
        row = self.rows[task]
        if self.stopping.get(task) == "interrupt":
            return self._ended(task, RunResult(130, f"stopped by force: {why}", run_dir=row.run_dir))
        if not row.started_program and row.attempts <= RETRIES and self.interrupted_at is None:
            row.status = "pending"  # nothing of it ran: it starts again (first in line)
            self.order.remove(task)
            self.order.insert(0, task)
            return [Say(f"{task}: its worker died before its program started ({why}): started again")]
        said = "after its program started: not started again now (a run has side effects)" if row.started_program else "again"
        lost = RunResult(1, f"its worker died {said}; fleet resume continues it: {why}", answers=row.answers, cost_usd=row.cost_usd,
                      run_dir=row.run_dir)  # (what it had done, as its records said so far)
        return self._ended(task, lost, lost=True)

    def _interrupt(self, now: float, force: bool) -> list[Effect]:
        if self.interrupted_at is None:
            self.interrupted_at = now
        out: list[Effect] = []
        if force and not self.forced:
            self.forced = True
            out += [Stop(t, "interrupted again: killed", force=True) for t in self.order if self._running(t)]
        elif not force:
            for t in self.order:
                if self._running(t) and t not in self.stopping:
                    self.stopping[t] = "interrupt"
                    out.append(Stop(t, "interrupted"))
        for t in self.order:  # a task stopped by force that ends later is still the interrupt's
            if self._running(t):
                self.stopping[t] = "interrupt"
        return out

    def _next(self) -> list[Effect]:
        if self.finished:
            return []
        out: list[Effect] = []
        running = sum(1 for r in self.rows.values() if r.status in ("running", "waiting"))
        for t in self.order:
            row = self.rows[t]
            if row.status != "pending" or running >= self.concurrency or self.over_budget or self.interrupted_at is not None:
                continue
            row.status, running = "running", running + 1
            row.attempts += 1
            out += [Start(t, row.attempts), Say(f"{t}: started" + (f" (attempt {row.attempts})" if row.attempts > 1 else "")),
                    Changed(t)]
        if running == 0 and not out:
            self.finished = True
            code, reason = self.verdict()
            out.append(Finished(code, reason))
        return out

    def verdict(self) -> tuple[int, str]:
        statuses = [r.status for r in self.rows.values()]
        count = {s: statuses.count(s) for s in set(statuses)}
        said = ", ".join(f"{n} {s}" for s, n in sorted(count.items()))
        if self.interrupted_at is not None:
            return 130, f"interrupted: {said}"
        if count.get("failed"):
            return 1, f"some tasks failed: {said}"
        if count.get("killed"):
            return 1, f"some tasks were killed (fleet resume runs them again): {said}"
        if count.get("needs-person"):
            return 3, f"some tasks need a person: {said}"
        if count.get("limit") or count.get("pending"):
            why = "the fleet's budget was spent" if self.over_budget else "a limit stopped some tasks"
            return 4, f"{why}: {said}"
        return 0, f"every task is done: {said}"
