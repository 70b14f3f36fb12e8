"""Ctrl-C stops a run the same way in every state and on every terminal kind, with the resident pilot on (issue 48):
exit 130 and nothing of the program left, under script(1) and in tmux, while the program runs, while it sits in raw
mode at a question the model is deciding, and while the pilot asks the person at the terminal.

What was found: a resident pilot started by a run that ignored Ctrl-C (in the background of a script, under nohup)
ignores it, and so did every run it served until the run set its own handler, and every program they started (exec
keeps what is ignored). A Ctrl-C at the program's first question, before the run had set its handler, was lost (the run
went on to its end, exit 0), and a program shrugged off the SIGINT that ends it (SIGKILL 3 s later). The served child
now takes the signals as the run's own process has them (startup/pilotd.py `_signals`), and the program starts with
its signals as on a terminal of its own, whatever its run ignored (channels/pty/driver.py `fresh_signals`)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cursorpilot.channels.program_env import CI_MARKERS
from cursorpilot.channels.pty.driver import PtyDriver
from tests.fakes.llm_server import FakeLLM, Step
from tests.helpers import KEY

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")]

RUNNING = "import os, time\nopen('prog.pid', 'w').write(str(os.getpid()))\nprint('working', flush=True)\ntime.sleep(60)\n"
RAW_QUESTION = ("import os, sys, tty\ntty.setraw(0)\nopen('prog.pid', 'w').write(str(os.getpid()))\n"
                "sys.stdout.write('\\x1b[?1049h\\x1b[2J\\x1b[3;5HDeploy the build to production? [y/n] '); sys.stdout.flush()\n"
                "os.read(0, 1)\n")
# what the program's process ignores, and whether it runs under the resident pilot (its run's parent is the daemon)
SIGNS = ("import os\nignored = int(open('/proc/self/status').read().split('SigIgn:')[1].split()[0], 16)\n"
         "run = open(f'/proc/{os.getppid()}/stat').read().rsplit(')', 1)[1].split()[1]\n"
         "open('signs.txt', 'w').write(f\"{ignored & 2} {open(f'/proc/{run}/cmdline').read()}\")\n")


@pytest.fixture
def env():
    """A resident pilot of this test's own (its socket in a private runtime folder with a short path: daemons.folder),
    ended at the idle time. A person's terminal: their shell is bash (script(1) and tmux run the line with $SHELL, and
    CI may set none: dash, Ctrl-C'd as it waits, dies before it writes the run's exit code), and no CI marker (with
    one, the pilot never asks the person at the terminal)."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    runtime = tempfile.mkdtemp(prefix="cp-", dir="/tmp")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "ANTHROPIC_", "CURSORPILOT_RESIDENT", "TMUX")) and k not in CI_MARKERS}
    yield {**base, "XDG_RUNTIME_DIR": runtime, "CURSORPILOT_RESIDENT_IDLE": "30", "SHELL": shutil.which("bash")}
    shutil.rmtree(runtime, ignore_errors=True)


def _program(tmp_path: Path, body: str) -> str:
    (tmp_path / "prog.py").write_text(SIGNS + body)
    return f"{shlex.quote(sys.executable)} prog.py"


def _run_line(tmp_path: Path, program: str, *opts: str) -> str:
    """The shell line a person types: the run, then its exit code where the test reads it."""
    cp = f"{shlex.quote(sys.executable)} -m cursorpilot run --log {tmp_path / 'log'} {' '.join(map(shlex.quote, opts))}"
    return f"{cp} -- {program}; echo $? > exit.txt"


def _warm(tmp_path: Path, env: dict, ignore_ctrl_c: bool = False) -> None:
    """A first run, which runs itself and starts the resident pilot for the runs after it (as a new user's first run),
    from a process that ignores Ctrl-C or not; then until it answers."""
    subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(tmp_path / "warm"), "--", "true"],
                   env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                   preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_ctrl_c else None)
    deadline = time.monotonic() + 30
    while not list((Path(env["XDG_RUNTIME_DIR"]) / "cursor-pilot").glob("pilot-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)


def _until(read, shown: str, deadline: float) -> str:
    text = ""
    while shown not in text and time.monotonic() < deadline:
        text = read()
    assert shown in text, text[-2000:]
    return text


def _ended(tmp_path: Path, read, deadline: float) -> None:
    """Until the shell has written the run's exit code (the terminal read meanwhile, so that nothing blocks on it)."""
    done = tmp_path / "exit.txt"
    while not (done.exists() and done.read_text().endswith("\n")) and time.monotonic() < deadline:
        read() or time.sleep(0.02)
    assert done.exists(), "the run did not end after Ctrl-C"


def _under_script(tmp_path: Path, env: dict, line: str, shown: str) -> float:
    """script(1) on a terminal of ours; Ctrl-C typed once `shown` is on it. When the run ended, after the key."""
    term = PtyDriver(["script", "-qfec", line, "/dev/null"], cwd=str(tmp_path), env=env, cols=120, rows=40)
    out = b""

    def read() -> str:
        nonlocal out
        out += term.read(0.05) or b""
        return out.decode(errors="replace")

    try:
        _until(read, shown, time.monotonic() + 40)
        time.sleep(0.3)  # not a wait for anything: a person's reaction time, at the least, after the state is shown
        term.write(b"\x03")
        pressed = time.monotonic()
        _ended(tmp_path, read, pressed + 20)
        return time.monotonic() - pressed
    finally:
        term.terminate(2)
        term.close()


def _under_tmux(tmp_path: Path, env: dict, line: str, shown: str) -> float:
    """A tmux session of the test's own server; `tmux send-keys C-c` once `shown` is in its pane."""
    tmux = ["tmux", "-L", f"cp-test-{os.getpid()}", "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "40", "-c", str(tmp_path), line], env=env, check=True)
    try:
        def read() -> str:
            return subprocess.run([*tmux, "capture-pane", "-p"], env=env, capture_output=True, text=True).stdout

        _until(read, shown, time.monotonic() + 40)
        time.sleep(0.3)
        subprocess.run([*tmux, "send-keys", "C-c"], env=env, check=True)
        pressed = time.monotonic()
        _ended(tmp_path, lambda: "", pressed + 20)
        return time.monotonic() - pressed
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)


TERMINALS = {"script": _under_script, "tmux": _under_tmux}


def _left(tmp_path: Path) -> bool:
    """The program still runs (a zombie has ended)."""
    deadline = time.monotonic() + 3
    pid = int((tmp_path / "prog.pid").read_text())
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


def _check(tmp_path: Path, took: float) -> None:
    assert (tmp_path / "exit.txt").read_text().strip() == "130"
    assert took < 5.0, f"the run ended {took:.1f}s after Ctrl-C"
    assert not _left(tmp_path)
    ignored, run_parent = (tmp_path / "signs.txt").read_text().split(" ", 1)
    assert "pilotd" in run_parent, f"not served by the resident pilot: {run_parent!r}"


@pytest.mark.parametrize("terminal", sorted(TERMINALS))
def test_ctrl_c_while_the_program_runs_ends_the_run_with_130(tmp_path, env, terminal):
    if shutil.which(terminal) is None:
        pytest.skip(f"no {terminal}")
    _warm(tmp_path, env)
    took = TERMINALS[terminal](tmp_path, env, _run_line(tmp_path, _program(tmp_path, RUNNING)), "working")
    _check(tmp_path, took)


@pytest.mark.parametrize("terminal", sorted(TERMINALS))
def test_ctrl_c_while_a_raw_mode_program_waits_for_the_models_answer_ends_the_run_with_130(tmp_path, env, terminal):
    if shutil.which(terminal) is None:
        pytest.skip(f"no {terminal}")
    _warm(tmp_path, env)
    with FakeLLM(refuse=lambda request: Step(delay=30)) as server:
        line = _run_line(tmp_path, _program(tmp_path, RAW_QUESTION), "--provider", "openai", "--base-url", server.url + "/v1")
        took = TERMINALS[terminal](tmp_path, {**env, "OPENAI_API_KEY": KEY}, line, "production?")
    _check(tmp_path, took)


@pytest.mark.parametrize("terminal", sorted(TERMINALS))
def test_ctrl_c_while_the_pilot_asks_the_person_at_the_terminal_ends_the_run_with_130(tmp_path, env, terminal):
    if shutil.which(terminal) is None:
        pytest.skip(f"no {terminal}")
    _warm(tmp_path, env)
    took = TERMINALS[terminal](tmp_path, env, _run_line(tmp_path, _program(tmp_path, RAW_QUESTION)), "Ctrl-D")
    _check(tmp_path, took)


def test_a_resident_pilot_started_by_a_run_that_ignored_ctrl_c_serves_runs_that_take_it(tmp_path, env):
    """The regression: started from a run in the background of a script (SIGINT ignored), the resident pilot handed
    that to every run it served and every program they started: the program ignored SIGINT, and Ctrl-C before the run
    set its handler was lost."""
    _warm(tmp_path, env, ignore_ctrl_c=True)
    took = _under_script(tmp_path, env, _run_line(tmp_path, _program(tmp_path, RUNNING)), "working")
    _check(tmp_path, took)
    assert took < 2.0, f"{took:.1f}s: the program ignored its SIGINT and was killed after the grace"
    ignored, _ = (tmp_path / "signs.txt").read_text().split(" ", 1)
    assert ignored == "0", "the program ignores SIGINT"


@pytest.mark.parametrize("resident", ["served by a resident started ignoring Ctrl-C", "CURSORPILOT_RESIDENT=0"])
def test_ctrl_c_as_the_program_starts_before_the_run_counts_it_ends_the_run_with_130(tmp_path, env, resident):
    """The program starts first (start.py), and Ctrl-C can come before the run has set its handler: served by a resident
    that ignored it, the run went on to its end and exited 0 (its question answered); run here, it ended in a
    traceback of KeyboardInterrupt. The program signals its run itself, at once, as a Ctrl-C typed then would."""
    if resident == "CURSORPILOT_RESIDENT=0":
        env = {**env, "CURSORPILOT_RESIDENT": "0"}
    else:
        _warm(tmp_path, env, ignore_ctrl_c=True)
    body = "echo $$ > prog.pid; kill -INT $PPID; read -p 'Deploy now? [y/n] ' a; echo $a > out.txt"
    r = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(tmp_path / "log"), "--answer",
                        "Deploy now=y", "--", "bash", "-c", body], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 130, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out.txt").exists()
    assert not _left(tmp_path)
