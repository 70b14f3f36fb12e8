"""A stopped program is said (issue 48): a program stopped by a signal (SIGSTOP, or SIGTTIN when a child of it reads
the terminal from the background) sat silent until --timeout (40 s, exit 4). The kernel says it is stopped (`T` in
/proc/PID/stat): within a few seconds the run says so and ends, exit 3 (a person must continue it), with nothing of it
left running. The mirror: a script that stops a child of its own and continues it runs on to its end."""

from __future__ import annotations

import os

import pytest

from cursorpilot.channels.pty import quiet

pytestmark = pytest.mark.timeout(120)

AT_A_QUESTION = """
echo "Preparing the release notes."
printf 'Tag the release as v2.1? [y/n] '
kill -STOP $$
read a
echo "$a" > out.txt
"""
TTIN = """
echo "Preparing the release notes."
python3 -c 'import os, sys; os.setpgid(0, 0); open("child.pid", "w").write(str(os.getpid())); sys.stdin.read(1)'
echo "done" > out.txt
"""


def _left(tmp_path) -> list[int]:
    pids = [int((tmp_path / name).read_text()) for name in ("child.pid",) if (tmp_path / name).exists()]
    return [pid for pid in pids if os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] != "Z"]


@pytest.mark.parametrize("body", [AT_A_QUESTION, TTIN], ids=["kill -STOP $$ at a question", "SIGTTIN: a child reads from the background"])
def test_a_stopped_program_is_said_within_seconds_and_the_run_ends_for_a_person(pilot, tmp_path, body):
    """Silent until --timeout (exit 4), and no word of why."""
    r = pilot(["bash", "-c", body], "--answer", "Tag the release=y", "--timeout", "30s")
    assert r.code == 3, r.stdout + r.stderr
    assert "stopped by a signal" in r.stdout and "SIGSTOP" in r.stdout
    (said,) = [s for s in r.of("screen_state") if s["rule_id"] == "kernel.stopped"]
    started = r.of("program_started")[0]["mono"]
    assert said["mono"] - started < quiet.STOPPED_AFTER + 3
    assert not (tmp_path / "out.txt").exists() and _left(tmp_path) == []


def test_a_script_that_stops_a_child_and_continues_it_runs_to_its_end(pilot, tmp_path):
    """The mirror: a child stopped for a moment (1 s, less than STOPPED_AFTER) and continued by its parent is no stop."""
    body = "sleep 30 & kill -STOP $!; sleep 1; kill -CONT $!; kill $!; read -p 'Tag the release as v2.1? [y/n] ' a; echo \"$a\" > out.txt"
    r = pilot(["bash", "-c", body], "--answer", "Tag the release=y", "--timeout", "30s")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y\n" and not [s for s in r.of("screen_state") if s["rule_id"] == "kernel.stopped"]
