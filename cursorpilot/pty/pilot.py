"""The rules of a PTY step, PURE: `handle(now, fact)` in, effects out (h11's cut: the loop owns every I/O).

Facts (pty/facts.py): the program started, a classified screen, the decision path's answer, a key falling due, the
keys being out, the program's exit, an interrupt, a deadline, what a turn end found. Effects: record this, ask about
that question, type these keys (the typist, pty/typist.py, says when each goes), ask a human, check the goal, close or
kill the program. Here live the rules that decide a run: whether an answer was taken (the facts, never stillness:
`_follow_watch`), when a reply is stale, when a quiet screen is judged or left to work (pty/quiet.py), when an agent's
turn has ended (pty/turnend.py), when to escalate. Tested with a fake clock, in milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import assert_never

from cursorpilot import records as R
from cursorpilot.decide.deliver import Record, RunCounts, Tally, escalate, split, unanswered
from cursorpilot.decide.limits import Limits
from cursorpilot.decide.question import Decision, Kind, Verdict
from cursorpilot.decide.turns import Turns, gist
from cursorpilot.detect.classifier import SETTLING, UNKNOWN, Classification, headline
from cursorpilot.detect.profiles import Kind as Screen
from cursorpilot.detect.profiles import Profile
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes, to_writes
from cursorpilot.machine import TERMINAL, Action, Event, State, transition
from cursorpilot.pty.facts import (Ask, AskHuman, Close, Deadline, Decided, Effect, Exited, Fact, GoalChecked, HandedBack, Interrupted,
                                   KeyDue, Kill, PilotConfig, Replied, ScreenFacts, Started, Taken, Typed, classified_by)
from cursorpilot.pty.facts import Screen as ScreenFact
from cursorpilot.pty.answering import RETRY_GAPS, Answering
from cursorpilot.pty.quiet import QuietRules
from cursorpilot.pty.held import Asking, Resume, TurnEnd, Watch
from cursorpilot.pty.resume import Resumes, is_limit
from cursorpilot.pty.turnend import TurnEnds
from cursorpilot.pty.typist import HighlightMissed, KeyView, Typist
from cursorpilot.secret import asks_secret

STOP_GRACE = 3.0  # SIGINT (or the quit keys), then SIGKILL after this long
_LATE = Record(R.Kill(reason="program did not exit in time", signal="SIGKILL"))


@dataclass(slots=True)
class Pilot(Answering, QuietRules, TurnEnds, Resumes):
    config: PilotConfig
    counts: RunCounts
    state: State = State.INIT
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    worked: bool = False  # a working marker was seen, or we answered something
    sent: bool = False  # the step's `send` was typed (or there is none)
    starting: bool = False  # given its task, the agent has not been seen working yet
    starting_since: float | None = None
    answered: dict[str, int] = field(default_factory=dict)
    waited: dict[str, float] = field(default_factory=dict)  # undecided screens judged WAIT, and when
    waits_in_a_row: int = 0
    typist: Typist = field(default_factory=Typist)
    _asking: Asking | None = None
    _watch: Watch | None = None
    _token: int = 0
    _last: tuple[str, str | None] | None = None
    _wake: float | None = None
    _content: int = -1  # what the screen showed at the last look (a repaint with equal content keeps it)
    _echo_off: bool = False  # ...and whether the terminal's echo was off then
    _modes: Modes = Modes()  # ...and the keys' modes
    _text: str = ""  # ...and its text
    _turn: TurnEnd | None = None
    _typed: dict[str, str] = field(default_factory=dict)  # what was last typed at each prompt (a secret as its mask)
    _asked_on: dict[str, str] = field(default_factory=dict)  # the screen's text when each prompt was answered
    _busy_since: float | None = None  # the kernel has seen the quiet program busy since then (recorded once)
    _quiet_since: float = 0.0  # when the screen last changed, as of the last look
    _early_miss: dict[str, float] = field(default_factory=dict)  # rules-only misses on a screen not yet settled: asked again then
    _now: float = 0.0
    _judged_rec: str | None = None  # the screen no rule explains last recorded as judged (its key)
    answered_to: int | None = None  # the last row of the question answered last: rows down to it are history
    nudged: int = 0  # a stuck agent interrupted and told to continue, in this step (pty/resume.py)
    taken: bool = False  # a person has the keyboard (cursor-pilot watch --take): nothing is typed or asked
    _resume: Resume | None = None  # a limit's wait, or a stuck agent's interrupt, until it is told to go on
    _went_on: str | None = None  # the key of the limit screen the agent was last told to go on from
    tally: Tally = field(init=False)
    turns: Turns = field(init=False)
    limits: Limits = field(init=False)

    def __post_init__(self) -> None:
        self.sent = self.config.send is None
        self.starting = self.config.started_with_task
        self.tally = Tally(self.counts, self.config.max_answers)
        self.turns = Turns(self.config.turns)
        self.limits = Limits(self.config.limits)

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

    def wake_at(self) -> float | None:
        """When the pilot wants to look again even if nothing happens (a watch falls due, a screen is judged)."""
        times = [t for t in (self._wake, self._watch.due if self._watch else None) if t is not None]
        return min(times) if times else None

    def enter_waits(self) -> bool:
        """The key due next is an Enter that goes only once the program is no longer at work on the text before it: the
        loop then says in the key's facts whether the kernel sees it working (typist.py)."""
        return self.typist.enter_waits()

    def key_at(self, version: int | None = None) -> float | None:
        """When the next key falls due (a KeyDue then), if any is waiting to go; at once, given the screen's version,
        when the program has answered the last key of an answer paced by it (typist.py)."""
        return self.typist.due_at(version)

    # -- facts in ----------------------------------------------------------------------------------------------------
    def handle(self, now: float, fact: Fact) -> list[Effect]:
        self._now = now
        match fact:
            case Started(pid, command, hidden):
                cfg = self.config
                return [Record(R.ProgramStarted(pid=pid, command=list(command), profile=self.profile.name,
                                                profile_hash=self.profile.digest(), started_with_task=cfg.started_with_task or None,
                                                hidden_env=list(hidden) or None)), *self._apply(Event.STARTED, None)]
            case Replied(data):
                return [Record(R.TerminalReply(data=data.decode("utf-8", "replace"), hex=data.hex()))]
            case ScreenFact(c, facts):
                return self._screen(now, c, facts)
            case Decided(token, d, content, modes, current):
                self._modes = modes
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
        if self.state != State.RUNNING or self._asking is not None or self.taken:
            return []
        out = self._record_state(c, facts)
        self._content, self._echo_off, self._text, self._modes = facts.content, facts.echo_off, facts.text.rstrip(), facts.modes
        self._quiet_since = now - facts.quiet_for
        self._wake = None if c.recheck_after is None else now + c.recheck_after
        if self._watch is not None:
            held = self._follow_watch(now, c, facts)
            if held is not None:
                return out + held
        if self.config.expect_regex and c.state != SETTLING and re.search(self.config.expect_regex, facts.text, re.M):
            self.reason = f"completed (expect {self.config.expect_regex!r} seen)"
            return out + self._apply(Event.FINISHED, c)
        return out + self._classified(now, c, facts)

    def _classified(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        if self._resume is not None and (held := self._resuming(now, c, facts)) is not None:
            return held
        if is_limit(c):  # a usage limit: waited out, not failed (pty/resume.py)
            if facts.tty == "busy" and c.key == self._went_on:  # the screen it was told to go on from, not painted away
                return self._left_to_work(now, c, facts)  # yet: it read that and works on it, no second limit
            return self._limit(now, c, facts)
        if c.state == Screen.WORKING:
            return self._working(now, c, facts)
        if c.state == Screen.ERROR:
            return self._fail(f"{c.error}: {c.evidence}", c)
        if c.state == Screen.IDLE and self.starting:
            return self._still_starting(now, c, facts)
        if c.state == Screen.COMPLETED:
            self.reason = f"completed ({c.rule_id})"
            return self._apply(Event.FINISHED, c)
        if self._stopped(c):
            return self._turn_end(c)
        if c.state == SETTLING:
            return []  # it looks again when the screen has settled (recheck_after)
        if c.state == UNKNOWN:
            return self._undecided(now, c, facts)
        if facts.tty == "busy" and c.state != Screen.IDLE:  # a prompt printed by a program that does not read (yet): a
            return self._left_to_work(now, c, facts)  # key now would wait in its input for whatever reads next
        self._busy_since = None
        if c.state == Screen.IDLE:  # a composer waiting: typed into like a field
            c = replace(c, state=Screen.INPUT.value)
        if c.key not in self.answered:
            return self._prompted(now, c)
        return self._asked_again(now, c, facts)

    def _decided(self, now: float, token: int, d: Decision, content: int, current: Classification | None) -> list[Effect]:
        """The answerer's decision on `token`; `current`: the screen as it classifies now, when it changed since asked."""
        a = self._asking
        if a is None or a.token != token:
            return []  # superseded (the step ended, or the prompt was re-asked)
        self._asking = None
        if a.kind == Kind.TURN_END and self.state == State.ASKING_QUESTION:
            return self._turn_decided(now, a, d, content, current, self._modes)
        if self.state == State.AWAITING_INPUT:
            if d.verdict != Verdict.ANSWER or d.text is None:
                return self._abort(ExitCode.HUMAN_NEEDED, unanswered("", d.why).reason)  # why no answer came
            shown = self._turn.message if a.kind == Kind.TURN_END and self._turn is not None else None
            return [Record(R.HumanReply(text=d.text, secret=True if a.secret else R.OMIT)),
                    *self._type_answer(now, a.c, d, self._modes, a.kind, a.secret, prompt=shown)]
        if d.verdict == Verdict.FAIL:
            return self._abort(ExitCode.LIMIT, d.why) if d.limit else self._fail(d.why, a.c)
        if d.verdict == Verdict.ESCALATE:
            if self._unsettled_miss(now, a, d):
                return self._apply(Event.NO_REPLY, a.c)
            return self._escalate(a.c, d.why, a.kind)
        if d.verdict == Verdict.WAIT:
            return self._waited(now, a, d)
        if a.content != content and current is not None and not self._still_there(a.c, current):
            self._wake = now
            return [Record(R.ReplyDiscarded(reason="the prompt changed while the answer was chosen", prompt_key=a.c.key)),
                    *self._apply(Event.NO_REPLY, a.c)]
        if a.not_taken is not None and d.text == a.not_taken and d.source.startswith("rules:"):  # told, the rules can't differ
            typed = self._typed.get(a.c.key or "", a.not_taken)
            return self._escalate(a.c, f"the program did not take {typed!r} (it waits on its terminal, the screen as it "
                                       f"was), and the rules give the same answer again", a.kind)
        return self._type_answer(now, a.c, d, self._modes, a.kind, a.secret)

    def _key_due(self, now: float, view: KeyView) -> list[Effect]:
        """A key's time has come: the typist sends it if the screen allows (the highlight, the echo)."""
        out: list[Effect] = []
        for e in self.typist.step(now, view):
            if isinstance(e, HighlightMissed):
                self._watch = None
                c = Classification(state=Screen.MENU.value, rule_id=None, block=e.block)
                out += [Record(R.MenuCheckFailed(expected=e.expected, seen=e.seen)),
                        *self._escalate(c, f"the highlight did not reach {e.expected!r} (it is on {e.seen!r}); Enter not pressed")]
            else:
                out.append(e)
        return out

    def _typed_out(self, now: float, content: int) -> list[Effect]:
        """Every key of the answer is out; `content` is the screen as it was then."""
        if self.state != State.ANSWERING:
            return []
        if self._watch:
            self._watch.due = now + RETRY_GAPS[self._watch.retries]
            self._watch.content = content
        self._wake = now
        return self._apply(Event.TYPED, None)

    def _exited(self, code: int | None, describe: str) -> list[Effect]:
        if self.done:
            return []
        if code == 0:
            self.reason = "the program exited with code 0"
            return self._apply(Event.FINISHED, None)
        return self._fail(f"the program ended: {describe}", None)

    def _interrupted(self, count: int) -> list[Effect]:
        """Ctrl-C: the step stops (SIGINT to the program); a second one while it is being closed kills it."""
        out = [] if self.done else self._abort(ExitCode.INTERRUPTED, "interrupted")
        return out + ([Record(R.Kill(reason="second interrupt")), Kill()] if count >= 2 else [])

    def _taken(self, by: str) -> list[Effect]:
        """A person took the keyboard: what was being asked, typed or watched is dropped, and nothing more is until they
        give it back."""
        if self.done or self.taken:
            return []
        self.taken, self._asking, self._watch, self._turn = True, None, None, None
        self.typist.clear()
        event = {State.ASKING_QUESTION: Event.NO_REPLY, State.AWAITING_INPUT: Event.NO_REPLY, State.ANSWERING: Event.TYPED}.get(self.state)
        return [Record(R.TakeOver(action="taken", by=by)), *(self._apply(event, None) if event else [])]

    def _handed_back(self, now: float, by: str, keys: int) -> list[Effect]:
        """The keyboard is back: the screen is judged afresh, as if first seen (what was answered before, a wait under way
        and the last state said are forgotten: the person may have answered, or changed everything)."""
        if not self.taken:
            return []
        self.taken, self._last, self._resume, self._went_on, self._busy_since, self.answered_to, self.waits_in_a_row = (
            False, None, None, None, None, None, 0)
        for memory in (self.answered, self._typed, self._asked_on, self.waited):
            memory.clear()
        self._wake = now
        return [Record(R.TakeOver(action="handed_back", by=by, keys=keys))]

    # -- the rules -----------------------------------------------------------------------------------------------------
    def _wake_by(self, t: float) -> None:
        self._wake = t if self._wake is None else min(self._wake, t)

    def _prompted(self, now: float, c: Classification) -> list[Effect]:
        if not self.sent and c.state == Screen.INPUT:
            self.sent = True
            out = self._apply(Event.PROMPT, c)
            return out + self._type_answer(now, c, Decision(Verdict.ANSWER, text=self.config.send or "", source="plan:send"),
                                           self._modes, None, self._secret(c))
        return self._ask(c, None)

    def _secret(self, c: Classification) -> bool:
        """What is typed at this prompt is a secret: the terminal's echo is off, or a field asks for a password, a token,
        a PIN… by its words (a TUI that draws `****` itself leaves echo on)."""
        return self._echo_off or (c.state in (Screen.INPUT, UNKNOWN) and asks_secret(c.block, dialog=c.state == UNKNOWN))

    def _asking_for(self, token: int, c: Classification, kind: str | None, not_taken: str | None = None) -> Asking:
        return Asking(token, c, self._content, kind, self._secret(c), not_taken, self._quiet_since)

    def _unsettled_miss(self, now: float, a: Asking, d: Decision) -> bool:
        """No rule knew the prompt and there is no model, on a screen asked before it had settled (the kernel's word
        cut the wait short: a program that reads on one thread while another still writes): half a prompt may be
        all it showed. The miss escalates only once the screen has settled (settle_ms of quiet), never on a first
        write; asked again then, or the new screen is."""
        settled = a.quiet_since + self.profile.settle_ms / 1000
        if not d.source.startswith("rules") or now >= settled or a.kind == Kind.TURN_END or self.state != State.ASKING_QUESTION:
            return False
        self._early_miss[a.c.key or ""] = settled
        self._wake_by(settled)
        return True

    def _ask(self, c: Classification, kind: str | None, notes: tuple[str, ...] = (), not_taken: str | None = None) -> list[Effect]:
        held = self._early_miss.get(c.key or "")
        if held is not None and self._now < held:  # the rules knew nothing of it before it settled: once it has
            self._wake_by(held)
            return []
        self._token += 1
        self._asking = self._asking_for(self._token, c, kind, not_taken)
        return [*self._apply(Event.PROMPT, c), Ask(self._token, c, kind, self._asking.secret, notes=notes)]

    @staticmethod
    def _still_there(c: Classification, current: Classification) -> bool:
        return current.key == c.key or (c.state == Screen.INPUT and current.state == Screen.IDLE and current.anchor_row == c.anchor_row)

    def _escalate(self, c: Classification, why: str, kind: str | None = None, shown: str | None = None) -> list[Effect]:
        """shown: what the human is shown, when not the prompt block (a turn end: the agent's last message)."""
        asked = shown or c.block
        shared, halt = split(escalate(self.counts, rule_id=c.rule_id, prompt=asked, why=why,
                                      headline=gist(asked) if kind == Kind.TURN_END else headline(asked)))
        out: list[Effect] = list(shared)
        if halt is not None:
            return out + self._abort(halt.code, halt.reason)
        if self.state != State.AWAITING_INPUT:
            out += self._apply(Event.ESCALATE, c)
        self._token += 1
        self._asking = self._asking_for(self._token, c, kind)
        return out + [AskHuman(self._token, c, why, self._asking.secret, prompt=shown)]

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
                self._asking = None
                out += self._close(graceful=action == Action.CLOSE or self.exit_code != ExitCode.INTERRUPTED)
        return out

    def _close(self, graceful: bool) -> list[Effect]:
        """End the program: the profile's quit keys when it is healthy (never in a dry run: it types nothing), else
        SIGINT; SIGKILL if it has not exited after the grace."""
        self.typist.clear()
        self._watch = None
        keys = tuple(self.profile.finish.close) if graceful and not self.counts.dry_run else ()
        if keys:
            delay = max(self.profile.key_delay_ms / 1000, 0.3)
            self.typist.schedule(tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay)), 0.0)
            return [Close(True, self.profile.finish.close_timeout_s, Record(R.Closing(how="keys", keys=list(keys))), _LATE)]
        return [Close(False, STOP_GRACE, Record(R.Closing(how="signal", signal="SIGINT")), _LATE)]

    def _record_state(self, c: Classification, facts: ScreenFacts) -> list[Effect]:
        if c.state == SETTLING:
            return []
        state = "starting" if c.state == Screen.IDLE and self.starting else c.state
        current = (state, c.decision[1])
        if current == self._last:
            return []
        self._last = current
        self._busy_since = None  # a new state recorded: the kernel's "busy" is said again after it
        return [Record(R.ScreenState(state=state, rule_id=c.rule_id, prompt=c.block or None,
                                     evidence=c.evidence or None, error=c.error, facts=classified_by(c, facts)))]
