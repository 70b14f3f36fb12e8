"""Prompt size and LLM calls: Cursor simulator scenarios (and a long build log) answered by the real openai SDK over HTTP
to a local fake server (127.0.0.1) that records every request.

Figures: prompt tokens per question (mean, max) as the pilot estimates them for its budget
(characters / 4), the same measured on the request bodies the server received, and LLM
calls per logical prompt (server requests / prompts the pilot sent to the provider).

    python bench/prompt_size.py [--budget 3000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from benchlib import ROOT, Report, measure, pilot, records, scratch, show_failure

sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import FakeLLM  # noqa: E402

SCENARIOS = ["demo", "approvals", "repaint", "trap-prose-y"]
# and 5,000 lines of output before a question, to show the budget caps the prompt
LONG = ["bash", "-c", 'for i in $(seq 1 5000); do echo "build step $i: compiled module_$i.o"; done; read -p "Continue? [y/n] " a; echo "got:$a"']
GOVERNING = "You are a careful senior engineer. Approve tests, reads and writes inside the project; refuse deletes. Keep answers short."


def answer(prompt: str) -> str:
    """What a sensible model would say, from the question section of the prompt."""
    q = prompt.split("# The question", 1)[-1].split("# Answer format", 1)[0]
    for needle, reply in [("Workspace Trust Required", "a"), ("Delete", "n"), ("Reason for rejection", "Deletions need a human."),
                          ("Run this command?", "y"), ("Write to this file?", "y")]:
        if needle in q:
            return reply
    if "[y/n]" in q:
        return "y"
    return "Keep it minimal."


def request_tokens(req: dict) -> int:
    return sum(len(m["content"]) for m in req["json"].get("messages", []) if isinstance(m.get("content"), str)) // 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=3000, help="--context-tokens given to the pilot")
    args = ap.parse_args()
    report = Report("prompt_size")
    estimated: list[int] = []
    measured: list[int] = []
    calls = logical = waits = 0
    with scratch("prompts") as work:
        with FakeLLM(answer=answer) as server:
            cases = [(n, "cursor", [sys.executable, "-m", "cursorpilot.sim", "cursor", n, "Add a /health endpoint"]) for n in SCENARIOS]
            for name, profile, command in [*cases, ("long-output", "generic", LONG)]:
                before = len(server.requests)
                log = work / f"log-{name}"  # not a bare scenario name: the simulator would take it for a path
                m = measure([*pilot(), "run", "--quiet", "--profile", profile, "--provider", "openai", "--base-url", server.url + "/v1",
                             "--context-tokens", str(args.budget), "--prompt", GOVERNING, "--log", str(log), "--", *command],
                            cwd=work, env={**os.environ, "OPENAI_API_KEY": "sk-bench-0123456789abcdefghij"})
                reqs = server.requests[before:]
                asked = [r for r in records(log) if r["type"] == "provider_request"]
                sizes = [r["prompt_tokens_est"] for r in asked]
                report.figure(f"{name}: exit code", m.rc)
                show_failure(m, name)
                report.figure(f"{name}: prompts to the LLM / LLM calls", f"{len(asked)} / {len(reqs)}")
                if sizes:
                    report.figure(f"{name}: prompt tokens mean / max", f"{statistics.mean(sizes):.0f} / {max(sizes)}")
                estimated += sizes
                measured += [request_tokens(r) for r in reqs]
                calls += len(reqs)
                logical += len(asked)
                waits += sum(1 for r in records(log) if r["type"] == "wait")
        report.figure("logical prompts to the LLM", logical)
        report.figure("LLM calls", calls)
        report.figure("LLM calls per logical prompt", calls / logical if logical else float("nan"))
        report.figure("WAIT answers (a quiet screen judged not asking; counted among the prompts above)", waits)
        report.figure("prompt tokens per question, mean (pilot's estimate)", statistics.mean(estimated) if estimated else 0.0)
        report.figure("prompt tokens per question, max (pilot's estimate)", max(estimated, default=0))
        report.figure("prompt tokens per question, mean (request bodies, chars/4)", statistics.mean(measured) if measured else 0.0)
        report.figure("prompt tokens per question, max (request bodies, chars/4)", max(measured, default=0))
        report.target(logical > 0 and calls == logical, "LLM calls per logical prompt == 1.0")
        report.target(bool(measured) and statistics.mean(measured) <= 1500, "mean prompt <= 1,500 tokens")
        report.target(max(measured, default=0) <= args.budget, f"max prompt <= budget ({args.budget})")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
