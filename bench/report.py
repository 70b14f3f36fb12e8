"""The report of a long run: `cursor-pilot report` on a 100 MB transcript (and a 25 MB one), time and peak memory.

    python bench/report.py [--sizes 25,100] [--cast-mb 40] [--keep]

The run folder is made up, in the shapes the pilot writes: decision cycles (a screen_state with a 3 KB prompt
block, state transitions, a provider request with its prompt file, the reply with usage, the answer, the keys),
agent message chunks in between, and a session.cast of --cast-mb of output with an input event per keys_sent.
The report is made by the installed `cursor-pilot report`, as a whole process (wait4: wall, CPU, peak RSS).
Targets: the report of the 100 MB transcript in ≤ 60 s; peak RSS ≤ 250 MB and within 40 MB of the 25 MB one's
(memory bounded, not proportional); report.html ≤ 20 MB, whatever the size of the run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Report, measure, pilot, scratch, show_failure  # noqa: E402

BLOCK = "\n".join(f" │ {'line %d of the build log, with some words in it to look like output' % i:<110}│" for i in range(28))


def make_run(folder: Path, mb: int, cast_mb: int, seed: int = 7) -> dict:
    """A run folder with a transcript of about `mb` MB; returns what it holds."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    (folder / "prompts" / "step-01").mkdir(parents=True)
    seq, mono, keys = 0, 1000.0, 0
    cycles = 0
    with open(folder / "transcript.jsonl", "w", encoding="utf-8") as tx:
        def emit(type_: str, **fields) -> None:
            nonlocal seq
            seq += 1
            tx.write(json.dumps({"type": type_, "seq": seq, "ts": f"2026-11-24T10:{int(mono // 60) % 60:02d}:{mono % 60:06.3f}Z",
                                 "mono": round(mono, 4), "run_id": "bench", **fields}, ensure_ascii=False) + "\n")

        emit("run_started", argv=["cursor-pilot", "run", "--", "agent"], plan="command", provider="openai", model="gpt-4o-mini",
             steps=["agent"], dry_run=False, governing_prompt="Approve what the task needs.", cwd=str(folder), git=None)
        emit("step_started", step=1, name="agent", kind="drive")
        emit("program_started", step=1, pid=1, command=["agent"], profile="claude")
        while tx.tell() < mb << 20:
            cycles += 1
            for _ in range(rng.randint(5, 15)):
                mono += 0.05
                emit("screen_state", state="working", rule_id="claude.working", prompt=None, evidence=["esc to interrupt"], error=None)
            mono += 0.5
            prompt = f"{BLOCK}\n Question {cycles}: do you want to proceed? [y/n]"
            emit("screen_state", state="question", rule_id="generic.yes_no", prompt=prompt, evidence=["[y/n]"], error=None)
            emit("state", event="prompt", **{"from": "RUNNING"}, to="ASKING_QUESTION", rule_id="generic.yes_no")
            name = f"prompts/step-01/{cycles:03d}-prompt.md"
            (folder / name).write_text(f"<!-- system -->\nYou answer.\n<!-- user -->\n{prompt}\n", encoding="utf-8")
            emit("provider_request", provider="openai", kind="question", rule_id="generic.yes_no", prompt=prompt,
                 prompt_tokens_est=1200, prompt_file=name)
            mono += 0.4
            emit("provider_reply", source="openai:gpt-4o-mini", text="y", wait=False, submit=None, raw='{"action":"type","text":"y"}',
                 removed=[], reason="", usage={"in": 1200, "out": 9, "latency_s": 0.4, "calls": 1, "cost_usd": 0.0002})
            emit("answer", step=1, rule_id="generic.yes_no", prompt=prompt, reply="y", source="openai:gpt-4o-mini", n=cycles, kind="question")
            emit("state", event="reply", **{"from": "ASKING_QUESTION"}, to="ANSWERING", rule_id="generic.yes_no")
            for data in ("y", "\r"):
                mono += 0.15
                emit("keys_sent", keys=data if data != "\r" else "<enter>", data=data, hex=data.encode().hex())
                keys += 1
            emit("state", event="typed", **{"from": "ANSWERING"}, to="RUNNING", rule_id=None)
        emit("program_exited", step=1, code=0, signal=None, describe="exit code 0", last_words=None)
        emit("step_finished", step=1, name="agent", status="completed", exit_code=0, reason="completed")
        emit("run_finished", exit_code=0, reason="completed", counters={"answers": cycles, "escalations": 0, "llm_calls": cycles},
             cost_usd=round(cycles * 0.0002, 6))
    duration = mono - 1000.0
    with open(folder / "session.cast", "w", encoding="utf-8") as cast:
        cast.write(json.dumps({"version": 2, "width": 120, "height": 40}) + "\n")
        size, t, chunk = 0, 0.0, json.dumps("working… " * 400)
        outputs = max(1, (cast_mb << 20) // (len(chunk) + 20))
        inputs_every = max(1, outputs // max(keys, 1))
        for i in range(outputs):
            t = duration * i / outputs
            cast.write(f'[{t:.6f}, "o", {chunk}]\n')
            if i % inputs_every == 0 and keys:
                cast.write(f'[{t:.6f}, "i", "y"]\n')
                keys -= 1
    return {"transcript_mb": (folder / "transcript.jsonl").stat().st_size / (1 << 20), "records": seq, "decisions": cycles,
            "cast_mb": (folder / "session.cast").stat().st_size / (1 << 20)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="25,100", help="transcript sizes in MB (the last one is held to the targets)")
    ap.add_argument("--cast-mb", type=int, default=40)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    report = Report("report")
    sizes = [int(s) for s in args.sizes.split(",")]
    rss: dict[int, float] = {}
    with scratch("report", keep=args.keep) as work:
        for mb in sizes:
            folder = work / f"run-{mb}"
            held = make_run(folder, mb, args.cast_mb)
            m = measure([*pilot(), "report", str(folder)], cwd=work)
            show_failure(m, "cursor-pilot report")
            html = folder / "report.html"
            data = json.loads((folder / "report.json").read_text()) if m.rc == 0 else {}
            report.figure(f"{mb} MB: transcript", held["transcript_mb"], "MB")
            report.figure(f"{mb} MB: records / decisions", f"{held['records']} / {held['decisions']}")
            report.figure(f"{mb} MB: session.cast", held["cast_mb"], "MB")
            report.figure(f"{mb} MB: report wall", m.wall_s, "s")
            report.figure(f"{mb} MB: report CPU", m.cpu_s, "s")
            report.figure(f"{mb} MB: peak RSS", m.maxrss_mb, "MB")
            report.figure(f"{mb} MB: report.html", html.stat().st_size / (1 << 20) if html.exists() else 0.0, "MB")
            report.figure(f"{mb} MB: ledger rows shown / total", f"{len(data.get('ledger', []))} / {data.get('ledger_total')}")
            rss[mb] = m.maxrss_mb
            if mb == sizes[-1]:
                report.target(m.rc == 0, "the report is written (exit 0)")
                report.target(m.wall_s <= 60, f"{mb} MB transcript reported in ≤ 60 s")
                report.target(m.maxrss_mb <= 250, "peak RSS ≤ 250 MB")
                report.target(html.exists() and html.stat().st_size <= 20 << 20, "report.html ≤ 20 MB")
                report.target(bool(data) and any("left out" in n for n in data["notes"]), "the page says what it left out")
    if len(sizes) > 1:
        report.figure("peak RSS growth, smallest to largest", rss[sizes[-1]] - rss[sizes[0]], "MB")
        report.target(rss[sizes[-1]] - rss[sizes[0]] <= 40, "memory bounded: RSS within 40 MB across sizes")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
