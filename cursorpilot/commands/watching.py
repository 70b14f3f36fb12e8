"""`cursor-pilot watch [RUN] [--take]`: a running run's live screen and decisions, from another terminal (commands/watched.py is the
run's side). Read-only by default: nothing typed here reaches the program, and Ctrl-C leaves. With --take the pilot
pauses and this terminal is the program's keyboard (raw: every key goes to it, Ctrl-C too) until Ctrl-] gives it
back; the pilot then judges the screen afresh.

Its screen is drawn with plain escape sequences (no rich: a frame every 0.1 s), cropped to this terminal.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import sys
import termios
import tty
from pathlib import Path

from cursorpilot.errors import BadInput, ExitCode, PilotError
from cursorpilot.commands.watched import HAND_BACK, SOCKET, address, send

CLEAR, HOME, INVERSE, PLAIN, ERASE = "\x1b[2J", "\x1b[H", "\x1b[7m", "\x1b[0m", "\x1b[K"
NOTES_SHOWN = 3


def watch(ref: str | None, take: bool) -> int:
    folder = _folder(ref)
    conn = _connect(folder)
    try:
        return Watching(conn, take).run()
    finally:
        conn.close()


def _folder(ref: str | None) -> Path:
    """The run's folder: the one named (id, its beginning, or its folder), else the newest run that is running."""
    from cursorpilot.records.pastruns import find_run, known_runs

    if ref is not None:
        return find_run(ref).folder
    for run in reversed(known_runs()):
        if (run.folder / SOCKET).exists() and _alive(run.folder):
            return run.folder
    raise BadInput("no running run to watch (cursor-pilot runs lists them; give its id: cursor-pilot watch ID)")


def _alive(folder: Path) -> bool:
    try:
        _connect(folder).close()
        return True
    except PilotError:
        return False


def _connect(folder: Path) -> socket.socket:
    path, fd = address(folder)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError as exc:
        conn.close()
        raise PilotError(f"the run in {folder} is not running, or can't be watched: {exc.strerror or exc}", ExitCode.USAGE) from None
    finally:
        if fd is not None:
            os.close(fd)
    return conn


class Watching:
    def __init__(self, conn: socket.socket, take: bool):
        self.conn, self.take = conn, take
        self.buffer = b""  # what came from the run and is not a whole line yet (read here, not by a buffered file:
        # select() on the socket knows nothing of lines a buffered reader already holds)
        self.screen: dict | None = None
        self.notes: list[str] = []
        self.state = "watching (read-only; Ctrl-C leaves)"
        self.holding = False  # this terminal has the keyboard
        self.tty = sys.stdin.isatty() and sys.stdout.isatty()
        self.early: list[dict] = []

    def run(self) -> int:
        send(self.conn, {"t": "watch"})
        first = self._messages(wait=True) or [{}]
        hello, self.early = first[0], first[1:]
        if hello.get("t") != "hello":
            raise PilotError("the run did not answer as a run does", ExitCode.FAILED)
        if self.take:
            if not sys.stdin.isatty():
                raise BadInput("watch --take needs a terminal: your keys go to the program")
            send(self.conn, {"t": "take"})
            self.state = "taking the keyboard…"
        saved = termios.tcgetattr(sys.stdin) if self.take else None
        try:
            if saved is not None:
                tty.setraw(sys.stdin.fileno())
            return self._loop()
        except KeyboardInterrupt:
            return 0
        finally:
            if saved is not None:
                termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)
            sys.stdout.write(PLAIN + "\r\n")
            sys.stdout.flush()

    def _loop(self) -> int:
        sock, keys = self.conn.fileno(), sys.stdin.fileno()
        for message in self.early:  # what came with the hello: the screen, the last notes
            code = self._shown(message)
            if code is not None:
                return code
        while True:
            readable, _, _ = select.select([sock, *([keys] if self.holding else [])], [], [])
            if keys in readable:
                data = os.read(keys, 1024)
                if HAND_BACK in data:
                    before = data[: data.index(HAND_BACK)]
                    if before:
                        send(self.conn, {"t": "keys", "hex": before.hex()})
                    send(self.conn, {"t": "give"})
                    self.holding, self.state = False, "handing the keyboard back…"
                elif data:
                    send(self.conn, {"t": "keys", "hex": data.hex()})
            if sock in readable:
                messages = self._messages()
                if messages is None:
                    return 0  # the run ended
                for message in messages:
                    code = self._shown(message)
                    if code is not None:
                        return code

    def _messages(self, wait: bool = False) -> list[dict] | None:
        """The whole lines the run sent, read once (or, `wait`, until there is one); None: it closed the connection."""
        while True:
            try:
                data = self.conn.recv(65536)
            except OSError:
                data = b""
            if not data:
                return None
            self.buffer += data
            *lines, self.buffer = self.buffer.split(b"\n")
            out = []
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    out.append(message)
            if out or not wait:
                return out

    def _shown(self, m: dict) -> int | None:
        """Draw what the run said; an exit code when this watch is over."""
        kind = m.get("t")
        if kind == "screen":
            self.screen = m
        elif kind == "note":
            self.notes = [*self.notes, str(m.get("text", ""))][-NOTES_SHOWN:]
        elif kind == "taken" and self.take:
            self.holding, self.state = True, "you have the keyboard: every key goes to the program; Ctrl-] hands it back"
        elif kind == "given":
            if self.take and not self.holding:
                self._draw()
                return 0  # handed back: the pilot judges the screen afresh
            self.holding, self.state = False, f"the keyboard was given back ({m.get('why', 'by the run')})"
        elif kind == "refused":
            self._draw()
            raise PilotError(f"cursor-pilot watch --take: {m.get('why')}", ExitCode.FAILED)
        elif kind == "end":
            self.state = str(m.get("text", "the run ended"))
            self._draw()
            return 0
        self._draw()
        return None

    def _draw(self) -> None:
        cols, rows = shutil.get_terminal_size((120, 40))
        out = [HOME + CLEAR]
        lines = list((self.screen or {}).get("lines") or [])
        cursor = (self.screen or {}).get("cursor") or [0, 0]
        last = max([i for i, line in enumerate(lines) if line.strip()] + [int(cursor[1]) if len(cursor) > 1 else 0])
        lines = lines[: last + 1]  # down to its last row with text, or its cursor's
        room = max(1, rows - 2 - NOTES_SHOWN)
        shown = lines[-room:] if len(lines) > room else lines
        out += [line[:cols] + ERASE + "\r\n" for line in shown]
        status = f" {(self.screen or {}).get('status', '')} · {self.state}"
        out.append(INVERSE + status[:cols].ljust(cols) + PLAIN + "\r\n")
        out += [note[:cols] + ERASE + "\r\n" for note in self.notes]
        sys.stdout.write("".join(out))
        sys.stdout.flush()
