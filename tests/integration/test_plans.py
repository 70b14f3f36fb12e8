"""Plans, the manifest, resume after kill -9, dry run, and faults: each ends clearly and leaves valid records."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cursorpilot.plan import load_plan
from cursorpilot.records.transcript import read_transcript

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("plan", sorted((ROOT / "plans").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_plan_is_valid(plan):
    assert load_plan(plan).steps


def pilot_cmd(*args):
    return [sys.executable, "-m", "cursorpilot", "run", "--quiet", *args]


def run_plan(tmp_path, text, *args, name="plan", timeout=90):
    plan = tmp_path / f"{name}.yaml"
    plan.write_text(text)
    log = tmp_path / f"log-{name}"
    p = subprocess.run(pilot_cmd("--log", str(log), "--plan", str(plan), "--provider", "rules", *args), cwd=tmp_path, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=timeout)
    return p, log


def manifest(log):
    return json.loads((log / "manifest.json").read_text())


def test_shipped_cursor_plan_runs_all_steps(tmp_path):
    p, log = run_plan(tmp_path, (ROOT / "plans" / "cursor-sim.yaml").read_text())
    assert p.returncode == 0, p.stdout + p.stderr
    m = manifest(log)
    assert [s["status"] for s in m["steps"]] == ["completed"] * 4
    assert m["status"] == "completed" and m["counters"]["answers"] == 6  # 5 in the task, 1 send
    assert (log / "steps" / "01-prepare.log").read_text().strip().endswith("preparing the workspace")
    sends = [r for r in read_transcript(log / "transcript.jsonl") if r.type == "answer" and r.source == "plan:send"]
    assert len(sends) == 1


RESUMABLE_PLAN = """
name: three
steps:
  - name: one
    run: ["echo one >> marker.txt"]
  - name: two
    drive: bash -c 'if [ ! -e resumed.flag ]; then echo waiting; sleep 60; fi; read -p "Continue? [y/n] " a; echo "got:$a"'
  - name: three
    run: ["echo three >> marker.txt"]
answers:
  - {match: 'Continue', reply: y}
"""


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_kill_9_during_step_2_then_resume(tmp_path):
    plan = tmp_path / "three.yaml"
    plan.write_text(RESUMABLE_PLAN)
    log = tmp_path / "log"
    proc = subprocess.Popen(pilot_cmd("--log", str(log), "--plan", str(plan)), cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    raw = log / "session-02.raw"
    wait_for(lambda: raw.exists() and b"waiting" in raw.read_bytes())
    assert manifest(log)["steps"][1]["status"] == "running"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    with open(log / "transcript.jsonl", "a") as fh:
        fh.write('{"type": "torn-by-the-cra')  # what a crash mid-write leaves
    (tmp_path / "resumed.flag").write_text("")
    p = subprocess.run(pilot_cmd("--resume", str(log / "manifest.json")), cwd=tmp_path, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "marker.txt").read_text().split() == ["one", "three"]  # step 1 ran once
    m = manifest(log)
    assert [s["status"] for s in m["steps"]] == ["completed"] * 3
    assert [a["status"] for a in m["steps"][1]["attempts"]] == ["interrupted", "completed"]
    assert m["resumes"] == 1
    records = read_transcript(log / "transcript.jsonl")  # parses from start to end
    types = [r.type for r in records]
    assert "run_resumed" in types and types[-1] == "run_finished"
    assert [r.seq for r in records] == list(range(1, len(records) + 1))


def test_resume_refuses_a_changed_plan_unless_forced(tmp_path):
    p, log = run_plan(tmp_path, "name: x\nsteps:\n  - {name: a, run: ['exit 3']}\n")
    assert p.returncode == 1
    (tmp_path / "plan.yaml").write_text("name: x\nsteps:\n  - {name: a, run: ['true']}\n")
    again = subprocess.run(pilot_cmd("--resume", str(log / "manifest.json")), cwd=tmp_path, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "changed" in again.stderr
    forced = subprocess.run(pilot_cmd("--resume", str(log / "manifest.json"), "--force"), cwd=tmp_path, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert forced.returncode == 0, forced.stdout + forced.stderr


def test_dry_run_types_nothing_and_runs_no_commands(tmp_path):
    text = """
name: preview
answers: [{match: 'Continue', reply: y}, {match: 'Workspace Trust', reply: a}]
steps:
  - {name: setup, run: ["touch should-not-exist"]}
  - {name: line, drive: "bash -c 'read -p \\"Continue? [y/n] \\" a'"}
  - {name: agent, drive: "cursor-pilot sim cursor approvals", profile: cursor}
"""
    p, log = run_plan(tmp_path, text, "--dry-run")
    assert p.returncode == 0, p.stdout + p.stderr
    assert not (tmp_path / "should-not-exist").exists()
    records = read_transcript(log / "transcript.jsonl")
    assert [r.type for r in records if r.type == "keys_sent"] == []
    would = [(r.reply, r.source) for r in records if r.type == "would_send"]
    assert would == [("y", "rules:#1"), ("a", "rules:#2")]
    assert [r.command for r in records if r.type == "would_run"] == ["touch should-not-exist"]
    assert "would type" in p.stdout and "Continue? [y/n]" in p.stdout


def test_a_dry_run_says_plainly_that_it_runs_each_program_up_to_its_first_question(tmp_path):
    """openssl wrote its key file in a dry run: the program runs until its first question. The console says so, and
    what the program did before asking is done; what it would do after the answer is not."""
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--dry-run", "--log", "log", "--answer", "Name=Ada", "--", "bash",
                        "-c", 'touch before-asking; read -p "Name? " n; touch after-the-answer'],
                       cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "dry run: each step's program is started and runs until its first question, then it is stopped" in " ".join(p.stdout.split())
    assert "What a program does before it asks (writes a file, makes a key), it does." in " ".join(p.stdout.split())
    assert (tmp_path / "before-asking").exists() and not (tmp_path / "after-the-answer").exists()
    assert "each program ran up to its first question" in " ".join(p.stdout.split())


def test_plan_and_command_cannot_be_combined(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: x\nsteps: [{name: a, run: ['true']}]\n")
    p = subprocess.run(pilot_cmd("--plan", str(plan), "--", "true"), capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2 and "can't be combined" in p.stderr


@pytest.mark.parametrize("text,needle", [
    ("name: x\nsteps: [\n", ":3:1: invalid YAML"),
    ("name: x\nsteps:\n  - name: a\n    run: [x]\n    drive: y\n", ":3:5: steps.0: a step needs exactly one of run, cursor, drive"),
    ("name: x\nsteps:\n  - name: a\n    run: ['echo ${nope}']\n", ":4:11: unknown variable ${nope}"),
    ("name: x\nsteps:\n  - name: a\n    run: [x]\n    timeout: soon\n", ":5:5: steps.0.timeout: invalid duration 'soon'"),
    ("name: x\nsteps:\n  - name: a\n    run: [x]\n    sned: hi\n", ":5:5: steps.0.sned: Extra inputs are not permitted"),
    ("name: x\nsteps:\n  - {name: a, drive: 'true', profile: nosuch}\n", "unknown profile 'nosuch'"),
    ("name: x\nsteps:\n  - name: a\n    drive: claude hi\n    done_when: {run: pytest, timout: 1m}\n",
     ":5:30: steps.0.done_when.timout: Extra inputs are not permitted"),
    ("name: x\nsteps:\n  - name: a\n    drive: claude\n    done_when:\n      run: pytest\n      timeout: soon\n",
     ":7:7: steps.0.done_when.timeout: invalid duration 'soon'"),
    ("name: x\nsteps:\n  - name: a\n    drive: claude hi\n    done_when: '  '\n", ":5:5: steps.0.done_when.run: done_when needs a command"),
    ("name: x\nsteps:\n  - name: a\n    run: [x]\n    done_when: pytest\n", ":3:5: steps.0: done_when and max_turns belong to a step"),
])
def test_bad_plans_exit_2_with_line_and_column(tmp_path, text, needle):
    p, log = run_plan(tmp_path, text)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], p.stderr


def test_missing_plan_file(tmp_path):
    p = subprocess.run(pilot_cmd("--plan", "nope.yaml"), capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip() == "cursor-pilot: error: nope.yaml: file not found"


@pytest.mark.parametrize("step,code,needle", [
    ("{name: fails, run: ['echo oops; exit 3']}", 1, "exited 3"),
    ("{name: tolerated, run: ['exit 3'], allow_failure: true}", 0, "failure allowed: `exit 3` exited 3"),
    ("{name: ok, run: ['true']}\n  - {name: missing, drive: /no/such/program}", 2, "cannot start"),
    ("{name: crash, drive: \"bash -c 'echo hi; kill -SEGV $$'\"}", 1, "SIGSEGV"),
    ("{name: slow, run: ['sleep 30'], timeout: 1s}", 4, "timed out"),
])
def test_faults_end_clearly_with_valid_records(tmp_path, step, code, needle):
    p, log = run_plan(tmp_path, f"name: x\nsteps:\n  - {step}\n")
    assert p.returncode == code, p.stdout + p.stderr
    assert needle in p.stdout
    m = manifest(log)
    assert m["exit_code"] == code and needle in (m["reason"] + m["steps"][-1]["attempts"][-1]["reason"] + m["steps"][-1]["status"])
    records = read_transcript(log / "transcript.jsonl")
    assert records[-1].type == "run_finished" and records[-1].exit_code == code


def test_step_expect_fails_when_the_pattern_is_not_seen(tmp_path):
    p, log = run_plan(tmp_path, "name: x\nsteps:\n  - {name: a, drive: \"bash -c 'echo hello'\", expect: {regex: 'goodbye'}}\n")
    assert p.returncode == 1 and "goodbye" in p.stdout


def test_disk_full_log_directory(tmp_path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        code = "import sys\nfor i in range(20000): print('x' * 60)\ninput('Continue? [y/n] ')"
        p = subprocess.run(pilot_cmd("--log", str(mnt / "log"), "--provider", "rules", "--", sys.executable, "-c", code),
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path)
        assert p.returncode == 1
        assert p.stderr.strip().splitlines()[-1].startswith("cursor-pilot: error: cannot write the run's records")
        assert "Traceback" not in p.stderr
        lines = (mnt / "log" / "transcript.jsonl").read_text().splitlines()
        assert all(json.loads(line) for line in lines[:-1])  # what was written stays valid
    finally:
        subprocess.run(["umount", str(mnt)])


def test_manifest_redacts_a_token_in_argv_and_resume_asks_for_the_command_again(tmp_path):
    """manifest.json stored the command line as given: a token in argv landed on disk."""
    token = "ghp_" + "a1B2c3D4e5" * 4
    command = ["bash", "-c", 'read -p "Push with $0? [y/n] " a; echo "got:$a"', token]
    log = tmp_path / "log"
    rules = tmp_path / "r.yaml"
    rules.write_text("- {match: 'Push with', reply: 'n'}\n")
    p = subprocess.run(pilot_cmd("--log", str(log), "--rules", str(rules), "--", *command), cwd=tmp_path, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (log / "manifest.json").read_text()
    assert token not in text and "[REDACTED]" in text
    assert token not in (log / "transcript.jsonl").read_text()
    again = subprocess.run(pilot_cmd("--resume", str(log / "manifest.json")), cwd=tmp_path, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "give it again" in again.stderr
    given = subprocess.run(pilot_cmd("--resume", str(log / "manifest.json"), "--force", "--", *command), cwd=tmp_path,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert given.returncode == 0, given.stdout + given.stderr
