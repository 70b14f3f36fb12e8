"""A run's records read as the fleet's facts (cursorpilot/fleet/watch.py), a transcript read as it grows (records/reading.Tail),
and the fleet's table as a person sees it (commands/fleetview.py, rich)."""

from __future__ import annotations

import json

from rich.console import Console

from cursorpilot.commands.fleetview import LineView, table
from cursorpilot.fleet.facts import AskedPerson, ProgramStarted, Progressed, Questioned, RunResult, Settled, TaskRow
from cursorpilot.fleet.manifest import FleetState
from cursorpilot.records.reading import Tail
from cursorpilot.fleet.watch import TranscriptReader


def test_a_runs_records_are_the_fleets_facts():
    w = TranscriptReader("t1")
    seen = []
    for rec in ({"type": "run_started"}, {"type": "program_started", "pid": 5}, {"type": "program_started", "turn": 2},
                {"type": "rules_checked", "hit": True}, {"type": "answer", "reply": "y"},
                {"type": "provider_request"}, {"type": "provider_reply", "usage": {"cost_usd": 0.25}},
                {"type": "provider_reply", "usage": {"cost_usd": None}}, {"type": "answer", "reply": "n"},
                {"type": "decision_page", "url": "http://127.0.0.1:4242/"},
                {"type": "human_asked", "decision": "ab12", "prompt": "Which port?", "channels": ["page"]},
                {"type": "human_asked", "decision": "cd34", "prompt": "terminal only", "channels": ["terminal"]},
                {"type": "human_answered", "decision": "ab12", "channel": "page"}):
        seen += w.feed(rec)
    assert seen == [ProgramStarted("t1"), Questioned("t1"), Progressed("t1", 1, 0.0), Questioned("t1"), Progressed("t1", 1, 0.25),
                    Progressed("t1", 2, 0.25), AskedPerson("t1", "ab12", "http://127.0.0.1:4242", "Which port?"), Settled("t1", "ab12")]


def test_a_question_asked_before_the_page_is_known_is_not_posted():
    assert TranscriptReader("t").feed({"type": "human_asked", "decision": "x", "channels": ["page"]}) == []


def test_the_tail_reads_whole_lines_only_and_skips_garbage(tmp_path):
    path = tmp_path / "transcript.jsonl"
    tail = Tail(path)
    assert tail.read() == []  # not written yet
    path.write_text('{"type": "a"}\n{"type": "b"')
    assert tail.read() == [{"type": "a"}]
    with open(path, "a") as fh:
        fh.write('}\nnot json\n[1]\n{"type": "c"}\n')
    assert tail.read() == [{"type": "b"}, {"type": "c"}]


def test_the_table_shows_each_task_and_the_totals():
    rows = [TaskRow(id="fix-12", status="done", exit_code=0, branch="cursor-pilot/b/fix-12",
                result=RunResult(0, turns=2, answers=5, denials=1, cost_usd=0.0123, wall_s=61.2, diffstat="2 files changed, 10 insertions(+)")),
            TaskRow(id="svc", status="waiting", answers=1), TaskRow(id="late", status="pending")]
    state = FleetState(name="b", file="/f.yaml", fleet_id="x", created="", options={"concurrency": 2}, rows=rows)
    console = Console(record=True, width=250)
    console.print(table(state))
    text = console.export_text()
    assert "fleet b: running" in text
    for cell in ("fix-12", "done", "$0.0123", "61.2s", "cursor-pilot/b/fix-12", "2 files changed", "waiting", "pending"):
        assert cell in text, cell
    assert "tasks 3" in text and "done 1" in text


def test_the_lines_view_prints_one_line_per_event():
    console = Console(record=True, width=100)
    view = LineView(console)
    view.say("t1: started")
    view.update(FleetState(name="b", file="", fleet_id="", created="", options={}, rows=[]))
    view.close()
    assert console.export_text() == "t1: started\n"


def test_the_manifest_reads_back_what_it_wrote(tmp_path):
    from cursorpilot.fleet import manifest

    state = FleetState(name="b", file="/f.yaml", fleet_id="x", created="now", options={"concurrency": 2},
                       rows=[TaskRow(id="a", status="done", exit_code=0, result=RunResult(0, answers=3)), TaskRow(id="b")])
    manifest.write(tmp_path, state)
    back = manifest.read(tmp_path)
    assert back.rows[0].result == RunResult(0, answers=3) and back.rows[1].status == "pending"
    assert json.loads((tmp_path / "fleet.json").read_text())["name"] == "b"
