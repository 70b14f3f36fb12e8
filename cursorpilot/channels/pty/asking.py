"""The question a PTY step is deciding, PURE (a part of the step, held.py): asked of the decision path or of a person,
one at a time, each under a token its decision comes back with.

It keeps (held.py's Questions) the question being decided (its token, the screen it was asked on, whether what is
typed there is a secret) and the prompts the rules knew nothing of before their screen had settled (asked again once it
has). What a decision leads to is the pilot's (pty/pilot.py `_decided`): it may be typed (answering.py), a wait
(quiet.py), or a person.
"""

from __future__ import annotations

from cursorpilot.channels.pty.facts import Ask, AskHuman, Effect, ScreenFacts, classified_by
from cursorpilot.channels.pty.held import Asking, StepState
from cursorpilot.channels.pty.machine import Event, State
from cursorpilot.channels.pty.step import abort, go
from cursorpilot.decide.deliver import Record, escalate as counted, split
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.decide.turns import gist
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.records import models as R
from cursorpilot.records.answerer import Answerer
from cursorpilot.records.secret import asks_secret


def open_question(s: StepState, c: Classification, kind: str | None, not_taken: str | None = None) -> Asking:
    """A new question, under a new token (a decision for an older one is stale)."""
    q = s.questions
    q.token += 1
    q.asking = Asking(q.token, c, s.look.content, kind, secret(s, c), not_taken, s.look.quiet_since)
    return q.asking


def secret(s: StepState, c: Classification) -> bool:
    """What is typed at this prompt is a secret: the terminal's echo is off, or a field asks for a password, a token,
    a PIN… by its words (a TUI that draws `****` itself leaves echo on)."""
    unknown = c.state == ScreenKind.UNKNOWN
    return s.look.echo_off or (c.state in (ScreenKind.INPUT, ScreenKind.UNKNOWN) and asks_secret(c.block, dialog=unknown))


def ask(s: StepState, now: float, c: Classification, kind: str | None, notes: tuple[str, ...] = (),
        not_taken: str | None = None, whole: ScreenFacts | None = None) -> list[Effect]:
    """Ask the decision path; `whole`: a screen no rule explains, asked with its record (the screen, and by what
    facts), once."""
    held = s.questions.early_miss.get(c.key or "")
    if held is not None and now < held:  # the rules knew nothing of it before it settled: once it has
        s.wake_by(held)
        return []
    a = open_question(s, c, kind, not_taken)
    out = [*go(s, Event.PROMPT, c), Ask(a.token, c, kind, a.secret, notes=notes)]
    if whole is not None and _judged(s, c.key):
        out.insert(0, Record(R.ScreenState(state=ScreenKind.UNKNOWN, rule_id=c.rule_id, prompt=c.block or None,
                                           evidence=None, error=None, facts=classified_by(c, whole))))
    return out


def _judged(s: StepState, key: str | None) -> bool:
    """Whether this screen no rule explains is to be recorded as judged now (once, until another one is)."""
    if s.questions.judged_rec == key:
        return False
    s.questions.judged_rec = key
    return True


def escalate(s: StepState, c: Classification, why: str, kind: str | None = None, shown: str | None = None) -> list[Effect]:
    """A human is asked (counted, said); or the step stops, when none can be. shown: what the human is shown, when
    not the prompt block (a turn end: the agent's last message)."""
    asked = shown or c.block
    shared, halt = split(counted(s.counts, rule_id=c.rule_id, prompt=asked, why=why,
                                 headline=gist(asked) if kind == Kind.TURN_END else headline(asked)))
    out: list[Effect] = list(shared)
    if halt is not None:
        return out + abort(s, halt.code, halt.reason)
    moved = s.state != State.AWAITING_INPUT
    a = open_question(s, c, kind)
    return [*out, *(go(s, Event.ESCALATE, c) if moved else []), AskHuman(a.token, c, why, a.secret, prompt=shown)]


def unsettled_miss(s: StepState, now: float, a: Asking, d: Decision) -> float | None:
    """No rule knew the prompt and there is no model, on a screen asked before it had settled (the kernel's word
    cut the wait short: a program that reads on one thread while another still writes): half a prompt may be
    all it showed. The miss escalates only once the screen has settled (settle_ms of quiet), never on a first
    write; asked again then (its time returned), or the new screen is."""
    settled = a.quiet_since + s.profile.settle_ms / 1000
    if d.by.kind is not Answerer.RULES or now >= settled or a.kind == Kind.TURN_END or s.state != State.ASKING_QUESTION:
        return None
    s.questions.early_miss[a.c.key or ""] = settled
    return settled
