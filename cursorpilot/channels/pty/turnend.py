"""The PTY pilot's rules for an agent's turn end, PURE (a part of the step, held.py); decide/turns.py says what a
turn end leads to, here is how a screen shows one and how its outcome is carried out.

An agent back at its composer after working (or asking something in prose there, or one given its task whose composer
came back unseen) has stopped: the loop checks the goal and reads its last message off the screen (CheckGoal,
ReadMessage; GoalChecked comes back), the facts decide or the decision path judges, and the outcome is carried out:
close it, type the next message into its composer, ask a human, or stop.

It keeps (held.py's TurnEnds) whether the agent has worked (or been answered: what it does next answers to us),
whether it was given its task and not seen working yet, and the turn end being judged.
"""

from __future__ import annotations

from dataclasses import replace

from cursorpilot.channels.pty.answering import type_answer
from cursorpilot.channels.pty.asking import escalate, open_question
from cursorpilot.channels.pty.facts import Effect, ReadMessage, Type
from cursorpilot.channels.pty.held import Asking, StepState, TurnEnd, still_there
from cursorpilot.channels.pty.machine import Event
from cursorpilot.channels.pty.step import abort, fail, finish, go
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, Next, TurnFacts
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import models as R

STARTING_GRACE = 20.0  # an agent given its task that shows only its idle composer this long has finished it unseen
PROSE = ".prose_question"  # the classifier's id for an agent's closing question at its composer: a turn end that asks


def saw_work(s: StepState, c: Classification, progress: bool) -> list[Effect]:
    """A working marker (`progress`: one that says the task is under way, not a start-up screen)."""
    t = s.turn_ends
    t.worked = t.worked or progress
    if progress and t.starting:
        t.starting = False
        return [Record(R.AgentStarted(rule_id=c.rule_id))]
    return []


def still_starting(s: StepState, now: float, c: Classification) -> list[Effect]:
    """Given its task, the agent shows its idle composer: it has not started yet (or finished before we looked)."""
    t = s.turn_ends
    if t.starting_since is None:
        t.starting_since = now
    if now - t.starting_since < STARTING_GRACE:
        s.wake_by(t.starting_since + STARTING_GRACE)
        return []
    t.starting = False
    t.worked = True  # the composer came back and stayed: the task ran between two looks, and its turn ended
    return [Record(R.AgentStarted(rule_id=c.rule_id, unseen=True)), *end_turn(s, c)]


def stopped(s: StepState, c: Classification) -> bool:
    """Back at its composer after working, idle or asking something in prose: the agent's turn has ended."""
    if not (s.turn_ends.worked and s.sent and s.profile.finish.mode == "idle"):
        return False
    return c.state == ScreenKind.IDLE or (c.state == ScreenKind.QUESTION and (c.rule_id or "").endswith(PROSE))


def end_turn(s: StepState, c: Classification) -> list[Effect]:
    """The agent stopped: its composer is the field the next message goes into; the loop checks the goal and the
    working tree, and reads its last message (GoalChecked comes back)."""
    closing = Question(kind=c.state, text=c.block, key=c.key or "", source=c.rule_id or "screen") if c.state == ScreenKind.QUESTION else None
    s.turn_ends.turn = TurnEnd(replace(c, state=ScreenKind.INPUT, submit=True), c.block, closing)
    a = open_question(s, s.turn_ends.turn.c, Kind.TURN_END.value)
    return [*go(s, Event.PROMPT, c), CheckGoal(a.token), ReadMessage(a.token, c, s.turns.last_sent, s.turns.message)]


def goal_checked(s: StepState, now: float, facts: TurnFacts, message: str) -> Question | Next:
    """What the turn end found: the facts decide (Next), or the decision path is asked one question."""
    t = s.turn_ends.turn
    assert t is not None
    t.message = message or t.message
    n = s.turns.ended(now, facts, t.message, t.closing is not None)
    if n.action != "ask":
        return n
    return s.turns.question(text=t.message, source=t.c.rule_id or "screen", closing=t.closing, multiline=t.c.multiline)


def decided(s: StepState, now: float, a: Asking, d: Decision, content: int, current: Classification | None) -> list[Effect]:
    """The judge's word on the turn end, carried out; or, when the agent went on by itself while it was judged, no
    turn end at all."""
    went_on = a.content != content and current is not None and not still_there(a.c, current)
    if d.verdict not in (Verdict.FAIL, Verdict.ESCALATE) and went_on:
        s.turns.turn -= 1  # the agent went on by itself while its turn end was judged: that was no turn end
        s.wake_by(now)
        return [Record(R.ReplyDiscarded(reason="the agent went on while its turn end was judged", prompt_key=a.c.key)),
                *go(s, Event.NO_REPLY, a.c)]
    return turn_next(s, now, s.turns.judged(d))


def turn_next(s: StepState, now: float, n: Next) -> list[Effect]:
    """A turn end's outcome, carried out: type the next message into the composer, or done, a human, a stop."""
    t = s.turn_ends.turn
    assert t is not None
    if n.action == "send":
        typed = type_answer(s, now, t.c, Decision(Verdict.ANSWER, text=n.message, source=n.source), s.look.modes,
                            Kind.TURN_END.value, prompt=t.message)
        return [_sent(s, n, went=any(isinstance(e, Type) for e in typed)), *typed]
    out: list[Effect] = [Record(R.TurnEnd(**s.turns.record(n)))]
    if n.action == "finish":
        return out + finish(s, f"completed ({n.why})", t.c)
    if n.action == "human":
        return out + escalate(s, t.c, n.why, Kind.TURN_END.value, shown=t.message)
    if n.code == ExitCode.FAILED:
        return out + fail(s, n.why, t.c)
    return out + abort(s, n.code, n.why)


def _sent(s: StepState, n: Next, went: bool) -> Record:
    """A turn end's next message typed (`went`), or held back by the answer cap: a resume sends it."""
    held: dict = {} if went else {"sent": None}
    if held and not s.counts.dry_run:
        s.turns.held(n.message or "")
        held["pending"] = n.message
    return Record(R.TurnEnd(**{**s.turns.record(n), **held}))
