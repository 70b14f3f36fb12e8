"""Leave nothing running: find every process a step's program started, and end it.

A program may start helpers that outlive it, and some detach on purpose (a new session,
a double fork; Codex leaves an ``app-server`` daemon). Parent links are lost then, but the
environment is inherited: each step's program gets ``CURSORPILOT_MARK=<token>`` and, when
the step ends, every process whose environment carries the token is sent SIGTERM, then
SIGKILL after a grace period. Nested pilots add their token to the list (``a:b``), so an
outer run still finds what an inner one left. Linux only (``/proc``); elsewhere it finds
nothing. A program that scrubs its helpers' environment escapes this; say so if you meet one.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARK = "CURSORPILOT_MARK"
PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class Reaped:
    pid: int
    command: str
    signal: str  # "SIGTERM" when that was enough, else "SIGKILL"

    def record(self) -> dict:
        return {"pid": self.pid, "command": self.command, "signal": self.signal}


def marked_env(env: dict[str, str], token: str) -> dict[str, str]:
    """env with token added to the mark (keeping an outer pilot's)."""
    outer = env.get(MARK)
    return {**env, MARK: f"{outer}:{token}" if outer else token}


def find(token: str) -> dict[int, str]:
    """pid -> command line of every live process (not this one) whose environment carries token."""
    found: dict[int, str] = {}
    if not PROC.is_dir():
        return found
    me = os.getpid()
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if not _carries(environ, token) or _zombie(entry):
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(entry.name)] = cmd
    return found


def _carries(environ: bytes, token: str) -> bool:
    for var in environ.split(b"\0"):
        if var.startswith(MARK.encode() + b"="):
            return token in var.decode(errors="replace").split("=", 1)[1].split(":")
    return False


def _zombie(entry: Path) -> bool:
    stat = (entry / "stat").read_text()
    return stat[stat.rindex(")") + 2 :].startswith("Z")


def end_all(token: str, grace: float = 2.0, poll: float = 0.02) -> list[Reaped]:
    """SIGTERM every marked process, SIGKILL those still alive after grace; what was ended, and how."""
    targets = find(token)
    for pid in targets:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    alive = dict(targets)
    while alive and time.monotonic() < deadline:
        time.sleep(poll)  # waiting on processes outside our control to exit, with a deadline
        still = find(token)
        alive = {pid: cmd for pid, cmd in alive.items() if pid in still}
    for pid in alive:
        _signal(pid, signal.SIGKILL)
    return [Reaped(pid, cmd, "SIGKILL" if pid in alive else "SIGTERM") for pid, cmd in targets.items()]


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
