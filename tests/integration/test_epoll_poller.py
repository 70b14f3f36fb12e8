"""A TUI whose input thread polls its terminal with a timeout of 0 (issue 48): crossterm's `event::poll(Duration::ZERO)`
35 times in a row, an `epoll_wait(fd, ..., 0)` each, then 30 ms of sleep, and again. It never blocks in a read or a poll,
so no look at its syscall file finds it waiting: it was `kernel: busy` from start to end and its dialog was never
judged (exit 4 at --timeout). The program is a real crossterm one (tests/programs/crossterm_poller), built offline
against Debian's librust-crossterm-dev; the kernel's word is also checked on a Python loop of the same syscalls, which
needs no Rust. And never silent, whatever the kernel says: a still raw-mode screen of a program that uses almost no CPU
is judged within seconds (pty/quiet.py `idle`). Mirrors: the same loops at work between their naps stay busy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cursorpilot.channels.pty import kernel, quiet
from tests.helpers import script
from tests.integration.test_kernel import _word_of
from tests.integration.test_read_from_facts import deployed

pytestmark = [pytest.mark.timeout(180), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")]

CRATE = Path(__file__).resolve().parents[1] / "programs" / "crossterm_poller"
REGISTRY = Path("/usr/share/cargo/registry")


@pytest.fixture(scope="module")
def poller() -> Path:
    """The crossterm program, built once (about 10 s) into its own target folder, offline."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("no cargo: the crossterm program can't be built (the Python loop of the same syscalls still runs)")
    if not any(REGISTRY.glob("crossterm-0.25*")):
        pytest.skip("Debian's crossterm crate is not installed: apt-get install librust-crossterm-dev")
    built = subprocess.run([cargo, "build", "--release", "--offline", "--quiet"], cwd=CRATE, capture_output=True, text=True,
                           timeout=600)
    if built.returncode != 0:
        pytest.skip(f"the crossterm program did not build offline: {built.stderr.strip()[-400:]}")
    return CRATE / "target" / "release" / "crossterm_poller"


def _judged_within(tmp_path, r) -> float:
    drawn = float((tmp_path / "drawn.txt").read_text())
    return r.of("keys_sent")[0]["mono"] - drawn


@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_crossterm_tui_that_polls_its_terminal_with_a_zero_timeout_gets_its_dialog_judged_within_a_second(
        pilot, tmp_path, poller, answerer):
    """It was `kernel: busy` at every look (asleep between bursts of polls that never block): its dialog was never
    judged, and the run ended silently by its timeout (exit 4)."""
    command = [str(poller), "ask"]
    r = deployed(pilot, command, answerer, tmp_path)
    assert _judged_within(tmp_path, r) < 1.0, f"judged {_judged_within(tmp_path, r):.2f}s after the dialog was drawn"
    assert "kernel: polling" in r.of("screen_state")[0]["facts"]


def test_the_same_crossterm_loop_at_work_between_its_naps_is_left_to_work(pilot, tmp_path, poller):
    """The mirror: the same bursts of polls with 25 ms of computing in each round (a program at work that checks for
    keys between its chunks) is busy: its still dialog gets no key, from the kernel's word or from never-silent."""
    r = pilot([str(poller), "work"], "--answer", "Deploy the build=y", "--timeout", "8s")
    assert r.code == 4, r.stdout + r.stderr
    assert r.of("keys_sent") == [] and not (tmp_path / "out.txt").exists()
    assert [s["rule_id"] for s in r.of("screen_state")][-1] == "kernel.busy"


EPOLL_ZERO = """
import os, select, sys, time
print("ready", flush=True)
e = select.epoll(); e.register(0, select.EPOLLIN)
{setup}
while True:
    for _ in range(35):  # crossterm's poll(Duration::ZERO), as the issue's strace shows it
        if e.poll(0):
            os.read(0, 16)
    {work}
    time.sleep(0.03)
"""


def test_a_python_loop_of_zero_timeout_epolls_between_naps_is_polling():
    """The same syscalls as the crossterm program, with no Rust: epoll_wait(fd, ..., 0) 35 times, clock_nanosleep 30 ms."""
    assert _word_of([sys.executable, "-c", EPOLL_ZERO.format(setup="", work="pass")], alike=8, warm=0.5) == kernel.POLLING


@pytest.mark.parametrize("setup, work", [("", "t = time.process_time()\n    while time.process_time() - t < 0.03: pass"),
                                         ("r, w = os.pipe(); e = select.epoll(); e.register(r, select.EPOLLIN)", "pass")])
def test_the_same_loop_at_work_or_on_a_set_without_its_terminal_is_busy(setup, work):
    """Mirrors: 30 ms of computing between the naps (half a CPU), or an epoll set that no longer holds the terminal."""
    assert _word_of([sys.executable, "-c", EPOLL_ZERO.format(setup=setup, work=work)], alike=8, warm=0.5) == kernel.BUSY


SLOW_POLL = """
import os, select, sys, time, tty
tty.setraw(0)
sys.stdout.write("\\x1b[?1049h\\x1b[2J\\x1b[3;5HDeploy the build to production? [y/n] "); sys.stdout.flush()
open("drawn.txt", "w").write(repr(time.monotonic()))
while not select.select([0], [], [], 0)[0]:  # a check that never blocks, then 0.2 s of sleep: the kernel sees a sleeper
    {work}
    time.sleep(0.2)
key = os.read(0, 16)
sys.stdout.write("\\x1b[?1049l"); sys.stdout.flush()
open("out.txt", "w").write(key.decode()[:1])
"""


def test_a_still_raw_mode_screen_of_an_idle_program_is_judged_whatever_the_kernel_says(pilot, tmp_path):
    """Never silent: a program the kernel takes for busy (asleep 0.2 s at a time, its terminal checked in between by a
    select that never blocks) but that uses no CPU, its raw-mode screen still, is judged within seconds, not at
    --timeout."""
    r = pilot(script(tmp_path, "slow_poll", SLOW_POLL.format(work="pass")), "--answer", "Deploy the build=y", "--timeout", "20s")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y"
    assert _judged_within(tmp_path, r) < quiet.IDLE_AFTER + 3
    assert "kernel.idle" in [s["rule_id"] for s in r.of("screen_state")]


def test_a_still_raw_mode_screen_of_a_program_at_work_is_left_to_work(pilot, tmp_path):
    """The mirror: the same program computing 0.1 s between its sleeps (a third of a CPU) is at work: no key, no
    `kernel.idle`, however long its screen is still."""
    work = "t = time.process_time()\n    while time.process_time() - t < 0.1: pass"
    r = pilot(script(tmp_path, "slow_poll", SLOW_POLL.format(work=work)), "--answer", "Deploy the build=y",
              "--timeout", f"{quiet.IDLE_AFTER + 4:g}s")
    assert r.code == 4, r.stdout + r.stderr
    assert r.of("keys_sent") == [] and "kernel.idle" not in [s["rule_id"] for s in r.of("screen_state")]
