"""A full-screen program whose clock redraws every second never went quiet (issue 48): its prompt on the bottom line,
which no rule knows, waited for 3 s of quiet that never came, and the run was silent until --timeout. While the kernel
says the program waits on its terminal, a change confined to a clock's digits or a spinner's glyph is no activity
(pty/view.py `quiet_since`): the prompt is judged as if the screen were still, and a model's reply chosen while the
clock ticked is not stale. The mirror: a program whose screen really changes (new rows of output) is left to work."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm_server import FakeLLM, Step
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(120)

CLOCK = """
import curses, sys, time
MODE = sys.argv[1]
def main(s):
    curses.curs_set(0)
    s.timeout(100)  # a key, or a redraw of the clock when its second has turned
    h, w = s.getmaxyx()
    started, shown, rows, typed = time.monotonic(), None, 0, ""
    s.addstr(3, 2, "Backups of /srv/data: 14 snapshots, the oldest from March.")
    while True:
        t = time.monotonic() - started
        if int(t) != shown:
            shown = int(t)
            s.addstr(0, 0, time.strftime("%H:%M:%S") + f"  up {shown // 60:02d}:{shown % 60:02d}  " + "⠋⠙⠹⠸"[shown % 4])
        if MODE == "log" and rows < min(12, h - 7) and t > rows * 0.5:
            s.addstr(5 + rows, 2, f"copied chunk {rows} of /srv/data/{'abcdefghij'[rows % 10] * 3}.img")  # work going on
            rows += 1
            last_row = time.monotonic()
        s.addstr(h - 1, 0, "Retention label for this run " + typed)
        s.clrtoeol()
        s.refresh()
        if MODE == "log" and rows:
            open("last_row.txt", "w").write(repr(last_row))
        k = s.getch()
        if k in (10, 13):
            return typed
        if k != -1:
            typed += chr(k)
if MODE == "clock":
    open("drawn.txt", "w").write(repr(time.monotonic()))
open("out.txt", "w").write(curses.wrapper(main))
"""


def _clock(tmp_path, mode: str) -> list[str]:
    return [*script(tmp_path, "clock", CLOCK), mode]


def _model(prompt: str) -> str:
    q = question_of(prompt)
    return typed("weekly") if "Retention label" in q else json.dumps({"action": "human", "text": "no idea", "submit": False})


def test_a_prompt_under_a_clock_redrawn_every_second_is_judged_as_if_the_screen_were_still(pilot, tmp_path):
    """Never judged in 20 s (exit 4): the clock's second reset the quiet the undecided prompt waits for (3 s)."""
    r = pilot(_clock(tmp_path, "clock"), "--answer", "Retention label=weekly", "--timeout", "20s")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "weekly"
    drawn = float((tmp_path / "drawn.txt").read_text())
    assert r.of("keys_sent")[0]["mono"] - drawn < 6.0
    assert r.of("escalation") == []


def test_a_models_reply_chosen_while_the_clock_ticked_is_typed_not_dropped(pilot, tmp_path):
    """The model took 1.5 s, the clock ticked meanwhile, and its reply was dropped as stale: asked again and again (ten
    calls in 20 s), never typed."""
    with FakeLLM(answer=_model, refuse=lambda request: Step(delay=1.5)) as server:
        r = pilot(_clock(tmp_path, "clock"), "--provider", "openai", "--base-url", server.url + "/v1", "--timeout", "20s",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "weekly"
    assert len(server.requests) == 1 and r.of("reply_discarded") == []


def test_a_program_writing_new_rows_under_its_clock_is_not_judged_while_it_works(pilot, tmp_path):
    """The mirror: new rows of output every 0.5 s (work going on, with digits in them) are activity: the prompt below
    is not judged while they come (6 s of rows here), and is once they stop."""
    r = pilot(_clock(tmp_path, "log"), "--answer", "Retention label=weekly", "--timeout", "30s")
    assert r.code == 0, r.stdout + r.stderr
    last_row = float((tmp_path / "last_row.txt").read_text())
    first_key = r.of("keys_sent")[0]["mono"]
    assert first_key > last_row + 2.0, f"judged {last_row - first_key:.2f}s before the last row came"
