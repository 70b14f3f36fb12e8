"""The rules of a PTY step, PURE: `handle(now, fact)` in, effects out (h11's cut: the loop owns every I/O).

Facts (pty/facts.py): the program started, a classified screen, the decision path's answer, a key falling due, the
keys being out, the program's exit, an interrupt, a deadline, what a turn end found. Effects: record this, ask about
that question, type these keys (the typist, pty/typist.py, says when each goes), ask a human, check the goal, close or
kill the program. Here the step is sequenced: each fact goes to the part it concerns. The step's state is one value,
held.py's StepState (`print(pilot.step)`); the parts are functions of it that return these same effects: the state
machine's moves (step.py), the question being decided (asking.py), whether an answer was taken (the facts, never
stillness: answering.py), an agent's turn end (turnend.py), when a quiet screen is judged or left to work and a stuck
turn interrupted (quiet.py), a limit waited out and an agent told to go on (goingon.py). Tested with a fake clock, in
milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import assert_never

from cursorpilot.channels.pty import answering, asking, goingon, quiet, turnend
from cursorpilot.channels.pty.facts import (Ask, Deadline, Decided, Effect, Exited, Fact, GoalChecked, HandedBack, Interrupted, KeyDue,
                                            Kill, PilotConfig, Replied, ScreenFacts, Started, Taken, Typed, classified_by)
from cursorpilot.channels.pty.facts import Screen as ScreenFact
from cursorpilot.channels.pty.held import Answers, GoingOn, StepState, TurnEnds, still_there
from cursorpilot.channels.pty.machine import TERMINAL, Event, State
from cursorpilot.channels.pty.step import abort, fail, finish, go
from cursorpilot.decide.deliver import Record, RunCounts, unanswered
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import TurnFacts, Turns
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import Profile, ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import answerer, models as R


@dataclass(slots=True)
class Pilot:
    """Sequences a step: each fact goes to the part it concerns, which changes the step's state and returns effects.
    The state is one value (`step`, held.py's StepState: `print(pilot.step)` shows it whole)."""

    config: PilotConfig = field(repr=False)  # (its secrets never printed)
    counts: RunCounts
    step: StepState = field(init=False)

    def __post_init__(self) -> None:
        self.step = StepState(self.config, self.counts)

    # -- what the loop reads ---------------------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self.step.state

    @property
    def exit_code(self) -> ExitCode:
        return self.step.exit_code

    @property
    def reason(self) -> str:
        return self.step.reason

    @property
    def taken(self) -> bool:
        return self.step.taken

    @property
    def answering(self) -> Answers:
        return self.step.answering

    @property
    def turn_ends(self) -> TurnEnds:
        return self.step.turn_ends

    @property
    def going_on(self) -> GoingOn:
        return self.step.going_on

    @property
    def turns(self) -> Turns:
        return self.step.turns

    @property
    def answers(self) -> int:
        return self.step.tally.answers

    @property
    def preview(self) -> dict | None:
        return self.step.tally.preview

    @property
    def profile(self) -> Profile:
        return self.config.profile

    @property
    def done(self) -> bool:
        return self.step.state in TERMINAL

    @property
    def answered(self) -> dict[str, int]:
        return self.step.answering.answered

    def wake_at(self) -> float | None:
        """When the pilot wants to look again even if nothing happens (a watch falls due, a screen is judged)."""
        watch = self.step.answering.watch
        times = [t for t in (self.step.wake, watch.due if watch else None) if t is not None]
        return min(times) if times else None

    def enter_waits(self) -> bool:
        return self.step.typist.enter_waits()  # (the loop then says in the key's facts whether the kernel sees it at work)

    def key_at(self, version: int | None = None) -> float | None:
        return self.step.typist.due_at(version)  # when the next key falls due (typist.py)

    # -- facts in ----------------------------------------------------------------------------------------------------
    def handle(self, now: float, fact: Fact) -> list[Effect]:
        s = self.step
        match fact:
            case Started(pid, command, hidden):
                return [Record(R.ProgramStarted(pid=pid, command=list(command), profile=self.profile.name,
                                                profile_hash=self.profile.digest(), started_with_task=self.config.started_with_task or None,
                                                hidden_env=list(hidden) or None)), *go(s, Event.STARTED, None)]
            case Replied(data):
                return [Record(R.TerminalReply(data=data.decode("utf-8", "replace"), hex=data.hex()))]
            case ScreenFact(c, facts):
                return self._screen(now, c, facts)
            case Decided(token, d, content, modes, current):
                s.look.modes = modes
                return self._decided(now, token, d, content, current)
            case KeyDue(view):
                return answering.keys_due(s, s.typist.step(now, view))  # a key's time has come: sent if the screen allows
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
                return [] if self.done else abort(s, ExitCode.LIMIT, reason)
            case GoalChecked(token, facts, message):
                return self._goal_checked(now, token, facts, message)
            case Taken(by):
                return self._taken(by)
            case HandedBack(by, keys):
                return self._handed_back(now, by, keys)
            case _:
                assert_never(fact)

    def _screen(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        s = self.step
        if s.state != State.RUNNING or s.questions.asking is not None or s.taken:
            return []
        said, read = quiet.kernel(s, now, c, facts)  # never silent: a stopped program is said, a still and idle one waits
        if read is None:
            return said
        out, facts = said + self._record_state(c, read), read
        s.look.saw(now, c, facts)
        s.wake = None if c.recheck_after is None else now + c.recheck_after
        if s.answering.watch is not None:
            held = answering.follow(s, now, c, facts)
            if held is not None:
                return out + held
        if self.config.expect_regex and c.state != ScreenKind.SETTLING and re.search(self.config.expect_regex, facts.text, re.M):
            return out + finish(s, f"completed (expect {self.config.expect_regex!r} seen)", c)
        return out + self._classified(now, c, facts)

    def _classified(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        s = self.step
        if s.going_on.waiting is not None and (held := goingon.goes_on(s, now, c, facts)) is not None:
            return held
        if goingon.is_limit(c):  # a usage limit: waited out, not failed (pty/goingon.py)
            if facts.tty == "busy" and c.key == s.going_on.went_on:  # the screen it was told to go on from, not painted
                return quiet.left_to_work(s, now, c, facts)  # away yet: it works on that, no second limit
            return goingon.limit(s, now, c, facts)
        if c.state == ScreenKind.WORKING:
            return quiet.working(s, now, c, facts)
        if c.state == ScreenKind.ERROR:
            return fail(s, f"{c.error}: {c.evidence}", c)
        if c.state == ScreenKind.IDLE and s.turn_ends.starting:
            return turnend.still_starting(s, now, c)
        if c.state == ScreenKind.COMPLETED:
            return finish(s, f"completed ({c.rule_id})", c)
        if turnend.stopped(s, c):
            return turnend.end_turn(s, c)
        if c.state == ScreenKind.SETTLING:
            return []  # it looks again when the screen has settled (recheck_after)
        if c.state == ScreenKind.UNKNOWN:
            return quiet.undecided(s, now, c, facts)
        if facts.tty == "busy" and c.state != ScreenKind.IDLE:  # a prompt printed by a program that does not read (yet): a
            return quiet.left_to_work(s, now, c, facts)  # key now would wait for whatever reads next
        s.quiet.busy_since = None
        if c.state == ScreenKind.IDLE:  # a composer waiting: typed into like a field
            c = replace(c, state=ScreenKind.INPUT)
        if c.key not in s.answering.answered:
            return self._prompted(now, c)
        return quiet.asked_again(s, now, c, facts)

    def _decided(self, now: float, token: int, d: Decision, content: int, current: Classification | None) -> list[Effect]:
        """The answerer's decision on `token`; `current`: the screen as it classifies now, when it changed since asked.
        What it leads to: a failure, a human, a wait, a stale reply dropped, the same answer not taken given again
        (escalated), or the answer typed."""
        s = self.step
        a = s.questions.asking
        if a is None or a.token != token:
            return []  # superseded (the step ended, or the prompt was re-asked)
        s.questions.asking = None
        if a.kind == Kind.TURN_END and s.state == State.ASKING_QUESTION:
            return turnend.decided(s, now, a, d, content, current)
        if s.state == State.AWAITING_INPUT:
            if d.verdict != Verdict.ANSWER or d.text is None:
                return abort(s, ExitCode.HUMAN_NEEDED, unanswered("", d.why).reason)  # why no answer came
            turn = s.turn_ends.turn
            shown = turn.message if a.kind == Kind.TURN_END and turn is not None else None
            return answering.type_answer(s, now, a.c, d, s.look.modes, a.kind, a.secret, prompt=shown)  # (its reply: human/humans.py records it)
        if d.verdict == Verdict.FAIL:
            return abort(s, ExitCode.LIMIT, d.why) if d.limit else fail(s, d.why, a.c)
        if d.verdict == Verdict.ESCALATE:
            settled = asking.unsettled_miss(s, now, a, d)
            if settled is None:
                return asking.escalate(s, a.c, d.why, a.kind)
            s.wake_by(settled)
            return go(s, Event.NO_REPLY, a.c)
        if d.verdict == Verdict.WAIT:
            return quiet.waited_out(s, now, a, d)
        if a.content != content and current is not None and not still_there(a.c, current):
            s.wake_by(now)
            return [Record(R.ReplyDiscarded(reason="the prompt changed while the answer was chosen", prompt_key=a.c.key)),
                    *go(s, Event.NO_REPLY, a.c)]
        if a.not_taken is not None and d.text == a.not_taken and d.by.rule is not None:  # told, the rules can't differ
            typed = s.answering.typed.get(a.c.key or "", a.not_taken)
            return asking.escalate(s, a.c, f"the program did not take {typed!r} (it waits on its terminal, the screen as it was), and "
                                           f"the rules give the same answer again", a.kind)
        return answering.type_answer(s, now, a.c, d, s.look.modes, a.kind, a.secret)

    def _typed_out(self, now: float, content: int) -> list[Effect]:
        """Every key of the answer is out; `content` is the screen as it was then."""
        s = self.step
        if s.state != State.ANSWERING:
            return []
        answering.keys_out(s, now, content)
        s.wake = now
        return go(s, Event.TYPED, None)

    def _exited(self, code: int | None, describe: str) -> list[Effect]:
        if self.done:
            return []
        if code == 0:
            return finish(self.step, "the program exited with code 0", None)
        return fail(self.step, f"the program ended: {describe}", None)

    def _interrupted(self, count: int) -> list[Effect]:
        """Ctrl-C: the step stops (SIGINT to the program); a second one while it is being closed kills it."""
        out = [] if self.done else abort(self.step, ExitCode.INTERRUPTED, "interrupted")
        return out + ([Record(R.Kill(reason="second interrupt")), Kill()] if count >= 2 else [])

    def _taken(self, by: str) -> list[Effect]:
        """A person took the keyboard: what was being asked, typed or watched is dropped, and nothing more until it is back."""
        s = self.step
        if self.done or s.taken:
            return []
        s.taken, s.questions.asking, s.answering.watch, s.turn_ends.turn = True, None, None, None
        s.typist.clear()
        event = {State.ASKING_QUESTION: Event.NO_REPLY, State.AWAITING_INPUT: Event.NO_REPLY, State.ANSWERING: Event.TYPED}.get(s.state)
        return [Record(R.TakeOver(action="taken", by=by)), *(go(s, event, None) if event else [])]

    def _handed_back(self, now: float, by: str, keys: int) -> list[Effect]:
        """The keyboard is back: the screen is judged afresh, as if first seen (what was answered before, a wait under way
        and the last state said are forgotten: the person may have answered, or changed everything)."""
        s = self.step
        if not s.taken:
            return []
        s.taken, s.look.last, s.going_on.waiting, s.going_on.went_on = False, None, None, None
        s.answering.forget()
        s.quiet.forget()
        s.wake = now
        return [Record(R.TakeOver(action="handed_back", by=by, keys=keys))]

    def _goal_checked(self, now: float, token: int, facts: TurnFacts, message: str) -> list[Effect]:
        """What the turn end found: the facts decide, or the decision path is asked one question."""
        s = self.step
        a = s.questions.asking
        if a is None or a.token != token or s.turn_ends.turn is None:
            return []  # superseded (the step ended meanwhile)
        asked = turnend.goal_checked(s, now, facts, message)
        if isinstance(asked, Question):
            return [Ask(token, a.c, Kind.TURN_END.value, question=asked)]
        s.questions.asking = None
        return turnend.turn_next(s, now, asked)

    def _prompted(self, now: float, c: Classification) -> list[Effect]:
        s = self.step
        if not s.sent and c.state == ScreenKind.INPUT:
            s.sent = True
            out = go(s, Event.PROMPT, c)
            return out + answering.type_answer(s, now, c, Decision(Verdict.ANSWER, text=self.config.send or "", source=answerer.PLAN_SEND),
                                               s.look.modes, None, asking.secret(s, c))
        return asking.ask(s, now, c, None)

    def _record_state(self, c: Classification, facts: ScreenFacts) -> list[Effect]:
        s = self.step
        state = s.look.new_state(c, s.turn_ends.starting)
        if state is None:
            return []
        s.quiet.busy_since = None  # a new state recorded: the kernel's "busy" is said again after it
        return [Record(R.ScreenState(state=state, rule_id=c.rule_id, prompt=c.block or None,
                                     evidence=c.evidence or None, error=c.error, facts=classified_by(c, facts)))]
