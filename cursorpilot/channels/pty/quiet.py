"""The PTY pilot's rules for a quiet screen, PURE (a part of pty/pilot.py's Pilot): working is not waiting, and waiting
is not working.

A program the kernel sees busy (sleeping, computing, waiting on the network or a child, not on its terminal) is working,
whatever its still screen shows: it is left to work, looked at again every BUSY_LOOK, and a human is asked at
stuck_after. A program that may be waiting on its terminal gets a decision on a screen no rule explains within
`judge_after` (never silence): judged by the model (which may say WAIT: backoff), or escalated with rules only. A prompt
answered before and shown again, unchanged, is asked again after undecided_after, told what was typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.detect.classifier import READING_SETTLE, Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.channels.pty.machine import Event
from cursorpilot.channels.pty.facts import Effect, ScreenFacts, classified_by
from cursorpilot.channels.pty.held import Asking

if TYPE_CHECKING:
    from cursorpilot.channels.pty.parts import PilotParts as _Part  # (mypy only: the Pilot's state and rules a part uses)
else:
    _Part = object

WAIT_BACKOFF_CAP = 60.0  # the longest a quiet unknown screen waits to be judged after WAIT answers in a row
BUSY_LOOK = 0.25  # a quiet program the kernel sees busy is looked at this often: it may turn to its terminal any time
BUSY_NOTE = ("The screen has not changed for {:g}s, and the kernel sees the program busy (asleep, computing, waiting on "
             "something other than its terminal) at each look: it may be at work, or waiting in a way the kernel does not show.")


class QuietRules(_Part):
    """Pilot's rules for quiet screens (a mixin: the state is the Pilot's)."""

    __slots__ = ()

    def _working(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        rule = next((r for r in self.profile.rules if r.id == c.rule_id), None)
        progress = rule is None or rule.progress
        self.worked = self.worked or progress
        out: list[Effect] = []
        if progress and self.starting:
            self.starting = False
            out.append(Record(R.AgentStarted(rule_id=c.rule_id)))
        self.waits_in_a_row = 0
        stuck_after = self.config.stuck_after or self.profile.stuck_after_s
        still = facts.quiet_for if facts.still_for is None else facts.still_for  # its spinner and timer are no progress
        if still >= stuck_after:
            return out + self._stuck(now, c, still, f"stuck: working marker with no progress sign for {stuck_after:g}s")
        # a marker that stops moving is looked at again soon: the kernel may say the program reads its terminal (a
        # static `...` line above a prompt), and then it is a question, not work
        self._wake_by(min(now + BUSY_LOOK, now + stuck_after - still))
        return out

    def _undecided(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """Quiet, no working marker, no rule: the screen gets a decision within `judge_after` (never silence), unless
        the kernel sees the program busy: then it is working (`_left_to_work`). A screen judged WAIT is judged again
        once the backoff has passed (each WAIT in a row doubles it) and, still unchanged after stuck_after_s, goes to a
        human. A screen answered before and shown again is judged again, told so."""
        if facts.judged is None:
            return []
        if facts.tty == "busy":
            return self._left_to_work(now, c, facts)
        self._busy_since = None
        judged = facts.judged
        key = judged.key or ""
        delay = self.judge_after(facts.tty, judged.asks)
        if judged.answered_last:  # its last words are the question answered last: the kernel's "reading" shows no new one
            delay = max(delay, self.profile.undecided_after_s)
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
        if judged.answered_last and not notes:
            notes = ("The last question on this screen was answered already, and nothing has been written below it "
                     "since: the program may still be working on that answer.",)
        return self._ask_whole(judged, facts, notes)

    def _ask_whole(self, judged: Classification, facts: ScreenFacts, notes: tuple[str, ...], not_taken: str | None = None) -> list[Effect]:
        """Ask about the screen read whole (no rule explains it), with its record: the screen, and by what facts."""
        asked = self._ask(judged, Kind.UNDECIDED.value, notes, not_taken)
        if asked and self._judged_rec != judged.key:
            self._judged_rec = judged.key
            asked.insert(0, Record(R.ScreenState(state=ScreenKind.UNKNOWN, rule_id=judged.rule_id, prompt=judged.block or None,
                                                 evidence=None, error=None, facts=classified_by(judged, facts))))
        return asked

    def _left_to_work(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """The kernel sees the program busy, not waiting on its terminal: it is working, whatever its still screen shows.
        Said once (`kernel.busy`), looked at again every BUSY_LOOK, and a human asked once quiet for stuck_after_s."""
        out: list[Effect] = []
        if self._busy_since is None:
            self._busy_since = now
            out.append(Record(R.ScreenState(state="working", rule_id="kernel.busy", prompt=c.block or None,
                                            evidence="the kernel sees it busy, not waiting on its terminal", error=None)))
        stuck_after = self.profile.stuck_after_s
        if facts.quiet_for >= stuck_after:
            judged = facts.judged if c.state == ScreenKind.UNKNOWN else None
            if judged is not None and (judged.key or "") not in self.waited:  # judged whatever one look said: a model may
                return out + self._ask(judged, Kind.UNDECIDED.value, (BUSY_NOTE.format(stuck_after),))  # say WAIT, once
            return out + self._escalate(c, f"stuck: quiet for {stuck_after:g}s, busy and not waiting on its terminal")
        self._wake_by(min(now + BUSY_LOOK, now - facts.quiet_for + stuck_after))
        return out

    def judge_after(self, tty: str | None, asks: bool) -> float:
        """How long a screen no rule explains, of a program that may be waiting on its terminal, stays quiet before it
        is judged: the one deadline of never-silent (a busy one is working: `_left_to_work`)."""
        after = self.profile.undecided_after_s
        if tty == "reading":  # blocked reading its terminal: all it shows before the key is shown, as for a prompt
            after = min(after, READING_SETTLE)  # (classifier.py): the quiet that says the last write has landed
        elif tty == "polling" and asks:
            after = min(after, self.profile.quick_judge_s)  # it waits for a key, but may draw more before it listens
        if self.waits_in_a_row:  # the model said WAIT: the next judgement backs off from the full deadline
            after = max(after, self.profile.undecided_after_s)
        return min(after * 2 ** min(self.waits_in_a_row, 6), max(WAIT_BACKOFF_CAP, after))

    def _waited(self, now: float, a: Asking, d: Decision) -> list[Effect]:
        self.waited[a.c.key or ""] = now
        self.waits_in_a_row += 1
        self._wake_by(now)  # look again: the next judgement of this screen gets its deadline
        return [Record(R.Wait(rule_id=a.c.rule_id, prompt=a.c.block, source=d.source, why=d.why,
                              waits_in_a_row=self.waits_in_a_row)), *self._apply(Event.NO_REPLY, a.c)]

    def _asked_again(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """A prompt answered before is on screen again after the program took the answer. On a screen that changed (an
        error line above, a file gone from a listing) it is a new question, asked at once; on the very same screen (a
        program that clears its line and asks again in place), after undecided_after. Either way told what was typed
        before; the loop breaker ends a program that keeps asking. One that is busy is working: left to work."""
        if facts.tty == "busy":
            return self._left_to_work(now, c, facts)
        if facts.text.rstrip() == self._asked_on.get(c.key or ""):
            due = now - facts.quiet_for + self.profile.undecided_after_s
            if now < due:
                self._wake_by(due)
                return []
        self.answered.pop(c.key or "", None)
        return [Record(R.AskedAgain(rule_id=c.rule_id, prompt=c.block)), *self._ask(c, None, self._typed_before(c.key or ""))]

    def _typed_before(self, key: str) -> tuple[str, ...]:
        if key not in self._typed:
            return ()
        return (f"{self._typed[key]!r} was typed at this prompt before, and the program took it (its screen changed) and "
                "asks again: answer what it asks now.",)

    @staticmethod
    def _not_taken(typed: str) -> tuple[str, ...]:
        return (f"{typed!r} was typed here already, and the screen did not change at all: the program waits on its "
                "terminal again, so the answer was not taken. Answer what this screen asks now (differently, if that "
                "answer cannot work), or ask for a human.",)
