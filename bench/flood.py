"""Output flood: a child writes MB megabytes of lines, then asks one question.

Baseline: a minimal PTY reader (os.openpty + os.read) drains the same child and answers the
question the moment it appears. The pilot runs the same child with a rules file. Figures:
wall-time ratio pilot/baseline, the pilot's peak RSS (wait4 ru_maxrss; the child is tiny),
bytes lost (flood bytes expected minus flood bytes in session.raw) and the number of answers.
Run at two sizes (default 50 and 200 MB) to show that RSS does not grow with output.

The ratio target is on the drain time: from spawn to the question's last byte having been
read (the baseline notes it as it reads; the pilot's is the session.cast time of that output).
That is how much the pilot slows the program. The wall ratio is printed too: it adds the
pilot's start-up, the settle window before answering and the Enter delay, which
bench/reaction.py and bench/startup.py measure on their own.

    python bench/flood.py [--sizes 50,200] [--repeat 3] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from benchlib import CHILDREN, Report, answered_run, records, scratch, show_failure

LINE_LEN = 100
QUESTION = b"Continue? [y/N] "


def child(mb: float) -> list[str]:
    return [*CHILDREN, "flood", str(mb), str(LINE_LEN)]


def baseline(mb: float) -> tuple[float, float, int]:
    """Wall time, drain time (start to the question's last byte) and bytes read by the simplest possible PTY reader."""
    master, slave = os.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(child(mb), stdin=slave, stdout=slave, stderr=slave, start_new_session=True, close_fds=True)
    os.close(slave)
    total, tail, answered, drained = 0, b"", False, 0.0
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        total += len(data)
        if not answered:
            tail = (tail + data)[-64:]
            if tail.endswith(QUESTION):
                drained = time.perf_counter() - start
                os.write(master, b"y\r")
                answered = True
    proc.wait()
    os.close(master)
    return time.perf_counter() - start, drained, total


def cast_drain(cast: Path) -> float:
    """When the pilot had read the question: the asciicast time of the output event that ends with it."""
    with open(cast, "rb") as fh:
        fh.seek(max(0, cast.stat().st_size - 1_000_000))
        tail = fh.read().decode(errors="replace").splitlines()
    for line in reversed(tail):
        if line.startswith("[") and '"o"' in line and "Continue? [y/N]" in line:
            return float(line[1:].split(",", 1)[0])
    return float("nan")


def run_pilot(mb: float, work: Path, n: int = 0) -> tuple[float, float, float, int, int, int]:
    """Wall, drain time, peak RSS (MB), bytes lost, answers, exit code of the pilot."""
    m, log = answered_run(work, "Continue\\?", child(mb), f"log-{mb:g}-{n}")
    raw = (log / "session.raw").read_bytes() if (log / "session.raw").exists() else b""
    cut = raw.find(QUESTION)
    flood_bytes = cut if cut >= 0 else len(raw)
    expected = (int(mb * 1024 * 1024) // LINE_LEN) * (LINE_LEN + 1)  # the tty turns each \n into \r\n
    answers = sum(1 for r in records(log) if r["type"] == "answer")
    show_failure(m)
    print(f"  {mb:g}MB run {n}: pilot measured in {m.where()}", flush=True)  # a served run's child, not its client (benchlib.measure)
    drain = cast_drain(log / "session.cast") if (log / "session.cast").exists() else float("nan")
    return m.wall_s, drain, m.maxrss_mb, expected - flood_bytes, answers, m.rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,200", help="megabytes to write, comma-separated (first one sets the ratio target)")
    ap.add_argument("--keep", action="store_true", help="keep the run folders")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the first size (medians are reported)")
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    report = Report("flood")
    report.figure("cpu cores", os.cpu_count() or 0)
    rss: list[float] = []
    with scratch("flood", args.keep) as work:
        for mb in sizes:
            runs = args.repeat if mb == sizes[0] else 1
            base, pilots = [], []
            for n in range(runs):  # interleaved, each after a sync: disk writeback of earlier runs' logs lands on neither
                os.sync()
                base.append(baseline(mb))
                os.sync()
                pilots.append(run_pilot(mb, work, n))
                if not args.keep:
                    shutil.rmtree(work / f"log-{mb:g}-{n}", ignore_errors=True)
            base_wall, base_drain, base_bytes = (statistics.median(x) for x in zip(*base))
            wall, drain = (statistics.median(x) for x in list(zip(*pilots))[:2])
            peak = max(p[2] for p in pilots)
            lost = max(p[3] for p in pilots)
            answers_ok = all(p[4] == 1 and p[5] == 0 for p in pilots)
            tag = f"{mb:g}MB" + (f" (median of {runs})" if runs > 1 else "")
            report.figure(f"{tag} baseline drain", base_drain, "s")
            report.figure(f"{tag} baseline wall", base_wall, "s")
            report.figure(f"{mb:g}MB baseline bytes read", base_bytes)
            report.figure(f"{tag} pilot drain", drain, "s")
            report.figure(f"{tag} pilot wall", wall, "s")
            report.figure(f"{mb:g}MB drain ratio pilot/baseline", drain / base_drain)
            report.figure(f"{mb:g}MB wall ratio pilot/baseline", wall / base_wall)
            report.figure(f"{mb:g}MB pilot peak RSS", peak, "MB")
            report.figure(f"{mb:g}MB bytes lost", lost)
            report.figure(f"{mb:g}MB answers", ",".join(str(p[4]) for p in pilots))
            if mb == sizes[0]:
                report.target(drain / base_drain <= 1.5, f"{mb:g}MB drain ratio <= 1.5")
            report.target(0 < peak <= 150, f"{mb:g}MB peak RSS <= 150 MB (and a figure: more than 0)")
            report.target(lost == 0, f"{mb:g}MB 0 bytes lost")
            report.target(answers_ok, f"{mb:g}MB exactly 1 answer, exit 0")
            rss.append(peak)
        if len(rss) > 1:
            growth = rss[-1] - rss[0]
            report.figure("RSS growth smallest->largest", growth, "MB")
            report.target(growth <= 15, "RSS does not grow with output (<= 15 MB)")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
