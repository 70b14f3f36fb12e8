"""The Ray engine (`pip install 'cursor-pilot[ray]'`): each task is a Ray task that does what the local engine's thread
does (unit.py) on whichever node Ray picks, and streams its facts back as they happen (a generator task). The only
module that imports ray.

- No `--address`: a Ray of its own on this machine; with one, it joins that cluster (KubeRay, a VM cluster).
- A custom resource caps the programs on a terminal per node: each task takes one `pty_sessions` (a node started
  with `--resources '{"pty_sessions": 8}'` runs 8 at most); a cluster that declares none is refused before anything runs.
- Stopping: the fleet asks through a small actor that each task reads (its run is interrupted: SIGTERM, its program
  stopped as Ctrl-C stops it, its folder kept); force is Ray's force cancel, which kills the worker, and its run dies
  with it (PR_SET_PDEATHSIG), and the run stops its program: nothing is left running.
- Retries: Ray retries nothing (max_retries=0); the scheduler starts a task again only when its worker died before
  its program started (a run has side effects).
- The run folder: written where the task runs; on a node that does not share the fleet's folder it comes back in the
  task's stream, as a tar.gz, and is unpacked where it belongs (docs/fleet.md says why: no shared disk is assumed).
"""

from __future__ import annotations

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
ASK_EVERY = 0.5  # seconds between a task's two looks at whether the fleet wants it stopped
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
        """What the fleet wants of its running tasks: each asks here whether it is to stop (and why, and how)."""

        def __init__(self) -> None:
            self.stops: dict[str, tuple[str, bool]] = {}

        def stop(self, task: str, why: str, force: bool) -> None:
            self.stops[task] = (why, force)

        def clear(self, task: str) -> None:
            self.stops.pop(task, None)

        def asked(self, task: str) -> tuple[str, bool] | None:
            return self.stops.get(task)

    @ray.remote(num_cpus=0)
    def warm(seconds: float) -> str:
        """Nothing but a worker started: the fleet's start-up holds them up, and its first tasks do not each wait for one."""
        time.sleep(seconds)
        return ray.util.get_node_ip_address()

    @ray.remote(num_cpus=0, max_retries=0)
    def task_unit(spec: UnitSpec, fleet_id: str, control):
        """One task on a node: the same unit as the local engine's, its facts streamed back."""
        node = ray.util.get_node_ip_address()
        last = [0.0, None]

        def stop():
            now = time.monotonic()
            if now - last[0] >= ASK_EVERY:
                last[0], last[1] = now, ray.get(control.asked.remote(spec.task))
            return last[1]

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
        self.control = Control.remote()  # type: ignore[attr-defined]
        # the workers the first tasks will run in, started now, together (a worker's start is Ray's start-up, not a task's)
        ray.get([warm.options(resources={RESOURCE: 1}).remote(WARM_HOLD) for _ in range(concurrency)])
        self._refs: dict[str, object] = {}
        self._threads: dict[str, threading.Thread] = {}

    def start(self, spec: UnitSpec) -> None:
        ray.get(self.control.clear.remote(spec.task))
        ref = task_unit.options(resources={RESOURCE: 1}).remote(spec, self.fleet_id, self.control)
        self._refs[spec.task] = ref
        thread = threading.Thread(target=self._stream, args=(spec, ref), name=f"ray-{spec.task}", daemon=True)
        self._threads[spec.task] = thread
        thread.start()

    def stop(self, task: str, why: str, force: bool = False) -> None:
        if force and task in self._refs:
            ray.cancel(self._refs[task], force=True)
        else:
            self.control.stop.remote(task, why, force)

    def close(self, timeout: float = 30.0) -> None:
        for thread in list(self._threads.values()):
            thread.join(timeout)
        if self.own:
            ray.shutdown()

    def _stream(self, spec: UnitSpec, ref) -> None:
        ended = False
        try:
            for item_ref in ref:
                item = ray.get(item_ref)
                if isinstance(item, bytes):
                    unpack(item, Path(spec.run_dir))
                    continue
                ended = ended or isinstance(item, Ended)
                self.facts.put(item)
        except Exception as exc:  # the worker died, or was cancelled by force
            if not ended:
                self.facts.put(Lost(spec.task, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
