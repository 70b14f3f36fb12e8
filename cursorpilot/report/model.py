"""report.json: what the report says, as data. report.html and report.md are rendered from the same object.

Its JSON schema ships beside it (report.schema.json; a test keeps the two equal), for dashboards and CI that read
reports without this package. Times are seconds since the run's first record (`at_s`) or into the replay
(`replay_s`); texts are cut to the caps in limits.py, and every cut is said in `notes`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Outcome = Literal["completed", "failed", "bad_input", "needs_human", "limit", "interrupted", "crashed"]
SourceKind = Literal["rules", "model", "policy", "breaker", "human", "plan", "none"]
RowOutcome = Literal["answered", "escalated", "waited", "previewed", "refused"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Verdict(_Model):
    """The header: how the run ended and what it took."""

    outcome: Outcome
    headline: str  # the outcome in words
    exit_code: int | None  # None: the run did not finish (crashed or still running)
    reason: str
    finished: bool  # the transcript has run_finished
    steps: int
    steps_completed: int
    turns: int
    answers: int
    escalations: int
    denials: int
    grants: int = 0  # yeses the deny policy weighed and let through, by the user's words
    waits: int
    llm_calls: int
    tokens_in: int
    tokens_out: int
    tokens_cached: int  # of tokens_in, those the model's server read from its prompt cache
    cost_usd: float | None
    wall_s: float | None
    started: str | None  # UTC ISO
    ended: str | None


class RunInfo(_Model):
    run_id: str
    argv: list[str]
    plan: str | None
    provider: str | None
    model: str | None
    cwd: str | None
    governing_prompt: str  # redacted by the writer, cut to the cap
    versions: dict[str, str | None]
    resumes: int


class Step(_Model):
    n: int
    name: str
    kind: str
    channel: Literal["pty", "acp", "shell", "none"]
    status: str  # completed, failed, interrupted, previewed, or running (no step_finished)
    exit_code: int | None
    reason: str
    command: str
    program: str  # how the program ended, in words
    last_words: str | None
    start_s: float
    end_s: float | None
    replay_start_s: float | None  # where the step's terminal starts in the replay


class Turn(_Model):
    step: int
    n: int
    at_s: float
    replay_s: float | None
    stop_reason: str | None  # ACP
    verdict: str | None  # done | continue | blocked | impossible (PTY judge)
    why: str | None
    check: str | None  # the goal check, in words
    sent: str | None
    tokens_in: int | None
    tokens_out: int | None


class Row(_Model):
    """One question and what was done about it."""

    n: int
    step: int | None
    at_s: float
    ts: str
    replay_s: float | None
    outcome: RowOutcome
    kind: str | None  # the question's kind: question, input, menu, permission, form, ...
    question: str  # the screen's prompt block, or the ACP request in words
    request: str | None  # ACP: the tool call or form as sent (JSON), cut
    answer: str | None  # as sent; a secret is masked
    keys: list[str]  # the writes it became (PTY), secrets masked
    secret: bool
    source: str  # rules:<id>, <provider>:<model>, policy:<rule>, human, plan:send; "" when nothing answered
    source_kind: SourceKind
    rule_id: str | None  # the detector rule (PTY) or the request (ACP)
    policy_rule: str | None
    why: str | None  # an escalation's or a wait's reason, the model's note, the policy's evidence
    granted: str | None  # a yes the deny policy weighed and let through, and by whose words ("delete granted by your rule go")
    latency_s: float | None  # from the question seen to the answer
    model_latency_s: float | None
    tokens_in: int | None
    tokens_out: int | None
    prompt_file: str | None  # relative to the run's folder
    prompt: str | None  # the prompt that was sent (cut)


class FileChange(_Model):
    path: str
    status: str  # added, modified, deleted, renamed, ...
    added: int | None  # None: binary
    removed: int | None
    diff: str  # cut to the cap
    cut: bool


class HeadMove(_Model):
    """HEAD's commit moved during the run: a commit made, a rebase, an amend, a reset (the files may be the same)."""

    before: str  # HEAD's commit when the run started
    after: str  # ... and when it ended
    added: list[str]  # on HEAD now and not before: "abc1234 subject", newest first (cut to 20)
    dropped: list[str]  # on HEAD before and not now (replaced or reset away)
    added_total: int
    dropped_total: int


class Changes(_Model):
    source: Literal["git", "transcript", "none"]
    note: str  # where the changes come from, or why there are none
    stat: str  # git diff --stat
    files: list[FileChange]
    files_total: int
    head: HeadMove | None = None  # HEAD moved (git)


class Marker(_Model):
    t: float  # seconds into the replay
    label: str
    row: int | None  # the ledger row it marks


class Replay(_Model):
    available: bool
    note: str
    cols: int
    rows: int
    duration_s: float
    casts: list[str]  # the files it is made of, in order
    markers: list[Marker]
    cut: bool


class RecordStats(_Model):
    lines: int
    records: int
    bad_lines: int
    torn_last: bool
    misfits: int
    unknown: dict[str, int]


class CascadeModel(_Model):
    model: str  # provider:model
    asked: int  # questions it was asked
    answered: int  # ...and those whose answer was taken


class Escalated(_Model):
    why: str  # why a model's answer was not taken ("unsure", "repeats the question", ...)
    n: int


class Cascade(_Model):
    """A cascade of answerers (--escalate-to): the share of questions the first model (the local one) answered, and what
    the run cost against the strongest model alone (every question priced at its rates; None: it has no price)."""

    questions: int
    local: int
    local_share: float
    models: list[CascadeModel]
    escalated: list[Escalated]
    cost_usd: float
    cost_alone_usd: float | None
    saved_usd: float | None


class Report(_Model):
    schema_version: int = SCHEMA_VERSION
    generator: str  # cursor-pilot <version>
    log_dir: str
    run: RunInfo
    verdict: Verdict
    steps: list[Step]
    turns: list[Turn]
    ledger: list[Row]
    ledger_total: int  # rows before the cap
    changes: Changes
    replay: Replay
    records: RecordStats
    policy: list[str] = Field(default_factory=list)  # the governing prompt compiled: its grants and prohibitions, as a person reads them
    notes: list[str] = Field(default_factory=list)  # what the reader must know: a crash, a torn line, what was cut
    cascade: Cascade | None = None  # a run with --escalate-to: who answered, and the cost saved
