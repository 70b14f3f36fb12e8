"""From a transcript to the report's content: one pass over the records, in bounded memory.

The transcript is streamed (records_read.read): a 100 MB transcript costs its reading time, not its size in memory.
What grows with a run is capped (Caps): the ledger keeps its first and last rows, texts are cut, the prompts shown
have a budget; every cut is counted and said in the report's notes. The ledger is a small state machine over the
records: what comes before an answer (the question seen, the rules, the model's request and reply, a denial) is
gathered, and the answer, escalation, wait or dry-run preview closes the row.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from cursorpilot.records import answerer
from cursorpilot.records.answerer import Answerer, Source
from cursorpilot.records import models as R
from cursorpilot.records.reading import ReadStats, read
from cursorpilot.report.cascade import CascadeTally
from cursorpilot.report.model import Row, RowOutcome, SourceKind, Turn

T = TypeVar("T")


@dataclass(frozen=True)
class Caps:
    """How much of a run the report holds. The defaults keep report.html within about 15 MB."""

    ledger_head: int = 400  # the ledger keeps its first rows and its last ones
    ledger_tail: int = 100
    turns: int = 500
    text: int = 2000  # a question, an answer, a request
    prompt: int = 8000  # one prompt that was sent
    prompts_total: int = 2_000_000  # all prompts shown
    cast_bytes: int = 8 << 20  # the replay embedded
    diff_file: int = 100_000
    diff_total: int = 1_000_000
    files: int = 200


class HeadTail(Generic[T]):
    """The first `head` items and the last `tail`, and how many there were."""

    def __init__(self, head: int, tail: int):
        self.head: list[T] = []
        self.tail: deque[T] | None = deque(maxlen=tail) if tail else None
        self.limit, self.total = head, 0

    def add(self, item: T) -> None:
        self.total += 1
        if len(self.head) < self.limit:
            self.head.append(item)
        elif self.tail is not None:
            self.tail.append(item)

    def items(self) -> list[T]:
        return [*self.head, *(self.tail or ())]

    @property
    def left_out(self) -> int:
        return self.total - len(self.head) - len(self.tail or ())


def cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters cut]"


def _count(value: Any) -> int:
    """A count from a record another writer may have filled differently: anything but a number is 0."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


LOOP_BREAKER = answerer.LOOP_BREAKER


_KINDS: dict[Answerer, SourceKind] = {
    Answerer.RULES: "rules", Answerer.PLAN: "plan", Answerer.POLICY: "policy", Answerer.PERSON: "human",
    Answerer.TIMEOUT: "human",  # --on-human-timeout's no: the human rung decided it, nobody answered (the row's why says so)
    Answerer.BREAKER: "breaker", Answerer.MODEL: "model", Answerer.NOBODY: "model", Answerer.NONE: "none",
}  # NOBODY as "model": as the report has always counted it (no row shows it: a people's silence is an escalation's why)


def source_kind(source: str | None) -> SourceKind:
    return _KINDS[Source.read(source).kind] if source else "none"


@dataclass
class _DecisionLeadUp:
    """What led to the next decision, gathered until it comes."""

    seen: float | None = None  # mono: the question seen
    request: str | None = None
    kind: str | None = None
    source: str | None = None
    reason: str | None = None
    model_latency: float | None = None
    tokens: tuple[int | None, int | None] = (None, None)
    prompt_file: str | None = None
    policy: R.PolicyDenied | None = None
    human: str | None = None  # a person's answer: where and how fast ("on the page (10.0.0.7), 42.1 s after it was asked")


@dataclass
class StepDraft:
    n: int
    name: str = ""
    kind: str = ""
    start: float = 0.0
    end: float | None = None
    status: str = "running"
    exit_code: int | None = None
    reason: str = ""
    command: str = ""
    channel: str = "none"
    program: str = "not started"
    last_words: str | None = None
    program_mono: float | None = None  # when its program started: the replay's time 0, about
    first_keys_mono: float | None = None
    keys: int = 0  # keys_sent in this step: the cast's input events, one for one
    secret_keys: set[int] = field(default_factory=set)
    prompts_asked: int = 0
    attempt: int = 1


@dataclass
class Draft:
    """The report's content before the replay and the changes are added (render.py puts them together)."""

    caps: Caps
    stats: ReadStats = field(default_factory=ReadStats)
    first: R.Rec | None = None
    last: R.Rec | None = None
    started: R.RunStarted | None = None
    finished: R.RunFinished | None = None
    resumes: int = 0
    steps: dict[int, StepDraft] = field(default_factory=dict)
    turns: HeadTail[Turn] = field(default_factory=lambda: HeadTail(0, 0))
    rows: HeadTail[tuple[Row, float, int]] = field(default_factory=lambda: HeadTail(0, 0))  # (row, mono, the step's attempt)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("answers", "escalations", "denials", "grants", "waits", "llm_calls", "tokens_in", "tokens_out", "tokens_cached"), 0))
    compiled: R.PolicyCompiled | None = None  # the governing prompt compiled: the last policy_compiled (a resumed run's)
    cost_usd: float | None = None
    writes: list[R.FsWrite] = field(default_factory=list)  # ACP writes, when git can't tell
    prompts_shown: int = 0
    prompts_left_out: int = 0
    cascade: CascadeTally = field(default_factory=CascadeTally)  # --escalate-to: who answered, the cost saved


class Builder:
    def __init__(self, log_dir: Path, caps: Caps | None = None):
        self.log_dir = log_dir
        caps = caps or Caps()
        self.d = Draft(caps, turns=HeadTail(caps.turns, 0), rows=HeadTail(caps.ledger_head, caps.ledger_tail))
        self.step: StepDraft | None = None
        self.pending = _DecisionLeadUp()
        self.typing: Row | None = None  # the row whose keys are being typed

    def run(self, path: Path) -> Draft:
        for rec in read(path, self.d.stats):
            self.feed(rec)
        return self.d

    def at(self, mono: float) -> float:
        return round(mono - self.d.first.mono, 3) if self.d.first else 0.0

    # -- one record ---------------------------------------------------------------------------------------------------
    def feed(self, r: R.Rec) -> None:
        d = self.d
        d.first = d.first or r
        d.last = r
        handler = getattr(self, f"_{r.type}", None)
        if handler is not None and type(r) is not R.Rec:  # a misfit is counted, not interpreted
            handler(r)

    def _run_started(self, r: R.RunStarted) -> None:
        self.d.started = self.d.started or r

    def _run_resumed(self, r: R.RunResumed) -> None:
        self.d.resumes += 1

    def _run_finished(self, r: R.RunFinished) -> None:
        self.d.finished = r

    def _step_started(self, r: R.StepStarted) -> None:
        n = r.step or len(self.d.steps) + 1
        again = self.d.steps.get(n)
        # a resumed step records its terminal anew (session.cast is rewritten): only its last attempt is replayed
        self.step = StepDraft(n, attempt=again.attempt + 1) if again else StepDraft(n)
        self.step.name, self.step.kind, self.step.start = r.name or "", r.kind or "", self.at(r.mono)
        self.step.status, self.step.end = "running", None
        self.d.steps[n] = self.step
        self.pending, self.typing = _DecisionLeadUp(), None

    def _step_finished(self, r: R.StepFinished) -> None:
        s = self.d.steps.get(r.step or 0) or self.step
        if s is not None:
            s.status, s.exit_code, s.reason, s.end = r.status or "", r.exit_code, r.reason or "", self.at(r.mono)

    def _current(self) -> StepDraft:
        if self.step is None:  # a transcript from before step records, or torn at the start
            self.step = self.d.steps.setdefault(1, StepDraft(1, name="command"))
        return self.step

    def _program_started(self, r: R.ProgramStarted) -> None:
        s = self._current()
        s.command = " ".join(r.command or [])
        s.channel = "acp" if r.channel == "acp" else "pty"
        s.program, s.program_mono = "running (no exit recorded)", r.mono

    def _program_exited(self, r: R.ProgramExited) -> None:
        s = self._current()
        s.program, s.last_words = r.describe or f"exit code {r.code}", r.last_words

    def _command_finished(self, r: R.CommandFinished) -> None:
        s = self._current()
        s.channel, s.command = "shell", "; ".join(x for x in (s.command, r.command) if x)

    def _keys_sent(self, r: R.KeysSent) -> None:
        s = self._current()
        if s.first_keys_mono is None:
            s.first_keys_mono = r.mono
        if r.secret:
            s.secret_keys.add(s.keys)
        s.keys += 1
        if self.typing is not None and r.keys:
            self.typing.keys.append(r.keys)
            self.typing.secret = self.typing.secret or bool(r.secret)

    def _state(self, r: R.State) -> None:
        if r.to == "ASKING_QUESTION":
            self.pending.seen = r.mono
        if r.event == "typed":
            self.typing = None

    def _closing(self, r: R.Closing) -> None:
        self.typing = None

    def _permission_request(self, r: R.PermissionRequest) -> None:
        self._asked(r.mono, r.tool_call, "permission")

    def _elicitation(self, r: R.Elicitation) -> None:
        self._asked(r.mono, {"message": r.message, **(r.mode or {})}, "form")

    def _acp_extension(self, r: R.AcpExtension) -> None:
        if not r.notification:
            self._asked(r.mono, {"method": r.method, "params": r.params}, None)

    def _asked(self, mono: float, request: Any, kind: str | None) -> None:
        self.pending = _DecisionLeadUp(seen=mono, request=cut(json.dumps(request, ensure_ascii=False, indent=1), self.d.caps.text), kind=kind)

    def _rules_checked(self, r: R.RulesChecked) -> None:
        if r.hit:
            self.pending.source = r.source

    def _provider_request(self, r: R.ProviderRequest) -> None:
        s = self._current()
        s.prompts_asked += 1
        self.pending.prompt_file = r.prompt_file or f"prompts/step-{s.n:02d}/{s.prompts_asked:03d}-prompt.md"
        self.pending.kind = self.pending.kind or r.kind

    def _provider_reply(self, r: R.ProviderReply) -> None:
        u = r.usage or {}
        calls, tin, tout = (_count(u.get(k)) for k in ("calls", "in", "out"))
        d, p = self.d, self.pending
        d.counts["llm_calls"] += calls
        d.counts["tokens_in"] += tin
        d.counts["tokens_out"] += tout
        d.counts["tokens_cached"] += _count(u.get("cached"))
        if isinstance(u.get("cost_usd"), (int, float)) and not isinstance(u.get("cost_usd"), bool):
            d.cost_usd = round((d.cost_usd or 0.0) + u["cost_usd"], 8)
        p.source, p.reason = r.source, r.reason or None
        d.cascade.add(r.cascade, u)
        if calls:
            latency = u.get("latency_s")
            p.model_latency, p.tokens = (latency if isinstance(latency, (int, float)) else None), (tin, tout)

    def _policy_compiled(self, r: R.PolicyCompiled) -> None:
        self.d.compiled = r

    def _policy_denied(self, r: R.PolicyDenied) -> None:
        self.d.counts["denials"] += 1
        if (r.rule_id or "").startswith(("acp.fs_", "acp.terminal")):  # the agent's own file system or terminal call
            self._row(r, "refused", question=r.evidence or "", answer=None, source=answerer.policy(str(r.policy_rule)),
                      why=f"refused by the deny policy: {r.evidence}", kind="action")
        else:
            self.pending.policy = r

    def _hook_decided(self, r: R.HookDecided) -> None:
        """A tool call decided inside the agent by cursor-pilot's hook (docs/hooks.md): a row; a deny counted with the
        denials, an allow with the grants (the user's words let it through); an ask leaves it to the agent's question."""
        self.d.counts["denials"] += r.decision == "deny"
        self.d.counts["grants"] += r.decision == "allow"
        outcome: RowOutcome = "refused" if r.decision == "deny" else "answered" if r.decision == "allow" else "escalated"
        self._row(r, outcome, question=f"{r.agent}'s {r.tool}: {r.target or ''}", answer=r.decision, source=answerer.policy("hook"), kind="action",
                  why=r.reason, granted=r.quote if r.decision == "allow" else None, policy_rule=",".join(r.acts or []) or None)

    def _human_answered(self, r: R.HumanAnswered) -> None:
        where = {"terminal": "at the terminal", "timeout": "by --on-human-timeout (the question's own no)"}.get(
            r.channel or "", f"on the {r.channel}")
        latency = f", {r.latency_s:.1f} s after it was asked" if r.latency_s is not None else ""
        self.pending.human = f"answered {where}{f' ({r.by})' if r.by else ''}{latency}"

    def _answer(self, r: R.Answer) -> None:
        self.d.counts["answers"] += 1
        self.d.counts["grants"] += bool(r.granted)  # a yes the deny policy weighed and let through (policy_granted says whose words)
        why = self.pending.human if source_kind(r.source) == "human" else None
        self.typing = self._row(r, "answered", question=r.prompt or "", answer=r.reply, source=r.source, kind=r.kind,
                                secret=bool(r.secret), policy_rule=r.policy_rule, why=why, granted=r.granted)

    def _would_send(self, r: R.WouldSend) -> None:
        row = self._row(r, "previewed", question=r.prompt or "", answer=r.reply, source=r.source, secret=bool(r.secret))
        row.keys.extend(r.keys or [])

    def _escalation(self, r: R.Escalation) -> None:
        """Who escalated: the loop breaker or the deny policy that stopped an answer (not its answerer), else the answerer."""
        self.d.counts["escalations"] += 1
        source = self.pending.source
        if (r.why or "").startswith("loop:"):
            source = LOOP_BREAKER
        elif self.pending.policy is not None:
            source = None  # the row names the policy rule
        self._row(r, "escalated", question=r.prompt or "", answer=None, source=source, why=r.why)

    def _wait(self, r: R.Wait) -> None:
        self.d.counts["waits"] += 1
        self._row(r, "waited", question=r.prompt or "", answer=None, source=r.source, why=r.why)

    def _limit_hit(self, r: R.LimitHit) -> None:
        """A usage limit: a row saying what was read and what the pilot did (its wait, or why it stopped)."""
        read = f"it resets {r.phrase!r} ({r.reset})" if r.reset else "no reset time given"
        how = f"waiting {r.wait_s:g}s" if r.action == "wait" else f"{r.action} (--on-limit {r.on_limit})"
        self._row(r, "waited", question=r.words or "", answer=None, source=None, kind="usage_limit", why=f"usage limit: {read}; {how}")

    def _limit_waited(self, r: R.LimitWaited) -> None:
        then = "the agent went on by itself" if r.how == "went_on" else f"{r.how}: {r.sent!r}"
        self._row(r, "waited", question="(the usage limit's wait)", answer=r.sent, source=None, kind="usage_limit", why=f"waited {r.waited_s:g}s, then {then}")

    def _stuck(self, r: R.Stuck) -> None:
        """A stuck agent interrupted, then told to continue (stuck again: the escalation after it is the row)."""
        if r.action != "escalate":
            what = f"no progress sign for {r.still_s:g}s: interrupted" if r.action == "interrupt" else "interrupted: told to continue"
            self._row(r, "waited", question="(stuck)", answer=" ".join(r.keys or []) or None, source=None, kind="stuck", why=f"stuck: {what}")

    def _turn_end(self, r: R.TurnEnd) -> None:
        s, u = self._current(), r.usage or {}
        check = r.check or None
        said = f"`{check.get('command')}` exited {check.get('exit_code')}" if isinstance(check, dict) else None
        tin = u.get("inputTokens", u.get("input_tokens"))
        tout = u.get("outputTokens", u.get("output_tokens"))
        self.d.turns.add(Turn(step=s.n, n=r.turn or self.d.turns.total + 1, at_s=self.at(r.mono), replay_s=None,
                              stop_reason=r.stop_reason, verdict=r.verdict, why=cut(r.why, self.d.caps.text), check=said,
                              sent=cut(r.sent, self.d.caps.text), tokens_in=tin if isinstance(tin, int) else None,
                              tokens_out=tout if isinstance(tout, int) else None))

    def _fs_write(self, r: R.FsWrite) -> None:
        if len(self.d.writes) < self.d.caps.files:
            self.d.writes.append(r)

    # -- a ledger row -------------------------------------------------------------------------------------------------
    def _row(self, r: R.Rec, outcome: RowOutcome, *, question: str, answer: str | None, source: str | None,
             kind: str | None = None, why: str | None = None, secret: bool = False, policy_rule: str | None = None,
             granted: str | None = None) -> Row:
        p, caps, s = self.pending, self.d.caps, self._current()
        denial = p.policy
        if denial is not None:
            policy_rule = policy_rule or denial.policy_rule
            changed = (f"the deny policy changed {denial.changed_from!r} (chosen by {denial.chosen_by}) to this answer"
                       f"{': ' + denial.why if denial.why else ''}; ") if denial.changed_from is not None else ""
            why = why or f"{changed}refused by the deny policy ({denial.policy_rule}): {denial.evidence}"
            source = source or f"policy:{denial.policy_rule}"
        seen = p.seen if p.seen is not None and p.seen <= r.mono else None
        row = Row(
            n=self.d.rows.total + 1, step=s.n, at_s=self.at(r.mono), ts=r.ts, replay_s=None, outcome=outcome,
            kind=kind or p.kind, question=cut(question, caps.text) or "", request=p.request,
            answer=cut(answer, caps.text), keys=[], secret=secret, source=source or "", source_kind=source_kind(source),
            rule_id=getattr(r, "rule_id", None), policy_rule=policy_rule, why=cut(why or p.reason, caps.text), granted=cut(granted, caps.text),
            latency_s=round(r.mono - seen, 3) if seen is not None else None,
            model_latency_s=p.model_latency, tokens_in=p.tokens[0], tokens_out=p.tokens[1],
            prompt_file=p.prompt_file, prompt=None,
        )
        self.d.rows.add((row, r.mono, s.attempt))
        self.pending = _DecisionLeadUp()
        return row
