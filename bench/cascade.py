#!/usr/bin/env python3
"""The yardstick's thirty programs through a cascade: the 0.5B model in-process first, the yardstick's oracle after it.

    python bench/cascade.py --pilot .venv/bin/cursor-pilot                 # all thirty (the model: bench/packaged_model.py)
    python bench/cascade.py --set first --timeout-scale 3                  # the first ten
    python bench/cascade.py npm-init rm-ri --margin 0.3                    # some, at another threshold

cursor-pilot runs each program with `--provider local --model GGUF` (Qwen2.5-Coder-0.5B-Instruct, the packaged file,
sha256-checked; its cursor-pilot needs the `local` extra) and `--escalate-to openai:oracle@<the oracle>`: the oracle is
the stronger model, and its answer table is the truth each local answer is checked against. Per scenario: the result,
the wall time, the questions the cascade was asked and how many the local model answered, the local answers typed that
differ from the oracle's table (a wrong local answer), and the model's seconds and tokens per question. `--baseline`
also runs each program with the oracle alone (alternating, so the machine's noise falls on both).

Calibration: every local answer is recorded with its margin (the least token margin, providers/confidence.py) whether
it was kept or not, and checked against the oracle's table; the table at the end says, for each threshold, the share
the local model would have answered and how many of those would have been wrong. The threshold chosen is stated in
bench/README.md with these figures. Writes bench/yardstick/results/cascade-<stamp>.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import tempfile
from pathlib import Path

from packaged_model import packaged_gguf
from small_model import SETS, YARDSTICK, run_one, scaled

sys.path.insert(0, str(YARDSTICK))
from oracle import clean, load_table, pick

TEMPLATE = ("{pilot} run --prompt {{prompt_file}} --provider local --model {gguf} "
            "--escalate-to openai:oracle@{{oracle_url}} --escalate-margin {margin} --log {{log_dir}} --timeout {{timeout}}s "
            "--cwd {{workdir}} -- {{command}}")
ALONE = ("{pilot} run --prompt {{prompt_file}} --provider openai --model oracle --base-url {{oracle_url}} --log {{log_dir}} "
         "--timeout {{timeout}}s --cwd {{workdir}} -- {{command}}")
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def same(local: str | None, oracle: str | None, prompt: str = "") -> bool:
    """A local answer is the oracle's: '' and <enter> alike (Enter, the default), and the default typed out where the
    oracle takes it with Enter (the prompt shows it as the default); case aside for one letter (y, Y)."""
    if local is None or oracle is None:
        return False
    a, b = ("" if x.strip() == "<enter>" else x.strip() for x in (local, oracle))
    shown = rf"(?i)(default:?\s*`?{re.escape(a)}`?[).\]]|[(\[]{re.escape(a)}[)\]])"
    if not b and a and re.search(shown, prompt):  # "Default: `rocket_lab`", fdisk's "(1-4, default 1)", "[ticket_tracker]"
        return True
    return a == b or (len(a) == len(b) == 1 and a.lower() == b.lower())


def as_keys(reply: str) -> str:
    """The oracle's reply in the eval's grammar as the keys it types: text then Enter, unless it ends with a key."""
    if not reply:
        return "<enter>"
    return reply if re.search(r"<[a-z0-9:-]+>$", reply) else reply + "<enter>"


def questions_of(log: Path, table) -> list[dict]:
    """Each question the cascade was asked in a run: the local answer, its margin, whether kept, the oracle's answer,
    and, where the local answer was typed, whether its keys are the oracle's (a menu's option named by its label is the
    oracle's `<down><down><enter>` when the pilot typed those keys for it)."""
    out: list[dict] = []
    for transcript in sorted(log.rglob("transcript.jsonl")):
        prompt_file = None
        for line in transcript.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "keys_sent" and out and out[-1].get("typing"):
                out[-1]["typed"] += r.get("keys") or ""
                out[-1]["right"] = out[-1]["right"] or out[-1]["typed"] == as_keys(out[-1]["oracle"] or "\0")
            elif r.get("type") in ("provider_request", "provider_reply") and out:
                out[-1]["typing"] = False
            if r.get("type") == "provider_request":
                prompt_file = r.get("prompt_file")
            elif r.get("type") == "provider_reply" and r.get("cascade"):
                first, usage = r["cascade"][0], r.get("usage") or {}
                prompt = (transcript.parent / prompt_file).read_text(errors="replace") if prompt_file else ""
                _, truth = pick(table, clean(prompt)) if prompt else (None, None)
                out.append({"local": first["text"], "margin": first["margin"], "kept": first["kept"], "why": first["why"],
                            "oracle": truth, "right": same(first["text"], truth, prompt), "latency_s": usage.get("latency_s") or 0.0,
                            "local_s": (first.get("usage") or {}).get("latency_s") or 0.0,
                            "tokens": (usage.get("in") or 0) + (usage.get("out") or 0), "typed": "", "typing": first["kept"]})
    return out


def calibration(asked: list[dict]) -> str:
    """For each threshold: the share the local model would answer (inside the answer space and this sure) and how many
    of those differ from the oracle. A local answer passed on for another reason than its margin stays passed on."""
    rows = ["| margin ≥ | answered locally | wrong among them |", "|---|---|---|"]
    usable = [q for q in asked if q["margin"] is not None and (q["kept"] or q["why"].startswith("unsure: its least"))]
    for t in THRESHOLDS:
        kept = [q for q in usable if q["margin"] >= t]
        rows.append(f"| {t:.1f} | {len(kept)}/{len(asked)} ({100 * len(kept) / max(len(asked), 1):.0f} %) | "
                    f"{sum(not q['right'] for q in kept)} |")
    return "\n".join(rows)


def row(name: str, res: dict, asked: list[dict], alone: dict | None) -> dict:
    kept = [q for q in asked if q["kept"]]
    n = max(len(asked), 1)
    return {"scenario": name, "result": res.get("result"), "wall_s": res.get("wall_s"), "questions": len(asked),
            "local": len(kept), "wrong_local": [f"{q['local']!r} (oracle {q['oracle']!r})" for q in kept if not q["right"]],
            "s_per_q": round(sum(q["latency_s"] for q in asked) / n, 2), "tok_per_q": round(sum(q["tokens"] for q in asked) / n),
            "local_s_kept": round(sum(q["local_s"] for q in kept), 2),
            "local_s_passed": round(sum(q["local_s"] for q in asked if not q["kept"]), 2),
            "alone": None if alone is None else {"result": alone.get("result"), "wall_s": alone.get("wall_s")}}


def table(rows: list[dict]) -> str:
    head = "| scenario | result | wall s | questions | local | wrong local | s/q | tok/q | oracle alone | wall s |"
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        a = r["alone"] or {}
        lines.append(f"| {r['scenario']} | {r['result']} | {r['wall_s']} | {r['questions']} | {r['local']} | "
                     f"{'; '.join(r['wrong_local']) or 0} | {r['s_per_q']} | {r['tok_per_q']} | {a.get('result', '-')} | {a.get('wall_s', '-')} |")
    asked, local = sum(r["questions"] for r in rows), sum(r["local"] for r in rows)
    passed = sum(r["result"] == "PASS" for r in rows)
    wrong = sum(len(r["wrong_local"]) for r in rows)
    lines.append(f"\npassed {passed}/{len(rows)}; answered locally {local}/{asked} ({100 * local / max(asked, 1):.0f} %); "
                 f"wrong local answers typed: {wrong}")
    alone = [r for r in rows if r["alone"] and r["alone"].get("wall_s") is not None and r["wall_s"] is not None]
    if alone:  # the bar: no slower than the oracle alone plus the local model's time on the questions it kept
        ours, theirs = sum(r["wall_s"] for r in alone), sum(r["alone"]["wall_s"] for r in alone)
        kept, passed_on = sum(r["local_s_kept"] for r in alone), sum(r["local_s_passed"] for r in alone)
        lines.append(f"wall: cascade {ours:.1f} s; oracle alone {theirs:.1f} s + local model on the questions it kept {kept:.1f} s "
                     f"= {theirs + kept:.1f} s; the local model's time on questions it passed on: {passed_on:.1f} s")
    return "\n".join(lines)


def again(results: Path) -> int:
    """The tables again, each question re-checked against its scenario's table, from the newest artifacts of each."""
    data = json.loads(results.read_text())
    rows, asked_all = [], []
    for old in data["rows"]:
        name = old["scenario"]
        found = next(YARDSTICK / s / f"{name}.yaml" for s in ("scenarios", "holdout") if (YARDSTICK / s / f"{name}.yaml").exists())
        logs = sorted((YARDSTICK / "results").glob(f"*-pilot-cascade/{name}/pilot-log"))
        asked = questions_of(logs[-1], load_table(found)) if logs else []
        rows.append(row(name, old, asked, old.get("alone")))
        asked_all += [{**q, "scenario": name} for q in asked]
    print(table(rows) + "\n\n" + calibration(asked_all))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", help="names in bench/yardstick/scenarios or holdout (default: the --set)")
    ap.add_argument("--set", choices=list(SETS), default="all")
    ap.add_argument("--pilot", default=str(YARDSTICK / ".venv" / "bin" / "cursor-pilot"), help="the cursor-pilot to run (with the local extra)")
    ap.add_argument("--gguf", type=Path, help="the model (default: bench/packaged_model.py's, fetched and checked)")
    ap.add_argument("--margin", type=float, default=0.5, help="--escalate-margin for the runs")
    ap.add_argument("--timeout-scale", type=float, default=2.0, help="multiply each scenario's timeout (a 0.5B model on two cores)")
    ap.add_argument("--baseline", action="store_true", help="also run each program with the oracle alone")
    ap.add_argument("--again", type=Path, metavar="RESULTS.json", help="no runs: the figures again from a run's results and artifacts")
    args = ap.parse_args()
    if args.again is not None:
        return again(args.again)
    gguf = args.gguf
    if gguf is None:
        gguf, why = packaged_gguf()
        if gguf is None:
            sys.exit(why)
    template = TEMPLATE.format(pilot=args.pilot, gguf=gguf, margin=args.margin)
    names = args.scenarios or [p.stem for s in SETS[args.set] for p in sorted((YARDSTICK / s).glob("*.yaml"))]
    rows, asked_all = [], []
    with tempfile.TemporaryDirectory(prefix="cascade-") as tmp:
        for name in names:
            found = next(YARDSTICK / s / f"{name}.yaml" for s in ("scenarios", "holdout") if (YARDSTICK / s / f"{name}.yaml").exists())
            path = scaled(found, args.timeout_scale, Path(tmp))
            res = run_one(path, "cascade", template)
            asked = questions_of(Path(res.get("artifacts", tmp)) / "pilot-log", load_table(found)) if "artifacts" in res else []
            alone = run_one(path, "cascade-alone", ALONE.format(pilot=args.pilot)) if args.baseline else None
            rows.append(row(name, res, asked, alone))
            asked_all += [{**q, "scenario": name} for q in asked]
            r = rows[-1]
            beside = "" if alone is None else f" alone {alone.get('result')} {alone.get('wall_s')}s"
            print(f"{name:18} {r['result']} {r['wall_s']}s local {r['local']}/{r['questions']} wrong {len(r['wrong_local'])} "
                  f"s/q {r['s_per_q']}{beside} {res.get('error') or ''}", flush=True)
    text = table(rows) + "\n\n" + calibration(asked_all)
    print("\n" + text)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = YARDSTICK / "results" / f"cascade-{stamp}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"gguf": str(gguf), "margin": args.margin, "timeout_scale": args.timeout_scale, "table": text,
                               "rows": rows, "questions": asked_all}, indent=2, default=str))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
