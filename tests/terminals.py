"""A program on a terminal of its own, as a person would run it in a second window: its screen read as it draws, keys
typed into it. For tests that drive cursor-pilot and `cursor-pilot watch` side by side (the real PTY, the real screen)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from cursorpilot.channels.pty.driver import PtyDriver
from cursorpilot.channels.pty.screen import TerminalScreen


class Term:
    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], cols: int = 120, rows: int = 40):
        self.driver = PtyDriver([sys.executable, "-m", "cursorpilot", *args], cwd=str(cwd), env=env, cols=cols, rows=rows)
        self.screen = TerminalScreen(cols, rows)
        self.ended = False

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.ended and time.monotonic() < end:
            chunk = self.driver.read(0.05)
            if chunk is None:
                self.ended = True
                return
            if chunk:
                self.screen.feed(chunk)
                replies = self.screen.take_replies()
                if replies:
                    self.driver.write(replies)

    def text(self) -> str:
        return "\n".join([*self.screen.scrollback(), *self.screen.snapshot().lines])

    def until(self, pattern: str, timeout: float = 30, *others: Term) -> str:
        """Pump this terminal (and the others, so that none of them blocks on a full pty) until its screen shows it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.1)
            for other in others:
                other.pump(0.01)
            if re.search(pattern, self.text(), re.M):
                return self.text()
            if self.ended:
                break
        raise AssertionError(f"never showed {pattern!r}:\n{self.text()}")

    def type(self, text: str, *others: Term) -> None:
        """Key by key, a tenth of a second apart (a fast burst is a paste to some programs)."""
        for ch in text:
            self.driver.write(ch.encode())
            self.pump(0.1)
            for other in others:
                other.pump(0.01)

    def wait(self, timeout: float = 30, *others: Term) -> int | None:
        deadline = time.monotonic() + timeout
        while not self.ended and time.monotonic() < deadline:
            self.pump(0.1)
            for other in others:
                other.pump(0.01)
        status = self.driver.wait(5)
        return status.code if status is not None else None

    def close(self) -> None:
        if self.driver.alive():
            self.driver.terminate(2)
        self.driver.close()
