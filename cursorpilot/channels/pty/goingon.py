"""The PTY pilot's rules for an agent that goes on only once it is told to, PURE (a part of pty/pilot.py's Pilot): a usage
limit waited out, a stuck turn interrupted. decide/limits.py says how long a limit is waited for; here is how a screen
shows one and how the agent is told to go on.

A limit screen (a rule whose `error` is usage_limit or rate_limit: Claude Code's footer, Codex's last message, Gemini
CLI's quota dialog, the Cursor CLI's error) is no failure: the reset is read off the screen, recorded and said, and the
agent is left alone until then (its composer is no turn end meanwhile). Then, on its composer, "continue" is typed; on
its limit dialog, the option that tries again is chosen (or the one that closes it, and "continue" follows). An agent
that goes on by itself meanwhile is let go. A stuck agent (no progress sign for stuck_after: pty/quiet.py) gets its
interrupt keys once and, back at its composer, "continue"; stuck again in the same step, a human is asked.

`GoingOn` owns the wait under way and how often the agent was interrupted in this step; it reads the pilot through its
View and asks it for the rest (held.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from cursorpilot.channels.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.channels.pty.held import Abort, Escalate, Go, GoOn, Schedule, View, WakeBy, Want, Watch, Watched, Working
from cursorpilot.channels.pty.keystrokes import Refused, keystrokes
from cursorpilot.channels.pty.machine import Event
from cursorpilot.decide.deliver import Record, Tell
from cursorpilot.decide.limits import CONTINUE, LIMIT_ERRORS
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.errors import ExitCode
from cursorpilot.keys import to_writes
from cursorpilot.records import models as R

STUCK_NUDGES = 1  # a stuck agent is interrupted and told to continue this many times in a step; then a human is asked


def is_limit(c: Classification) -> bool:
    return c.error in LIMIT_ERRORS


@dataclass(slots=True)
class GoingOn:
    waiting: GoOn | None = None  # a limit's wait, or a stuck agent's interrupt, until it is told to go on
    nudged: int = 0  # a stuck agent interrupted and told to continue, in this step
    went_on: str | None = None  # the key of the limit screen the agent was last told to go on from

    @property
    def stuck(self) -> bool:
        """A stuck agent was interrupted and is not back yet."""
        return self.waiting is not None and self.waiting.why == "stuck"

    # -- a limit ------------------------------------------------------------------------------------------------------
    def limit(self, view: View, now: float, c: Classification, facts: ScreenFacts) -> list[Effect | Want]:
        """A limit screen: waited for (a new one is read and recorded), or, its wait over, answered."""
        r = self.waiting
        if r is not None and r.why == "limit":
            if now < r.until:
                return [WakeBy(r.until)]
            return self._go_on(view, now, c, r)
        option = _option(c, view.profile.on_limit.switch)
        limits = view.limits
        if facts.wall is None:  # no wall clock given: no reset can be read, the wait backs off
            hit = limits.hit(now, datetime.fromtimestamp(0, UTC), "", can_switch=option is not None)
        else:
            hit = limits.hit(now, facts.wall, facts.text, can_switch=option is not None)
        out: list[Effect | Want] = [Record(R.LimitHit(rule_id=c.rule_id, words=c.block or c.evidence, reset=hit.reset, phrase=hit.phrase,
                                                      action=hit.action, wait_s=round(hit.wait, 1), on_limit=limits.config.on_limit,
                                                      hits=limits.hits)), Tell("note", hit.why)]
        if view.counts.dry_run:  # a dry run types nothing: what the limit would lead to is its preview
            view.tally.preview = {"kind": "usage_limit", "question": c.evidence, "would_send": hit.why, "source": "pilot", "rule_id": c.rule_id}
            return [*out, Abort(ExitCode.OK, "previewed (dry run)")]
        if hit.action == "stop":
            return [*out, Abort(hit.code, hit.why)]
        if hit.action == "switch" and option is not None:
            return out + self._tell_to_go_on(view, now, c, option, Record(R.LimitWaited(waited_s=0.0, how="switched", sent=option)))
        self.waiting = GoOn("limit", hit.until or now, now)
        return [*out, WakeBy(self.waiting.until)]

    def goes_on(self, view: View, now: float, c: Classification, facts: ScreenFacts) -> list[Effect | Want] | None:
        """A wait under way (a limit's, or a stuck agent's interrupt): what this screen means for it, or None: the
        screen's own rules apply (the agent went on by itself, or asks something)."""
        r = self.waiting
        assert r is not None
        if c.state == ScreenKind.WORKING:
            if r.why == "limit":  # it went on by itself (the agent retries at its reset: Claude Code does)
                self.waiting = None
                waited = view.limits.over(now)
                return [Record(R.LimitWaited(waited_s=round(waited, 1), how="went_on")),
                        Tell("note", f"usage limit: the agent went on by itself after {waited:.0f}s"), Working(c, facts)]
            still = facts.quiet_for if facts.still_for is None else facts.still_for  # interrupted, not back at its composer yet:
            return [Working(c, replace(facts, still_for=min(still, now - r.since)))]  # its stuck clock restarted then
        if is_limit(c):
            return self.limit(view, now, c, facts)
        if c.state not in (ScreenKind.IDLE, ScreenKind.SETTLING, ScreenKind.UNKNOWN) and not view.stopped(c):
            return None  # a question, a menu: answered as ever (a stuck turn's interrupt may end in one)
        if c.state == ScreenKind.SETTLING:
            return []
        if now < r.until:
            return [WakeBy(r.until)]
        return self._go_on(view, now, c, r) if c.state != ScreenKind.UNKNOWN else None

    def _go_on(self, view: View, now: float, c: Classification, r: GoOn) -> list[Effect | Want]:
        """The wait is over: the agent is told to go on, the way its screen takes it."""
        on_limit = view.profile.on_limit
        retry = None if r.dismissed else _option(c, on_limit.retry)
        dismiss = None if retry or r.dismissed else _option(c, on_limit.dismiss)
        if c.menu is not None and (retry or dismiss):
            sent = retry or dismiss or ""
            r.dismissed = dismiss is not None  # the dialog closes: "continue" goes into the composer next
            done = None if r.dismissed else self._wait_over(view, now, r, sent)
            return self._tell_to_go_on(view, now, c, sent, done)
        if c.menu is not None or c.state == ScreenKind.UNKNOWN:  # a dialog with no option the profile names: a person decides
            self.waiting = None
            return [Escalate(c, f"the agent's {r.why} screen offers no option to go on with")]
        composer = replace(c, state=ScreenKind.INPUT, submit=True, menu=None)
        return self._tell_to_go_on(view, now, composer, CONTINUE, self._wait_over(view, now, r, CONTINUE))

    def _wait_over(self, view: View, now: float, r: GoOn, sent: str) -> Record:
        self.waiting = None
        if r.why == "limit":
            return Record(R.LimitWaited(waited_s=round(view.limits.over(now), 1), how="continued", sent=sent))
        return Record(R.Stuck(action="continue", still_s=round(now - r.since, 1), keys=[sent]))

    def _tell_to_go_on(self, view: View, now: float, c: Classification, text: str, record: Record | None) -> list[Effect | Want]:
        """Type `text` (or choose the option it names) the way an answer is typed, outside the decision path: no model
        and no rule is asked to continue a limit's wait, and it counts as no answer of theirs."""
        try:
            k = keystrokes(c, Decision(Verdict.ANSWER, text=text, source="pilot"), view.look.modes, view.profile, kind=None,
                           secret=False, secrets={}, echo_check=view.config.echo_check)
        except Refused as exc:
            self.waiting = None
            return [Escalate(c, f"could not tell the agent to go on: {exc}")]
        view.turns.sent(k.shown)
        self.went_on = c.key
        writes = tuple(k.writes)
        return [*([record] if record else []), *([k.choice] if k.choice else []), Tell("note", f"told the agent: {k.shown}"),
                Go(Event.PROMPT, c), Go(Event.REPLY, c), Schedule(writes, paced=view.profile.key_pace == "reaction"),
                Watched(Watch(c, k.submit, k.shown, text, float("inf"))), Type(writes)]

    # -- a stuck turn -------------------------------------------------------------------------------------------------
    def stuck_turn(self, view: View, now: float, c: Classification, still: float, why: str) -> list[Effect | Want]:
        """No progress sign for stuck_after: interrupted once (its interrupt keys) and told to continue when back at its
        composer; stuck again in this step, or with no interrupt keys in its profile, a human is asked."""
        keys = view.profile.interrupt
        if not keys or view.counts.dry_run or self.nudged >= STUCK_NUDGES or self.stuck:
            return [Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="escalate")), Escalate(c, why)]
        self.nudged += 1
        delay = max(view.profile.key_delay_ms / 1000, 0.05)
        writes = tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay))
        self.waiting = GoOn("stuck", now, now)
        return [Schedule(writes), Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="interrupt", keys=list(keys))),
                Tell("note", f"{why}: interrupting it ({' '.join(keys)}), then telling it to continue"), Type(writes)]


def _option(c: Classification, pattern: str | None) -> str | None:
    """The label of the menu option the profile's pattern names, if the screen offers one."""
    if c.menu is None or not pattern:
        return None
    return next((o.label for o in c.menu.options if re.search(pattern, o.label)), None)
