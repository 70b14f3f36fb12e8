"""A fleet's sitting, start to end: the facts the engine reports handed to the scheduler, and the effects it returns
carried out (start and stop tasks, the inbox, the manifest and the page, a line for the person watching). Only the
sequencing is here; every rule is the scheduler's.

Ctrl-C and SIGTERM are facts like any other: the handler counts them, the loop hands them over (a second one: force).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Protocol

from cursorpilot.fleet import manifest, report
from cursorpilot.fleet.command import UnitSpec, place, run_options
from cursorpilot.fleet.facts import (Changed, Effect, Fact, Finished, Interrupt, Post, Say, Start, Stop, Tick, Withdraw)
from cursorpilot.fleet.manifest import FleetState
from cursorpilot.fleet.model import Fleet
from cursorpilot.fleet.scheduler import Scheduler

TICK = 0.25  # seconds: the loop's heartbeat (a fact wakes it at once)
WRITE_EVERY = 0.5  # seconds between two writes of the manifest for progress alone (an end is written at once)


class View(Protocol):
    """The person watching (commands/fleetview.py: a live table on a terminal, lines elsewhere)."""

    def say(self, text: str) -> None: ...

    def update(self, state: FleetState) -> None: ...

    def close(self) -> None: ...


class Engine(Protocol):
    name: str
    facts: object  # queue.Queue[Fact]

    def start(self, spec: UnitSpec) -> None: ...

    def stop(self, task: str, why: str, force: bool = False) -> None: ...

    def close(self, timeout: float = 30.0) -> None: ...


class FleetRun:
    def __init__(self, fleet: Fleet, folder: Path, state: FleetState, engine: Engine, view: View, inbox=None):
        self.fleet = fleet
        self.folder = folder
        self.state = state
        self.engine = engine
        self.view = view
        self.inbox = inbox
        o = state.options
        self.scheduler = Scheduler(state.rows, int(o.get("concurrency") or 1), o.get("max_cost"))
        self.interrupts = 0
        self.handled = 0
        self.written = 0.0
        self.exit_code: int | None = None

    def run(self) -> int:
        previous = {s: signal.signal(s, self._signalled) for s in (signal.SIGINT, signal.SIGTERM)}
        self.state.pid, self.state.status = os.getpid(), "running"
        self._write(page=True)
        try:
            self._apply(self.scheduler.handle(time.monotonic(), Tick()))
            while self.exit_code is None:
                self._apply(self.scheduler.handle(time.monotonic(), self._next_fact()))
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            self.engine.close()
            if self.inbox is not None:
                self.inbox.close()
            self.view.close()
        return self.exit_code

    def _signalled(self, signum, frame) -> None:
        self.interrupts += 1

    def _next_fact(self) -> Fact:
        if self.interrupts > self.handled:
            self.handled += 1
            return Interrupt(force=self.handled > 1)
        try:
            return self.engine.facts.get(timeout=TICK)  # type: ignore[attr-defined]
        except Exception:  # queue.Empty
            return Tick()

    # -- the effects ----------------------------------------------------------------------------------------------------
    def _apply(self, effects: list[Effect]) -> None:
        """The effects in order, but the records last, once: a task's start waits for no disk write."""
        writes = [e for e in effects if isinstance(e, Changed)]
        for e in effects:
            match e:
                case Start(task, _):
                    self.engine.start(self._spec(task))
                case Stop(task, why, force):
                    self.engine.stop(task, why, force)
                case Say(text):
                    self.view.say(text)
                case Post(task, decision, page) if self.inbox is not None:
                    self.inbox.post(task, decision, page)
                case Withdraw(task, decision) if self.inbox is not None:
                    self.inbox.withdraw(task, decision)
                case Finished(code, reason):
                    self.state.status = "interrupted" if code == 130 else "finished"
                    self.state.exit_code, self.state.reason, self.state.pid = code, reason, 0
                    self.exit_code = code
        if writes or self.exit_code is not None:
            self._write(page=self.exit_code is not None or any(w.ended for w in writes))

    def _spec(self, task_id: str) -> UnitSpec:
        t = self.fleet.task(task_id)
        row = self.state.row(task_id)
        row.run_dir = row.run_dir or str(self.folder / "runs" / task_id)
        where = place(t, self.fleet.name, str(self.folder / "work" / task_id))
        row.branch = where.branch
        key = self.inbox.key_for(task_id) if self.inbox is not None else ""
        return UnitSpec(fleet_dir=str(self.folder), task=task_id, run_dir=row.run_dir, options=tuple(run_options(t)), place=where,
                        env=dict(t.env or {}), key=key, inbox=self.inbox is not None)

    def _write(self, page: bool) -> None:
        now = time.monotonic()
        self.view.update(self.state)
        if not page and now - self.written < WRITE_EVERY:
            return
        self.written = now
        manifest.write(self.folder, self.state)
        if page:
            report.write(self.state, self.folder)
