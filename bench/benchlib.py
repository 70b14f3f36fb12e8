"""Shared helpers for the bench scripts: run a process and measure it, percentiles, the report lines.

Every script prints one figure per line (``name: value unit``) and ends with ``PASS`` or
``FAIL: <target>, <target>``. Its exit status is 0 on PASS, 1 on FAIL.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pilot() -> list[str]:
    """The cursor-pilot entry point installed next to this interpreter (python -m as a fallback)."""
    exe = Path(sys.executable).parent / "cursor-pilot"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("cursor-pilot")
    return [found] if found else [sys.executable, "-m", "cursorpilot"]


@dataclass
class Measured:
    rc: int
    wall_s: float
    cpu_s: float  # user + system of the process and every descendant it waited for, the served run's process and its program included
    maxrss_mb: float  # the largest peak resident set among them
    stdout: str
    stderr: str
    pid: int = 0  # the command's process
    client_cpu_s: float = 0.0  # the command's own process tree (wait4): for a served run, only the client that handed it over
    served: Served | None = None  # the resident pilot's child that ran the run (warmstart.py), when one did

    def pilot_cpu_s(self, program_cpu_s: float) -> float:
        """The pilot's own CPU: the client and the served child (not the program it waited for: its time is the child's
        cutime), or, for a run in its own process, the tree's less what the program reports for itself."""
        if self.served is not None:
            return self.client_cpu_s + self.served.cpu_s
        return self.cpu_s - program_cpu_s

    def where(self) -> str:
        return f"the resident pilot's child, pid {self.served.pid}" if self.served else "the run's own process"


def measure(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 900) -> Measured:
    """Run cmd to completion (stdin not a terminal) and take its resource usage from wait4, and, when the run was served
    by the resident pilot (warmstart.py: a child of that daemon runs it, not a descendant of cmd, which wait4 never
    sees), the served child's from /proc, read until it is gone."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        watch = ServedWatch(proc.pid, os.fstat(out.fileno()))
        pid, status, usage = 0, 0, None
        while not pid:
            wait_flags = 0 if time.perf_counter() - start > timeout else os.WNOHANG
            if not wait_flags:
                proc.kill()
            pid, status, usage = os.wait4(proc.pid, wait_flags)
            if not pid:
                watch.poll()
                time.sleep(0.002)  # polling a process we only measure; this synchronises nothing under test
        wall = time.perf_counter() - start
        served = watch.last()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text_out, text_err = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    client = usage.ru_utime + usage.ru_stime
    total = client + (served.cpu_s + served.children_cpu_s if served else 0.0)
    rss = max(usage.ru_maxrss / 1024, served.maxrss_mb if served else 0.0)
    return Measured(proc.returncode, wall, total, rss, text_out, text_err, proc.pid, client, served)


@dataclass
class Served:
    """The resident pilot's child that ran a run, as /proc last showed it (as a zombie, at the latest: its final times)."""

    pid: int
    cpu_s: float  # its own user + system
    children_cpu_s: float  # what it waited for: the program it drove
    maxrss_mb: float  # its peak resident set (VmHWM)


TICK = os.sysconf("SC_CLK_TCK")


def proc_times(pid: int) -> tuple[float, float] | None:
    """(own user + system, waited-for children's user + system) of a process from /proc/PID/stat, in seconds."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()  # after "(comm)", which may hold spaces
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / TICK, (cutime + cstime) / TICK


class ServedWatch:
    """Finds the process that runs a command's run when the resident pilot serves it: the process other than the
    command's own that holds the command's stdout (the client hands its three streams over: SCM_RIGHTS), and reads its
    CPU time from /proc until it is gone."""

    def __init__(self, client: int, stdout: os.stat_result):
        self.client, self.key = client, (stdout.st_dev, stdout.st_ino)
        self.pid: int | None = None
        self.seen: Served | None = None
        self._next_scan = 0.0

    def poll(self) -> None:
        now = time.monotonic()
        if self.pid is None and now >= self._next_scan:
            self._next_scan = now + 0.02
            self.pid = self._find()
        if self.pid is not None:
            self._read()

    def last(self) -> Served | None:
        if self.pid is not None:
            self._read()  # a zombie's final times, if the daemon has not reaped it yet
        return self.seen

    def _read(self) -> None:
        assert self.pid is not None
        times = proc_times(self.pid)
        if times is None:
            return
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            rss = next((int(x.split()[1]) / 1024 for x in status.splitlines() if x.startswith("VmHWM:")), 0.0)
        except (OSError, ValueError, IndexError):
            rss = 0.0
        rss = max(rss, self.seen.maxrss_mb if self.seen else 0.0)  # a zombie has no memory left to say
        self.seen = Served(self.pid, times[0], times[1], rss)

    def _find(self) -> int | None:
        holders = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) in (self.client, os.getpid()):
                continue
            try:
                st = os.stat(f"/proc/{entry.name}/fd/1")
                if (st.st_dev, st.st_ino) == self.key:
                    stat = Path(f"/proc/{entry.name}/stat").read_bytes()
                    holders[int(entry.name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            except (OSError, ValueError):
                continue
        top = [pid for pid, parent in holders.items() if parent not in holders]  # not a child that inherited it
        return min(top) if top else None


@contextmanager
def scratch(name: str, keep: bool = False) -> Iterator[Path]:
    """A fresh folder for one benchmark's runs, removed afterwards unless keep."""
    work = Path(tempfile.mkdtemp(prefix=f"cp-bench-{name}-"))
    try:
        yield work
    finally:
        if keep:
            print(f"kept {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


def show_failure(m: Measured, label: str = "pilot") -> None:
    """One line saying why a run did not exit 0 (the end of what it printed)."""
    if m.rc != 0:
        print(f"{label} exited {m.rc}: {(m.stderr or m.stdout).strip()[-400:]}", flush=True)


CHILDREN = [sys.executable, str(Path(__file__).resolve().parent / "children.py")]


def answered_run(work: Path, match: str, child: list[str], log_name: str = "log") -> tuple[Measured, Path]:
    """The pilot (rules provider, quiet) driving child, answering `y` to prompts matching `match`."""
    rules = work / "rules.yaml"
    rules.write_text(f"- {{id: go, match: '{match}', reply: y}}\n")
    log = work / log_name
    return measure([*pilot(), "run", "--quiet", "--rules", str(rules), "--log", str(log), "--", *child], cwd=work), log


def reaction_figures(report: "Report", reaction: list[float]) -> None:
    """p50, p95 and max of a list of reaction times in ms."""
    import statistics

    if reaction:
        report.figure("reaction p50", statistics.median(reaction), "ms")
        report.figure("reaction p95", percentile(reaction, 95), "ms")
        report.figure("reaction max", max(reaction), "ms")


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def records(log_dir: Path) -> list[dict]:
    path = log_dir / "transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Report:
    """Collects figures and missed targets; prints as it goes."""

    def __init__(self, name: str):
        self.name = name
        self.failed: list[str] = []
        print(f"# {name}", flush=True)

    def figure(self, label: str, value: float | int | str, unit: str = "") -> None:
        if isinstance(value, float):
            value = f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        print(f"{label}: {value}{' ' + unit if unit else ''}", flush=True)

    def target(self, ok: bool, what: str) -> None:
        print(f"target {'met' if ok else 'MISSED'}: {what}", flush=True)
        if not ok:
            self.failed.append(what)

    def finish(self) -> int:
        print("PASS" if not self.failed else "FAIL: " + "; ".join(self.failed), flush=True)
        return 0 if not self.failed else 1
