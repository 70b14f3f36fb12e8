"""Lines typed at the run's own terminal, read so that the reading can stop.

`input()` on a worker thread can't be called off: a question answered on the page would leave it blocked, and the
line typed next (meant for the next question) would land in the old one. So the terminal is read with `select()` and
a short tick, from its file descriptor, a line at a time (the terminal's own line editing: it is in canonical mode),
and the wait ends as soon as the question is closed elsewhere. A secret is read with echo off (the newline still shows).
"""

from __future__ import annotations

import os
import select
import termios
import threading

TICK = 0.05


class LineReader:
    def __init__(self, fd: int = 0):
        self.fd = fd
        self._buf = b""

    def typed_ahead(self) -> list[str]:
        """Whole lines typed before this question was put (after the last one closed elsewhere): taken off the terminal,
        so that they answer nothing, and returned to be shown as ignored."""
        lines = []
        while self._ready(0.0):
            if not self._fill():
                break
        while b"\n" in self._buf:
            line, _, self._buf = self._buf.partition(b"\n")
            lines.append(line.decode("utf-8", "replace").rstrip("\r"))
        return lines

    def read(self, stop: threading.Event, secret: bool = False) -> str | None:
        """One line, without its newline; None at end of input (Ctrl-D) or once `stop` is set."""
        saved = self._echo_off() if secret else None
        try:
            while b"\n" not in self._buf:
                if stop.is_set():
                    return None
                if self._ready(TICK) and not self._fill():
                    if self._buf:  # a last line with no newline
                        break
                    return None
            line, _, self._buf = self._buf.partition(b"\n")
            return line.decode("utf-8", "replace").rstrip("\r")
        finally:
            if saved is not None:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)

    def _ready(self, timeout: float) -> bool:
        try:
            return bool(select.select([self.fd], [], [], timeout)[0])
        except (OSError, ValueError):  # the terminal went away
            return True

    def _fill(self) -> bool:
        """False at end of input."""
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:
            return False
        self._buf += chunk
        return bool(chunk)

    def _echo_off(self) -> list | None:
        try:
            saved = termios.tcgetattr(self.fd)
        except termios.error:
            return None  # not a terminal: nothing is echoed anyway
        quiet = list(saved)
        quiet[3] = (quiet[3] & ~termios.ECHO) | termios.ECHONL
        termios.tcsetattr(self.fd, termios.TCSADRAIN, quiet)
        return saved
