"""Reaction time: from a prompt's last byte to the first byte of the reply, over N prompts.

A child asks N numbered y/N questions. It notes the monotonic time right after writing each
prompt and the time the reply's first byte reaches it (stdin in cbreak mode, so the tty does
not hold the byte back until Enter). The pilot answers with the rules provider. The
child reads its terminal, so the kernel says it waits for input (pty/kernel.py) and the classifier needs only
READING_SETTLE of quiet instead of the rule's settle window (400 ms); the rest of the reaction time is the pilot's
own overhead.

    python bench/reaction.py [--prompts 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchlib import (
    CHILDREN,
    Report,
    answered_run,
    percentile,
    reaction_figures,
    records,
    scratch,
    show_failure,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from cursorpilot.detect.classifier import READING_SETTLE  # noqa: E402
from cursorpilot.detect.profiles import load_profile  # noqa: E402


def settle_window(rule_id: str) -> float:
    profile = load_profile("generic")
    rule = next(r for r in profile.rules if r.id == rule_id)
    return max(profile.settle_ms, rule.quiet_ms or 0) / 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=50)
    args = ap.parse_args()
    report = Report("reaction")
    with scratch("reaction") as work:
        times = work / "times.jsonl"
        m, log = answered_run(work, "Question \\d+: Continue\\?", [*CHILDREN, "prompts", str(args.prompts), str(times)])
        rows = [json.loads(line) for line in times.read_text().splitlines()] if times.exists() else []
        answers = [r for r in records(log) if r["type"] == "answer"]
        rule_ids = {r["rule_id"] for r in answers}
        settle = min(max((settle_window(r) for r in rule_ids), default=0.4), READING_SETTLE)
        reaction = [(r["first_byte"] - r["asked"]) * 1000 for r in rows]
        overhead = [x - settle * 1000 for x in reaction]
        report.figure("prompts answered", len(rows))
        report.figure("pilot exit code", m.rc)
        report.figure("settle window", settle * 1000, "ms")
        reaction_figures(report, reaction)
        if reaction:
            report.figure("overhead p50", statistics.median(overhead), "ms")
            report.figure("overhead p95", percentile(overhead, 95), "ms")
        report.target(len(rows) == args.prompts and m.rc == 0, f"all {args.prompts} prompts answered, exit 0")
        report.target(bool(overhead) and percentile(overhead, 95) <= 30, "overhead p95 <= 30 ms")
        report.target(bool(reaction) and statistics.median(reaction) <= settle * 1000 + 30, "reaction p50 <= settle + 30 ms")
        show_failure(m)
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
