"""What the two residents share (providers/resident.py keeps a provider's SDK warm, startup/warmstart.py a whole run): the
private folder of their sockets, connecting, starting a daemon, and a daemon's loop (a child forked per connection,
idle exit, only its own socket, only its own user). Stdlib only, and light: a run's start imports it (paths are
strings: no pathlib on the way to a run's program).
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import stat
import struct
import time
from collections.abc import Callable

TICK = 5.0  # how often an idle daemon looks at its socket
_daemons: list = []  # the daemons this process started (subprocess.Popen, kept: no "still running" warning)


class Unreachable(Exception):
    """The resident is not there to be asked: the provider imports its SDK itself."""


def folder() -> str:
    """This user's private folder for the socket (made 0700; one that others can enter or that is not ours is refused),
    in $XDG_RUNTIME_DIR unless a socket's path there would be too long for the kernel (108 bytes)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = os.path.join(runtime, "cursor-pilot") if runtime and os.path.isdir(runtime) else None
    if base is None or len(base.encode()) > 70:
        base = f"/tmp/cursor-pilot-{os.getuid()}"
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise Unreachable(f"{base} is not a private folder of this user")
    return base


def connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return sock
    except OSError:
        sock.close()
        return None


def spawn_daemon(module: str, args: list[str], path: str) -> None:
    """A daemon (`python -m MODULE ARGS... SOCKET FD`) in its own session, with no terminal, none of this process's
    streams and only the environment a Python needs to import (what a run needs, each run hands over). Its socket is
    bound here and handed over as FD, so that a connection made right after waits in the backlog while it warms. Its
    idle time, from CURSORPILOT_RESIDENT_IDLE (seconds, default 600)."""
    keep = ("PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
            "XDG_RUNTIME_DIR", "CURSORPILOT_RESIDENT_IDLE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        bind_socket(listener, path)
        fd = listener.fileno()
        import subprocess

        _daemons.append(subprocess.Popen([_python(), "-m", module, *args, path, str(fd)], env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True, close_fds=True, pass_fds=(fd,), cwd="/"))
    finally:
        listener.close()


def bind_socket(listener: socket.socket, path: str) -> None:
    """Bind and listen at path; a socket file there that nobody answers on (its daemon is gone) is replaced, one
    that is answered is another daemon's (OSError)."""
    try:
        listener.bind(path)
    except OSError:
        alive = connect(path)
        if alive is not None:
            alive.close()
            raise
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        listener.bind(path)
    listener.listen(64)


def accept_loop(listener: socket.socket, path: str, serve_one: Callable[[socket.socket], None]) -> int:
    """Fork a child for each connection of this user's, which runs serve_one and exits; end after the idle time
    (CURSORPILOT_RESIDENT_IDLE) without one, or when the socket at `path` is no longer this daemon's. What the daemon
    warmed is frozen first (gc.freeze): a child's collections then never walk its 50,000 objects. A full collection in
    a run's child took 40-100 ms, at whatever moment it fell (once between an answer and its first key), and touched
    every page the child shares with its daemon."""
    gc.freeze()
    mine = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the children reap themselves
    idle = float(os.environ.get("CURSORPILOT_RESIDENT_IDLE", "600"))
    listener.settimeout(min(TICK, idle))
    last = time.monotonic()
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if not _still_mine(path, mine) or time.monotonic() - last > idle:
                break
            continue
        last = time.monotonic()
        if _peer_uid(conn) != os.getuid():
            conn.close()
            continue
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            conn.setblocking(True)
            try:
                serve_one(conn)
            finally:
                os._exit(0)
        conn.close()
    if _still_mine(path, mine):
        os.unlink(path)
    return 0


def _still_mine(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _peer_uid(conn: socket.socket) -> int | None:
    cred = peer_cred(conn)
    return None if cred is None else cred[1]


def peer_cred(conn: socket.socket) -> tuple[int, int] | None:
    """The pid and uid of the process at the other end of a unix socket, as the kernel says (SO_PEERCRED)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    pid, uid, _ = struct.unpack("3i", creds)
    return pid, uid


def _python() -> str:
    import sys

    return sys.executable
