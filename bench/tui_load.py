"""TUI load: the pilot's CPU while a program redraws an Ink-style block for a long time.

The child erases and redraws a 10-line bottom block (erase-line + cursor-up, as Ink's
log-update does) with a spinner 20 times a second, at about RATE bytes/s, for SECONDS, then
asks one y/N question. The figure is the pilot's CPU time as a share of the wall time (one
core = 100%).

The pilot is measured where the run runs. A run is served by the resident pilot (warmstart.py):
a child of that daemon runs it, and `cursor-pilot run` itself only hands it over and waits, so
wait4 on the command saw the client alone and the child's CPU was subtracted from it: -0.218 s,
"-0.362 % of one core", and "target met". A warm-up run starts the resident first (as any run in
the last ten minutes has); the measured run's served child is found and read from /proc
(benchlib.ServedWatch), the client's own CPU added. The program reads its parent's CPU from
/proc before it exits: the process measured must be that parent, and its figure no less. A
negative figure, more than the cores could give, or a figure for another process is an error.

    python bench/tui_load.py [--seconds 60] [--rate 20000]
"""

from __future__ import annotations

import argparse
import json
import os

from benchlib import CHILDREN, Measured, Report, answered_run, records, scratch, show_failure


def checked(m: Measured, pilot_cpu: float, child: dict) -> list[str]:
    """Why the figure can not be the pilot's CPU time: none of these, or the bench measured something else."""
    wrong = []
    if pilot_cpu <= 0:
        wrong.append(f"a pilot CPU of {pilot_cpu:.3f} s is impossible (the pilot read 20 KB/s)")
    if pilot_cpu > m.wall_s * (os.cpu_count() or 1):
        wrong.append(f"a pilot CPU of {pilot_cpu:.3f} s in {m.wall_s:.1f} s is more than {os.cpu_count()} cores give")
    measured = m.served.pid if m.served is not None else m.pid
    if child.get("pilot_pid") is not None and child["pilot_pid"] != measured:
        wrong.append(f"measured pid {measured}, but the program's pilot was pid {child['pilot_pid']}")
    seen = child.get("pilot_cpu_at_end_s")
    if isinstance(seen, (int, float)) and m.served is not None and m.served.cpu_s + 0.011 < seen:
        wrong.append(f"the served child's CPU {m.served.cpu_s:.3f} s is less than the {seen:.3f} s /proc showed before its end")
    return wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=20000.0, help="bytes per second the child writes")
    args = ap.parse_args()
    report = Report("tui_load")
    with scratch("tui") as work:
        answered_run(work, "Continue\\?", ["true"], log_name="warm-up")  # the resident pilot up, as after any recent run
        child_usage = work / "child.json"
        m, log = answered_run(work, "Continue\\?", [*CHILDREN, "tui", str(args.seconds), str(args.rate), str(child_usage)])
        child = json.loads(child_usage.read_text()) if child_usage.exists() else {"cpu_s": 0.0, "frames": 0}
        raw = log / "session.raw"
        written = raw.stat().st_size if raw.exists() else 0
        pilot_cpu = m.pilot_cpu_s(child["cpu_s"])
        answers = sum(1 for r in records(log) if r["type"] == "answer")
        states = [r.get("state") for r in records(log) if r["type"] == "screen_state"]
        report.figure("pilot process measured", m.where())
        report.figure("wall", m.wall_s, "s")
        report.figure("frames drawn", child["frames"])
        report.figure("output rate", written / args.seconds / 1000, "KB/s")
        report.figure("child cpu", child["cpu_s"], "s")
        report.figure("client cpu", m.client_cpu_s, "s")
        report.figure("pilot cpu", pilot_cpu, "s")
        if "pilot_cpu_at_end_s" in child:
            report.figure("pilot cpu by /proc, before the program's end", child["pilot_cpu_at_end_s"], "s")
        report.figure("pilot cpu share of one core", 100 * pilot_cpu / m.wall_s, "%")
        report.figure("pilot peak RSS", m.maxrss_mb, "MB")
        report.figure("answers", answers)
        report.figure("screen states seen", " ".join(dict.fromkeys(s for s in states if s)))
        for why in checked(m, pilot_cpu, child):
            report.target(False, f"a figure of the pilot's own process: {why}")
        report.target(0 < pilot_cpu / m.wall_s <= 0.15, "pilot cpu <= 15% of one core")
        report.target(answers == 1 and m.rc == 0, "the question answered once, exit 0")
        show_failure(m)
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
