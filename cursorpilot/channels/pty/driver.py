"""The PTY driver: the only module that imports pexpect.

pexpect is used to fork/exec under a pty (exec errors come back through its pipe),
but not its ``expect()`` machinery: the step's loop (pty/loop.py) owns the read loop and reads
the master fd directly with a short tick, so there is no unbounded regex buffer and
no hidden ``delaybeforesend``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import signal
import time
from dataclasses import dataclass

import pexpect

from cursorpilot.errors import BadInput

READ_SIZE = 65536
READ_BATCH = 1024 * 1024  # most bytes one read() hands over (a flood costs one loop turn per batch)
WRITE_WAIT = 5.0  # how long a write waits for room in the program's input queue


@dataclass(slots=True, frozen=True)
class ExitStatus:
    code: int | None  # exit code when the program exited normally
    signal: int | None  # signal number when it was killed by one

    @property
    def ok(self) -> bool:
        return self.code == 0

    def describe(self) -> str:
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"killed by {name}"
        return f"exit code {self.code}"


def terminal_env(env: dict[str, str] | None, cols: int, rows: int) -> dict[str, str]:
    full_env = dict(os.environ if env is None else env)
    full_env["TERM"] = "xterm-256color"
    full_env["COLUMNS"], full_env["LINES"] = str(cols), str(rows)
    return full_env


# Signals the program gets as on a terminal of its own: the pilot's terminal is the program's whole world, and the pilot
# stops it with SIGINT, then SIGKILL. Python ignores SIGPIPE and SIGXFSZ (and pexpect keeps that: `yes | head` said
# "Broken pipe" under the pilot), and a run started in the background of a script or under nohup ignores SIGINT or
# SIGHUP (exec keeps what is ignored, and what is blocked): tmux sets these back for its panes too.
FRESH = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTSTP,
         signal.SIGTTIN, signal.SIGTTOU, signal.SIGWINCH, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGCHLD)


def fresh_signals() -> None:
    """In the program's process, before its exec: every signal of FRESH at its default, any other one the pilot's
    process ignores too (exec keeps what is ignored), none blocked. Best effort: what cannot be reset stays as it was,
    rather than the program not starting (an error here would come back as exec's)."""
    for sig in {*FRESH, *(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)
                          and signal.getsignal(s) == signal.SIG_IGN)}:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_SETMASK, ())


def _spawn(argv: list[str], cwd: str | None, full_env: dict[str, str], cols: int, rows: int) -> pexpect.spawn:
    try:
        return pexpect.spawn(argv[0], argv[1:], cwd=cwd, env=full_env, encoding=None, echo=True, dimensions=(rows, cols),
                             timeout=None, preexec_fn=fresh_signals)
    except pexpect.ExceptionPexpect as exc:
        raise BadInput(f"cannot start {argv[0]!r}: {exc}".splitlines()[0]) from None
    except OSError as exc:  # exec failed in the child (pexpect sends its errno back): say which of its causes it is
        from cursorpilot.channels import executable

        path = argv[0] if os.sep in argv[0] else (shutil.which(argv[0], path=full_env.get("PATH")) or argv[0])
        why = executable.problem(path) or exc.strerror or str(exc)
        raise BadInput(f"cannot start {argv[0]!r}: {why}") from None


# -- started early (cursorpilot/startup/start.py) ----------------------------------------------------------------------------------
# The program a run drives is started before the run has read its options through typer, built its models and opened its
# records: nothing it does not need to start is on the way. The run then asks for the very same program; it gets this one
# when every part of how it is started is the same (the command, folder, environment, terminal size), and otherwise this
# one is killed and its own is started. One that no run claims (the run was refused) is killed when the process ends.
_prestarted: tuple[tuple, pexpect.spawn] | None = None


def _key(argv: list[str], cwd: str | None, full_env: dict[str, str], cols: int, rows: int) -> tuple:
    return tuple(argv), cwd, tuple(sorted(full_env.items())), cols, rows


def prestart(argv: list[str], *, cwd: str | None, env: dict[str, str], cols: int, rows: int) -> bool:
    """Start the program now, to be claimed by the run's PtyDriver; False when it could not be started (the run will
    say why, in its own words, when it tries)."""
    global _prestarted
    import atexit

    discard_prestarted()
    full_env = terminal_env(env, cols, rows)
    try:
        child = _spawn(argv, cwd, full_env, cols, rows)
    except BadInput:
        return False
    _prestarted = (_key(argv, cwd, full_env, cols, rows), child)
    atexit.register(discard_prestarted)
    return True


def _adopt(argv: list[str], cwd: str | None, full_env: dict[str, str], cols: int, rows: int) -> pexpect.spawn | None:
    global _prestarted
    if _prestarted is None:
        return None
    key, child = _prestarted
    if key != _key(argv, cwd, full_env, cols, rows):
        discard_prestarted()
        return None
    _prestarted = None
    return child


def prestarted_pid() -> int | None:
    return _prestarted[1].pid if _prestarted is not None else None


def discard_prestarted() -> None:
    """Kill a program started early that no run claimed (a refused run types nothing into it, and leaves it not running)."""
    global _prestarted
    if _prestarted is None:
        return
    _, child = _prestarted
    _prestarted = None
    if child.pid is None:  # (never spawned: nothing to kill)
        return
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        child.close(force=True)
    except Exception:
        pass


class PtyDriver:
    """One child program under a pseudo-terminal."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        cols: int = 120,
        rows: int = 40,
    ):
        if not argv:
            raise BadInput("no command to run")
        full_env = terminal_env(env, cols, rows)
        child = _adopt(argv, cwd, full_env, cols, rows)
        self._child = child if child is not None else _spawn(argv, cwd, full_env, cols, rows)
        self._child.delaybeforesend = None
        fd, pid = self._child.child_fd, self._child.pid
        assert fd is not None and pid is not None  # (a spawned child has its pty and its pid)
        self.fd: int = fd
        self.pid: int = pid
        self._eof = False
        self._status: ExitStatus | None = None
        os.set_blocking(self.fd, False)  # read() never blocks outside select()

    # -- reading -------------------------------------------------------------
    def read(self, timeout: float) -> bytes | None:
        """Bytes the program wrote, b"" when nothing came within timeout, None at EOF.

        Takes what is readable now without waiting first (a flood then costs one syscall per
        read, not two), and up to READ_BATCH bytes of it, so the caller's per-read work is
        paid per batch rather than per 4 KB the tty hands over.
        """
        if self._eof:
            return None
        data = self._take()
        if data is None or data:
            return data
        try:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        except InterruptedError:
            return b""
        return self._take() if ready else b""

    def _take(self) -> bytes | None:
        parts: list[bytes] = []
        size = 0
        while size < READ_BATCH:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno in (errno.EIO, errno.EBADF):
                    self._eof = True
                    break
                raise
            if not data:
                self._eof = True
                break
            parts.append(data)
            size += len(data)
        if not parts and self._eof:
            return None
        return b"".join(parts)

    def drain(self, quiet: float = 0.05, limit: float = 2.0) -> bytes:
        """After the program exited, read what is still buffered in the pty.

        Stops at EOF, or when nothing arrives for ``quiet`` seconds (a grandchild may
        hold the slave open), or after ``limit`` seconds overall.
        """
        out = bytearray()
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            chunk = self.read(quiet)
            if chunk is None or chunk == b"":
                break
            out += chunk
        return bytes(out)

    # -- writing -------------------------------------------------------------
    def write(self, data: bytes) -> None:
        view = memoryview(data)
        deadline = time.monotonic() + WRITE_WAIT
        while view:
            try:
                n = os.write(self.fd, view)
            except InterruptedError:
                continue
            except BlockingIOError:  # the tty's input queue is full: the program is not reading yet
                if time.monotonic() > deadline:
                    raise OSError(errno.EAGAIN, f"the program read none of its input for {WRITE_WAIT:g}s") from None
                select.select([], [self.fd], [], 0.05)
                continue
            except OSError as exc:
                if exc.errno in (errno.EIO, errno.EBADF):
                    return  # the program is gone; nothing to type into
                raise
            view = view[n:]

    def resize(self, cols: int, rows: int) -> None:
        self._child.setwinsize(rows, cols)

    # -- lifetime ------------------------------------------------------------
    def alive(self) -> bool:
        if self._status is not None:
            return False
        alive = self._child.isalive()
        if not alive:
            self._record_status()
        return alive

    def signal_group(self, sig: int) -> None:
        """Signal the program's whole process group (it leads its own session)."""
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(self, timeout: float) -> ExitStatus | None:
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                return self._status
            if time.monotonic() >= deadline:
                return None
            # Keep the pty drained so a program blocked on output can die.
            self.read(0.02)

    def terminate(self, grace: float = 3.0) -> ExitStatus:
        """SIGINT to the group, wait up to ``grace`` seconds, then SIGKILL."""
        if self.alive():
            self.signal_group(signal.SIGINT)
            if self.wait(grace) is None:
                self.kill()
        return self.status()

    def kill(self) -> ExitStatus:
        self.signal_group(signal.SIGKILL)
        self.wait(5.0)
        return self.status()

    def status(self) -> ExitStatus:
        if self._status is None:
            self._child.wait()
            self._record_status()
        assert self._status is not None
        return self._status

    def close(self) -> None:
        if self._status is not None:  # reaped already: ptyprocess's 0.1 s "give the kernel time" would buy nothing
            self._child.ptyproc.delayafterclose = 0  # type: ignore[attr-defined]  # (types-pexpect leaves out spawn.ptyproc)
        try:
            self._child.close(force=True)
        except Exception:
            pass

    def _record_status(self) -> None:
        c = self._child
        self._status = ExitStatus(code=c.exitstatus, signal=c.signalstatus)
