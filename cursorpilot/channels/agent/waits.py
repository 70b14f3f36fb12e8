"""What the two agent pilots share of an agent that goes on only once it is told to (acp/pilot.py, headless/pilot.py),
PURE: a usage limit the agent reported, waited out (decide/limits.py says how long) and then the same session told to
continue; a turn with no sign of life for stuck_after, interrupted once and told to continue, then escalated.

The screen's pilot has its own (pty/goingon.py): it reads limits off a screen and types its answers. Here a limit comes
as the agent's words (an ACP prompt answered with an error, a print-mode turn that failed, Claude's rate_limit_event),
and going on is the channel's next prompt in the same session (`_next_prompt`); interrupting is the channel's own
(`_interrupt`: session/cancel over ACP, the turn's process ended in print mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Generic, TypeVar

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Halt, Record, RunCounts, Shared, Tell, escalate, split
from cursorpilot.decide.limits import CONTINUE, Limits, from_epoch
from cursorpilot.decide.turns import gist
from cursorpilot.errors import ExitCode

E = TypeVar("E")

STUCK_NUDGES = 1  # a stuck turn is interrupted and the agent told to continue this many times in a step; then a human


@dataclass(slots=True)
class Waits:
    """What an agent pilot holds of its agent's limits and stuck turns."""

    limits: Limits
    nudged: int = 0  # stuck turns interrupted in this step
    nudging: bool = False  # a stuck turn is being interrupted: when it ends, the agent is told to continue
    wall: tuple[float, datetime] | None = None  # the wall clock at a monotonic time (the last Tick's)
    prompt: str | None = None  # the last prompt sent (over ACP, a prompt refused at a limit never reached the session)
    resend: str = CONTINUE  # what the agent is sent once the limit has reset


class AgentWaits(Generic[E]):
    __slots__ = ()
    if TYPE_CHECKING:  # (the pilot's own dataclass fields)
        done: bool
        counts: RunCounts
        waits: Waits

    # -- the pilot's own ------------------------------------------------------------------------------------------------
    def _shared(self, effects: list[Shared]) -> list[E]:
        raise NotImplementedError

    def _next_prompt(self, message: str) -> list[E]:
        raise NotImplementedError

    def _interrupt(self) -> list[E]:
        """Interrupt the turn under way (its end comes back as the channel says: a cancelled turn, an exit)."""
        raise NotImplementedError

    def _end(self, code: ExitCode, reason: str) -> list[E]:
        raise NotImplementedError

    def _halt(self, halt: Halt | None) -> list[E]:
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------------------------------------
    def _limit_hit(self, now: float, words: str, rule_id: str, reset_at: float | None = None, resend: str | None = None) -> list[E]:
        """The agent reported a usage limit (`reset_at`: the exact reset its stream gave, epoch seconds): waited for (the
        next Tick past the reset continues the session with "continue", or `resend`: the prompt that was refused), or the
        step stops (--on-limit stop, a reset past the deadline)."""
        w = self.waits
        if w.wall is None:  # no wall clock told yet (no Tick): no reset can be read, the wait backs off
            hit = w.limits.hit(now, datetime.fromtimestamp(0, UTC), "")
        else:
            wall = w.wall[1] + timedelta(seconds=now - w.wall[0])
            reading = from_epoch(reset_at, wall, f"resets at {datetime.fromtimestamp(reset_at, wall.tzinfo):%H:%M:%S}") if reset_at else None
            hit = w.limits.hit(now, wall, words, reading=reading)
        w.resend = resend or CONTINUE
        said: list[Shared] = [Record(R.LimitHit(rule_id=rule_id, words=words[:500], reset=hit.reset, phrase=hit.phrase, action=hit.action,
                                                wait_s=round(hit.wait, 1), on_limit=w.limits.config.on_limit, hits=w.limits.hits)),
                              Tell("note", hit.why)]
        if hit.action != "wait":  # (no channel here offers another model: switch-model waits, Limits.hit says so)
            return [*self._shared(said), *self._end(hit.code, hit.why)]
        return self._shared(said)

    def _wait_due(self, now: float, wall: datetime | None) -> list[E] | None:
        """Time passed (`wall`: the wall clock then). A limit's wait under way: nothing yet, or (its reset passed) the same
        session told to continue. None: no wait is under way, or the step has ended."""
        if wall is not None:
            self.waits.wall = (now, wall)
        limits = self.waits.limits
        if not limits.waiting or self.done:
            return None
        if limits.until is not None and now < limits.until:
            return []
        waited, sent = limits.over(now), self.waits.resend
        return [*self._shared([Record(R.LimitWaited(waited_s=round(waited, 1), how="continued", sent=sent)),
                               Tell("note", f"usage limit: waited {waited:.0f}s; the session goes on: {sent[:80]!r}")]),
                *self._next_prompt(sent)]

    def _stuck_turn(self, quiet: float, why: str, said: str, rule_id: str) -> list[E]:
        """Mid-turn, no sign of life for stuck_after: the turn is interrupted, once in a step (the agent is told to
        continue when it has ended: `_nudged`); stuck again, a human, who can't unstick the agent's turn: exit 3."""
        w = self.waits
        if w.nudged < STUCK_NUDGES and not w.nudging:
            w.nudged, w.nudging = w.nudged + 1, True
            return [*self._shared([Record(R.Stuck(rule_id=rule_id, still_s=round(quiet, 1), action="interrupt")),
                                   Tell("note", f"{why}: interrupting the turn, then telling the agent to continue")]), *self._interrupt()]
        said = said.strip()
        effects, halt = split(escalate(self.counts, rule_id=rule_id, prompt=said[-500:], why=why,
                                       headline=gist(said) if said else "(nothing said)", can_ask=False))
        return [*self._shared([Record(R.Stuck(rule_id=rule_id, still_s=round(quiet, 1), action="escalate")), *effects]), *self._halt(halt)]

    def _nudged(self) -> list[E] | None:
        """The interrupted turn has ended: the agent is told to continue. None: no turn was being interrupted."""
        if not self.waits.nudging:
            return None
        self.waits.nudging = False
        return [*self._shared([Record(R.Stuck(action="continue", keys=[CONTINUE]))]), *self._next_prompt(CONTINUE)]
