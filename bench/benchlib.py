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
    cpu_s: float  # user + system of the process and every descendant it waited for
    maxrss_mb: float  # the largest peak resident set among them
    stdout: str
    stderr: str


def measure(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 900) -> Measured:
    """Run cmd to completion (stdin not a terminal) and take its resource usage from wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        pid, status, usage = 0, 0, None
        while not pid:
            wait_flags = 0 if time.perf_counter() - start > timeout else os.WNOHANG
            if not wait_flags:
                proc.kill()
            pid, status, usage = os.wait4(proc.pid, wait_flags)
            if not pid:
                time.sleep(0.002)  # polling a process we only measure; this synchronises nothing under test
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text_out, text_err = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return Measured(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text_out, text_err)


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
