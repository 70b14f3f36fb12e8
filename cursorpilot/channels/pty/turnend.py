"""The PTY pilot's rules for an agent's turn end, PURE (a part of pty/pilot.py's Pilot); decide/turns.py says what a
turn end leads to, here is how a screen shows one and how its outcome is carried out.

An agent back at its composer after working (or asking something in prose there, or one given its task whose composer
came back unseen) has stopped: the loop checks the goal and reads its last message off the screen (CheckGoal,
ReadMessage; GoalChecked comes back), the facts decide or the decision path judges, and the outcome is carried out:
close it, type the next message into its composer, ask a human, or stop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, Next, TurnFacts
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import Event
from cursorpilot.channels.pty.facts import Ask, Effect, ReadMessage, ScreenFacts, Type
from cursorpilot.channels.pty.held import Asking, TurnEnd

if TYPE_CHECKING:
    from cursorpilot.channels.pty.parts import PilotParts as _Part  # (mypy only: the Pilot's state and rules a part uses)
else:
    _Part = object

STARTING_GRACE = 20.0  # an agent given its task that shows only its idle composer this long has finished it unseen
PROSE = ".prose_question"  # the classifier's id for an agent's closing question at its composer: a turn end that asks


class TurnEnds(_Part):
    """Pilot's rules for turn ends (a mixin: the state is the Pilot's)."""

    __slots__ = ()

    def _still_starting(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """Given its task, the agent shows its idle composer: it has not started yet (or finished before we looked)."""
        if self.starting_since is None:
            self.starting_since = now
        if now - self.starting_since < STARTING_GRACE:
            self._wake_by(self.starting_since + STARTING_GRACE)
            return []
        self.starting = False
        self.worked = True  # the composer came back and stayed: the task ran between two looks, and its turn ended
        return [Record(R.AgentStarted(rule_id=c.rule_id, unseen=True)), *self._turn_end(c)]

    def _stopped(self, c: Classification) -> bool:
        """Back at its composer after working, idle or asking something in prose: the agent's turn has ended."""
        if not (self.worked and self.sent and self.profile.finish.mode == "idle"):
            return False
        return c.state == ScreenKind.IDLE or (c.state == ScreenKind.QUESTION and (c.rule_id or "").endswith(PROSE))

    def _turn_end(self, c: Classification) -> list[Effect]:
        """The agent stopped: the loop checks the goal and the working tree, and reads its last message (GoalChecked)."""
        closing = Question(kind=c.state, text=c.block, key=c.key or "", source=c.rule_id or "screen") if c.state == ScreenKind.QUESTION else None
        composer = replace(c, state=ScreenKind.INPUT, submit=True)
        self._turn = TurnEnd(composer, c.block, closing)
        self._token += 1
        self._asking = self._asking_for(self._token, composer, Kind.TURN_END.value)
        return [*self._apply(Event.PROMPT, c), CheckGoal(self._token),
                ReadMessage(self._token, c, self.turns.last_sent, self.turns.message)]

    def _goal_checked(self, now: float, token: int, facts: TurnFacts, message: str) -> list[Effect]:
        """What the turn end found: the facts decide, or the decision path is asked one question."""
        a, t = self._asking, self._turn
        if a is None or a.token != token or t is None:
            return []  # superseded (the step ended meanwhile)
        t.message = message or t.message
        n = self.turns.ended(now, facts, t.message, t.closing is not None)
        if n.action != "ask":
            self._asking = None
            return self._turn_next(now, n, self._modes)
        q = self.turns.question(text=t.message, source=t.c.rule_id or "screen", closing=t.closing, multiline=t.c.multiline)
        return [Ask(token, a.c, Kind.TURN_END.value, question=q)]

    def _turn_decided(self, now: float, a: Asking, d: Decision, content: int, current: Classification | None,
                      modes: Modes) -> list[Effect]:
        went_on = a.content != content and current is not None and not self._still_there(a.c, current)
        if d.verdict not in (Verdict.FAIL, Verdict.ESCALATE) and went_on:
            self.turns.turn -= 1  # the agent went on by itself while its turn was judged: that was no turn end
            self._wake = now
            return [Record(R.ReplyDiscarded(reason="the agent went on while its turn end was judged", prompt_key=a.c.key)),
                    *self._apply(Event.NO_REPLY, a.c)]
        return self._turn_next(now, self.turns.judged(d), modes)

    def _turn_next(self, now: float, n: Next, modes: Modes) -> list[Effect]:
        """A turn end's outcome, carried out: close, type the next message into the composer, a human, or stop."""
        t = self._turn
        assert t is not None
        if n.action == "send":
            typed = self._type_answer(now, t.c, Decision(Verdict.ANSWER, text=n.message, source=n.source), modes, Kind.TURN_END.value,
                                      prompt=t.message)
            held: dict = {} if any(isinstance(e, Type) for e in typed) else {"sent": None}
            if held and not self.counts.dry_run:  # the answer cap stopped it before it went out: a resume sends it
                self.turns.held(n.message or "")
                held["pending"] = n.message
            return [Record(R.TurnEnd(**{**self.turns.record(n), **held})), *typed]
        out: list[Effect] = [Record(R.TurnEnd(**self.turns.record(n)))]
        if n.action == "finish":
            self.reason = f"completed ({n.why})"
            return out + self._apply(Event.FINISHED, t.c)
        if n.action == "human":
            return out + self._escalate(t.c, n.why, Kind.TURN_END.value, shown=t.message)
        if n.code == ExitCode.FAILED:
            return out + self._fail(n.why, t.c)
        return out + self._abort(n.code, n.why)
