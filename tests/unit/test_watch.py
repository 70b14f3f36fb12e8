"""The run's side of `cursor-pilot watch` (commands/watched.py), over a real unix socket: only its user, 0700, the keyboard taken
only while a step with a screen runs and by one person at a time, a watcher that leaves with it gives it back."""

from __future__ import annotations

import json
import os
import socket
import stat
import time

import pytest

from cursorpilot import daemons

from cursorpilot.records import models as R
from cursorpilot.commands.watched import SOCKET, WatchServer, address

pytestmark = pytest.mark.timeout(30)


class Client:
    def __init__(self, folder):
        path, fd = address(folder)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        if fd is not None:
            os.close(fd)
        self.lines = self.sock.makefile("rb")

    def send(self, **message) -> None:
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def next(self, kind: str) -> dict:
        for line in self.lines:
            message = json.loads(line)
            if message["t"] == kind:
                return message
        raise AssertionError(f"no {kind}")


def until(condition, timeout: float = 10):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)  # (polled until it holds)


@pytest.fixture
def server(tmp_path):
    s = WatchServer(tmp_path / ("a" * 40) / ("x" * 60), "r1")  # a deep folder: its path goes through /proc/self/fd
    recorded: list[R.Rec] = []
    assert s.start()
    s.step(recorded.append, screen=False)
    yield s, recorded
    s.close("done")


def test_the_socket_is_its_users_alone_and_a_watcher_is_told_the_run(server):
    s, recorded = server
    assert stat.S_IMODE(os.stat(s.folder / SOCKET).st_mode) == 0o700 and len(str(s.folder / SOCKET)) > 108
    c = Client(s.folder)
    c.send(t="watch")
    assert c.next("hello") == {"t": "hello", "run": "r1", "take": False, "taken": False}
    until(lambda: recorded)
    assert isinstance(recorded[0], R.Watcher) and recorded[0].event == "joined" and recorded[0].pid == os.getpid()


def test_another_users_connection_is_closed_unread(server, monkeypatch):
    s, recorded = server
    monkeypatch.setattr(daemons, "peer_cred", lambda conn: (1234, os.getuid() + 1))
    c = Client(s.folder)
    try:
        c.send(t="watch")
        said = c.lines.readline()
    except (BrokenPipeError, ConnectionResetError):  # closed already
        said = b""
    assert said == b"" and not recorded


def test_the_keyboard_is_taken_only_with_a_screen_and_by_one_person_and_given_back_when_they_leave(server):
    s, _ = server
    first, second = Client(s.folder), Client(s.folder)
    for c in (first, second):
        c.send(t="watch")
        c.next("hello")
    first.send(t="take")
    assert "no screen to take" in first.next("refused")["why"]
    s.step(lambda rec: None, screen=True)
    first.send(t="take")
    until(lambda: s._taker is not None)
    second.send(t="take")
    assert second.next("refused")["why"] == "the keyboard is taken already"
    second.send(t="keys", hex=b"zz".hex())  # not the taker's: dropped
    first.send(t="keys", hex=b"ok\r".hex())
    first.lines.close()
    first.sock.close()  # gone with the keyboard: it is given back
    until(lambda: s._taker is None)
    assert [(kind, data) for kind, data in s.poll() if kind != "joined"] == [("take", str(os.getpid()).encode()), ("keys", b"ok\r"),
                                                                            ("give", str(os.getpid()).encode())]
