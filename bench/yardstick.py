"""The yardstick in one sitting: thirty real programs (its scenarios/ and holdout/ sets) driven by the hand-written ideal
driver (the speed limit), the naive pilot (the baseline: asks the model after 1 s of quiet) and cursor-pilot itself,
against the same fake model.

    python bench/yardstick.py [--install wheel|editable|none] [--check] [--set both|scenarios|holdout] [SCENARIO ...]

bench/yardstick/ is the shared yardstick (its README says how it works); bootstrap.sh is run when its venv is missing.
--install puts this checkout into the yardstick's venv as a user would (a built wheel, no extras: the default), or
editable. Prints the three-way table (wall time of each driver, the pilot's ratios to both, calls/expected, unmatched)
and the targets: every scenario passes with calls = expected and 0 unmatched (--check: exit 1 otherwise; the governing
prompt's compile into a policy, one call the first time a yes needs it and cached per prompt after, is shown beside
the questions' calls as "+1 policy", not counted in them), and its wall
time is within the budget: ideal + 0.3 s + 30 ms per question (the pilot's fixed start-up and its reaction to each
question; figures: printed, never an exit code). The budget is counted only where the ideal driver passed: a failed
ideal run's time is no limit.

The three drivers take each program in turn (the naive pilot, the ideal driver, cursor-pilot), not one sitting each:
the ideal driver's run and cursor-pilot's, compared against each other, are a few seconds apart, not five minutes (a
registry's or the machine's pace drifts over minutes: npm install and pip went 0.2 s faster or slower between
sittings), and the program's files are as warm for both, the naive pilot's run having come first.

cursor-pilot's runs come after one warm-up run of its first scenario, not counted: its resident pilot and its
SDK's resident (startup/warmstart.py, providers/resident.py) are then up, as on any machine where it ran in the last ten
minutes. The first run on a machine, cold (the SDK's import, a second, on its first question's way), is what
bench/startup.py's "cold" rows measure; without the warm-up it fell on the sitting's first scenario alone.

The three drivers run without the CI service's markers in their environment (CI=true, GITHUB_ACTIONS and the like,
as cursor-pilot hides them from its programs: channels/program_env.py). With them, Angular's `ng new` and other programs that
read them take CI for "never prompt" and end at once: under .ci/run the ideal driver and the naive pilot failed `ng new`
in 1.2 s while cursor-pilot, which hides them, drove it, and the table compared a failed run with a passing one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
YARD = ROOT / "bench" / "yardstick"
PY = YARD / ".venv" / "bin" / "python"
BUDGET_FIXED, BUDGET_PER_QUESTION = 0.3, 0.030  # s: the pilot's wall time may exceed the ideal driver's by this much
CI_MARKERS = ("CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "BUILDKITE", "TF_BUILD")  # channels/program_env.py's
NAIVE = ("{bin}/python {eval}/naive_pilot.py run --prompt {prompt_file} --provider openai --model oracle --log {log_dir} "
         "--timeout {timeout}s --cwd {workdir} -- {command}")


def sh(cmd: list[str], **kw) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, **kw)


def install(how: str) -> None:
    if how == "none":
        return
    if how == "editable":
        target = ["-e", str(ROOT)]
    else:
        dist = Path(tempfile.mkdtemp(prefix="yardstick-wheel-"))
        if sh([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w", str(dist)]) != 0:
            raise SystemExit("the wheel could not be built")
        shutil.rmtree(ROOT / "build", ignore_errors=True)
        target = [str(next(dist.glob("cursor_pilot-*.whl")))]
    if sh([str(PY), "-m", "pip", "install", "--quiet", "--force-reinstall", *target]) != 0:
        raise SystemExit("cursor-pilot could not be installed into the yardstick's venv")


def run(driver: str, scenarios: list[str], label: str = "", template: str | None = None) -> dict:
    before = set((YARD / "results").glob("*.json")) if (YARD / "results").exists() else set()
    cmd = [str(PY), str(YARD / "run_eval.py"), "--driver", driver, *scenarios]
    if label:
        cmd += ["--label", label]
    if template:
        cmd += ["--template", template]
    sh(cmd, cwd=YARD, env={k: v for k, v in os.environ.items() if k not in CI_MARKERS})
    new = sorted(set((YARD / "results").glob("*.json")) - before)
    if not new:
        raise SystemExit(f"the {driver} {label} run wrote no results")
    out = {r["scenario"]: r for r in json.loads(new[-1].read_text())["results"]}
    for name, r in out.items():  # the policy's compile (once per governing prompt, cached), told apart from the questions' calls
        log = new[-1].with_suffix("") / name / "oracle.jsonl"
        kinds = [json.loads(line).get("kind") for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
        r["policy_calls"] = kinds.count("policy")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--install", choices=["wheel", "editable", "none"], default="wheel")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every scenario passes with calls = expected, 0 unmatched")
    ap.add_argument("--set", choices=["both", "scenarios", "holdout"], default="both",
                    help="which of the yardstick's sets to run when no scenario is named (default: both, 30 programs)")
    args = ap.parse_args()
    if not args.scenarios:  # run_eval.py alone runs scenarios/ only: name every file of the sets asked for
        sets = ["scenarios", "holdout"] if args.set == "both" else [args.set]
        args.scenarios = [str(p) for s in sets for p in sorted((YARD / s).glob("*.yaml"))]
    if not PY.exists() and sh(["bash", str(YARD / "bootstrap.sh")]) != 0:
        raise SystemExit("bench/yardstick/bootstrap.sh failed")
    install(args.install)
    run("pilot", args.scenarios[:1], label="warm-up")  # not counted: the residents warm, as after any earlier run
    ideal, naive, pilot = {}, {}, {}
    for scenario in args.scenarios:  # each program by the three drivers in turn: no drift between the runs compared
        stem = Path(scenario).stem
        naive |= run("pilot", [scenario], label=f"naive-{stem}", template=NAIVE)
        ideal |= run("ideal", [scenario], label=stem)
        pilot |= run("pilot", [scenario], label=stem)
    rows, wrong, slow = [], [], []
    head = ["scenario", "ideal s", "naive s", "pilot s", "budget s", "pilot/ideal", "pilot/naive", "naive", "pilot", "calls/expected",
            "unmatched"]
    for name, p in pilot.items():
        i, n = ideal.get(name, {}), naive.get(name, {})
        pw, iw, nw = p.get("wall_s"), i.get("wall_s"), n.get("wall_s")
        compiles = p.get("policy_calls") or 0
        calls, expected, unmatched = (p.get("llm_calls") or 0) - compiles, p.get("expected_questions"), p.get("unmatched")
        ri = pw / iw if pw and iw else None
        rn = pw / nw if pw and nw else None
        passed_ideal = iw is not None and i.get("result") == "PASS"
        budget = round(iw + BUDGET_FIXED + BUDGET_PER_QUESTION * (expected or 0), 2) if passed_ideal else None
        rows.append([name, iw, nw, pw, budget if budget is not None else "-", f"{ri:.2f}" if ri else "-", f"{rn:.2f}" if rn else "-",
                     n.get("result", "-"), p.get("result"), f"{calls}/{expected}" + (f" +{compiles} policy" if compiles else ""), unmatched])
        if p.get("result") != "PASS" or calls != expected or unmatched:
            wrong.append(name)
        if pw is None or budget is None or p.get("result") != "PASS" or pw > budget:
            slow.append(name)
    widths = [max(len(str(h)), *(len(str(r[k])) for r in rows)) for k, h in enumerate(head)]
    line = lambda r: "| " + " | ".join(str(v).ljust(w) for v, w in zip(r, widths)) + " |"  # noqa: E731
    print("\n# yardstick: ideal (the limit), naive (the baseline), cursor-pilot, in one sitting")
    print("\n".join([line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)]))
    passed = sum(r[8] == "PASS" for r in rows)
    print(f"\npilot: {passed}/{len(rows)} passed; calls = expected and 0 unmatched on {len(rows) - len(wrong)}/{len(rows)}")
    print(("target met" if not wrong else "target MISSED") + ": every scenario passes, calls = expected, 0 unmatched"
          + (f" ({', '.join(wrong)})" if wrong else ""))
    print(f"within budget (passes, wall <= ideal + {BUDGET_FIXED:g} s + {BUDGET_PER_QUESTION * 1000:g} ms x questions): "
          f"{len(rows) - len(slow)}/{len(rows)}")
    print(("target met" if not slow else "target MISSED") + f": every scenario passes within ideal + {BUDGET_FIXED:g} s + "
          f"{BUDGET_PER_QUESTION * 1000:g} ms per question" + (f" ({', '.join(slow)})" if slow else ""))
    return 1 if args.check and wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
