"""What the two agent pilots share (acp/pilot.py over the Agent Client Protocol, headless/pilot.py over a print mode's
event stream), PURE: a human asked when nothing else answers, a judged turn end carried out (the next prompt, the end of
the step, a human), and a step ended by a Halt. One copy, so that the two channels can't drift apart on them.

Each pilot says its own way how a human is asked, how the next turn starts and how the step ends (the hooks below);
the screen's pilot (pty/pilot.py) has its own, since a screen has no turns to send.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from cursorpilot.records import models as R
from cursorpilot.channels.agent.waits import Waits
from cursorpilot.decide.deliver import Halt, Record, RunCounts, Shared, Tally, escalate, split
from cursorpilot.decide.limits import Limits, within
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import Next, Turns, gist
from cursorpilot.errors import ExitCode

E = TypeVar("E")  # the pilot's own Effect union (it holds the shared Record, Tell and Delivered)


class Open(Protocol):
    """A request of the agent (or a turn end) being decided, as each pilot keeps it."""

    kind: str  # a turn end is "turn_end"
    human: str | None  # why a human was asked (then their answer is the last word)
    data: dict

    @property
    def question(self) -> Question | None: ...


def ledgers(counts: RunCounts, config: Any) -> tuple[Tally, Turns, Waits]:
    """A step's ledgers, from its channel's config (max_answers, turns, limits, deadline, deadline_reason): its answers,
    its turns, a limit's or a stuck turn's wait."""
    return (Tally(counts, config.max_answers), Turns(config.turns),
            Waits(Limits(within(config.limits, config.deadline, config.deadline_reason))))


class AgentPilot(Generic[E]):
    __slots__ = ()
    if TYPE_CHECKING:  # (the pilot's own dataclass fields)
        done: bool
        counts: RunCounts
        tally: Tally
        turns: Turns
        waits: Waits
        _open: dict[int, Any]

    @property
    def answers(self) -> int:
        return self.tally.answers

    @property
    def preview(self) -> dict | None:
        return self.tally.preview

    # -- the pilot's own ------------------------------------------------------------------------------------------------
    def _shared(self, effects: list[Shared]) -> list[E]:
        raise NotImplementedError

    def _ask_human(self, token: int, q: Question, why: str) -> E:
        raise NotImplementedError

    def _next_prompt(self, message: str) -> list[E]:
        """A judged turn end sends the agent this: the next turn starts."""
        raise NotImplementedError

    def _deliver(self, token: int, o: Any, d: Decision, sent: str) -> list[E]:
        raise NotImplementedError

    def _end(self, code: ExitCode, reason: str) -> list[E]:
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------------------------------------
    def _halt(self, halt: Halt | None) -> list[E]:
        assert halt is not None  # (escalate() with can_ask=False, and unanswered(), always end in one)
        return self._end(halt.code, halt.reason)

    def _need_human(self, token: int, o: Open, why: str) -> list[E]:
        """No usable answer: a human is asked, once; when even theirs does not do, the step ends."""
        return self._escalate(token, why, can_ask=o.human is None)

    def _escalate(self, token: int, why: str, can_ask: bool = True) -> list[E]:
        o = self._open[token]
        q = o.question
        assert q is not None
        effects, halt = split(escalate(self.counts, rule_id=q.source, prompt=q.text, why=why, headline=headline(q), can_ask=can_ask))
        if halt is not None:
            return [*self._shared(effects), *self._halt(halt)]
        o.human = why
        return [*self._shared(effects), self._ask_human(token, q, why)]

    def _judge_decided(self, token: int, o: Open, d: Decision) -> list[E]:
        if o.human is None:
            return self._turn_next(token, o, self.turns.judged(d))
        if d.verdict != Verdict.ANSWER or not d.text:  # the human asked gave nothing to send
            return self._need_human(token, o, d.why or "no answer")
        return self._turn_next(token, o, Next("send", "a human said what to tell the agent", "continue", message=d.text,
                                              source=d.source), recorded=True)

    def _turn_next(self, token: int, o: Open, n: Next, recorded: bool = False) -> list[E]:
        """A turn end's outcome, carried out: the next prompt, the end of the step, or a human."""
        held: dict = {}
        if n.action == "send":
            effects = self._deliver(token, o, Decision(Verdict.ANSWER, text=n.message, source=n.source), n.message)
            if self.done:  # the answer cap stopped it before it went out (a resume sends it), or a dry run previewed it
                held = {"sent": None}
                if not self.counts.dry_run:
                    self.turns.held(n.message)
                    held["pending"] = n.message
            else:
                self._open.pop(token, None)
                self.turns.sent(n.message)
                effects += self._next_prompt(n.message)
        elif n.action == "finish":
            effects = self._end(ExitCode.OK, f"completed ({n.why})")
        elif n.action == "human":
            effects = self._escalate(token, n.why)
        else:
            effects = self._end(n.code, n.why)
        recorded_as: list[Shared] = [] if recorded else [Record(R.TurnEnd(**{**o.data["stop"], **self.turns.record(n), **held}))]
        return [*self._shared(recorded_as), *effects]


def headline(q: Question) -> str:
    """A question in one line, for the person watching and the dry-run table."""
    if q.kind == Kind.TURN_END:
        return gist(q.text)  # what the agent ended on
    return q.text.splitlines()[0][:120] if q.text else ""
