"""The shell channel: a plan's `run:` step, its commands run one after the other by the shell, with no terminal and
nothing to answer.

Each command's output goes to the step's log (`steps/NN-name.log` in the run's folder); a command that fails ends the
step (unless `allow_failure`), Ctrl-C or the deadline ends the command's process group, and what the commands leave
running carries the run's mark (reaper.py) so that it ends with the run. A dry run lists the commands and runs none.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from cursorpilot.channels import reaper
from cursorpilot.errors import ExitCode
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.records import models as R

POLL = 0.02  # seconds between looks at a running command (for Ctrl-C and the deadline)


def drive(job: Job) -> StepResult:
    commands = list(job.step.run or [])
    if job.ctx.dry_run:
        for cmd in commands:
            job.ctx.tx.write(R.WouldRun(step=job.index, command=cmd))
        rows = [{"kind": str(job.step.kind), "question": "-", "would_send": f"$ {cmd}", "source": "not run"} for cmd in commands]
        return StepResult(int(ExitCode.OK), "listed (dry run)", None, listed=rows)
    out_dir = job.ctx.log_dir / "steps"
    out_dir.mkdir(exist_ok=True)
    log_path = out_dir / f"{job.index:02d}-{slug(job.name)}.log"
    env = reaper.marked_env({**os.environ, **job.env}, job.ctx.run_id)  # what they leave running ends with the run
    tolerated: list[str] = []
    with open(log_path, "ab") as log:
        for cmd in commands:
            code, child = _one(job, cmd, env, log, log_path)
            if code is not None:
                return StepResult(int(code), _why(job, code, cmd, child, log_path), child)
            if child:
                tolerated.append(f"`{cmd}` exited {child}")
    if tolerated:
        return StepResult(int(ExitCode.OK), f"commands finished; failure allowed: {', '.join(tolerated)}", 0)
    return StepResult(int(ExitCode.OK), "commands succeeded", 0)


def _one(job: Job, cmd: str, env: dict[str, str], log, log_path: Path) -> tuple[ExitCode | None, int | None]:
    """One command to its end: (None, its exit code) to go on, or the step's ending code (and the exit code, if any)."""
    log.write(f"$ {cmd}\n".encode())
    log.flush()
    proc = subprocess.Popen(cmd, shell=True, cwd=job.cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    run, seen = job.ctx, job.ctx.interrupts
    while proc.poll() is None:
        if run.interrupts > seen or (job.deadline is not None and run.clock.monotonic() > job.deadline):
            kill_group(proc)
            return (ExitCode.INTERRUPTED if run.interrupts > seen else ExitCode.LIMIT), None
        time.sleep(POLL)
    run.tx.write(R.CommandFinished(step=job.index, command=cmd, exit_code=proc.returncode, log=str(log_path)))
    if proc.returncode != 0 and not job.step.allow_failure:
        return ExitCode.FAILED, proc.returncode
    return None, proc.returncode


def _why(job: Job, code: ExitCode, cmd: str, child: int | None, log_path: Path) -> str:
    if code == ExitCode.INTERRUPTED:
        return "interrupted"
    if code == ExitCode.LIMIT:
        return job.deadline_reason
    return f"step {job.name!r}: `{cmd}` exited {child} (see {log_path})"


def kill_group(proc: subprocess.Popen) -> None:
    """SIGINT the command's process group, then SIGKILL it."""
    for sig, wait in ((signal.SIGINT, 3.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")[:40] or "step"
