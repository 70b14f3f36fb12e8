"""A person at the terminal and a person on the decision page answering the same question: one answer wins, the other
is refused where it was given, and nothing is typed twice. cursor-pilot runs under a real PTY (the person's terminal,
CI unset: someone is there), with `--listen 127.0.0.1:0`; the page is posted to over real HTTP."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from cursorpilot.channels.pty.driver import PtyDriver
from cursorpilot.channels.pty.screen import TerminalScreen
from tests.integration.test_human_page import call

pytestmark = pytest.mark.timeout(90)
WORK_ON = "while [ ! -f go ]; do printf .; sleep 0.2; done"  # the program works on until the test lets it end
ONE = f'read -p "Release name: " a; echo "got:$a"; {WORK_ON}'
TWO = f'read -p "Release name: " a; echo "got:$a"; {WORK_ON}; read -p "Notes: " b; echo "notes:$b"'


class AtTheTerminal:
    """cursor-pilot on a PTY of its own, as on a person's terminal: everything it draws, rendered."""

    def __init__(self, tmp_path: Path, program: str):
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CI", "CURSOR_PILOT_NOTIFY")}
        args = ["run", "--log", "log", "--timeout", "60s", "--answer", "nothing=y", "--listen", "127.0.0.1:0", "--", "bash", "-c", program]
        self.tmp_path = tmp_path
        self.driver = PtyDriver([sys.executable, "-m", "cursorpilot", *args], cwd=str(tmp_path), env=env, cols=200, rows=50)
        self.screen = TerminalScreen(200, 50)
        self.lock = threading.Lock()
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            chunk = self.driver.read(0.05)
            if chunk is None:
                break
            with self.lock:
                self.screen.feed(chunk)
                self.screen.take_replies()
        self.ended.set()

    def text(self) -> str:
        with self.lock:
            return "\n".join([*self.screen.scrollback(), *self.screen.snapshot().lines])

    def wait_for(self, pattern: str, timeout: float = 30.0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.text())
            if m:
                return m
            self.ended.wait(0.02)
        raise AssertionError(f"{pattern!r} never showed:\n{self.text()}")

    def link(self) -> str:
        return self.wait_for(r"answer on the decision page: (http://\S+)").group(1)

    def type(self, line: str) -> None:
        self.driver.write(line.encode() + b"\r")

    def finish(self) -> int:
        (self.tmp_path / "go").touch()
        deadline = time.monotonic() + 30
        while not self.ended.wait(0.05) and time.monotonic() < deadline:
            if re.search(r"Save your answers as rules in \S+\? \[y/N\]: *$", self.text().rstrip("\n") + " "):
                self.type("n")  # the offer after a run a person helped (cursor-pilot learn): not this test's business
                deadline = time.monotonic() + 30
        assert self.ended.is_set(), self.text()
        status = self.driver.wait(10)
        self.driver.close()
        assert status is not None
        return status.code

    def records(self, type_: str) -> list[dict]:
        lines = (self.tmp_path / "log" / "transcript.jsonl").read_text().splitlines()
        return [r for r in map(json.loads, lines) if r["type"] == type_]

    def typed(self) -> list[str]:
        """What the program was given, key by key."""
        return [r["keys"] for r in self.records("keys_sent")]


@pytest.fixture
def terminal(tmp_path, request):
    t = AtTheTerminal(tmp_path, request.param)
    yield t
    if t.driver.alive():
        t.driver.terminate(1.0)
        t.driver.close()


@pytest.mark.parametrize("terminal", [ONE], indirect=True)
def test_the_terminal_answers_first_and_the_page_gets_409(terminal):
    link = terminal.link()
    terminal.wait_for(r"Or type the answer here")
    terminal.type("v-term")
    terminal.wait_for(r"got:v-term")
    status, text = call(link, "v-page")
    assert status == 409 and "already answered at the terminal" in text
    assert terminal.finish() == 0
    assert terminal.typed() == ["v-term", "<enter>"]
    assert [r["channel"] for r in terminal.records("human_answered")] == ["terminal"]
    assert [(r["channel"], r["status"], r["text"]) for r in terminal.records("human_refused")] == [("page", 409, "v-page")]


@pytest.mark.parametrize("terminal", [TWO], indirect=True)
def test_the_page_answers_first_and_a_line_typed_late_at_the_terminal_is_ignored_visibly(terminal):
    link = terminal.link()
    assert call(link, "v-page")[0] == 200
    terminal.wait_for(r"answered on the page: anything typed here now is ignored")
    terminal.type("v-late")  # too late for the first question, and typed before the second was asked
    terminal.wait_for(r"got:v-page")
    (terminal.tmp_path / "go").touch()
    terminal.wait_for(r"ignored 1 line\(s\) typed before this question was asked")
    terminal.type("none")
    terminal.wait_for(r"notes:none")
    assert terminal.finish() == 0
    assert terminal.typed() == ["v-page", "<enter>", "none", "<enter>"]  # v-late never reached the program
    assert [r["channel"] for r in terminal.records("human_answered")] == ["page", "terminal"]


@pytest.mark.parametrize("terminal", [ONE] * 3, indirect=True)
def test_the_terminal_and_the_page_at_the_same_moment_one_wins_and_nothing_is_typed_twice(terminal):
    link = terminal.link()
    terminal.wait_for(r"Or type the answer here")
    ready, posted = threading.Barrier(2), {}

    def post() -> None:
        ready.wait()
        posted["result"] = call(link, "v-page")

    poster = threading.Thread(target=post)
    poster.start()
    ready.wait()
    terminal.type("v-term")
    poster.join(20)
    got = terminal.wait_for(r"got:(v-\w+)").group(1)
    status, text = posted["result"]
    if got == "v-page":
        assert status == 200
        terminal.wait_for(r"answered on the page")  # the terminal is told, and its line taken nowhere
    else:
        assert status == 409 and "already answered at the terminal" in text
    assert terminal.finish() == 0
    assert terminal.typed() == [got, "<enter>"]
    assert len(terminal.records("human_answered")) == 1
    assert terminal.text().count("got:") == 1


@pytest.mark.parametrize("terminal", [ONE], indirect=True)
def test_ctrl_d_at_the_terminal_gives_up_as_before_and_the_page_link_closes(terminal):
    link = terminal.link()
    terminal.wait_for(r"Or type the answer here")
    terminal.driver.write(b"\x04")  # Ctrl-D on an empty line: end of input
    assert terminal.finish() == 3
    assert terminal.records("human_unanswered")[0]["why"] == "the person at the terminal gave up (Ctrl-D)"
    assert terminal.typed() == []


@pytest.mark.parametrize("terminal", [ONE], indirect=True)
def test_ctrl_d_ends_the_run_saying_the_person_gave_up_not_that_none_answered(terminal):
    """It said "a human is needed (no answer); none answered": as if nobody had been there."""
    terminal.wait_for(r"Or type the answer here")
    terminal.driver.write(b"\x04")
    assert terminal.finish() == 3
    assert "cursor-pilot: the person at the terminal gave up (Ctrl-D) (exit 3)" in terminal.text()
    assert "none answered" not in terminal.text()
    assert json.loads((terminal.tmp_path / "log" / "manifest.json").read_text())["reason"] == "the person at the terminal gave up (Ctrl-D)"


@pytest.mark.parametrize("terminal", ['read -s -p "Vault password: " p; echo; echo "length:${#p}"'], indirect=True)
def test_a_secret_typed_at_the_terminal_is_not_echoed_and_reaches_the_program(terminal):
    terminal.wait_for(r"It is a secret: not shown as you type")
    terminal.type("hunter2-hunter2")
    terminal.wait_for(r"length:15")
    assert terminal.finish() == 0
    assert "hunter2" not in terminal.text()
    assert "hunter2" not in (terminal.tmp_path / "log" / "transcript.jsonl").read_text()
