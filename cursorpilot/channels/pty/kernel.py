"""Ask the kernel whether the program is waiting for input, instead of guessing from silence (Linux).

The terminal's foreground process group (tcgetpgrp on the master) holds whoever may read the terminal now. Any
thread of any member of that group blocked in read() on the session's terminal waits for input: its prompt is
complete. "The session's terminal" is every way to reach it: the pty's slave as stdin, `/dev/tty` (getpass, ssh,
sudo, gpg and fuzzy finders read their answer there, not from stdin), or any other fd that resolves to the slave.
A thread blocked in poll/select/epoll on a set that holds the terminal waits for a key (Node, Rust and Python TUIs,
readline); on a set without it, for something else (the network, a child, a timer): busy. One blocked with no timeout
on a set that is the terminal alone (readline's pselect, newt's, fdisk's poll) can wake for nothing but a key: a read by
another name, so it is reading too. So is an event loop's (Node's libuv, prompt_toolkit's asyncio) on the terminal and
the process's own wake-up fds, with a far-off timer, no child and its other threads idle (wakeups.py): nothing outside
the program but a key can wake it before its timer. A thread that waits for its POSIX timers' signal (Vim's) is idle
while the kernel's list of pending timers, which root may read, shows none due soon. A thread asleep in a process that
holds the terminal non-blocking checks it between sleeps: polling. Anything else (running, sleeping, waiting for a
child or a lock) is busy.

This is the fact that tells working from waiting (pty/pilot.py): a quiet screen of a program that waits on its
terminal is judged within seconds; one that is busy is left to work, up to stuck_after and the run's limits. Where
the kernel can't tell (another OS, /proc unreadable), the answer is None and silence is all there is to go by.
"""

from __future__ import annotations

import fcntl
import math
import os
import platform
import struct

from cursorpilot.channels import reaper
from cursorpilot.channels.pty import naps, relays, wakeups
from cursorpilot.channels.pty.members import Process as _Process
from cursorpilot.channels.pty.members import tasks as _tasks

READING, POLLING, BUSY = "reading", "polling", "busy"

# syscall numbers as /proc/PID/syscall shows them
_TABLES = {
    "x86_64": {
        "read": {0, 17, 19, 295},  # read pread64 readv preadv
        "select": {23, 270},  # select pselect6: (nfds, readfds, ...)
        "poll": {7, 271},  # poll ppoll: (fds, nfds, ...)
        "epoll": {232, 281, 441},  # epoll_wait epoll_pwait epoll_pwait2: (epfd, ...)
    },
    "aarch64": {"read": {63, 65, 67, 69}, "select": {72}, "poll": {73}, "epoll": {22, 441}},
}
_SLEEPS = {"x86_64": {35, 230}, "aarch64": {101, 115}}.get(platform.machine(), set())  # nanosleep, clock_nanosleep
_NANOSLEEP = {"x86_64": 35, "aarch64": 101}.get(platform.machine(), -1)
_TABLE = _TABLES.get(platform.machine())


_TIOCGPTN = 0x80045430  # Linux: the number of the pty a master belongs to


def slave_path(master_fd: int) -> str | None:
    """The session's terminal (/dev/pts/N), asked of the master: the child's fd 0 may not be it yet when the parent
    looks (between fork and exec it is still the parent's stdin), and reads from it would all look 'busy'."""
    try:
        number = struct.unpack("I", fcntl.ioctl(master_fd, _TIOCGPTN, b"\0\0\0\0"))[0]
    except OSError:
        return None
    return f"/dev/pts/{number}"


def foreground_group(master_fd: int) -> int | None:
    try:
        return os.tcgetpgrp(master_fd)
    except OSError:
        return None


def _stat(pid: int | str) -> list[bytes]:
    """/proc/PID/stat's fields after the command's name (state, ppid, pgrp, ...); none when the process is gone."""
    return _fields(f"/proc/{pid}/stat")


def _fields(path: str) -> list[bytes]:
    """A stat file's fields after the command's name (which may hold anything, a ")" too); none when it is gone."""
    try:
        with open(path, "rb") as fh:
            stat = fh.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def _group_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[2]) if len(fields) > 3 else None


def _alive(pid: int) -> bool:
    """Not ended: neither gone nor a zombie its parent has not reaped yet (its syscall file can't be read either)."""
    fields = _stat(pid)
    return bool(fields) and fields[0] not in (b"Z", b"X")


def _stopped(pid: int) -> bool:
    """Stopped by a signal (T) or by its tracer (t): it does nothing until it is continued."""
    return _stat(pid)[:1] in ([b"T"], [b"t"])


def _group_members(pgid: int) -> list[int]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [int(name) for name in entries if name.isdigit() and _group_of(int(name)) == pgid]


def _only_keys_wake(proc: _Process, task: str, nr: int, args: list[int], fds: list[int], slave: str | None) -> bool:
    """An event loop's wait that nothing outside the program but a key can end before its next timer, which is far
    off: beside the terminal it watches only its own wake-up fds (wakeups.py), it has no child whose exit would wake
    it, and each of its other threads is idle. Node (libuv) and prompt_toolkit (asyncio) wait so at every prompt."""
    wait = wakeups.timeout(nr, args, proc.mem)
    if wait is None or wait < wakeups.LONG_WAIT:
        return False
    for fd in fds:
        target = proc.target(fd)
        if target is None or not (proc.is_tty(fd, slave) or proc.own.wakes_itself(target)):
            return False
    proc.tasks = _tasks(proc.pid)  # a thread started since the process was listed (libuv's pool, on first use) counts
    if proc.children():
        return False
    return all(other == task or _idle(proc, other, slave) for other in proc.tasks)


def _idle(proc: _Process, task: str, slave: str | None) -> bool:
    """A thread that can't wake by itself or by the world: in a futex wait with no timeout (a pool's idle worker), in a
    poll/select/epoll with no timeout on the process's own wake-up fds (libuv's second loop), or waiting for the
    signal of its process's POSIX timers while none fires before LONG_WAIT (Vim's timer thread). Running, sleeping,
    a read, a futex with a timeout: it may do something soon."""
    try:
        parts = wakeups.slurp(f"{task}/syscall").split()
        nr, args = int(parts[0]), [int(p, 16) for p in parts[1:7]]
    except OSError:
        return True  # it has ended
    except (ValueError, IndexError):
        return False  # running
    if wakeups.waits_on_a_lock(nr, args):
        return True
    timers = wakeups.timer_signal_wait(nr, args, proc.pid, proc.mem)
    if timers is not None:
        return timers >= wakeups.LONG_WAIT
    assert _TABLE is not None
    kind = next((k for k in ("select", "poll", "epoll") if nr in _TABLE[k]), None)
    fds = proc.watched_fds(kind, args) if kind else None
    if fds is None or wakeups.timeout(nr, args, proc.mem) != math.inf:
        return False
    targets = [(fd, proc.target(fd)) for fd in fds]
    return all(t is not None and (proc.is_tty(fd, slave) or proc.own.wakes_itself(t)) for fd, t in targets)


_GONE = "gone"  # a thread that has ended since its process was listed


def _task_state(proc: _Process, task: str, slave: str | None) -> str | None:
    try:
        raw = wakeups.slurp(f"{task}/syscall")
    except OSError:
        return _GONE
    parts = raw.split()
    if not parts or parts[0] == b"running" or not parts[0].lstrip(b"-").isdigit():
        return BUSY
    assert _TABLE is not None
    nr = int(parts[0])
    try:
        args = [int(p, 16) for p in parts[1:7]]
    except ValueError:
        return None
    if nr in _TABLE["read"] and args:
        hit = proc.is_tty(args[0], slave)
        return None if hit is None else READING if hit else BUSY
    for kind in ("select", "poll", "epoll"):
        if nr in _TABLE[kind]:
            slices = wakeups.runs(task)  # before anything else is read: a wake after this shows as a new count
            if slices and proc.settled == (task, raw, slices):
                return READING  # not run since its wait was found to end on nothing but a key: nobody else ran either
            fds = proc.watched_fds(kind, args)
            if fds is None:
                return POLLING  # the set can't be read: it may hold the terminal
            ttys = [proc.is_tty(fd, slave) for fd in fds]
            if not any(ttys):
                return BUSY
            if kind == "select" and proc.selects_writes(args):
                return POLLING
            if all(ttys) and wakeups.timeout(nr, args, proc.mem) == math.inf:
                return READING  # nothing but a key can wake it: it waits on its terminal as a blocked read does
            if not _only_keys_wake(proc, task, nr, args, fds, slave):
                naps.polled(task)  # a poll of its terminal: the naps around it are pauses of a loop that waits for a key
                return POLLING
            proc.settled = (task, raw, slices)
            return READING
    if nr in _SLEEPS and proc.checks_tty_between_sleeps(slave):
        return POLLING
    if nr in _SLEEPS and not proc.children() and naps.idle_napper(nr, args, proc.mem, _NANOSLEEP, proc.pid, proc.cpu,
                                                                  lambda: proc.epolls_tty(slave)):
        return POLLING  # asleep between polls of its terminal that never block (crossterm's poll(ZERO)), and idle
    if nr in _SLEEPS and not proc.children() and naps.between_polls(task, nr, args, proc.mem, lambda: _polls_tty(proc, task, slave), _NANOSLEEP):
        return POLLING  # asleep between short polls of its terminal (crossterm's poll(1ms), then 30 ms of sleep): waiting
    return BUSY


def _polls_tty(proc: _Process, task: str, slave: str | None) -> bool:
    """The thread is in a poll/select/epoll now, on a set that holds the terminal."""
    try:
        parts = wakeups.slurp(f"{task}/syscall").split()
        nr, args = int(parts[0]), [int(p, 16) for p in parts[1:7]]
    except (OSError, ValueError, IndexError):
        return False
    assert _TABLE is not None
    kind = next((k for k in ("select", "poll", "epoll") if nr in _TABLE[k]), None)
    fds = proc.watched_fds(kind, args) if kind else None
    return bool(fds) and any(proc.is_tty(fd, slave) for fd in fds or ())


class TtyWatch:
    """reading | polling | busy for one terminal's foreground group (the most telling of its members' threads), or
    None (unknown), asked often: the group's members and their threads are listed again when the foreground group
    changes, when MEMBERS_EVERY has passed, or (at most every RELIST_BUSY) when all look busy; their threads and their
    children in the group, whenever all look busy: a thread or a process started a moment ago may be the one that
    reads. Listing /proc costs milliseconds; reading a few syscall and children files, microseconds."""

    MEMBERS_EVERY = 2.0
    RELIST_BUSY = 0.25
    MARKED_EVERY = 1.0  # how often, while the group looks busy, the program's other processes are listed
    MARKED_FIRST = 0.1  # ...and how soon again after a listing that found none (doubling up to MARKED_EVERY): a
    # helper the program starts (tmux's server, pinentry) comes a moment after the program itself

    def __init__(self, master_fd: int, slave: str | None, mark: str | None = None):
        self.master_fd, self.slave, self.mark = master_fd, slave, mark
        self._pgid: int | None = None
        self._members: list[_Process] = []
        self._listed = -1e9
        self._others: list[_Process] = []  # processes the program started outside the group (pinentry under gpg-agent)
        self._others_at = -1e9
        self._others_gap = self.MARKED_FIRST / 2  # doubled at each listing that finds none: 0.1 s after the first
        self._panes: dict[int, list[str]] = {}  # each relay that holds this terminal: its own terminals (relays.py)
        self._pane_procs: dict[int, _Process] = {}  # the processes seen in its panes

    def state(self, now: float) -> str | None:
        if _TABLE is None:
            return None
        pgid = self._group(now)
        if pgid is None:
            return None
        verdict = self._verdict()
        if verdict in (BUSY, _GONE):  # a thread started a moment ago may be the one that reads (one listdir a member)
            for proc in self._members:
                proc.tasks = _tasks(proc.pid)
            # a member that has ended is no word at all: a script's `sleep` gone, its next command not listed yet, made
            # the group "unknown" until the next listing, and a script's still screen was judged as a question then
            self._drop_ended()
            verdict = self._verdict()
        if verdict in (BUSY, _GONE) and self._adopt_children(pgid):  # ...or a process: a script's next command
            verdict = self._verdict()
        if verdict == _GONE:  # one ended in the meantime (between the two looks above): once more, without it
            self._drop_ended()
            self._adopt_children(pgid)
            verdict = self._verdict()
        if verdict in (BUSY, _GONE) and now - self._listed >= self.RELIST_BUSY:
            self._list(pgid, now)
            verdict = self._verdict()
        if verdict in (BUSY, _GONE) and self.mark:  # a helper outside the group may read the terminal by its path
            verdict = self._others_verdict(now) or verdict
        return None if verdict == _GONE else verdict

    def working(self, now: float) -> bool:
        """Some thread of the foreground group is on a CPU, or waiting for one, now (`R` in its stat): the program is at
        work, whatever else of it waits on the terminal (fzf filters a long list in its matcher threads after it has
        drawn the query, while another thread reads keys: the word for the group is then `reading`)."""
        if _TABLE is None or self._group(now) is None:
            return False
        for proc in self._members:
            proc.tasks = _tasks(proc.pid)  # threads come and go (Go starts them as its work needs)
            if any(_fields(f"{task}/stat")[:1] == [b"R"] for task in proc.tasks):
                return True
        return False

    def stopped(self, now: float, program: int, tty: str | None) -> str | None:
        """What holds the program up stopped by a signal (`T` or `t` in its stat), said for a person, or None: the
        program itself, every member of the foreground group, or, while the group is busy, a child of one of them
        outside it (one that reads the terminal from the background gets SIGTTIN, and its parent waits on it). A
        stopped program never runs again by itself, and its screen never says so."""
        pid = program if _stopped(program) else None
        if pid is None and _TABLE is not None and self._group(now) is not None:
            members = [proc for proc in self._members if _alive(proc.pid)]
            if members and all(_stopped(proc.pid) for proc in members):
                pid = members[0].pid
            elif tty == BUSY:
                group = {proc.pid for proc in members}
                pid = next((child for proc in members for child in proc.children() if child not in group and _stopped(child)), None)
        if pid is None:
            return None
        try:
            name = wakeups.slurp(f"/proc/{pid}/comm").decode(errors="replace").strip()
        except OSError:
            name = "?"
        return f"pid {pid}, {name}"

    def cpu(self, now: float) -> int | None:
        """The CPU time (ns) the foreground group's members have used so far, their ended children's included."""
        if _TABLE is None or self._group(now) is None:
            return None
        total = 0
        for proc in self._members:
            proc.tasks = _tasks(proc.pid)
            total += proc.cpu(reaped=True) or 0  # one gone: its time leaves the sum (naps.Idle measures afresh)
        return total

    def _group(self, now: float) -> int | None:
        """The terminal's foreground group, its members listed again when it changed or MEMBERS_EVERY has passed."""
        pgid = foreground_group(self.master_fd)
        if pgid is not None and (pgid != self._pgid or now - self._listed >= self.MEMBERS_EVERY):
            self._list(pgid, now)
        return pgid

    def _others_verdict(self, now: float) -> str | None:
        """reading | polling when a process the program started, outside the foreground group, waits on the terminal:
        gpg's pinentry-curses runs under gpg-agent, in a session of its own, and reads the terminal GPG_TTY names
        while gpg itself waits on the agent's socket; a program in a tmux pane reads the pane's terminal, relayed to
        this one by tmux's server (relays.py). Found by the run's mark in their environment (channels/reaper.py)."""
        if now - self._others_at >= self._others_gap:
            group = {p.pid for p in self._members}
            self._others = [_Process(pid) for pid in reaper.find(self.mark or "") if pid not in group]
            self._panes, self._pane_procs = relays.panes(self._others, self.slave), {}  # a multiplexer's (tmux's) panes
            self._others_at = now
            # none found: again soon (0.1 s, then 0.2, 0.4...), a helper comes a moment after the program; found: every 1 s
            self._others_gap = self.MARKED_EVERY if self._others else min(self._others_gap * 2, self.MARKED_EVERY)
        states = set()
        for proc in self._others:
            proc.forget_fds()
            for task in [] if _stopped(proc.pid) else proc.tasks:  # stopped in its read, it reads nothing (`stopped`)
                states.add(_task_state(proc, task, self.slave))
        return READING if READING in states or self._pane_reads() else POLLING if POLLING in states else None

    def _pane_reads(self) -> bool:
        """A relay's pane program waits for a key (relays.py), found among the relay's children at every look."""
        def reads(proc: _Process, pane: str) -> bool:
            proc.forget_fds()
            return any(_task_state(proc, task, pane) == READING for task in proc.tasks)

        def process(pid: int) -> _Process:
            return self._pane_procs.get(pid) or self._pane_procs.setdefault(pid, _Process(pid))

        return relays.reads_in_a_pane([p for p in self._others if p.pid in self._panes], self._panes, process, reads)

    def _drop_ended(self) -> None:
        self._members = [proc for proc in self._members if _alive(proc.pid)]

    def _adopt_children(self, pgid: int) -> bool:
        """Add the members' children (and theirs) in the group that were not there when it was listed: a script (no
        job control) runs its commands in the script's group, and its next dialog is the process that reads. Found through
        each thread's `children` file (a few reads) at once, not when the next listing of /proc comes round (up to
        RELIST_BUSY later: whiptail's next box waited that long after each answer)."""
        known = {p.pid for p in self._members}
        todo, added = list(self._members), False
        while todo:
            proc = todo.pop()
            for pid in proc.children():
                if pid not in known and _group_of(pid) == pgid:
                    known.add(pid)
                    child = _Process(pid)
                    self._members.append(child)
                    todo.append(child)
                    added = True
        return added

    def _list(self, pgid: int, now: float) -> None:
        self._pgid, self._members, self._listed = pgid, [_Process(pid) for pid in _group_members(pgid)], now

    def _verdict(self) -> str | None:
        states: set[str | None] = set()
        for proc in self._members:
            proc.forget_fds()  # an fd number may name something else now
            if _stopped(proc.pid):  # stopped in its read or poll, it waits for no key: it waits to be continued
                states.add(BUSY)
                continue
            for task in proc.tasks:
                state = _task_state(proc, task, self.slave)
                if state == READING:
                    return READING
                states.add(state)
        for verdict in (POLLING, _GONE, None, BUSY):
            if verdict in states:
                return verdict
        return None
