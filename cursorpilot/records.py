"""Every transcript record type, once: its name, its fields and what it means.

Writers build these models and hand them to the transcript (`tx.write(R.PolicyDenied(policy_rule=..., ...))`, or a
pilot's `Record(R.Answer(...))` effect): mypy checks each field where it is written. This module is the one place that
says which types exist and what they carry, so its readers (the report, the docs, the tests) can't drift from what is
written; `records_read.py` reads transcripts through it and generates `docs/records.md` from it. There is no other way
to write a record: neither the transcript nor a pilot's Record takes a type's name and a dict.

Writing is checked, reading is forgiving. A field every writer gives is required (no default: mypy refuses a writer
that leaves it out, and the tests' strict check a record written without it); a field only some writers give (a
record's `step`, where a pilot leaves it to its loop) or that came later than its record has a default. A required
field stays `X | None`, for the transcripts older versions wrote without it: a reader gets None there, as before
(records_read.parse). Newer transcripts may carry fields this version does not know (kept, `extra="allow"`); a
record whose shape does not fit its declaration, or whose type is unknown, is read as a plain `Rec` and counted,
never a crash.
A record flagged `secret: true` is masked as it is written (transcript.py) and again when read, whatever its writer
left in it.

A written model is built, not validated (a field a writer gets wrong never crashes a run: mypy and each test's
transcript check catch it), and its schema is built only when something reads with it: importing this module costs
its class definitions, not their validators (start-up time: every run writes through it).
"""

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from cursorpilot.secret import mask_secrets, masked  # noqa: F401 - the one way a secret is shown and masked, for every reader


class Rec(BaseModel):
    """What every record carries. A record of an unknown type, or one that does not fit its declaration, is read as this.
    (The common five have defaults only so that a writer builds a record without them: the transcript adds them, and a
    reader refuses a record that lacks them, records_read.parse.)"""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    type: str = ""
    seq: int = 0
    ts: str = ""  # UTC, ISO 8601 with milliseconds
    mono: float = 0.0  # monotonic seconds: the clock that times everything within a run
    run_id: str = ""

    if not TYPE_CHECKING:  # (mypy sees each model's own fields as its constructor's keywords)
        def __init__(self, **data: Any) -> None:
            """Built, not validated; the fields written in the order they were given."""
            built = type(self).model_construct(**data)
            given = [_ALIASED.get(k, k) for k in data]
            values = built.__dict__
            object.__setattr__(self, "__dict__", {**{k: values[k] for k in given if k in values}, **values})
            object.__setattr__(self, "__pydantic_fields_set__", built.__pydantic_fields_set__)
            object.__setattr__(self, "__pydantic_extra__", built.__pydantic_extra__)
            object.__setattr__(self, "__pydantic_private__", built.__pydantic_private__)

        # Readers validate (model_validate) without calling this: pydantic calls a model's own __init__ from validation
        # unless it carries the mark its own BaseModel.__init__ carries (pydantic 2.0+; test_records' misfit test
        # fails if that ever changes).
        __init__.__pydantic_base_init__ = True


TYPES: dict[str, type[Rec]] = {}
NAMES: dict[type[Rec], str] = {}
COMMON = tuple(Rec.model_fields)
_ALIASED: dict[str, str] = {}  # a field written under another name (`from`) -> its attribute (`from_`)


def declare(name: str):
    """Register a record type under the name it is written with."""

    def add(cls: type[Rec]) -> type[Rec]:
        TYPES[name] = cls
        NAMES[cls] = name
        _ALIASED.update({f.alias: k for k, f in cls.model_fields.items() if f.alias and f.alias != k})
        return cls

    return add


class _Omitted:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omitted()  # a field left out of the record, not even written null: `changed=a.changed or R.OMIT`


_R = TypeVar("_R", bound=Rec)


def name_of(rec: Rec) -> str:
    """The type a record model is written as (a plain Rec, a type this version does not declare, as its own `type`)."""
    return NAMES.get(type(rec)) or rec.type


def body(rec: Rec) -> dict[str, Any]:
    """The fields a writer gave a record model, as written (`from`, not `from_`), in the order given (OMIT ones left out)."""
    fields = type(rec).model_fields
    given = rec.model_fields_set
    out = {(fields[k].alias or k): v for k, v in rec.__dict__.items() if k in given and k not in COMMON and v is not OMIT}
    return {**out, **{k: v for k, v in (rec.model_extra or {}).items() if v is not OMIT}}


def numbered(rec: _R, step: int) -> _R:
    """The record with its step's number written first (a pilot does not know its step's number; its loop's host does)."""
    return type(rec)(**{"step": step, **body(rec)})


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


# -- the screen (PTY channel) ----------------------------------------------------------------------------------------------
@declare("screen_state")
class ScreenState(Rec):
    """The classified screen changed: its state (`starting`, working, question, input, menu, idle, completed, error;
    `unknown` with rule `<profile>.undecided`: a screen no rule explains, read whole as a question when it is judged),
    the detector rule, the prompt block and the evidence. A question's (question, input, menu, a screen judged) has
    `facts`: what classified it beyond the rule's words (the kernel's word and the quiet, the terminal's mode, the
    cursor and how its line ends, how a menu's highlight was read)."""

    state: str | None
    rule_id: str | None
    prompt: str | None
    evidence: Any
    error: str | None
    facts: list[str] | None = None


@declare("state")
class State(Rec):
    """A transition of the step's state machine: the event, the state before (`from`) and after (`to`)."""

    event: str | None
    from_: str | None = Field(alias="from")
    to: str | None
    rule_id: str | None


@declare("agent_started")
class AgentStarted(Rec):
    """An agent given its task was seen working (`unseen`: it finished before it was ever seen working)."""

    rule_id: str | None
    unseen: bool | None = None


@declare("limit_hit")
class LimitHit(Rec):
    """The agent hit a usage or rate limit (`rule_id`: the screen's rule, or `acp.limit` / `headless.limit`): its `words`,
    the reset read from them (`reset`: ISO 8601, the latest it can be; `phrase`: the words it was read from; none when
    they give no time) and what the pilot does under --on-limit (`on_limit`): `action` wait (for `wait_s`, then the same
    session continues), switch (to the model the agent offers) or stop. `hits`: limits in a row (the backoff's step)."""

    rule_id: str | None
    words: str | None
    reset: str | None
    phrase: str | None
    action: str | None
    wait_s: float | None
    on_limit: str | None
    hits: int | None


@declare("limit_waited")
class LimitWaited(Rec):
    """A limit's wait ended after `waited_s`: `how` continued (`sent` was typed or sent, or the option of the agent's
    limit dialog chosen), switched (to another model), or went_on (the agent went on by itself)."""

    waited_s: float | None
    how: str | None
    sent: str | None = None


@declare("stuck")
class Stuck(Rec):
    """An agent at work showed no progress sign for `still_s` (no new output, its token counter still, its child
    processes idle; its spinner and elapsed timer do not count): `action` interrupt (its interrupt `keys`, or the
    channel's cancel, then it is told to continue), or escalate (it was interrupted once already in this step)."""

    rule_id: str | None = None
    still_s: float | None = None
    action: str | None
    keys: list[str] | None = None


@declare("watcher")
class Watcher(Rec):
    """A person looked in on the run (`cursor-pilot watch`, from process `pid`): `event` joined or left."""

    event: str | None
    pid: int | None


@declare("take_over")
class TakeOver(Rec):
    """A person took the keyboard (`cursor-pilot watch --take`, `by` their process): `action` taken (the pilot paused:
    nothing typed or asked meanwhile) or handed_back (`keys`: how many bytes they typed; the pilot judges the screen
    afresh, what it answered before forgotten)."""

    action: str | None
    by: str | None
    keys: int | None = None


@declare("asked_again")
class AskedAgain(Rec):
    """The same prompt came back after its answer (a new question that looks the same): it is asked again."""

    rule_id: str | None
    prompt: str | None


@declare("wait")
class Wait(Rec):
    """A quiet screen judged not to be asking (the answerer said WAIT): nothing typed."""

    rule_id: str | None
    prompt: str | None
    source: str | None
    why: str | None
    waits_in_a_row: int | None


@declare("reply_discarded")
class ReplyDiscarded(Rec):
    """An answer came back for a prompt that had changed meanwhile: it was not typed."""

    reason: str | None
    prompt_key: Any


@declare("menu_choice")
class MenuChoice(Rec):
    """A reply turned into moves through a menu: the options chosen, the keys (in the reply grammar), the row
    highlighted before."""

    rule_id: str | None
    reply: str | None
    options: list[str] | None
    keys: str | None
    highlighted: str | None
    multi: bool | None


@declare("menu_check_failed")
class MenuCheckFailed(Rec):
    """The highlight did not reach the chosen option: Enter was not pressed (an escalation follows)."""

    expected: Any
    seen: Any


@declare("keys_sent")
class KeysSent(Rec):
    """One write to the program's terminal: the key label, the exact text and bytes (hex). `secret`: typed while
    echo was off, at a prompt that asks for a password or the like, or a secret answer (`<secret:NAME>`, a rule's
    `secret: true`); `keys`, `data` and `hex` are then masked, all three as the text typed."""

    keys: str | None
    data: str | None
    hex: str | None
    secret: bool | None


@declare("enter_retry")
class EnterRetry(Rec):
    """The screen stayed exactly as it was after the answer, and the program waits on its terminal again: Enter was sent
    again (`attempt`)."""

    prompt_key: Any
    attempt: int | None


@declare("not_taken")
class NotTaken(Rec):
    """After the answer (and `enter_retries` more Enters) the screen stayed exactly as it was and the program waits on
    its terminal again: the answer was not taken, and the screen is judged again, told what was `typed`."""

    prompt_key: Any
    typed: str | None
    enter_retries: int | None


@declare("enter_skipped")
class EnterSkipped(Rec):
    """The program took the answer without Enter (one key made the question leave): Enter was not sent."""

    reason: str | None
    prompt: str | None


@declare("echo_not_seen")
class EchoNotSeen(Rec):
    """The typed text did not show near the cursor within `waited_s`: Enter went anyway. `secret`: `text` is masked."""

    text: str | None
    waited_s: float | None
    secret: bool | None


@declare("enter_while_working")
class EnterWhileWorking(Rec):
    """The typed text showed, but the kernel saw the program still at work on it (a filter over a long list, a
    completion) for `waited_s`: Enter went anyway. Only where keys are paced by the program (key_pace: reaction)."""

    waited_s: float | None


@declare("terminal_reply")
class TerminalReply(Rec):
    """What the pilot's terminal answered to the program's probes (cursor position, device attributes, colours)."""

    data: str | None
    hex: str | None


@declare("terminal_ignored")
class TerminalIgnored(Rec):
    """Escape sequences the terminal ignored during a step, counted by kind."""

    step: int | None = None
    counts: dict[str, int] | None


# -- decisions (both channels) ----------------------------------------------------------------------------------------------
@declare("rules_checked")
class RulesChecked(Rec):
    """The rules were consulted before the model: whether one matched, and which (`source`)."""

    hit: bool | None
    source: str | None
    prompt: str | None


@declare("policy_denied")
class PolicyDenied(Rec):
    """The deny policy refused an action (`policy_rule`, with its evidence): answered with `reply` (the prompt's
    "no"), or escalated (`reply` null). `on: reply`: the answer itself was refused. `on: yes`: a yes to a question
    whose block deletes, drops, formats, overwrites, force-pushes or resets (`evidence`: the line that says so) was
    refused: a sentence of the governing prompt forbids it, or nothing granted it (decide/weigh.py), and the answer
    chosen (`changed_from`, by `chosen_by`) was changed to `reply` (null: a person decides, as where one sentence both
    asks for the act and forbids it); `why`: the sentence, the judge's reason, or why nothing could grant it."""

    policy_rule: str | None
    evidence: str | None
    rule_id: str | None
    reply: str | None
    on: str | None = None
    changed_from: str | None = None
    chosen_by: str | None = None
    why: str | None = None


@declare("policy_granted")
class PolicyGranted(Rec):
    """A yes to a question whose block names an act the deny policy weighs (`acts`; the first `policy_rule`, with the
    line that names it: `evidence`) went through: `granted_by` the user's rule for it ("your rule ID", with the prompt's
    sentence it overrides, if any), a sentence of the governing prompt that asks for it ("your prompt: '…'"), or the
    focused judgment's reading (`judge`: who judged, `why`)."""

    policy_rule: str | None
    acts: list[str] | None
    evidence: str | None
    rule_id: str | None
    granted_by: str | None
    judge: str | None
    why: str | None


@declare("provider_request")
class ProviderRequest(Rec):
    """A question went to the model: the prompt block, its kind and rule, the prompt's estimated tokens, and the
    file (under the run's folder) holding the whole prompt that was sent."""

    provider: str | None
    kind: str | None
    rule_id: str | None
    prompt: str | None
    prompt_tokens_est: int | None
    prompt_file: str | None


@declare("provider_retry")
class ProviderRetry(Rec):
    """A provider call failed and is retried after `wait_s`."""

    error: str | None
    wait_s: float | None


@declare("provider_error")
class ProviderError(Rec):
    """A provider call failed for good."""

    error: str | None
    wait_s: float | None


@declare("provider_reply")
class ProviderReply(Rec):
    """The answerer's reply: the text to type (or WAIT), what was removed from it (reasoning, fences), the raw reply,
    and usage: tokens in and out, latency, calls, cost. `secret`: the question hides what is typed, or the answer is a
    secret; `text` and `raw` are masked. At a turn end, `turn` is the verdict (done, continue, blocked, impossible) and
    `text` the next message. A yes weighed: `judged` is allow or refuse, `text` the governing prompt's words quoted."""

    source: str | None
    secret: bool | None
    text: str | None
    wait: bool | None
    submit: bool | None
    turn: str | None
    judged: str | None
    raw: str | None
    removed: list[Any] | None
    reason: str | None
    usage: dict[str, Any] | None


BY_TIMEOUT = "on-human-timeout"  # an answer's source when --human-timeout passed and --on-human-timeout no gave the no


@declare("answer")
class Answer(Rec):
    """A question answered: the prompt block (or the ACP request, in words), the reply as sent, who chose it
    (`source`: `rules:<id>`, a model, `policy:<rule>`, `human`, `on-human-timeout` (the question's own no when nobody
    answered in time), `plan:send`), the detector rule, the answer's number in
    the run. Over ACP also the option id and kind chosen. `secret`: a secret typed (see `keys_sent`); `reply` is masked.
    `changed`: the deny policy changed the answer chosen (`'y' (openai:m) -> 'n'`; `policy_denied` says why);
    `granted`: it weighed a yes and let it through, by whose words (`delete granted by your rule go`; `policy_granted`)."""

    step: int | None = None
    rule_id: str | None
    prompt: str | None
    reply: str | None
    source: str | None
    n: int | None
    kind: str | None
    channel: str | None = None
    option_id: str | None = None
    option_kind: str | None = None
    policy_rule: str | None = None
    secret: bool | None = None
    changed: str | None = None
    granted: str | None = None


@declare("would_send")
class WouldSend(Rec):
    """Dry run: the answer that would have been sent, and the keys."""

    step: int | None = None
    rule_id: str | None
    prompt: str | None
    reply: str | None
    source: str | None
    keys: list[str] | None = None
    channel: str | None = None
    option_id: str | None = None
    option_kind: str | None = None
    policy_rule: str | None = None
    secret: bool | None = None
    changed: str | None = None
    granted: str | None = None


@declare("escalation")
class Escalation(Rec):
    """Nothing could answer (or the program did not react): a human is needed, and why. `interactive`: one was asked."""

    rule_id: str | None
    prompt: str | None
    why: str | None
    interactive: bool | None


@declare("human_reply")
class HumanReply(Rec):
    """What the human at the terminal answered to an escalation. `secret`: typed at a prompt that hides it; `text`
    is masked."""

    text: str | None
    secret: bool | None = None


@declare("decision_page")
class DecisionPage(Rec):
    """The run serves its decision page (docs/human.md): where (`url`, without any question's token), whether beyond
    this machine (`public`: `--listen` on a LAN or a tailnet), and the services notices go to (`notify`: their schemes
    alone; a target's URL may hold a token and is never written)."""

    url: str | None
    public: bool | None
    notify: list[str] | None


@declare("human_asked")
class HumanAsked(Rec):
    """A question was put to people (docs/human.md): its id (`decision`, the same in the records that follow), its
    first line (`prompt`), why no one else could answer, on which `channels` (terminal, page) and for how long
    (`timeout_s`, --human-timeout; null: until the step or the run ends)."""

    step: int | None
    decision: str | None
    prompt: str | None
    why: str | None
    rule_id: str | None
    secret: bool | None
    channels: list[str] | None
    timeout_s: float | None


@declare("human_notified")
class HumanNotified(Rec):
    """The notice of a question was sent: each target by its service (the URL's scheme), whether it went, and
    Apprise's words when it did not."""

    decision: str | None
    sent: list[dict] | None


@declare("human_refused")
class HumanRefused(Rec):
    """An answer offered on a `channel` was not taken, `why`, with the page's HTTP `status`: 422, the deny policy on
    the reply or an option it does not name (the question stayed open); 409, it came after another answer won the race;
    410, after the question closed. `text` is masked when the answer is a secret."""

    step: int | None
    decision: str | None
    channel: str | None
    why: str | None
    status: int | None
    text: str | None
    secret: bool | None


@declare("human_answered")
class HumanAnswered(Rec):
    """A question was answered: on which `channel` (terminal, page, or timeout: the question's own no given by
    --on-human-timeout no), by whom (`by`: the page's client address), `latency_s` after it was asked. Answers that
    came later were told who answered (HTTP 409 on the page). The text is in the `human_reply` and `answer` records."""

    step: int | None
    decision: str | None
    channel: str | None
    by: str | None
    latency_s: float | None


@declare("human_unanswered")
class HumanUnanswered(Rec):
    """A question closed with no answer taken: `why` (--human-timeout passed, Ctrl-D at the terminal, the step or the
    run ended) after `waited_s`."""

    step: int | None
    decision: str | None
    why: str | None
    waited_s: float | None


@declare("page_refusals")
class PageRefusals(Rec):
    """At the run's end: requests the decision page turned away before any question, counted by reason (a wrong
    token, a foreign Host header, a body too large)."""

    counts: dict[str, int] | None


@declare("turn_end")
class TurnEnd(Rec):
    """An agent's turn ended (docs/turns.md), on either channel (ACP adds the stop reason and usage): the judgement of
    the turn (`verdict`: done, continue, blocked, impossible; none when a limit stopped the step), why, who decided
    (`source`: check, limit, breaker, ledger, `rules:<id>`, a model), the goal check's result (`check`: command,
    exit_code, output_tail), the next instruction `sent`, an instruction a limit held back for `--resume` (`pending`),
    and the turn's number."""

    step: int | None = None
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    verdict: str | None = None
    why: str | None = None
    check: dict[str, Any] | None = None
    sent: str | None = None
    turn: int | None = None
    source: str | None = None
    pending: str | None = None


@declare("goal_check")
class GoalCheck(Rec):
    """A step's program ended with no turn end that met its goal: the goal check was run once more (`check`:
    command, exit_code, output_tail) and decides whether the step succeeded (`met`)."""

    step: int | None
    check: dict[str, Any] | None
    met: bool | None


# -- the Agent Client Protocol ----------------------------------------------------------------------------------------------
@declare("acp_initialized")
class AcpInitialized(Rec):
    """The agent answered `initialize`: its protocol version, whether it can load sessions, its name and version."""

    protocol_version: int | None
    load_session: bool | None
    agent: dict[str, Any] | None


@declare("acp_session")
class AcpSession(Rec):
    """The ACP session's id (`loaded`: an earlier session resumed)."""

    session_id: str | None
    loaded: bool | None


@declare("acp_update")
class AcpUpdate(Rec):
    """A session update: message and thought chunks (`text`), other updates as they came (`data`)."""

    update: str | None
    text: str | None = None
    data: dict[str, Any] | None = None


@declare("tool_call")
class ToolCall(Rec):
    """The agent reported a tool call or its progress: title, kind, status, raw input."""

    update: str | None
    tool_call_id: str | None
    title: str | None = None
    kind: str | None = None
    status: str | None
    raw_input: Any


@declare("plan")
class Plan(Rec):
    """The agent's plan (its entries as sent)."""

    entries: list[Any] | None


@declare("permission_request")
class PermissionRequest(Rec):
    """`session/request_permission`: the tool call, the options offered, its fingerprint and how often it was seen."""

    tool_call: dict[str, Any] | None
    options: list[dict[str, Any]] | None
    fingerprint: str | None
    seen: int | None = None


@declare("elicitation")
class Elicitation(Rec):
    """`elicitation/create`: a form (or a URL) the agent asks the user to fill."""

    message: str | None
    mode: dict[str, Any] | None


@declare("acp_extension")
class AcpExtension(Rec):
    """An extension request or notification (Cursor's `cursor/…`): the method and its parameters."""

    method: str | None
    params: Any
    notification: bool | None = None


@declare("acp_cancel")
class AcpCancel(Rec):
    """`session/cancel` was sent (the deadline, an escalation, a dry run)."""

    session_id: str | None


@declare("acp_not_json")
class AcpNotJson(Rec):
    """A line on the agent's stdout that is not JSON-RPC: dropped."""

    line: str | None


@declare("acp_refused")
class AcpRefused(Rec):
    """A request of the agent the client answered with a JSON-RPC error (a missing file, a path outside the working
    directory, the deny policy, a dry run): the method, what it named, the error code and the message the agent shows."""

    method: str | None
    target: str | None
    error: int | str | None
    message: str | None


@declare("acp_client_error")
class AcpClientError(Rec):
    """Something unforeseen failed while the client served a request: the method and the error, answered as an
    Internal error instead of a traceback."""

    method: str | None
    error: str | None


# -- the headless channel (docs/headless.md) ----------------------------------------------------------------------------
@declare("native_deny")
class NativeDeny(Rec):
    """The deny policy written into the agent's own deny list before it started (nativedeny.py): which agent's list,
    the file given to it (None: a private copy of the user's configuration, removed when the step ends), the entries."""

    step: int | None = None
    agent: str | None
    file: str | None
    deny: list[str] | None


@declare("headless_session")
class HeadlessSession(Rec):
    """The agent's print mode started a turn on this session (its `system/init`): the session id, model and cwd."""

    session_id: str | None
    model: str | None
    cwd: str | None


@declare("headless_message")
class HeadlessMessage(Rec):
    """Text of the agent's message, one segment as its stream gave it."""

    text: str | None


@declare("headless_event")
class HeadlessEvent(Rec):
    """An event of the agent's stream the pilot does not read, kept as it came (or a request it answered with an error:
    `answered`)."""

    event: dict[str, Any] | None
    answered: str | None = None


@declare("headless_not_json")
class HeadlessNotJson(Rec):
    """A line on the agent's stdout that is not a JSON object (a torn line, a warning): recorded and skipped."""

    line: str | None


@declare("fs_read")
class FsRead(Rec):
    """The agent read a file through the pilot (`chars` read); `missing`: it did not exist and the agent got an empty
    file (Gemini CLI 0.61 can't take ACP's Resource not found there)."""

    path: str | None
    chars: int | None
    missing: bool | None = None


@declare("fs_write")
class FsWrite(Rec):
    """The agent wrote a file through the pilot, with the unified diff."""

    path: str | None
    diff: str | None


@declare("would_write")
class WouldWrite(Rec):
    """Dry run: a write the agent asked for, not made, with its diff."""

    path: str | None
    diff: str | None


@declare("terminal_started")
class TerminalStarted(Rec):
    """The agent started a command in a pilot-run terminal."""

    terminal_id: str | None
    command: str | None


@declare("terminal_exited")
class TerminalExited(Rec):
    """A pilot-run terminal's command ended: exit code and the tail of its output."""

    terminal_id: str | None
    command: str | None
    exit_code: int | None
    output: str | None
    truncated: bool | None
