"""What one run shares across its steps: the transcript, redaction, counters, limits, interrupts.

The runner creates it; each step's loop and the decision path read and update it. It sits below the decision path
(decide/ imports it), so it imports nothing of decide/, of the channels or of the goal check, not even for the type
checker: what a step gets that is named above it (the people it may ask, the pinned deny policy) is in its Job.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Literal

from cursorpilot.clock import Clock
from cursorpilot.providers.base import Provider, Reply
from cursorpilot.records.redact import Redactor
from cursorpilot.records.transcript import Transcript

# The run's usage counters, by name: the run's summary and its manifest's `counters` show them under these names, and
# a resumed run reads them back. A name misspelt where it is counted is a type error, not a new counter.
UsageKey = Literal["llm_calls", "questions_to_llm", "rule_hits", "tokens_in", "tokens_out", "tokens_cached", "prompt_tokens_est", "waits",
                   "turns", "policy_changed", "policy_granted", "limit_waits", "limit_wait_s",
                   "cascade_questions", "cascade_local"]  # (the last two only once a cascade answered: decide/cascade.py)


@dataclass
class RunContext:
    """What one run shares across its steps (its transcript, redaction, counters, limits, interrupts): the run as each
    step's loop and the decision path see it. The runner makes one per run."""

    tx: Transcript
    redactor: Redactor
    clock: Clock
    log_dir: Path
    run_id: str
    provider: Provider
    interactive: bool = False  # a human can be asked (stdin is a terminal)
    cols: int = 120
    rows: int = 40
    context_tokens: int = 3000
    no_upload: bool = False
    keep_ci_env: bool = False  # pass CI=true and the like to the programs (channels/program_env.py)
    native_deny: bool = True  # the deny policy also goes into the agent's own deny list, where it has one (channels/agent/nativedeny.py)
    allow: frozenset[str] = frozenset()
    max_answers: int | None = None  # --max-steps: answers across the run
    model_calls: tuple[int | None, int | None] = (1000, 20)  # --max-model-calls: in the run, for one question
    deadline: float | None = None  # --timeout, as a monotonic time
    dry_run: bool = False
    secrets: dict[str, str] = field(default_factory=dict)  # --secret NAME=ENVVAR: the values typed for <secret:NAME>, never shown
    answers: int = 0
    escalations: int = 0
    interrupts: int = 0
    usage: dict[UsageKey, int] = field(
        default_factory=lambda: {"llm_calls": 0, "questions_to_llm": 0, "rule_hits": 0, "tokens_in": 0, "tokens_out": 0, "tokens_cached": 0,
                                 "prompt_tokens_est": 0, "waits": 0, "turns": 0, "policy_changed": 0, "policy_granted": 0,
                                 "limit_waits": 0, "limit_wait_s": 0}
    )
    overrides: list[str] = field(default_factory=list)  # answers the deny policy changed in this session: "question: 'y' (by) -> 'n'"
    cost_usd: float | None = None
    goal: str | None = None  # the last goal check: passed | failed (None: none ran)
    on_turn: Callable[[int, dict], None] | None = None  # (step, turn_end's fields): the runner keeps the manifest's turn ledger
    on_note: Callable[[str], None] | None = None  # a line for the console (the runner's sink), e.g. why a cascade passed a question on
    _old_handlers: dict[int, object] = field(default_factory=dict)

    def count_usage(self, reply: Reply) -> None:
        u = reply.usage
        self.usage["llm_calls"] += u.calls
        self.usage["tokens_in"] += u.input_tokens
        self.usage["tokens_out"] += u.output_tokens
        self.usage["tokens_cached"] += u.cached_tokens
        if u.cost_usd is not None:
            self.cost_usd = round((self.cost_usd or 0.0) + u.cost_usd, 8)
        if reply.cascade:  # a cascade's answer (decide/cascade.py): counted, and who answered and why said where it shows
            self.usage["cascade_questions"] = self.usage.get("cascade_questions", 0) + 1
            if reply.cascade[0].kept:
                self.usage["cascade_local"] = self.usage.get("cascade_local", 0) + 1
            elif self.on_note is not None:
                passed = "; ".join(f"{t.source}'s {t.text!r} not taken: {t.why}" for t in reply.cascade if not t.kept)
                self.on_note(f"asked {reply.cascade[-1].source}: {passed}")

    def turn_ended(self, step: int, fields: dict) -> None:
        """A turn end was judged (either channel): counted, its check kept for the summary, the ledger told."""
        self.usage["turns"] += 1
        check = fields.get("check")
        if isinstance(check, dict):
            self.goal = "passed" if check.get("exit_code") == 0 else "failed"
        if self.on_turn is not None:
            self.on_turn(step, fields)

    def counters(self) -> dict[str, int]:
        out = {"answers": self.answers, "escalations": self.escalations}
        out.update(self.usage.items())
        return out

    def interrupt(self) -> None:
        self.interrupts += 1

    def install_signals(self) -> None:
        """Ctrl-C and SIGTERM are counted; the loops act on them (SIGINT the program, then SIGKILL)."""
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old_handlers[sig] = signal.signal(sig, lambda *_: self.interrupt())
        except ValueError:  # not the main thread (tests): callers interrupt directly
            pass

    def restore_signals(self) -> None:
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._old_handlers.clear()
