"""The records of a run and of the program a step drives, on any channel (records/models.py gathers every type)."""

from typing import Any

from cursorpilot.records.base import Rec, declare


# -- the run ---------------------------------------------------------------------------------------------------------
@declare("run_started")
class RunStarted(Rec):
    """A run began: how it was started, its plan, its answerer, the governing prompt (redacted), and where it worked
    (`cwd`; `git`: the working tree's commit and a snapshot of its files, the base of the report's changed files)."""

    argv: list[str] | None
    plan: str | None
    plan_path: str | None
    versions: dict[str, Any] | None
    provider: str | None
    model: str | None
    steps: list[str] | None
    dry_run: bool | None
    governing_prompt: str | None
    cwd: str | None
    git: dict[str, Any] | None


@declare("run_resumed")
class RunResumed(Rec):
    """`--resume` continued this run from step `from_step`; records after it append to the same transcript."""

    argv: list[str] | None
    resumes: int | None
    from_step: int | None


@declare("run_finished")
class RunFinished(Rec):
    """The run ended: its exit code and why, the last program's exit code or signal, the counters and the cost
    estimate, and `git`: the working tree's snapshot at the end. A transcript without it is from a run that crashed."""

    exit_code: int | None
    reason: str | None
    counters: dict[str, Any] | None
    cost_usd: float | None
    child_exit_code: int | None
    child_signal: int | None
    git: dict[str, Any] | None
    goal_check: str | None  # the last goal check: passed | failed (none ran: absent)


@declare("step_started")
class StepStarted(Rec):
    """A plan step began (`kind`: drive, cursor, acp or run)."""

    step: int | None
    name: str | None
    kind: str | None


@declare("step_finished")
class StepFinished(Rec):
    """A plan step ended: completed, failed, interrupted or previewed, with the exit code it gives the run and why."""

    step: int | None
    name: str | None
    status: str | None
    exit_code: int | None
    reason: str | None


@declare("command_finished")
class CommandFinished(Rec):
    """A `run:` step's shell command ended; its output is in `log`."""

    step: int | None
    command: str | None
    exit_code: int | None
    log: str | None


@declare("would_run")
class WouldRun(Rec):
    """Dry run: a command that would have been run (a `run:` step's, or one an ACP agent asked for)."""

    step: int | None = None
    command: str | None


@declare("descendants_ended")
class DescendantsEnded(Rec):
    """Processes the program left running, ended by the pilot: pid, command and signal of each."""

    step: int | None
    processes: list[dict[str, Any]] | None


# -- a program on either channel ----------------------------------------------------------------------------------------
@declare("program_started")
class ProgramStarted(Rec):
    """The program started: its command line, the detector profile and its hash (PTY) or `channel: acp` / `headless`
    (headless: once per turn, `turn` its number), whether its task was given on the command line, and `hidden_env`: the
    CI markers kept from it (and over ACP a variable an adapter misreads: IS_SANDBOX, for claude-agent-acp as root)."""

    step: int | None = None
    pid: int | None
    command: list[str] | None
    profile: str | None = None
    profile_hash: str | None = None
    started_with_task: bool | None = None
    hidden_env: list[str] | None
    channel: str | None = None
    turn: int | None = None


@declare("program_exited")
class ProgramExited(Rec):
    """The program ended: exit code or signal, in words (`describe`), and when it failed by itself, `last_words`:
    the last paragraph on its screen (over ACP, of its stderr)."""

    step: int | None = None
    code: int | None
    signal: int | None
    describe: str | None
    last_words: str | None


@declare("closing")
class Closing(Rec):
    """The pilot is closing the program: with the profile's quit keys (`how: keys`) or a signal."""

    how: str | None
    keys: list[str] | None = None
    signal: str | None = None


@declare("kill")
class Kill(Rec):
    """The program was killed: it did not exit in time, or a second interrupt came."""

    reason: str | None
    signal: str | None = None
