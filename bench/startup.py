"""Start-up: `cursor-pilot --version` and a `run --dry-run` of a small plan, as whole processes.

Each is run N times; the median wall time is the figure. The vendor SDKs (openai,
anthropic) must not be imported by either: PYTHONPROFILEIMPORTTIME lists every module a
process imports, and the bench checks that list.

    python bench/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
from pathlib import Path

from benchlib import ROOT, Report, measure, pilot, scratch

VENDORS = ("openai", "anthropic", "httpx", "aiohttp", "apprise", "segno")  # the SDKs, and what reaches a person (docs/human.md)


def imported_vendors(cmd: list[str], cwd: Path) -> list[str]:
    m = measure(cmd, cwd=cwd, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    names = {line.split("|")[-1].strip().split(".")[0] for line in m.stderr.splitlines() if line.startswith("import time:")}
    return sorted(v for v in VENDORS if v in names)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    report = Report("startup")
    with scratch("startup") as work:
        version = [*pilot(), "--version"]
        plan = ROOT / "plans" / "line-tools.yaml"
        dry = [*pilot(), "run", "--quiet", "--dry-run", "--plan", str(plan), "--log", str(work / "log")]
        measure(version, cwd=work)  # warm the page cache and the bytecode cache once
        v = [measure(version, cwd=work) for _ in range(args.runs)]
        d = []
        for _ in range(max(3, args.runs // 3)):
            shutil.rmtree(work / "log", ignore_errors=True)
            d.append(measure(dry, cwd=work))
        report.figure("--version median", statistics.median(x.wall_s for x in v) * 1000, "ms")
        report.figure("--version max", max(x.wall_s for x in v) * 1000, "ms")
        report.figure("--version peak RSS", max(x.maxrss_mb for x in v), "MB")
        report.figure("run --dry-run (2-step plan) median", statistics.median(x.wall_s for x in d) * 1000, "ms")
        report.figure("run --dry-run exit codes", ",".join(sorted({str(x.rc) for x in d})))
        vendors_v = imported_vendors(version, work)
        shutil.rmtree(work / "log", ignore_errors=True)
        vendors_d = imported_vendors(dry, work)
        report.figure("vendor SDKs imported by --version", ",".join(vendors_v) or "none")
        report.figure("vendor SDKs imported by run --dry-run (rules)", ",".join(vendors_d) or "none")
        report.target(statistics.median(x.wall_s for x in v) <= 0.3, "--version median <= 300 ms")
        report.target(not vendors_v and not vendors_d, "no vendor SDK imported")
        report.target(all(x.rc == 0 for x in v + d), "every run exits 0")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
