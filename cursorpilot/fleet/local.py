"""The local engine (the default): embedded, no server. Each task is a child process of the fleet (`cursor-pilot
run`), watched by a thread of its own that waits on it; the scheduler keeps N of them running. A task that crashes or
ends with exit 3 ends its own thread, nothing else."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from cursorpilot.fleet.command import UnitSpec
from cursorpilot.fleet.facts import Ended, Fact, RunResult
from cursorpilot.fleet.unit import run_unit, unpack


class LocalEngine:
    name = "local"

    def __init__(self, fleet_id: str):
        self.fleet_id = fleet_id
        self.facts: queue.Queue[Fact] = queue.Queue()
        self._stops: dict[str, tuple[str, bool]] = {}
        self._threads: dict[str, threading.Thread] = {}

    def start(self, spec: UnitSpec) -> None:
        self._stops.pop(spec.task, None)
        thread = threading.Thread(target=self._unit, args=(spec,), name=f"task-{spec.task}", daemon=True)
        self._threads[spec.task] = thread
        thread.start()

    def stop(self, task: str, why: str, force: bool = False) -> None:
        self._stops[task] = (why, force)

    def close(self, timeout: float = 30.0) -> None:
        for thread in list(self._threads.values()):
            thread.join(timeout)

    def _unit(self, spec: UnitSpec) -> None:
        ended = False
        try:
            for item in run_unit(spec, self.fleet_id, lambda: self._stops.get(spec.task)):
                if isinstance(item, bytes):
                    unpack(item, Path(spec.run_dir))
                    continue
                ended = ended or isinstance(item, Ended)
                self.facts.put(item)
        except Exception as exc:  # the unit's own failure: that task fails, said; the others go on
            if not ended:
                self.facts.put(Ended(spec.task, RunResult(1, f"the fleet could not run it: {type(exc).__name__}: {exc}", run_dir=spec.run_dir)))
