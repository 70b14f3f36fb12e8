"""The one place that mixes I/O and decisions: read -> screen -> classify -> machine -> act -> record.

One Orchestrator drives one interactive step: a program under a PTY. The loop owns the
PTY read with a short tick. Everything the program writes is recorded before anything
else happens; decisions are taken only from a rendered, settled screen; keys go out one
write at a time on a schedule, without blocking the reads. Run-wide things (transcript,
counters, limits, interrupts) live in the RunSession the runner hands in.
"""

from __future__ import annotations

import os
import re
import signal
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import structlog

from cursorpilot.asking import PromptFiler
from cursorpilot.detect.classifier import SETTLING, Classification, Timing, classify, headline
from cursorpilot.detect.menu import keys_for, typed_as_is
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.profiles import Kind, Profile
from cursorpilot.errors import ExitCode
from cursorpilot.events import Sink, Status
from cursorpilot.guards import Guards
from cursorpilot.keys import ReplyError, Write, needs_human, to_writes
from cursorpilot.machine import TERMINAL, Action, Event, State, transition
from cursorpilot.policy import check as check_policy
from cursorpilot.providers.base import QA, AnswerRequest, Provider, Reply
from cursorpilot.pty import reaper
from cursorpilot.pty.driver import ExitStatus, PtyDriver
from cursorpilot.pty.screen import Snapshot, TerminalScreen
from cursorpilot.recording import SessionRecorder
from cursorpilot.session import RunSession

MAX_TICK = 0.05  # the longest the loop sleeps in select()
HIGHLIGHT_WAIT = 1.5  # how long the highlight may take to reach the chosen option before Enter
ASK_POLL = 0.005  # how often a pending provider answer is looked at (the reply is typed this much late at most)
RENDER_EVERY = 0.1  # re-render a screen that keeps changing at most this often
FLOOD_BYTES = 1 << 20  # more output than this since the last render is a flood:
FLOOD_RENDER_EVERY = 0.5  # render it less often (each render then costs a pass over the flood)
RETRY_GAPS = (0.8, 1.6, 3.2)  # wait after an answer; Enter is re-sent after the first two
STOP_GRACE = 3.0  # SIGINT, then SIGKILL after this long


@dataclass(slots=True)
class StepConfig:
    command: list[str]
    profile: Profile
    governing_prompt: str
    name: str = "command"
    index: int = 1
    total: int = 1
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    send: str | None = None  # typed once the program is ready for input
    expect_regex: str | None = None  # on screen -> the step is done
    max_answers: int | None = None  # this step's own cap
    deadline: float | None = None  # monotonic; the earlier of the run's and the step's
    deadline_reason: str = "timeout"
    rules: Provider | None = None  # consulted before the run's provider when that is an LLM


@dataclass(slots=True)
class StepResult:
    exit_code: int
    reason: str
    status: ExitStatus | None
    answers: int = 0
    screen_text: str = ""  # scrollback + final screen, for expect checks
    preview: dict | None = None  # dry run: what would have been typed


@dataclass(slots=True)
class _Watch:
    """After an answer: expect the screen to change, or re-send Enter, or escalate."""

    key: str
    anchor_row: int
    block: str  # normalised prompt text
    submit: bool
    due: float
    retries: int = 0

    def same_prompt(self, c: Classification) -> bool:
        """The same prompt, possibly with our typed text echoed after it (Enter swallowed)."""
        if c.key == self.key:
            return True
        return c.anchor_row == self.anchor_row and " ".join(c.block.split()).startswith(self.block)


class Orchestrator:
    def __init__(self, step: StepConfig, run: RunSession, sink: Sink):
        self.step = step
        self.run_ = run
        self.tx = run.tx
        self.clock = run.clock
        self.sink = sink
        self.state = State.INIT
        self.answers = 0
        self.answered: dict[str, int] = {}
        self.history: deque[QA] = deque(maxlen=10)
        self.guards = Guards()
        self.worked = False  # a working marker was seen, or we answered something
        self.sent = step.send is None
        self.preview: dict | None = None
        self._seen_interrupts = run.interrupts
        self._exit_code: ExitCode = ExitCode.OK
        self._reason = ""
        self._last: tuple[str, str | None] | None = None  # last recorded (state, rule)
        self._pending: deque[Write] = deque()
        self._next_write = 0.0
        self._watch: _Watch | None = None
        self._asking: tuple[Future[Reply], Classification, tuple[str, ...]] | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="answerer")
        self._stop_at: float | None = None  # when closing: SIGKILL deadline
        self._check_until: float | None = None  # a menu's highlight is awaited until then
        self._log = structlog.get_logger("cursorpilot")
        self.driver: PtyDriver | None = None
        self.screen = TerminalScreen(run.cols, run.rows)
        self.filer = PromptFiler(run, step.index, f"{step.index}/{step.total}: {step.name}", step.cwd, step.governing_prompt)
        # read-loop timing: when output last came, when the rendered content last changed
        self._last_output = self._last_change = 0.0
        self._dirty = False
        self._unrendered = 0  # bytes read since the last render
        self._content: tuple[str, ...] = ()
        self._last_render = self._last_mirror = 0.0
        self._recheck_at: float | None = None
        self.t0 = self.clock.monotonic()
        self._mark = f"{run.run_id}-{step.index}"  # in the environment of everything the program starts

    @property
    def _profile(self) -> Profile:
        return self.step.profile

    # -- public ----------------------------------------------------------------
    def run(self) -> StepResult:
        run = self.run_
        self.recorder = SessionRecorder(run.log_dir, self.clock, run.cols, run.rows, self.step.command, step=self.step.index)
        try:
            env = reaper.marked_env({**os.environ, **self.step.env}, self._mark)
            self.driver = PtyDriver(self.step.command, cwd=self.step.cwd, env=env, cols=run.cols, rows=run.rows)
            self.tx.emit("program_started", step=self.step.index, pid=self.driver.pid, command=self.step.command,
                         profile=self._profile.name, profile_hash=self._profile.digest())
            self._apply(Event.STARTED, None)
            status = self._loop()
            text = "\n".join([*self.screen.scrollback(), *self.screen.snapshot().lines]).rstrip()
            return StepResult(int(self._exit_code), self._reason, status, self.answers, text, self.preview)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self.recorder.close()
            if self.driver is not None:
                self.driver.close()
                self._end_leftovers()

    def _end_leftovers(self) -> None:
        """Whatever the program started and left running (detached daemons included) is ended, and said so."""
        ended = reaper.end_all(self._mark, grace=STOP_GRACE)
        if ended:
            self.tx.emit("descendants_ended", step=self.step.index, processes=[e.record() for e in ended])
            self.sink.note(f"ended {len(ended)} process(es) the program left running: "
                           + ", ".join(f"{e.pid} {e.command[:60]}" for e in ended))

    # -- the loop ----------------------------------------------------------------
    def _loop(self) -> ExitStatus:
        assert self.driver is not None
        self._last_output = self._last_change = self.clock.monotonic()
        while True:
            now = self.clock.monotonic()
            self._check_limits(now)
            chunk = self.driver.read(self._tick(now))
            if chunk is None:
                break
            if chunk:
                self._on_output(chunk)
            else:
                self.recorder.idle()  # output paused: the cast catches up
            if not chunk and not self.driver.alive():
                rest = self.driver.drain()
                if rest:
                    self._on_output(rest)
                break
            now = self.clock.monotonic()
            self._send_due(now)
            if self.state in TERMINAL:
                self._closing(now)
                continue
            self._render_if_due(now)
            self._decide(now)
            self._send_due(now)  # a reply chosen just now (a rule hit) goes out without another turn of the loop
        status = self.driver.status() if not self.driver.alive() else self.driver.terminate(STOP_GRACE)
        self._on_exit(status)
        return status

    def _tick(self, now: float) -> float:
        deadlines = [now + MAX_TICK]
        if self._pending:
            deadlines.append(self._next_write)
        if self._recheck_at is not None and self.state == State.RUNNING:  # only RUNNING classifies
            deadlines.append(self._recheck_at)
        if self._dirty:
            deadlines.append(max(self._last_render + RENDER_EVERY, self._last_output + self._settle))
        if self._watch:
            deadlines.append(self._watch.due)
        if self._asking is not None:
            deadlines.append(now + ASK_POLL)
        if self.recorder.due is not None:
            deadlines.append(self.recorder.due)
        return max(0.0, min(deadlines) - now)

    @property
    def _settle(self) -> float:
        return self._profile.settle_ms / 1000

    def _on_output(self, chunk: bytes) -> None:
        self.recorder.output(chunk)
        self.screen.feed(chunk)
        replies = self.screen.take_replies()
        if replies:
            assert self.driver is not None
            self.driver.write(replies)
            self.tx.emit("terminal_reply", data=replies.decode(), hex=replies.hex())
        self._last_output = self.clock.monotonic()
        self._dirty = True
        self._unrendered += len(chunk)

    def _render_if_due(self, now: float) -> None:
        """Render when output paused or every RENDER_EVERY; a repaint with equal content is no change."""
        every = FLOOD_RENDER_EVERY if self._unrendered > FLOOD_BYTES else RENDER_EVERY
        if not self._dirty or (now - self._last_render < every and now - self._last_output < self._settle):
            return
        self._last_render = now
        self._unrendered = 0
        self._dirty = False
        snap = self.screen.snapshot()
        content = (*snap.lines, f"{snap.cursor_x},{snap.cursor_y},{snap.scrolled}")
        if content != self._content:
            self._content = content
            self._last_change = self._last_output
            self._recheck_at = now
        if self.sink.wants_screen and now - self._last_mirror >= RENDER_EVERY:
            self._last_mirror = now
            self.sink.screen(snap, Status(self.state.value, self.run_.answers, now - self.t0, f"step {self.step.index}/{self.step.total}"))

    # -- decisions -----------------------------------------------------------------
    def _decide(self, now: float) -> None:
        if self._asking is None:
            self._classify(now)
        if self._asking is not None and self._asking[0].done():
            self._on_reply(now)

    def _classify(self, now: float) -> None:
        if self.state != State.RUNNING:
            return
        if self._recheck_at is None or now < self._recheck_at:
            if not (self._watch and now >= self._watch.due):
                return
        snap = self.screen.snapshot()
        c = classify(self._profile, snap, Timing(quiet_for=now - self._last_change))
        self._recheck_at = now + c.recheck_after if c.recheck_after is not None else None
        self._record_state(c)
        if self._watch is not None and self._follow_watch(now, c):
            return
        if self.step.expect_regex and c.state != SETTLING and re.search(self.step.expect_regex, snap.text(), re.M):
            self._reason = f"completed (expect {self.step.expect_regex!r} seen)"
            self._apply(Event.FINISHED, c)
        elif c.state == Kind.WORKING:
            rule = next((r for r in self._profile.rules if r.id == c.rule_id), None)
            self.worked = self.worked or rule is None or rule.progress
            stuck_after = self._profile.stuck_after_s
            if now - self._last_change >= stuck_after:
                self._escalate(c, f"stuck: working marker with no screen change for {stuck_after:g}s")
            else:
                self._recheck_at = self._last_change + stuck_after
        elif c.state == Kind.ERROR:
            self._fail(f"{c.error}: {c.evidence}", c)
        elif c.state == Kind.COMPLETED or (c.state == Kind.IDLE and self.worked and self.sent and self._profile.finish.mode == "idle"):
            self._reason = f"completed ({c.rule_id})"
            self._apply(Event.FINISHED, c)
        elif c.state == Kind.IDLE and c.key not in self.answered:
            self._prompted(replace(c, state=Kind.INPUT.value), snap, now)
        elif c.answerable and c.key not in self.answered:
            self._prompted(c, snap, now)

    def _prompted(self, c: Classification, snap: Snapshot, now: float) -> None:
        if not self.sent and c.state == Kind.INPUT:
            self.sent = True
            self._apply(Event.PROMPT, c)
            self._type_answer(c, self.step.send or "", "plan:send", now)
        elif not self._denied(c, now):
            self._ask(c, snap)

    def _denied(self, c: Classification, now: float) -> bool:
        """The deny policy, on the whole prompt block, before any provider is asked."""
        denial = check_policy(c.block, self.step.cwd, self.run_.allow)
        if denial is None:
            return False
        rule = next((r for r in self._profile.rules if r.id == c.rule_id), None)
        reply = rule.deny_reply if rule else None
        self.tx.emit("policy_denied", policy_rule=denial.rule, evidence=denial.evidence, rule_id=c.rule_id, reply=reply)
        self._apply(Event.PROMPT, c)
        if reply is None:
            self._escalate(c, f"denied by policy rule {denial.rule!r} and the prompt has no 'no' choice")
        else:
            self._type_answer(c, reply, f"policy:{denial.rule}", now)
        return True

    def _follow_watch(self, now: float, c: Classification) -> bool:
        """True while the answered prompt is still on screen and we are still waiting on it."""
        w = self._watch
        assert w is not None
        if c.state == SETTLING:
            return True
        if not w.same_prompt(c):
            self._watch = None  # the prompt was consumed
            return False
        if now < w.due:
            return True
        if w.submit and w.retries < len(RETRY_GAPS) - 1:
            w.retries += 1
            self.tx.emit("enter_retry", prompt_key=w.key, attempt=w.retries)
            self._apply(Event.REPLY, c)
            self._schedule([Write(b"\r", 0.0, "<enter>")], now)
            return True
        self._watch = None
        self._escalate(c, "the program did not react to the answer")
        return True

    def _ask(self, c: Classification, snap: Snapshot) -> None:
        self._apply(Event.PROMPT, c)
        request = AnswerRequest(
            governing_prompt=self.step.governing_prompt, kind=c.state, rule_id=c.rule_id or "",
            prompt_block=c.block, screen=snap.text(), history=tuple(self.history), multiline=c.multiline,
        )
        if self.step.rules is not None:
            hit = self.step.rules.answer(request)
            self.tx.emit("rules_checked", hit=hit.text is not None, source=hit.source, prompt=c.block)
            if hit.text is not None:
                self.run_.usage["rule_hits"] += 1
                self._asking = (_done(hit), c, self._content)
                return
        provider = self.run_.provider
        if provider.needs_prompt:
            request = self.filer.fill(request, c, snap, self.screen, tuple(self.history))
        self.tx.emit("provider_request", provider=provider.name, kind=c.state, rule_id=c.rule_id, prompt=c.block,
                     prompt_tokens_est=self.filer.last_tokens if provider.needs_prompt else None)
        self._asking = (self._pool.submit(provider.answer, request), c, self._content)

    def _on_reply(self, now: float) -> None:
        assert self._asking is not None
        future, c, content = self._asking
        self._asking = None
        try:
            reply = future.result()
        except Exception as exc:  # noqa: BLE001 - a provider crash is an escalation, not a pilot crash
            reply = Reply(text=None, source=self.run_.provider.name, reason=f"provider error: {exc}")
        for attempt in reply.attempts:
            self.tx.emit("provider_retry" if attempt.wait_s is not None else "provider_error", error=attempt.error, wait_s=attempt.wait_s)
        self.run_.count_usage(reply)
        self.tx.emit(
            "provider_reply", source=reply.source, text=reply.text, raw=reply.raw, removed=list(reply.removed), reason=reply.reason,
            usage={"in": reply.usage.input_tokens, "out": reply.usage.output_tokens, "latency_s": reply.usage.latency_s,
                   "calls": reply.usage.calls, "cost_usd": reply.usage.cost_usd},
        )
        self.filer.file_answer(reply)
        if self.guards.provider_result(not reply.reason.startswith("provider error")):
            self._fail(f"{self.guards.provider_errors} consecutive provider errors: {reply.reason}", c)
        elif reply.text is None or needs_human(reply.text):
            self._escalate(c, reply.reason or (reply.text or "")[2:] or "no answer")
        elif (denial := check_policy(reply.text, self.step.cwd, self.run_.allow)) is not None:
            self.tx.emit("policy_denied", policy_rule=denial.rule, evidence=denial.evidence, rule_id=c.rule_id, reply=None, on="reply")
            self._escalate(c, f"the reply was denied by policy rule {denial.rule!r}")
        elif content != self._content and not self._still_there(c):
            self.tx.emit("reply_discarded", reason="the prompt changed while the answer was chosen", prompt_key=c.key)
            self._apply(Event.NO_REPLY, c)
            self._recheck_at = now
        else:
            self._type_answer(c, reply.text, reply.source, now)

    def _still_there(self, c: Classification) -> bool:
        current = classify(self._profile, self.screen.snapshot(), Timing(quiet_for=float("inf")))
        return current.key == c.key or (c.state == Kind.INPUT and current.state == Kind.IDLE and current.anchor_row == c.anchor_row)

    def _type_answer(self, c: Classification, text: str, source: str, now: float) -> None:
        run = self.run_
        if run.max_answers is not None and run.answers >= run.max_answers:
            self._abort(ExitCode.LIMIT, f"max-steps reached ({run.max_answers} answers)")
            return
        if self.step.max_answers is not None and self.answers >= self.step.max_answers:
            self._abort(ExitCode.LIMIT, f"step max_steps reached ({self.step.max_answers} answers)")
            return
        if self.guards.looping(c.block, text):
            self._escalate(c, f"loop: this question was already answered {text!r} {self.guards.repeat_limit} times")
            return
        p = self._profile
        typed = text
        mapped = keys_for(c.menu, text) if c.menu is not None else None
        if mapped is not None:  # an option named by label or number: arrows from the highlighted row, then Enter
            typed, chosen = mapped
            self.tx.emit("menu_choice", rule_id=c.rule_id, reply=text, options=[o.label for o in chosen], keys=typed,
                         highlighted=c.menu.current.label, multi=c.menu.multi)
        elif c.menu is not None and not typed_as_is(text):
            self._escalate(c, f"the reply {text!r} names none of the options ({', '.join(o.label for o in c.menu.options)})")
            return
        try:
            writes = to_writes(typed, submit=c.submit, key_delay=p.key_delay_ms / 1000, enter_delay=p.enter_delay_ms / 1000,
                               multiline=c.multiline, bracketed_paste=self.screen.bracketed_paste)
        except ReplyError as exc:
            self._escalate(c, str(exc))
            return
        if mapped is not None and not c.menu.multi and len(writes) > 1:
            writes[-1] = replace(writes[-1], check=mapped[1][0].label)  # Enter only once the highlight is there
        if run.dry_run:
            self.preview = {"kind": c.state, "question": headline(c.block), "would_send": text, "source": source, "rule_id": c.rule_id}
            self.tx.emit("would_send", step=self.step.index, rule_id=c.rule_id, prompt=c.block, reply=text, source=source,
                         keys=[w.label for w in writes])
            self._abort(ExitCode.OK, "previewed (dry run)")
            return
        self.answers += 1
        run.answers += 1
        self.guards.answered(c.block, text)
        if c.key:
            self.answered[c.key] = self.answered.get(c.key, 0) + 1
        self.history.append(QA(c.block, text))
        self.worked = True  # whatever the program does next answers to us; idle afterwards means done
        self.tx.emit("answer", step=self.step.index, rule_id=c.rule_id, prompt=c.block, reply=text, source=source, n=run.answers)
        self.sink.answer(headline(c.block), text, source)
        self._apply(Event.REPLY if self.state == State.ASKING_QUESTION else Event.HUMAN_REPLY, c)
        self._schedule(writes, now)
        self._watch = _Watch(c.key or "", c.anchor_row, " ".join(c.block.split()), c.submit, float("inf"))

    def _highlight_reached(self, label: str, now: float) -> bool:
        """Is the menu's highlight on `label`? If not yet, wait a little for the redraw; in the end, escalate."""
        assert self._watch is not None
        snap = self.screen.snapshot()
        top = max(0, self._watch.anchor_row - snap.scrolled)
        menu = parse_menu(list(snap.lines[top:]), {y - top for y in snap.styled if y >= top})
        if menu is not None and menu.current.label == label:
            self._check_until = None
            return True
        if self._check_until is None:
            self._check_until = now + HIGHLIGHT_WAIT
        if now < self._check_until:
            self._next_write = now + 0.02
            return False
        self._check_until = None
        self._pending.clear()
        seen = menu.current.label if menu else "no menu"
        self.tx.emit("menu_check_failed", expected=label, seen=seen)
        self._watch = None
        c = Classification(state=Kind.MENU.value, rule_id=None, block="\n".join(snap.lines[top:]).strip())
        self._escalate(c, f"the highlight did not reach {label!r} (it is on {seen!r}); Enter not pressed")
        return False

    def _escalate(self, c: Classification, why: str) -> None:
        self.run_.escalations += 1
        self.tx.emit("escalation", rule_id=c.rule_id, prompt=c.block, why=why, interactive=self.run_.interactive)
        self.sink.note(f"needs a human: {why}")
        if not self.run_.interactive or self.run_.dry_run:
            self._abort(ExitCode.HUMAN_NEEDED, f"a human is needed ({why}): {headline(c.block)}")
            return
        if self.state != State.AWAITING_INPUT:
            self._apply(Event.ESCALATE, c)
        text = self.sink.ask_human(c.block, why)
        if text is None:
            self._abort(ExitCode.HUMAN_NEEDED, f"a human is needed ({why}); none answered")
            return
        self.tx.emit("human_reply", text=text)
        self._type_answer(c, text, "human", self.clock.monotonic())

    # -- typing ------------------------------------------------------------------
    def _schedule(self, writes: list[Write], now: float) -> None:
        if not self._pending:
            self._next_write = now + (writes[0].delay if writes else 0.0)
        self._pending.extend(writes)

    def _send_due(self, now: float) -> None:
        assert self.driver is not None
        while self._pending and now >= self._next_write:
            if self._pending[0].check is not None and not self._highlight_reached(self._pending[0].check, now):
                return
            w = self._pending.popleft()
            self.driver.write(w.data)
            self.recorder.input(w.data)
            self.tx.emit("keys_sent", keys=w.label, data=w.data.decode("utf-8", "replace"), hex=w.data.hex())
            if self._pending:
                self._next_write = now + self._pending[0].delay
                return
            if self.state == State.ANSWERING:
                self._apply(Event.TYPED, None)
                self._recheck_at = now
                if self._watch:
                    self._watch.due = now + RETRY_GAPS[self._watch.retries]

    # -- ending ------------------------------------------------------------------
    def _fail(self, reason: str, c: Classification | None) -> None:
        self._exit_code, self._reason = ExitCode.FAILED, reason
        self._apply(Event.FAILED, c)

    def _abort(self, code: ExitCode, reason: str) -> None:
        self._exit_code, self._reason = code, reason
        self._apply(Event.ABORT, None)

    def _check_limits(self, now: float) -> None:
        interrupts = self.run_.interrupts - self._seen_interrupts
        if interrupts and self.state not in TERMINAL:
            self._abort(ExitCode.INTERRUPTED, "interrupted")
        if interrupts >= 2 and self._stop_at is not None and self._stop_at > now:
            self.tx.emit("kill", reason="second interrupt")
            self._stop_at = now
        if self.step.deadline is not None and now > self.step.deadline and self.state not in TERMINAL:
            self._abort(ExitCode.LIMIT, self.step.deadline_reason)

    def _closing(self, now: float) -> None:
        assert self.driver is not None
        if self._stop_at is not None and now >= self._stop_at and self.driver.alive():
            self.tx.emit("kill", reason="program did not exit in time", signal="SIGKILL")
            self.driver.signal_group(signal.SIGKILL)
            self._stop_at = None

    def _close_program(self, graceful: bool) -> None:
        """End the program: the profile's quit keys when it is healthy, else SIGINT; SIGKILL later."""
        assert self.driver is not None
        now = self.clock.monotonic()
        keys = self._profile.finish.close
        self._pending.clear()
        if graceful and keys and not self.run_.dry_run:  # a dry run types nothing, not even quit keys
            d = self._profile.key_delay_ms / 1000
            writes = [w for k in keys for w in to_writes(k, submit=False, key_delay=max(d, 0.3))]
            self._schedule(writes, now)
            self._stop_at = now + self._profile.finish.close_timeout_s
            self.tx.emit("closing", how="keys", keys=keys)
        else:
            self.driver.signal_group(signal.SIGINT)
            self._stop_at = now + STOP_GRACE
            self.tx.emit("closing", how="signal", signal="SIGINT")

    def _on_exit(self, status: ExitStatus) -> None:
        self.tx.emit("program_exited", step=self.step.index, code=status.code, signal=status.signal, describe=status.describe())
        if self.state in TERMINAL:
            return
        if status.ok:
            self._reason = "the program exited with code 0"
            self._apply(Event.FINISHED, None)
        else:
            self._fail(f"the program ended: {status.describe()}", None)

    # -- machine and records ---------------------------------------------------------
    def _apply(self, event: Event, c: Classification | None) -> None:
        before = self.state
        self.state, actions = transition(self.state, event)
        self.tx.emit("state", event=event.value, **{"from": before.value, "to": self.state.value}, rule_id=c.rule_id if c else None)
        self._log.debug("transition", trigger=event.value, before=before.value, after=self.state.value)
        assert self.driver is not None
        for action in actions:
            if action in (Action.CLOSE, Action.STOP) and self.driver.alive():
                self._close_program(graceful=action == Action.CLOSE or self._exit_code != ExitCode.INTERRUPTED)

    def _record_state(self, c: Classification) -> None:
        if c.state == SETTLING:
            return
        current = c.decision
        if current == self._last:
            return
        self._last = current
        self.tx.emit("screen_state", state=c.state, rule_id=c.rule_id, prompt=c.block or None, evidence=c.evidence or None, error=c.error)


def _done(reply: Reply) -> Future[Reply]:
    future: Future[Reply] = Future()
    future.set_result(reply)
    return future
