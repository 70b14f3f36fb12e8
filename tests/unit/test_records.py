"""The transcript's record types are declared once (cursorpilot/records/models.py): every writer builds them, every reader
reads through them, and the docs are generated from them.

Writers build the models (`tx.write(R.Kill(...))`, a pilot's `Record(R.Answer(...))`) and nothing else (neither the
transcript nor a Record takes a type's name): mypy checks each field where a record is built, and every record a test
reads is checked against its declaration at run time (tests/conftest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cursorpilot.records import models as records

from cursorpilot.records import reading as records_read
from cursorpilot.clock import FakeClock
from cursorpilot.decide.deliver import Record
from cursorpilot.records.redact import Redactor
from cursorpilot.records.transcript import Transcript, read_transcript

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cursorpilot"


def test_every_declared_type_is_written_somewhere():
    """A declared type no writer names (built there, or picked there to be built) is a dead declaration, or a writer
    that lost it."""
    declared = {PACKAGE / "records" / f"{name}.py" for name in ("base", "run", "screen", "decisions", "agents", "models")}
    source = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py") if p not in declared)
    built = set(re.findall(r"\b(?:R|records)\.([A-Z]\w*)\b", source))
    assert sorted(cls.__name__ for cls in records.TYPES.values() if cls.__name__ not in built) == []


def test_a_record_is_written_as_its_model_was_built(tmp_path):
    """Its type's name, the fields given in the order given (`from` as written, OMIT left out, None kept), the step's
    number first when the host adds it; and the same fields read back."""
    tx = Transcript(tmp_path / "t.jsonl", "r1", FakeClock(5.0), Redactor(env={}))
    tx.write(records.State(to="RUNNING", event="typed", from_="ANSWERING", rule_id=None))
    tx.write(records.numbered(records.Answer(reply="y", source="rules:x", changed=records.OMIT, channel="pty"), 3))
    tx.close()
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [list(r)[5:] for r in lines] == [["to", "event", "from", "rule_id"], ["step", "reply", "source", "channel"]]
    assert list(lines[0])[:5] == list(records.COMMON) and lines[0]["from"] == "ANSWERING" and lines[0]["rule_id"] is None
    state, answer = read_transcript(tmp_path / "t.jsonl")
    assert isinstance(state, records.State) and state.from_ == "ANSWERING"
    assert isinstance(answer, records.Answer) and answer.step == 3 and answer.changed is None


def test_a_pilots_record_reads_as_its_type_and_fields():
    r = Record(records.HumanReply(text="y", secret=records.OMIT))
    assert (r.type, r.fields) == ("human_reply", {"text": "y"}) and r == Record(records.HumanReply(text="y"))
    assert r != Record(records.HumanReply(text="n"))


def test_an_old_or_newer_record_is_read_without_a_crash():
    base = {"seq": 1, "ts": "2026-01-01T00:00:00.000Z", "mono": 1.0, "run_id": "r"}
    newer = records_read.parse({**base, "type": "answer", "reply": "y", "colour": "red"})
    assert isinstance(newer, records.Answer) and newer.reply == "y" and newer.model_extra == {"colour": "red"}
    old = records_read.parse({**base, "type": "answer"})  # fields missing: None
    assert isinstance(old, records.Answer) and old.reply is None


def test_a_field_every_writer_gives_is_required_of_this_versions_records():
    """What an answer always carries (its reply, who chose it) is required: the strict check refuses a record written
    without it, where an older version's transcript still reads (the test above); a field only some writers give is not."""
    base = {"seq": 1, "ts": "2026-01-01T00:00:00.000Z", "mono": 1.0, "run_id": "r", "type": "answer"}
    full = {"step": 1, "rule_id": "r", "prompt": "Go?", "reply": "y", "source": "rules:r", "n": 1, "kind": "question", "channel": "pty",
            "option_id": None, "option_kind": None, "policy_rule": None, "secret": None}
    assert records_read.problems({**base, **full}) == []
    assert records_read.problems({**base, **{k: v for k, v in full.items() if k != "reply"}}) == ["answer: reply: Field required"]
    assert records.Answer.model_fields["changed"].is_required() is False  # (only when the policy changed the answer)
    misfit = records_read.parse({**base, "type": "answer", "n": "not a number"})
    assert type(misfit) is records.Rec and misfit.type == "answer"
    unknown = records_read.parse({**base, "type": "from_the_future", "x": 1})
    assert type(unknown) is records.Rec and unknown.model_extra == {"x": 1}
    with pytest.raises(ValueError):
        records_read.parse({"type": "answer"})


def test_a_secret_is_masked_when_read_even_if_written_in_clear():
    base = {"seq": 1, "ts": "t", "mono": 1.0, "run_id": "r"}
    clear = records_read.parse({**base, "type": "keys_sent", "keys": "hunter2", "data": "hunter2", "hex": "68756e74657232", "secret": True})
    assert "hunter2" not in clear.model_dump_json() and "68756e74657232" not in clear.model_dump_json()
    assert clear.data == records.masked("hunter2") and clear.data.startswith("•••••• (7 chars, hmac:")
    enter = records_read.parse({**base, "type": "keys_sent", "keys": "<enter>", "data": "\r", "hex": "0d", "secret": True})
    assert enter.keys == "<enter>"
    already = records.masked("hunter2")
    assert records_read.parse({**base, "type": "answer", "reply": already, "secret": True}).reply == already  # not masked twice


def test_reading_a_crashed_transcript_drops_only_the_torn_last_line(tmp_path):
    path = tmp_path / "transcript.jsonl"
    good = {"type": "step_started", "seq": 1, "ts": "t", "mono": 1.0, "run_id": "r", "step": 1}
    path.write_text(json.dumps(good) + "\n" + "garbage\n" + json.dumps({**good, "seq": 3}) + "\n" + '{"type": "answ')
    stats = records_read.ReadStats()
    assert [r.seq for r in records_read.read(path, stats)] == [1, 3]
    assert (stats.lines, stats.bad_lines, stats.torn_last) == (4, 1, True)


def test_docs_records_md_is_generated_from_the_declarations():
    assert (ROOT / "docs" / "records.md").read_text(encoding="utf-8") == records_read.markdown(), (
        "regenerate: python -c 'from cursorpilot import records_read; print(records_read.markdown(), end=\"\")' > docs/records.md")


def test_the_docs_name_every_record_type():
    readme = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+)`", readme))
    assert sorted(set(records.TYPES) - named) == []
