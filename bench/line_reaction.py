"""Line-mode reaction: prompt complete -> first key, on prompts no specific rule knows, with the rules provider.

The child asks N prompts ("Item 3 name> ") in cbreak mode and notes when each prompt's last byte was written and
when the reply's first byte arrived. No rule knows the prompt text: before the kernel check, such a prompt was taken
as waiting for input only after 1.5 s of silence. Now the pilot asks the kernel: the foreground process blocked in
read() on the terminal has finished its prompt. After each answer the child writes a partial line ending in "?"
while it sleeps (busy, not reading): any key typed there is a false positive.

    python bench/line_reaction.py [--prompts 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchlib import CHILDREN, Report, measure, pilot, reaction_figures, records, scratch, show_failure


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=30)
    args = ap.parse_args()
    report = Report("line_reaction")
    with scratch("line_reaction") as work:
        times = work / "times.jsonl"
        rules = work / "rules.yaml"
        rules.write_text("- {id: name, match: 'Item \\d+ name>', reply: widget}\n")
        log = work / "log"
        m = measure([*pilot(), "run", "--quiet", "--rules", str(rules), "--log", str(log), "--", *CHILDREN, "lines",
                     str(args.prompts), str(times)], cwd=work)
        rows = [json.loads(line) for line in times.read_text().splitlines()] if times.exists() else []
        answers = [r for r in records(log) if r["type"] == "answer"]
        reaction = [(r["first_byte"] - r["asked"]) * 1000 for r in rows]
        stray = [r for r in answers if "Waiting for the server" in (r.get("prompt") or "")]
        report.figure("prompts answered", len(rows))
        report.figure("answers typed", len(answers))
        report.figure("false positives (keys on a busy partial line)", len(stray))
        report.figure("pilot exit code", m.rc)
        reaction_figures(report, reaction)
        report.target(len(rows) == args.prompts and m.rc == 0, f"all {args.prompts} prompts answered, exit 0")
        report.target(bool(reaction) and statistics.median(reaction) <= 150, "prompt complete -> first key p50 <= 150 ms")
        report.target(not stray and len(answers) == args.prompts, "no key on a busy partial line")
        show_failure(m)
    return report.finish()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
