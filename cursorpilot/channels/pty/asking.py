"""The question a PTY step is deciding, PURE (a part of pty/pilot.py's Pilot): asked of the decision path or of a person,
one at a time, each under a token its decision comes back with.

`Questions` owns the question being decided (its token, the screen it was asked on, whether what is typed there is a
secret) and the prompts the rules knew nothing of before their screen had settled (asked again once it has); it reads
the pilot through its View and asks it for the rest (held.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cursorpilot.channels.pty.facts import Ask, AskHuman, Effect
from cursorpilot.channels.pty.held import (Abort, Asking, Escalate, Fail, Go, TypeAnswer, View, Waited, WakeBy, Want,
                                           still_there)
from cursorpilot.channels.pty.machine import Event, State
from cursorpilot.decide.deliver import escalate, split
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind, Verdict
from cursorpilot.decide.turns import gist
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import models as R
from cursorpilot.records.answerer import Answerer
from cursorpilot.records.secret import asks_secret


@dataclass(slots=True)
class Questions:
    asking: Asking | None = None  # the question being decided, until its decision comes back
    token: int = 0
    early_miss: dict[str, float] = field(default_factory=dict)  # rules-only misses on a screen not yet settled: asked again then

    def open(self, view: View, c: Classification, kind: str | None, not_taken: str | None = None) -> Asking:
        """A new question, under a new token (a decision for an older one is stale)."""
        self.token += 1
        self.asking = Asking(self.token, c, view.look.content, kind, self.secret(view, c), not_taken, view.look.quiet_since)
        return self.asking

    def secret(self, view: View, c: Classification) -> bool:
        """What is typed at this prompt is a secret: the terminal's echo is off, or a field asks for a password, a token,
        a PIN… by its words (a TUI that draws `****` itself leaves echo on)."""
        unknown = c.state == ScreenKind.UNKNOWN
        return view.look.echo_off or (c.state in (ScreenKind.INPUT, ScreenKind.UNKNOWN) and asks_secret(c.block, dialog=unknown))

    def ask(self, view: View, now: float, c: Classification, kind: str | None, notes: tuple[str, ...] = (),
            not_taken: str | None = None) -> list[Effect | Want]:
        held = self.early_miss.get(c.key or "")
        if held is not None and now < held:  # the rules knew nothing of it before it settled: once it has
            return [WakeBy(held)]
        a = self.open(view, c, kind, not_taken)
        return [Go(Event.PROMPT, c), Ask(a.token, c, kind, a.secret, notes=notes)]

    def escalate(self, view: View, c: Classification, why: str, kind: str | None = None, shown: str | None = None) -> list[Effect | Want]:
        """A human is asked (counted, said); or the step stops, when none can be. shown: what the human is shown, when
        not the prompt block (a turn end: the agent's last message)."""
        asked = shown or c.block
        shared, halt = split(escalate(view.counts, rule_id=c.rule_id, prompt=asked, why=why,
                                      headline=gist(asked) if kind == Kind.TURN_END else headline(asked)))
        out: list[Effect | Want] = list(shared)
        if halt is not None:
            return [*out, Abort(halt.code, halt.reason)]
        if view.state != State.AWAITING_INPUT:
            out.append(Go(Event.ESCALATE, c))
        a = self.open(view, c, kind)
        return [*out, AskHuman(a.token, c, why, a.secret, prompt=shown)]

    def decided(self, view: View, now: float, a: Asking, d: Decision, content: int, current: Classification | None) -> list[Effect | Want]:
        """What the answerer's decision on the question asked of it leads to (`current`: the screen as it classifies
        now, when it changed since it was asked): a failure, a human, a wait, a stale reply dropped, the same answer not
        taken given again (escalated), or the answer typed."""
        if d.verdict == Verdict.FAIL:
            return [Abort(ExitCode.LIMIT, d.why)] if d.limit else [Fail(d.why, a.c)]
        if d.verdict == Verdict.ESCALATE:
            settled = self._unsettled_miss(view, now, a, d)
            return [WakeBy(settled), Go(Event.NO_REPLY, a.c)] if settled is not None else [Escalate(a.c, d.why, a.kind)]
        if d.verdict == Verdict.WAIT:
            return [Waited(a, d)]
        if a.content != content and current is not None and not still_there(a.c, current):
            return [WakeBy(now), Record(R.ReplyDiscarded(reason="the prompt changed while the answer was chosen", prompt_key=a.c.key)),
                    Go(Event.NO_REPLY, a.c)]
        if a.not_taken is not None and d.text == a.not_taken and d.by.rule is not None:  # told, the rules can't differ
            typed = view.answering.typed.get(a.c.key or "", a.not_taken)
            return [Escalate(a.c, f"the program did not take {typed!r} (it waits on its terminal, the screen as it was), and "
                                  f"the rules give the same answer again", a.kind)]
        return [TypeAnswer(a.c, d, view.look.modes, a.kind, a.secret)]

    def _unsettled_miss(self, view: View, now: float, a: Asking, d: Decision) -> float | None:
        """No rule knew the prompt and there is no model, on a screen asked before it had settled (the kernel's word
        cut the wait short: a program that reads on one thread while another still writes): half a prompt may be
        all it showed. The miss escalates only once the screen has settled (settle_ms of quiet), never on a first
        write; asked again then (its time returned), or the new screen is."""
        settled = a.quiet_since + view.profile.settle_ms / 1000
        if d.by.kind is not Answerer.RULES or now >= settled or a.kind == Kind.TURN_END or view.state != State.ASKING_QUESTION:
            return None
        self.early_miss[a.c.key or ""] = settled
        return settled
