"""The PTY pilot's rules for an agent's turn end, PURE (a part of pty/pilot.py's Pilot); decide/turns.py says what a
turn end leads to, here is how a screen shows one and how its outcome is carried out.

An agent back at its composer after working (or asking something in prose there, or one given its task whose composer
came back unseen) has stopped: the loop checks the goal and reads its last message off the screen (CheckGoal,
ReadMessage; GoalChecked comes back), the facts decide or the decision path judges, and the outcome is carried out:
close it, type the next message into its composer, ask a human, or stop.

`TurnEnds` owns whether the agent has worked (or been answered: what it does next answers to us), whether it was given
its task and not seen working yet, and the turn end being judged; it reads the pilot through its View and asks it for
the rest (held.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cursorpilot.channels.pty.facts import Effect
from cursorpilot.channels.pty.held import Abort, Asking, Escalate, EndTurn, Fail, Finish, Go, TurnEnd, View, WakeBy, Want, still_there
from cursorpilot.channels.pty.machine import Event
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import Next, TurnFacts
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import models as R

STARTING_GRACE = 20.0  # an agent given its task that shows only its idle composer this long has finished it unseen
PROSE = ".prose_question"  # the classifier's id for an agent's closing question at its composer: a turn end that asks


@dataclass(slots=True)
class TurnEnds:
    starting: bool = False  # given its task, the agent has not been seen working yet
    starting_since: float | None = None
    worked: bool = False  # a working marker was seen, or we answered something
    turn: TurnEnd | None = None  # the turn end being judged

    def saw_work(self, c: Classification, progress: bool) -> list[Effect]:
        """A working marker (`progress`: one that says the task is under way, not a start-up screen)."""
        self.worked = self.worked or progress
        if progress and self.starting:
            self.starting = False
            return [Record(R.AgentStarted(rule_id=c.rule_id))]
        return []

    def still_starting(self, now: float, c: Classification) -> list[Effect | Want]:
        """Given its task, the agent shows its idle composer: it has not started yet (or finished before we looked)."""
        if self.starting_since is None:
            self.starting_since = now
        if now - self.starting_since < STARTING_GRACE:
            return [WakeBy(self.starting_since + STARTING_GRACE)]
        self.starting = False
        self.worked = True  # the composer came back and stayed: the task ran between two looks, and its turn ended
        return [Record(R.AgentStarted(rule_id=c.rule_id, unseen=True)), EndTurn(c)]

    def stopped(self, view: View, c: Classification) -> bool:
        """Back at its composer after working, idle or asking something in prose: the agent's turn has ended."""
        if not (self.worked and view.sent and view.profile.finish.mode == "idle"):
            return False
        return c.state == ScreenKind.IDLE or (c.state == ScreenKind.QUESTION and (c.rule_id or "").endswith(PROSE))

    def begin(self, c: Classification) -> TurnEnd:
        """The agent stopped: its composer is the field the next message goes into, its last message is read next."""
        closing = Question(kind=c.state, text=c.block, key=c.key or "", source=c.rule_id or "screen") if c.state == ScreenKind.QUESTION else None
        self.turn = TurnEnd(replace(c, state=ScreenKind.INPUT, submit=True), c.block, closing)
        return self.turn

    def goal_checked(self, view: View, now: float, facts: TurnFacts, message: str) -> Question | Next:
        """What the turn end found: the facts decide (Next), or the decision path is asked one question."""
        t = self.turn
        assert t is not None
        t.message = message or t.message
        n = view.turns.ended(now, facts, t.message, t.closing is not None)
        if n.action != "ask":
            return n
        return view.turns.question(text=t.message, source=t.c.rule_id or "screen", closing=t.closing, multiline=t.c.multiline)

    def decided(self, view: View, now: float, a: Asking, d: Decision, content: int, current: Classification | None) -> list[Effect | Want] | Next:
        """The judge's word on the turn end: what it leads to (Next), or, when the agent went on by itself while it was
        judged, no turn end at all."""
        went_on = a.content != content and current is not None and not still_there(a.c, current)
        if d.verdict not in (Verdict.FAIL, Verdict.ESCALATE) and went_on:
            view.turns.turn -= 1  # the agent went on by itself while its turn end was judged: that was no turn end
            return [WakeBy(now), Record(R.ReplyDiscarded(reason="the agent went on while its turn end was judged", prompt_key=a.c.key)),
                    Go(Event.NO_REPLY, a.c)]
        return view.turns.judged(d)

    def sent(self, view: View, n: Next, went: bool) -> Record:
        """A turn end's next message typed (`went`), or held back by the answer cap: a resume sends it."""
        held: dict = {} if went else {"sent": None}
        if held and not view.counts.dry_run:
            view.turns.held(n.message or "")
            held["pending"] = n.message
        return Record(R.TurnEnd(**{**view.turns.record(n), **held}))

    def outcome(self, view: View, n: Next) -> list[Effect | Want]:
        """A turn end's outcome other than a message: done, a human, or a stop."""
        t = self.turn
        assert t is not None
        out: list[Effect | Want] = [Record(R.TurnEnd(**view.turns.record(n)))]
        if n.action == "finish":
            return [*out, Finish(f"completed ({n.why})", t.c)]
        if n.action == "human":
            return [*out, Escalate(t.c, n.why, Kind.TURN_END.value, shown=t.message)]
        if n.code == ExitCode.FAILED:
            return [*out, Fail(n.why, t.c)]
        return [*out, Abort(n.code, n.why)]
