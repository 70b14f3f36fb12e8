"""The PTY pilot's rules for an agent that goes on only once it is told to, PURE (a part of pty/pilot.py's Pilot): a usage
limit waited out, a stuck turn interrupted. decide/limits.py says how long a limit is waited for; here is how a screen
shows one and how the agent is told to go on.

A limit screen (a rule whose `error` is usage_limit or rate_limit: Claude Code's footer, Codex's last message, Gemini
CLI's quota dialog, the Cursor CLI's error) is no failure: the reset is read off the screen, recorded and said, and the
agent is left alone until then (its composer is no turn end meanwhile). Then, on its composer, "continue" is typed; on
its limit dialog, the option that tries again is chosen (or the one that closes it, and "continue" follows). An agent
that goes on by itself meanwhile is let go. A stuck agent (no progress sign for stuck_after: pty/quiet.py) gets its
interrupt keys once and, back at its composer, "continue"; stuck again in the same step, a human is asked.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cursorpilot import records as R
from cursorpilot.decide.deliver import Record, Tell
from cursorpilot.decide.limits import CONTINUE, LIMIT_ERRORS
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import SETTLING, UNKNOWN, Classification
from cursorpilot.detect.profiles import Kind as Screen
from cursorpilot.errors import ExitCode
from cursorpilot.keys import to_writes
from cursorpilot.machine import Event
from cursorpilot.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.pty.held import Resume, Watch
from cursorpilot.pty.keystrokes import Refused, keystrokes

if TYPE_CHECKING:
    from cursorpilot.pty.parts import PilotParts as _Part  # (mypy only: the Pilot's state and rules a part uses)
else:
    _Part = object

STUCK_NUDGES = 1  # a stuck agent is interrupted and told to continue this many times in a step; then a human is asked


def is_limit(c: Classification) -> bool:
    return c.error in LIMIT_ERRORS


class Resumes(_Part):
    """Pilot's rules for limits and stuck turns (a mixin: the state is the Pilot's)."""

    __slots__ = ()

    # -- a limit ------------------------------------------------------------------------------------------------------
    def _limit(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]:
        """A limit screen: waited for (a new one is read and recorded), or, its wait over, answered."""
        r = self._resume
        if r is not None and r.why == "limit":
            if now < r.until:
                self._wake_by(r.until)
                return []
            return self._go_on(now, c, r)
        option = self._option(c, self.profile.on_limit.switch)
        if facts.wall is None:  # no wall clock given: no reset can be read, the wait backs off
            hit = self.limits.hit(now, datetime.fromtimestamp(0, UTC), "", can_switch=option is not None)
        else:
            hit = self.limits.hit(now, facts.wall, facts.text, can_switch=option is not None)
        out: list[Effect] = [Record(R.LimitHit(rule_id=c.rule_id, words=c.block or c.evidence, reset=hit.reset, phrase=hit.phrase,
                                               action=hit.action, wait_s=round(hit.wait, 1), on_limit=self.limits.config.on_limit,
                                               hits=self.limits.hits)), Tell("note", hit.why)]
        if self.counts.dry_run:  # a dry run types nothing: what the limit would lead to is its preview
            self.tally.preview = {"kind": "usage_limit", "question": c.evidence, "would_send": hit.why, "source": "pilot", "rule_id": c.rule_id}
            return out + self._abort(ExitCode.OK, "previewed (dry run)")
        if hit.action == "stop":
            return out + self._abort(hit.code, hit.why)
        if hit.action == "switch" and option is not None:
            return out + self._tell_to_go_on(now, c, option, Record(R.LimitWaited(waited_s=0.0, how="switched", sent=option)))
        self._resume = Resume("limit", hit.until or now, now)
        self._wake_by(self._resume.until)
        return out

    def _resuming(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect] | None:
        """A wait under way (a limit's, or a stuck agent's interrupt): what this screen means for it, or None: the
        screen's own rules apply (the agent went on by itself, or asks something)."""
        r = self._resume
        assert r is not None
        if c.state == Screen.WORKING:
            if r.why == "limit":  # it went on by itself (the agent retries at its reset: Claude Code does)
                self._resume = None
                waited = self.limits.over(now)
                return [Record(R.LimitWaited(waited_s=round(waited, 1), how="went_on")),
                        Tell("note", f"usage limit: the agent went on by itself after {waited:.0f}s"), *self._working(now, c, facts)]
            still = facts.quiet_for if facts.still_for is None else facts.still_for  # interrupted, not back at its composer yet:
            return self._working(now, c, replace(facts, still_for=min(still, now - r.since)))  # its stuck clock restarted then
        if is_limit(c):
            return self._limit(now, c, facts)
        if c.state not in (Screen.IDLE, SETTLING, UNKNOWN) and not self._stopped(c):
            return None  # a question, a menu: answered as ever (a stuck turn's interrupt may end in one)
        if c.state == SETTLING:
            return []
        if now < r.until:
            self._wake_by(r.until)
            return []
        return self._go_on(now, c, r) if c.state != UNKNOWN else None

    def _go_on(self, now: float, c: Classification, r: Resume) -> list[Effect]:
        """The wait is over: the agent is told to go on, the way its screen takes it."""
        retry = None if r.dismissed else self._option(c, self.profile.on_limit.retry)
        dismiss = None if retry or r.dismissed else self._option(c, self.profile.on_limit.dismiss)
        if c.menu is not None and (retry or dismiss):
            sent = retry or dismiss or ""
            r.dismissed = dismiss is not None  # the dialog closes: "continue" goes into the composer next
            done = None if r.dismissed else self._wait_over(now, r, sent)
            return self._tell_to_go_on(now, c, sent, done)
        if c.menu is not None or c.state == UNKNOWN:  # a dialog with no option the profile names: a person decides
            self._resume = None
            return self._escalate(c, f"the agent's {r.why} screen offers no option to go on with")
        composer = replace(c, state=Screen.INPUT.value, submit=True, menu=None)
        return self._tell_to_go_on(now, composer, CONTINUE, self._wait_over(now, r, CONTINUE))

    def _wait_over(self, now: float, r: Resume, sent: str) -> Record:
        self._resume = None
        if r.why == "limit":
            return Record(R.LimitWaited(waited_s=round(self.limits.over(now), 1), how="continued", sent=sent))
        return Record(R.Stuck(action="continue", still_s=round(now - r.since, 1), keys=[sent]))

    def _option(self, c: Classification, pattern: str | None) -> str | None:
        """The label of the menu option the profile's pattern names, if the screen offers one."""
        if c.menu is None or not pattern:
            return None
        return next((o.label for o in c.menu.options if re.search(pattern, o.label)), None)

    def _tell_to_go_on(self, now: float, c: Classification, text: str, record: Record | None) -> list[Effect]:
        """Type `text` (or choose the option it names) the way an answer is typed, outside the decision path: no model
        and no rule is asked to continue a limit's wait, and it counts as no answer of theirs."""
        try:
            k = keystrokes(c, Decision(Verdict.ANSWER, text=text, source="pilot"), self._modes, self.profile, kind=None,
                           secret=False, secrets={}, echo_check=self.config.echo_check)
        except Refused as exc:
            self._resume = None
            return self._escalate(c, f"could not tell the agent to go on: {exc}")
        out: list[Effect] = [*([record] if record else []), *([k.choice] if k.choice else []), Tell("note", f"told the agent: {k.shown}"),
                             *self._apply(Event.PROMPT, c), *self._apply(Event.REPLY, c)]
        self.turns.sent(k.shown)
        self._went_on = c.key
        self.worked = True
        self.typist.schedule(tuple(k.writes), now, paced=self.profile.key_pace == "reaction")
        self._watch = Watch(c, k.submit, k.shown, text, float("inf"))
        return out + [Type(tuple(k.writes))]

    # -- a stuck turn -------------------------------------------------------------------------------------------------
    def _stuck(self, now: float, c: Classification, still: float, why: str) -> list[Effect]:
        """No progress sign for stuck_after: interrupted once (its interrupt keys) and told to continue when back at its
        composer; stuck again in this step, or with no interrupt keys in its profile, a human is asked."""
        keys = self.profile.interrupt
        if not keys or self.counts.dry_run or self.nudged >= STUCK_NUDGES or (self._resume is not None and self._resume.why == "stuck"):
            return [Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="escalate")), *self._escalate(c, why)]
        self.nudged += 1
        delay = max(self.profile.key_delay_ms / 1000, 0.05)
        writes = tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay))
        self.typist.schedule(writes, now)
        self._resume = Resume("stuck", now, now)
        return [Record(R.Stuck(rule_id=c.rule_id, still_s=round(still, 1), action="interrupt", keys=list(keys))),
                Tell("note", f"{why}: interrupting it ({' '.join(keys)}), then telling it to continue"), Type(writes)]
