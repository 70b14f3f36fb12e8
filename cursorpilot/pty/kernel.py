"""Ask the kernel whether the program is waiting for input, instead of guessing from silence (Linux).

The terminal's foreground process group (tcgetpgrp on the master) holds whoever may read the terminal now. A
process of that group blocked in read() on the terminal waits for a line: its prompt is complete. Blocked in
poll/select/epoll, it may be waiting for a key (Node and Rust TUIs live there), or for anything else: the screen
rules decide. Anything else (running, sleeping, waiting for a child) is busy: not waiting on its terminal.
"""

from __future__ import annotations

import os
import platform

READING, POLLING, BUSY = "reading", "polling", "busy"

# syscall numbers as /proc/PID/syscall shows them
_TABLES = {
    "x86_64": {"read": {0, 17, 19, 295}, "poll": {7, 23, 232, 270, 271, 281, 441}},  # read pread readv preadv; poll select epoll_wait pselect6 ppoll epoll_pwait(2)
    "aarch64": {"read": {63, 65, 67, 69}, "poll": {22, 72, 73, 441}},  # read readv pread64 preadv; epoll_pwait pselect6 ppoll epoll_pwait2
}
_TABLE = _TABLES.get(platform.machine())


def slave_path(pid: int) -> str | None:
    """The terminal the program was started on (its stdin), to recognise reads from it."""
    try:
        return os.readlink(f"/proc/{pid}/fd/0")
    except OSError:
        return None


def foreground_group(master_fd: int) -> int | None:
    try:
        return os.tcgetpgrp(master_fd)
    except OSError:
        return None


def _group_members(pgid: int) -> list[int]:
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 3 and int(fields[2]) == pgid:
            members.append(int(name))
    return members


def _state(pid: int, slave: str | None) -> str | None:
    try:
        with open(f"/proc/{pid}/syscall", "rb") as fh:
            parts = fh.read().split()
    except OSError:
        return None
    if not parts or parts[0] == b"running" or not parts[0].lstrip(b"-").isdigit():
        return BUSY
    nr = int(parts[0])
    if _TABLE is not None and nr in _TABLE["read"] and len(parts) > 1:
        fd = int(parts[1], 16)
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            return None
        return READING if slave is None or target == slave else BUSY
    if _TABLE is not None and nr in _TABLE["poll"]:
        return POLLING
    return BUSY if _TABLE is not None else None


class TtyWatch:
    """reading | polling | busy for one terminal's foreground group (the most telling of its members), or None
    (unknown), asked often: the group's members are listed again only when the foreground group
    changes or MEMBERS_EVERY has passed (listing /proc costs milliseconds; reading a few syscall files, microseconds)."""

    MEMBERS_EVERY = 2.0

    def __init__(self, master_fd: int, slave: str | None):
        self.master_fd, self.slave = master_fd, slave
        self._pgid: int | None = None
        self._members: list[int] = []
        self._listed = -1e9

    def state(self, now: float) -> str | None:
        if _TABLE is None:
            return None
        pgid = foreground_group(self.master_fd)
        if pgid is None:
            return None
        if pgid != self._pgid or now - self._listed >= self.MEMBERS_EVERY:
            self._pgid, self._members, self._listed = pgid, _group_members(pgid), now
        states = {_state(pid, self.slave) for pid in self._members}
        for verdict in (READING, POLLING, None, BUSY):
            if verdict in states:
                return verdict
        return None
