"""Run every benchmark, print every figure, end with the overall PASS or FAIL.

    python bench/run_all.py [--quick]

--quick shortens the long ones (tui_load 10 s, flood 20 MB and 80 MB, one run each, report 10 and 40 MB) for a
smoke check; the targets are meant for the full run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["startup", "reaction", "prompt_size", "tui_load", "flood", "report", "human"]
QUICK = {"tui_load": ["--seconds", "10"], "flood": ["--sizes", "20,80", "--repeat", "1"], "reaction": ["--prompts", "20"],
         "report": ["--sizes", "10,40", "--cast-mb", "10"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    verdicts: dict[str, str] = {}
    for name in SCRIPTS:
        extra = QUICK.get(name, []) if args.quick else []
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *extra], stdout=subprocess.PIPE, text=True, cwd=HERE.parent)
        lines = proc.stdout.rstrip().splitlines()
        for line in lines:
            print(line, flush=True)
        last = lines[-1] if lines else f"FAIL: {name} printed nothing (exit {proc.returncode})"
        verdicts[name] = last if last.startswith(("PASS", "FAIL")) else f"FAIL: {name} ended without a verdict (exit {proc.returncode})"
        print(f"({name} took {time.perf_counter() - start:.0f} s)\n", flush=True)
    print("# summary")
    for name, verdict in verdicts.items():
        print(f"{name}: {verdict}")
    failed = [f"{name} ({verdict[6:]})" for name, verdict in verdicts.items() if verdict != "PASS"]
    print("PASS" if not failed else "FAIL: " + "; ".join(failed))
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
