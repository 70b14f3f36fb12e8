"""What the fleet's scheduler is told (facts: what happened to a task, to the fleet) and what it asks for (effects), as
one typed vocabulary, PURE. The engines turn a run's records into facts (watch.py); the fleet's loop carries out the
effects (runner.py). Every value crosses to a Ray node and back: plain dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field


# -- facts: what happened --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spawned:
    """The task's run process started (on `node`); nothing of its program has run yet."""

    task: str
    node: str = ""


@dataclass(frozen=True)
class ProgramStarted:
    """The run started its program: from here on the task has side effects, and is never retried."""

    task: str


@dataclass(frozen=True)
class Questioned:
    """The run met a question (its pilot is about to decide it): where a run over the budget is stopped."""

    task: str


@dataclass(frozen=True)
class Progressed:
    """What the run has done so far: answers given, and what its model has cost (USD)."""

    task: str
    answers: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class AskedPerson:
    """The run put a question to a person, on its decision page at `page` (no token: the inbox signs its links)."""

    task: str
    decision: str
    page: str
    headline: str = ""


@dataclass(frozen=True)
class Settled:
    """A question put to a person is no longer open (answered, timed out, withdrawn)."""

    task: str
    decision: str


@dataclass
class RunResult:
    """How a task's run ended, read from its own report (report.json) and its working folder."""

    exit_code: int
    reason: str = ""
    wall_s: float = 0.0
    turns: int = 0
    answers: int = 0
    escalations: int = 0
    denials: int = 0
    cost_usd: float | None = None
    diffstat: str = ""
    run_dir: str = ""
    node: str = ""
    rss_kb: int = 0  # the run process's peak resident memory, where it was measured (the local engine)
    cpu_s: float = 0.0  # its CPU time (user + system), with its program's
    started_at: float = 0.0  # Unix time the run process was started, and when it ended (its wall is between them)
    ended_at: float = 0.0
    signal: int = 0  # the signal that killed the run process (SIGKILL from the OOM killer...): it never reached its end


@dataclass(frozen=True)
class Ended:
    task: str
    result: RunResult


@dataclass(frozen=True)
class Lost:
    """The task's worker died without a word of its run's end (a Ray node went away, a worker was killed)."""

    task: str
    why: str


@dataclass(frozen=True)
class Interrupt:
    """Ctrl-C or SIGTERM (a second one: force)."""

    force: bool = False


@dataclass(frozen=True)
class Tick:
    """Time passes (the loop's heartbeat): a graceful stop that takes too long is forced."""


Fact = Spawned | ProgramStarted | Questioned | Progressed | AskedPerson | Settled | Ended | Lost | Interrupt | Tick


# -- effects: what the fleet's loop does -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Start:
    task: str
    attempt: int = 1


@dataclass(frozen=True)
class Stop:
    """Stop a running task: `force` kills its worker (Ray: force cancel); else its run is interrupted (SIGTERM)."""

    task: str
    why: str
    force: bool = False


@dataclass(frozen=True)
class Say:
    """One line for the person watching: a task started, asked a person, ended."""

    text: str


@dataclass(frozen=True)
class Post:
    """Put a task's question in the inbox."""

    task: str
    decision: str
    page: str


@dataclass(frozen=True)
class Withdraw:
    """Take a task's questions out of the inbox: one (`decision`), or all of the task's ("")."""

    task: str
    decision: str = ""


@dataclass(frozen=True)
class Changed:
    """A task's row changed: the manifest and the page are written again (`ended`: a task ended)."""

    task: str
    ended: bool = False


@dataclass(frozen=True)
class Finished:
    exit_code: int
    reason: str = ""


Effect = Start | Stop | Say | Post | Withdraw | Changed | Finished


@dataclass
class TaskRow:
    """One task as the fleet knows it: the manifest's row, the page's and the live table's."""

    id: str
    status: str = "pending"  # pending | running | waiting | done | failed | needs-person | limit | interrupted | killed
    attempts: int = 0
    exit_code: int | None = None
    reason: str = ""
    answers: int = 0
    cost_usd: float = 0.0
    started_program: bool = False
    waiting: list[str] = field(default_factory=list)  # the decisions put to a person and still open
    result: RunResult | None = None
    node: str = ""
    branch: str = ""
    run_dir: str = ""
