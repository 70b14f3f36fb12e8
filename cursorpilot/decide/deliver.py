"""Handing an answer over, and escalating, PURE and shared by every channel: the same answer cap, dry-run preview,
counts, records and words for the person watching, whether the answer is typed on a screen or sent as a protocol
reply, so that "answered" and "needs a human" mean the same thing on both channels.

A channel's pilot calls `deliver()` when it has an answer and `escalate()` when it has none; each returns effects
for the channel's loop. When the step must end (the cap is reached, a dry run has its preview, nobody can be asked)
the effects end with a `Halt`, and the pilot ends the step its own way (a PTY pilot closes the program, an ACP pilot
cancels the turn). Otherwise, after `escalate()`, the pilot asks the human its own way (it knows what to show).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cursorpilot.decide.breaker import over_cap
from cursorpilot.errors import ExitCode
from cursorpilot.records import answerer
from cursorpilot.records.models import Rec, body, name_of
from cursorpilot.records import models as R


# -- effects both channels' loops carry out ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class Record:
    """A transcript record for the loop to write: `Record(R.Answer(...))`, a model declared in records/models.py, so mypy checks
    its fields where it is built. The loop dispatches on the model (`isinstance(e.rec, R.Wait)`); `type` and `fields`
    are how it reads (and how tests compare it): its type's name and the fields given, as they are written."""

    rec: Rec

    @property
    def type(self) -> str:
        return name_of(self.rec)

    @property
    def fields(self) -> dict[str, Any]:
        return body(self.rec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and (self.type, self.fields) == (other.type, other.fields)

    def __repr__(self) -> str:
        return f"Record({self.type!r}, {self.fields!r})"


@dataclass(frozen=True, slots=True)
class Tell:
    """For the person watching: an answer given, or a note."""

    what: str  # answer | note
    text: str
    prompt: str = ""
    source: str = ""
    changed: str = ""  # the deny policy changed the answer: "'y' (openai:m) -> 'n'"
    granted: str = ""  # a yes the deny policy weighed went through: "delete granted by your rule go"


@dataclass(frozen=True, slots=True)
class Delivered:
    """This answer is being handed over: the decision path counts it (loop breaker, history)."""

    prompt: str
    text: str


@dataclass(frozen=True, slots=True)
class Halt:
    """The step must end, with this exit code and reason."""

    code: ExitCode
    reason: str


Shared = Record | Tell | Delivered  # what every channel's loop carries out (each channel's Effect union holds these)
Effect = Shared | Halt


def split(effects: list[Effect]) -> tuple[list[Shared], Halt | None]:
    """deliver()'s or escalate()'s effects, apart from the Halt they may end with: the pilot ends the step its own way."""
    halt = halt_of(effects)
    return [e for e in effects if not isinstance(e, Halt)], halt


# -- counts ------------------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class RunCounts:
    """What the run's limits count, shared by its steps."""

    answers: int = 0
    max_answers: int | None = None
    escalations: int = 0
    dry_run: bool = False
    interactive: bool = False  # a human can be asked


@dataclass(slots=True)
class Tally:
    """One step's answers, counted against its own cap and the run's; what a dry run would have answered."""

    counts: RunCounts
    cap: int | None = None  # the step's max_steps
    answers: int = 0
    preview: dict | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer about to be handed over, as the transcript and the person watching see it."""

    prompt: str  # the question as the program put it
    reply: str  # what the program gets (the text typed, the option chosen)
    source: str  # rules:<id>, policy:<rule>, <provider>:<model>, human, plan:send
    rule_id: str | None  # what produced the question (a detector rule, an ACP method)
    kind: str
    headline: str  # the prompt in one line, for the person watching and the dry-run table
    counted: str | None = None  # what the loop breaker counts, when not the reply (the model's words for an option)
    extra: dict[str, Any] = field(default_factory=dict)  # the channel's own fields, in `answer` and `would_send`
    preview_extra: dict[str, Any] = field(default_factory=dict)  # only in `would_send` (the keys a dry run would have typed)
    changed: str = ""  # the deny policy changed the answer chosen: "'y' (openai:m) -> 'n'" (decide/weigh.py)
    granted: str = ""  # ...or weighed a yes and let it through: "delete granted by your prompt: '…'"


def deliver(tally: Tally, a: Answer) -> list[Effect]:
    """Hand the answer over: within the caps, or previewed in a dry run (which ends the step), counted and recorded."""
    run = tally.counts
    capped = over_cap(run.answers, run.max_answers, tally.answers, tally.cap)
    if capped:
        return [Halt(ExitCode.LIMIT, capped)]
    if run.dry_run:
        tally.preview = {"kind": a.kind, "question": a.headline, "would_send": a.reply, "source": a.source, "rule_id": a.rule_id}
        return [Record(R.WouldSend(rule_id=a.rule_id, prompt=a.prompt, reply=a.reply, source=a.source,
                                   changed=a.changed or R.OMIT, granted=a.granted or R.OMIT, **a.extra, **a.preview_extra)),
                Halt(ExitCode.OK, "previewed (dry run)")]
    tally.answers += 1
    run.answers += 1
    return [Record(R.Answer(rule_id=a.rule_id, prompt=a.prompt, reply=a.reply, source=a.source, n=run.answers,
                            kind=a.kind, changed=a.changed or R.OMIT, granted=a.granted or R.OMIT, **a.extra)),
            Tell("answer", a.reply, a.headline, a.source, a.changed, a.granted),
            Delivered(a.prompt, a.counted if a.counted is not None else a.reply)]


YOURS = "--learn: your answer becomes a rule"  # why a learn run asks the person (learn.LearningRules): by design


def escalation(counts: RunCounts, *, rule_id: str | None, prompt: str, why: str) -> list[Shared]:
    """Count, record and say that a human is needed; the caller goes on (a request it declines, say). A learn run's
    question that no rule answers is the person's by design: asked (human_asked says so), never an escalation."""
    if why == YOURS:
        return []
    counts.escalations += 1
    return [Record(R.Escalation(rule_id=rule_id, prompt=prompt, why=why, interactive=counts.interactive)),
            Tell("note", f"needs a human: {why}")]


def escalate(counts: RunCounts, *, rule_id: str | None, prompt: str, why: str, headline: str, can_ask: bool = True) -> list[Effect]:
    """Escalate: a Halt (exit 3) when nobody is at the terminal, in a dry run, or when asking can't help (can_ask
    False: a human already answered, a tool loop); otherwise the caller asks the human."""
    out: list[Effect] = [*escalation(counts, rule_id=rule_id, prompt=prompt, why=why)]
    if not can_ask or not counts.interactive or counts.dry_run:
        out.append(Halt(ExitCode.HUMAN_NEEDED, f"a human is needed ({why}): {headline}"))
    return out


NOBODY = answerer.NOBODY  # the source of the escalation that says why the people asked gave no answer (human/humans.py)


def unanswered(needed: str, why: str = "") -> Halt:
    """The people asked gave no answer: why they were needed (when the channel still knows), and why no answer came (the
    person at the terminal gave up, the time to answer ran out, nobody could be asked), said first when known."""
    if not why:
        return Halt(ExitCode.HUMAN_NEEDED, f"a human is needed ({needed or 'escalated'}); none answered")
    return Halt(ExitCode.HUMAN_NEEDED, f"{why}, when a human was needed ({needed})" if needed else why)


def halt_of(effects: list) -> Halt | None:
    """The Halt that ends these effects, if any."""
    return effects[-1] if effects and isinstance(effects[-1], Halt) else None
