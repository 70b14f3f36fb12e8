"""Waiting read over a window, not an instant: a thread that naps between short polls of its terminal waits on it
(Linux /proc; pty/kernel.py asks).

A common event loop in Rust and Go TUIs polls the terminal for a millisecond (crossterm's `poll(1ms)`), then sleeps
30 ms, and again. Looked at once, it is asleep 97 % of the time, and a sleeping thread is a program at work (`sleep 10`
in a script): the TUI was taken for busy, its first dialog never judged, and the run ended by its timeout. So a short
nap is weighed over a window: a thread seen polling its terminal within WINDOW and napping now is polling. One not seen
yet is watched through one nap: its sleep's end is read from its own arguments (the deadline of an absolute
clock_nanosleep, or the length of a relative one), and its syscall is read every SAMPLE until a little after it, so the
poll that follows the nap is seen. At most once per AGAIN per thread (once per QUIET_FOR after GIVE_UP naps in a row with
no poll), and never for a nap longer than NAP_MAX: a long sleep is work (`sleep 10`), as is a thread with a child.

A poll with a timeout of 0 never blocks, so it never shows in a thread's syscall file at all: crossterm's
`poll(Duration::ZERO)`, called some 35 times in a row between 30 ms naps, is an `epoll_wait(fd, ..., 0)` burst of 0.2 ms
that no sampler sees. Such a loop is told by what it holds and what it costs: a thread in a short nap, in a process
whose epoll set watches the terminal (its fdinfo), that has used less than CPU_SHARE of a CPU over the last CPU_SPAN or
more, waits on its terminal (`idle_napper`). One that computes between its naps is at work.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable

NAP_MAX = 0.06  # s: a sleep this short between polls is a loop's pause, not work (and a look may wait it out)
WINDOW = 1.5  # a poll of the terminal seen this recently explains the naps around it
SAMPLE = 0.0002  # how often a napping thread's syscall is read while its nap is watched
AFTER = 0.015  # ...and for how long after the nap should have ended (a loaded machine wakes it late)
AGAIN = 0.4  # a nap watched through with no poll seen: the next one is watched this much later
GIVE_UP = 3  # ...and after this many in a row, only once per QUIET_FOR: it naps for another reason (a file, a lock)
QUIET_FOR = 10.0
_CLOCKS = {0: time.CLOCK_REALTIME, 1: time.CLOCK_MONOTONIC, 7: getattr(time, "CLOCK_BOOTTIME", 7)}
_TIMER_ABSTIME = 1

CPU_SHARE = 0.05  # a napping loop that polls its terminal and uses less of a CPU than this is waiting
CPU_SPAN = 0.2  # ...measured over at least this long
CPU_KEEP = 2.0  # ...and at most this long (the samples kept per process)
_polled: dict[str, float] = {}  # thread (its /proc path) -> when it was last seen polling its terminal
_watched: dict[str, tuple[float, int]] = {}  # thread -> when a nap of it was last watched, and how many in a row saw no poll
_any = [-1e9]  # when any nap was last watched: one at a time per AGAIN, however many threads nap (a pool of workers)

Mem = Callable[[int, int], "bytes | None"]


def polled(task: str) -> None:
    """This thread was seen in a poll/select/epoll on a set that holds the terminal, with a timeout."""
    _polled[task] = time.monotonic()


def between_polls(task: str, nr: int, args: list[int], mem: Mem, polls_tty: Callable[[], bool], nanosleep: int) -> bool:
    """A thread in a short sleep that polls its terminal between its naps (seen within WINDOW, or seen now by watching
    one nap through): it waits on its terminal."""
    nap = _nap(nr, args, mem, nanosleep)
    if nap is None or nap > NAP_MAX:
        return False
    now = time.monotonic()
    if now - _polled.get(task, -1e9) <= WINDOW:
        return True
    last, missed = _watched.get(task, (-1e9, 0))
    if now - last <= (AGAIN if missed < GIVE_UP else QUIET_FOR) or now - _any[0] <= AGAIN / 2:
        return False  # watched a moment ago and seen doing nothing else: a loop's pause of another kind
    _any[0] = now
    _prune(now)
    end = now + nap + AFTER
    while time.monotonic() < end:
        if polls_tty():
            polled(task)
            _watched[task] = (now, 0)
            return True
        time.sleep(SAMPLE)
    _watched[task] = (now, missed + 1 if missed < GIVE_UP else 1)
    return False


def idle_napper(nr: int, args: list[int], mem: Mem, nanosleep: int, pid: int, cpu: Callable[[], int | None],
                epolls_tty: Callable[[], bool]) -> bool:
    """A thread in a short sleep, in a process whose epoll set watches its terminal and which has used almost no CPU
    lately: a loop that polls its terminal with a timeout of 0 between naps. It waits on its terminal."""
    nap = _nap(nr, args, mem, nanosleep)
    if nap is None or nap > NAP_MAX or not epolls_tty():
        return False
    share = cpu_share(pid, time.monotonic(), cpu())
    return share is not None and share < CPU_SHARE


_cpu: dict[int, list[tuple[float, int]]] = {}  # process -> (when, its threads' nanoseconds on a CPU), oldest first


def cpu_share(pid: int, now: float, used: int | None) -> float | None:
    """The share of one CPU the process has used over the last CPU_SPAN to CPU_KEEP seconds; None until it has been
    watched that long (or when a thread's end took its time off the sum: watched afresh)."""
    if used is None:
        _cpu.pop(pid, None)
        return None
    samples = _cpu.setdefault(pid, [])
    if samples and used < samples[-1][1]:
        samples.clear()
    if not samples or now - samples[-1][0] >= CPU_SPAN / 4:
        samples.append((now, used))
    while len(samples) > 1 and now - samples[1][0] >= CPU_SPAN and now - samples[0][0] > CPU_KEEP:
        del samples[0]
    if len(_cpu) > 64:
        for other in [p for p, s in _cpu.items() if now - s[-1][0] > CPU_KEEP]:
            del _cpu[other]
    then, before = samples[0]
    return None if now - then < CPU_SPAN else (used - before) / 1e9 / (now - then)


def _nap(nr: int, args: list[int], mem: Mem, nanosleep: int) -> float | None:
    """How long the sleep it is in has to go (at most): nanosleep(req, rem) or clock_nanosleep(clock, flags, req, rem);
    None where it can't be read."""
    relative = nr == nanosleep
    where, clock, flags = (0, 1, 0) if relative else (2, args[0] if args else -1, args[1] if len(args) > 1 else 0)
    if len(args) <= where:
        return None
    data = mem(args[where], 16)
    if data is None or len(data) < 16:
        return None
    seconds, nanos = struct.unpack("<qq", data)
    length = seconds + nanos / 1e9
    if relative or not flags & _TIMER_ABSTIME:
        return length
    if clock not in _CLOCKS:
        return None
    return max(0.0, length - time.clock_gettime(_CLOCKS[clock]))


def _prune(now: float) -> None:
    for task in [t for t, at in _polled.items() if now - at > 4 * WINDOW]:
        del _polled[task]
    for task in [t for t, (at, _) in _watched.items() if now - at > 2 * QUIET_FOR]:
        del _watched[task]


IDLE_SHARE = 0.03  # a foreground group that uses less of a CPU than this, second after second, is idle
IDLE_STEP = 1.0  # ...measured over steps this long


class Idle:
    """Since when the terminal's foreground group has used almost no CPU (under IDLE_SHARE over each IDLE_STEP since):
    what never-silent goes by where the kernel's word says busy but nothing is being done (pty/quiet.py)."""

    def __init__(self) -> None:
        self.since: float | None = None
        self._last: tuple[float, int] | None = None

    def seen(self, now: float, sample: Callable[[], int | None]) -> float | None:
        """How long the group has been idle; `sample` reads its CPU time so far (ns, reaped children's included; None:
        unknown), and is read only when a new step is due (the /proc reads stay off most of the read loop's screens)."""
        if self._last is not None and self.since is not None and now - self._last[0] < IDLE_STEP:
            return now - self.since
        used = sample()
        if used is None:
            self.since = self._last = None
            return None
        if self._last is None or self.since is None:
            self._last, self.since = (now, used), now
            return 0.0
        then, before = self._last
        if used < before:  # a member ended and took its time off the sum: measured afresh from here
            self._last = (now, used)
        elif now - then >= IDLE_STEP:
            if (used - before) / 1e9 / (now - then) > IDLE_SHARE:
                self.since = now
            self._last = (now, used)
        return now - self.since

