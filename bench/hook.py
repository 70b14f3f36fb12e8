"""The hook on every tool call (issue 49): how long `cursor-pilot hook claude` takes to answer one PreToolUse event, as
Claude Code calls it: a fresh process per call, the event on stdin, the answer on stdout.

Twenty calls (`--calls`) of each kind, in a real project folder: a Bash `rm -rf` of the protected folder (a deny, the
folder read), an Edit of a protected file (a deny), a Bash `ls` (nothing to say), and an Edit under `--policy FILE`
(the pinned policy, which imports PyYAML). Each call's wall time from the spawn to the exit (the agent waits for the
exit), printed as p50 / p95 in ms, beside `python -c pass` with the same interpreter (the floor no Python hook is
under) and the modules the hook's process imports (none of typer, rich, pydantic or any SDK may be).

Twice: each call in its own process (CURSORPILOT_RESIDENT=0), then served by the resident pilot (a daemon of the bench's
own, in its own XDG_RUNTIME_DIR: a warm child per call, startup/warmstart.py), as an agent's calls are after its first.
The issue's targets, p50 <= 50 ms and p95 <= 150 ms, are for the second.

    python bench/hook.py [--calls 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import pilot

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."
HEAVY = ("typer", "rich", "pydantic", "openai", "anthropic", "acp", "pyte", "pexpect", "aiohttp", "jinja2")


def project(base: Path) -> Path:
    root = base / "proj"
    for rel in ("tests/fixtures", "build", "src"):
        (root / rel).mkdir(parents=True)
    for i in range(200):  # a folder with something in it, read whole on an rm -rf
        (root / "tests" / "fixtures" / f"case{i}.json").write_text("{}")
    (root / "src" / "app.py").write_text("x")
    (root / "policy.yaml").write_text("grants:\n- {act: delete, object: build, quote: 'delete build/'}\n"
                                      "prohibitions:\n- {act: any, object: tests/fixtures, quote: 'Never touch tests/fixtures'}\n")
    return root


def event(tool: str, tool_input: dict, cwd: Path) -> str:
    return json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(cwd), "permission_mode": "acceptEdits",
                       "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_bench"})


def timed(cmd: list[str], stdin: str, cwd: Path, env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60, env=env)
    took = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 2):
        raise SystemExit(f"{cmd}: exit {done.returncode}: {done.stderr}")
    return took, done.stdout


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms"


def series(kinds: dict, root: Path, n: int, env: dict) -> list[float]:
    every: list[float] = []
    for name, (cmd, stdin) in kinds.items():
        times = [timed(cmd, stdin, root, env)[0] for _ in range(n)]
        every += times
        answer = timed(cmd, stdin, root, env)[1].strip()
        said = json.loads(answer)["hookSpecificOutput"]["permissionDecision"] if answer else "(no output)"
        print(f"  {name}: {percentiles(times)} -> {said}")
    print(f"  all {len(every)} calls: {percentiles(every)}")
    return every


def heavy_modules(root: Path, env: dict) -> str:
    """The heavy modules a hook call imports in its own process (its whole path: start.py, commands/hook.py, hooks/)."""
    probe = (f"import sys; from cursorpilot.startup import start; sys.stdin = open({os.devnull!r}); "
             "start.in_child(['hook', 'claude', '--prompt', 'x y']); "
             f"print('HEAVY:', ' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=root, timeout=60, env=env).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("HEAVY:")), "(probe failed)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp))
        runtime = Path(tmp) / "runtime"
        runtime.mkdir(mode=0o700)
        base = {k: v for k, v in os.environ.items() if not k.startswith("CURSORPILOT_RESIDENT")}
        env = {**base, "XDG_RUNTIME_DIR": str(runtime), "CURSORPILOT_RESIDENT_IDLE": "30"}  # a resident of the bench's own
        hook = [*pilot(), "hook", "claude"]
        edit = event("Edit", {"file_path": str(root / "tests/fixtures/case1.json"), "old_string": "{", "new_string": "["}, root)
        kinds = {
            "Bash rm -rf of the protected folder (deny)": ([*hook, "--prompt", PROMPT], event("Bash", {"command": "rm -rf tests/fixtures"}, root)),
            "Edit of a protected file (deny)": ([*hook, "--prompt", PROMPT], edit),
            "Bash ls (nothing to say)": ([*hook, "--prompt", PROMPT], event("Bash", {"command": "ls -la"}, root)),
            "Edit under --policy FILE (deny)": ([*hook, "--policy", str(root / "policy.yaml")], edit),
        }
        floor = [timed([sys.executable, "-c", "pass"], "", root, env)[0] for _ in range(n)]
        print(f"python -c pass: {percentiles(floor)}")
        print("each call in its own process (CURSORPILOT_RESIDENT=0):")
        series(kinds, root, n, {**env, "CURSORPILOT_RESIDENT": "0"})
        first = [timed(*kinds["Bash ls (nothing to say)"], root, env)[0] for _ in range(3)]  # starts the resident, then waits for it
        print(f"the resident pilot's start: the first three calls took {', '.join(f'{t:.0f}' for t in first)} ms")
        print("served by the resident pilot (a warm child per call, startup/warmstart.py):")
        warm = series(kinds, root, n, env)
        heavy = heavy_modules(root, {**env, "CURSORPILOT_RESIDENT": "0"})
        print(f"heavy modules in the hook's own process: {heavy or 'none'}")
        p95 = sorted(warm)[round(0.95 * (len(warm) - 1))]
        ok = statistics.median(warm) <= 50 and p95 <= 150 and not heavy
        print("PASS" if ok else "FAIL: with the resident pilot, p50 <= 50 ms, p95 <= 150 ms; no heavy module in the hook's process")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
