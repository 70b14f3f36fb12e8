"""An agent's progress signs (pty/progress.py) on the real agents' screens, captured offline a few seconds apart: a stalled
model stream (spinner and timer moving, nothing else) and a slow one (a token a second); and a child's CPU."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from cursorpilot.detect.profiles import load_profile
from cursorpilot.channels.pty.progress import CPU_EVERY, Progress, cpu_ticks
from tests.helpers import CAPTURES


def screens(agent: str, name: str) -> tuple[str, str]:
    return tuple((CAPTURES / f"{agent}-real-{n}.txt").read_text() for n in (name, f"{name}-later"))  # type: ignore[return-value]


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_stalled_stream_shows_no_progress_though_its_spinner_and_timer_move(agent):
    first, later = screens(agent, "stalled")
    assert first != later  # the spinner and the elapsed timer moved
    p = Progress(load_profile(agent).animation, None, 0.0)
    p.seen(0.0, first)
    assert p.seen(3.0, later) == 3.0


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_slow_stream_is_progress(agent):
    first, later = screens(agent, "streaming")  # Claude's token counter, Gemini's text
    p = Progress(load_profile(agent).animation, None, 0.0)
    p.seen(0.0, first)
    assert p.seen(3.0, later) == 0.0


def test_without_its_profiles_animation_a_stall_looks_like_progress():
    """The mirror: the masking is what tells them apart (a plain screen comparison calls the stall progress)."""
    first, later = screens("claude", "stalled")
    p = Progress([], None, 0.0)
    p.seen(0.0, first)
    assert p.seen(3.0, later) == 0.0


@pytest.mark.timeout(30)
def test_a_child_that_uses_cpu_is_progress_one_that_sleeps_is_not():
    busy = "import time\nend = time.time() + 20\nwhile time.time() < end: pass"
    parent = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} -c '{busy}'; exit 0"], start_new_session=True)
    sleeper = subprocess.Popen(["/bin/sh", "-c", "sleep 20; exit 0"], start_new_session=True)
    try:
        deadline = time.monotonic() + 15
        while (cpu_ticks(parent.pid) or 0) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)  # (polled until the condition holds, within the deadline)
        assert (cpu_ticks(parent.pid) or 0) >= 20 and cpu_ticks(sleeper.pid) == 0
        working, idle = Progress([], parent.pid, 0.0), Progress([], sleeper.pid, 0.0)
        now = 0.0
        for _ in range(3):  # the same screen each time: only the children can say anything
            deadline = time.monotonic() + 5
            before = cpu_ticks(parent.pid) or 0
            while (cpu_ticks(parent.pid) or 0) - before < 10 and time.monotonic() < deadline:
                time.sleep(0.02)
            now += CPU_EVERY
            assert working.seen(now, "same") == 0.0 or now == CPU_EVERY
            idle.seen(now, "same")
        assert idle.seen(now, "same") == now - CPU_EVERY  # (its first look is the last change it saw)
    finally:
        for proc in (parent, sleeper):
            os.killpg(proc.pid, signal.SIGKILL)  # the shell and what it started
            proc.wait()
    assert cpu_ticks(parent.pid) is None


@pytest.mark.timeout(30)
def test_a_child_on_the_agents_own_terminal_is_its_tui_not_its_work():
    """Gemini CLI and Codex run their TUI in a child of the program started: its spinner's CPU is no progress."""
    master, slave = os.openpty()
    busy = "import time\nend = time.time() + 20\nwhile time.time() < end: pass"
    parent = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} -c '{busy}'; exit 0"], stdin=slave, stdout=slave, stderr=slave,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 15
        while (cpu_ticks(parent.pid) or 0) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (cpu_ticks(parent.pid) or 0) >= 20 and cpu_ticks(parent.pid, os.ttyname(slave)) == 0
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
        os.close(master)
        os.close(slave)
