"""The command line as a new user meets it: typos, help, run folders, the list of past runs. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ASK = 'read -p "Continue? [y/n] " a; echo "got:$a"'


def cp(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`cursor-pilot ARGS` as a process, stdin closed (nobody at the terminal), no API keys."""
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return subprocess.run([sys.executable, "-m", "cursorpilot", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env={**base, **(env or {})})


@pytest.fixture
def ok_rules(tmp_path) -> Path:
    path = tmp_path / "ok.yaml"
    path.write_text("- {id: go, match: 'Continue', reply: y}\n")
    return path


# -- item 3: options ---------------------------------------------------------------------------------------------------
def test_mistyped_option_before_the_command_is_refused_not_started_as_the_program(tmp_path, ok_rules):
    """`--timout 5s -- sleep 3` said `cannot start '--timout'`: the typo became the program."""
    p = cp("run", "--rules", str(ok_rules), "--timout", "5s", "--", "sleep", "3", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "No such option: --timout" in p.stderr and "--timeout" in p.stderr
    assert "cannot start" not in p.stdout + p.stderr
    assert not (tmp_path / "runs").exists()


def test_bare_command_after_options_takes_everything_after_it(tmp_path, ok_rules):
    """Without `--`, the first word that is not an option is the program; what follows is its own, options included."""
    p = cp("run", "--quiet", "--rules", str(ok_rules), "--log", "log", "--timeout", "30s",
           "bash", "-c", f'echo "args:$*"; {ASK}', "sh", "--timeout", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    raw = (tmp_path / "log" / "session.raw").read_bytes()
    assert b"args:--timeout --quiet" in raw and b"got:y" in raw


# -- item 9: run folders ------------------------------------------------------------------------------------------------
def test_reused_log_folder_is_refused_not_appended_to(tmp_path, ok_rules):
    """A second run into the same --log was appended to the first one's transcript."""
    args = ("run", "--quiet", "--rules", str(ok_rules), "--log", "log", "--", "bash", "-c", ASK)
    assert cp(*args, cwd=tmp_path).returncode == 0
    before = (tmp_path / "log" / "transcript.jsonl").read_text()
    p = cp(*args, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == ("cursor-pilot: error: --log log already holds a run: give another folder, "
                                "or continue that run with --resume log/manifest.json")
    assert (tmp_path / "log" / "transcript.jsonl").read_text() == before
