"""Handing an answer over and escalating, the rules both channels share: pure, milliseconds."""

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import (Answer, Delivered, Halt, Record, RunCounts, Tally, Tell, deliver, escalate, halt_of,
                                        unanswered)
from cursorpilot.errors import ExitCode

ANSWER = Answer(prompt="Continue? [y/n]", reply="y", source="rules:go", rule_id="generic.yes_no", kind="question",
                headline="Continue? [y/n]", extra={"channel": "pty"}, preview_extra={"keys": ["y", "<enter>"]})


def test_an_answer_is_counted_recorded_told_and_counted_for_the_loop_breaker():
    tally = Tally(RunCounts(answers=4))
    out = deliver(tally, ANSWER)
    assert out == [Record(R.Answer(rule_id="generic.yes_no", prompt="Continue? [y/n]", reply="y", source="rules:go", n=5,
                                   kind="question", channel="pty")),
                   Tell("answer", "y", "Continue? [y/n]", "rules:go"), Delivered("Continue? [y/n]", "y")]
    assert list(out[0].fields) == ["rule_id", "prompt", "reply", "source", "n", "kind", "channel"]  # as written, in order
    assert tally.answers == 1 and tally.counts.answers == 5 and halt_of(out) is None


def test_the_step_cap_and_the_run_cap_halt_before_anything_is_sent():
    assert deliver(Tally(RunCounts(), cap=1, answers=1), ANSWER) == [Halt(ExitCode.LIMIT, "step max_steps reached (1 answers)")]
    assert deliver(Tally(RunCounts(answers=3, max_answers=3)), ANSWER) == [Halt(ExitCode.LIMIT, "max-steps reached (3 answers)")]


def test_a_dry_run_records_what_it_would_send_and_halts():
    tally = Tally(RunCounts(dry_run=True))
    out = deliver(tally, ANSWER)
    assert out[0].type == "would_send" and out[0].fields["keys"] == ["y", "<enter>"] and out[-1] == Halt(ExitCode.OK, "previewed (dry run)")
    assert tally.preview == {"kind": "question", "question": "Continue? [y/n]", "would_send": "y", "source": "rules:go",
                             "rule_id": "generic.yes_no"} and tally.answers == 0


def test_escalation_halts_when_nobody_can_be_asked_and_leaves_asking_to_the_pilot_otherwise():
    alone = RunCounts()
    out = escalate(alone, rule_id="r", prompt="Deploy?", why="no rule", headline="Deploy?")
    assert out[0] == Record(R.Escalation(rule_id="r", prompt="Deploy?", why="no rule", interactive=False))
    assert out[-1] == Halt(ExitCode.HUMAN_NEEDED, "a human is needed (no rule): Deploy?") and alone.escalations == 1
    there = RunCounts(interactive=True)
    assert halt_of(escalate(there, rule_id="r", prompt="Deploy?", why="no rule", headline="Deploy?")) is None
    assert halt_of(escalate(there, rule_id="r", prompt="Deploy?", why="again", headline="Deploy?", can_ask=False)) is not None
    assert unanswered("no rule") == Halt(ExitCode.HUMAN_NEEDED, "a human is needed (no rule); none answered")
