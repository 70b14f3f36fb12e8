"""The rules of a PTY step, PURE: facts and `now` in, effects out (h11's cut: the loop owns every I/O).

Facts: a classified screen, a decision from the answerer, "all keys are out", a check that failed, the program's
exit, a limit reached, what a turn end found (the goal check, the working tree). Effects: record this, ask about that
question, type these keys, ask a human, check the goal, close the program. Here live the rules that decide a run: when
an agent's turn has ended (and what that leads to: decide/turns.py), when Enter is re-sent, when a reply is stale,
when a quiet screen no rule explains is judged, when to escalate. Tested with a fake clock, in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, Next, TurnFacts, Turns, gist
from cursorpilot.detect.classifier import SETTLING, UNKNOWN, Classification, headline
from cursorpilot.decide.deliver import Answer, Record, RunCounts, Tally, deliver, escalate, halt_of
from cursorpilot.detect.profiles import Kind as Screen
from cursorpilot.detect.profiles import Profile
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes, Write
from cursorpilot.pty.facts import Ask, AskHuman, Close, Effect, PilotConfig, ScreenFacts, Type
from cursorpilot.pty.keystrokes import Refused, keystrokes
from cursorpilot.machine import TERMINAL, Action, Event, State, transition
from cursorpilot.secret import asks_secret

RETRY_GAPS = (0.8, 1.6, 3.2)  # wait after an answer; Enter is re-sent after the first two
WAIT_BACKOFF_CAP = 60.0  # the longest a quiet unknown screen waits to be judged after WAIT answers in a row
BUSY_LOOK = 0.25  # a quiet program the kernel sees busy is looked at this often: it may turn to its terminal any time
STARTING_GRACE = 20.0  # an agent given its task that shows only its idle composer this long has finished it unseen
PROSE = ".prose_question"  # the classifier's id for an agent's closing question at its composer: a turn end that asks


@dataclass(slots=True)
class _Watch:
    """After an answer: did the program take it? The facts say so (pty/pilot.py `_follow_watch`), never stillness."""

    c: Classification  # the prompt as it was answered
    submit: bool
    typed: str  # what was typed (a secret as its mask): the note when the screen stays exactly as it was
    answer: str  # the answer as decided (a secret in clear, here only: never recorded), to tell a repeat
    due: float
    retries: int = 0
    content: int | None = None  # the screen when the last key went out: until it changes, the program has not reacted


@dataclass(slots=True)
class _Asking:
    token: int
    c: Classification
    content: int
    kind: str | None
    secret: bool = False
    not_taken: str | None = None  # asked again because this answer was not taken (the screen stayed as it was)


@dataclass(slots=True)
class _TurnEnd:
    """An agent that stopped, while its turn end is judged."""

    c: Classification  # its composer, as a field the next message is typed into
    message: str  # its last message
    closing: Question | None  # the question its last message asks, if any


@dataclass(slots=True)
class Pilot:
    config: PilotConfig
    run: RunCounts
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
    _asking: _Asking | None = None
    _watch: _Watch | None = None
    _token: int = 0
    _last: tuple[str, str | None] | None = None
    _wake: float | None = None
    _content: int = -1  # what the screen showed at the last look (a repaint with equal content keeps it)
    _echo_off: bool = False  # ...and whether the terminal's echo was off then
    _turn: _TurnEnd | None = None
    _typed: dict[str, str] = field(default_factory=dict)  # what was last typed at each prompt (a secret as its mask)
    _busy_since: float | None = None  # the kernel has seen the quiet program busy since then (recorded once)
    _answered_to: int | None = None  # the last row of the question answered last: rows down to it are history
    _text: str = ""  # the screen's text at the last look
    _asked_on: dict[str, str] = field(default_factory=dict)  # the screen's text when each prompt was answered
    tally: Tally = field(init=False)
    turns: Turns = field(init=False)

    def __post_init__(self) -> None:
        self.sent = self.config.send is None
        self.starting = self.config.started_with_task
        self.tally = Tally(self.run, self.config.max_answers)
        self.turns = Turns(self.config.turns)

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

    # -- facts in ----------------------------------------------------------------------------------------------------
    def started(self) -> list[Effect]:
        return self._apply(Event.STARTED, None)

    def screen(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """A classified screen (the loop classifies when the screen changed, or when the pilot asked to wake)."""
        if self.state != State.RUNNING or self._asking is not None:
            return []
        out = self._record_state(c)
        self._content, self._echo_off, self._text = facts.content, facts.echo_off, facts.text.rstrip()
        self._wake = None if c.recheck_after is None else now + c.recheck_after
        if self._watch is not None:
            held = self._follow_watch(now, c, facts)
            if held is not None:
                return out + held
        if self.config.expect_regex and c.state != SETTLING and re.search(self.config.expect_regex, facts.text, re.M):
            self.reason = f"completed (expect {self.config.expect_regex!r} seen)"
            return out + self._apply(Event.FINISHED, c)
        if c.state == Screen.WORKING:
            return out + self._working(now, c, facts)
        if c.state == Screen.ERROR:
            return out + self._fail(f"{c.error}: {c.evidence}", c)
        if c.state == Screen.IDLE and self.starting:
            return out + self._still_starting(now, c, facts)
        if c.state == Screen.COMPLETED:
            self.reason = f"completed ({c.rule_id})"
            return out + self._apply(Event.FINISHED, c)
        if self._stopped(c):
            return out + self._turn_end(c, facts)
        if c.state == SETTLING:
            return out  # it looks again when the screen has settled (recheck_after)
        if c.state == UNKNOWN:
            return out + self._undecided(now, c, facts)
        if facts.tty == "busy" and c.state != Screen.IDLE:  # a prompt printed by a program that does not read (yet): a
            return out + self._left_to_work(now, c, facts)  # key now would wait in its input for whatever reads next
        self._busy_since = None
        if c.state == Screen.IDLE:  # a composer waiting: typed into like a field
            c = replace(c, state=Screen.INPUT.value)
        if c.key not in self.answered:
            return out + self._prompted(now, c, facts.modes)
        if facts.tty != "busy" and facts.text.rstrip() != self._asked_on.get(c.key or ""):  # the same words on another
            self.answered.pop(c.key or "", None)  # screen (an error line above, a file gone from a listing): a new question
            return out + [Record("asked_again", {"rule_id": c.rule_id, "prompt": c.block}),
                          *self._ask(c, None, self._typed_before(c.key or ""))]
        return out + self._asked_again(now, c, facts)

    def _asked_again(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """A prompt answered before is on screen again after the program took the answer (it re-asked, maybe after an
        error line): after undecided_after it is asked again, told what was typed before. Never silence; the loop
        breaker ends a program that keeps asking. One that is busy is working: it is left to work."""
        if facts.tty == "busy":
            return self._left_to_work(now, c, facts)
        due = now - facts.quiet_for + self.profile.undecided_after_s
        if now < due:
            self._wake_by(due)
            return []
        self.answered.pop(c.key or "", None)
        return [Record("asked_again", {"rule_id": c.rule_id, "prompt": c.block}), *self._ask(c, None, self._typed_before(c.key or ""))]

    def _typed_before(self, key: str) -> tuple[str, ...]:
        if key not in self._typed:
            return ()
        return (f"{self._typed[key]!r} was typed at this prompt before, and the program took it (its screen changed) and "
                "asks again: answer what it asks now.",)

    def decided(self, now: float, token: int, d: Decision, current: Callable[[], Classification], content: int,
                modes: Modes) -> list[Effect]:
        """The answerer's decision on `token`. content: the screen now; current() classifies it, only when it changed
        since the question was asked (a stale answer)."""
        a = self._asking
        if a is None or a.token != token:
            return []  # superseded (the step ended, or the prompt was re-asked)
        self._asking = None
        if a.kind == Kind.TURN_END and self.state == State.ASKING_QUESTION:
            return self._turn_decided(now, a, d, current, content, modes)
        if self.state == State.AWAITING_INPUT:
            if d.verdict != Verdict.ANSWER or d.text is None:
                return self._abort(ExitCode.HUMAN_NEEDED, f"a human is needed ({d.why or 'escalated'}); none answered")
            shown = self._turn.message if a.kind == Kind.TURN_END and self._turn is not None else None
            return [Record("human_reply", {"text": d.text, **({"secret": True} if a.secret else {})}),
                    *self._type_answer(now, a.c, d, modes, a.kind, a.secret, prompt=shown)]
        if d.verdict == Verdict.FAIL:
            return self._fail(d.why, a.c)
        if d.verdict == Verdict.ESCALATE:
            return self._escalate(a.c, d.why, a.kind)
        if d.verdict == Verdict.WAIT:
            return self._waited(now, a, d)
        stale = a.content != content and not self._still_there(a.c, current())
        if stale:
            self._wake = now
            return [Record("reply_discarded", {"reason": "the prompt changed while the answer was chosen", "prompt_key": a.c.key}),
                    *self._apply(Event.NO_REPLY, a.c)]
        if a.not_taken is not None and d.text == a.not_taken and d.source.startswith("rules:"):  # told, the rules can't differ
            typed = self._typed.get(a.c.key or "", a.not_taken)
            return self._escalate(a.c, f"the program did not take {typed!r} (it waits on its terminal, the screen as it "
                                       f"was), and the rules give the same answer again", a.kind)
        return self._type_answer(now, a.c, d, modes, a.kind, a.secret)

    def typed(self, now: float, content: int) -> list[Effect]:
        """Every key of the answer is out; `content` is the screen as it was then."""
        if self.state != State.ANSWERING:
            return []
        if self._watch:
            self._watch.due = now + RETRY_GAPS[self._watch.retries]
            self._watch.content = content
        self._wake = now
        return self._apply(Event.TYPED, None)

    def check_failed(self, expected: str, seen: str, block: str) -> list[Effect]:
        """The menu's highlight never reached the chosen option: Enter was not pressed."""
        self._watch = None
        c = Classification(state=Screen.MENU.value, rule_id=None, block=block)
        return [Record("menu_check_failed", {"expected": expected, "seen": seen}),
                *self._escalate(c, f"the highlight did not reach {expected!r} (it is on {seen!r}); Enter not pressed")]

    def exited(self, code: int | None, signal: int | None, describe: str) -> list[Effect]:
        if self.done:
            return []
        if code == 0:
            self.reason = "the program exited with code 0"
            return self._apply(Event.FINISHED, None)
        return self._fail(f"the program ended: {describe}", None)

    def interrupted(self) -> list[Effect]:
        return [] if self.done else self._abort(ExitCode.INTERRUPTED, "interrupted")

    def deadline(self, reason: str) -> list[Effect]:
        return [] if self.done else self._abort(ExitCode.LIMIT, reason)

    # -- the rules -----------------------------------------------------------------------------------------------------
    def _wake_by(self, t: float) -> None:
        self._wake = t if self._wake is None else min(self._wake, t)

    def _working(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        rule = next((r for r in self.profile.rules if r.id == c.rule_id), None)
        progress = rule is None or rule.progress
        self.worked = self.worked or progress
        out: list[Effect] = []
        if progress and self.starting:
            self.starting = False
            out.append(Record("agent_started", {"rule_id": c.rule_id}))
        self.waits_in_a_row = 0
        stuck_after = self.profile.stuck_after_s
        if facts.quiet_for >= stuck_after:
            return out + self._escalate(c, f"stuck: working marker with no screen change for {stuck_after:g}s")
        # a marker that stops moving is looked at again soon: the kernel may say the program reads its terminal (a
        # static `...` line above a prompt), and then it is a question, not work
        self._wake_by(min(now + BUSY_LOOK, now + stuck_after - facts.quiet_for))
        return out

    def _still_starting(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """Given its task, the agent shows its idle composer: it has not started yet (or finished before we looked)."""
        if self.starting_since is None:
            self.starting_since = now
        if now - self.starting_since < STARTING_GRACE:
            self._wake_by(self.starting_since + STARTING_GRACE)
            return []
        self.starting = False
        self.worked = True  # the composer came back and stayed: the task ran between two looks, and its turn ended
        return [Record("agent_started", {"rule_id": c.rule_id, "unseen": True}), *self._turn_end(c, facts)]

    # -- an agent's turn end (decide/turns.py says what it leads to) --------------------------------------------------
    def _stopped(self, c: Classification) -> bool:
        """Back at its composer after working, idle or asking something in prose: the agent's turn has ended."""
        if not (self.worked and self.sent and self.profile.finish.mode == "idle"):
            return False
        return c.state == Screen.IDLE or (c.state == Screen.QUESTION and (c.rule_id or "").endswith(PROSE))

    def _turn_end(self, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """The agent stopped: the loop checks the goal and the working tree (goal_checked() hears back)."""
        closing = Question(kind=c.state, text=c.block, key=c.key or "", source=c.rule_id or "screen") if c.state == Screen.QUESTION else None
        composer = replace(c, state=Screen.INPUT.value, submit=True)
        self._turn = _TurnEnd(composer, facts.said(self.turns.last_sent, self.turns.message) if facts.said else c.block, closing)
        self._token += 1
        self._asking = _Asking(self._token, composer, self._content, Kind.TURN_END.value)
        return [*self._apply(Event.PROMPT, c), CheckGoal(self._token)]

    def goal_checked(self, now: float, token: int, facts: TurnFacts, modes: Modes) -> list[Effect]:
        """What the turn end found: the facts decide, or the decision path is asked one question."""
        a, t = self._asking, self._turn
        if a is None or a.token != token or t is None:
            return []  # superseded (the step ended meanwhile)
        n = self.turns.ended(now, facts, t.message, t.closing is not None)
        if n.action != "ask":
            self._asking = None
            return self._turn_next(now, n, modes)
        q = self.turns.question(text=t.message, source=t.c.rule_id or "screen", closing=t.closing, multiline=t.c.multiline)
        return [Ask(token, a.c, Kind.TURN_END.value, question=q)]

    def _turn_decided(self, now: float, a: _Asking, d: Decision, current: Callable[[], Classification], content: int,
                      modes: Modes) -> list[Effect]:
        if d.verdict not in (Verdict.FAIL, Verdict.ESCALATE) and a.content != content and not self._still_there(a.c, current()):
            self.turns.turn -= 1  # the agent went on by itself while its turn was judged: that was no turn end
            self._wake = now
            return [Record("reply_discarded", {"reason": "the agent went on while its turn end was judged", "prompt_key": a.c.key}),
                    *self._apply(Event.NO_REPLY, a.c)]
        return self._turn_next(now, self.turns.judged(d), modes)

    def _turn_next(self, now: float, n: Next, modes: Modes) -> list[Effect]:
        """A turn end's outcome, carried out: close, type the next message into the composer, a human, or stop."""
        t = self._turn
        assert t is not None
        if n.action == "send":
            typed = self._type_answer(now, t.c, Decision(Verdict.ANSWER, text=n.message, source=n.source), modes, Kind.TURN_END.value,
                                      prompt=t.message)
            held = {} if any(isinstance(e, Type) for e in typed) else {"sent": None}
            if held and not self.run.dry_run:  # the answer cap stopped it before it went out: a resume sends it
                self.turns.held(n.message)
                held["pending"] = n.message
            return [Record("turn_end", {**self.turns.record(n), **held}), *typed]
        out: list[Effect] = [Record("turn_end", {**self.turns.record(n)})]
        if n.action == "finish":
            self.reason = f"completed ({n.why})"
            return out + self._apply(Event.FINISHED, t.c)
        if n.action == "human":
            return out + self._escalate(t.c, n.why, Kind.TURN_END.value, shown=t.message)
        if n.code == ExitCode.FAILED:
            return out + self._fail(n.why, t.c)
        return out + self._abort(n.code, n.why)

    def _undecided(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """Quiet, no working marker, no rule: the screen gets a decision within `judge_after` (never silence), unless
        the kernel sees the program busy, not waiting on its terminal: then it is working, and is left to work up to
        stuck_after (whoever would judge it, rules or a model: nobody is being asked).

        Waiting on its terminal (reading, or polling with a question on screen), it is judged sooner. A screen judged
        WAIT is judged again once the backoff has passed (each WAIT in a row doubles it) and, still unchanged after
        stuck_after_s, goes to a human. A screen answered before and shown again is judged again, told so.
        """
        if facts.judge is None:
            return []
        if facts.tty == "busy":
            return self._left_to_work(now, c, facts)
        self._busy_since = None
        judged = facts.judge(self._answered_to)
        key = judged.key or ""
        delay = self.judge_after(facts.tty, judged.asks)
        if c.recheck_after is not None:  # a rule waits for more quiet (an idle composer): it speaks first, in time
            delay = max(delay, min(facts.quiet_for + c.recheck_after, self.profile.undecided_after_s))
        since = now - facts.quiet_for
        if key in self.waited:
            since = max(since, self.waited[key])
            if facts.quiet_for >= self.profile.stuck_after_s:
                return self._escalate(judged, f"stuck: judged WAIT, unchanged for {self.profile.stuck_after_s:g}s", Kind.UNDECIDED.value)
        if now < since + delay:
            self._wake_by(since + delay)
            return []
        notes = self._not_taken(self._typed[key]) if key in self.answered and key in self._typed else ()
        return self._ask(judged, Kind.UNDECIDED.value, notes)

    def _left_to_work(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """The kernel sees the program busy (sleeping, computing, waiting on the network or a child), not waiting on its
        terminal: it is working, whatever its still screen shows. Looked at again every BUSY_LOOK (it may turn to its
        terminal any time), and a human is asked once it has been quiet for stuck_after_s."""
        out: list[Effect] = []
        if self._busy_since is None:
            self._busy_since = now
            out.append(Record("screen_state", {"state": "working", "rule_id": "kernel.busy", "prompt": c.block or None,
                                               "evidence": "the kernel sees it busy, not waiting on its terminal", "error": None}))
        stuck_after = self.profile.stuck_after_s
        if facts.quiet_for >= stuck_after:
            return out + self._escalate(c, f"stuck: quiet for {stuck_after:g}s, busy and not waiting on its terminal")
        self._wake_by(min(now + BUSY_LOOK, now - facts.quiet_for + stuck_after))
        return out

    def judge_after(self, tty: str | None, asks: bool) -> float:
        """How long a screen no rule explains, of a program that may be waiting on its terminal, stays quiet before it
        is judged: the one deadline of never-silent (a busy one is working: `_left_to_work`)."""
        after = self.profile.undecided_after_s
        if tty == "reading" or (tty == "polling" and asks):
            after = min(after, self.profile.quick_judge_s)  # the kernel confirms it waits for input
        if self.waits_in_a_row:  # the model said WAIT: the next judgement backs off from the full deadline
            after = max(after, self.profile.undecided_after_s)
        return min(after * 2 ** min(self.waits_in_a_row, 6), max(WAIT_BACKOFF_CAP, after))

    def _waited(self, now: float, a: _Asking, d: Decision) -> list[Effect]:
        self.waited[a.c.key or ""] = now
        self.waits_in_a_row += 1
        self._wake_by(now)  # look again: the next judgement of this screen gets its deadline
        return [Record("wait", {"rule_id": a.c.rule_id, "prompt": a.c.block, "source": d.source, "why": d.why,
                                "waits_in_a_row": self.waits_in_a_row}), *self._apply(Event.NO_REPLY, a.c)]

    def _prompted(self, now: float, c: Classification, modes: Modes) -> list[Effect]:
        if not self.sent and c.state == Screen.INPUT:
            self.sent = True
            out = self._apply(Event.PROMPT, c)
            return out + self._type_answer(now, c, Decision(Verdict.ANSWER, text=self.config.send or "", source="plan:send"),
                                           modes, None, self._secret(c))
        return self._ask(c, None)

    def _secret(self, c: Classification) -> bool:
        """What is typed at this prompt is a secret: the terminal's echo is off, or a field asks for a password, a token,
        a PIN… by its words (a TUI that draws `****` itself leaves echo on)."""
        return self._echo_off or (c.state in (Screen.INPUT, UNKNOWN) and asks_secret(c.block, dialog=c.state == UNKNOWN))

    def _ask(self, c: Classification, kind: str | None, notes: tuple[str, ...] = (), not_taken: str | None = None) -> list[Effect]:
        self._token += 1
        secret = self._secret(c)
        self._asking = _Asking(self._token, c, self._content, kind, secret, not_taken)
        return [*self._apply(Event.PROMPT, c), Ask(self._token, c, kind, secret, notes=notes)]

    @staticmethod
    def _still_there(c: Classification, current: Classification) -> bool:
        return current.key == c.key or (c.state == Screen.INPUT and current.state == Screen.IDLE and current.anchor_row == c.anchor_row)

    def _follow_watch(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect] | None:
        """None: the program took the answer, carry on with whatever it shows; else what to do meanwhile.

        Taken: the screen changed anywhere since the last key went out, or the kernel says the program left its terminal
        (it works now: the never-silent deadline applies, not an escalation). Not taken: it waits on its terminal again
        and the screen is exactly as it was; Enter is re-sent (only on that same, unchanged screen), then the screen is
        judged again, the judge told what was typed and that nothing changed. A still screen alone proves nothing."""
        w = self._watch
        assert w is not None
        if c.state == SETTLING or w.content is None:
            return []  # still rendering, or keys still going out
        if facts.content != w.content or facts.tty == "busy":
            self._watch = None
            return None
        if now < w.due:
            self._wake_by(w.due)
            return []
        shown = c if c.key == w.c.key or not c.block else w.c
        if w.submit and w.retries < len(RETRY_GAPS) - 1:
            w.retries += 1
            return [Record("enter_retry", {"prompt_key": w.c.key, "attempt": w.retries}), *self._apply(Event.REPLY, shown),
                    Type((Write(b"\r", 0.0, "<enter>"),))]
        self._watch = None
        return [Record("not_taken", {"prompt_key": w.c.key, "typed": w.typed, "enter_retries": w.retries}),
                *self._ask(shown, Kind.UNDECIDED.value if shown.state == UNKNOWN else None, self._not_taken(w.typed), w.answer)]

    @staticmethod
    def _not_taken(typed: str) -> tuple[str, ...]:
        return (f"{typed!r} was typed here already, and the screen did not change at all: the program waits on its "
                "terminal again, so the answer was not taken. Answer what this screen asks now (differently, if that "
                "answer cannot work), or ask for a human.",)

    def _type_answer(self, now: float, c: Classification, d: Decision, modes: Modes, kind: str | None,
                     secret: bool = False, prompt: str | None = None) -> list[Effect]:
        """prompt: what was answered, when not the prompt block (a turn end: the agent's last message)."""
        try:
            k = keystrokes(c, d, modes, self.profile, kind=kind, secret=secret, secrets=self.config.secrets,
                           echo_check=self.config.echo_check)
        except Refused as exc:
            return self._escalate(c, str(exc), kind)
        shown, writes, submit = k.shown, k.writes, k.submit
        out: list[Effect] = [k.choice] if k.choice else []
        asked = prompt or c.block
        delivered = deliver(self.tally, Answer(asked, shown, d.source, c.rule_id, kind or c.state,
                                               gist(asked) if kind == Kind.TURN_END else headline(asked),
                                               extra={"secret": True} if k.secret else {},
                                               preview_extra={"keys": [w.label for w in writes]}, changed=d.changed))
        halt = halt_of(delivered)
        if halt is not None:
            return out + delivered[:-1] + self._abort(halt.code, halt.reason)
        if kind == Kind.TURN_END or d.source == "plan:send":
            self.turns.sent(shown)  # an instruction (the step's task typed, or the next one): a new turn begins
        else:
            self.turns.answered(headline(asked), shown, d.source, d.denied)  # (a secret as its mask: the judge never sees it)
        self.waits_in_a_row = 0
        if c.key:
            self.answered[c.key] = self.answered.get(c.key, 0) + 1
            self._typed[c.key] = shown
            self._asked_on[c.key] = self._text
        if c.block.strip():
            self._answered_to = c.anchor_row + len(c.block.rstrip("\n").split("\n")) - 1
        self.worked = True  # whatever the program does next answers to us; idle afterwards means done
        out += delivered
        out += self._apply(Event.REPLY if self.state == State.ASKING_QUESTION else Event.HUMAN_REPLY, c)
        out.append(Type(tuple(writes)))
        self._watch = _Watch(c, submit, shown, d.text or "", float("inf"))
        return out

    def _escalate(self, c: Classification, why: str, kind: str | None = None, shown: str | None = None) -> list[Effect]:
        """shown: what the human is shown, when not the prompt block (a turn end: the agent's last message)."""
        asked = shown or c.block
        out: list[Effect] = escalate(self.run, rule_id=c.rule_id, prompt=asked, why=why,
                                     headline=gist(asked) if kind == Kind.TURN_END else headline(asked))
        halt = halt_of(out)
        if halt is not None:
            return out[:-1] + self._abort(halt.code, halt.reason)
        if self.state != State.AWAITING_INPUT:
            out += self._apply(Event.ESCALATE, c)
        self._token += 1
        self._asking = _Asking(self._token, c, self._content, kind, self._secret(c))
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
        out: list[Effect] = [Record("state", {"event": event.value, "from": before.value, "to": self.state.value,
                                              "rule_id": c.rule_id if c else None})]
        for action in actions:
            if action in (Action.CLOSE, Action.STOP):
                self._asking = None
                out.append(Close(graceful=action == Action.CLOSE or self.exit_code != ExitCode.INTERRUPTED))
        return out

    def _record_state(self, c: Classification) -> list[Effect]:
        if c.state == SETTLING:
            return []
        state = "starting" if c.state == Screen.IDLE and self.starting else c.state
        current = (state, c.decision[1])
        if current == self._last:
            return []
        self._last = current
        self._busy_since = None  # a new state recorded: the kernel's "busy" is said again after it
        return [Record("screen_state", {"state": state, "rule_id": c.rule_id, "prompt": c.block or None,
                                        "evidence": c.evidence or None, "error": c.error})]
