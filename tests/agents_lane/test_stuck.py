"""Stuck or thinking, from the real agents' own progress signs (pty/progress.py): a model stream that stalls mid-way
(the agent's spinner and timer keep moving, nothing else) longer than --stuck-after is interrupted and the agent told to
continue, and the same session goes on; one that streams slowly, a token a second, for longer than that is left alone."""

from __future__ import annotations

import json

import pytest

LONG = "Working on it, one small piece of text after another, so that the stream takes quite a while to finish."
AFTER = {"text": "Carried on after the stall."}
STALL_AFTER = {"claude": 4, "gemini": 2}  # stream events before the stall: some text is out (Claude counts its tokens)


def main_messages(r) -> str:
    return json.dumps([q.get("body") for q in r.requests if q.get("kind") == "main"])


@pytest.mark.timeout(400)
@pytest.mark.parametrize("name", ["claude", "gemini"])
def test_a_stream_that_stalls_longer_than_stuck_after_is_interrupted_and_the_agent_continues(agent, name):
    args = ("say hello",) if name == "claude" else ("-i", "say hello")
    r = agent(name, [{"text": LONG, "stall": 120, "stall_after": STALL_AFTER[name]}, AFTER], "--stuck-after", "10s", "--report",
              args=args, timeout="240s")
    assert r.code == 0 and r.health["done"], r.explain()
    assert [s["action"] for s in r.of("stuck")] == ["interrupt", "continue"]
    assert r.of("stuck")[0]["still_s"] >= 10 and r.of("stuck")[0]["keys"] == ["<esc>"]
    assert '"continue"' in main_messages(r) or "continue" in main_messages(r)
    rows = [row for row in json.loads((r.log / "report.json").read_text())["ledger"] if row["kind"] == "stuck"]
    assert [row["answer"] for row in rows] == ["<esc>", "continue"]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("name", ["claude", "gemini"])
def test_a_stream_of_a_token_a_second_for_longer_than_stuck_after_is_left_alone(agent, name):
    args = ("say hello",) if name == "claude" else ("-i", "say hello")
    r = agent(name, [{"text": LONG, "pace": 1.0}], "--stuck-after", "8s", args=args, timeout="240s")
    assert r.code == 0 and r.health["done"], r.explain()
    assert not r.of("stuck") and r.seconds > 20  # it streamed for over 20 s, 8 s allowed without a progress sign
