"""One task, start to end, where it runs (the fleet's own process, or a Ray worker on a node): its folder made, its
`cursor-pilot run` started as a child process, its transcript read as it is written (watch.py), the facts yielded,
and at the end its result read from the run's own report.

The run is the unit: `cursor-pilot run --log RUN --report ...` exactly as a person would start it, in a session of its
own. It is told to die with the process that started it (PR_SET_PDEATHSIG): a Ray worker killed by force cancel, or a
fleet killed outright, leaves no run behind, and a run that gets SIGTERM stops its program as Ctrl-C does.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import select
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from cursorpilot.records.reading import Tail
from cursorpilot.errors import PilotError
from cursorpilot.fleet import isolation
from cursorpilot.fleet.command import UnitSpec
from cursorpilot.fleet.facts import Ended, Fact, RunResult, Spawned
from cursorpilot.fleet.watch import TranscriptReader

POLL = 0.1  # seconds between two reads of the transcript (the run's exit wakes the loop at once)
KILL_AFTER = 10.0  # seconds a run stopped a second time has before it is killed
MARK = ".fleet-id"  # in the fleet's folder: a node that sees it shares that folder, and its run folders stay in place
PR_SET_PDEATHSIG = 1
StopAsk = Callable[[], "tuple[str, bool] | None"]  # (why, force) once the fleet wants the task stopped


def run_unit(spec: UnitSpec, fleet_id: str, stop: StopAsk, node: str = "", listen: str = "127.0.0.1",
             environ: dict[str, str] | None = None) -> Iterator[Fact | bytes]:
    """The task's facts, its Ended last; a run folder that the fleet can't see is yielded as a tar.gz (bytes) before it.
    environ: the run's environment before the task's own (default: this process's)."""
    run_dir = Path(spec.run_dir)
    try:
        isolation.prepare(spec.place)
        argv = _argv(spec, run_dir, listen)
    except (PilotError, OSError) as exc:
        yield Ended(spec.task, RunResult(1, f"its folder could not be made: {exc}", run_dir=str(run_dir), node=node))
        return
    log = run_dir.parent / f"{run_dir.name}.console.log"
    started, started_at = time.monotonic(), time.time()
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if spec.key else subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=_env(spec, os.environ if environ is None else environ), cwd=spec.place.folder,
                                start_new_session=True, preexec_fn=_die_with_parent)
    if spec.key and proc.stdin is not None:
        proc.stdin.write(spec.key.encode() + b"\n")
        proc.stdin.close()
    yield Spawned(spec.task, node)
    status, usage = yield from _watch(spec, proc, run_dir, stop)
    result = outcome(spec, run_dir, status, time.monotonic() - started)
    result.started_at, result.ended_at = round(started_at, 3), round(started_at + result.wall_s, 3)
    result.node, result.rss_kb, result.cpu_s = node, usage.ru_maxrss, round(usage.ru_utime + usage.ru_stime, 3)
    if not _shared(spec.fleet_dir, fleet_id):
        yield archive(run_dir)
    yield Ended(spec.task, result)


def _watch(spec: UnitSpec, proc: subprocess.Popen, run_dir: Path, stop: StopAsk):
    """The run's records as facts until it exits; a stop asked for is passed on (SIGTERM, then SIGTERM again: the
    run kills its program at once, then SIGKILL)."""
    watcher, tail = TranscriptReader(spec.task), Tail(run_dir / "transcript.jsonl")
    pidfd = os.pidfd_open(proc.pid)
    stopped_at: float | None = None
    signals = 0
    try:
        while True:
            for fact in _facts(watcher, tail):  # (not `yield from` a list: Ray sends into its task's generator)
                yield fact
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                for fact in _facts(watcher, tail):
                    yield fact
                return proc.returncode, usage
            asked = stop()
            if asked is not None and (signals == 0 or (asked[1] and signals == 1)):
                _signal(proc.pid, signal.SIGTERM)
                signals += 1
                stopped_at = time.monotonic()
            if stopped_at is not None and signals > 1 and time.monotonic() - stopped_at > KILL_AFTER:
                _signal(-proc.pid, signal.SIGKILL)
            select.select([pidfd], [], [], POLL)
    finally:
        os.close(pidfd)


def _facts(watcher: TranscriptReader, tail: Tail) -> list[Fact]:
    return [fact for rec in tail.read() for fact in watcher.feed(rec)]


def _argv(spec: UnitSpec, run_dir: Path, listen: str) -> list[str]:
    own = ["--report", *(["--listen", f"{listen}:0"] if spec.inbox else [])]
    head = [sys.executable, "-m", "cursorpilot", "run"]
    if (run_dir / "manifest.json").exists():  # a task that did not finish: its run goes on (docs/plans.md, --resume)
        return [*head, "--resume", str(run_dir), *own]
    if run_dir.exists() and any(run_dir.iterdir()):  # a run that left no manifest: kept aside, and started anew
        n = 1
        while run_dir.with_name(f"{run_dir.name}.{n}").exists():
            n += 1
        run_dir.rename(run_dir.with_name(f"{run_dir.name}.{n}"))
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    return [*head, "--log", str(run_dir), "--cwd", spec.place.folder, *own, *spec.options]


def _env(spec: UnitSpec, environ: Mapping[str, str]) -> dict[str, str]:
    env = {**environ, **spec.env}
    if spec.key:
        env["CURSORPILOT_PAGE_KEY"] = "stdin"  # the key itself comes on stdin: a program can read its pilot's environment
    return env


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the thread that started it dies (a worker killed, a fleet killed)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _shared(fleet_dir: str, fleet_id: str) -> bool:
    try:
        return (Path(fleet_dir) / MARK).read_text().strip() == fleet_id
    except OSError:
        return False


def outcome(spec: UnitSpec, run_dir: Path, code: int, wall: float) -> RunResult:
    """The run's end, as its own report says it (report.json: the same figures as its page)."""
    base = RunResult(code, run_dir=str(run_dir), wall_s=round(wall, 3))
    if code < 0:  # it never wrote its end: a report.json there is an earlier sitting's
        base.exit_code, base.signal = 128 - code, -code
        base.reason = f"its run was killed by signal {-code} ({_signame(-code)}): fleet resume continues it"
        return base
    try:
        report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        base.reason = f"the run left no report (exit {code})"
        return base
    v = report.get("verdict") or {}
    base.reason = v.get("reason") or ""
    for key in ("turns", "answers", "escalations", "denials"):
        setattr(base, key, int(v.get(key) or 0))
    base.cost_usd = v.get("cost_usd")
    base.diffstat = (report.get("changes") or {}).get("stat") or ""
    return base


def _signame(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"


def archive(run_dir: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(run_dir, arcname=run_dir.name)
    return buf.getvalue()


def unpack(data: bytes, run_dir: Path) -> None:
    """A run folder that came back from a node, put where it belongs in the fleet's folder."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(run_dir.parent, filter="data")
