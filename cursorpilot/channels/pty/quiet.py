"""The PTY pilot's rules for a quiet screen, PURE (a part of the step, held.py): working is not waiting, and waiting
is not working.

A program the kernel sees busy (sleeping, computing, waiting on the network or a child, not on its terminal) is working,
whatever its still screen shows: it is left to work, looked at again every BUSY_LOOK, and a human is asked at
stuck_after. A program that may be waiting on its terminal gets a decision on a screen no rule explains within
`judge_after` (never silence): judged by the model (which may say WAIT: backoff), or escalated with rules only. A prompt
answered before and shown again, unchanged, is asked again after undecided_after, told what was typed.

A working screen with no progress sign for stuck_after is a stuck turn: the agent is interrupted once (its interrupt
keys) and told to continue when back at its composer (goingon.py); stuck again in the same step, a human is asked.

It keeps (held.py's Quiet) the screens judged WAIT (and how many in a row), since when the kernel has seen a quiet
program busy, and which screen no rule explains was last recorded as judged.
"""

from __future__ import annotations

from dataclasses import replace

from cursorpilot.channels.pty.answering import forget_answer, not_taken_note
from cursorpilot.channels.pty.asking import ask, escalate
from cursorpilot.channels.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.channels.pty.held import Asking, GoOn, StepState, steady
from cursorpilot.channels.pty.machine import Event
from cursorpilot.channels.pty.step import abort, go
from cursorpilot.channels.pty.turnend import saw_work
from cursorpilot.decide.deliver import Record, Tell
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.detect.classifier import READING_SETTLE, Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import to_writes
from cursorpilot.records import models as R

WAIT_BACKOFF_CAP = 60.0  # the longest a quiet unknown screen waits to be judged after WAIT answers in a row
IDLE_AFTER = 5.0  # a still raw-mode screen of a program that has used almost no CPU this long is taken as waiting
STOPPED_AFTER = 2.0  # a program stopped by a signal this long is said, and the run ends (a person must continue it)
BUSY_LOOK = 0.25  # a quiet program the kernel sees busy is looked at this often: it may turn to its terminal any time
BUSY_NOTE = ("The screen has not changed for {:g}s, and the kernel sees the program busy (asleep, computing, waiting on "
             "something other than its terminal) at each look: it may be at work, or waiting in a way the kernel does not show.")
STUCK_NUDGES = 1  # a stuck agent is interrupted and told to continue this many times in a step; then a human is asked


def kernel(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> tuple[list[Effect], ScreenFacts | None]:
    """Never silent, from the kernel's facts before the screen's words: a program stopped by a signal (SIGSTOP, or
    SIGTTIN from the background) never runs again by itself: said, and the run ends after STOPPED_AFTER (a person
    must continue it: exit 3), the screen not read (None). A still, idle raw-mode program waits (`idle`)."""
    q = s.quiet
    if facts.stopped is None:
        q.stopped_since = None
        return idle(s, c, facts)
    since = q.stopped_since = now if q.stopped_since is None else q.stopped_since
    if now < since + STOPPED_AFTER:
        s.wake_by(since + STOPPED_AFTER)
        return [], None
    why = (f"the program is stopped by a signal ({facts.stopped}: SIGSTOP, or SIGTTIN/SIGTTOU for using the terminal from the "
           f"background) and has not run for {STOPPED_AFTER:g}s: a person must continue it or end it")
    return [Record(R.ScreenState(state="stopped", rule_id="kernel.stopped", prompt=c.block or None, evidence=facts.stopped,
                                 error=None)), *abort(s, ExitCode.HUMAN_NEEDED, why)], None


def idle(s: StepState, c: Classification, facts: ScreenFacts) -> tuple[list[Effect], ScreenFacts]:
    """Never silent, whatever the kernel says: a still screen in raw mode, of a program that has used almost no
    CPU for IDLE_AFTER, waits on its terminal in a way the kernel does not show (a poll that never blocks, a read
    from a helper it can't see). Its "busy" is overruled to "polling", said once per screen (`kernel.idle`), so the
    screen goes the way of a waiting one: answered by a rule, or judged (a model may say WAIT)."""
    if facts.tty != "busy" or not facts.raw or facts.idle_for is None or min(facts.idle_for, facts.quiet_for) < IDLE_AFTER:
        return [], facts
    out: list[Effect] = []
    if s.quiet.idle_said != facts.content:
        s.quiet.idle_said = facts.content
        out.append(Record(R.ScreenState(state="waiting", rule_id="kernel.idle", prompt=c.block or None, error=None,
                                        evidence=f"the kernel sees it busy, but it has used almost no CPU for "
                                                 f"{min(facts.idle_for, facts.quiet_for):.0f}s in raw mode, its screen still")))
    return out, replace(facts, tty="polling")


def working(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
    """A working marker: left to work; no progress sign for stuck_after and it is stuck (`stuck_turn`). A marker
    that stops moving is looked at again soon: the kernel may say the program reads its terminal (a static `...`
    line above a prompt), and then it is a question, not work."""
    rule = next((r for r in s.profile.rules if r.id == c.rule_id), None)
    out = saw_work(s, c, rule is None or rule.progress)
    stuck_after = s.config.stuck_after or s.profile.stuck_after_s
    s.quiet.waits_in_a_row = 0
    still = facts.quiet_for if facts.still_for is None else facts.still_for  # its spinner and timer are no progress
    if still >= stuck_after:
        return out + stuck_turn(s, now, c, still, f"stuck: working marker with no progress sign for {stuck_after:g}s")
    s.wake_by(min(now + BUSY_LOOK, now + stuck_after - still))
    return out


def stuck_turn(s: StepState, now: float, c: Classification, still: float, why: str) -> list[Effect]:
    """No progress sign for stuck_after: interrupted once (its interrupt keys) and told to continue when back at its
    composer (goingon.py); stuck again in this step, or with no interrupt keys in its profile, a human is asked."""
    keys, going = s.profile.interrupt, s.going_on
    if not keys or s.counts.dry_run or going.nudged >= STUCK_NUDGES or going.stuck:
        return [Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="escalate")), *escalate(s, c, why)]
    going.nudged += 1
    delay = max(s.profile.key_delay_ms / 1000, 0.05)
    writes = tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay))
    going.waiting = GoOn("stuck", now, now)
    s.typist.schedule(writes, now)
    return [Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="interrupt", keys=list(keys))),
            Tell("note", f"{why}: interrupting it ({' '.join(keys)}), then telling it to continue"), Type(writes)]


def undecided(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
    """Quiet, no working marker, no rule: the screen gets a decision within `judge_after` (never silence), unless
    the kernel sees the program busy: then it is working (`left_to_work`). A screen judged WAIT is judged again
    once the backoff has passed (each WAIT in a row doubles it) and, still unchanged after stuck_after_s, goes to a
    human. A screen answered before and shown again is judged again, told so."""
    if facts.judged is None:
        return []
    if facts.tty == "busy":
        return left_to_work(s, now, c, facts)
    q = s.quiet
    q.busy_since = None
    judged, profile = facts.judged, s.profile
    key = steady(judged.key or "")  # a WAIT holds however its clock ticks
    delay = judge_after(s, facts.tty, judged.asks)
    if judged.answered_last:  # its last words are the question answered last: the kernel's "reading" shows no new one
        delay = max(delay, profile.undecided_after_s)
    if c.recheck_after is not None:  # a rule waits for more quiet (an idle composer): it speaks first, in time
        delay = max(delay, min(facts.quiet_for + c.recheck_after, profile.undecided_after_s))
    since = now - facts.quiet_for
    if key in q.waited:
        since = max(since, q.waited[key])
        if facts.quiet_for >= profile.stuck_after_s:
            return escalate(s, judged, f"stuck: judged WAIT, unchanged for {profile.stuck_after_s:g}s", Kind.UNDECIDED.value)
    if now < since + delay:
        s.wake_by(since + delay)
        return []
    answers = s.answering
    raw = judged.key or ""
    notes = not_taken_note(answers.typed[raw]) if raw in answers.answered and raw in answers.typed else ()
    if judged.answered_last and not notes:
        notes = ("The last question on this screen was answered already, and nothing has been written below it "
                 "since: the program may still be working on that answer.",)
    return ask(s, now, judged, Kind.UNDECIDED.value, notes, whole=facts)


def left_to_work(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
    """The kernel sees the program busy, not waiting on its terminal: it is working, whatever its still screen shows.
    Said once (`kernel.busy`), looked at again every BUSY_LOOK, and a human asked once quiet for stuck_after_s."""
    out: list[Effect] = []
    q = s.quiet
    if q.busy_since is None:
        q.busy_since = now
        out.append(Record(R.ScreenState(state="working", rule_id="kernel.busy", prompt=c.block or None,
                                        evidence="the kernel sees it busy, not waiting on its terminal", error=None)))
    stuck_after = s.profile.stuck_after_s
    if facts.quiet_for >= stuck_after:
        judged = facts.judged if c.state == ScreenKind.UNKNOWN else None
        if judged is not None and steady(judged.key or "") not in q.waited:  # judged whatever one look said: a model may
            return out + ask(s, now, judged, Kind.UNDECIDED.value, (BUSY_NOTE.format(stuck_after),))  # say WAIT, once
        return out + escalate(s, c, f"stuck: quiet for {stuck_after:g}s, busy and not waiting on its terminal")
    s.wake_by(min(now + BUSY_LOOK, now - facts.quiet_for + stuck_after))
    return out


def judge_after(s: StepState, tty: str | None, asks: bool) -> float:
    """How long a screen no rule explains, of a program that may be waiting on its terminal, stays quiet before it
    is judged: the one deadline of never-silent (a busy one is working: `left_to_work`)."""
    profile, waits = s.profile, s.quiet.waits_in_a_row
    after = profile.undecided_after_s
    if tty == "reading":  # blocked reading its terminal: all it shows before the key is shown, as for a prompt
        after = min(after, READING_SETTLE)  # (classifier.py): the quiet that says the last write has landed
    elif tty == "polling" and asks:
        after = min(after, profile.quick_judge_s)  # it waits for a key, but may draw more before it listens
    if waits:  # the model said WAIT: the next judgement backs off from the full deadline
        after = max(after, profile.undecided_after_s)
    return min(after * 2 ** min(waits, 6), max(WAIT_BACKOFF_CAP, after))


def waited_out(s: StepState, now: float, a: Asking, d: Decision) -> list[Effect]:
    """The screen was judged WAIT: nobody is asked; it is judged again once its backoff has passed."""
    q = s.quiet
    q.waited[steady(a.c.key or "")] = now
    q.waits_in_a_row += 1
    s.wake_by(now)  # look again: the next judgement of this screen gets its deadline
    return [Record(R.Wait(rule_id=a.c.rule_id, prompt=a.c.block, source=d.source, why=d.why, waits_in_a_row=q.waits_in_a_row)),
            *go(s, Event.NO_REPLY, a.c)]


def asked_again(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
    """A prompt answered before is on screen again after the program took the answer. On a screen that changed (an
    error line above, a file gone from a listing) it is a new question, asked at once; on the very same screen (a
    program that clears its line and asks again in place), after undecided_after. Either way told what was typed
    before; the loop breaker ends a program that keeps asking. One that is busy is working: left to work."""
    if facts.tty == "busy":
        return left_to_work(s, now, c, facts)
    key = c.key or ""
    if facts.text.rstrip() == s.answering.asked_on.get(key):
        due = now - facts.quiet_for + s.profile.undecided_after_s
        if now < due:
            s.wake_by(due)
            return []
    forget_answer(s, key)
    return [Record(R.AskedAgain(rule_id=c.rule_id, prompt=c.block)), *ask(s, now, c, None, _typed_before(s, key))]


def _typed_before(s: StepState, key: str) -> tuple[str, ...]:
    typed = s.answering.typed
    if key not in typed:
        return ()
    return (f"{typed[key]!r} was typed at this prompt before, and the program took it (its screen changed) and "
            "asks again: answer what it asks now.",)
