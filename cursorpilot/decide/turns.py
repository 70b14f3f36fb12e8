"""What an agent's turn end means, PURE and shared by both channels, so that "done" means the same thing whether the
agent came back to its composer on a screen or ended its turn over ACP.

An agent that stops is not done because it stopped. At each turn end the channel's loop runs the goal check and looks
at the working tree (channels/goalcheck.py, I/O) and hands the facts to its pilot; the pilot asks `Turns` what they lead to:
the check passed (done, whatever anyone thinks), a limit is reached, the agent is making no progress (a human), an
instruction held back by a limit before a resume (sent), or a question for the decision path, whose Decision comes
back through `judged()` as one of four verdicts: DONE (close), CONTINUE (the next message), BLOCKED (what only a human
can give), IMPOSSIBLE (stop and say why). A judge that errs or answers garbage fails closed: a human, never "done".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.errors import ExitCode
from cursorpilot.keys import needs_human

DEFAULT_MAX_TURNS = 10
SAME_FAILURES = 3  # the goal check failing the same way this many turn ends in a row: no progress
HAPPENED_KEPT = 12  # what cursor-pilot did in a turn, as told to the judge: at most this many lines
OUTPUT_LINES = 40  # the end of the check's output the judge sees


class TurnVerdict(StrEnum):
    DONE = "done"  # the goal is met: close cleanly
    CONTINUE = "continue"  # not yet: give the agent the next message
    BLOCKED = "blocked"  # the agent needs what only a human can give: escalate with what is missing
    IMPOSSIBLE = "impossible"  # the goal contradicts the governing prompt or the policy: stop and say why


# -- facts -------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Check:
    """The goal check's result at a turn end."""

    command: str
    exit_code: int | None  # None: it did not finish (timed out, could not start: `error` says which)
    output: str = ""  # the end of its output, redacted
    error: str = ""

    @property
    def met(self) -> bool:
        return self.exit_code == 0

    def summary(self) -> str:
        how = f"exited {self.exit_code}" if self.exit_code is not None else self.error or "did not finish"
        return f"`{self.command}` {how}: {'met' if self.met else 'not met'}"

    def signature(self) -> tuple[int | None, str]:
        """The same failure, however its timings and addresses vary: the exit code and the output without digits."""
        return self.exit_code, re.sub(r"\d+", "#", " ".join(self.output.split()))[-2000:]

    def record(self) -> dict:
        return {"command": self.command, "exit_code": self.exit_code, "output_tail": self.output[-2000:] or None,
                **({"error": self.error} if self.error else {})}


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What the channel's loop found at a turn end (channels/goalcheck.py)."""

    check: Check | None  # None: no goal check for this step
    tree: str | None = None  # the working tree's fingerprint; None: not a git working tree
    cost_usd: float | None = None  # the run's model cost so far, when prices are known


@dataclass(frozen=True, slots=True)
class CheckGoal:
    """Effect: the agent stopped. Run the goal check, look at the working tree, and hand the pilot the TurnFacts."""

    token: int


@dataclass(frozen=True, slots=True)
class TurnConfig:
    """How a step's turn ends are judged and bounded."""

    max_turns: int = DEFAULT_MAX_TURNS
    max_wall: float | None = None  # seconds: no new turn once the run has gone this long...
    wall_deadline: float | None = None  # ...that is, after this monotonic time
    max_cost: float | None = None  # USD: no new turn once the run's model cost reaches it
    first_turn: int = 0  # turns already used by earlier attempts of the step (--resume)
    pending: str | None = None  # an instruction a limit held back: sent at the first turn end (--resume)
    on_limit: str = "wait"  # --on-limit: at an agent's usage limit, wait | stop | switch-model (decide/limits.py)
    stuck_after: float | None = None  # --stuck-after: an agent at work with no progress sign this long is stuck


# -- what a turn end leads to ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Next:
    """finish (done) | send (`message` to the agent) | human (escalate: `why` is what is missing) | stop (with `code`) |
    ask (the decision path: `Turns.question()`)."""

    action: str
    why: str = ""
    verdict: str | None = None  # as recorded: done | continue | blocked | impossible; None: a limit, or not judged yet
    message: str = ""
    code: ExitCode = ExitCode.OK
    source: str = ""  # who decided: check, limit, breaker, ledger, rules:<id>, <provider>:<model>, human


ASK = Next("ask")
_VERDICT = re.compile(r"(?is)^[\W_]*(done|continue|blocked|impossible)[\s*_]*(?::\s*(.*)|[.!]?[\s*_]*$)")


def gist(message: str) -> str:
    """An agent's message in one line, for the person watching and the report: its last line with words (what it
    ended on: "Request cancelled.", its question), not the banner at the top of the screen."""
    lines = [" ".join(line.strip(" \t│┃║|╭╮╰╯┌┐└┘─━═▄▀⎿●✦•■").split()) for line in message.splitlines()]
    worded = [t for t in lines if sum(ch.isalpha() for ch in t) >= 3]
    return (worded[-1] if worded else " ".join(message.split()))[:120]


def parse(text: str, source: str, bare_is_continue: bool) -> Decision:
    """A turn-end verdict in the one-line grammar: DONE[: why], CONTINUE: message, BLOCKED: what is missing,
    IMPOSSIBLE: why, or "? question" (a human). A rule's bare reply is the message to send (CONTINUE); a model's is
    not a verdict: it fails closed."""
    t = text.strip()
    m = _VERDICT.match(t)
    if m:
        verdict, rest = TurnVerdict(m.group(1).lower()), (m.group(2) or "").strip()
        if verdict == TurnVerdict.CONTINUE:
            return Decision(Verdict.ANSWER, text=rest, turn=verdict, source=source, why="the goal is not met yet")
        return Decision(Verdict.ANSWER, turn=verdict, source=source, why=rest or f"judged {verdict}")
    if needs_human(t):
        return Decision(Verdict.ANSWER, turn=TurnVerdict.BLOCKED, source=source, why=t[2:].strip() or "a human is needed")
    if bare_is_continue and t:
        return Decision(Verdict.ANSWER, text=text, turn=TurnVerdict.CONTINUE, source=source, why="a rule says what to tell the agent")
    return Decision.escalate(f"the turn-end judge's reply is not a verdict: {t[:200]!r}", source)


def structured(verdict: str | None, message: str | None, why: str, source: str) -> Decision:
    """A verdict from the structured reply (the JSON schema, the forced tool); anything else fails closed."""
    if verdict not in set(TurnVerdict):
        return Decision.escalate(f"the turn-end judge's reply is not a verdict ({verdict!r})", source)
    text = message if verdict == TurnVerdict.CONTINUE else None
    return Decision(Verdict.ANSWER, text=text, turn=verdict, source=source, why=why or f"judged {verdict}")


@dataclass(slots=True)
class Turns:
    """One step's turn ends: counted, bounded, and judged the same way on both channels."""

    config: TurnConfig = field(default_factory=TurnConfig)
    turn: int = 0  # turn ends seen in this step (earlier attempts included)
    pending: str | None = None
    last_sent: str | None = None  # the last instruction the agent was given (its echo on a screen starts its answer)
    happened: list[str] = field(default_factory=list)  # this turn: what cursor-pilot answered or refused
    check: Check | None = None  # the last turn end's
    message: str | None = None  # the last turn end's message: where an agent that does not echo its instructions said more
    closing: bool = False  # the last turn end's message asks something
    _tree: str | None = None
    _said: str | None = None
    _failures: tuple[tuple[int | None, str] | None, int] = (None, 0)

    def __post_init__(self) -> None:
        self.turn = self.config.first_turn
        self.pending = self.config.pending

    @property
    def goal(self) -> str | None:
        """passed | failed | None (no check ran): for the summary."""
        return None if self.check is None else "passed" if self.check.met else "failed"

    # -- during a turn ------------------------------------------------------------------------------------------------
    def answered(self, prompt: str, reply: str, source: str, denied: str | None) -> None:
        """An answer went to the agent during this turn: the judge is told (a denial explains why an agent stopped)."""
        shown = " ".join(prompt.split())[:160]
        if denied:
            line = f"the deny policy refused {shown!r} (rule {denied}; the agent got {reply!r})"
        else:
            line = f"answered {shown!r} with {reply!r} ({source})"
        self.happened = [*self.happened, line][-HAPPENED_KEPT:]

    # -- at a turn end ------------------------------------------------------------------------------------------------
    def ended(self, now: float, facts: TurnFacts, message: str, closing: bool) -> Next:
        """The facts decide first: a met check, a limit, no progress, an instruction held back; else `ASK`."""
        self.turn += 1
        self.check, self.closing, self.message = facts.check, closing, message
        check = facts.check
        if check is not None and check.met:
            return Next("finish", f"the goal check {check.summary()}", TurnVerdict.DONE, source="check")
        over = self._over_budget(now, facts)
        if over:
            return Next("stop", over, code=ExitCode.LIMIT, source="limit")
        stuck = self._no_progress(facts, message)
        if stuck and self.turn >= self.config.max_turns:  # the last turn: the limit wins (exit 4), and says both
            return self._limit(also=stuck)
        if stuck:
            return Next("human", stuck, TurnVerdict.BLOCKED, source="breaker")
        if self.pending is not None:
            message, self.pending = self.pending, None
            return self._continue(message, "resumed: the instruction decided before a limit stopped the run", "ledger")
        if check is not None and self.turn >= self.config.max_turns:  # the check says not done, and no turn is left
            return self._limit()
        return ASK

    def question(self, *, text: str, source: str, closing: Question | None = None, live: tuple[str, ...] = (),
                 earlier: tuple[str, ...] = (), multiline: bool = False, notes: tuple[str, ...] = ()) -> Question:
        """The one question of this turn end, for the decision path: the agent's last message, what happened, the check."""
        told = [f"This is the end of turn {self.turn}; at most {self.config.max_turns} turns are allowed.", *notes]
        told.append("In this turn cursor-pilot " + "; ".join(self.happened) + "." if self.happened
                    else "In this turn nothing was asked of cursor-pilot.")
        if closing is not None:
            told.append("The agent's last message asks something: if the governing prompt lets you, answer it "
                         "(continue, with the answer as the message); if only a human can, blocked.")
        if self.check is None:
            told.append("No goal check was given: judge from the governing prompt, the agent's messages and the working tree.")
        check = self.check
        return Question(
            kind=Kind.TURN_END.value, text=text.strip() or "(the agent said nothing)", key=f"turn_end:{self.turn}", source=source,
            closing=closing, multiline=multiline, live=live, earlier=earlier, notes=tuple(told),
            check=check.summary() if check else "", check_output=tuple(check.output.splitlines()[-OUTPUT_LINES:]) if check else (),
        )

    def judged(self, d: Decision) -> Next:
        """The decision path's answer to the turn-end question, as what to do. Errors and garbage fail closed."""
        check = self.check
        if d.verdict == Verdict.FAIL:
            return Next("stop", d.why, code=ExitCode.LIMIT if d.limit else ExitCode.FAILED, source=d.source)
        if d.verdict == Verdict.PASS:  # rules only, and no rule for this turn end: the facts decide
            if self.closing:
                return Next("human", f"the agent asks something no rule answers ({d.why})", TurnVerdict.BLOCKED, source=d.source)
            if check is None:
                return Next("finish", "the agent stopped, and there is no goal check and no model to judge: done", TurnVerdict.DONE,
                            source=d.source)
            return Next("human", f"the goal check {check.summary()}, and no rule of kind turn_end says what to tell the agent",
                        TurnVerdict.BLOCKED, source=d.source)
        if d.verdict != Verdict.ANSWER or d.turn is None:
            return Next("human", f"no usable turn-end verdict: {d.why or 'no answer'}", TurnVerdict.BLOCKED, source=d.source)
        if d.turn == TurnVerdict.DONE:
            if check is not None and not check.met:
                return Next("human", f"the judge said done ({d.why}), but the goal check {check.summary()}", TurnVerdict.BLOCKED,
                            source=d.source)
            return Next("finish", d.why, TurnVerdict.DONE, source=d.source)
        if d.turn == TurnVerdict.CONTINUE:
            if not (d.text or "").strip():
                return Next("human", "the judge said continue but gave no message for the agent", TurnVerdict.BLOCKED, source=d.source)
            return self._continue(d.text or "", d.why, d.source)
        if d.turn == TurnVerdict.BLOCKED:
            return Next("human", d.why, TurnVerdict.BLOCKED, source=d.source)
        return Next("stop", f"the goal can't be met: {d.why}", TurnVerdict.IMPOSSIBLE, code=ExitCode.FAILED, source=d.source)

    def sent(self, message: str) -> None:
        """The next instruction went out: a new turn begins."""
        self.happened, self.last_sent = [], message

    def held(self, message: str) -> None:
        """An instruction decided but not sent (the answer cap, a limit): the first thing a resumed step sends."""
        self.pending = message

    def record(self, n: Next) -> dict:
        """The turn_end record's judgement (the same fields on both channels; the manifest's ledger keeps them)."""
        return {"turn": self.turn, "verdict": n.verdict, "why": n.why, "check": self.check.record() if self.check else None,
                "sent": n.message if n.action == "send" else None, "source": n.source or None,
                **({"pending": self.pending} if self.pending is not None else {})}

    # -- the bounds ---------------------------------------------------------------------------------------------------
    def _continue(self, message: str, why: str, source: str) -> Next:
        if self.turn >= self.config.max_turns:
            return self._limit(message)
        return Next("send", why, TurnVerdict.CONTINUE, message=message, source=source)

    def _limit(self, message: str | None = None, also: str = "") -> Next:
        """No turn is left. When the breaker found no progress at the same last turn end, the limit wins (exit 4, as
        --max-turns says) and the reason says both: a higher limit alone would not help."""
        if message is not None:
            self.pending = message
        still = f"; the goal check {self.check.summary()}" if self.check is not None and not also else ""
        also = f"; and {also}" if also else ""
        return Next("stop", f"max-turns reached ({self.config.max_turns} turns){still}{also}", code=ExitCode.LIMIT, source="limit")

    def _over_budget(self, now: float, facts: TurnFacts) -> str | None:
        c = self.config
        if c.wall_deadline is not None and now >= c.wall_deadline:
            return f"max-wall reached ({c.max_wall:g}s; no new turn is started)"
        if c.max_cost is not None and facts.cost_usd is not None and facts.cost_usd >= c.max_cost:
            return f"max-cost reached (${facts.cost_usd:.4f} of ${c.max_cost:g})"
        return None

    def _no_progress(self, facts: TurnFacts, message: str) -> str | None:
        """A turn that changed nothing in the working tree and ended with the same words, or a check failing the same
        way SAME_FAILURES times in a row: sending more would loop."""
        said = " ".join(message.split())
        same = facts.tree is not None and facts.tree == self._tree and said == self._said
        self._tree, self._said = facts.tree, said
        if facts.check is not None:
            sig = facts.check.signature()
            last, n = self._failures
            self._failures = (sig, n + 1 if sig == last else 1)
            if self._failures[1] >= SAME_FAILURES:
                return f"no progress: the goal check failed the same way {SAME_FAILURES} times in a row ({facts.check.summary()})"
        if same:
            return "no progress: nothing changed in the working tree since the last turn end, and the agent said the same thing"
        return None
