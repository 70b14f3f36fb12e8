"""`cursor-pilot watch` on a live run, from another terminal, on a real program: the run's screen and decisions as its
console shows them, for any number of watchers, nothing typed there reaching the program; and `watch --take`: the pilot
pauses, the person types into the program, hands back with Ctrl-], and the pilot judges the screen afresh."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.terminals import Term

pytestmark = pytest.mark.timeout(120)

PROGRAM = """echo "ready: waiting for go"
while [ ! -e go ]; do sleep 0.1; done
read -p "Name? " n
echo "hi $n"
read -p "Continue? [y/N] " c
echo "ok $c"
"""


@pytest.fixture
def lab(tmp_path):
    (tmp_path / "prog.sh").write_text(PROGRAM)
    env = {**{k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")},
           "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm-256color"}
    terms: list[Term] = []

    def term(*args: str) -> Term:
        terms.append(Term(list(args), tmp_path, env))
        return terms[-1]

    yield tmp_path, term
    for t in terms:
        t.close()


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in (log / "transcript.jsonl").read_text().splitlines()]


def rows(text: str, *wanted: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(wanted)]


def test_watchers_see_the_runs_screen_and_decisions_live_and_nothing_they_type_reaches_the_program(lab):
    tmp, term = lab
    log = tmp / "log"
    run = term("run", "--log", str(log), "--answer", "Name=Bob", "--answer", "Continue=y", "--", "bash", "prog.sh")
    run.until("ready: waiting for go")
    first, second = term("watch", str(log)), term("watch")  # the newest running run, unnamed
    first.until("ready: waiting for go", 30, run)
    second.until("ready: waiting for go", 30, run, first)
    assert stat.S_IMODE(os.stat(log / "watch.sock").st_mode) == 0o700
    first.type("zzz\r", run, second)  # read-only: not sent anywhere
    (tmp / "go").touch()
    for watcher in (first, second):
        watcher.until("ok y", 30, run, first, second)
        watcher.until("answered 'y'", 30, run)  # the decisions, as the console says them
    assert run.wait(30, first, second) == 0 and first.wait(10) == 0 and second.wait(10) == 0
    shown = ("ready:", "Name?", "hi ", "Continue?", "ok ")
    assert rows(first.text(), *shown) == rows(run.text(), *shown) == ["ready: waiting for go", "Name? Bob", "hi Bob", "Continue? [y/N] y",
                                                                      "ok y"]
    assert "cursor-pilot: the program exited with code 0 (exit 0)" in first.text()
    watched = [(r["event"], r["pid"]) for r in records(log) if r["type"] == "watcher"]
    assert [e for e, _ in watched] == ["joined", "joined"] and len({p for _, p in watched}) == 2  # (they left as the run ended)
    assert not (log / "watch.sock").exists()


def test_take_pauses_the_pilot_types_into_the_program_hands_back_and_the_pilot_judges_afresh(lab):
    tmp, term = lab
    log = tmp / "log"
    run = term("run", "--log", str(log), "--answer", "Continue=y", "--", "bash", "prog.sh")  # no rule knows Name?
    run.until("ready: waiting for go")
    taker = term("watch", "--take", str(log))
    taker.until("you have the keyboard", 30, run)
    other = term("watch", "--take", str(log))
    assert other.wait(30, run, taker) == 1 and "the keyboard is taken already" in other.text()
    (tmp / "go").touch()
    taker.until(r"^Name\?\s*$", 30, run)
    taker.type("Alice\r", run)
    taker.until("hi Alice", 30, run)
    taker.type("\x1d", run)  # Ctrl-]: handed back
    assert taker.wait(30, run) == 0
    run.until("ok y", 30)
    assert run.wait(30) == 0
    recs = records(log)
    assert [(r["action"], r.get("keys")) for r in recs if r["type"] == "take_over"] == [("taken", None), ("handed_back", 6)]
    assert [a["reply"] for a in recs if a["type"] == "answer"] == ["y"]  # the pilot answered only after the hand-back
    assert not [r for r in recs if r["type"] == "escalation"]
    assert b"Alice" in (log / "session.cast").read_bytes()  # the person's keys are in the recording, as input
    assert sorted(r["event"] for r in recs if r["type"] == "watcher") == ["joined", "joined", "left", "left"]
