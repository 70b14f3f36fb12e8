"""The kernel's word on a program (pty/kernel.py), read off real programs on real pseudo-terminals: what each way of
waiting for a key looks like."""

from __future__ import annotations

import os
import pty
import select
import sys
import time

import pytest

from cursorpilot.pty import kernel

pytestmark = [pytest.mark.timeout(60), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")]

WAYS = {  # a program that prints `ready`, then waits so
    "select on the terminal alone, no timeout": "select.select([0], [], [])",
    "poll on the terminal alone, no timeout": "p = select.poll(); p.register(0, select.POLLIN); p.poll()",
    "epoll on the terminal alone, no timeout": "e = select.epoll(); e.register(0, select.EPOLLIN); e.poll()",
    "select on the terminal with a timeout": "select.select([0], [], [], 30)",
    "poll on the terminal and a pipe": ("r, w = os.pipe(); p = select.poll(); p.register(0, select.POLLIN); "
                                        "p.register(r, select.POLLIN); p.poll()"),
    "select for the terminal to read or a full pipe to write": ("r, w = os.pipe(); os.set_blocking(w, False)\n"
                                                                "while True:\n  try: os.write(w, bytes(65536))\n"
                                                                "  except BlockingIOError: break\n"
                                                                "select.select([0], [w], [])"),
    "select on a pipe": "r, w = os.pipe(); select.select([r], [], [])",
}


def _word(code: str) -> str | None:
    """What the kernel says of the program once it has printed `ready` and sat in its wait (a few looks alike)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.executable, [sys.executable, "-c", f"import os, select\nprint('ready', flush=True)\n{code}"])
    try:
        watch, seen, out = kernel.TtyWatch(fd, kernel.slave_path(fd)), [], b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (b"ready" not in out or len(seen) < 5 or len(set(seen[-5:])) > 1):
            if select.select([fd], [], [], 0.01)[0]:
                out += os.read(fd, 1024)
            if b"ready" in out:
                seen.append(watch.state(time.monotonic()))
        return seen[-1] if seen else None
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


@pytest.mark.parametrize("way", ["select on the terminal alone, no timeout", "poll on the terminal alone, no timeout",
                                 "epoll on the terminal alone, no timeout"])
def test_a_wait_for_a_key_and_nothing_else_is_reading(way):
    """readline (sqlite3, python's input), newt (whiptail) and fdisk sit in pselect/poll on the terminal alone with no
    timeout: only a key can wake them, as a blocked read. They were `polling`, so each of their prompts waited out the
    poll settle (80 ms a question, 14 in fdisk) although their prompt is as complete as a reader's."""
    assert _word(WAYS[way]) == kernel.READING


@pytest.mark.parametrize("way", ["select on the terminal with a timeout", "poll on the terminal and a pipe",
                                 "select for the terminal to read or a full pipe to write"])
def test_a_wait_that_something_else_may_end_is_still_polling(way):
    """The mirror: a timeout (an animation's next frame), another fd (a child, a socket), a wait to write: the program
    may draw before any key comes."""
    assert _word(WAYS[way]) == kernel.POLLING


def test_a_wait_on_something_else_is_busy():
    assert _word(WAYS["select on a pipe"]) == kernel.BUSY


def test_the_next_command_of_a_script_is_seen_reading_at_once_not_at_the_next_listing():
    """A script (no job control) runs its commands in its own group: whiptail's next box, started after an answer,
    was seen only when the group's members were listed again (RELIST_BUSY later): 0.25 s after each answer. The clock
    is held still here, so no timer lists them again: only the members' children can show the new reader."""
    code = f"read -r _; {sys.executable} -c 'import os; print(\"asking\", flush=True); os.read(0, 1)'; true"
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "-c", code])
    try:
        watch, out, words = kernel.TtyWatch(fd, kernel.slave_path(fd)), b"", []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and watch.state(0.0) != kernel.READING:
            time.sleep(0.005)  # the script's own `read`
        os.write(fd, b"\n")
        while time.monotonic() < deadline and not (b"asking" in out and words[-1:] == [kernel.READING]):
            if select.select([fd], [], [], 0.005)[0]:
                out += os.read(fd, 1024)
            if b"asking" in out:
                words.append(watch.state(0.0))
        assert b"asking" in out and words[-1] == kernel.READING, words[-5:]
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
