"""What a blocked thread's wait can end on, read from /proc (Linux): its timeout, and whether an fd it watches beside
the terminal is the process's own wake-up fd.

An event loop (Node's libuv, Python's asyncio under prompt_toolkit) never waits on its terminal alone: its poll set
also holds the fds its own threads and signal handlers write to so as to wake it (an eventfd, a pipe or a socketpair
whose other end the same process holds, a signalfd), and it wakes at its next timer. Such a wait still ends on
nothing from outside the program but a key when those are the only other fds, its timer is far off (LONG_WAIT), its
other threads are idle and it has no child (kernel.py checks those two): a read by another name. A pipe whose write
end another process holds (a child's output), a socket to anyone else, a timerfd or an inotify fd is the world's: it
may wake the loop to draw.

The fd's answers are cached per object (its readlink target: `pipe:[N]`, `socket:[N]`, `anon_inode:[eventfd]`) for
the life of an OwnFds, which kernel.py keeps as long as it keeps the process listed (a few seconds): the loop asks
every 30 ms while a look is pending, and listing a process's fds costs a readlink each.
"""

from __future__ import annotations

import math
import os
import platform
import socket
import struct
from collections.abc import Callable

LONG_WAIT = 0.45  # s: a timer this far off is no animation's (cli-spinners' slowest frame is 400 ms, most 80-130 ms);
# prompt_toolkit's terminal-size poll (every 0.5 s) shows 484-500 ms as asyncio schedules it

# where a poll/select/epoll call holds its timeout: argument and form (int milliseconds, or a pointer to a timespec or
# a timeval; a NULL pointer or a negative int is no timeout)
_TIMEOUTS = {
    "x86_64": {23: (4, "timeval"), 270: (4, "timespec"), 7: (2, "ms"), 271: (2, "timespec"), 232: (3, "ms"),
               281: (3, "ms"), 441: (3, "timespec")},
    "aarch64": {72: (4, "timespec"), 73: (2, "timespec"), 22: (3, "ms"), 441: (3, "timespec")},
}.get(platform.machine(), {})
_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine(), -1)
_FUTEX_WAITV = 449  # (waiters, count, flags, timeout, clock) on both
_FUTEX_WAITS = {0, 9, 11}  # FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI: (uaddr, op, val, timeout, ...)
_FUTEX_CMD, _FUTEX_PRIVATE = 0x7F, 0x80  # the op without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME (256); the flag
_SIGWAIT = {"x86_64": 128, "aarch64": 137}.get(platform.machine(), -1)  # rt_sigtimedwait: (set, info, timeout, size)
_HRTIMER_CLOCKS = {0, 1, 7, 11}  # CLOCK_REALTIME, MONOTONIC, BOOTTIME, TAI: a POSIX timer on these is an hrtimer

Mem = Callable[[int, int], "bytes | None"]


def timeout(nr: int, args: list[int], mem: Mem) -> float | None:
    """The timeout, in seconds, a poll/select/epoll call was made with: math.inf for none, None where it can't be
    read. The call's own argument, not what is left of it: a thread that waits 7 s for a timer had 7 s to go when it
    went to sleep."""
    where = _TIMEOUTS.get(nr)
    if where is None or len(args) <= where[0]:
        return None
    value, form = args[where[0]], where[1]
    if form == "ms":
        ms = value & 0xFFFFFFFF
        return math.inf if ms & 0x80000000 else ms / 1000  # an int: -1 shows as 0xffffffff (or 64 bits of ones)
    if value == 0:
        return math.inf
    data = mem(value, 16)
    if data is None or len(data) < 16:
        return None
    seconds, fraction = struct.unpack("<qq", data)
    return seconds + fraction / (1e6 if form == "timeval" else 1e9)


def slurp(path: str) -> bytes:
    """A small /proc file, read with the fewest calls (several a thread, every 30 ms while a look is pending)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def runs(task: str) -> bytes:
    """How many times the thread has been run (schedstat's third field; empty where the kernel does not count)."""
    try:
        return slurp(f"{task}/schedstat").split()[2]
    except (OSError, IndexError):
        return b""


def waits_on_a_lock(nr: int, args: list[int]) -> bool:
    """A futex wait on a private futex with no timeout: a thread pool's worker with no work, which only the program
    itself can wake (a shared futex may be another process's to wake)."""
    if nr == _FUTEX and len(args) > 3:
        return args[1] & _FUTEX_CMD in _FUTEX_WAITS and bool(args[1] & _FUTEX_PRIVATE) and args[3] == 0
    return nr == _FUTEX_WAITV and len(args) > 3 and args[3] == 0  # (its waiters' private flags are not looked at)


def timer_signal_wait(nr: int, args: list[int], pid: int, mem: Mem) -> float | None:
    """For a thread in sigwaitinfo() with no timeout for signals that only its process's own POSIX timers send (glibc's
    helper thread for SIGEV_THREAD timers: Vim's), how soon it may wake: when the soonest POSIX timer armed on the
    whole machine fires, in seconds (math.inf: none is armed). None for any other wait, or where the kernel's list of
    pending timers can't be read (/proc/timer_list: only root may) or a timer is on a clock that list leaves out."""
    if nr != _SIGWAIT or len(args) < 4 or args[2] != 0 or args[3] != 8:
        return None
    data = mem(args[0], 8)
    if data is None or len(data) < 8:
        return None
    waited = {bit + 1 for bit in range(64) if int.from_bytes(data, "little") >> bit & 1}
    try:
        listed = slurp(f"/proc/{pid}/timers").decode("ascii", "replace")
        with open("/proc/timer_list", "rb") as fh:
            pending = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    signals = set()  # each of its timers: "ID: 0", "signal: 32/<value>", "notify: signal/tid.N", "ClockID: 1"
    fields = [line.split(": ", 1) for line in listed.splitlines() if ": " in line]
    try:
        for key, value in fields:
            if key == "signal":
                signals.add(int(value.split("/")[0]))
            elif key == "ClockID" and int(value) not in _HRTIMER_CLOCKS:
                return None  # a CPU-time or alarm clock's timer: not in that list
    except ValueError:
        return None
    if not waited or not waited <= signals:
        return None
    soonest = math.inf  # each armed POSIX timer: " #3: <...>, posix_timer_fn, S:01" then " # expires at A-B nsecs [in X to Y nsecs]"
    for entry in pending.split("posix_timer_fn")[1:]:
        try:
            soonest = min(soonest, int(entry.split("[in ", 1)[1].split()[0]) / 1e9)
        except (IndexError, ValueError):
            return None
    return soonest


def _socket_peer(inode: int) -> int | None:
    """The inode of a unix socket's peer (NETLINK_SOCK_DIAG, UDIAG_SHOW_PEER: what `ss -x` shows), or None: not a
    unix socket, not connected, or no sock_diag here. The two ends of a socketpair have inodes of their own, and
    /proc/net/unix does not pair them."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4)  # NETLINK_SOCK_DIAG
    except OSError:
        return None
    try:
        # unix_diag_req: family, protocol, pad, states, ino, show (UDIAG_SHOW_PEER), cookie (none: 2 x ~0)
        req = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, inode, 4, 0xFFFFFFFF, 0xFFFFFFFF)
        sock.settimeout(0.05)
        sock.sendto(struct.pack("=IHHII", 16 + len(req), 20, 1, 1, 0) + req, (0, 0))  # SOCK_DIAG_BY_FAMILY, REQUEST
        data = sock.recv(8192)
    except OSError:
        return None
    finally:
        sock.close()
    if len(data) < 32 or struct.unpack_from("=H", data, 4)[0] != 20:  # an NLMSG_ERROR: no such unix socket
        return None
    end, at = min(len(data), struct.unpack_from("=I", data)[0]), 32  # nlmsghdr (16) + unix_diag_msg (16)
    while at + 8 <= end:
        size, kind = struct.unpack_from("=HH", data, at)
        if kind == 2:  # UNIX_DIAG_PEER
            return struct.unpack_from("=I", data, at + 4)[0] or None
        if size < 4:
            break
        at += (size + 3) & ~3
    return None


class OwnFds:
    """Which of one process's fds are its own wake-up fds: an eventfd or a signalfd, a pipe whose write end it holds,
    a unix socket whose peer it holds. Its fds are listed when first asked and again when a watched fd is not among
    them; each object is judged once."""

    def __init__(self, pid: int):
        self.pid = pid
        self._held: dict[str, set[int]] | None = None  # readlink target -> access modes (O_RDONLY 0, O_WRONLY 1, O_RDWR 2)
        self._judged: dict[str, bool] = {}

    def wakes_itself(self, target: str) -> bool:
        if target not in self._judged:
            self._judged[target] = self._judge(target)
        return self._judged[target]

    def _judge(self, target: str) -> bool:
        if target in ("anon_inode:[eventfd]", "anon_inode:[signalfd]"):
            return True
        if not target.startswith(("pipe:[", "socket:[")):
            return False
        held = self._list(target)
        if target.startswith("pipe:["):
            return bool(held.get(target, set()) & {1, 2})  # a write end of the same pipe: its own
        try:
            peer = _socket_peer(int(target[len("socket:[") : -1]))
        except ValueError:
            return False
        return peer is not None and f"socket:[{peer}]" in held

    def _list(self, target: str) -> dict[str, set[int]]:
        if self._held is None or target not in self._held:
            self._held = {}
            try:
                fds = os.listdir(f"/proc/{self.pid}/fd")
            except OSError:
                return self._held
            for fd in fds:
                try:
                    held = os.readlink(f"/proc/{self.pid}/fd/{fd}")
                    mode = self._mode(fd) if held.startswith("pipe:[") else 0
                except OSError:
                    continue
                self._held.setdefault(held, set()).add(mode)
        return self._held

    def _mode(self, fd: str) -> int:
        with open(f"/proc/{self.pid}/fdinfo/{fd}", "rb") as fh:
            for line in fh.read().splitlines():
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & 3
        return 0
