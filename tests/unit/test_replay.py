"""`cursor-pilot detect`: recordings replayed through the screen and classifier, offline."""

import subprocess
import sys

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.detect.profiles import load_profile
from cursorpilot.errors import BadInput
from cursorpilot.records.recording import SessionRecorder
from cursorpilot.commands.replay import decisions, load

GENERIC = load_profile("generic")
SPIN = "|/-\\"


def make_cast(tmp_path):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["installer"])
    for i in range(5):  # a spinner redrawn in place for a while
        rec.output(("\r" + SPIN[i % 4] + " Installing packages...").encode())
        rec.flush()
        clock.advance(0.2)
    rec.output(("\r\x1b[2KInstalled.\r\nContinue? [y/n] ").encode())
    rec.flush()
    clock.advance(2.0)
    rec.input(b"y")
    clock.advance(0.2)
    rec.input(b"\r")
    rec.output(("y\r\nbye\r\n").encode())
    rec.close()
    return tmp_path / "session.cast"


def test_a_cast_gives_working_then_the_question_then_what_was_typed(tmp_path):
    found = decisions(load(make_cast(tmp_path)), GENERIC)
    summary = [(d.state or "typed:" + d.typed, d.rule_id) for d in found]
    assert summary[0] == ("working", "generic.spinner")
    assert ("question", "generic.yes_no") in summary
    q = summary.index(("question", "generic.yes_no"))
    assert summary[q + 1] == ("typed:y", None) and summary[q + 2] == ("typed:\r", None)
    question = found[q]
    assert question.t == pytest.approx(1.0 + 0.4)  # the output's time plus the settle window
    assert "Continue? [y/n]" in question.describe()
    assert sum(1 for s in summary if s[0] == "working") == 1  # one decision however often the spinner turns


def test_raw_bytes_and_screen_text_are_classified_as_they_end(tmp_path):
    raw = tmp_path / "session.raw"
    raw.write_bytes(b"\x1b[32mok\x1b[0m\r\nOverwrite config? [Y/n] ")
    [d] = decisions(load(raw), GENERIC)
    assert (d.t, d.state, d.rule_id) == (None, "question", "generic.yes_no")
    screen = tmp_path / "screen.txt"
    screen.write_text("Step 3 of 4\nPress Enter to continue\n")
    [d] = decisions(load(screen), GENERIC)
    assert (d.state, d.rule_id) == ("question", "generic.press_enter")


def test_a_broken_cast_is_bad_input(tmp_path):
    bad = tmp_path / "x.cast"
    bad.write_text('{"version": 2}\n[0.1, "o", unterminated\n')
    with pytest.raises(BadInput, match="not an asciicast"):
        load(bad)


def test_the_detect_command(tmp_path):
    cast = make_cast(tmp_path)
    r = subprocess.run([sys.executable, "-m", "cursorpilot", "detect", "--profile", "generic", str(cast)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "question  generic.yes_no" in r.stdout and "typed     'y'" in r.stdout
    r = subprocess.run([sys.executable, "-m", "cursorpilot", "detect", str(tmp_path / "missing.cast")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "cannot read" in r.stderr
