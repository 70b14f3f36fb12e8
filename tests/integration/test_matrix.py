"""The behaviour matrix: one question asked every way a class of real programs asks it (tests/programs/asker.py):
reader (stdin, /dev/tty, a worker thread) x wait (blocking read, select, poll, epoll, sleep-and-check) x screen (a line,
the alternate screen, blank, the cursor on an empty row) x echo (on, off). Every combination is answered with a rule,
and escalated without one, within the never-silent bound; none waits for --timeout. Real pseudo-terminals, the real CLI.

The combinations run several at a time (each is mostly waiting): one test per reader and rule/no rule.
"""

import itertools
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cursorpilot.detect.profiles import load_profile


pytestmark = pytest.mark.timeout(600)
ASKER = Path(__file__).resolve().parents[1] / "programs" / "asker.py"
WAITS = ("read", "select", "poll", "epoll", "sleep")
SCREENS = ("line", "alt", "blank", "empty")
ECHOS = ("on", "off")
BOUND = load_profile("generic").undecided_after_s  # the longest a hint may delay the judgement of a program that waits
SLACK = 4.0  # start-up of the pilot and of the program, on a loaded machine
CODE = "swordfish"


def run_one(tmp: Path, reader: str, wait: str, screen: str, echo: str, with_rule: bool) -> str | None:
    """None when the combination behaved, else what went wrong."""
    name = f"{reader}-{wait}-{screen}-{echo}-{'rule' if with_rule else 'none'}"
    work = tmp / name
    work.mkdir()
    match = r"'\A\s*\Z'" if screen == "blank" else "'code word'"  # a blank screen's question is empty
    (work / "rules.yaml").write_text(f"- {{id: code, match: {match}, reply: {CODE}}}\n" if with_rule
                                     else "- {id: unrelated, match: 'nothing on this screen', reply: x}\n")
    out = work / "answer"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "cursorpilot", "run", "--quiet", "--rules", str(work / "rules.yaml"), "--log", str(work / "log"),
         "--timeout", "40s", "--", sys.executable, str(ASKER), reader, wait, screen, echo, str(out)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env, timeout=90)
    records = [json.loads(line) for line in (work / "log" / "transcript.jsonl").read_text().splitlines()]
    started = next(r["mono"] for r in records if r["type"] == "program_started")
    decided = next((r for r in records if r["type"] in ("answer", "escalation")), None)
    got = out.read_bytes() if out.exists() else None
    if with_rule and (proc.returncode != 0 or got != CODE.encode()):
        return f"{name}: exit {proc.returncode}, the program read {got!r}: {proc.stdout.strip()[-300:]}"
    if not with_rule and (proc.returncode != 3 or got is not None):
        return f"{name}: exit {proc.returncode} (3 expected: a human is needed), the program read {got!r}"
    if decided is None or decided["mono"] - started > BOUND + SLACK:
        return f"{name}: decided {decided and round(decided['mono'] - started, 2)} s after the start (bound {BOUND + SLACK} s)"
    if decided["type"] != ("answer" if with_rule else "escalation"):
        return f"{name}: first decision was {decided['type']}"
    return None


@pytest.mark.parametrize("with_rule", [True, False], ids=["rule", "no-rule"])
@pytest.mark.parametrize("reader", ["stdin", "devtty", "thread"])
def test_every_way_of_asking_is_answered_or_escalated_within_the_bound(tmp_path, reader, with_rule):
    combos = list(itertools.product(WAITS, SCREENS, ECHOS))
    with ThreadPoolExecutor(max_workers=5) as pool:
        problems = [p for p in pool.map(lambda c: run_one(tmp_path, reader, *c, with_rule), combos) if p]
    assert not problems, f"{len(problems)} of {len(combos)} combinations:\n" + "\n".join(problems)
