"""The PTY driver on its own: batched non-blocking reads, EOF, and a program that never reads its input."""

import signal
import sys
import time

import pytest

from cursorpilot.channels.pty import driver as driver_mod
from cursorpilot.channels.pty.driver import PtyDriver

pytestmark = pytest.mark.timeout(30)


def read_all(d: PtyDriver, deadline_s: float = 10.0) -> bytes:
    out = bytearray()
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        chunk = d.read(0.2)
        if chunk is None:
            return bytes(out)
        out += chunk
    raise AssertionError("no EOF before the deadline")


def test_a_burst_comes_back_in_batches_and_ends_with_eof(tmp_path):
    script = "import os\nfor i in range(20000): os.write(1, b'%05d' % i + b'x' * 44 + b'\\n')\n"
    d = PtyDriver([sys.executable, "-c", script], cwd=str(tmp_path), env=None, cols=80, rows=24)
    try:
        sizes = []
        out = bytearray()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            chunk = d.read(0.2)
            if chunk is None:
                break
            sizes.append(len(chunk))
            out += chunk
        assert out == b"".join(b"%05d" % i + b"x" * 44 + b"\r\n" for i in range(20000))
        # more than the 4 KB the tty hands over per read; a batch stops once it holds READ_BATCH
        assert 4096 < max(sizes) < driver_mod.READ_BATCH + driver_mod.READ_SIZE
        assert d.read(0.1) is None  # EOF stays EOF
    finally:
        d.close()


def test_typing_into_a_program_that_never_reads_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setattr(driver_mod, "WRITE_WAIT", 0.3)
    # Raw mode, as TUIs set it: a full input queue then blocks the writer (canonical mode would drop the bytes).
    program = "import sys, time, tty; tty.setraw(0); print('ready', flush=True); time.sleep(20)"
    d = PtyDriver([sys.executable, "-c", program], cwd=str(tmp_path), env=None, cols=80, rows=24)
    try:
        seen, deadline = b"", time.monotonic() + 10
        while b"ready" not in seen and time.monotonic() < deadline:
            seen += d.read(0.5) or b""
        assert b"ready" in seen
        with pytest.raises(OSError, match="read none of its input"):
            for _ in range(200):  # far more than the tty's input queue holds
                d.write(b"x" * 1000)
    finally:
        d.close()


@pytest.mark.timeout(60)
def test_a_program_that_closes_its_terminal_before_it_exits_keeps_its_exit_code(pilot):
    """The terminal's EOF came a moment before the program was reaped, and it was sent SIGINT: 'killed by SIGINT'
    for a program that exited by itself (1 run in 5 of `bash -c "touch out.txt"` on a loaded machine)."""
    r = pilot(["bash", "-c", "exec 0<&- 1>&- 2>&-; sleep 0.3; exit 7"], rules="- {match: 'nothing', reply: x}\n")
    [exited] = r.of("program_exited")
    assert (exited["code"], exited["signal"]) == (7, None) and r.code == 1


def _output(tmp_path, script: str) -> str:
    d = PtyDriver(["sh", "-c", script], cwd=str(tmp_path), env=None, cols=80, rows=24)
    try:
        return read_all(d).decode()
    finally:
        d.close()


@pytest.fixture
def pilot_ignoring():
    """The pilot's process as a run in the background of a script, under nohup, or from a thread that blocks signals
    leaves it: SIGINT and SIGHUP ignored, SIGTERM blocked (and SIGPIPE ignored, as Python always has it); SIGPROF, one
    the pilot never names, ignored too."""
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPROF)}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for sig, handler in before.items():
        signal.signal(sig, handler)


def test_the_program_takes_its_signals_as_on_a_terminal_of_its_own(tmp_path, pilot_ignoring):
    """`yes | head -1` said "yes: standard output: Broken pipe" under the pilot (Python's ignored SIGPIPE, kept by
    exec), and a program started by a run that ignored Ctrl-C shrugged off the SIGINT the pilot stops it with."""
    out = _output(tmp_path, "yes | head -1; grep -E '^Sig(Ign|Blk)' /proc/self/status")
    assert "Broken pipe" not in out
    assert "SigIgn:\t0000000000000000" in out and "SigBlk:\t0000000000000000" in out, out


def test_mirror_what_the_program_ignores_itself_stays_ignored_in_what_it_starts(tmp_path):
    """The reset is the program's start only: a program that ignores SIGINT itself hands that on, as it always did."""
    out = _output(tmp_path, "trap '' INT; sh -c \"grep -E '^SigIgn' /proc/self/status\"")
    ignored = int(out.split("SigIgn:")[1].split()[0], 16)
    assert ignored & (1 << (signal.SIGINT - 1)), out
