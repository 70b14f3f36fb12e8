"""The PTY pilot's rules for a quiet screen, PURE (a part of pty/pilot.py's Pilot): working is not waiting, and waiting
is not working.

A program the kernel sees busy (sleeping, computing, waiting on the network or a child, not on its terminal) is working,
whatever its still screen shows: it is left to work, looked at again every BUSY_LOOK, and a human is asked at
stuck_after. A program that may be waiting on its terminal gets a decision on a screen no rule explains within
`judge_after` (never silence): judged by the model (which may say WAIT: backoff), or escalated with rules only. A prompt
answered before and shown again, unchanged, is asked again after undecided_after, told what was typed.

`Quiet` owns the screens judged WAIT (and how many in a row), since when the kernel has seen a quiet program busy, and
which screen no rule explains was last recorded as judged; it reads the pilot through its View (held.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cursorpilot.channels.pty.answering import not_taken_note
from cursorpilot.channels.pty.facts import Effect, ScreenFacts
from cursorpilot.channels.pty.held import Abort, AskAbout, Asking, Escalate, Forget, Go, Stuck, View, WakeBy, Want, steady
from cursorpilot.channels.pty.machine import Event
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.detect.classifier import READING_SETTLE, Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import models as R

WAIT_BACKOFF_CAP = 60.0  # the longest a quiet unknown screen waits to be judged after WAIT answers in a row
IDLE_AFTER = 5.0  # a still raw-mode screen of a program that has used almost no CPU this long is taken as waiting
STOPPED_AFTER = 2.0  # a program stopped by a signal this long is said, and the run ends (a person must continue it)
BUSY_LOOK = 0.25  # a quiet program the kernel sees busy is looked at this often: it may turn to its terminal any time
BUSY_NOTE = ("The screen has not changed for {:g}s, and the kernel sees the program busy (asleep, computing, waiting on "
             "something other than its terminal) at each look: it may be at work, or waiting in a way the kernel does not show.")


@dataclass(slots=True)
class Quiet:
    waited: dict[str, float] = field(default_factory=dict)  # screens no rule explains judged WAIT, and when
    waits_in_a_row: int = 0
    busy_since: float | None = None  # the kernel has seen the quiet program busy since then (recorded once)
    judged_rec: str | None = None  # the screen no rule explains last recorded as judged (its key)
    stopped_since: float | None = None  # the kernel has said the program is stopped since then
    idle_said: int | None = None  # the screen (its content) the kernel's "busy" was last overruled on, as idle

    def forget(self) -> None:
        self.waited.clear()
        self.busy_since, self.waits_in_a_row = None, 0

    def kernel(self, now: float, c: Classification, facts: ScreenFacts) -> tuple[list[Effect | Want], ScreenFacts | None]:
        """Never silent, from the kernel's facts before the screen's words: a program stopped by a signal (SIGSTOP, or
        SIGTTIN from the background) never runs again by itself: said, and the run ends after STOPPED_AFTER (a person
        must continue it: exit 3), the screen not read (None). A still, idle raw-mode program waits (`idle`)."""
        if facts.stopped is None:
            self.stopped_since = None
            return self.idle(c, facts)
        since = self.stopped_since = now if self.stopped_since is None else self.stopped_since
        if now < since + STOPPED_AFTER:
            return [WakeBy(since + STOPPED_AFTER)], None
        why = (f"the program is stopped by a signal ({facts.stopped}: SIGSTOP, or SIGTTIN/SIGTTOU for using the terminal from the "
               f"background) and has not run for {STOPPED_AFTER:g}s: a person must continue it or end it")
        return [Record(R.ScreenState(state="stopped", rule_id="kernel.stopped", prompt=c.block or None, evidence=facts.stopped,
                                     error=None)), Abort(ExitCode.HUMAN_NEEDED, why)], None

    def idle(self, c: Classification, facts: ScreenFacts) -> tuple[list[Effect | Want], ScreenFacts]:
        """Never silent, whatever the kernel says: a still screen in raw mode, of a program that has used almost no
        CPU for IDLE_AFTER, waits on its terminal in a way the kernel does not show (a poll that never blocks, a read
        from a helper it can't see). Its "busy" is overruled to "polling", said once per screen (`kernel.idle`), so the
        screen goes the way of a waiting one: answered by a rule, or judged (a model may say WAIT)."""
        if facts.tty != "busy" or not facts.raw or facts.idle_for is None or min(facts.idle_for, facts.quiet_for) < IDLE_AFTER:
            return [], facts
        out: list[Effect | Want] = []
        if self.idle_said != facts.content:
            self.idle_said = facts.content
            out.append(Record(R.ScreenState(state="waiting", rule_id="kernel.idle", prompt=c.block or None, error=None,
                                            evidence=f"the kernel sees it busy, but it has used almost no CPU for "
                                                     f"{min(facts.idle_for, facts.quiet_for):.0f}s in raw mode, its screen still")))
        return out, replace(facts, tty="polling")

    def working(self, view: View, now: float, c: Classification, facts: ScreenFacts, stuck_after: float) -> list[Want]:
        """A working marker: left to work; no progress sign for stuck_after and it is stuck (goingon.py interrupts it).
        A marker that stops moving is looked at again soon: the kernel may say the program reads its terminal (a static
        `...` line above a prompt), and then it is a question, not work."""
        self.waits_in_a_row = 0
        still = facts.quiet_for if facts.still_for is None else facts.still_for  # its spinner and timer are no progress
        if still >= stuck_after:
            return [Stuck(c, still, f"stuck: working marker with no progress sign for {stuck_after:g}s")]
        return [WakeBy(min(now + BUSY_LOOK, now + stuck_after - still))]

    def undecided(self, view: View, now: float, c: Classification, facts: ScreenFacts) -> list[Effect | Want]:
        """Quiet, no working marker, no rule: the screen gets a decision within `judge_after` (never silence), unless
        the kernel sees the program busy: then it is working (`left_to_work`). A screen judged WAIT is judged again
        once the backoff has passed (each WAIT in a row doubles it) and, still unchanged after stuck_after_s, goes to a
        human. A screen answered before and shown again is judged again, told so."""
        if facts.judged is None:
            return []
        if facts.tty == "busy":
            return self.left_to_work(view, now, c, facts)
        self.busy_since = None
        judged, profile = facts.judged, view.profile
        key = steady(judged.key or "")  # a WAIT holds however its clock ticks
        delay = self.judge_after(view, facts.tty, judged.asks)
        if judged.answered_last:  # its last words are the question answered last: the kernel's "reading" shows no new one
            delay = max(delay, profile.undecided_after_s)
        if c.recheck_after is not None:  # a rule waits for more quiet (an idle composer): it speaks first, in time
            delay = max(delay, min(facts.quiet_for + c.recheck_after, profile.undecided_after_s))
        since = now - facts.quiet_for
        if key in self.waited:
            since = max(since, self.waited[key])
            if facts.quiet_for >= profile.stuck_after_s:
                return [Escalate(judged, f"stuck: judged WAIT, unchanged for {profile.stuck_after_s:g}s", Kind.UNDECIDED.value)]
        if now < since + delay:
            return [WakeBy(since + delay)]
        answers = view.answering
        raw = judged.key or ""
        notes = not_taken_note(answers.typed[raw]) if raw in answers.answered and raw in answers.typed else ()
        if judged.answered_last and not notes:
            notes = ("The last question on this screen was answered already, and nothing has been written below it "
                     "since: the program may still be working on that answer.",)
        return [AskAbout(judged, Kind.UNDECIDED.value, notes, whole=facts)]

    def judged(self, key: str | None) -> bool:
        """Whether this screen no rule explains is to be recorded as judged now (once, until another one is)."""
        if self.judged_rec == key:
            return False
        self.judged_rec = key
        return True

    def left_to_work(self, view: View, now: float, c: Classification, facts: ScreenFacts) -> list[Effect | Want]:
        """The kernel sees the program busy, not waiting on its terminal: it is working, whatever its still screen shows.
        Said once (`kernel.busy`), looked at again every BUSY_LOOK, and a human asked once quiet for stuck_after_s."""
        out: list[Effect | Want] = []
        if self.busy_since is None:
            self.busy_since = now
            out.append(Record(R.ScreenState(state="working", rule_id="kernel.busy", prompt=c.block or None,
                                            evidence="the kernel sees it busy, not waiting on its terminal", error=None)))
        stuck_after = view.profile.stuck_after_s
        if facts.quiet_for >= stuck_after:
            judged = facts.judged if c.state == ScreenKind.UNKNOWN else None
            if judged is not None and steady(judged.key or "") not in self.waited:  # judged whatever one look said: a model may
                return [*out, AskAbout(judged, Kind.UNDECIDED.value, (BUSY_NOTE.format(stuck_after),))]  # say WAIT, once
            return [*out, Escalate(c, f"stuck: quiet for {stuck_after:g}s, busy and not waiting on its terminal")]
        return [*out, WakeBy(min(now + BUSY_LOOK, now - facts.quiet_for + stuck_after))]

    def judge_after(self, view: View, tty: str | None, asks: bool) -> float:
        """How long a screen no rule explains, of a program that may be waiting on its terminal, stays quiet before it
        is judged: the one deadline of never-silent (a busy one is working: `left_to_work`)."""
        profile = view.profile
        after = profile.undecided_after_s
        if tty == "reading":  # blocked reading its terminal: all it shows before the key is shown, as for a prompt
            after = min(after, READING_SETTLE)  # (classifier.py): the quiet that says the last write has landed
        elif tty == "polling" and asks:
            after = min(after, profile.quick_judge_s)  # it waits for a key, but may draw more before it listens
        if self.waits_in_a_row:  # the model said WAIT: the next judgement backs off from the full deadline
            after = max(after, profile.undecided_after_s)
        return min(after * 2 ** min(self.waits_in_a_row, 6), max(WAIT_BACKOFF_CAP, after))

    def waited_out(self, now: float, a: Asking, d: Decision) -> list[Effect | Want]:
        """The screen was judged WAIT: nobody is asked; it is judged again once its backoff has passed."""
        self.waited[steady(a.c.key or "")] = now
        self.waits_in_a_row += 1
        return [WakeBy(now),  # look again: the next judgement of this screen gets its deadline
                Record(R.Wait(rule_id=a.c.rule_id, prompt=a.c.block, source=d.source, why=d.why, waits_in_a_row=self.waits_in_a_row)),
                Go(Event.NO_REPLY, a.c)]

    def asked_again(self, view: View, now: float, c: Classification, facts: ScreenFacts) -> list[Effect | Want]:
        """A prompt answered before is on screen again after the program took the answer. On a screen that changed (an
        error line above, a file gone from a listing) it is a new question, asked at once; on the very same screen (a
        program that clears its line and asks again in place), after undecided_after. Either way told what was typed
        before; the loop breaker ends a program that keeps asking. One that is busy is working: left to work."""
        if facts.tty == "busy":
            return self.left_to_work(view, now, c, facts)
        key = c.key or ""
        if facts.text.rstrip() == view.answering.asked_on.get(key):
            due = now - facts.quiet_for + view.profile.undecided_after_s
            if now < due:
                return [WakeBy(due)]
        return [Forget(key), Record(R.AskedAgain(rule_id=c.rule_id, prompt=c.block)), AskAbout(c, None, _typed_before(view, key))]


def _typed_before(view: View, key: str) -> tuple[str, ...]:
    typed = view.answering.typed
    if key not in typed:
        return ()
    return (f"{typed[key]!r} was typed at this prompt before, and the program took it (its screen changed) and "
            "asks again: answer what it asks now.",)
