"""The Ray engine (`pip install 'cursor-pilot[ray]'`): each task is a Ray task that does what the local engine's thread
does (unit.py) on whichever node Ray picks, and streams its facts back as they happen (a generator task). The only
module that imports ray.

- No `--address`: a Ray of its own on this machine; with one, it joins that cluster (KubeRay, a VM cluster).
- A custom resource caps the programs on a terminal per node: each task takes one `pty_sessions` (a node started
  with `--resources '{"pty_sessions": 8}'` runs 8 at most); a cluster that declares none is refused before anything runs.
- One loop: a single thread waits on every running task's stream at once (`ray.wait` over their generators) and hands
  each fact on as it comes; a generator that ends or fails is dropped from the wait.
- Stopping: force is the task's own cancellation, Ray's force cancel, which kills the worker; its run dies with it
  (PR_SET_PDEATHSIG) and stops its program: nothing is left running. A graceful stop is not Ray's cancel: after a
  non-force `ray.cancel` a generator's later items are dropped (measured on 2.60: the next `ray.get` raises
  TaskCancelledError), and with them the run's end, its report's figures and, on a node without the fleet's folder,
  the run folder itself. So each task asks a small actor (on the fleet's node) once, at its start, whether it is to
  stop (`Control.asked`); the call returns when the fleet says so, and the task looks at that reply locally
  (`ray.wait(timeout=0)`, no call to the actor) while it watches its run: its run is interrupted (SIGTERM), stops its
  program, keeps its folder, and its end still comes back in its stream.
- Retries: Ray retries nothing (max_retries=0); the scheduler starts a task again only when its worker died before
  its program started (a run has side effects).
- The run folder: written where the task runs; on a node that does not share the fleet's folder it comes back in the
  task's stream, as a tar.gz, and is unpacked where it belongs (docs/fleet.md says why: no shared disk is assumed).
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from pathlib import Path

from cursorpilot.errors import BadInput, PilotError
from cursorpilot.fleet.command import UnitSpec
from cursorpilot.fleet.facts import Ended, Fact, Lost
from cursorpilot.fleet.unit import run_unit, unpack

RESOURCE = "pty_sessions"
WAIT = 0.2  # seconds the streams' loop waits for an item before it looks for tasks started meanwhile
WARM_HOLD = 0.5  # seconds each warm-up task holds its worker, so that Ray starts one per slot rather than reusing one

try:
    import ray
except ImportError:  # the extra is not installed: said when the engine is chosen (installed(), BadInput)
    ray = None  # type: ignore[assignment]


def installed() -> bool:
    return ray is not None


if ray is not None:
    @ray.remote(num_cpus=0)
    class Control:
        """What the fleet wants of its running tasks: each task's one call to `asked` returns once it is to stop."""

        def __init__(self) -> None:
            self.stops: dict[str, tuple[str, bool]] = {}
            self.events: dict[str, asyncio.Event] = {}

        def _event(self, task: str) -> asyncio.Event:
            return self.events.setdefault(task, asyncio.Event())

        async def stop(self, task: str, why: str, force: bool) -> None:
            self.stops[task] = (why, force)
            self._event(task).set()

        async def clear(self, task: str) -> None:
            self.stops.pop(task, None)
            self.events.pop(task, None)

        async def asked(self, task: str) -> tuple[str, bool]:
            await self._event(task).wait()
            return self.stops[task]

    @ray.remote(num_cpus=0)
    def warm(seconds: float) -> str:
        """Nothing but a worker started: the fleet's start-up holds them up, and its first tasks do not each wait for one."""
        time.sleep(seconds)
        return ray.util.get_node_ip_address()

    @ray.remote(num_cpus=0, max_retries=0)
    def task_unit(spec: UnitSpec, fleet_id: str, control):
        """One task on a node: the same unit as the local engine's, its facts streamed back."""
        node = ray.util.get_node_ip_address()
        ask = control.asked.remote(spec.task)  # returns when the fleet wants the task stopped

        def stop():
            ready, _ = ray.wait([ask], timeout=0)  # (the reply is here or not: no call to the actor)
            try:
                return ray.get(ready[0]) if ready else None
            except ray.exceptions.RayError:  # the actor is gone (its node with it): the run goes on; force still stops it
                return None

        # the worker's own debugger hook is no business of the run's (and a Python with it is never served warm)
        environ = {k: v for k, v in os.environ.items() if not (k == "PYTHONBREAKPOINT" and v.startswith("ray."))}
        yield from run_unit(spec, fleet_id, stop, node=node, listen=node, environ=environ)


class RayEngine:
    name = "ray"

    def __init__(self, fleet_id: str, address: str | None, concurrency: int):
        if ray is None:
            raise BadInput("--engine ray needs Ray: pip install 'cursor-pilot[ray]'")
        self.fleet_id = fleet_id
        self.facts: queue.Queue[Fact] = queue.Queue()
        self.own = not ray.is_initialized()
        if self.own:
            options = {"address": address} if address else {"num_cpus": os.cpu_count() or 1, "resources": {RESOURCE: concurrency}}
            try:
                ray.init(**options, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            except Exception as exc:
                raise PilotError(f"Ray could not start{' at ' + address if address else ''}: {type(exc).__name__}: {exc}") from None
        if not ray.cluster_resources().get(RESOURCE):
            raise BadInput(f"the Ray cluster declares no {RESOURCE!r} resource: start its nodes with "
                           f"--resources '{{\"{RESOURCE}\": 8}}' (how many programs each node runs at once)")
        # the actor lives on the fleet's own node: a node lost takes its own tasks, never the others' way to be stopped
        here = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self.control = Control.options(scheduling_strategy=here).remote()  # type: ignore[attr-defined]
        # the workers the first tasks will run in, started now, together (a worker's start is Ray's start-up, not a task's)
        ray.get([warm.options(resources={RESOURCE: 1}).remote(WARM_HOLD) for _ in range(concurrency)])
        self._refs: dict[str, object] = {}
        self._started: queue.SimpleQueue[tuple[UnitSpec, object]] = queue.SimpleQueue()
        self._closing = threading.Event()
        self._loop = threading.Thread(target=self._streams, name="ray-streams", daemon=True)
        self._loop.start()

    def start(self, spec: UnitSpec) -> None:
        ray.get(self.control.clear.remote(spec.task))
        ref = task_unit.options(resources={RESOURCE: 1}).remote(spec, self.fleet_id, self.control)
        self._refs[spec.task] = ref
        self._started.put((spec, ref))

    def stop(self, task: str, why: str, force: bool = False) -> None:
        if force and task in self._refs:
            ray.cancel(self._refs[task], force=True)
        else:
            self.control.stop.remote(task, why, force)

    def close(self, timeout: float = 30.0) -> None:
        self._closing.set()
        self._loop.join(timeout)
        if self.own:
            ray.shutdown()

    def _streams(self) -> None:
        """The one loop: every running task's stream waited on at once, each item handed on as it comes."""
        streams: dict[object, UnitSpec] = {}
        ended: set[str] = set()
        while streams or not self._closing.is_set():
            try:
                while True:
                    spec, ref = self._started.get(block=not streams, timeout=WAIT)
                    streams[ref] = spec
            except queue.Empty:
                pass
            if not streams:
                continue
            try:
                ready, _ = ray.wait(list(streams), num_returns=1, timeout=WAIT)
            except Exception as exc:  # Ray itself is gone: every running task is lost, said
                for spec in streams.values():
                    self.facts.put(Lost(spec.task, f"{type(exc).__name__}: Ray stopped answering"))
                return
            for ref in ready:
                if not self._next(ref, streams[ref], ended):
                    del streams[ref]

    def _next(self, stream, spec: UnitSpec, ended: set[str]) -> bool:
        """The stream's next item handed on; False once the stream is over (its end, or its worker's death: Lost)."""
        try:
            item = ray.get(next(stream))
            if isinstance(item, bytes):
                unpack(item, Path(spec.run_dir))
                return True
        except StopIteration:
            return False
        except Exception as exc:  # the worker died, or was cancelled by force
            if spec.task not in ended:
                self.facts.put(Lost(spec.task, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
            return False
        if isinstance(item, Ended):
            ended.add(spec.task)
        self.facts.put(item)
        return True
