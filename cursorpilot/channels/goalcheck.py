"""The I/O of a turn end, for both channels' loops: run the step's goal check (`done_when`) and fingerprint the
working tree. Their results are facts for the pilot (decide/turns.py decides what they mean); nothing here decides.

The check is a shell command run in the program's working directory with the program's environment (and its mark,
so anything it leaves running is ended with the step), stdin closed, a deadline, its output captured and redacted.
A check that can't run or runs out of time is a check that did not pass, never an error of the pilot.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from cursorpilot.channels import reaper
from cursorpilot.decide.turns import Check, TurnFacts

CHECK_TIMEOUT = 120.0  # seconds, unless the step's done_when says otherwise
OUTPUT_KEPT = 4000  # characters of the end of its output
GIT_TIMEOUT = 10.0


def turn_facts(command: str | None, cwd: str | None, env: dict[str, str], mark: str, run, timeout: float = CHECK_TIMEOUT) -> TurnFacts:
    """Everything a turn end looks at, for either loop (on a worker thread): the check, the working tree, the cost so
    far. `run` is the RunContext (its redactor, its folder, its cost). Never raises: what fails is a check not met."""
    check = None
    if command:
        try:
            check = run_check(command, cwd, reaper.marked_env({**os.environ, **env}, mark), run.redactor.text, timeout)
        except Exception as exc:
            check = Check(command, None, "", f"failed to run: {type(exc).__name__}: {exc}")
    try:
        fingerprint = tree(cwd, run.log_dir)
    except Exception:
        fingerprint = None
    return TurnFacts(check, fingerprint, run.cost_usd)


def run_check(command: str, cwd: str | None, env: dict[str, str], redact: Callable[[str], str], timeout: float = CHECK_TIMEOUT) -> Check:
    """Run the goal check once; its exit code and the end of its output (stdout and stderr together)."""
    try:
        proc = subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        return Check(command, None, "", f"could not start: {exc.strerror or exc}")
    code: int | None
    try:
        out, _ = proc.communicate(timeout=timeout)
        code, error = proc.returncode, ""
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        code, error = None, f"timed out after {timeout:g}s"
    if code is not None and code < 0:
        error, code = f"killed by signal {-code}", None
    text = (out or b"").decode("utf-8", "replace")[-OUTPUT_KEPT:]
    return Check(command, code, redact(text), error)


def _git(cwd: str | None, *args: str) -> bytes | None:
    try:
        p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def tree(cwd: str | None, exclude: Path | None = None) -> str | None:
    """A fingerprint of the working tree (what git status and git diff show, untracked files by size and time), so
    that two turn ends can be compared: equal means the turn changed no file. None outside a git working tree.
    `exclude`: the run's own folder, which changes at every turn end."""
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    root = top.decode().strip()
    spec = ["--", "."]
    if exclude is not None:
        rel = os.path.relpath(os.path.abspath(exclude), root)
        if not rel.startswith(".."):
            spec.append(f":(exclude){rel}")
    status = _git(root, "status", "--porcelain=v1", "-z", "-uall", *spec)
    diff = _git(root, "diff", "HEAD", "--binary", *spec) or _git(root, "diff", "--binary", *spec) or b""
    if status is None:
        return None
    h = hashlib.sha256(status + b"\0" + diff)
    for entry in status.split(b"\0"):
        if entry.startswith(b"?? "):  # untracked: git diff does not show their content; their size and time do
            try:
                st = os.stat(os.path.join(root, entry[3:].decode("utf-8", "surrogateescape")))
                h.update(f"{entry[3:]!r}:{st.st_size}:{st.st_mtime_ns}".encode())
            except OSError:
                continue
    return h.hexdigest()[:16]
