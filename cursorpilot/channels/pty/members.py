"""One member of the terminal's foreground group, as pty/kernel.py reads it: its threads, which of its fds are the
terminal, what a thread's poll/select/epoll waits on (read from /proc/PID/mem and fdinfo), its children. Linux /proc.
"""

from __future__ import annotations

import os

from cursorpilot.channels.pty import wakeups

_CTTY = "/dev/tty"  # the controlling terminal: for the foreground group, this pty
_O_NONBLOCK = 0o4000
_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[bytes]:
    """/proc/PID/stat's fields after the command's name (which may hold anything, a ")" too); none when it is gone."""
    try:
        stat = wakeups.slurp(f"/proc/{pid}/stat")
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def tasks(pid: int) -> list[str]:
    """Every thread of a process, as /proc paths: the reader of the terminal need not be the main thread."""
    try:
        return [f"/proc/{pid}/task/{tid}" for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [f"/proc/{pid}"]


class Process:
    """One member of the foreground group: which of its fds are the terminal (cached per fd number)."""

    __slots__ = ("pid", "tasks", "own", "settled", "_fds")

    def __init__(self, pid: int):
        self.pid = pid
        self.tasks = tasks(pid)
        self.own = wakeups.OwnFds(pid)
        self.settled: tuple[str, bytes, bytes] | None = None  # (thread, its syscall line, its schedstat): only a key wakes it
        self._fds: dict[int, str | None] = {}

    def target(self, fd: int) -> str | None:
        """What the fd is (its /proc link: /dev/pts/3, pipe:[N], anon_inode:[eventfd]), or None: closed meanwhile."""
        if fd not in self._fds:
            try:
                self._fds[fd] = os.readlink(f"/proc/{self.pid}/fd/{fd}")
            except OSError:
                return None  # ask again next time
        return self._fds[fd]

    def is_tty(self, fd: int, slave: str | None) -> bool | None:
        target = self.target(fd)
        if target is None:
            return None
        return target == _CTTY or (slave is not None and target == slave) or (slave is None and target.startswith("/dev/pts/"))

    def children(self) -> list[int]:
        """Its children, as the kernel lists them per thread (empty where /proc does not say)."""
        out: list[int] = []
        for task in self.tasks:
            try:
                out += [int(pid) for pid in wakeups.slurp(f"{task}/children").split()]
            except (OSError, ValueError):
                continue
        return out

    def forget_fds(self) -> None:
        self._fds.clear()

    def checks_tty_between_sleeps(self, slave: str | None) -> bool:
        """It holds the terminal open non-blocking: a sleep then a read that returns at once, in a loop, is how a
        program waits for a key without any syscall saying so (`sleep 10` in a script holds it blocking: busy)."""
        try:
            fds = [int(name) for name in os.listdir(f"/proc/{self.pid}/fd")]
        except OSError:
            return False
        for fd in fds:
            if not self.is_tty(fd, slave):
                continue
            try:
                with open(f"/proc/{self.pid}/fdinfo/{fd}", "rb") as fh:
                    flags = next((line.split()[1] for line in fh.read().splitlines() if line.startswith(b"flags:")), b"0")
            except (OSError, IndexError):
                continue
            if int(flags, 8) & _O_NONBLOCK:
                return True
        return False

    def epolls_tty(self, slave: str | None) -> bool:
        """It holds an epoll set that watches the terminal (its fdinfo's `tfd:` lines): a loop that polls it with a
        timeout of 0 (crossterm's `poll(Duration::ZERO)`) never shows the poll in its syscall file, only the naps
        between."""
        try:
            fds = [int(name) for name in os.listdir(f"/proc/{self.pid}/fd")]
        except OSError:
            return False
        for fd in fds:
            if self.target(fd) == "anon_inode:[eventpoll]":
                watched = self.watched_fds("epoll", [fd])
                if watched and any(self.is_tty(w, slave) for w in watched):
                    return True
        return False

    def cpu(self, reaped: bool = False) -> int | None:
        """Nanoseconds its threads have been on a CPU (schedstat's first field, summed), and with `reaped` its ended
        children's (cutime, cstime: a script's short commands); None where unreadable."""
        total = 0
        if reaped:
            stat = _stat_fields(self.pid)
            if len(stat) < 15:
                return None
            total = (int(stat[13]) + int(stat[14])) * 1_000_000_000 // _TICKS
        for task in self.tasks:
            try:
                total += int(wakeups.slurp(f"{task}/schedstat").split()[0])
            except OSError:
                continue  # it has ended
            except (ValueError, IndexError):
                return None
        return total

    def mem(self, address: int, size: int) -> bytes | None:
        if not address or size <= 0 or size > 1 << 16:
            return None
        try:
            with open(f"/proc/{self.pid}/mem", "rb", buffering=0) as fh:
                fh.seek(address)
                return fh.read(size)
        except (OSError, OverflowError, ValueError):
            return None

    def selects_writes(self, args: list[int]) -> bool:
        """A select that also waits for an fd to take output (or whose write set can't be read): not a key alone."""
        nfds, address = args[0], args[2] if len(args) > 2 else 0
        if not address:
            return False
        data = self.mem(address, (nfds + 7) // 8) if 0 < nfds <= 4096 else None
        return data is None or any(data)

    def watched_fds(self, kind: str, args: list[int]) -> list[int] | None:
        """The fds a thread in poll/select/epoll waits on to read, or None where they can't be read."""
        if kind == "select" and len(args) >= 2:
            nfds, address = args[0], args[1]
            data = self.mem(address, (nfds + 7) // 8) if 0 < nfds <= 4096 else None
            if data is None:
                return None
            return [i for i in range(nfds) if data[i // 8] >> (i % 8) & 1]
        if kind == "poll" and len(args) >= 2:
            address, nfds = args[0], args[1]
            data = self.mem(address, nfds * 8) if 0 < nfds <= 4096 else None
            if data is None:
                return None
            out = []
            for i in range(nfds):
                fd = int.from_bytes(data[i * 8 : i * 8 + 4], "little", signed=True)
                events = int.from_bytes(data[i * 8 + 4 : i * 8 + 6], "little")
                if fd >= 0 and events & 0x3:  # POLLIN | POLLPRI
                    out.append(fd)
            return out
        if kind == "epoll" and args:
            try:
                with open(f"/proc/{self.pid}/fdinfo/{args[0]}", "rb") as fh:
                    info = fh.read().decode("ascii", "replace")
            except OSError:
                return None
            return [int(line.split()[1]) for line in info.splitlines() if line.startswith("tfd:") and len(line.split()) > 1]
        return None
