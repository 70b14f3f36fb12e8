"""Is an agent at work getting anywhere? Its own progress signs, read by the PTY loop for the pilot (ScreenFacts.still_for).

A stalled model stream and a long piece of real work look alike on a timer: the agent's spinner turns and its elapsed
timer counts in both. What differs is everything else: new output, its token counter, the CPU its child processes
(a build, the tests it runs) use. So the screen is compared with what moves by itself masked out (the profile's
`animation`: spinner glyphs, the timer, rotating phrases), and the agent's descendants' CPU time is read now and then;
the pilot gets how long ago either last moved, and takes the agent for stuck only after stuck_after of neither
(pty/quiet.py, pty/goingon.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

from cursorpilot.channels.pty import kernel, wakeups

CPU_EVERY = 1.0  # the descendants' CPU time is read this often at most
CPU_MOVED = 5  # clock ticks (5 ms each at 200 Hz, 50 ms at 100 Hz) of their CPU time that count as work done
MAX_DEPTH = 6  # how far down the agent's process tree is walked
MAX_PROCESSES = 256


def masked(text: str, animation: Sequence[re.Pattern[str]]) -> str:
    """The screen's text with what moves by itself blanked: what is left changes only when something happens."""
    for pattern in animation:
        text = pattern.sub("", text)
    return text


def cpu_ticks(pid: int, terminal: str | None = None) -> int | None:
    """The CPU time (clock ticks) the process's descendants have used, the ones that ended included (cutime, cstime);
    not its own, nor that of a descendant on `terminal` (an agent's TUI redraws its spinner on its own time, and Gemini
    CLI and Codex run theirs in a child of the program started): the tools it runs read pipes, or a terminal of their
    own. None: it is gone."""
    own = kernel._stat(pid)
    if len(own) < 15:
        return None
    total = int(own[13]) + int(own[14])
    seen, todo, depth = {pid}, _children(pid), 0
    while todo and depth < MAX_DEPTH and len(seen) < MAX_PROCESSES:
        nxt: list[int] = []
        for child in todo:
            if child in seen:
                continue
            seen.add(child)
            fields = kernel._stat(child)
            if len(fields) >= 15:
                total += sum(int(fields[i]) for i in ((13, 14) if _on(child, terminal) else (11, 12, 13, 14)))
                nxt += _children(child)
        todo, depth = nxt, depth + 1
    return total


def _on(pid: int, terminal: str | None) -> bool:
    """The process reads or writes the terminal (its stdin, stdout or stderr)."""
    if terminal is None:
        return False
    for fd in (0, 1, 2):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == terminal:
                return True
        except OSError:
            continue
    return False


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = wakeups.slurp(f"/proc/{pid}/task/{pid}/children")
    except OSError:
        return out
    for word in tasks.split():
        try:
            out.append(int(word))
        except ValueError:
            continue
    return out


class Progress:
    """When the agent last showed a progress sign: its screen (animation masked) changed, or its descendants used CPU."""

    def __init__(self, animation: Sequence[str], pid: int | None, now: float, terminal: str | None = None):
        self.animation = [re.compile(p, re.MULTILINE) for p in animation]
        self.pid, self.terminal = pid, terminal
        self.last = now  # the last progress sign
        self._digest: bytes | None = None
        self._cpu: int | None = None
        self._cpu_at = float("-inf")

    def seen(self, now: float, text: str) -> float:
        """The screen as it is now: how long since the last progress sign (0 when this is one)."""
        digest = hashlib.blake2b(masked(text, self.animation).encode(), digest_size=16).digest()
        if digest != self._digest:
            self._digest, self.last = digest, now
        if self.pid is not None and now - self._cpu_at >= CPU_EVERY:
            self._cpu_at = now
            cpu = cpu_ticks(self.pid, self.terminal)
            if cpu is not None and self._cpu is not None and cpu - self._cpu >= CPU_MOVED:
                self.last = now
            if cpu is not None and (self._cpu is None or cpu - self._cpu >= CPU_MOVED):
                self._cpu = cpu
        return now - self.last
