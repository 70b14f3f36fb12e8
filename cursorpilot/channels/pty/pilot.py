"""The rules of a PTY step, PURE: `handle(now, fact)` in, effects out (h11's cut: the loop owns every I/O).

Facts (pty/facts.py): the program started, a classified screen, the decision path's answer, a key falling due, the
keys being out, the program's exit, an interrupt, a deadline, what a turn end found. Effects: record this, ask about
that question, type these keys (the typist, pty/typist.py, says when each goes), ask a human, check the goal, close or
kill the program. Here the step is sequenced; its rules live in its parts, each a component that owns its state and
reads the pilot through a View (held.py): the question being decided (asking.py), whether an answer was taken (the
facts, never stillness: answering.py), when a quiet screen is judged or left to work (quiet.py), when an agent's turn
has ended (turnend.py), a limit waited out or a stuck turn interrupted (goingon.py). What a part needs beyond its own
state it asks for (held.py's wants), and this carries it out, in order. Tested with a fake clock, in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

from cursorpilot.channels.pty.answering import Answers
from cursorpilot.channels.pty.asking import Questions
from cursorpilot.channels.pty.facts import (Ask, Close, Deadline, Decided, Effect, Exited, Fact, GoalChecked, HandedBack, Interrupted, KeyDue,
                                            Kill, PilotConfig, ReadMessage, Replied, ScreenFacts, Started, Taken, Type, Typed, classified_by)
from cursorpilot.channels.pty.facts import Screen as ScreenFact
from cursorpilot.channels.pty.held import (Abort, AskAbout, EndTurn, Escalate, Fail, Finish, Forget, Go, Schedule, Stuck, TypeAnswer,
                                           Waited, WakeBy, Want, Watched, Working, Look)
from cursorpilot.channels.pty.machine import TERMINAL, Action, Event, State, transition
from cursorpilot.channels.pty.quiet import Quiet
from cursorpilot.channels.pty.goingon import GoingOn, is_limit
from cursorpilot.channels.pty.turnend import TurnEnds
from cursorpilot.channels.pty.typist import KeyView, Typist
from cursorpilot.decide.deliver import Record, RunCounts, Tally, unanswered
from cursorpilot.decide.limits import Limits
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, Next, TurnFacts, Turns
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import Profile, ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes, to_writes
from cursorpilot.records import answerer, models as R

STOP_GRACE = 3.0  # SIGINT (or the quit keys), then SIGKILL after this long
_LATE = Record(R.Kill(reason="program did not exit in time", signal="SIGKILL"))


@dataclass(slots=True)
class Pilot:
    config: PilotConfig
    counts: RunCounts
    state: State = State.INIT
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    sent: bool = False  # the step's `send` was typed (or there is none)
    typist: Typist = field(default_factory=Typist)
    answering: Answers = field(default_factory=Answers)  # an answer's life (answering.py)
    quiet: Quiet = field(default_factory=Quiet)  # quiet screens (quiet.py)
    turn_ends: TurnEnds = field(default_factory=TurnEnds)  # an agent's turn ends (turnend.py)
    going_on: GoingOn = field(default_factory=GoingOn)  # a limit waited out, a stuck turn interrupted (goingon.py)
    questions: Questions = field(default_factory=Questions)  # the question being decided (asking.py)
    taken: bool = False  # a person has the keyboard (cursor-pilot watch --take): nothing is typed or asked
    look: Look = field(default_factory=Look)  # the screen at the last look (held.py)
    _wake: float | None = None
    _now: float = 0.0
    tally: Tally = field(init=False)
    turns: Turns = field(init=False)
    limits: Limits = field(init=False)

    def __post_init__(self) -> None:
        self.sent = self.config.send is None
        self.turn_ends.starting = self.config.started_with_task
        self.tally = Tally(self.counts, self.config.max_answers)
        self.turns = Turns(self.config.turns)
        self.limits = Limits(self.config.limits)

    # -- what the loop reads, and the View its parts read (pty/held.py) ------------------------------------------------
    @property
    def answers(self) -> int:
        return self.tally.answers

    @property
    def preview(self) -> dict | None:
        return self.tally.preview

    @property
    def profile(self) -> Profile:
        return self.config.profile

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    @property
    def answered(self) -> dict[str, int]:
        return self.answering.answered

    def stopped(self, c: Classification) -> bool:
        return self.turn_ends.stopped(self, c)

    def wake_at(self) -> float | None:
        """When the pilot wants to look again even if nothing happens (a watch falls due, a screen is judged)."""
        watch = self.answering.watch
        times = [t for t in (self._wake, watch.due if watch else None) if t is not None]
        return min(times) if times else None

    def enter_waits(self) -> bool:
        return self.typist.enter_waits()  # (the loop then says in the key's facts whether the kernel sees it at work)

    def key_at(self, version: int | None = None) -> float | None:
        return self.typist.due_at(version)  # when the next key falls due (typist.py)

    # -- facts in ----------------------------------------------------------------------------------------------------
    def handle(self, now: float, fact: Fact) -> list[Effect]:
        self._now = now
        match fact:
            case Started(pid, command, hidden):
                return [Record(R.ProgramStarted(pid=pid, command=list(command), profile=self.profile.name,
                                                profile_hash=self.profile.digest(), started_with_task=self.config.started_with_task or None,
                                                hidden_env=list(hidden) or None)), *self._apply(Event.STARTED, None)]
            case Replied(data):
                return [Record(R.TerminalReply(data=data.decode("utf-8", "replace"), hex=data.hex()))]
            case ScreenFact(c, facts):
                return self._screen(now, c, facts)
            case Decided(token, d, content, modes, current):
                self.look.modes = modes
                return self._decided(now, token, d, content, current)
            case KeyDue(view):
                return self._key_due(now, view)
            case Typed(content):
                return self._typed_out(now, content)
            case Exited(code, signal, describe, last, ignored):
                out: list[Effect] = [Record(R.ProgramExited(code=code, signal=signal, describe=describe, last_words=last))]
                if ignored:
                    out.append(Record(R.TerminalIgnored(counts=dict(ignored))))
                # why it ended is usually its last line: said where the user looks, not only in the recording
                return out + self._exited(code, describe + (f"; it last showed: {last}" if last else ""))
            case Interrupted(count):
                return self._interrupted(count)
            case Deadline(reason):
                return [] if self.done else self._abort(ExitCode.LIMIT, reason)
            case GoalChecked(token, facts, message):
                return self._goal_checked(now, token, facts, message)
            case Taken(by):
                return self._taken(by)
            case HandedBack(by, keys):
                return self._handed_back(now, by, keys)
            case _:
                assert_never(fact)

    def _screen(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        if self.state != State.RUNNING or self.questions.asking is not None or self.taken:
            return []
        said, read = self.quiet.kernel(now, c, facts)  # never silent: a stopped program is said, a still and idle one waits
        if read is None:
            return self._carry(said)
        out, facts = self._carry(said) + self._record_state(c, read), read
        self.look.saw(now, c, facts)
        self._wake = None if c.recheck_after is None else now + c.recheck_after
        if self.answering.watch is not None:
            held = self.answering.follow(self, now, c, facts)
            if held is not None:
                return out + self._carry(held)
        if self.config.expect_regex and c.state != ScreenKind.SETTLING and re.search(self.config.expect_regex, facts.text, re.M):
            return out + self._finish(f"completed (expect {self.config.expect_regex!r} seen)", c)
        return out + self._classified(now, c, facts)

    def _classified(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        if self.going_on.waiting is not None and (held := self.going_on.goes_on(self, now, c, facts)) is not None:
            return self._carry(held)
        if is_limit(c):  # a usage limit: waited out, not failed (pty/goingon.py)
            if facts.tty == "busy" and c.key == self.going_on.went_on:  # the screen it was told to go on from, not painted
                return self._carry(self.quiet.left_to_work(self, now, c, facts))  # away yet: it works on that, no second limit
            return self._carry(self.going_on.limit(self, now, c, facts))
        if c.state == ScreenKind.WORKING:
            return self._working(now, c, facts)
        if c.state == ScreenKind.ERROR:
            return self._fail(f"{c.error}: {c.evidence}", c)
        if c.state == ScreenKind.IDLE and self.turn_ends.starting:
            return self._carry(self.turn_ends.still_starting(now, c))
        if c.state == ScreenKind.COMPLETED:
            return self._finish(f"completed ({c.rule_id})", c)
        if self.stopped(c):
            return self._turn_end(c)
        if c.state == ScreenKind.SETTLING:
            return []  # it looks again when the screen has settled (recheck_after)
        if c.state == ScreenKind.UNKNOWN:
            return self._carry(self.quiet.undecided(self, now, c, facts))
        if facts.tty == "busy" and c.state != ScreenKind.IDLE:  # a prompt printed by a program that does not read (yet): a
            return self._carry(self.quiet.left_to_work(self, now, c, facts))  # key now would wait for whatever reads next
        self.quiet.busy_since = None
        if c.state == ScreenKind.IDLE:  # a composer waiting: typed into like a field
            c = replace(c, state=ScreenKind.INPUT)
        if c.key not in self.answering.answered:
            return self._prompted(now, c)
        return self._carry(self.quiet.asked_again(self, now, c, facts))

    def _decided(self, now: float, token: int, d: Decision, content: int, current: Classification | None) -> list[Effect]:
        """The answerer's decision on `token`; `current`: the screen as it classifies now, when it changed since asked."""
        a = self.questions.asking
        if a is None or a.token != token:
            return []  # superseded (the step ended, or the prompt was re-asked)
        self.questions.asking = None
        if a.kind == Kind.TURN_END and self.state == State.ASKING_QUESTION:
            judged = self.turn_ends.decided(self, now, a, d, content, current)
            return self._carry(judged) if isinstance(judged, list) else self._turn_next(now, judged)
        if self.state == State.AWAITING_INPUT:
            if d.verdict != Verdict.ANSWER or d.text is None:
                return self._abort(ExitCode.HUMAN_NEEDED, unanswered("", d.why).reason)  # why no answer came
            turn = self.turn_ends.turn
            shown = turn.message if a.kind == Kind.TURN_END and turn is not None else None
            return self._type_answer(now, a.c, d, self.look.modes, a.kind, a.secret, prompt=shown)  # (its reply: human/humans.py records it)
        return self._carry(self.questions.decided(self, now, a, d, content, current))

    def _key_due(self, now: float, view: KeyView) -> list[Effect]:
        """A key's time has come: the typist sends it if the screen allows (the highlight, the echo)."""
        return self._carry(self.answering.keys_due(self.typist.step(now, view)))

    def _typed_out(self, now: float, content: int) -> list[Effect]:
        """Every key of the answer is out; `content` is the screen as it was then."""
        if self.state != State.ANSWERING:
            return []
        self.answering.keys_out(now, content)
        self._wake = now
        return self._apply(Event.TYPED, None)

    def _exited(self, code: int | None, describe: str) -> list[Effect]:
        if self.done:
            return []
        if code == 0:
            return self._finish("the program exited with code 0", None)
        return self._fail(f"the program ended: {describe}", None)

    def _interrupted(self, count: int) -> list[Effect]:
        """Ctrl-C: the step stops (SIGINT to the program); a second one while it is being closed kills it."""
        out = [] if self.done else self._abort(ExitCode.INTERRUPTED, "interrupted")
        return out + ([Record(R.Kill(reason="second interrupt")), Kill()] if count >= 2 else [])

    def _taken(self, by: str) -> list[Effect]:
        """A person took the keyboard: what was being asked, typed or watched is dropped, and nothing more until it is back."""
        if self.done or self.taken:
            return []
        self.taken, self.questions.asking, self.answering.watch, self.turn_ends.turn = True, None, None, None
        self.typist.clear()
        event = {State.ASKING_QUESTION: Event.NO_REPLY, State.AWAITING_INPUT: Event.NO_REPLY, State.ANSWERING: Event.TYPED}.get(self.state)
        return [Record(R.TakeOver(action="taken", by=by)), *(self._apply(event, None) if event else [])]

    def _handed_back(self, now: float, by: str, keys: int) -> list[Effect]:
        """The keyboard is back: the screen is judged afresh, as if first seen (what was answered before, a wait under way
        and the last state said are forgotten: the person may have answered, or changed everything)."""
        if not self.taken:
            return []
        self.taken, self.look.last, self.going_on.waiting, self.going_on.went_on = False, None, None, None
        self.answering.forget()
        self.quiet.forget()
        self._wake = now
        return [Record(R.TakeOver(action="handed_back", by=by, keys=keys))]

    # -- what the parts ask for (pty/held.py), carried out in order ------------------------------------------------------
    def _carry(self, items: Sequence[Effect | Want]) -> list[Effect]:
        out: list[Effect] = []
        for i in items:
            match i:
                case AskAbout(c, kind, notes, not_taken, whole):
                    out += self._ask(c, kind, notes, not_taken, whole)
                case Escalate(c, why, kind, shown):
                    out += self._carry(self.questions.escalate(self, c, why, kind, shown))
                case Go(event, c):
                    out += self._apply(event, c)
                case Fail(reason, c):
                    out += self._fail(reason, c)
                case Abort(code, reason):
                    out += self._abort(code, reason)
                case Finish(reason, c):
                    out += self._finish(reason, c)
                case WakeBy(at):
                    self._wake_by(at)
                case Schedule(writes, paced):
                    self.typist.schedule(writes, self._now, paced=paced)
                case TypeAnswer(c, d, modes, kind, secret, prompt):
                    out += self._type_answer(self._now, c, d, modes, kind, secret, prompt)
                case Working(c, facts):
                    out += self._working(self._now, c, facts)
                case Stuck(c, still, why):
                    out += self._carry(self.going_on.stuck_turn(self, self._now, c, still, why))
                case Forget(key):
                    self.answering.answered.pop(key, None)
                case Waited(a, d):
                    out += self._carry(self.quiet.waited_out(self._now, a, d))
                case Watched(watch):
                    self.answering.watch, self.turn_ends.worked = watch, True
                case EndTurn(c):
                    out += self._turn_end(c)
                case _:
                    out.append(i)
        return out

    def _type_answer(self, now: float, c: Classification, d: Decision, modes: Modes, kind: str | None,
                     secret: bool = False, prompt: str | None = None) -> list[Effect]:
        out, typed = self.answering.type(self, now, c, d, modes, kind, secret, prompt)
        if typed:  # whatever the program does next answers to us: idle afterwards means done
            self.quiet.waits_in_a_row = 0
            self.limits.progressed()
            self.turn_ends.worked = True
        return self._carry(out)

    def _working(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        rule = next((r for r in self.profile.rules if r.id == c.rule_id), None)
        out: list[Effect] = self.turn_ends.saw_work(c, rule is None or rule.progress)
        stuck_after = self.config.stuck_after or self.profile.stuck_after_s
        return out + self._carry(self.quiet.working(self, now, c, facts, stuck_after))

    def _turn_end(self, c: Classification) -> list[Effect]:
        """The agent stopped: the loop checks the goal and the working tree, and reads its last message (GoalChecked)."""
        a = self.questions.open(self, self.turn_ends.begin(c).c, Kind.TURN_END.value)
        return [*self._apply(Event.PROMPT, c), CheckGoal(a.token), ReadMessage(a.token, c, self.turns.last_sent, self.turns.message)]

    def _goal_checked(self, now: float, token: int, facts: TurnFacts, message: str) -> list[Effect]:
        """What the turn end found: the facts decide, or the decision path is asked one question."""
        a = self.questions.asking
        if a is None or a.token != token or self.turn_ends.turn is None:
            return []  # superseded (the step ended meanwhile)
        asked = self.turn_ends.goal_checked(self, now, facts, message)
        if isinstance(asked, Question):
            return [Ask(token, a.c, Kind.TURN_END.value, question=asked)]
        self.questions.asking = None
        return self._turn_next(now, asked)

    def _turn_next(self, now: float, n: Next) -> list[Effect]:
        """A turn end's outcome, carried out: type the next message into the composer, or done, a human, a stop."""
        t = self.turn_ends.turn
        assert t is not None
        if n.action == "send":
            typed = self._type_answer(now, t.c, Decision(Verdict.ANSWER, text=n.message, source=n.source), self.look.modes,
                                      Kind.TURN_END.value, prompt=t.message)
            return [self.turn_ends.sent(self, n, went=any(isinstance(e, Type) for e in typed)), *typed]
        return self._carry(self.turn_ends.outcome(self, n))

    # -- the rules -----------------------------------------------------------------------------------------------------
    def _wake_by(self, t: float) -> None:
        self._wake = t if self._wake is None else min(self._wake, t)

    def _prompted(self, now: float, c: Classification) -> list[Effect]:
        if not self.sent and c.state == ScreenKind.INPUT:
            self.sent = True
            out = self._apply(Event.PROMPT, c)
            return out + self._type_answer(now, c, Decision(Verdict.ANSWER, text=self.config.send or "", source=answerer.PLAN_SEND),
                                           self.look.modes, None, self.questions.secret(self, c))
        return self._ask(c, None)

    def _ask(self, c: Classification, kind: str | None, notes: tuple[str, ...] = (), not_taken: str | None = None,
             whole: ScreenFacts | None = None) -> list[Effect]:
        """Ask the decision path; `whole`: a screen no rule explains, asked with its record (the screen, and by what
        facts), once."""
        asked = self._carry(self.questions.ask(self, self._now, c, kind, notes, not_taken))
        if asked and whole is not None and self.quiet.judged(c.key):
            asked.insert(0, Record(R.ScreenState(state=ScreenKind.UNKNOWN, rule_id=c.rule_id, prompt=c.block or None,
                                                 evidence=None, error=None, facts=classified_by(c, whole))))
        return asked

    def _finish(self, reason: str, c: Classification | None) -> list[Effect]:
        self.reason = reason
        return self._apply(Event.FINISHED, c)

    def _fail(self, reason: str, c: Classification | None) -> list[Effect]:
        self.exit_code, self.reason = ExitCode.FAILED, reason
        return self._apply(Event.FAILED, c)

    def _abort(self, code: ExitCode, reason: str) -> list[Effect]:
        self.exit_code, self.reason = code, reason
        return self._apply(Event.ABORT, None)

    def _apply(self, event: Event, c: Classification | None) -> list[Effect]:
        before = self.state
        self.state, actions = transition(self.state, event)
        out: list[Effect] = [Record(R.State(event=event.value, from_=before.value, to=self.state.value,
                                            rule_id=c.rule_id if c else None))]
        for action in actions:
            if action in (Action.CLOSE, Action.STOP):
                self.questions.asking = None
                out += self._close(graceful=action == Action.CLOSE or self.exit_code != ExitCode.INTERRUPTED)
        return out

    def _close(self, graceful: bool) -> list[Effect]:
        """End the program: the profile's quit keys when it is healthy (never in a dry run: it types nothing), else
        SIGINT; SIGKILL if it has not exited after the grace."""
        self.typist.clear()
        self.answering.watch = None
        keys = tuple(self.profile.finish.close) if graceful and not self.counts.dry_run else ()
        if keys:
            delay = max(self.profile.key_delay_ms / 1000, 0.3)
            self.typist.schedule(tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay)), 0.0)
            return [Close(True, self.profile.finish.close_timeout_s, Record(R.Closing(how="keys", keys=list(keys))), _LATE)]
        return [Close(False, STOP_GRACE, Record(R.Closing(how="signal", signal="SIGINT")), _LATE)]

    def _record_state(self, c: Classification, facts: ScreenFacts) -> list[Effect]:
        state = self.look.new_state(c, self.turn_ends.starting)
        if state is None:
            return []
        self.quiet.busy_since = None  # a new state recorded: the kernel's "busy" is said again after it
        return [Record(R.ScreenState(state=state, rule_id=c.rule_id, prompt=c.block or None,
                                     evidence=c.evidence or None, error=c.error, facts=classified_by(c, facts)))]
