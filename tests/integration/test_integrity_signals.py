"""Every byte recorded, every exit status mapped exactly, signals handled, bad input refused in one line."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cursorpilot.events import NullSink
from cursorpilot.providers.script import ScriptProvider
from cursorpilot.plan import single_command_plan
from cursorpilot.runner.run import Runner
from cursorpilot.runner.spec import RunSpec

pytestmark = pytest.mark.timeout(120)


def run_inprocess(tmp_path: Path, command: list[str], name: str):
    spec = RunSpec(plan=single_command_plan(command), governing_prompt="", provider=ScriptProvider([]), run_id=name,
                   log_dir=tmp_path / name, argv=[], options={}, profile="generic")
    return Runner(spec, NullSink()).run(), spec.log_dir


def test_100k_lines_every_byte_in_session_raw(tmp_path):
    code = "import sys\nfor i in range(100000): sys.stdout.write(f'line {i:06d} ' + 'x' * 40 + '\\n')"
    outcome, log = run_inprocess(tmp_path, [sys.executable, "-c", code], "flood")
    assert outcome.exit_code == 0
    expected = "".join(f"line {i:06d} " + "x" * 40 + "\r\n" for i in range(100000)).encode()
    raw = (log / "session.raw").read_bytes()
    assert len(raw) == len(expected) and raw == expected


@pytest.mark.parametrize("script,code,sig,ours", [
    ("exit 0", 0, None, 0),
    ("exit 3", 3, None, 1),
    ("kill -TERM $$", None, signal.SIGTERM, 1),
])
def test_exit_status_is_reported_exactly_30_times(tmp_path, script, code, sig, ours):
    import json

    for i in range(30):
        outcome, log = run_inprocess(tmp_path, ["sh", "-c", f"echo run {i}; {script}"], f"r{i}")
        assert outcome.exit_code == ours
        last = json.loads((log / "transcript.jsonl").read_text().splitlines()[-1])
        assert last["type"] == "run_finished"
        assert (last["child_exit_code"], last["child_signal"]) == (code, sig)
        assert (log / "session.raw").read_bytes() == f"run {i}\r\n".encode()


def wait_for(predicate, timeout=15.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def group_alive(pgid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def start_pilot(tmp_path, command):
    log = tmp_path / "sig"
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {match: x, reply: y}\n")
    proc = subprocess.Popen([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", str(log), "--rules", str(rules), "--", *command],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: b"ready" in (log / "session.raw").read_bytes() if (log / "session.raw").exists() else False, what="program start")
    import json
    records = lambda: [json.loads(line) for line in (log / "transcript.jsonl").read_text().splitlines()]  # noqa: E731
    pid = next(r["pid"] for r in records() if r["type"] == "program_started")
    return proc, records, pid


def test_ctrl_c_interrupts_the_program_group_then_kills_it(tmp_path):
    # the program ignores SIGINT, so the pilot must escalate to SIGKILL after its grace period
    proc, records, pid = start_pilot(tmp_path, ["bash", "-c", "trap '' INT; sleep 300 & echo ready; wait"])
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130
    recs = records()
    assert recs[-1]["type"] == "run_finished" and recs[-1]["exit_code"] == 130
    assert any(r["type"] == "kill" for r in recs)
    assert not group_alive(pid), "orphans left in the program's process group"


def test_second_ctrl_c_kills_at_once(tmp_path):
    proc, records, pid = start_pilot(tmp_path, ["bash", "-c", "trap '' INT; echo ready; sleep 300"])
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: any(r["type"] == "closing" for r in records()), what="closing")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130
    assert any(r["type"] == "kill" and r["reason"] == "second interrupt" for r in records())
    assert not group_alive(pid)


@pytest.mark.parametrize("args,needle", [
    (["--prompt", "prompts/missing.md", "--rules", "RULES", "--", "true"], "prompt file not found"),
    (["--detectors", "BADRX", "--rules", "RULES", "--", "true"], "invalid regex"),
    (["--profile", "nosuch", "--rules", "RULES", "--", "true"], "unknown profile"),
    (["--provider", "nosuch", "--", "true"], "unknown provider"),
    (["--rules", "RULES", "--timeout", "soon", "--", "true"], "invalid duration"),
])
def test_bad_input_exits_2_with_one_clear_line(tmp_path, args, needle):
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {match: x, reply: y}\n")
    badrx = tmp_path / "bad.yaml"
    badrx.write_text("rules:\n  - {id: r1, kind: question, any: ['[oops']}\n")
    args = [str(rules) if a == "RULES" else str(badrx) if a == "BADRX" else a for a in args]
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", str(tmp_path / "log"), *args],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr


def test_version_is_fast_to_reach_and_imports_no_vendor_sdk():
    code = "import sys, runpy; sys.argv=['cursor-pilot','--version']\ntry: runpy.run_module('cursorpilot', run_name='__main__')\nexcept SystemExit: pass\nprint(sorted(m for m in ('openai','anthropic','pexpect','pyte') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout
    assert "cursor-pilot 0.1.0" in out and out.strip().endswith("[]")


@pytest.mark.parametrize("program, why", [
    ("/no/such/program", "no such file"),
    ("no-such-program", "not found on PATH"),
    ("./bad-interp.sh", "its #! line names an interpreter that does not exist: /nonexistent/interp"),
    ("./no-x-bit.sh", "it is not executable (no execute permission: chmod +x ./no-x-bit.sh)"),
    ("./env-missing.sh", "its #! line runs 'nosuch-interp-xyz', which is not found on PATH"),
    ("./adir", "it is a directory"),
])
def test_a_program_that_cannot_start_exits_2_and_leaves_no_run_folder(tmp_path, program, why):
    """A failed start created runs/<id>/ with a transcript of nothing; a later step that can't start is recorded
    (test_plans.py::test_faults_end_clearly_with_valid_records). A script whose #! names a missing interpreter was a
    traceback (OSError Errno 2), exit 1 and an `unfinished` run folder; a file without its execute bit was reported as
    "no such executable file"."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {match: x, reply: y}\n")
    for name, text, mode in (("bad-interp.sh", "#!/nonexistent/interp\necho hi\n", 0o755), ("no-x-bit.sh", "#!/bin/sh\necho hi\n", 0o644),
                             ("env-missing.sh", "#!/usr/bin/env nosuch-interp-xyz\n", 0o755)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(mode)
    (tmp_path / "adir").mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--rules", str(rules), "--", program],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd=tmp_path, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"cursor-pilot: error: cannot start {program!r}: {why}"
    assert not (tmp_path / "runs").exists() and not (tmp_path / "state").exists()


def test_a_later_step_whose_interpreter_is_missing_ends_the_run_with_exit_2_and_one_line(tmp_path):
    """The same missing interpreter in a plan's second step: no traceback, exit 2, the step recorded as failed."""
    (tmp_path / "bad.sh").write_text("#!/nonexistent/interp\n")
    (tmp_path / "bad.sh").chmod(0o755)
    (tmp_path / "plan.yaml").write_text("name: two\nsteps:\n  - {name: one, run: ['true']}\n  - {name: two, drive: ['./bad.sh']}\n")
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--provider", "rules", "--log", "log", "--plan", "plan.yaml"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert "cannot start './bad.sh': its #! line names an interpreter that does not exist: /nonexistent/interp" in p.stdout
    manifest = json.loads((tmp_path / "log" / "manifest.json").read_text())
    assert (manifest["status"], manifest["exit_code"], manifest["steps"][1]["status"]) == ("failed", 2, "failed")


def test_a_one_word_prompt_that_names_no_file_is_refused(tmp_path):
    """`--prompt nosuchprompt` (a typo, no extension) silently became the governing prompt's text."""
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", "log", "--prompt", "nosuchprompt", "--", "true"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip() == ("cursor-pilot: error: prompt file not found: nosuchprompt "
                                                       "(--prompt takes a file, or text of more than one word)")
    assert not (tmp_path / "log").exists()
    # its mirror: text of several words, and a file named by one word, are both governing prompts
    (tmp_path / "careful").write_text("Be careful.")
    for value in ("Be careful.", "careful"):
        ok = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--quiet", "--log", f"log-{len(value)}", "--prompt", value, "--", "true"],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd=tmp_path)
        assert ok.returncode == 0, ok.stderr
        started = json.loads((tmp_path / f"log-{len(value)}" / "transcript.jsonl").read_text().splitlines()[0])
        assert started["governing_prompt"] == "Be careful."


def test_a_pilot_killed_in_a_flood_leaves_a_valid_cast_and_every_flushed_byte(tmp_path):
    import json

    flood = "import os, time\nprint('ready', flush=True)\ntime.sleep(0.3)\ni = 0\nwhile True:\n    os.write(1, b'line %d\\n' % i)\n    i += 1\n"
    proc, records, pid = start_pilot(tmp_path, [sys.executable, "-c", flood])
    raw_path, cast_path = tmp_path / "sig" / "session.raw", tmp_path / "sig" / "session.cast"
    wait_for(lambda: raw_path.stat().st_size > 2_000_000, what="2 MB of flood in session.raw")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=20)
    wait_for(lambda: not group_alive(pid), what="the program to die with its pty")
    raw = raw_path.read_bytes()
    lines = raw.split(b"\r\n")
    assert lines[0] == b"ready" and lines[1:-1] == [b"line %d" % i for i in range(len(lines) - 2)]
    cast = cast_path.read_text().splitlines()
    events = [json.loads(line) for line in cast[1:]]  # every line whole: the header, then events
    assert json.loads(cast[0])["version"] == 2 and events
    assert raw.decode().startswith("".join(e[2] for e in events if e[1] == "o"))  # the cast: a prefix of what was recorded
    assert records()[0]["type"] == "run_started"  # the transcript parses line by line too
