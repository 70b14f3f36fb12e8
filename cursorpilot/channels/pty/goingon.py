"""The PTY pilot's rules for an agent that goes on only once it is told to, PURE (a part of the step, held.py): a usage
limit waited out, a stuck turn interrupted. decide/limits.py says how long a limit is waited for; here is how a screen
shows one and how the agent is told to go on.

A limit screen (a rule whose `error` is usage_limit or rate_limit: Claude Code's footer, Codex's last message, Gemini
CLI's quota dialog, the Cursor CLI's error) is no failure: the reset is read off the screen, recorded and said, and the
agent is left alone until then (its composer is no turn end meanwhile). Then, on its composer, "continue" is typed; on
its limit dialog, the option that tries again is chosen (or the one that closes it, and "continue" follows). An agent
that goes on by itself meanwhile is let go. A stuck agent (no progress sign for stuck_after: pty/quiet.py) gets its
interrupt keys once and, back at its composer, "continue"; stuck again in the same step, a human is asked.

It keeps (held.py's GoingOn) the wait under way and how often the agent was interrupted in this step (the interrupt
itself is quiet.py's `stuck_turn`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

from cursorpilot.channels.pty.answering import watch_keys
from cursorpilot.channels.pty.asking import escalate
from cursorpilot.channels.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.channels.pty.held import GoOn, StepState, Watch
from cursorpilot.channels.pty.keystrokes import Refused, keystrokes
from cursorpilot.channels.pty.machine import Event
from cursorpilot.channels.pty.quiet import working
from cursorpilot.channels.pty.step import abort, go
from cursorpilot.channels.pty.turnend import stopped
from cursorpilot.decide.deliver import Record, Tell
from cursorpilot.decide.limits import CONTINUE, LIMIT_ERRORS
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.records import models as R


def is_limit(c: Classification) -> bool:
    return c.error in LIMIT_ERRORS


def limit(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
    """A limit screen: waited for (a new one is read and recorded), or, its wait over, answered."""
    r = s.going_on.waiting
    if r is not None and r.why == "limit":
        if now < r.until:
            s.wake_by(r.until)
            return []
        return _go_on(s, now, c, r)
    option = _option(c, s.profile.on_limit.switch)
    limits = s.limits
    if facts.wall is None:  # no wall clock given: no reset can be read, the wait backs off
        hit = limits.hit(now, datetime.fromtimestamp(0, UTC), "", can_switch=option is not None)
    else:
        hit = limits.hit(now, facts.wall, facts.text, can_switch=option is not None)
    out: list[Effect] = [Record(R.LimitHit(rule_id=c.rule_id, words=c.block or c.evidence, reset=hit.reset, phrase=hit.phrase,
                                           action=hit.action, wait_s=round(hit.wait, 1), on_limit=limits.config.on_limit,
                                           hits=limits.hits)), Tell("note", hit.why)]
    if s.counts.dry_run:  # a dry run types nothing: what the limit would lead to is its preview
        s.tally.preview = {"kind": "usage_limit", "question": c.evidence, "would_send": hit.why, "source": "pilot", "rule_id": c.rule_id}
        return out + abort(s, ExitCode.OK, "previewed (dry run)")
    if hit.action == "stop":
        return out + abort(s, hit.code, hit.why)
    if hit.action == "switch" and option is not None:
        return out + _tell_to_go_on(s, now, c, option, Record(R.LimitWaited(waited_s=0.0, how="switched", sent=option)))
    s.going_on.waiting = GoOn("limit", hit.until or now, now)
    s.wake_by(s.going_on.waiting.until)
    return out


def goes_on(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect] | None:
    """A wait under way (a limit's, or a stuck agent's interrupt): what this screen means for it, or None: the
    screen's own rules apply (the agent went on by itself, or asks something)."""
    r = s.going_on.waiting
    assert r is not None
    if c.state == ScreenKind.WORKING:
        if r.why == "limit":  # it went on by itself (the agent retries at its reset: Claude Code does)
            s.going_on.waiting = None
            waited = s.limits.over(now)
            return [Record(R.LimitWaited(waited_s=round(waited, 1), how="went_on")),
                    Tell("note", f"usage limit: the agent went on by itself after {waited:.0f}s"), *working(s, now, c, facts)]
        still = facts.quiet_for if facts.still_for is None else facts.still_for  # interrupted, not back at its composer yet:
        return working(s, now, c, replace(facts, still_for=min(still, now - r.since)))  # its stuck clock restarted then
    if is_limit(c):
        return limit(s, now, c, facts)
    if c.state not in (ScreenKind.IDLE, ScreenKind.SETTLING, ScreenKind.UNKNOWN) and not stopped(s, c):
        return None  # a question, a menu: answered as ever (a stuck turn's interrupt may end in one)
    if c.state == ScreenKind.SETTLING:
        return []
    if now < r.until:
        s.wake_by(r.until)
        return []
    return _go_on(s, now, c, r) if c.state != ScreenKind.UNKNOWN else None


def _go_on(s: StepState, now: float, c: Classification, r: GoOn) -> list[Effect]:
    """The wait is over: the agent is told to go on, the way its screen takes it."""
    on_limit = s.profile.on_limit
    retry = None if r.dismissed else _option(c, on_limit.retry)
    dismiss = None if retry or r.dismissed else _option(c, on_limit.dismiss)
    if c.menu is not None and (retry or dismiss):
        sent = retry or dismiss or ""
        r.dismissed = dismiss is not None  # the dialog closes: "continue" goes into the composer next
        done = None if r.dismissed else _wait_over(s, now, r, sent)
        return _tell_to_go_on(s, now, c, sent, done)
    if c.menu is not None or c.state == ScreenKind.UNKNOWN:  # a dialog with no option the profile names: a person decides
        s.going_on.waiting = None
        return escalate(s, c, f"the agent's {r.why} screen offers no option to go on with")
    composer = replace(c, state=ScreenKind.INPUT, submit=True, menu=None)
    return _tell_to_go_on(s, now, composer, CONTINUE, _wait_over(s, now, r, CONTINUE))


def _wait_over(s: StepState, now: float, r: GoOn, sent: str) -> Record:
    s.going_on.waiting = None
    if r.why == "limit":
        return Record(R.LimitWaited(waited_s=round(s.limits.over(now), 1), how="continued", sent=sent))
    return Record(R.Stuck(action="continue", still_s=round(now - r.since, 1), keys=[sent]))


def _tell_to_go_on(s: StepState, now: float, c: Classification, text: str, record: Record | None) -> list[Effect]:
    """Type `text` (or choose the option it names) the way an answer is typed, outside the decision path: no model
    and no rule is asked to continue a limit's wait, and it counts as no answer of theirs. Its keys are watched
    taken, as an answer's."""
    try:
        k = keystrokes(c, Decision(Verdict.ANSWER, text=text, source="pilot"), s.look.modes, s.profile, kind=None,
                       secret=False, secrets={}, echo_check=s.config.echo_check)
    except Refused as exc:
        s.going_on.waiting = None
        return escalate(s, c, f"could not tell the agent to go on: {exc}")
    s.turns.sent(k.shown)
    s.going_on.went_on = c.key
    writes = tuple(k.writes)
    out: list[Effect] = [*([record] if record else []), *([k.choice] if k.choice else []), Tell("note", f"told the agent: {k.shown}"),
                         *go(s, Event.PROMPT, c), *go(s, Event.REPLY, c)]
    s.typist.schedule(writes, now, paced=s.profile.key_pace == "reaction")
    watch_keys(s, Watch(c, k.submit, k.shown, text, float("inf")))
    s.turn_ends.worked = True
    return [*out, Type(writes)]


def _option(c: Classification, pattern: str | None) -> str | None:
    """The label of the menu option the profile's pattern names, if the screen offers one."""
    if c.menu is None or not pattern:
        return None
    return next((o.label for o in c.menu.options if re.search(pattern, o.label)), None)
