"""The resident pilot (warmstart.py says why): cursor-pilot's run imported once, a child forked for each run.

    python -m cursorpilot.startup.pilotd DIGEST SOCKET FD

It serves an agent's hook calls (`cursor-pilot hook AGENT`, commands/hook.py) the same way: one child per call.

It imports what a run imports (the runner, the screen channel, the console, the models, the answerers' modules; no
SDK: the provider's resident keeps those) and waits. A run connects and hands over its command line, environment,
folder, umask and its three standard streams (SCM_RIGHTS); the child forked for it takes them all, says its pid, runs
the run exactly as `cursor-pilot run` would in the run's own process (start.py), and sends back its exit code. The
daemon keeps nothing of a run: it never runs one itself, and a child serves one run and exits. It ends after the idle
time (CURSORPILOT_RESIDENT_IDLE) or when its socket is no longer its own (providers/residentd.py's accept loop).
"""

from __future__ import annotations

import io
import os
import random
import signal
import socket
import sys
import threading
import time
from importlib import import_module

from cursorpilot.startup import warmstart
from cursorpilot.daemons import accept_loop

WARM = ("cursorpilot.commands.run", "cursorpilot.commands.exits", "cursorpilot.commands.learning", "cursorpilot.runner.run",
        "cursorpilot.channels.registry", "cursorpilot.channels.pty.loop", "cursorpilot.ui", "cursorpilot.logs", "cursorpilot.records.pastruns",
        "cursorpilot.detect.profiles", "cursorpilot.providers.openai", "cursorpilot.providers.anthropic",
        "cursorpilot.providers.rules", "cursorpilot.human.humans", "cursorpilot.commands.preflight", "cursorpilot.records.resume",
        "cursorpilot.commands.hook", "cursorpilot.hooks.acts", "cursorpilot.hooks.paths", "cursorpilot.hooks.verdict",
        "cursorpilot.decide.policyfile")  # an agent's hook calls (commands/hook.py), served here too
_streams: list = []  # the daemon's own stdio objects: kept, so that collecting them never closes a run's fd 0-2


def main(argv: list[str]) -> int:
    """Warm, then serve: runs that come meanwhile wait in the backlog of the socket its starter bound (FD)."""
    key, path, fd = argv
    listener = socket.socket(fileno=int(fd))
    for name in WARM:
        import_module(name)
    _profiles()
    return accept_loop(listener, path, lambda conn: serve(conn, key))


def _profiles() -> None:
    """The bundled detector profiles, read and validated once here (their caches are keyed by each file's mtime, so a
    changed file is read again by the run that needs it): `--profile auto` reads them all to choose one."""
    from cursorpilot.detect.profiles import available, load_profile, resolve_name

    for name in available():
        load_profile(name)
    resolve_name("auto", ["-"])  # and every profile's `commands`, which `--profile auto` reads to choose one


def serve(conn: socket.socket, key: str) -> None:
    """One run, in the child forked for it."""
    hello, fds = _hello(conn)
    if hello is None or len(fds) != 3:
        return
    if hello.get("digest") != key:
        conn.sendall(b"refused another version of cursor-pilot\n")
        return
    _signals(hello.get("ignored", []))
    for n, fd in enumerate(fds):
        os.dup2(fd, n)
        os.close(fd)
    _stdio(hello["streams"])
    os.environ.clear()
    os.environ.update(hello["env"])
    time.tzset()
    random.seed()  # forked children would share the daemon's state of the module's generator
    os.chdir(hello["cwd"])
    os.umask(hello["umask"])
    sys.argv = hello["argv"]
    conn.sendall(b"pid %d\n" % os.getpid())
    try:
        go = conn.recv(3)
    except KeyboardInterrupt:  # Ctrl-C, passed on by the run's process as it said "go": the run never started
        conn.sendall(b"exit 130\n")
        os._exit(130)
    if go != b"go\n":  # the run gave up waiting for this daemon's warm-up and runs itself: not twice
        os._exit(0)
    threading.Thread(target=_hang_up, args=(conn,), name="run-line", daemon=True).start()
    from cursorpilot.startup import start

    code = 1
    try:
        code = start.in_child(sys.argv[1:])
    except KeyboardInterrupt:  # Ctrl-C before the run counts its own (RunContext.install_signals)
        code = 130
    finally:
        from cursorpilot.channels.pty.driver import discard_prestarted

        discard_prestarted()  # a program started early that no run claimed (the exit handlers of start.py do it there)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            conn.sendall(b"exit %d\n" % code)
        except OSError:
            pass
        os._exit(code)


def _signals(ignored: list[int]) -> None:
    """The run's signals as its own process has them, not as the daemon had them: a daemon started by a run that
    ignored Ctrl-C (in the background of a script, under nohup) ignores it, and so did every run it served until the
    run set its own handler, and every program they started (exec keeps what is ignored): a Ctrl-C at the program's
    first question was lost, and the program shrugged off the SIGINT that ends it (issue 48)."""
    for sig in warmstart.FORWARDED:
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, signal.SIG_IGN if int(sig) in ignored else default)


def _hello(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """The run's hello (warmstart.pack) and its three streams."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while 4 <= len(data) < 4 + int.from_bytes(data[:4], "big"):
        more = conn.recv(1 << 20)
        if not more:
            break
        data += more
    return warmstart.unpack(data), list(fds)


def _stdio(streams: list[list[str]]) -> None:
    """The run's stdin, stdout and stderr as Python opens them at its start: its encodings, a terminal's stdout
    line-buffered, stderr line-buffered."""
    _streams.extend((sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__))
    made = []
    for fd, (encoding, errors) in enumerate(streams):
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        made.append(io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=fd == 2 or (fd == 1 and os.isatty(1))))
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _hang_up(conn: socket.socket) -> None:
    """The run's cursor-pilot process is gone without a word (SIGKILL: every other signal it gets is passed on): the run
    dies as that process died, at once, and its program with its terminal, as it would have in that process."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
