"""What the user sees: the live mirror on a terminal (a real PTY as the user's terminal), and a log when stdout is
not a terminal (CI)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from cursorpilot.channels.pty.driver import PtyDriver
from cursorpilot.channels.pty.screen import TerminalScreen
from tests.integration.test_cli_usage import cp

pytestmark = pytest.mark.timeout(90)

CHATTY = 'echo hello; seq 1 3; read -p "Continue? [y/n] " a; echo "got:$a"; echo bye'


@pytest.fixture
def rules(tmp_path) -> Path:
    path = tmp_path / "ok.yaml"
    path.write_text("- {id: go, match: 'Continue', reply: y}\n")
    return path


def program_lines(stdout: str) -> list[str]:
    return [line[2:] for line in stdout.splitlines() if line.startswith("│ ")]


def test_ci_log_shows_the_program_around_each_answer(tmp_path, rules):
    """Without a terminal only `answer …` lines showed; what the program printed was only in session.raw."""
    p = cp("run", "--rules", str(rules), "--log", "log", "--", "bash", "-c", CHATTY, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = program_lines(p.stdout)
    assert [line for line in shown if not line.startswith("Continue?")] == ["hello", "1", "2", "3", "got:y", "bye"]
    lines = p.stdout.splitlines()
    answer = next(i for i, line in enumerate(lines) if line.startswith("answer 'y'"))
    summary = next(i for i, line in enumerate(lines) if line.startswith("cursor-pilot: the program exited with code 0"))
    assert answer < lines.index("│ got:y") < lines.index("│ bye") < summary


def test_ci_log_counts_the_rows_it_left_out_of_a_flood_by_their_number(tmp_path, rules):
    """`seq 1 300000` printed "… 1839+ rows above were not shown": the count of its scrollback, when 299,800 were not."""
    p = cp("run", "--rules", str(rules), "--log", "log", "--", "seq", "1", "300000", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = program_lines(p.stdout)
    assert shown[0] == "… 299,800 rows above were not shown (session.raw has them all)"
    assert shown[1:] == [str(n) for n in range(299801, 300001)]


def test_ci_log_quiet_shows_only_the_summary(tmp_path, rules):
    p = cp("run", "--quiet", "--rules", str(rules), "--log", "log", "--", "bash", "-c", CHATTY, cwd=tmp_path)
    assert p.returncode == 0 and program_lines(p.stdout) == [] and "answer '" not in p.stdout


def test_ci_log_is_redacted_like_the_transcript(tmp_path, rules):
    secret = "s3cr3t-value-42xyz"
    p = cp("run", "--rules", str(rules), "--log", "log", "--", "bash", "-c", f'echo "token is $MY_API_TOKEN"; {CHATTY}', cwd=tmp_path,
           env={"MY_API_TOKEN": secret})
    assert p.returncode == 0, p.stdout + p.stderr
    assert secret not in p.stdout and "token is [REDACTED]" in program_lines(p.stdout)


def test_ci_log_shows_the_screen_a_human_is_needed_for(tmp_path, rules):
    # the question comes a moment after the output above it, as a person's would (see the next test for at once)
    p = cp("run", "--rules", str(rules), "--log", "log", "--", "bash", "-c", 'echo "about to ask"; sleep 0.3; read -p "Release name: " a',
           cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    human = next(i for i, line in enumerate(lines) if "needs a human" in line)
    assert lines[:human] == ["│ about to ask", "│ Release name:"], p.stdout


def test_ci_log_question_that_follows_output_at_once_is_shown_before_its_answer(tmp_path, rules):
    p = cp("run", "--rules", str(rules), "--log", "log", "--", "bash", "-c", CHATTY, cwd=tmp_path)
    lines = p.stdout.splitlines()
    answer = next(i for i, line in enumerate(lines) if line.startswith("answer 'y'"))
    assert lines[:answer] == ["│ hello", "│ 1", "│ 2", "│ 3", "│ Continue? [y/n]"]


def run_on_a_terminal(args: list[str], cwd: Path, cols: int, rows: int) -> TerminalScreen:
    """cursor-pilot under a real PTY of the given size, as a user's terminal: everything it drew, rendered."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CI")}
    d = PtyDriver([sys.executable, "-m", "cursorpilot", *args], cwd=str(cwd), env=env, cols=cols, rows=rows)
    screen = TerminalScreen(cols, rows)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            chunk = d.read(0.2)
            if chunk is None:
                break
            screen.feed(chunk)
        else:
            raise AssertionError("cursor-pilot did not end")
        assert d.wait(10) is not None and d.status().code == 0
    finally:
        d.close()
    return screen


@pytest.mark.skipif(not __import__("shutil").which("whiptail"), reason="needs whiptail")
def test_ci_log_shows_lines_printed_between_two_full_screen_dialogs(tmp_path):
    """Issue 32: `menu=cherry` and `yesno=YES`, printed just before a full-screen redraw, never reached the console
    (they were in session.raw): the next dialog was drawn over them. The screen now keeps the main screen while a
    dialog shows the alternate one, as a terminal does, and gives it back when the dialog ends."""
    script = tmp_path / "menus.sh"
    script.write_text('choice=$(whiptail --menu "Pick a fruit" 15 40 3 apple "" banana "" cherry "" 3>&1 1>&2 2>&3)\n'
                      'echo "menu=$choice"\n'
                      'if whiptail --yesno "Sure?" 10 40; then echo "yesno=YES"; else echo "yesno=NO"; fi\n'
                      'choice=$(whiptail --menu "Pick again" 15 40 2 red "" blue "" 3>&1 1>&2 2>&3)\n'
                      'echo "again=$choice"\n')
    p = cp("run", "--answer", "Pick a fruit=cherry", "--answer", "Sure=yes", "--answer", "Pick again=blue", "--log", "log", "--",
           "bash", str(script), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = [line.strip() for line in program_lines(p.stdout)]
    assert {"menu=cherry", "yesno=YES", "again=blue"} <= set(shown), p.stdout
    raw = (tmp_path / "log" / "session.raw").read_bytes()
    assert b"menu=cherry" in raw and b"yesno=YES" in raw


def test_live_mirror_crops_a_wide_program_to_the_users_terminal(tmp_path, rules):
    """The mirror showed the program at --cols 120 wrapped on a 60-column terminal: every long row broke in two."""
    wide = "A" * 50 + "B" * 50
    program = f'echo "cols=$(tput cols)"; echo {wide}; read -p "Continue? [y/n] " a; echo "got:$a"'
    screen = run_on_a_terminal(["run", "--rules", str(rules), "--log", "log", "--cols", "120", "--", "bash", "-c", program],
                               tmp_path, cols=60, rows=20)
    drawn = [*screen.scrollback(), *screen.snapshot().lines]
    assert not [row for row in drawn if row.startswith("B")], "\n".join(drawn)  # no row is the wrapped rest of the wide line
    assert [row for row in drawn if row.startswith("A" * 50)] and all(len(row) <= 60 for row in drawn)
    assert "cols=120" in drawn and any(row.startswith("got:y") for row in drawn)  # the program kept its size; its end is shown
    assert b"cols=120" in (tmp_path / "log" / "session.raw").read_bytes()
