"""Looking in on a running run, and taking its keyboard: the run's side of `cursor-pilot watch [--take]`.

A run unattended for an hour can be read afterwards (transcript, report); this lets a person see it live from another
terminal, and take the keyboard for a minute. The run listens on a unix socket in its own folder (`watch.sock`, 0700,
and every connection's user checked: SO_PEERCRED), for any number of watchers. Each gets what the run's console shows:
the program's screen (its rows and cursor, redacted like the console) at most every RENDER_EVERY, the status line, and
the decisions and notes as they come (`Watched`, a sink beside the console's). A watcher sends nothing but to take the
keyboard: one at a time, and only while a step with a screen runs (pty/loop.py polls `Keyboard.poll()`: the pilot
pauses, the person's keys go to the program, and on their hand-back key the pilot judges the screen afresh). Who
joined, who took the keyboard and for how long is recorded (`watcher`, `take_over`).

The protocol is JSON lines both ways (`hello`, `screen`, `note`, `taken`, `given`, `refused`, `end`; `watch` first,
then `take`, `keys`, `give`). Stdlib only: every run starts this.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cursorpilot import daemons
from cursorpilot.records import models as R
from cursorpilot.events import BaseSink, Sink, Status

SOCKET = "watch.sock"
HAND_BACK = b"\x1d"  # Ctrl-]: the person gives the keyboard back
NOTES_KEPT = 20  # a watcher who joins late gets the last notes
SCREEN_KEPT = 200  # a step's last screen and scrollback, as its watchers see it when it ends: rows at most
PATH_MAX = 100  # a unix socket's path, at most (the kernel's is 108 bytes): a longer one goes through /proc/self/fd


def address(folder: Path) -> tuple[str, int | None]:
    """The path to bind or connect to for the run folder's socket, and a folder fd to close after (None: none opened).
    A run's folder may be deep (pytest's, --log's): through /proc/self/fd/N the path stays short."""
    path = str(folder / SOCKET)
    if len(path.encode()) <= PATH_MAX:
        return path, None
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{SOCKET}", fd


def send(conn: socket.socket, message: dict) -> bool:
    try:
        conn.sendall((json.dumps(message) + "\n").encode())
        return True
    except OSError:
        return False


class _Watcher:
    __slots__ = ("conn", "pid", "lock")

    def __init__(self, conn: socket.socket, pid: int):
        self.conn, self.pid, self.lock = conn, pid, threading.Lock()

    def send(self, message: dict) -> bool:
        with self.lock:
            return send(self.conn, message)


class WatchServer:
    """The run's socket: watchers joined, what they are shown, who has the keyboard (`Keyboard` for the PTY loop)."""

    def __init__(self, folder: Path, run_id: str):
        self.folder, self.run_id = folder, run_id
        self.redact: Callable[[str], str] = lambda text: text
        self._watchers: list[_Watcher] = []
        self._lock = threading.Lock()
        self._screen: dict | None = None
        self._notes: list[dict] = []
        self._events: list[tuple[str, bytes]] = []  # (take | keys | give, who or the keys) for the PTY loop
        self._taker: _Watcher | None = None
        self._listener: socket.socket | None = None
        self._record: Callable[[R.Rec], Any] | None = None
        self.screen_step = False  # a step with a screen runs: its keyboard can be taken

    # -- the socket ---------------------------------------------------------------------------------------------------
    def start(self) -> bool:
        """Listen in the run's folder (False: it can't: the run goes on unwatched)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path, fd = address(self.folder)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            daemons.bind_socket(listener, path)
            os.chmod(path, 0o700)  # (connecting takes write permission: only its user, who is also checked per connection)
        except OSError:
            listener.close()
            return False
        finally:
            if fd is not None:
                os.close(fd)
        self._listener = listener
        threading.Thread(target=self._accept, name="watch", daemon=True).start()
        return True

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            cred = daemons.peer_cred(conn)
            if cred is None or cred[1] != os.getuid():
                conn.close()  # only the run's own user may watch
                continue
            threading.Thread(target=self._serve, args=(_Watcher(conn, cred[0]),), name="watcher", daemon=True).start()

    def _serve(self, w: _Watcher) -> None:
        """A watcher says so first (`watch`): a connection that only looks whether the run listens is no watcher."""
        lines = w.conn.makefile("rb")
        try:
            first = json.loads(lines.readline() or b"{}")
        except (OSError, ValueError):
            first = None
        if not isinstance(first, dict) or first.get("t") != "watch":
            w.conn.close()
            return
        with self._lock:
            self._watchers.append(w)
            hello = {"t": "hello", "run": self.run_id, "take": self.screen_step, "taken": self._taker is not None}
            backlog = [hello, *([self._screen] if self._screen else []), *self._notes]
        self._write(R.Watcher(event="joined", pid=w.pid))
        with self._lock:
            self._events.append(("joined", str(w.pid).encode()))  # the PTY loop shows it the screen now
        for message in backlog:
            w.send(message)
        try:
            for line in lines:
                self._received(w, line)
        except (OSError, ValueError):
            pass
        finally:
            self._left(w)

    def _received(self, w: _Watcher, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        kind = message.get("t") if isinstance(message, dict) else None
        with self._lock:
            if kind == "take":
                why = (None if self._taker is None and self.screen_step else "the keyboard is taken already" if self._taker is not None
                       else "this step has no screen to take (an ACP or print-mode agent), or none runs")
                if why is not None:
                    w.send({"t": "refused", "why": why})
                    return
                self._taker = w
                self._events.append(("take", str(w.pid).encode()))
            elif kind == "keys" and self._taker is w:
                try:
                    self._events.append(("keys", bytes.fromhex(str(message.get("hex", "")))))
                except ValueError:
                    return
            elif kind == "give" and self._taker is w:
                self._taker = None
                self._events.append(("give", str(w.pid).encode()))

    def _left(self, w: _Watcher) -> None:
        with self._lock:
            if w in self._watchers:
                self._watchers.remove(w)
            if self._taker is w:  # gone with the keyboard: it is given back
                self._taker = None
                self._events.append(("give", str(w.pid).encode()))
        self._write(R.Watcher(event="left", pid=w.pid))
        try:
            w.conn.close()
        except OSError:
            pass

    def _write(self, rec: R.Rec) -> None:
        record = self._record
        if record is not None:
            try:
                record(rec)
            except (OSError, ValueError):  # the transcript closed as the run ended
                pass

    # -- what the run shows ---------------------------------------------------------------------------------------------
    @property
    def watching(self) -> bool:
        return bool(self._watchers)

    def publish(self, message: dict, keep: bool = False) -> None:
        with self._lock:
            if message["t"] == "screen":
                self._screen = message
            elif keep:
                self._notes = [*self._notes, message][-NOTES_KEPT:]
            watchers = list(self._watchers)
        for w in watchers:
            w.send(message)

    def close(self, text: str) -> None:
        self.publish({"t": "end", "text": text})
        listener, self._listener = self._listener, None
        if listener is not None:
            path, fd = address(self.folder)
            try:
                os.unlink(path)
            except OSError:
                pass
            finally:
                if fd is not None:
                    os.close(fd)
            listener.close()
        with self._lock:
            watchers, self._watchers = list(self._watchers), []
        for w in watchers:
            try:
                w.conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- the keyboard (events.Keyboard) ----------------------------------------------------------------------------------
    def step(self, record: Callable[[R.Rec], Any], screen: bool) -> None:
        self._record = record
        with self._lock:
            self.screen_step, self._events = screen, []
            if not screen and self._taker is not None:  # a step without a screen: the keyboard goes back
                self._taker.send({"t": "given", "why": "the step ended"})
                self._taker = None

    def poll(self) -> list[tuple[str, bytes]]:
        with self._lock:
            events, self._events = self._events, []
        return events

    def told(self, message: dict) -> None:
        """Say to the taker (or all): `taken` (the pilot has paused), `given` (it judges the screen afresh)."""
        self.publish(message, keep=False)


class Watched(BaseSink):
    """The run's sink for the console, and the same for the watchers beside it."""

    def __init__(self, console: Sink, server: WatchServer):
        self.console, self.server = console, server

    @property
    def wants_screen(self) -> bool:  # type: ignore[override]  # (BaseSink's is a plain attribute)
        return self.console.wants_screen or self.server.watching

    def keyboard(self) -> WatchServer:
        return self.server

    def redact_with(self, redact: Callable[[str], str]) -> None:
        self.console.redact_with(redact)
        self.server.redact = redact

    def screen(self, snap, status: Status) -> None:
        if self.console.wants_screen:
            self.console.screen(snap, status)
        if self.server.watching:
            redact = self.server.redact
            self.server.publish({"t": "screen", "lines": [redact(line) for line in snap.lines], "cursor": [snap.cursor_x, snap.cursor_y],
                                 "status": f"{status.state} · answers {status.answers} · {status.elapsed:.1f}s {status.detail}".strip()})

    def answer(self, prompt: str, typed: str, source: str, changed: str = "", granted: str = "") -> None:
        self.console.answer(prompt, typed, source, changed, granted)
        said = " [the deny policy changed it]" if changed else f" [{granted}]" if granted else ""
        self._note(f"answered {typed!r} ({source}){said}: {prompt.strip()[-200:]}")

    def note(self, text: str) -> None:
        self.console.note(text)
        self._note(text)

    def ask_human(self, asked, **kw) -> None:
        self.console.ask_human(asked, **kw)
        self._note(f"a person is asked: {getattr(asked, 'headline', '') or 'a question'}")

    def step_ended(self, name: str, text: str, top: int | None = None) -> None:
        """What the program showed last (its screen may have changed after the last frame, as it exited)."""
        self.console.step_ended(name, text, top)
        if text.strip():
            lines = [self.server.redact(line) for line in text.splitlines()[-SCREEN_KEPT:]]
            self.server.publish({"t": "screen", "lines": lines, "cursor": [0, 0], "status": f"step {name} ended"})
        self._note(f"step {name} ended")

    def finished(self, outcome) -> None:
        self.console.finished(outcome)
        self.server.close(f"cursor-pilot: {outcome.reason} (exit {outcome.exit_code})")

    def _note(self, text: str) -> None:
        self.server.publish({"t": "note", "text": self.server.redact(text)}, keep=True)


def watched(console: Sink, folder: Path, run_id: str) -> Sink:
    """The console's sink, watched (the run's socket in its folder), or the console's alone when it can't listen."""
    server = WatchServer(folder, run_id)
    return Watched(console, server) if server.start() else console
