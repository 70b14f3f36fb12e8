"""A fleet's cost (issue 41): 40 short tasks, each a program that asks 3 questions and then waits 1 s, run by
`cursor-pilot fleet run` at concurrency 1, 2, 4 and 8, on both engines.

Per sitting it prints:
- the fleet's wall: from its first task's start to its last task's end, on both engines (the process's own start and
  end are printed beside it, and Ray's start-up apart: neither is a task's);
- the tasks' own walls (each `cursor-pilot run` process, spawn to exit, as the unit times it) and the overhead per task:
  (fleet wall - sum of the tasks' walls / concurrency) x concurrency / tasks, what the fleet adds around each task;
- fleet wall / (sum of walls / concurrency): how close N mostly-waiting tasks come to N at once;
- RSS per running task: the processes that do the work, sampled every 0.1 s while they run: the pilot (the program's
  parent: the run's own process, or the resident pilot's child that serves it, docs/internals.md), the program and the
  `cursor-pilot run` process the fleet started; the pilot alone; PSS (pages shared with the resident pilot counted
  once); and the host apart (the process that started the run: the fleet's own, one for all tasks, or a Ray worker, one
  per task);
- the pilot's CPU per task, over its program's life (3 answers and 1 s of waiting): a bound on its CPU while it waits;
- what the overhead is made of: from a task's end to the start it made room for (the fleet's reaction, median), and
  the spread of the last round's ends (slots idle at the tail because tasks differ in length, not the fleet's doing),
  and the overhead per task without those idle slots: the slots' idle time from the fleet's start to the last round,
  per task (what the fleet itself costs: starting, reacting, ending).

Targets, on 2 cores: local overhead <= 100 ms per task, Ray <= 500 ms per task after its start-up, RSS <= 80 MB per
running task, 40 mostly-waiting tasks at concurrency 8 within 1.3x of (sum of walls / 8).

    nice python bench/fleet.py [--tasks 40] [--concurrency 1,2,4,8] [--engines local,ray]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
TASK = "import time\nfor q in ('Project name? ', 'Version? ', 'Port? '):\n    input(q)\ntime.sleep(1)\n"


class Sampler:
    """Every 0.1 s, the processes of each running task: its program (this bench's file, run by python), the pilot that
    drives it (the program's parent: the run's own process, or the resident pilot's child that serves it), the
    `cursor-pilot run` process the fleet started (the same as the pilot when it is not served warm), and what hosts
    that one (the fleet's process on the local engine, shared by every task; a Ray worker, one per task)."""

    def __init__(self, mark: str):
        self.mark = mark
        self.rss: list[tuple[int, int, int, int]] = []  # per sample and running task: RSS kB (all but the host), pilot, PSS, host
        self.cpu: dict[int, list[tuple[float, int]]] = {}  # program pid -> [(t, its pilot's ticks)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            self._sample(time.monotonic())

    def _sample(self, now: float) -> None:
        programs, clients = [], {}
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                args = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
                if len(args) > 1 and args[1].endswith(f"{self.mark}.py"):
                    programs.append(int(proc.name))
                elif any(self.mark in a for a in args) and "cursorpilot" in args and "run" in args:
                    clients[os.readlink(proc / "fd" / "1")] = int(proc.name)  # its console log: the task's own file
            except OSError:
                continue
        for program in programs:  # a task while its program runs: the program, its pilot, the run the fleet started
            try:
                pilot = _stat(program)[0]
                client = clients.get(os.readlink(f"/proc/{pilot}/fd/1"), pilot)  # (the pilot itself, when not served warm)
                work = {program, pilot, client}
                self.rss.append((sum(_stat(p)[2] for p in work), _stat(pilot)[2], sum(_pss(p) for p in work), _stat(_stat(client)[0])[2]))
                self.cpu.setdefault(program, []).append((now, _stat(pilot)[1]))
            except (OSError, ValueError, IndexError):
                continue

    def pilot_cpu(self) -> float:
        """The pilots' mean share of a core over their programs' lives."""
        shares = [(s[-1][1] - s[0][1]) / TICK / (s[-1][0] - s[0][0]) for s in self.cpu.values() if len(s) > 3 and s[-1][0] > s[0][0]]
        return statistics.mean(shares) if shares else float("nan")


def _stat(pid: int) -> tuple[int, int, int]:
    """(ppid, utime + stime ticks, RSS kB) of a process."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[21]) * PAGE_KB


def _pss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def sitting(fleet_file: Path, folder: Path, engine: str, concurrency: int, address: str | None, mark: str) -> dict:
    args = [sys.executable, "-m", "cursorpilot", "fleet", "run", str(fleet_file), "-j", str(concurrency), "--dir", str(folder),
            "--engine", engine, *(["--address", address] if address else [])]
    t0 = time.monotonic()
    with Sampler(mark) as sampler:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, cwd=folder.parent)
        assert proc.stdout is not None
        out = list(proc.stdout)
        code = proc.wait()
        end = time.monotonic()
    state = json.loads((folder / "fleet.json").read_text())
    walls = [r["result"]["wall_s"] for r in state["rows"] if r.get("result")]
    if code != 0 or len(walls) != len(state["rows"]):
        raise SystemExit(f"the fleet did not do every task (exit {code}):\n{''.join(out[-20:])}")
    n = len(walls)
    ends = sorted(r["result"]["ended_at"] for r in state["rows"])
    starts = sorted(r["result"]["started_at"] for r in state["rows"])
    # the fleet's reaction: from a task's end to the start it makes room for (the first start after it, each used once)
    reaction, later = [], list(starts[concurrency:])
    for e in ends:
        nxt = next((s for s in later if s >= e), None)
        if nxt is not None:
            reaction.append(nxt - e)
            later.remove(nxt)
    wall = ends[-1] - starts[0]  # the fleet at work: its first task's start to its last task's end
    ideal = sum(walls) / concurrency
    rss = sampler.rss
    return {"engine": engine, "concurrency": concurrency, "tasks": n, "wall": wall, "whole": end - t0, "sum_walls": sum(walls),
            "task_wall": statistics.median(walls), "overhead_ms": (wall - ideal) * concurrency / n * 1000, "ratio": wall / ideal,
            "rss_mb": statistics.mean(r[0] for r in rss) / 1024 if rss else float("nan"),
            "pilot_rss_mb": statistics.mean(r[1] for r in rss) / 1024 if rss else float("nan"),
            "pss_mb": statistics.mean(r[2] for r in rss) / 1024 if rss else float("nan"),
            "host_mb": statistics.mean(r[3] for r in rss) / 1024 if rss else float("nan"),
            "cpu": sampler.pilot_cpu() * 100, "reaction_ms": statistics.median(reaction) * 1000 if reaction else float("nan"),
            "tail": ends[-1] - ends[max(0, n - concurrency)],
            # the slots' idle time but the tail's (each slot idle from its last task's end to the last end): the fleet's own
            "own_ms": (concurrency * wall - sum(walls) - sum(ends[-1] - e for e in ends[-concurrency:])) / n * 1000}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--concurrency", default="1,2,4,8")
    ap.add_argument("--engines", default="local,ray")
    a = ap.parse_args()
    levels = [int(c) for c in a.concurrency.split(",")]
    mark = f"cpbench{secrets.token_hex(4)}"
    results = []
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        root = Path(tmp)
        program = root / f"{mark}.py"
        program.write_text(TASK)
        fleet_file = root / "fleet.yaml"
        fleet_file.write_text(json.dumps({"name": "bench", "defaults": {"answers": [".=x"], "timeout": "60s", "env": {"XDG_STATE_HOME": str(root / "state")}},
                                          "tasks": [{"id": f"t{i:02}", "command": [sys.executable, str(program)]} for i in range(a.tasks)]}))
        for engine in a.engines.split(","):
            address, ray_up = None, None
            if engine == "ray":
                try:
                    import logging

                    import ray
                except ImportError:
                    print("ray is not installed (pip install -e '.[ray]'): the Ray engine is not measured")
                    continue
                t = time.monotonic()
                ray.init(num_cpus=2, resources={"pty_sessions": max(levels)}, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING)
                ray_up = time.monotonic() - t
                address = ray.get_runtime_context().gcs_address
                print(f"ray: a local Ray started in {ray_up:.1f} s (not counted in the fleets' walls below)", flush=True)
            for c in levels:
                r = sitting(fleet_file, root / f"{engine}-{c}", engine, c, address, mark)
                results.append(r)
                print(f"{engine:5} c={c}: fleet wall {r['wall']:6.1f} s (its process {r['whole']:.1f} s)  sum of task walls {r['sum_walls']:6.1f} s "
                      f"(median {r['task_wall']:.2f} s)  overhead/task {r['overhead_ms']:6.0f} ms  wall/(sum/c) {r['ratio']:.2f}  "
                      f"RSS/task {r['rss_mb']:.1f} MB (pilot {r['pilot_rss_mb']:.1f}, PSS {r['pss_mb']:.1f}; host {r['host_mb']:.1f})  "
                      f"pilot CPU/task {r['cpu']:.1f} %  "
                      f"end->next start {r['reaction_ms']:.0f} ms (median)  last round's spread {r['tail']:.2f} s  "
                      f"overhead/task without the tail's idle slots {r['own_ms']:.0f} ms",
                      flush=True)
            if engine == "ray":
                ray.shutdown()
    return verdict(results)


def verdict(results: list[dict]) -> int:
    checks = []
    for r in results:
        limit = 100 if r["engine"] == "local" else 500
        checks.append((f"{r['engine']} c={r['concurrency']}: overhead {r['overhead_ms']:.0f} ms/task <= {limit}", r["overhead_ms"] <= limit))
        checks.append((f"{r['engine']} c={r['concurrency']}: RSS {r['rss_mb']:.1f} MB/running task <= 80", r["rss_mb"] <= 80))
        if r["concurrency"] == 8:
            checks.append((f"{r['engine']} c=8: wall/(sum of walls/8) {r['ratio']:.2f} <= 1.3", r["ratio"] <= 1.3))
    for text, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
