"""The records of a decision, on every channel: rules, the deny policy, a model, a person, a turn end (records/models.py
gathers every type)."""

from typing import Any

from cursorpilot.records import answerer
from cursorpilot.records.base import Rec, declare


# -- decisions (both channels) ----------------------------------------------------------------------------------------------
@declare("rules_checked")
class RulesChecked(Rec):
    """The rules were consulted before the model: whether one matched, and which (`source`)."""

    hit: bool | None
    source: str | None
    prompt: str | None


@declare("policy_compiled")
class PolicyCompiled(Rec):
    """The governing prompt compiled into the policy the deny policy matches a yes against (decide/compiled.py): who
    compiled it (`source`: a model, the lexical reader, a pinned file, a cache), its grants and prohibitions (`policy`:
    each with its act, object, the user's words and what it leaves out), and what of a model's compile was dropped, why."""

    source: str | None
    policy: dict[str, Any] | None
    dropped: list[str] | None = None
    lines: list[str] | None = None  # the policy as a person reads it (what `cursor-pilot policy` prints)


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


@declare("hook_decided")
class HookDecided(Rec):
    """A tool call the agent made, decided inside the agent by cursor-pilot's hook under the run's policy (docs/hooks.md;
    the run installed it in the agent's settings for the step, channels/agent/runhook.py): the `agent` and its `tool`, the
    `acts` it does that destroy, what it names (`target`: its command or files), the `decision` (allow, deny, ask: the
    agent then asks, and the pilot is asked as at any question), the `reason` the agent was told, and the user's words
    that decided it (`quote`; none: the hard floor, or nothing decided it)."""

    step: int | None = None
    agent: str | None
    tool: str | None
    acts: list[str] | None
    target: str | None
    decision: str | None
    reason: str | None
    quote: str | None


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
    `text` the next message. A yes weighed: `judged` is allow or refuse, `text` the governing prompt's words quoted.
    `cascade`: the models a cascade asked for it, each `{source, kept, why, text, margin, usage, usd_alone}`."""

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
    cascade: list[Any] | None = None  # a cascade's reply (decide/cascade.py): each model asked, kept or why not, in order


BY_TIMEOUT = answerer.BY_TIMEOUT  # an answer's source when --human-timeout passed and --on-human-timeout no gave the no


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
