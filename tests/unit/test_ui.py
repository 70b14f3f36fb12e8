"""The console sink as a CI log sees it: the program's new lines once, before the answer they led to."""

from __future__ import annotations

import io

from rich.console import Console

from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.events import Status
from cursorpilot.ui import ConsoleSink, fresh_lines


def test_fresh_lines_follow_a_growing_and_scrolling_screen():
    assert fresh_lines([], ["a", "b"]) == ["a", "b"]
    assert fresh_lines(["Continue? [y/n]"], ["Continue? [y/n] y", "got:y"]) == ["got:y"]  # the answer typed onto it
    assert fresh_lines(["a", "b", "c", "(Pdb)"], ["b", "c", "(Pdb) n", "d", "(Pdb)"]) == ["d", "(Pdb)"]  # scrolled by one
    assert fresh_lines(["x", "", "(Pdb)"], ["", "y", "(Pdb)"]) == ["", "y", "(Pdb)"]  # a blank row places nothing
    assert fresh_lines(["menu", "> one", "  two"], ["menu", "  one", "> two"]) == ["menu", "  one", "> two"]  # redrawn


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
    assert out.getvalue().splitlines() == ["│ hello [REDACTED]", "│ Continue? [y/n]", "answer 'y'  [rules:go]  Continue? [y/n]", "│ got:y"]


def test_quiet_sink_asks_for_no_screen():
    sink = ConsoleSink(Console(file=io.StringIO()), quiet=True)
    assert not sink.wants_screen
