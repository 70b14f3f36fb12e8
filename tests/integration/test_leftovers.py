"""Nothing the program started is left running: detached daemons included, and said so in the transcript."""

import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)
NO_RULES = "- {match: 'never asked', reply: n}\n"

DAEMON = textwrap.dedent("""
    import os, signal, sys, time
    pidfile, ignore_term = sys.argv[1], sys.argv[2] == "1"
    if os.fork() == 0:            # detach the way daemons do: new session, double fork
        os.setsid()
        if os.fork() == 0:
            if ignore_term:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            with open(pidfile + ".tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.rename(pidfile + ".tmp", pidfile)
            time.sleep(300)
        os._exit(0)
    deadline = time.monotonic() + 10
    while not os.path.exists(pidfile) and time.monotonic() < deadline:
        time.sleep(0.01)
    print("daemon started", flush=True)
""")


def running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may never reap the ones we killed)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        text = stat.read_text()
    except OSError:
        return False
    return not text[text.rindex(")") + 2 :].startswith("Z")


@pytest.mark.parametrize("ignore_term, how", [(False, "SIGTERM"), (True, "SIGKILL")])
def test_a_detached_daemon_is_ended_when_the_step_ends(pilot, tmp_path, ignore_term, how):
    pidfile = tmp_path / f"daemon-{how}.pid"
    r = pilot([sys.executable, "-c", DAEMON, str(pidfile), "1" if ignore_term else "0"], rules=NO_RULES)
    assert r.code == 0, r.stdout + r.stderr
    pid = int(pidfile.read_text())
    assert not running(pid)
    [ended] = r.of("descendants_ended")
    assert ended["step"] == 1
    assert [(p["pid"], p["signal"]) for p in ended["processes"]] == [(pid, how)]
    assert ended["processes"][0]["command"].startswith(sys.executable)
    assert r.records()[-1]["type"] == "run_finished"


def test_what_run_steps_leave_running_ends_with_the_run(pilot, tmp_path):
    pidfile = tmp_path / "bg.pid"
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    plan = tmp_path / "plan.yaml"
    plan.write_text(textwrap.dedent(f"""
        name: leftovers
        steps:
          - name: start a server
            run: ["{sys.executable} {script} {pidfile} 0"]
          - name: use it
            drive: bash -c 'read -p "Continue? [y/n] " a; echo "got:$a"'
        answers:
          - {{match: 'Continue', reply: y}}
    """))
    r = pilot([], "--plan", str(plan))
    assert r.code == 0, r.stdout + r.stderr
    pid = int(pidfile.read_text())
    assert not running(pid)
    ends = r.of("descendants_ended")
    assert [(e["step"], [p["pid"] for p in e["processes"]]) for e in ends] == [(None, [pid])]  # at the end of the run, not of step 1


def test_a_clean_program_leaves_no_record(pilot):
    r = pilot(["bash", "-c", "echo hello"], rules=NO_RULES)
    assert r.code == 0 and r.of("descendants_ended") == []
