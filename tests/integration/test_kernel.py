"""The kernel's word on a program (pty/kernel.py), read off real programs on real pseudo-terminals: what each way of
waiting for a key looks like."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import sys
import termios
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from cursorpilot.channels import reaper
from cursorpilot.channels.pty import kernel

pytestmark = [pytest.mark.timeout(60), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")]

PPOLL = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"  # ppoll's timeout is a timespec, read from its memory
         "fds, ts = (ctypes.c_int * 2)(0, 1), (ctypes.c_long * 2)({seconds}, {nanoseconds})\n"
         "while libc.ppoll(fds, 1, ts, None) == 0: pass")
WAYS = {  # a program that prints `ready`, then waits so
    "select on the terminal alone, no timeout": "select.select([0], [], [])",
    "poll on the terminal alone, no timeout": "p = select.poll(); p.register(0, select.POLLIN); p.poll()",
    "epoll on the terminal alone, no timeout": "e = select.epoll(); e.register(0, select.EPOLLIN); e.poll()",
    "select on the terminal with a long timeout": "select.select([0], [], [], 30)",
    "select on the terminal with a short timeout": "while not select.select([0], [], [], 0.1)[0]: pass",
    "ppoll on the terminal with a long timeout": PPOLL.format(seconds=30, nanoseconds=0),
    "ppoll on the terminal with a short timeout": PPOLL.format(seconds=0, nanoseconds=100_000_000),
    "poll on the terminal and its own pipe": ("r, w = os.pipe(); p = select.poll(); p.register(0, select.POLLIN); "
                                              "p.register(r, select.POLLIN); p.poll()"),
    "poll on the terminal and a child's pipe": ("import subprocess; c = subprocess.Popen(['sleep', '30'], stdout=-1); "
                                                "p = select.poll(); p.register(0, select.POLLIN); "
                                                "p.register(c.stdout, select.POLLIN); p.poll()"),
    "select for the terminal to read or a full pipe to write": ("r, w = os.pipe(); os.set_blocking(w, False)\n"
                                                                "while True:\n  try: os.write(w, bytes(65536))\n"
                                                                "  except BlockingIOError: break\n"
                                                                "select.select([0], [w], [])"),
    "select on a pipe": "r, w = os.pipe(); select.select([r], [], [])",
}


def _word(code: str) -> str | None:
    """What the kernel says of the program once it has printed `ready` and sat in its wait (a few looks alike)."""
    return _word_of([sys.executable, "-c", f"import os, select\nprint('ready', flush=True)\n{code}"])


def _word_of(argv: list[str], ready: bytes = b"ready", alike: int = 5, warm: float = 0.0) -> str | None:
    """What the kernel says of a program once it has shown `ready`: the word of `alike` looks in a row that agree
    (counted after `warm` seconds of looks: a word weighed over a window, pty/naps.py, needs that long)."""
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # a terminal's size, as the pilot's
        os.execvp(argv[0], argv)
    try:
        watch, seen, out, shown = kernel.TtyWatch(fd, kernel.slave_path(fd)), [], b"", 0.0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (ready not in out or len(seen) < alike or len(set(seen[-alike:])) > 1):
            if select.select([fd], [], [], 0.01)[0]:
                out += os.read(fd, 4096)
            if ready in out:
                now = time.monotonic()
                shown = shown or now
                word = watch.state(now)
                if now - shown >= warm:
                    seen.append(word)
        return seen[-1] if seen else None
    finally:
        os.killpg(pid, 9)  # and the children it started (its own group: pty.fork made it a session leader)
        os.waitpid(pid, 0)
        os.close(fd)


@pytest.mark.parametrize("way", ["select on the terminal alone, no timeout", "poll on the terminal alone, no timeout",
                                 "epoll on the terminal alone, no timeout", "select on the terminal with a long timeout",
                                 "ppoll on the terminal with a long timeout", "poll on the terminal and its own pipe"])
def test_a_wait_for_a_key_and_nothing_else_is_reading(way):
    """readline (sqlite3, python's input), newt (whiptail) and fdisk sit in pselect/poll on the terminal alone with no
    timeout: only a key can wake them, as a blocked read. They were `polling`, so each of their prompts waited out the
    poll settle (80 ms a question, 14 in fdisk) although their prompt is as complete as a reader's. A timeout of
    seconds is no animation's frame, and a pipe whose write end the program holds is its own wake-up: the same."""
    assert _word(WAYS[way]) == kernel.READING


@pytest.mark.parametrize("way", ["select on the terminal with a short timeout", "ppoll on the terminal with a short timeout",
                                 "poll on the terminal and a child's pipe",
                                 "select for the terminal to read or a full pipe to write"])
def test_a_wait_that_something_else_may_end_is_still_polling(way):
    """The mirror: a short timeout (an animation's next frame), another fd (a pipe whose write end is not its own), a
    wait to write: the program
    may draw before any key comes."""
    assert _word(WAYS[way]) == kernel.POLLING


def test_a_wait_on_something_else_is_busy():
    assert _word(WAYS["select on a pipe"]) == kernel.BUSY


TIMER = ("import ctypes, signal, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n"  # a POSIX timer whose signal a
         "class Event(ctypes.Structure):\n"  # thread of its own waits for, as glibc's helper of SIGEV_THREAD timers (Vim's)
         "    _fields_ = [('value', ctypes.c_void_p), ('signo', ctypes.c_int), ('notify', ctypes.c_int), ('pad', ctypes.c_byte * 48)]\n"
         "sig = signal.SIGRTMIN + 2\nsignal.pthread_sigmask(signal.SIG_BLOCK, {{sig, signal.SIGUSR1}})\n"
         "timer = ctypes.c_void_p()\nassert libc.timer_create(1, ctypes.byref(Event(None, sig, 0)), ctypes.byref(timer)) == 0\n"
         "if {every_ms}:\n"
         "    n = {every_ms} * 1_000_000\n"
         "    assert libc.timer_settime(timer, 0, (ctypes.c_long * 4)(n // 10**9, n % 10**9, n // 10**9, n % 10**9), None) == 0\n"
         "threading.Thread(target=lambda: [signal.sigwait({{{waited}}}) for _ in iter(int, 1)], daemon=True).start()\n"
         "select.select([0], [], [], 30)")
needs_timer_list = pytest.mark.skipif(not os.access("/proc/timer_list", os.R_OK),
                                      reason="only root reads the kernel's pending timers (/proc/timer_list)")


@needs_timer_list
@pytest.mark.parametrize("every_ms", [0, 30_000])
def test_a_thread_waiting_for_its_timers_signal_is_idle_while_no_timer_is_due(every_ms):
    """Vim (from 9.0, under git commit) waits in pselect on its terminal with a 4 s timeout, beside glibc's helper
    thread for its SIGEV_THREAD timer, in sigwaitinfo for the timer's signal: it got a poller's judgement, 0.3 s, at
    every screen. That thread wakes only when a POSIX timer fires; the kernel's list of pending timers shows none due
    within LONG_WAIT (its timer disarmed, or due in 30 s): nothing but a key can wake the program before then."""
    assert _word(TIMER.format(every_ms=every_ms, waited="sig")) == kernel.READING


@needs_timer_list
@pytest.mark.parametrize("every_ms, waited", [(100, "sig"), (0, "signal.SIGUSR1")])
def test_a_thread_waiting_for_a_timer_due_soon_or_another_signal_keeps_it_polling(every_ms, waited):
    """The mirror: its timer fires every 100 ms (an animation's), or the thread waits for a signal that no timer of
    the program sends (anyone may send it): it may wake and draw before a key comes."""
    assert _word(TIMER.format(every_ms=every_ms, waited=waited)) == kernel.POLLING


@contextmanager
def _on_a_pty(argv: list[str]):
    """A program on a pseudo-terminal of its own: its master fd and the kernel's watch on it; it and the children it
    started (its own group: pty.fork made it a session leader) killed at the end."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    try:
        yield fd, kernel.TtyWatch(fd, kernel.slave_path(fd))
    finally:
        os.killpg(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def test_the_next_command_of_a_script_is_seen_reading_at_once_not_at_the_next_listing():
    """A script (no job control) runs its commands in its own group: whiptail's next box, started after an answer,
    was seen only when the group's members were listed again (RELIST_BUSY later): 0.25 s after each answer. The clock
    is held still here, so no timer lists them again: only the members' children can show the new reader."""
    code = f"read -r _; {sys.executable} -c 'import os; print(\"asking\", flush=True); os.read(0, 1)'; true"
    with _on_a_pty(["bash", "-c", code]) as (fd, watch):
        out, words = b"", []
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


def test_a_script_between_two_commands_is_busy_not_unknown():
    """A script's `sleep` that has ended, its next command not listed yet: the group's word was "unknown" until the next
    listing (up to RELIST_BUSY), and the never-silent deadline judged the script's still screen as a question then (the
    yardstick's trap-deploy: the model asked, at the end of its `sleep 3`, about the `git log` lines above). The gone
    member is no word at all: the script waits for its next command, busy."""
    with _on_a_pty(["bash", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 0.1; done; read -r _"]) as (fd, watch):
        words: list[str | None] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and kernel.READING not in words[-1:]:
            if select.select([fd], [], [], 0.002)[0]:
                os.read(fd, 1024)
            words.append(watch.state(0.0))  # the clock held still: no listing comes round by time
        assert words[-1] == kernel.READING and kernel.BUSY in words
        running = words[words.index(kernel.BUSY):]  # from the script's start (before its exec, nobody is there yet)
        assert None not in running, f"{running.count(None)} of {len(running)} looks said unknown"


def _look_until(fd: int, watch: kernel.TtyWatch, out: bytes, shown: bytes, done, deadline: float) -> tuple[bytes, list]:
    """Read the program's output and, once `shown` is in it, ask the kernel (the clock held still: no new listing of the
    group comes by time) until done(words)."""
    words: list[str | None] = []
    while time.monotonic() < deadline and not (shown in out and done(words)):
        if select.select([fd], [], [], 0.01)[0]:
            out += os.read(fd, 4096)
        if shown in out:
            words.append(watch.state(0.0))
    return out, words


def test_a_thread_started_since_the_process_was_listed_keeps_its_loop_polling():
    """An event loop that starts a worker on a key (libuv's pool on first use, asyncio's executor) and goes back to its
    wait on the terminal and its own eventfd: the worker, unseen in a thread list taken before it, was not asked
    whether it is idle, and the loop stayed "reading" while it worked."""
    code = ("import os, select, threading, time, tty\ntty.setcbreak(0)\nr = os.eventfd(0)\ne = select.epoll()\ne.register(0, select.EPOLLIN)\n"
            "e.register(r, select.EPOLLIN)\nprint('ready', flush=True)\ne.poll()\nos.read(0, 1)\n"
            "threading.Thread(target=lambda: [time.sleep(0.01) for _ in range(10**6)], daemon=True).start()\n"
            "print('working', flush=True)\ne.poll()")
    with _on_a_pty([sys.executable, "-c", code]) as (fd, watch):
        deadline = time.monotonic() + 20
        out, words = _look_until(fd, watch, b"", b"ready", lambda w: w[-3:] == [kernel.READING] * 3, deadline)
        assert words[-1:] == [kernel.READING], words[-5:]
        os.write(fd, b"x")
        out, words = _look_until(fd, watch, out, b"working", lambda w: len(w) >= 20, deadline)
        assert b"working" in out and kernel.READING not in words[5:], words


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize(("panes", "word"), [
    (["read -r -p 'Apply? [y/N] ' a"], kernel.READING),
    (["echo 'Apply? [y/N] '; sleep 30"], kernel.POLLING),
    (["read -r -p 'other> ' a", ";", "new-window", "echo 'Apply? [y/N] '; sleep 30"], kernel.POLLING),
], ids=["a pane that reads", "a pane that sleeps", "a window that sleeps before one that reads"])
def test_a_program_in_a_tmux_pane_reads_through_the_server(tmp_path, panes, word):
    """tmux's client waits on its server's socket, and the server polls this terminal among its sockets and its panes:
    the pane's prompt was never "reading", and each question waited out the full settle. The server holds this terminal
    and the pane's master; the pane's shell, blocked reading the pane, is the reader (relays.py). The mirrors: a pane
    whose program sleeps is not read through, and neither is a tmux with two windows, whose idle shell in the window
    not shown must not make the working one on screen look like a question."""
    mark = f"kernel-test-{os.getpid()}"
    env = {**os.environ, "CURSORPILOT_MARK": mark, "TMUX_TMPDIR": str(tmp_path), "TERM": "xterm-256color"}
    env.pop("TMUX", None)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("tmux", ["tmux", "-f", "/dev/null", "new-session", "-s", "t", "-x", "80", "-y", "24", *panes], env)
    try:
        watch, out, words = kernel.TtyWatch(fd, kernel.slave_path(fd), mark), b"", []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (b"Apply?" in out and words[-5:] == [word] * 5):
            if select.select([fd], [], [], 0.01)[0]:
                out += os.read(fd, 4096)
            if b"Apply?" in out:
                words.append(watch.state(time.monotonic()))
        assert words[-1:] == [word], words[-5:]
    finally:
        os.killpg(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
        for server in reaper.find(mark):  # the server and its pane, in a session of their own
            os.kill(server, 9)


NPM = Path(__file__).resolve().parents[1] / "npm" / "node_modules"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
needs_npm = pytest.mark.skipif(shutil.which("node") is None or not (NPM / "@inquirer" / "prompts").is_dir(),
                               reason="needs node and `npm ci --prefix tests/npm` (.ci/run does both)")
ASK = "require('readline').createInterface({input: process.stdin, output: process.stdout}).question('ready? ', () => {});"
NODE_WAITS = {  # a Node prompt (readline) and what else the program does while it waits for the answer
    "nothing else": ASK,
    "a timer far off": f"setTimeout(() => {{}}, 60000); {ASK}",
    "a spinner": f"setInterval(() => {{}}, 100); {ASK}",
    "a child's output": f"require('child_process').spawn('sleep', ['30']).stdout.on('data', () => {{}}); {ASK}",
    "a busy worker": f"new (require('worker_threads').Worker)('for (;;) {{}}', {{eval: true}}); {ASK}",
    "a worker asleep in a timer": f"new (require('worker_threads').Worker)('setInterval(() => {{}}, 100)', {{eval: true}}); {ASK}",
}


@needs_node
@pytest.mark.parametrize("other", ["nothing else", "a timer far off"])
def test_a_node_prompt_is_reading(other):
    """Node (libuv) waits in epoll on the terminal, its own wake-up pipe and eventfd, with its next timer as the
    timeout, and its pool's threads sit in futex waits: nothing but a key can wake it, yet it was `polling` forever, so
    create-vite, npm init and ng new paid the poll settle (80-400 ms) on every question."""
    assert _word_of(["node", "-e", NODE_WAITS[other]]) == kernel.READING


@needs_npm
def test_an_inquirer_prompt_and_create_vite_are_reading():
    prompts = NPM / "@inquirer" / "prompts" / "dist" / "esm" / "index.js"
    code = f"import {{ input }} from '{prompts}'; await input({{ message: 'ready?' }});"
    assert _word_of(["node", "--input-type=module", "-e", code]) == kernel.READING
    assert _word_of(["node", str(NPM / "create-vite" / "index.js")], ready=b"Project name") == kernel.READING


@needs_node
@pytest.mark.parametrize("other", ["a spinner", "a child's output", "a busy worker", "a worker asleep in a timer"])
def test_a_node_prompt_that_something_else_may_wake_is_polling(other):
    """The mirror: a timer that draws (a spinner's 100 ms), a pipe from a child, a thread of its own at work or
    asleep in a timer: the program may draw before any key comes."""
    assert _word_of(["node", "-e", NODE_WAITS[other]]) == kernel.POLLING


ASYNCIO = ("import asyncio, sys, threading, time\n"
           "async def main():\n"
           "    loop, done = asyncio.get_running_loop(), asyncio.Event()\n"
           "    loop.add_reader(0, done.set)\n"
           "    {other}\n"
           "    print('ready', flush=True)\n"
           "    await done.wait()\n"
           "asyncio.run(main())\n")
TICK = "threading.Thread(target=lambda: [time.sleep(0.05) or loop.call_soon_threadsafe(len, '') for _ in iter(int, 1)], daemon=True).start()"


def test_an_asyncio_loop_reading_its_terminal_is_reading():
    """asyncio waits in epoll on the terminal and its self-pipe, a socketpair whose two ends it holds (two inodes:
    their pairing comes from sock_diag)."""
    assert _word_of([sys.executable, "-c", ASYNCIO.format(other="pass")]) == kernel.READING


def test_an_asyncio_loop_with_a_thread_that_posts_to_it_is_polling():
    """The mirror: a thread of its own, asleep between posts to the loop, wakes it through the same self-pipe."""
    assert _word_of([sys.executable, "-c", ASYNCIO.format(other=TICK)]) == kernel.POLLING


def test_a_prompt_toolkit_prompt_is_reading():
    """prompt_toolkit (questionary, copier) polls the terminal's size every 0.5 s: its epoll timeout is 484-500 ms,
    no animation's frame."""
    pytest.importorskip("prompt_toolkit")
    code = "from prompt_toolkit import prompt\nprompt('ready? ')"
    assert _word_of([sys.executable, "-c", code], ready=b"ready?", alike=20) == kernel.READING


@needs_node
def test_a_wait_found_to_end_on_a_key_alone_is_judged_again_once_it_has_woken():
    """A wait judged to end on nothing but a key is taken as such while its thread has not run since (schedstat); a key
    that makes the program start a child brings it back to the same epoll call, same arguments, and the child may
    wake it: it must be judged again (polling), not read from the last look. The clock is held still: no new listing
    of the group's members forgets the last look."""
    code = ("process.stdin.setRawMode(true); process.stdin.once('data', () => { require('child_process')"
            ".spawn('sleep', ['30'], {stdio: 'ignore'}); console.log('started'); }); console.log('ready');")
    with _on_a_pty(["node", "-e", code]) as (fd, watch):
        deadline = time.monotonic() + 20
        out, words = _look_until(fd, watch, b"", b"ready", lambda w: w[-3:] == [kernel.READING] * 3, deadline)
        assert words[-1:] == [kernel.READING], words[-5:]
        os.write(fd, b"x")
        out, words = _look_until(fd, watch, out, b"started", lambda w: w[-5:] == [kernel.POLLING] * 5, deadline)
        assert words[-1:] == [kernel.POLLING], words[-5:]


@pytest.mark.parametrize(("other", "working"), [("exec('while True: pass')", True), ("time.sleep(60)", False)])
def test_a_thread_at_work_beside_the_reader_is_work_whatever_the_word_says(other, working):
    """fzf reads keys in one thread and filters its list in others: the group's word is `reading` throughout, and an
    Enter sent as the query showed took the old first item. `working` says whether any thread is on a CPU now; the
    mirror: a thread asleep beside the reader is no work."""
    code = (f"import os, threading, time\nthreading.Thread(target=lambda: {other}, daemon=True).start()\n"
            "print('ready', flush=True)\nos.read(0, 1)")
    with _on_a_pty([sys.executable, "-c", code]) as (fd, watch):
        out, deadline = b"", time.monotonic() + 20
        while b"ready" not in out and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                out += os.read(fd, 4096)
        while watch.state(time.monotonic()) != kernel.READING and time.monotonic() < deadline:
            select.select([], [], [], 0.005)  # until its main thread sits in its read: printing `ready` was work too
        looks = []
        while len(looks) < 20 and time.monotonic() < deadline:
            looks.append(watch.working(time.monotonic()))
            time.sleep(0.005)  # looks spread over 0.1 s (the thread's own pace is not what is tested)
        assert watch.state(time.monotonic()) == kernel.READING
        assert (sum(looks) >= 15) if working else not any(looks), looks
