"""Terminal plumbing shared by the simulators: raw mode, key reading, recording."""

from __future__ import annotations

import json
import os
import select
import sys
import termios
from pathlib import Path

import yaml

SCENARIOS = Path(__file__).parent / "scenarios"

KEYS = {
    b"\x1b[A": "up",
    b"\x1b[B": "down",
    b"\x1b[C": "right",
    b"\x1b[D": "left",
    b"\x1b[Z": "shift-tab",
    b"\x1b": "esc",
    b"\r": "enter",
    b"\n": "enter",
    b"\t": "tab",
    b"\x03": "ctrl-c",
    b"\x7f": "backspace",
    b"\x08": "backspace",
}


def load_scenario(name: str) -> dict:
    path = Path(name)
    if not (path.suffix in (".yaml", ".yml") and path.is_file()):  # a bare name is a bundled scenario, even where
        path = SCENARIOS / f"{name}.yaml"  # a folder of that name exists (`--log demo`)
    if not path.exists():
        sys.stderr.write(f"sim: no scenario {name!r}\n")
        raise SystemExit(2)
    return yaml.safe_load(path.read_text(encoding="utf-8"))


class Recorder:
    def __init__(self, path: str | None):
        self.path = path

    def __call__(self, event: str, **fields: object) -> None:
        if not self.path:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, **fields}) + "\n")


def set_raw(fd: int) -> list | None:
    """Raw input like Node's setRawMode (libuv): no echo, no signals, no line editing; output keeps ONLCR."""
    if not os.isatty(fd):
        return None
    old = termios.tcgetattr(fd)
    new = termios.tcgetattr(fd)
    new[0] &= ~(termios.BRKINT | termios.ICRNL | termios.INPCK | termios.ISTRIP | termios.IXON)
    new[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
    new[6][termios.VMIN], new[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, new)
    return old


def restore(fd: int, old: list | None) -> None:
    if old is not None:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def tokens(chunk: bytes) -> list[str]:
    """Split one read into keys; a bracketed paste is one token 'paste:<text>'."""
    out: list[str] = []
    i = 0
    while i < len(chunk):
        if chunk.startswith(b"\x1b[200~", i):
            end = chunk.find(b"\x1b[201~", i)
            end = len(chunk) if end < 0 else end
            out.append("paste:" + chunk[i + 6 : end].decode("utf-8", "replace"))
            i = end + 6
            continue
        for seq in (b"\x1b[A", b"\x1b[B", b"\x1b[C", b"\x1b[D", b"\x1b[Z"):
            if chunk.startswith(seq, i):
                out.append(KEYS[seq])
                i += 3
                break
        else:
            b = chunk[i : i + 1]
            if b in KEYS:
                out.append(KEYS[b])
                i += 1
            else:
                # one UTF-8 character
                n = 1
                while i + n < len(chunk) and (chunk[i + n] & 0xC0) == 0x80:
                    n += 1
                out.append("char:" + chunk[i : i + n].decode("utf-8", "replace"))
                i += n
    return out


class KeyReader:
    """Reads key tokens from stdin with a timeout, keeping leftovers of a burst."""

    def __init__(self, fd: int = 0):
        self.fd = fd
        self.queue: list[str] = []
        self.eof = False

    def next(self, timeout: float | None) -> str | None:
        if self.queue:
            return self.queue.pop(0)
        if self.eof:
            return None
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(self.fd, 4096)
        if not data:
            self.eof = True
            return None
        self.queue.extend(tokens(data))
        return self.queue.pop(0) if self.queue else None
