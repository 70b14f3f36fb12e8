"""TUI load: the pilot's CPU while a program redraws an Ink-style block for a long time.

The child erases and redraws a 10-line bottom block (erase-line + cursor-up, as Ink's
log-update does) with a spinner 20 times a second, at about RATE bytes/s, for SECONDS, then
asks one y/N question. The pilot's CPU time is the whole tree's (wait4) minus what the child
reports for itself; the figure is that CPU time as a share of the wall time (one core = 100%).

    python bench/tui_load.py [--seconds 60] [--rate 20000]
"""

from __future__ import annotations

import argparse
import json

from benchlib import CHILDREN, Report, answered_run, records, scratch, show_failure


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=20000.0, help="bytes per second the child writes")
    args = ap.parse_args()
    report = Report("tui_load")
    with scratch("tui") as work:
        child_usage = work / "child.json"
        m, log = answered_run(work, "Continue\\?", [*CHILDREN, "tui", str(args.seconds), str(args.rate), str(child_usage)])
        child = json.loads(child_usage.read_text()) if child_usage.exists() else {"cpu_s": 0.0, "frames": 0}
        raw = log / "session.raw"
        written = raw.stat().st_size if raw.exists() else 0
        pilot_cpu = m.cpu_s - child["cpu_s"]
        answers = sum(1 for r in records(log) if r["type"] == "answer")
        states = [r.get("state") for r in records(log) if r["type"] == "screen_state"]
        report.figure("wall", m.wall_s, "s")
        report.figure("frames drawn", child["frames"])
        report.figure("output rate", written / args.seconds / 1000, "KB/s")
        report.figure("child cpu", child["cpu_s"], "s")
        report.figure("pilot cpu", pilot_cpu, "s")
        report.figure("pilot cpu share of one core", 100 * pilot_cpu / m.wall_s, "%")
        report.figure("pilot peak RSS", m.maxrss_mb, "MB")
        report.figure("answers", answers)
        report.figure("screen states seen", " ".join(dict.fromkeys(s for s in states if s)))
        report.target(pilot_cpu / m.wall_s <= 0.15, "pilot cpu <= 15% of one core")
        report.target(answers == 1 and m.rc == 0, "the question answered once, exit 0")
        show_failure(m)
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
