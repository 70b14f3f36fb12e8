"""A daemon's children (daemons.accept_loop): what the daemon warmed is frozen for their garbage collector."""

from __future__ import annotations

import gc
import os
import socket

import pytest

from cursorpilot import daemons

pytestmark = pytest.mark.timeout(30)


def test_a_child_of_the_daemon_never_walks_what_the_daemon_warmed(tmp_path, monkeypatch):
    """A full collection in a run's child walked the daemon's 50,000 objects: 40-100 ms at whatever moment it fell."""
    monkeypatch.setenv("CURSORPILOT_RESIDENT_IDLE", "2")
    path = str(tmp_path / "d.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    daemons.bind_socket(listener, path)
    pid = os.fork()
    if pid == 0:  # the daemon
        try:
            daemons.accept_loop(listener, path, lambda conn: conn.sendall(b"%d\n" % gc.get_freeze_count()))
        finally:
            os._exit(0)
    listener.close()
    try:
        sock = daemons.connect(path)
        assert sock is not None
        with sock:
            frozen = int(sock.makefile("rb").readline())
        assert frozen > 1000  # the test process's own objects, warm in the daemon it forked
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
