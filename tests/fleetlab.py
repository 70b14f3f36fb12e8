"""A fleet's tests, on either engine: the fleet file of six real tasks (the Cursor simulator, bash, a Python prompt, a
question for a person, a program that fails, one that outlives its timeout), the CLI started as a user starts it, and
what it left read back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

PACKAGE = Path(__file__).resolve().parents[1] / "cursorpilot"
PILOT = [sys.executable, "-m", "cursorpilot"]
PORT_ASKER = "import sys; p = input('Which port should the server use? '); open('port.txt', 'w').write(p)"
STATUS = {"sim": "done", "name": "done", "confirm": "done", "asks": "done", "fails": "failed", "slow": "limit"}


def repo(root: Path) -> Path:
    """A git repository with one commit: each task gets a worktree of it on a branch of its own."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "README.md").write_text("the project\n")
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return root


def six_tasks(root: Path, name: str, env: dict[str, str] | None = None) -> Path:
    """The six tasks, each in a worktree of `root`; `asks` waits for a person (no rule knows its question)."""
    data = {
        "name": name,
        "defaults": {"isolation": "worktree", "timeout": "90s", "env": {"FLEET_TEST": name, **(env or {})}},
        "tasks": [
            {"id": "sim", "command": ["cursor-pilot", "sim", "cursor", "demo", "Add a /health endpoint"],
             "rules": str(PACKAGE / "demo" / "rules.yaml"), "prompt": str(PACKAGE / "demo" / "prompt.md")},
            {"id": "name", "command": ["bash", "-c", 'read -p "Project name? " n; echo "$n" > name.txt'], "answers": ["Project name=fleet-app"]},
            {"id": "confirm", "command": [sys.executable, "-c", "input('Continue? [y/n] ')"], "answers": [r"Continue\?=y"]},
            {"id": "asks", "command": [sys.executable, "-c", PORT_ASKER], "answers": ["never asked=n"]},
            {"id": "fails", "command": ["sh", "-c", "echo broken >&2; exit 5"]},
            {"id": "slow", "command": ["sleep", "60"], "timeout": "3s"},
        ],
    }
    path = root / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}


def start(args: list[str], out: Path, cwd: Path) -> subprocess.Popen:
    """`cursor-pilot fleet ...` as a user starts it, its console to `out` (read while it runs)."""
    fh = open(out, "w")
    return subprocess.Popen([*PILOT, "fleet", *args], cwd=cwd, env=env(), stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT)


def fleet(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([*PILOT, "fleet", *args], cwd=cwd, env=env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def no_ray() -> None:
    """Ray is missing: a failure on CI (which installs the extra), a skip elsewhere."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail("ray is not installed: CI installs the extra (pip install -e '.[test,ray]')")
    pytest.skip("ray is not installed (pip install -e '.[ray]'): the Ray engine is not tested here")


def wait_for(condition, timeout: float, what: str, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not within {timeout}s: {what}")


def state(folder: Path) -> dict:
    try:
        return json.loads((folder / "fleet.json").read_text())
    except (OSError, ValueError):
        return {}


def rows(folder: Path) -> dict[str, dict]:
    return {r["id"]: r for r in state(folder).get("rows", [])}


def line(out: Path, prefix: str) -> str | None:
    text = out.read_text() if out.exists() else ""
    return next((w for ln in text.splitlines() if ln.startswith(prefix) for w in ln.split() if w.startswith("http")), None)


def marked(mark: str) -> list[str]:
    """Every live process whose command line or environment carries `mark` (a task's program, a run), but this one."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            stat = (proc / "stat").read_text()
            if stat[stat.rindex(")") + 2:].startswith("Z"):
                continue
            blob = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if mark.encode() in blob:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{proc.name}: {command[:120]}")
    return out


def run_process(task_dir: Path) -> int | None:
    """The pid of the `cursor-pilot run` whose run folder is `task_dir` (the task's run, not its program)."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cursorpilot" in argv and b"run" in argv and str(task_dir).encode() in argv:
            return int(proc.name)
    return None


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def interrupt(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(60)
