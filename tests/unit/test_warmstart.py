"""The resident pilot (cursorpilot/startup/warmstart.py, startup/pilotd.py): a plain run is run by a warm child of a daemon that a
run before it started; the child takes the run's own environment, folder and streams, its exit code comes back, the
signals the run's process gets reach it, and a daemon of another version is never asked."""

from __future__ import annotations

import io
import marshal
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cursorpilot.startup import warmstart

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def own_folder(tmp_path):
    """A socket folder of this test's own (a short path); the daemons started in it killed at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="cp-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "CURSORPILOT_RESIDENT"))}
    env.update(XDG_RUNTIME_DIR=str(runtime), CURSORPILOT_RESIDENT_IDLE="60", XDG_STATE_HOME=str(tmp_path / "state"))
    yield runtime / "cursor-pilot", env
    for sock in (runtime / "cursor-pilot").glob("*.sock"):
        for pid in _listeners(sock):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(runtime, ignore_errors=True)


def _listeners(sock: Path) -> list[int]:
    """The daemons started by this test: the processes whose command line names its socket."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(sock).encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _pilot(env: dict, cwd: Path, log: Path, script: str, *opts: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cursorpilot", "run", "--log", str(log), *opts, "--", "sh", "-c", script],
                            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _warm(folder: Path, env: dict, tmp_path: Path) -> Path:
    """A first run (run in its own process) starts the daemon, its socket bound at once: a run that connects before the
    daemon is warm waits for it (the tests' runs come right after, while it still imports, and are served)."""
    first = _pilot(env, tmp_path, tmp_path / "log0", "exit 0", "--quiet")
    assert first.wait(60) == 0, first.stderr.read()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        socks = list(folder.glob("pilot-*.sock"))
        if socks:
            return socks[0]
        time.sleep(0.05)  # waiting for a daemon to listen, with a deadline
    raise AssertionError("no resident pilot came up")


def test_a_run_is_served_by_a_warm_child_with_its_own_environment_folder_and_streams(own_folder, tmp_path):
    folder, env = own_folder
    _warm(folder, env, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    script = 'echo "parent $PPID"; echo "mine $MINE"; echo "in $(pwd)"; read -p "Go? " a; echo "got $a"; exit 3'
    run = _pilot({**env, "MINE": "second"}, work, tmp_path / "log1", script, "--answer", "Go\\?=y")
    out, err = run.communicate(timeout=60)
    here = _pilot({**env, "MINE": "second", "CURSORPILOT_RESIDENT": "0"}, work, tmp_path / "log2", script, "--answer", "Go\\?=y")
    out_here, err_here = here.communicate(timeout=60)
    assert run.returncode == here.returncode == 1  # the program's failure, the same either way
    raw = (tmp_path / "log1" / "session.raw").read_bytes().decode()
    parent = int(raw.split("parent ")[1].split()[0])
    assert parent != run.pid, "the run was not served by the resident pilot"  # (a run here is the program's parent)
    assert "mine second" in raw and f"in {work}" in raw and "got y" in raw
    assert "answer 'y'" in out and "answer 'y'" in out_here  # its stdout is the run's
    assert err.strip().splitlines()[-1:] == err_here.strip().splitlines()[-1:]


def test_the_signals_the_run_gets_reach_it(own_folder, tmp_path):
    folder, env = own_folder
    _warm(folder, env, tmp_path)
    started = tmp_path / "started"
    run = _pilot(env, tmp_path, tmp_path / "log1", f'echo $$ > {started}; exec sleep 60', "--quiet")
    transcript = tmp_path / "log1" / "transcript.jsonl"
    deadline = time.monotonic() + 30
    while not started.exists() or not started.read_text().strip() or "program_started" not in _text(transcript):
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.05)  # waiting for the run to drive its program, with a deadline
    program = int(started.read_text())
    run.send_signal(signal.SIGTERM)
    assert run.wait(30) == 130  # interrupted, as a run in its own process says
    deadline = time.monotonic() + 10
    while Path(f"/proc/{program}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{program}").exists(), "the program was left running"


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_a_daemon_of_another_version_is_never_asked(own_folder, tmp_path):
    folder, env = own_folder
    sock_path = _warm(folder, env, tmp_path)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(sock_path))
        socket.send_fds(sock, [warmstart.pack({"digest": "0" * 16})], [0, 1, 2])
        assert sock.makefile("rb").readline() == b"refused another version of cursor-pilot\n"


def test_a_python_with_debugging_options_or_another_locale_is_not_served(monkeypatch):
    monkeypatch.delenv("CURSORPILOT_RESIDENT", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    plain = warmstart.digest()
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    assert warmstart.digest() != plain
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    assert not warmstart.wanted()
    monkeypatch.delenv("PYTHONPROFILEIMPORTTIME")
    monkeypatch.setenv("CURSORPILOT_RESIDENT", "0")
    assert not warmstart.wanted()


def test_a_daemon_that_never_answers_is_not_waited_for_and_its_late_child_runs_nothing(own_folder, monkeypatch):
    """Its socket is bound when it is started, so a daemon wedged in its warm-up would hold every run: a run gives up
    after WARM_WAIT and runs itself, and the child the daemon forks at last gets no "go": the run is not run twice."""
    folder, env = own_folder
    monkeypatch.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
    monkeypatch.delenv("CURSORPILOT_RESIDENT", raising=False)
    monkeypatch.setattr(warmstart, "WARM_WAIT", 0.2)
    folder.mkdir(mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX) as wedged:
        wedged.bind(str(folder / f"pilot-{warmstart.digest()}.sock"))
        wedged.listen(8)  # listening, never accepting: a daemon still importing, for ever
        started = time.monotonic()
        assert warmstart.served() is None
        assert time.monotonic() - started < 5
        late, _ = wedged.accept()  # it warms at last
        with late:
            socket.recv_fds(late, 1 << 20, 3)  # the run's hello, still in the backlog
            try:  # the child says its pid: the run is gone (its sendall fails, and the child dies of it)...
                late.sendall(b"pid %d\n" % os.getpid())
                go = late.recv(3)
            except (BrokenPipeError, ConnectionResetError):
                go = b""
            assert go == b""  # ...or no "go" comes: the child exits without running the run


def test_the_hello_crosses_the_line_whole_and_garbage_is_no_hello():
    hello = {"digest": "ab" * 8, "argv": ["cursor-pilot", "run", "--", "x"], "env": {"A": "\udcff", "B": "line\nbreak"},
             "cwd": "/tmp", "umask": 0o022, "streams": [["utf-8", "strict"]] * 3}
    assert warmstart.unpack(warmstart.pack(hello)) == hello
    assert warmstart.unpack(b"") is None
    assert warmstart.unpack(b"\x00\x00\x00\x05junk!") is None
    assert warmstart.unpack(warmstart.pack(hello)[:20]) is None  # cut short
    listed = marshal.dumps(["not", "a", "dict"])
    assert warmstart.unpack(len(listed).to_bytes(4, "big") + listed) is None


@pytest.mark.parametrize(("said", "code"), [(b"exit 3\n", 3), (b"exit -1\n", -1), (b"", 1), (b"exit\n", 1), (b"garbage 7\n", 1)])
def test_the_run_ends_with_the_exit_code_its_child_said_and_with_1_and_a_line_when_it_said_none(said, code, monkeypatch, capsys):
    monkeypatch.setattr(warmstart.signal, "signal", lambda *a: None)  # (its handlers pass signals on to the child)
    assert warmstart._wait(io.BytesIO(said)) == code
    assert ("ended without its exit code" in capsys.readouterr().err) == (code == 1)
