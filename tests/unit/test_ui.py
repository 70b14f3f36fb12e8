"""The console sink as a CI log sees it: the program's new lines once, before the answer they led to."""

from __future__ import annotations

import io

from rich.console import Console

from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.events import Status
from cursorpilot.ui import ScreenLog
from cursorpilot.ui import ConsoleSink


def test_rows_are_placed_by_position_so_repeated_prompts_are_each_new():
    log = ScreenLog()
    assert log.fresh(["> (1)", "-> x = 1", "(Pdb)"], 0) == (0, ["> (1)", "-> x = 1", "(Pdb)"])
    # the answer typed onto the prompt is no news; the next "(Pdb)" is a new row, though its text was seen before
    assert log.fresh(["> (1)", "-> x = 1", "(Pdb) n", "> (2)", "-> y", "(Pdb)"], 0) == (0, ["> (2)", "-> y", "(Pdb)"])
    # scrolled by two: rows are numbered from the top of the program's output, not of the screen
    assert log.fresh(["(Pdb) n", "> (2)", "-> y", "(Pdb) p y", "2", "(Pdb)"], 2) == (0, ["2", "(Pdb)"])
    assert log.fresh(["far", "below"], 40) == (32, ["far", "below"])  # a flood scrolled past between two looks


def test_a_dialog_redrawn_in_place_prints_only_its_changed_rows():
    log = ScreenLog()
    log.fresh(["Cursor Agent", "Run this command?", "> Run (y)", "  Skip (n)", "~/proj · main"], 0)
    assert log.fresh(["Cursor Agent", "✓ Ran: npm test", "Write to this file?", "> Write (y)", "~/proj · main"], 0) == (
        0, ["✓ Ran: npm test", "Write to this file?", "> Write (y)"])


def test_the_steps_text_is_placed_by_the_printed_rows_top():
    log = ScreenLog()
    log.fresh(["(Pdb)", "x", "Continue? [y/n]"], 5)
    text = ["old 1", "old 2", "(Pdb)", "x", "Continue? [y/n] y", "got:y", "bye"]
    assert log.fresh_text(text) == ["got:y", "bye"]
    assert ScreenLog().fresh_text(["a"]) == ["a"]  # nothing printed yet (an ACP step): all of it
    log = ScreenLog()
    log.fresh(["", "  Cursor Agent", "  > task", "", "  footer"], 0)  # a TUI's screen starts with a blank row
    assert log.fresh_text(["  Cursor Agent", "  > task", "  Done.", "  footer"]) == ["  Done."]  # the footer did not move


def test_log_prints_each_new_screen_line_once_before_its_answer_and_the_rest_at_the_end():
    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=100), quiet=False)
    assert sink.wants_screen and not sink.mirror
    sink.redact_with(lambda s: s.replace("hunter2", "[REDACTED]"))
    status = Status("running", 0, 1.0)
    sink.screen(snapshot_from_text("hello hunter2\nContinue? [y/n]"), status)
    sink.screen(snapshot_from_text("hello hunter2\nContinue? [y/n]"), status)
    sink.answer("Continue? [y/n]", "y", "rules:go")
    sink.step_ended("bash", "hello hunter2\nContinue? [y/n] y\ngot:y")
    assert out.getvalue().splitlines() == [
        "│ hello [REDACTED]", "│ Continue? [y/n]", "answer 'y'  [rules:go]  Continue? [y/n]", "│ got:y"]


def test_quiet_sink_asks_for_no_screen():
    sink = ConsoleSink(Console(file=io.StringIO()), quiet=True)
    assert not sink.wants_screen


def test_summary_says_who_chose_the_answers_so_the_counters_add_up():
    """rule_hits stayed 0 beside nine rule answers; the summary now splits the answers by who chose them."""
    from cursorpilot.events import Outcome

    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=200), quiet=True)
    for source in ("rules:trust", "rules:go", "policy:delete", "openai:gpt-4o-mini"):
        sink.answer("q", "y", source)
    sink.finished(Outcome(exit_code=0, reason="done", answers=4, counters={"llm_calls": 1, "rule_hits": 2}, transcript="t"))
    assert "answers: 4 (2 by rules, 1 by the deny policy, 1 by the model) · escalations: 0" in out.getvalue()
    assert "llm calls: 1" in out.getvalue() and "rule hits: 2" in out.getvalue()
    sink.finished(Outcome(exit_code=0, reason="resumed", answers=9, transcript="t"))  # earlier sessions' answers: no split
    assert "answers: 9 · escalations" in out.getvalue()


def test_an_answer_the_deny_policy_changed_is_said_where_the_answer_is_and_in_the_summary():
    """The console said `answer 'n'  [policy:delete]` and nothing of the model's y it replaced; the summary nothing."""
    from cursorpilot.events import Outcome

    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=200), quiet=False)
    sink.answer("Delete all files? [y/N]", "n", "policy:delete", "'y' (openai:gpt-4o-mini) -> 'n'")
    sink.finished(Outcome(exit_code=3, reason="completed, but the deny policy changed 1 answer(s)", answers=1,
                          counters={"policy_changed": 1}, transcript="t"))
    text = out.getvalue()
    assert "changed by the deny policy: 'y' (openai:gpt-4o-mini) -> 'n'" in text
    assert "changed by the deny policy: 1" in text and "(exit 3)" in text


def test_the_status_lines_clock_runs_while_the_program_works_silently():
    """The live view is drawn when the screen changes: a program that printed nothing for a minute left the status line's
    clock at 0.0s, as if the run had stalled."""
    out, clock = io.StringIO(), [100.0]
    sink = ConsoleSink(Console(file=out, width=80, height=10, force_terminal=True, color_system=None), now=lambda: clock[0])
    assert sink.mirror
    sink.screen(snapshot_from_text("compiling..."), Status("RUNNING", 0, 0.0, "step 1/1"))
    assert sink._live is not None
    clock[0] += 61.5  # a minute of silence: no new screen is handed over
    sink._live.refresh()  # what its own ticks do, TICKS_PER_SECOND times a second
    assert "RUNNING · answers 0 ·  61.5s step 1/1" in out.getvalue()
    sink._stop_live()
