"""A program that asks through a relay: a terminal multiplexer between the pilot's terminal and the program (Linux).

tmux's client, the pilot's foreground process, waits on its server's socket; the server holds the pilot's terminal and
the master side of a pseudo-terminal of its own for each pane, and the program in the pane reads that pane's terminal.
Neither tmux process reads the pilot's terminal in a way that says "a question is complete" (the server polls it among
its sockets and panes), so the kernel's word was polling at best and a pane's prompt waited out the full settle. The
fact is one step further: a process of the run (found by its mark, as kernel.py finds pinentry) that holds the pilot's
terminal and the master of a pane (`/dev/ptmx`, whose fdinfo names the pane's number), and a process of the run blocked
reading that pane. Then the pane's program waits for a key, and the key the pilot types is relayed to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

_MASTERS = ("/dev/ptmx", "/dev/pts/ptmx")


class _Proc(Protocol):
    pid: int

    def target(self, fd: int) -> str | None: ...

    def children(self) -> list[int]: ...


P = TypeVar("P", bound=_Proc)


def panes(procs: Iterable[_Proc], slave: str | None) -> dict[int, list[str]]:
    """Each relay among procs, by pid: a process that holds the pilot's terminal (`slave`) and the master of one
    terminal of its own (/dev/pts/M): a tmux with one pane, the one on screen."""
    out: dict[int, list[str]] = {}
    if slave is None:
        return out
    for proc in procs:
        try:
            fds = [int(name) for name in os.listdir(f"/proc/{proc.pid}/fd")]
        except OSError:
            continue
        targets = {fd: proc.target(fd) for fd in fds}
        if slave not in targets.values():
            continue
        mine = [f"/dev/pts/{index}" for fd, target in targets.items()
                if target in _MASTERS and (index := _tty_index(proc.pid, fd)) is not None]
        if len(mine) == 1:  # one pane: the one on screen. With more, an idle shell in another window is not this
            out[proc.pid] = mine  # screen's reader, and which pane is shown is tmux's to know: polling, as before
    return out


def reads_in_a_pane(relays: list[P], panes: dict[int, list[str]], process: Callable[[int], P],
                    reads: Callable[[P, str], bool]) -> bool:
    """Does a relay's child (a pane's shell), or theirs, read one of that relay's panes? Found through the `children`
    files at every look, not at the next listing of the run's processes: a pane starts a moment after its server."""
    todo, seen = [(relay, panes[relay.pid]) for relay in relays], {relay.pid for relay in relays}
    while todo:
        proc, mine = todo.pop()
        for pid in proc.children():
            if pid in seen:
                continue
            seen.add(pid)
            child = process(pid)
            if any(reads(child, pane) for pane in mine):
                return True
            todo.append((child, mine))
    return False


def _tty_index(pid: int, fd: int) -> int | None:
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as fh:
            for line in fh.read().splitlines():
                if line.startswith(b"tty-index:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
