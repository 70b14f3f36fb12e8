"""`cursor-pilot watch` on the real Claude Code, offline: a watcher sees the screen the run's console shows; `--take`
answers the agent's question by hand (no rule could), hands back, and the pilot judges the screen afresh: the turn
has ended, and the run completes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import agentlab  # noqa: E402

from tests.terminals import Term  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def rows(text: str, *wanted: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(w in line for w in wanted)]


def test_watch_and_take_on_claude_code(tmp_path):
    reason = agentlab.missing_reason("claude")
    if reason:
        pytest.skip(reason)
    lab = agentlab.Lab("claude", tmp_path / "claude")
    backend = lab.backend([{"text": "Which port should the server use?", "delay": 15}, {"text": "Using {{last_user}}."}])
    env = {**lab.env(backend), "PYTHONPATH": str(agentlab.ROOT), "XDG_STATE_HOME": str(tmp_path / "state")}
    log = tmp_path / "log"
    terms: list[Term] = []
    try:
        run = Term(["run", "--log", str(log), "--provider", "rules", "--timeout", "200s", "--", *lab.command("say hello")], lab.work, env)
        terms.append(run)
        run.until("esc to interrupt", 60)  # at work on its task (the model answers in 15 s)
        watcher = Term(["watch", str(log)], lab.work, env)
        taker = Term(["watch", "--take", str(log)], lab.work, env)
        terms += [watcher, taker]
        watcher.until("say hello", 30, run, taker)
        assert rows(watcher.text(), "Claude Code v", "❯ say hello") == rows(run.text(), "Claude Code v", "❯ say hello")[:2]
        taker.until("you have the keyboard", 30, run, watcher)
        taker.until(r"Which port should the server use\?", 60, run, watcher)
        taker.type("8080", run, watcher)
        taker.pump(0.5)
        taker.type("\r", run, watcher)
        taker.until("Using 8080", 60, run, watcher)
        watcher.until("Using 8080", 30, run, taker)  # every watcher sees it
        taker.type("\x1d", run, watcher)
        assert taker.wait(30, run, watcher) == 0
        assert run.wait(120, watcher) == 0, run.text()
        assert backend.health()["done"]
    finally:
        for t in terms:
            t.close()
        backend.stop()
    recs = [json.loads(line) for line in (log / "transcript.jsonl").read_text().splitlines()]
    assert [r["action"] for r in recs if r["type"] == "take_over"] == ["taken", "handed_back"]
    assert not [r for r in recs if r["type"] in ("escalation", "answer")]  # the person answered; the pilot asked nobody
    assert [t["verdict"] for t in recs if t["type"] == "turn_end"] == ["done"]  # judged afresh: the turn had ended
