"""The report's content from transcripts written by the real Transcript on a fake clock: the ledger, the verdict,
secrets, crashes, caps, the replay's time mapping. The page itself is looked at in tests/integration/test_report.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.errors import BadInput
from cursorpilot.records import models as records
from cursorpilot.records.models import masked
from cursorpilot.records.redact import Redactor
from cursorpilot.report import build, write
from cursorpilot.report.build import Caps
from cursorpilot.report.model import Report
from cursorpilot.report.render import json_script, player
from cursorpilot.records.transcript import Transcript

SCHEMA = Path(__file__).resolve().parents[2] / "cursorpilot" / "report" / "report.schema.json"


class Run:
    """A run's folder written record by record, the way the pilot writes it, and its cast."""

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path / "run"
        self.dir.mkdir()
        self.clock = FakeClock(500.0)
        self.tx = Transcript(self.dir / "transcript.jsonl", "r1", self.clock, Redactor(env={}))
        self.cast: list[list] = []
        self.cast_zero = 0.0

    def at(self, seconds: float) -> "Run":
        self.clock.now = 500.0 + seconds
        return self

    def emit(self, type_: str, **fields) -> None:
        """A record by its type's name, as its model (a type this version does not declare as a plain Rec, as a newer
        version would have written it)."""
        model = records.TYPES.get(type_)
        self.tx.write(model(**fields) if model is not None else records.Rec(type=type_, **fields))

    def start(self, cmd: str = "bash") -> None:
        self.emit("run_started", argv=["cursor-pilot", "run", "--", cmd], plan="command", provider="rules", steps=[cmd],
                  dry_run=False, governing_prompt="be careful")
        self.emit("step_started", step=1, name=cmd, kind="drive")
        self.cast_zero = self.clock.now - 0.004  # the recorder starts a few ms before program_started
        self.emit("program_started", step=1, pid=1, command=[cmd], profile="generic")

    def output(self, text: str) -> None:
        self.cast.append([round(self.clock.now - self.cast_zero, 6), "o", text])

    def typed(self, data: str, secret: bool = False, label: str | None = None) -> None:
        self.cast.append([round(self.clock.now - self.cast_zero, 6), "i", data])
        self.emit("keys_sent", keys=label or data, data=data, hex=data.encode().hex(), **({"secret": True} if secret else {}))

    def answer(self, prompt: str, reply: str, source: str = "rules:yes", secret: bool = False, **extra) -> None:
        self.emit("state", event="prompt", **{"from": "RUNNING"}, to="ASKING_QUESTION", rule_id="generic.yes_no")
        self.clock.now += 0.25
        self.emit("answer", step=1, rule_id="generic.yes_no", prompt=prompt, reply=reply, source=source, n=1, kind="question",
                  **({"secret": True} if secret else {}), **extra)

    def finish(self, code: int = 0, reason: str = "completed") -> None:
        self.emit("program_exited", step=1, code=code, signal=None, describe=f"exit code {code}", last_words=None)
        self.emit("step_finished", step=1, name="bash", status="completed" if code == 0 else "failed", exit_code=code, reason=reason)
        self.emit("run_finished", exit_code=code, reason=reason, counters={"answers": 1, "escalations": 0}, cost_usd=None)

    def save(self) -> Path:
        self.tx.close()
        lines = [json.dumps({"version": 2, "width": 80, "height": 24})] + [json.dumps(e) for e in self.cast]
        (self.dir / "session.cast").write_text("\n".join(lines) + "\n")
        return self.dir


@pytest.fixture
def run(tmp_path) -> Run:
    return Run(tmp_path)


def test_a_ledger_row_per_question_with_who_answered_and_when_in_the_replay(run):
    run.start()
    run.at(1.0).output("Continue? [y/n] ")
    run.at(1.5).answer("Continue? [y/n] ", "y")
    run.typed("y")
    run.typed("\r", label="<enter>")
    run.emit("state", event="typed", **{"from": "ANSWERING"}, to="RUNNING", rule_id=None)
    run.at(2.0).emit("policy_denied", policy_rule="delete", evidence="Delete all files? [y/n]", rule_id="generic.yes_no", reply="n")
    run.answer("Delete all files? [y/n]", "n", source="policy:delete")
    run.at(3.0).emit("escalation", rule_id="generic.input", prompt="Name of the cat:", why="no rule matches this prompt", interactive=False)
    run.at(3.5).finish(3, "a human is needed")
    report, _ = build(run.save())
    rows = report.ledger
    assert [(r.outcome, r.answer, r.source, r.source_kind) for r in rows] == [
        ("answered", "y", "rules:yes", "rules"), ("answered", "n", "policy:delete", "policy"), ("escalated", None, "", "none")]
    assert rows[0].keys == ["y", "<enter>"] and rows[1].keys == []
    assert rows[0].latency_s == pytest.approx(0.25)
    assert rows[1].policy_rule == "delete" and "Delete all files" in (rows[1].why or "")
    assert rows[2].why == "no rule matches this prompt"
    # the first keys_sent is the cast's first input event: the answer at 1.75 s of the run is 1.754 s into the replay
    assert rows[0].replay_s == pytest.approx(1.75 + 0.004, abs=1e-3)
    v = report.verdict
    assert (v.outcome, v.exit_code, v.answers, v.escalations, v.denials, v.finished) == ("needs_human", 3, 2, 1, 1, True)
    assert [m.row for m in report.replay.markers] == [1, 2, 3]


def test_an_escalation_is_attributed_to_the_loop_breaker_or_the_policy_that_stopped_the_models_answer(run):
    """The report said a loop-breaker escalation was "by openai:…": the model proposed the answer, the breaker sent
    the question to a human."""
    run.start()
    run.at(1.0).emit("provider_reply", provider="openai", source="openai:gpt-4o-mini", reply="y", usage={"calls": 1, "in": 10, "out": 1})
    run.emit("escalation", rule_id="generic.yes_no", prompt="Retry? [y/n]", why="loop: this question was already answered 'y' 3 times",
             interactive=False)
    run.at(2.0).emit("provider_reply", provider="openai", source="openai:gpt-4o-mini", reply="rm -rf /", usage={"calls": 1})
    run.emit("policy_denied", policy_rule="rm_rf", evidence="rm -rf /", rule_id="generic.input", reply=None, on="reply")
    run.emit("escalation", rule_id="generic.input", prompt="$ ", why="the reply was denied by policy rule 'rm_rf'", interactive=False)
    run.at(3.0).emit("provider_reply", provider="openai", source="openai:gpt-4o-mini", reply=None, reason="asks a human", usage={"calls": 1})
    run.emit("escalation", rule_id="generic.input", prompt="Name:", why="the answerer asks for a human: which name?", interactive=False)
    run.at(3.5).finish(3, "a human is needed")
    report, _ = build(run.save())
    assert [(r.source, r.source_kind) for r in report.ledger] == [("loop-breaker", "breaker"), ("policy:rm_rf", "policy"),
                                                                  ("openai:gpt-4o-mini", "model")]


def test_a_secret_is_masked_in_the_ledger_and_the_replay_even_from_a_writer_that_left_it_in_clear(run):
    run.start()
    run.at(1.0).output("Password: ")
    run.at(1.2).answer("Password: ", "hunter2", secret=True)
    run.typed("hunter2", secret=True)
    run.typed("\r", secret=True, label="<enter>")
    run.at(2.0).finish()
    folder = run.save()
    transcript = folder / "transcript.jsonl"
    assert "hunter2" not in transcript.read_text()  # today's transcript masks as it writes; an older writer did not:
    transcript.write_text(transcript.read_text().replace(masked("hunter2"), "hunter2"))
    assert "hunter2" in transcript.read_text() and "hunter2" in (folder / "session.cast").read_text()
    written = write(folder)
    for path in (written.html, written.json, written.md):
        assert "hunter2" not in path.read_text(), path.name
    row = written.report.ledger[0]
    assert row.secret and row.answer.startswith("•••••• (7 chars, hmac:") and row.keys[1] == "<enter>"


def test_a_crashed_run_still_renders_and_says_it_did_not_finish(run):
    run.start()
    run.at(1.0).answer("Continue? [y/n] ", "y")
    folder = run.save()
    with open(folder / "transcript.jsonl", "a") as fh:
        fh.write('{"type": "keys_sent", "seq": 9, "ts": "2026-')  # the kill cut this write
    written = write(folder)
    v = written.report.verdict
    assert (v.outcome, v.exit_code, v.finished) == ("crashed", None, False)
    assert "without run_finished" in v.reason
    assert any("did not finish" in n for n in written.report.notes) and any("torn" in n for n in written.report.notes)
    assert written.report.records.torn_last and len(written.report.ledger) == 1
    assert "Did not finish" in written.html.read_text() and "Did not finish" in written.md.read_text()


def test_turn_ends_of_both_channels_are_on_the_timeline(run):
    run.start("claude")
    run.at(5.0).emit("turn_end", verdict="continue", why="the tests still fail", turn=1, sent="Fix the failing test.",
                     check={"command": "npm test", "exit_code": 1, "output_tail": "1 failing"})
    run.at(9.0).emit("turn_end", verdict="done", why="the goal check passed", turn=2, sent=None,
                     check={"command": "npm test", "exit_code": 0, "output_tail": "ok"})
    run.at(12.0).emit("turn_end", stop_reason="end_turn", usage={"inputTokens": 120, "outputTokens": 30})  # ACP's shape
    run.output("bye")
    run.finish()
    report, _ = build(run.save())
    assert [(t.n, t.verdict, t.stop_reason, t.check, t.sent) for t in report.turns] == [
        (1, "continue", None, "`npm test` exited 1", "Fix the failing test."), (2, "done", None, "`npm test` exited 0", None),
        (3, None, "end_turn", None, None)]
    assert report.turns[2].tokens_in == 120 and report.verdict.turns == 3
    assert report.turns[0].replay_s == pytest.approx(5.0, abs=0.01)  # nothing typed: program_started stands for time 0


def test_unknown_types_and_fields_from_another_version_are_counted_not_fatal(run):
    run.start()
    run.emit("from_a_newer_version", anything=1)
    run.emit("answer", step=1, reply="y", source="rules:x", colour="red")  # a field this version does not know
    run.emit("answer", step=1, reply="y", n="not a number")  # a known type of another shape
    report, _ = build(run.save())
    assert report.records.unknown == {"from_a_newer_version": 1} and report.records.misfits == 1
    assert [r.answer for r in report.ledger] == ["y"]


def test_values_of_odd_shapes_make_no_crash(run):
    run.start()
    run.emit("provider_reply", source="x", text="y", usage={"in": "many", "out": None, "calls": True, "latency_s": "slow", "cost_usd": "free"})
    run.emit("turn_end", check={"command": None}, usage={"inputTokens": "lots"})
    run.answer("Q?", "y")
    run.finish()
    report, _ = build(run.save())
    assert report.verdict.llm_calls == 0 and report.ledger[0].model_latency_s is None and report.turns[0].tokens_in is None


def test_a_resumed_step_replays_only_its_last_attempt(run):
    """--resume starts the step's recording anew: rows of the attempt before it have no moment in the replay."""
    run.start()
    run.at(1.0).answer("First?", "y")
    run.typed("y")
    run.at(2.0).emit("run_resumed", argv=["cursor-pilot", "run", "--resume", "m"], resumes=1, from_step=1)
    run.cast.clear()
    run.emit("step_started", step=1, name="bash", kind="drive")
    run.cast_zero = run.clock.now
    run.emit("program_started", step=1, pid=2, command=["bash"], profile="generic")
    run.at(3.0).answer("Second?", "y")
    run.typed("y")
    run.finish()
    report, _ = build(run.save())
    assert [(r.question, r.replay_s) for r in report.ledger] == [("First?", None), ("Second?", pytest.approx(1.25, abs=1e-3))]
    assert report.run.resumes == 1


def test_the_ledger_keeps_its_head_and_tail_and_says_what_it_left_out(run):
    run.start()
    for i in range(50):
        run.at(1.0 + i).answer(f"Question {i}?", str(i))
    run.finish()
    report, _ = build(run.save(), Caps(ledger_head=5, ledger_tail=3))
    assert [r.n for r in report.ledger] == [1, 2, 3, 4, 5, 48, 49, 50] and report.ledger_total == 50
    assert any("42 in between are left out" in n for n in report.notes)


def test_the_replay_is_cut_at_its_cap_and_says_where(run):
    run.start()
    for i in range(200):
        run.at(i * 0.1).output("x" * 1000)
    run.finish()
    report, cast = build(run.save(), Caps(cast_bytes=50_000))
    assert report.replay.cut and len(cast) < 52_000 and any("The replay stops at" in n for n in report.notes)


def test_no_transcript_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no transcript"):
        build(tmp_path)
    (tmp_path / "transcript.jsonl").write_text("")
    with pytest.raises(BadInput, match="no transcript record"):
        build(tmp_path)


def test_the_shipped_schema_is_the_models():
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == Report.model_json_schema(), (
        "regenerate cursorpilot/report/report.schema.json from cursorpilot.report.model.Report (docs/report.md)")


def test_json_islands_can_not_close_their_script():
    assert str(json_script("</script><!-- & \u2028")) == '"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"'
    js = player()["js"].lower()
    assert "</script" not in js and "<!--" not in js  # inlined as it is: it must not end its own script element


def test_the_pinned_player_is_the_one_recorded():
    import hashlib

    from cursorpilot.report.render import ASSETS, PLAYER

    pin = json.loads((ASSETS / PLAYER["pin"]).read_text())
    for name, digest in pin["sha256"].items():
        assert hashlib.sha256((ASSETS / name).read_bytes()).hexdigest() == digest, name
    assert pin["license"] == "Apache-2.0" and (ASSETS / PLAYER["license"]).read_text().lstrip().startswith("Apache License")


def test_a_usage_limits_wait_and_a_stuck_agents_interrupt_are_rows_of_the_ledger(run):
    run.start("codex")
    run.at(1.0).emit("limit_hit", rule_id="codex.usage_limit", words="■ You’ve hit your usage limit. … try again at 1:06 AM.",
                     reset="2026-11-29T01:07:00+00:00", phrase="try again at 1:06 AM.", action="wait", wait_s=212.0, on_limit="wait", hits=1)
    run.at(213.0).emit("limit_waited", waited_s=212.0, how="continued", sent="continue")
    run.at(900.0).emit("stuck", rule_id="codex.working", still_s=600.0, action="interrupt", keys=["<esc>"])
    run.at(901.0).finish()
    rows = build(run.save())[0].ledger
    assert [(r.outcome, r.kind, r.answer) for r in rows] == [("waited", "usage_limit", None), ("waited", "usage_limit", "continue"),
                                                             ("waited", "stuck", "<esc>")]
    assert "try again at 1:06 AM" in rows[0].why and "waiting 212s" in rows[0].why and rows[0].rule_id == "codex.usage_limit"
    assert rows[1].why == "waited 212s, then continued: 'continue'" and rows[1].at_s == pytest.approx(213.0, abs=0.01)
