"""The PTY pilot's rules for an answer's life, PURE (a part of pty/pilot.py's Pilot): typed, then taken or not.

An answer becomes the keys its prompt takes (pty/keystrokes.py), is handed over (decide/deliver.py: the caps, the dry
run's preview, the records) and queued in the typist; then the facts say whether the program took it: the screen changed
anywhere, or the kernel saw the program leave its terminal. Only the very same screen, read again, is an answer not
taken: Enter is re-sent on it, then it is judged again, told what was typed. A still screen alone proves nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Answer, Record, deliver, split
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.decide.turns import gist
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.keys import Modes, Write
from cursorpilot.channels.pty.machine import Event, State
from cursorpilot.channels.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.channels.pty.held import Watch
from cursorpilot.channels.pty.keystrokes import Refused, keystrokes

if TYPE_CHECKING:
    from cursorpilot.channels.pty.parts import PilotParts as _Part  # (mypy only: the Pilot's state and rules a part uses)
else:
    _Part = object

RETRY_GAPS = (0.8, 1.6, 3.2)  # wait after an answer; Enter is re-sent after the first two
UNREAD_LOOK = 0.1  # while what was typed sits unread in the program's input, it is looked at this often


class Answering(_Part):
    """Pilot's rules for typing an answer and watching it taken (a mixin: the state is the Pilot's)."""

    __slots__ = ()

    def _follow_watch(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect] | None:
        """None: the program took the answer, carry on with whatever it shows; else what to do meanwhile.

        Taken and not taken are facts about the question, not about paint. While the keys typed sit unread in the
        program's input, it has not seen them: whatever it shows is no answer to them (a clock repainted beside the
        prompt). Taken: the question went away or changed (its text, its highlight, the answer's echo: any change
        outside the rows it repaints by itself), or the kernel says the program left its terminal having read them (it
        works now: the never-silent deadline applies, not an escalation). Not taken: it read them, waits on its terminal
        again, and shows the same question; Enter is re-sent (only on the very same, unchanged screen), then the
        question is judged again, the judge told what was typed. A still screen alone proves nothing."""
        w = self._watch
        assert w is not None
        if c.state == ScreenKind.SETTLING or w.content is None:
            return []  # still rendering, or keys still going out
        if facts.unread:  # not read yet: it has not reacted (a human is asked if it never reads them)
            if facts.quiet_for >= self.profile.stuck_after_s:
                self._watch = None
                return self._escalate(c, f"stuck: what was typed ({w.typed!r}) sat unread for {self.profile.stuck_after_s:g}s")
            self._wake_by(now + UNREAD_LOOK)
            return []
        if self._reacted(c, facts, w) or facts.tty == "busy":  # (busy: it read what was typed and works on it)
            self._watch = None
            return None
        if now < w.due:
            self._wake_by(w.due)
            return []
        shown = c if c.key == w.c.key or not c.block else w.c
        if w.submit and w.retries < len(RETRY_GAPS) - 1 and facts.content == w.content:
            w.retries += 1
            enter = (Write(b"\r", 0.0, "<enter>"),)
            self.typist.schedule(enter, now)
            return [Record(R.EnterRetry(prompt_key=w.c.key, attempt=w.retries)), *self._apply(Event.REPLY, shown), Type(enter)]
        self._watch = None
        not_taken = Record(R.NotTaken(prompt_key=w.c.key, typed=w.typed, enter_retries=w.retries))
        if shown.state == ScreenKind.UNKNOWN and not shown.block:  # a screen no rule explains now: asked about whole, as any such screen
            judged = facts.judged or w.c
            if judged.state == ScreenKind.UNKNOWN:
                return [not_taken, *self._ask_whole(judged, facts, self._not_taken(w.typed), w.answer)]
            shown = judged
        return [not_taken, *self._ask(shown, Kind.UNDECIDED.value if shown.state == ScreenKind.UNKNOWN else None, self._not_taken(w.typed), w.answer)]

    @staticmethod
    def _reacted(c: Classification, facts: ScreenFacts, w: Watch) -> bool:
        """The question went away or changed since the last key went out: its text (a cursor line's holds the answer's
        echo), its highlight. A repaint of the rest of the screen (a clock beside the prompt) is paint, not a reaction."""
        if facts.content == w.content:
            return False
        return c.key != w.c.key or (c.menu is not None and w.c.menu is not None and c.menu.highlighted != w.c.menu.highlighted)

    def _type_answer(self, now: float, c: Classification, d: Decision, modes: Modes, kind: str | None,
                     secret: bool = False, prompt: str | None = None) -> list[Effect]:
        """prompt: what was answered, when not the prompt block (a turn end: the agent's last message)."""
        try:
            k = keystrokes(c, d, modes, self.profile, kind=kind, secret=secret, secrets=self.config.secrets,
                           echo_check=self.config.echo_check)
        except Refused as exc:
            return self._escalate(c, str(exc), kind)
        out: list[Effect] = [k.choice] if k.choice else []
        asked = prompt or c.block
        delivered, halt = split(deliver(self.tally, Answer(asked, k.shown, d.source, c.rule_id, kind or c.state,
                                                           gist(asked) if kind == Kind.TURN_END else headline(asked),
                                                           extra={"secret": True} if k.secret else {},
                                                           preview_extra={"keys": [w.label for w in k.writes]}, changed=d.changed,
                                                           granted=d.granted)))
        if halt is not None:
            return out + delivered + self._abort(halt.code, halt.reason)
        self._answered(c, k.shown, kind, d, asked)
        out += delivered
        out += self._apply(Event.REPLY if self.state == State.ASKING_QUESTION else Event.HUMAN_REPLY, c)
        self.typist.schedule(tuple(k.writes), now, paced=self.profile.key_pace == "reaction")
        out.append(Type(tuple(k.writes)))
        self._watch = Watch(c, k.submit, k.shown, d.text or "", float("inf"))
        return out

    def _answered(self, c: Classification, shown: str, kind: str | None, d: Decision, asked: str) -> None:
        """What an answer leaves behind: the turn's ledger, the prompt answered (and on which screen), history's row."""
        if kind == Kind.TURN_END or d.source == "plan:send":
            self.turns.sent(shown)  # an instruction (the step's task typed, or the next one): a new turn begins
        else:
            self.turns.answered(headline(asked), shown, d.source, d.denied)  # (a secret as its mask: the judge never sees it)
        self.waits_in_a_row = 0
        self.limits.progressed()
        if c.key:
            self.answered[c.key] = self.answered.get(c.key, 0) + 1
            self._typed[c.key] = shown
            self._asked_on[c.key] = self._text
        if c.block.strip():
            self.answered_to = c.anchor_row + len(c.block.rstrip("\n").split("\n")) - 1
        self.worked = True  # whatever the program does next answers to us; idle afterwards means done
