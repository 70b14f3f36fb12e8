"""The PTY channel's loop: the only place that does a step's I/O. read -> record -> screen -> classify -> pilot -> act.

Everything the program writes is recorded before anything else happens. The loop renders the screen when output
pauses (or at most every RENDER_EVERY), classifies it when it changed or when the pilot asked to look again, and
hands the pilot facts; it carries out the effects the pilot returns: records, questions for the decision path
(answered on a worker thread, so reading never waits for a model or a human), keystrokes on a schedule.
"""

from __future__ import annotations

import os
import signal
import termios
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import structlog

from cursorpilot.decide.asking import PromptFiler
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.question import Decision, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, TurnFacts
from cursorpilot.detect.classifier import Timing, classify, undecided
from cursorpilot.detect.menu import buttons, highlighted_row
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.profiles import Profile
from cursorpilot.events import Sink, Status
from cursorpilot.keys import Modes, Write, to_writes
from cursorpilot.machine import State
from cursorpilot import goalcheck, reaper
from cursorpilot.program_env import last_words, program_env
from cursorpilot.pty import ask, kernel
from cursorpilot.pty.driver import ExitStatus, PtyDriver
from cursorpilot.decide.deliver import Delivered, Record, RunCounts, Tell
from cursorpilot.pty.facts import Ask, AskHuman, Close, Effect, PilotConfig, ScreenFacts, Type
from cursorpilot.pty.pilot import Pilot
from cursorpilot.pty.screen import TerminalScreen
from cursorpilot.recording import SessionRecorder
from cursorpilot.session import Job, RunSession, StepBase, StepResult

MAX_TICK = 0.05  # the longest the loop sleeps in select()
HIGHLIGHT_WAIT = 1.5  # how long the highlight may take to reach the chosen option before Enter
ECHO_WAIT = 1.5  # how long typed text may take to show before Enter goes anyway
ASK_POLL = 0.005  # how often a pending answer is looked at (the reply is typed this much late at most)
RENDER_EVERY = 0.1  # re-render a screen that keeps changing at most this often
RENDER_PAUSE = 0.02  # ...and whenever output has paused this long (a prompt is complete; not every 20 ms of a stream)
FLOOD_BYTES = 1 << 20  # more output than this since the last render is a flood:
FLOOD_RENDER_EVERY = 0.5  # render it less often (each render then costs a pass over the flood)
KERNEL_EVERY = 0.03  # how often the kernel is asked whether the program waits on its terminal
STOP_GRACE = 3.0  # SIGINT, then SIGKILL after this long
EXIT_GRACE = 1.0  # after its terminal closed, how long a program may take to exit by itself


@dataclass(slots=True, kw_only=True)
class StepConfig(StepBase):
    profile: Profile
    send: str | None = None  # typed once the program is ready for input
    expect_regex: str | None = None  # on screen -> the step is done


@dataclass(slots=True)
class _Pending:
    """A question out with the answerer: a provider call (with its question), or a human at the terminal (none)."""

    token: int
    question: Question | None
    future: Future
    turn: bool = False  # a turn end's goal check (its future holds the TurnFacts)
    weighing: Decision | None = None  # a yes out with the judge (decide/weigh.py): its future holds the judge's reply


def drive(job: Job) -> StepResult:
    """The screen channel's entry point (channels.py)."""
    step = job.step
    config = StepConfig(**job.base(), profile=job.profile, send=step.send, expect_regex=step.expect.regex if step.expect else None)
    return PtyStep(config, job.run, job.sink).run()


class PtyStep:
    def __init__(self, step: StepConfig, run: RunSession, sink: Sink):
        self.step = step
        self.run_ = run
        self.tx = run.tx
        self.clock = run.clock
        self.sink = sink
        self.counts = RunCounts(answers=run.answers, max_answers=run.max_answers, escalations=run.escalations,
                                dry_run=run.dry_run, interactive=run.interactive)
        started_with_task = (step.send is None and os.path.basename(step.command[0]) in step.profile.commands
                             and step.profile.task.given(step.command))
        self.pilot = Pilot(PilotConfig(step.profile, step.send, step.expect_regex, step.max_answers, started_with_task,
                                       echo_check=True, secrets=run.secrets,
                                       turns=step.turns), self.counts)
        label = f"{step.index}/{step.total}: {step.name}"
        self.decider = Decider(run, step.governing_prompt, step.cwd, step.rules,
                               PromptFiler(run, step.index, label, step.cwd, step.governing_prompt))
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="answerer")
        self._pending: _Pending | None = None
        self._writes: deque[Write] = deque()
        self._next_write = 0.0
        self._check_until: float | None = None
        self._typed_at = -1  # the screen's version when the text before an Enter was written
        self._typed_cursor = (0, 0)  # ...and where the cursor was
        self._typed_secret = False  # ...and whether that text was a secret
        self._stop_at: float | None = None  # when closing: SIGKILL deadline
        self._seen_interrupts = run.interrupts
        self._log = structlog.get_logger("cursorpilot")
        self.driver: PtyDriver | None = None
        self.screen = TerminalScreen(run.cols, run.rows)
        # read-loop timing: when output last came, when the rendered content last changed
        self._last_output = self._last_change = 0.0
        self._dirty = False
        self._unrendered = 0
        self._content: tuple[str, ...] = ()
        self._content_version = 0
        self._look_at: float | None = None  # classify again at this time (the screen changed, or the pilot asked)
        self._last_render = self._last_mirror = 0.0
        self._tty: str | None = None
        self._tty_at = 0.0
        self._tty_watch: kernel.TtyWatch | None = None
        self.t0 = self.clock.monotonic()
        self._mark = f"{run.run_id}-{step.index}"  # in the environment of everything the program starts

    @property
    def _profile(self) -> Profile:
        return self.step.profile

    # -- public ----------------------------------------------------------------------------------------------------------
    def run(self) -> StepResult:
        run = self.run_
        self.recorder = SessionRecorder(run.log_dir, self.clock, run.cols, run.rows, self.step.command, step=self.step.index, redactor=run.redactor)
        try:
            env, hidden = program_env(self.step.env, self._mark, run.keep_ci_env)
            self.driver = PtyDriver(self.step.command, cwd=self.step.cwd, env=env, cols=run.cols, rows=run.rows)
            self._tty_watch = kernel.TtyWatch(self.driver.fd, kernel.slave_path(self.driver.fd), self._mark)
            self.tx.emit("program_started", step=self.step.index, pid=self.driver.pid, command=self.step.command,
                         profile=self._profile.name, profile_hash=self._profile.digest(),
                         started_with_task=self.pilot.starting or None, hidden_env=hidden or None)
            self._do(self.pilot.started())
            status = self._loop()
            if self.screen.ignored:
                self.tx.emit("terminal_ignored", step=self.step.index, counts=dict(self.screen.ignored))
            text = "\n".join([*self.screen.scrollback(), *self.screen.snapshot().lines]).rstrip()
            p = self.pilot
            return StepResult(int(p.exit_code), p.reason, status.code, p.answers, text, p.preview, goal=p.turns.goal)
        finally:
            run.answers, run.escalations = self.counts.answers, self.counts.escalations
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

    # -- the loop --------------------------------------------------------------------------------------------------------
    def _loop(self) -> ExitStatus:
        assert self.driver is not None
        self._last_output = self._last_change = self.clock.monotonic()
        while True:
            now = self.clock.monotonic()
            self._limits(now)
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
            if self.pilot.done:
                self._closing(now)
                continue
            self._render_if_due(now)
            self._look(now)
            self._collect(now)
            self._send_due(now)  # a reply chosen just now (a rule hit) goes out without another turn of the loop
        # the terminal closed (EOF) a moment before the program is reaped: let it end by itself before any signal
        # (it was reported "killed by SIGINT" in 1 run of 5 of `bash -c "touch out.txt"`)
        status = (self.driver.status() if not self.driver.alive()
                  else None if self.pilot.done else self.driver.wait(EXIT_GRACE)) or self.driver.terminate(STOP_GRACE)
        describe = status.describe()
        last = last_words(self.screen.snapshot().lines, self.run_.cols) if status.code != 0 and not self.pilot.done else None
        self.tx.emit("program_exited", step=self.step.index, code=status.code, signal=status.signal, describe=describe, last_words=last)
        if last:  # why it ended is usually its last line: say it where the user looks, not only in the recording
            describe += f"; it last showed: {last}"
        self._do(self.pilot.exited(status.code, status.signal, self.run_.redactor.text(describe)))
        return status

    def _tick(self, now: float) -> float:
        deadlines = [now + MAX_TICK]
        if self._writes:
            deadlines.append(self._next_write)
        if self._look_at is not None and self.pilot.state == State.RUNNING:
            deadlines.append(self._look_at)
        wake = self.pilot.wake_at()
        if wake is not None:
            deadlines.append(wake)
        if self._dirty:
            deadlines.append(min(self._last_render + RENDER_EVERY, self._last_output + RENDER_PAUSE))
        if self._pending is not None:
            deadlines.append(now + ASK_POLL)
        if self.recorder.due is not None:
            deadlines.append(self.recorder.due)
        return max(0.0, min(deadlines) - now)

    def _on_output(self, chunk: bytes) -> None:
        self.recorder.output(chunk)
        self.screen.feed(chunk)
        replies = self.screen.take_replies()
        if replies:
            assert self.driver is not None
            self.driver.write(replies)
            self.tx.emit("terminal_reply", data=replies.decode("utf-8", "replace"), hex=replies.hex())
        self._last_output = self.clock.monotonic()
        self._dirty = True
        self._unrendered += len(chunk)

    def _render_if_due(self, now: float) -> None:
        """Render when output paused or every RENDER_EVERY; a repaint with equal content is no change."""
        every = FLOOD_RENDER_EVERY if self._unrendered > FLOOD_BYTES else RENDER_EVERY
        if not self._dirty or (now - self._last_render < every and now - self._last_output < RENDER_PAUSE):
            return
        self._render(now)

    def _render(self, now: float) -> None:
        self._last_render = now
        self._unrendered = 0
        self._dirty = False
        snap = self.screen.snapshot()
        content = (*snap.lines, f"{snap.cursor_x},{snap.cursor_y},{snap.scrolled}")
        if content != self._content:
            self._content = content
            self._content_version += 1
            self._last_change = self._last_output
            self._look_at = now
        if self.sink.wants_screen and now - self._last_mirror >= RENDER_EVERY:
            self._mirror(now)

    def _mirror(self, now: float) -> None:
        """The screen for the person watching (a live mirror, or the rows a CI log has not shown yet)."""
        self._last_mirror = now
        self.sink.screen(self.screen.snapshot(), Status(self.pilot.state.value, self.counts.answers, now - self.t0,
                                                        f"step {self.step.index}/{self.step.total}"))

    # -- looking ---------------------------------------------------------------------------------------------------------
    def _kernel(self, now: float) -> str | None:
        """The kernel's word on the foreground process, asked at most every KERNEL_EVERY while the screen is quiet."""
        if now - self._last_output < 0.02:
            return None  # output is streaming: it is not waiting
        if now - self._tty_at >= KERNEL_EVERY:
            self._tty, self._tty_at = self._tty_watch.state(now), now
        return self._tty

    def _look(self, now: float) -> None:
        if self.pilot.state != State.RUNNING or self._pending is not None:
            return
        wake = self.pilot.wake_at()
        due = (self._look_at is not None and now >= self._look_at) or (wake is not None and now >= wake)
        tty = self._kernel(now) if self._look_at is not None or wake is not None else self._tty
        if not due and not (tty == kernel.READING and self._look_at is not None):
            return
        self._look_at = None
        snap = self.screen.snapshot()
        quiet = now - self._last_change
        c = classify(self._profile, snap, Timing(quiet_for=quiet, tty=tty))
        if c.recheck_after is not None:
            self._look_at = now + c.recheck_after
        if tty == kernel.READING and c.state == "settling":
            self._look_at = now + 0.01
        facts = ScreenFacts(snap.text(), self._content_version, quiet, tty, self._modes(),
                            judge=lambda answered_to: undecided(self._profile, snap, answered_to), echo_off=self._no_echo(),
                            said=lambda after, before: ask.last_message(self._profile, snap, c, after, before))
        self._do(self.pilot.screen(now, c, facts))

    def _modes(self) -> Modes:
        s = self.screen
        return Modes(app_cursor=s.app_cursor_keys, app_keypad=s.app_keypad, bracketed_paste=s.bracketed_paste)

    # -- effects ---------------------------------------------------------------------------------------------------------
    def _do(self, effects: list[Effect]) -> None:
        for e in effects:
            if isinstance(e, Record):
                self.tx.emit(e.type, **({"step": self.step.index} if e.type in ("answer", "would_send", "turn_end") else {}), **e.fields)
                if e.type == "wait":
                    self.run_.usage["waits"] += 1  # judged "nobody is asked": reported apart from answers
                if e.type == "turn_end":
                    self.run_.turn_ended(self.step.index, e.fields)
                if e.type == "state":
                    self._log.debug("transition", trigger=e.fields["event"], before=e.fields["from"], after=e.fields["to"])
            elif isinstance(e, Ask):
                self._ask(e)
            elif isinstance(e, AskHuman):
                self._ask_human(e)
            elif isinstance(e, Type):
                self._schedule(list(e.writes), self.clock.monotonic())
            elif isinstance(e, Delivered):
                self.decider.delivered(e.prompt, e.text)
            elif isinstance(e, Tell):
                if self.sink.wants_screen:
                    self._mirror(self.clock.monotonic())  # what was asked shows before what was answered
                if e.what == "answer":
                    self.sink.answer(e.prompt, e.text, e.source, e.changed)
                else:
                    self.sink.note(e.text)
            elif isinstance(e, Close):
                self._close_program(e.graceful)
            elif isinstance(e, CheckGoal):  # the goal check may take a while: off the read loop, like a model call
                self._pending = _Pending(e.token, None, self._pool.submit(self._turn_facts), turn=True)

    def _turn_facts(self) -> TurnFacts:
        return goalcheck.turn_facts(self.step.done_when, self.step.cwd, self.step.env, self._mark, self.run_, self.step.check_timeout)

    def _ask(self, e: Ask) -> None:
        snap = self.screen.snapshot()
        q = (ask.question(self._profile, e.c, snap, [], kind=e.kind, secret=e.secret, notes=e.notes) if e.question is None
             else ask.with_screen(e.question, snap))
        first = self.decider.first(q)
        if first is not None:
            self._decided(e.token, first, q)
            return
        q = replace(q, earlier=tuple(self.screen.scrollback()))  # rendered only for a model's prompt, never for a rule hit
        self._pending = _Pending(e.token, q, self._pool.submit(self.decider.call, self.decider.request(q)))

    def _ask_human(self, e: AskHuman) -> None:
        """People are asked (cursorpilot/human: the terminal, the decision page, a notice; the first answer that passes
        the deny policy wins) on the worker thread: the program's output is read and recorded meanwhile."""
        q = ask.question(self._profile, e.c, self.screen.snapshot(), [], secret=e.secret)
        self._pending = _Pending(e.token, None, self._pool.submit(self.run_.humans.ask, q, e.why, self.step, self.decider.check, e.prompt))

    def _collect(self, now: float) -> None:
        p = self._pending
        if p is None or not p.future.done():
            return
        self._pending = None
        if p.turn:  # goalcheck.turn_facts never raises
            self._do(self.pilot.goal_checked(now, p.token, p.future.result(), self._modes()))
            return
        if p.question is not None and p.weighing is not None:  # the judge's reply on a yes
            self._decided(p.token, self.decider.weighed(p.question, p.weighing, p.future.result()), p.question)
            return
        if p.question is not None:  # Decider.call never raises
            self._decided(p.token, self.decider.after(p.question, p.future.result()), p.question)
            return
        try:
            text = p.future.result()
        except Exception:  # noqa: BLE001 - a terminal that fails while asked is a human who did not answer
            text = None
        d = Decision(Verdict.ANSWER, text=text, source="human") if isinstance(text, str) else Decision.escalate("no answer")
        self._decided(p.token, d)

    def _decided(self, token: int, d: Decision, q: Question | None = None) -> None:
        if d.weigh is not None and q is not None:  # a yes that needs the focused judgment first: off the read loop
            self._pending = _Pending(token, q, self._pool.submit(self.decider.call, self.decider.weigh_request(q, d)), weighing=d)
            return

        def current():
            return classify(self._profile, self.screen.snapshot(), Timing(quiet_for=float("inf")))

        self._do(self.pilot.decided(self.clock.monotonic(), token, d, current, self._content_version, self._modes()))

    # -- typing ------------------------------------------------------------------------------------------------------
    def _schedule(self, writes: list[Write], now: float) -> None:
        if not self._writes:
            self._next_write = now + (writes[0].delay if writes else 0.0)
        self._writes.extend(writes)

    def _send_due(self, now: float) -> None:
        assert self.driver is not None
        while self._writes and now >= self._next_write:
            w = self._writes[0]
            if w.check is not None and not self._highlight_reached(w.check, w.check_from, now):
                return
            if w.echo is not None:
                verdict = self._enter_due(w, now)
                if verdict == "wait":
                    return
                if verdict == "skip":
                    self._check_until = None
                    self._writes.popleft()
                    self.tx.emit("enter_skipped", reason="the program took the answer without Enter", prompt=w.prompt)
                    self._typing_done(now)
                    continue
            self._check_until = None
            self._writes.popleft()
            text = w.data.decode("utf-8", "replace")
            secret = w.secret or (text == w.label and self._no_echo())  # text typed while echo is off is a secret, whoever chose it
            self.driver.write(w.data)
            self.recorder.input(w.data, secret=secret)
            self.tx.emit("keys_sent", keys=w.label, data=text, hex=w.data.hex(), secret=secret or None)  # masked as written
            self._typed_secret = secret
            if self._writes:
                self._next_write = now + self._writes[0].delay
                self._typed_at = self.screen.version
                snap = self.screen.snapshot()
                self._typed_cursor = (snap.cursor_x, snap.cursor_y)
                return
            self._typing_done(now)

    def _typing_done(self, now: float) -> None:
        if not self._writes:
            self._look_at = now
            if self._dirty:
                self._render(now)  # what the screen shows as the last key goes out: the program reacts from here
            self._do(self.pilot.typed(now, self._content_version))

    def _wait_for(self, now: float, wait: float) -> bool:
        """Keep waiting for a condition on screen (True), or give up (False): its deadline has passed."""
        if self._check_until is None:
            self._check_until = now + wait
        if now < self._check_until:
            self._next_write = now + 0.01
            return True
        self._check_until = None
        return False

    def _highlight_reached(self, label: str, anchor_row: int, now: float) -> bool:
        """Is the menu's highlight on `label`? If not yet, wait a little for the redraw; in the end, escalate."""
        snap = self.screen.snapshot()
        top = max(0, anchor_row - snap.scrolled)
        menu = parse_menu(list(snap.lines[top:]), *snap.rel(top)) \
            or buttons(snap.lines, snap.cursor_x, snap.cursor_y)
        if menu is not None and menu.current.label == label or highlighted_row(snap.lines[top:], label):
            return True
        if self._wait_for(now, HIGHLIGHT_WAIT):
            return False
        self._writes.clear()
        seen = menu.current.label if menu else "no menu"
        self._do(self.pilot.check_failed(label, seen, "\n".join(snap.lines[top:]).strip()))
        return False

    def _enter_due(self, w: Write, now: float) -> str:
        """send | wait | skip: Enter goes once the typed text shows near the cursor (a filter or a completion has
        caught up); it is skipped when a single key made the question leave the screen (a confirm that takes the key
        alone: its Enter would accept the next question's default), and sent anyway when nothing shows in time."""
        if self._check_until is None and self._no_echo():  # asked once per Enter, not on every poll of the wait
            return "send"
        snap = self.screen.snapshot()
        if self.screen.version != self._typed_at:
            one_key = len(w.echo.strip()) == 1  # only a single key can have been an answer by itself (y at a confirm)
            if one_key and w.prompt and " ".join(w.prompt.split()) not in " ".join(snap.text().split()):
                return "skip"
            tail = " ".join(w.echo[-40:].split())
            rows = snap.lines[max(0, snap.cursor_y - 8) : snap.cursor_y + 2]  # Ink parks the cursor under its input box
            if any(" ".join(row.rstrip(" │┃║|█▌▋▏_").split()).endswith(tail) for row in rows):  # a drawn cursor after it
                return "send"
            x, y = self._typed_cursor
            if snap.cursor_y == y and snap.cursor_x - x >= len(w.echo):
                return "send"  # a masked field: the cursor moved on by the text's length (****)
        if self._wait_for(now, ECHO_WAIT):
            return "wait"
        self.tx.emit("echo_not_seen", text=w.echo, waited_s=ECHO_WAIT, secret=self._typed_secret or None)
        return "send"

    def _no_echo(self) -> bool:
        """A line-mode prompt with echo off (a password): the text never shows, so nothing waits for it."""
        assert self.driver is not None
        try:
            lflag = termios.tcgetattr(self.driver.fd)[3]
        except termios.error:
            return False
        return bool(lflag & termios.ICANON) and not lflag & termios.ECHO

    # -- ending ---------------------------------------------------------------------------------------------------------
    def _limits(self, now: float) -> None:
        interrupts = self.run_.interrupts - self._seen_interrupts
        if interrupts:
            self._do(self.pilot.interrupted())
        if interrupts >= 2 and self._stop_at is not None and self._stop_at > now:
            self.tx.emit("kill", reason="second interrupt")
            self._stop_at = now
        if self.step.deadline is not None and now > self.step.deadline:
            self._do(self.pilot.deadline(self.step.deadline_reason))

    def _closing(self, now: float) -> None:
        assert self.driver is not None
        if self._stop_at is not None and now >= self._stop_at and self.driver.alive():
            self.tx.emit("kill", reason="program did not exit in time", signal="SIGKILL")
            self.driver.signal_group(signal.SIGKILL)
            self._stop_at = None

    def _close_program(self, graceful: bool) -> None:
        """End the program: the profile's quit keys when it is healthy, else SIGINT; SIGKILL later."""
        assert self.driver is not None
        if not self.driver.alive():
            return
        now = self.clock.monotonic()
        keys = self._profile.finish.close
        self._writes.clear()
        self._pending = None
        if graceful and keys and not self.run_.dry_run:  # a dry run types nothing, not even quit keys
            d = self._profile.key_delay_ms / 1000
            self._schedule([w for k in keys for w in to_writes(k, submit=False, key_delay=max(d, 0.3))], now)
            self._stop_at = now + self._profile.finish.close_timeout_s
            self.tx.emit("closing", how="keys", keys=keys)
        else:
            self.driver.signal_group(signal.SIGINT)
            self._stop_at = now + STOP_GRACE
            self.tx.emit("closing", how="signal", signal="SIGINT")
