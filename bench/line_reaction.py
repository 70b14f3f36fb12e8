"""Line-mode reaction: prompt complete -> first key, on prompts no specific rule knows, with the rules provider.

Three readers: stdin, /dev/tty (getpass, ssh) and a worker thread (the main thread only joins it); the kernel must see
each one wait. Then full-screen menus read by a poll() loop in raw mode (newt, dialog): drawn -> first key.

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
        rules = work / "rules.yaml"
        rules.write_text("- {id: name, match: 'Item \\d+ name>', reply: widget}\n- {id: menu, match: 'choose an item', reply: gamma}\n")
        for reader in ("stdin", "devtty", "thread"):
            times, log = work / f"times-{reader}.jsonl", work / f"log-{reader}"
            m = measure([*pilot(), "run", "--quiet", "--rules", str(rules), "--log", str(log), "--", *CHILDREN, "lines",
                         str(args.prompts), str(times), reader], cwd=work)
            rows = [json.loads(line) for line in times.read_text().splitlines()] if times.exists() else []
            answers = [r for r in records(log) if r["type"] == "answer"]
            reaction = [(r["first_byte"] - r["asked"]) * 1000 for r in rows]
            stray = [r for r in answers if "Waiting for the server" in (r.get("prompt") or "")]
            report.figure(f"[{reader}] prompts answered", len(rows))
            report.figure(f"[{reader}] false positives (keys on a busy partial line)", len(stray))
            report.figure(f"[{reader}] pilot exit code", m.rc)
            reaction_figures(report, reaction)
            report.target(len(rows) == args.prompts and m.rc == 0, f"[{reader}] all {args.prompts} prompts answered, exit 0")
            report.target(bool(reaction) and statistics.median(reaction) <= 150, f"[{reader}] prompt complete -> first key p50 <= 150 ms")
            report.target(not stray and len(answers) == args.prompts, f"[{reader}] no key on a busy partial line")
            show_failure(m)
        n = max(5, args.prompts // 3)
        times, log = work / "times-menus.jsonl", work / "log-menus"
        m = measure([*pilot(), "run", "--quiet", "--rules", str(rules), "--log", str(log), "--", *CHILDREN, "menus", str(n), str(times)],
                    cwd=work)
        rows = [json.loads(line) for line in times.read_text().splitlines()] if times.exists() else []
        reaction = [(r["first_byte"] - r["asked"]) * 1000 for r in rows]
        report.figure("[poll menu] menus answered", len(rows))
        report.figure("[poll menu] chosen", ",".join(sorted({r["reply"] for r in rows})))
        reaction_figures(report, reaction)
        report.target(len(rows) == n and m.rc == 0 and all(r["reply"] == "gamma" for r in rows), f"[poll menu] all {n} menus answered gamma")
        report.target(bool(reaction) and statistics.median(reaction) <= 500, "[poll menu] menu drawn -> first key p50 <= 500 ms")
        show_failure(m)
    return report.finish()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
