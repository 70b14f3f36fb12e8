"""A run served by the resident pilot: cursor-pilot's run imported once, by a daemon later runs reuse (pilotd.py).

Started early (start.py), a short program is running within a tenth of a second; but the pilot still had to import
its run (the runner, the screen, the console, the models: 0.3-0.5 s on two cores) before it could read the program's
first question, and the program waited for it. So a plain run (commands/runargs.py) asks the resident pilot for a child forked
from it, warm, that runs the very same run in this run's stead: this process hands over its command line, environment,
folder, umask and standard streams, passes on the signals it gets (Ctrl-C, SIGTERM, SIGHUP, a resized terminal), and
exits with the child's exit code. The lifecycle is the provider's resident's (providers/resident.py): started on
demand (by a run that found none, for the runs after it: that run runs here), version-checked (a digest of every
module of the package, the Python and its flags, the installed packages and the locale), idle exit, no stale state
(a child per run, which takes everything of the run's and serves nothing else). CURSORPILOT_RESIDENT=0 turns it off,
as does a Python run with debugging options or variables (PYTHONPROFILEIMPORTTIME, -X, -W): those runs run here.
"""

from __future__ import annotations

import marshal
import os
import signal
import socket
import sys
import zlib

from cursorpilot import __version__
from cursorpilot.daemons import Unreachable, connect, folder, spawn_daemon

PLAIN_PYTHON_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
                     "PYTHONUTF8", "PYTHONHASHSEED")
LOCALE_VARS = ("LANG", "LC_ALL", "LC_CTYPE")
WARM_WAIT = 20.0  # s: the longest a run waits for the resident pilot's first word before it runs in its own process
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGWINCH, signal.SIGUSR1, signal.SIGUSR2)


def wanted() -> bool:
    if os.environ.get("CURSORPILOT_RESIDENT", "1") == "0" or not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
        return False
    if any(k.startswith("PYTHON") and k not in PLAIN_PYTHON_VARS for k in os.environ):
        return False
    f = sys.flags
    return not (sys.warnoptions or sys._xoptions or f.dev_mode or f.isolated or f.ignore_environment or f.no_site or f.optimize)


def digest() -> str:
    """What the resident pilot runs, in 16 hex digits: any changed module of the package, another Python, its flags,
    a package installed or removed, another locale or encoding: another daemon."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # (cursorpilot/, above startup/)
    parts = [__version__, sys.executable, sys.version, str(sys.flags.utf8_mode), package]
    modules = []
    for top, folders, files in os.walk(package):
        folders[:] = [f for f in folders if f != "__pycache__"]
        modules += [os.path.join(top, name) for name in files if name.endswith(".py")]
    for path in sorted(modules):
        st = os.stat(path)
        parts.append(f"{os.path.relpath(path, package)}:{st.st_mtime_ns}:{st.st_size}")
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")) and os.path.isdir(entry):
            parts.append(f"{entry}:{os.stat(entry).st_mtime_ns}")
    parts += [f"{k}={os.environ.get(k, '')}" for k in (*LOCALE_VARS, *PLAIN_PYTHON_VARS)]
    data = "\n".join(parts).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"  # not hashlib: its OpenSSL costs a run's start 4 ms


def served() -> int | None:
    """The run, run by a child of the resident pilot: its exit code; None when there is none to ask (then the run
    runs here) or it refused before starting the run."""
    if not wanted():
        return None
    try:
        key = digest()
        path = os.path.join(folder(), f"pilot-{key}.sock")
        cwd = os.getcwd()
    except (OSError, Unreachable):
        return None
    sock = connect(path)
    if sock is None:
        return None
    umask = os.umask(0o022)
    os.umask(umask)
    streams = [[s.encoding, s.errors] if s is not None else ["utf-8", "strict"] for s in (sys.stdin, sys.stdout, sys.stderr)]
    ignored = [int(sig) for sig in FORWARDED if signal.getsignal(sig) == signal.SIG_IGN]
    hello = {"digest": key, "argv": ["cursor-pilot", *sys.argv[1:]], "env": dict(os.environ), "cwd": cwd, "umask": umask,
             "streams": streams, "ignored": ignored}
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        socket.send_fds(sock, [pack(hello)], [0, 1, 2])
        sock.settimeout(WARM_WAIT)  # a daemon still warming answers within a second; one that never does is not waited for
        reply = sock.makefile("rb")
        word, _, said = reply.readline().decode("utf-8", "replace").partition(" ")
        if word != "pid" or not said.strip().isdigit():  # `refused …`, or nothing: the run runs here
            sock.close()
            return None
        _forward(int(said))  # from before its "go": a Ctrl-C from here on reaches the run, never this process alone
        sock.sendall(b"go\n")  # its child runs the run only now: a run that gave up on it runs here, and only here
        sock.settimeout(None)
    except (OSError, ValueError):
        sock.close()
        _forward(None)
        return None
    except KeyboardInterrupt:  # Ctrl-C while it warms: the run was never started
        sock.close()
        return 130
    return _wait(reply)


def pack(hello: dict) -> bytes:
    """The hello on the line: its length (4 bytes) and the dict, marshalled (the daemon runs this very Python and
    package: the digest says so; and json's import, with re's, cost a run's start 12 ms). The daemon says back one
    line of words: `pid N` (or `refused WHY`), then `exit N`."""
    data = marshal.dumps(hello)
    return len(data).to_bytes(4, "big") + data


def unpack(data: bytes) -> dict | None:
    try:
        hello = marshal.loads(data[4 : 4 + int.from_bytes(data[:4], "big")])
    except (ValueError, EOFError, TypeError):
        return None
    return hello if isinstance(hello, dict) else None


def _forward(pid: int | None) -> None:
    """The signals this process gets go to the run's child; None: back as they were (the run runs here after all)."""
    if pid is None:
        for sig, handler in _before.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        _before.clear()
        return

    def forward(sig: int, _frame) -> None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        _before.setdefault(sig, signal.signal(sig, forward))


_before: dict[int, object] = {}  # each forwarded signal's handler before it was forwarded


def _wait(reply) -> int:
    """Until the child says its exit code; the signals this process gets go to it meanwhile (_forward)."""
    try:
        line = reply.readline()
    except OSError:
        line = b""
    word, _, said = line.decode("utf-8", "replace").partition(" ")
    if word != "exit" or not said.strip().lstrip("-").isdigit():
        sys.stderr.write("cursor-pilot: error: the run's process ended without its exit code (it was killed)\n")
        return 1
    return int(said)


def start_for_next() -> None:
    """A run that found no resident pilot starts one, for the runs after it (this one ran here). Its socket is bound
    here, before it warms: a run that comes while it still imports waits for it in the backlog, served warm in less
    time than its own imports would take (the daemon started first), where it used to run here too, cold, and
    compete with the daemon's imports for the CPU (the yardstick's second program paid 0.8 s for it)."""
    if not wanted():
        return
    try:
        key = digest()
        path = os.path.join(folder(), f"pilot-{key}.sock")
        if (sock := connect(path)) is not None:
            sock.close()
            return
        spawn_daemon("cursorpilot.startup.pilotd", [key], path)
    except (OSError, Unreachable):
        pass
