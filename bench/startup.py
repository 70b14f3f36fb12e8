"""Start-up, per phase: how soon the program a run drives is started, and how soon its first question is answered.

A run of `cursor-pilot run` drives a shell program that writes the time (CLOCK_REALTIME, ns) when it starts, asks
"Continue? [y/n]" at once and writes the time again when its answer arrives; the bench writes the time just before it
execs the pilot, and when the pilot has exited. Per run:

- exec -> program started: the pilot's own start-up, on the way to the program;
- first question -> first key: from the question on screen to the answer read (the pilot's start-up that is not
  before the program's, and its reaction), with a rules answer (--answer) and with a model answer (--provider openai
  against the local fake, tests/fakes/llm_server.py, through the real SDK);
- program exit -> pilot exit: the summary, the records closed, the process gone;
- the whole run, exec -> pilot exit.

Each in three ways (docs/internals.md, "Start-up"): **warm**, the residents up (the resident pilot, and the
provider's SDK in its own resident): N runs; **cold**, the first run on a machine with no resident (it runs in its own
process; a model run waits for the SDK's resident it starts, as a provider process started with the run would):
3 runs, each with a socket folder of its own; **here**, CURSORPILOT_RESIDENT=0 (the run in its own process, the SDK
imported on a thread of it, as before the residents): N runs. Printed as p50 / p90, with `--version` and `--help` as
whole processes, `import openai` alone, and which vendor SDKs a rules run and `--version` import (none may be).
Figures are printed, never a verdict on time: regressions show in CI's log (.ci/run prints this after the yardstick),
never as a red timed test.

    python bench/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, Report, measure, pilot, scratch

sys.path.insert(0, str(ROOT))
from tests.fakes.llm_server import FakeLLM

VENDORS = ("openai", "anthropic", "httpx", "aiohttp", "apprise", "segno")  # the SDKs, and what reaches a person (docs/human.md)
PROGRAM = ('date +%s.%N > "$STAMPS/started"; date +%s.%N > "$STAMPS/asked"; printf "Continue? [y/n] "; read a; '
           'date +%s.%N > "$STAMPS/answered"; echo "got $a"')


def imported_vendors(cmd: list[str], cwd: Path) -> list[str]:
    m = measure(cmd, cwd=cwd, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    names = {line.split("|")[-1].strip().split(".")[0] for line in m.stderr.splitlines() if line.startswith("import time:")}
    return sorted(v for v in VENDORS if v in names)


def one_run(work: Path, answerer: list[str], env: dict[str, str], n: str) -> dict[str, float]:
    """One run's phases, in ms."""
    stamps = work / f"stamps-{n}"
    stamps.mkdir()
    cmd = [*pilot(), "run", "--quiet", "--log", str(work / f"log-{n}"), *answerer, "--", "sh", "-c", PROGRAM]
    t0 = time.time()
    m = measure(cmd, cwd=work, env={**env, "STAMPS": str(stamps)})
    t_end = t0 + m.wall_s
    if m.rc != 0:
        raise SystemExit(f"the run exited {m.rc}: {(m.stdout + m.stderr).strip()[-300:]}")
    got = {name: float((stamps / name).read_text()) for name in ("started", "asked", "answered")}
    return {"exec -> program started": (got["started"] - t0) * 1000, "first question -> first key": (got["answered"] - got["asked"]) * 1000,
            "program exit -> pilot exit": (t_end - got["answered"]) * 1000, "exec -> pilot exit": m.wall_s * 1000}


def phases(report: Report, label: str, work: Path, answerer: list[str], env: dict[str, str], runs: int) -> dict[str, list[float]]:
    """The phases warm, cold and here (see above), printed; the warm ones returned."""
    out = {}
    for mode in ("warm", "cold", "here"):
        rows = []
        for n in range(runs if mode != "cold" else 3):
            runtime = Path(tempfile.mkdtemp(prefix="cp-", dir="/tmp"))  # a socket folder of this mode's own
            mode_env = {**env, "XDG_RUNTIME_DIR": str(runtime if mode == "cold" else work / "run")}
            if mode == "here":
                mode_env["CURSORPILOT_RESIDENT"] = "0"
            if mode == "warm" and n == 0:
                (work / "run").mkdir(mode=0o700, exist_ok=True)
                one_run(work, answerer, mode_env, f"{label}-start")  # starts the residents
                if not up(work / "run" / "cursor-pilot", answerer):
                    report.figure(f"{label}, warm and cold", "no resident came up (a cursor-pilot without them?): not measured")
                    break
            rows.append(one_run(work, answerer, mode_env, f"{label}-{mode}-{n}"))
            if mode == "cold":
                stop_residents(runtime)
        if not rows:
            continue
        figures = {key: [r[key] for r in rows] for key in rows[0]}
        for key, values in figures.items():
            report.figure(f"{label}, {mode}: {key} p50 / p90", f"{p(values, 50):.0f} / {p(values, 90):.0f}", "ms")
        out[mode] = figures
    return out.get("warm") or out["here"]


def up(folder: Path, answerer: list[str], within: float = 30) -> bool:
    """Until the residents a run started listen (the pilot's; the SDK's, for a model run): whether they did."""
    wanted = ["pilot-*.sock", *(["openai-*.sock"] if "openai" in answerer else [])]
    deadline = time.monotonic() + within
    while not all(list(folder.glob(w)) for w in wanted):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # polling a folder the bench watches; nothing under test waits on this
    return True


def stop_residents(runtime: Path) -> None:
    """Kill the daemons a cold run started (their command lines name their sockets in `runtime`)."""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(runtime).encode() in (proc / "cmdline").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
        except OSError:
            continue
    shutil.rmtree(runtime, ignore_errors=True)


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def whole(report: Report, label: str, cmd: list[str], work: Path, runs: int) -> list[float]:
    measure(cmd, cwd=work)  # warm
    walls = [measure(cmd, cwd=work).wall_s * 1000 for _ in range(runs)]
    report.figure(f"{label} p50 / p90", f"{p(walls, 50):.0f} / {p(walls, 90):.0f}", "ms")
    return walls


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    report = Report("startup")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    with scratch("startup") as work:
        whole(report, "--version", [*pilot(), "--version"], work, args.runs)
        whole(report, "--help", [*pilot(), "--help"], work, args.runs)
        whole(report, "import openai (a Python that imports it and exits)", [sys.executable, "-c", "import openai"], work, args.runs)
        rules = phases(report, "rules", work, ["--answer", r"Continue\?=y"], base, args.runs)
        with FakeLLM(answer=lambda prompt: "y") as server:
            model = phases(report, "model", work, ["--provider", "openai", "--model", "fake", "--base-url", server.url + "/v1"],
                           {**base, "OPENAI_API_KEY": "sk-bench-0123456789"}, args.runs)
        vendors_v = imported_vendors([*pilot(), "--version"], work)
        vendors_r = imported_vendors([*pilot(), "run", "--quiet", "--log", str(work / "log-vendors"), "--answer", r"Continue\?=y",
                                      "--", "sh", "-c", 'printf "Continue? [y/n] "; read a'], work)
        report.figure("vendor SDKs imported by --version", ",".join(vendors_v) or "none")
        report.figure("vendor SDKs imported by a rules run", ",".join(vendors_r) or "none")
        report.target(not vendors_v and not vendors_r, "no vendor SDK imported by --version or a rules run")
        started = statistics.median(rules["exec -> program started"] + model["exec -> program started"])
        report.figure("exec -> program started, both answerers, p50 (warm when there are residents)", f"{started:.0f}", "ms")
        stop_residents(work / "run")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
