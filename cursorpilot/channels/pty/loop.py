"""The PTY channel's loop: the only place that does a step's I/O. read -> record -> screen -> classify -> pilot -> act.

Everything the program writes is recorded before anything else happens. The loop renders the screen when output
pauses (pty/view.py), classifies it when it changed or when the pilot asked to look again, and hands the pilot facts
(`Pilot.handle`); it carries out the effects: records and words for the watcher (the StepHost, channels/host.py), questions for
the decision path (answered on a worker thread, so reading never waits for a model or a human), bytes to write when a
key falls due, the program's end. It decides nothing: every rule of a step is the pilot's (pty/pilot.py, typist.py).
"""

from __future__ import annotations

import os
import signal
import termios
from concurrent.futures import Future
from collections.abc import Generator
from dataclasses import dataclass

from cursorpilot.decide.deliver import NOBODY, Record
from cursorpilot.decide.question import Decision
from cursorpilot.providers.base import AnswerRequest, Reply
from cursorpilot.decide.turns import CheckGoal
from cursorpilot.detect.classifier import Timing, classify, undecided
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.channels.contract import Status
from cursorpilot.channels.host import StepHost
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.program_env import last_words
from cursorpilot.channels.pty import ask, inqueue, kernel, naps
from cursorpilot.channels.pty.driver import ExitStatus, PtyDriver
from cursorpilot.channels.pty.facts import (Ask, AskHuman, Close, Deadline, Decided, Effect, Exited, Fact, GoalChecked, HandedBack, Interrupted,
                                   KeyDue, Kill, PilotConfig, ReadMessage, Replied, Screen, ScreenFacts, Started, Taken, Type, Typed)
from cursorpilot.channels.pty.pilot import Pilot
from cursorpilot.channels.pty.progress import Progress
from cursorpilot.channels.pty.screen import TerminalScreen
from cursorpilot.channels.pty.typist import KeysOut, KeyView, Send
from cursorpilot.channels.pty.view import RENDER_EVERY, ScreenView
from cursorpilot.records.recording import SessionRecorder
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.channels.agent import runhook

MAX_TICK = 0.05  # the longest the loop sleeps in select()
ASK_POLL = 0.005  # how often a pending answer is looked at (the reply is typed this much late at most)
STOP_GRACE = 3.0  # when the terminal closed and the program lingers: SIGINT, then SIGKILL after this long
EXIT_GRACE = 1.0  # after its terminal closed, how long a program may take to exit by itself


@dataclass(slots=True)
class _Pending:
    """Out on a worker thread: a provider call on a question's path through the decision path (the model's, or the
    judge of a yes: Decider.path), a person, a turn end's check."""

    token: int
    future: Future
    content: int  # the screen's version when it was asked: a decision on a changed screen comes with how it reads now
    path: Generator[AnswerRequest, Reply, Decision] | None = None  # the question's path, which the call's reply goes on with
    people: bool = False  # people are asked (human/humans.py): its future holds their Decision
    turn: bool = False  # a turn end's goal check (its future holds the TurnFacts)
    message: str = ""  # a turn end: the agent's last message, read off the screen when it stopped


def drive(job: Job) -> StepResult:
    """The screen channel's entry point (channels/registry.py)."""
    return PtyLoop(job).run()


def _no_echo(lflag: int) -> bool:
    """A line-mode prompt with echo off (a password): the text never shows, so nothing waits for it."""
    return bool(lflag & termios.ICANON) and not lflag & termios.ECHO


class PtyLoop:
    def __init__(self, job: Job):
        assert job.profile is not None  # (the runner gives a screen's step its profile)
        self.step, self.ctx, self.sink, self.clock, self.profile = job, job.ctx, job.sink, job.ctx.clock, job.profile
        ctx, step, send = job.ctx, job, job.step.send  # send: typed once the program is ready for input
        self.host = StepHost(job, workers=1, name="answerer", cwd=step.cwd)
        started_with_task = (send is None and os.path.basename(step.command[0]) in self.profile.commands
                             and self.profile.task.given(step.command))
        expect_regex = job.step.expect.regex if job.step.expect else None  # on screen: the step is done
        self.pilot = Pilot(PilotConfig(self.profile, send, expect_regex, step.max_answers, started_with_task,
                                       echo_check=True, secrets=ctx.secrets, turns=step.turns, limits=self.host.limits(),
                                       stuck_after=step.turns.stuck_after), self.host.counts)
        self.screen = TerminalScreen(ctx.cols, ctx.rows)
        self.view = ScreenView(self.screen, self.clock.monotonic())
        self.driver: PtyDriver | None = None
        self.hook: runhook.ScreenHook | None = None  # cursor-pilot's hook in a known agent's settings, for the step
        self._pending: _Pending | None = None
        self._kill_at: float | None = None  # when closing: SIGKILL then
        self._on_kill: Record | None = None  # ...and the record that says so
        self._interrupts = self._interrupts_before = ctx.interrupts
        self._last_mirror = 0.0
        self._owed = False  # a screen rendered and not mirrored yet
        self._typed_by_person = 0  # bytes a person typed since they took the keyboard (commands/watched.py)
        self.t0 = self.clock.monotonic()
        self.idle = naps.Idle()  # since when the foreground group has used almost no CPU (never-silent: pty/quiet.py)

    # -- public ----------------------------------------------------------------------------------------------------------
    def run(self) -> StepResult:
        ctx = self.ctx
        self.recorder = SessionRecorder(ctx.log_dir, self.clock, ctx.cols, ctx.rows, self.step.command, step=self.step.index,
                                        redactor=ctx.redactor)
        try:
            env, hidden = self.host.env()
            command, self.hook = runhook.screen_hook(self.step, self.host, env)
            self.driver = PtyDriver(command, cwd=self.step.cwd, env=env, cols=ctx.cols, rows=ctx.rows)
            slave = kernel.slave_path(self.driver.fd)
            self.view.watch = kernel.TtyWatch(self.driver.fd, slave, self.host.mark)
            self.progress = Progress(self.profile.animation, self.driver.pid, self.clock.monotonic(), slave)
            self._feed(Started(self.driver.pid, tuple(command), tuple(hidden)))
            if self.host.keyboard is not None:
                self.host.keyboard.step(ctx.tx.write, screen=True)  # a person may take it: cursor-pilot watch --take
            status = self._loop()
            earlier, snap = self.screen.scrollback(), self.screen.snapshot()
            text = "\n".join([*earlier, *snap.lines]).rstrip()
            p = self.pilot
            return StepResult(int(p.exit_code), p.reason, status.code, p.answers, text, p.preview, goal=p.turns.goal,
                              text_top=snap.scrolled - len(earlier))
        finally:
            if self.host.keyboard is not None:
                self.host.keyboard.step(ctx.tx.write, screen=False)
            self.recorder.close()
            if self.driver is not None:
                self.driver.close()
            if self.hook is not None:
                self.hook.pass_on(self.host)
                self.hook.remove()
            self.host.close()

    # -- the loop --------------------------------------------------------------------------------------------------------
    def _loop(self) -> ExitStatus:
        assert self.driver is not None
        while True:
            now = self.clock.monotonic()
            self._limits(now)
            self._keyboard(now)
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
            self._keys(now)
            if self.pilot.done:
                self._kill_if_due(now)
                continue
            # a render too soon after the last mirror is owed, not dropped: the screen may not change again (a program that
            # waits for the person who took its keyboard showed its last line only to the run's own console)
            self._owed = (self.view.render_if_due(now) or self._owed) and self.sink.wants_screen
            if self._owed and now - self._last_mirror >= RENDER_EVERY:
                self._mirror(now)
            self._look(now)
            self._collect()
            self._keys(now)  # a reply chosen just now (a rule hit) goes out without another turn of the loop
            if self.hook is not None:
                self.hook.pass_on(self.host)
        return self._exited()

    def _exited(self) -> ExitStatus:
        assert self.driver is not None
        # the terminal closed (EOF) a moment before the program is reaped: let it end by itself before any signal
        status = (self.driver.status() if not self.driver.alive()
                  else None if self.pilot.done else self.driver.wait(EXIT_GRACE)) or self.driver.terminate(STOP_GRACE)
        last = last_words(list(self.screen.snapshot().lines), self.ctx.cols) if status.code != 0 and not self.pilot.done else None
        self._feed(Exited(status.code, status.signal, status.describe(), last and self.ctx.redactor.text(last),
                          tuple(self.screen.ignored.items())))
        return status

    def _tick(self, now: float) -> float:
        pending = now + ASK_POLL if self._pending is not None else None
        look = self.view.look_at if self.pilot.state == State.RUNNING else None
        owed = self._last_mirror + RENDER_EVERY if self._owed else None
        deadlines = [t for t in (now + MAX_TICK, self.pilot.key_at(self.screen.version), look, self.pilot.wake_at(), self.view.render_due(now), pending,
                                 self.recorder.due, owed) if t is not None]
        return max(0.0, min(deadlines) - now)

    def _on_output(self, chunk: bytes) -> None:
        self.recorder.output(chunk)
        self.screen.feed(chunk)
        replies = self.screen.take_replies()
        if replies:
            assert self.driver is not None
            self.driver.write(replies)
            self._feed(Replied(replies))
        self.view.fed(len(chunk), self.clock.monotonic())

    def _mirror_before_answer(self) -> None:
        if self.sink.wants_screen:
            self._mirror(self.clock.monotonic())

    def _mirror(self, now: float) -> None:
        """The screen for the person watching (a live mirror, or the rows a CI log has not shown yet)."""
        self._last_mirror, self._owed = now, False
        self.sink.screen(self.screen.snapshot(), Status(self.pilot.state.value, self.host.counts.answers, now - self.t0,
                                                        f"step {self.step.index}/{self.step.total}"))

    def _look(self, now: float) -> None:
        if self.pilot.state != State.RUNNING or self._pending is not None:
            return
        due, tty = self.view.look_due(now, self.pilot.wake_at(), answered=bool(self.pilot.answered))
        if not due:
            return
        self.view.look_at, self.view.judged_tty = None, tty
        snap, quiet = self.screen.snapshot(), now - self.view.quiet_since(tty)
        lflag = self._mode()
        canonical = None if lflag is None else bool(lflag & termios.ICANON)
        c = classify(self.profile, snap, Timing(quiet_for=quiet, tty=tty, canonical=canonical))
        if c.recheck_after is not None:
            self.view.look_at = now + c.recheck_after
        if tty == kernel.READING and c.state == ScreenKind.SETTLING:
            self.view.look_at = now + 0.01
        judged = undecided(self.profile, snap, self.pilot.answering.answered_to, canonical) if c.state == ScreenKind.UNKNOWN else None
        text, watch = snap.text(), self.view.watch
        idle_for = None if watch is None else self.idle.seen(now, lambda: watch.cpu(now))
        stopped = None if watch is None or self.driver is None else watch.stopped(now, self.driver.pid, tty)
        self._feed(Screen(c, ScreenFacts(text, self.view.version, quiet, tty, self._modes(), judged, _no_echo(lflag or 0),
                                         unread=self._unread(), wall=self.clock.utcnow().astimezone(),
                                         still_for=self.progress.seen(now, text), raw=canonical is False, idle_for=idle_for,
                                         stopped=stopped, echoes=None if lflag is None else bool(lflag & termios.ECHO))))

    def _modes(self) -> Modes:
        s = self.screen
        return Modes(app_cursor=s.app_cursor_keys, app_keypad=s.app_keypad, bracketed_paste=s.bracketed_paste)

    # -- effects ---------------------------------------------------------------------------------------------------------
    def _feed(self, fact: Fact) -> None:
        self._do(self.pilot.handle(self.clock.monotonic(), fact))

    def _do(self, effects: list[Effect]) -> None:
        for e in effects:
            if self.host.shared(e, before_answer=self._mirror_before_answer):
                continue
            if isinstance(e, Ask):
                self._ask(e)
            elif isinstance(e, AskHuman):
                q = ask.question(self.profile, e.c, self.screen.snapshot(), [], secret=e.secret)
                assert self.step.people is not None  # (the runner's, made before any step)
                future = self.host.pool.submit(self.step.people.ask, q, e.why, self.step, self.host.decider.check, e.prompt)
                self._pending = _Pending(e.token, future, self.view.version, people=True)
            elif isinstance(e, Send):
                assert self.driver is not None
                self.driver.write(e.data)
                self.recorder.input(e.data, secret=e.secret)
            elif isinstance(e, KeysOut):
                now = self.clock.monotonic()
                self.view.look_at = now
                if self.view.dirty:
                    self.view.render(now)  # what the screen shows as the last key goes out: the program reacts from here
                self._feed(Typed(self.view.version))
            elif isinstance(e, CheckGoal):  # the goal check may take a while: off the read loop, like a model call
                self._pending = _Pending(e.token, self.host.pool.submit(self.host.turn_facts), self.view.version, turn=True)
            elif isinstance(e, ReadMessage) and self._pending is not None:
                self._pending.message = ask.last_message(self.profile, self.screen.snapshot(), e.c, e.after, e.before)
            elif isinstance(e, Close):
                self._close(e)
            elif isinstance(e, Kill):
                self._kill_at, self._on_kill = self.clock.monotonic(), None
            elif not isinstance(e, (Type, ReadMessage)):  # Type: the keys are queued in the pilot's typist
                raise AssertionError(f"an effect nobody carries out: {e!r}")

    def _ask(self, e: Ask) -> None:
        snap = self.screen.snapshot()
        q = (ask.question(self.profile, e.c, snap, [], kind=e.kind, secret=e.secret, notes=e.notes) if e.question is None
             else ask.with_screen(e.question, snap))
        self._follow(e.token, self.host.decider.path(q, earlier=lambda: tuple(self.screen.scrollback())))

    def _follow(self, token: int, path: Generator[AnswerRequest, Reply, Decision], reply: Reply | None = None,
                asked_on: int | None = None) -> None:
        """The question's path through the decision path (Decider.path, the same for every channel), one step at a
        time: what costs nothing here, each provider call off the read loop, its reply collected, then the next."""
        try:
            request = next(path) if reply is None else path.send(reply)
        except StopIteration as done:
            self._decided(token, done.value, self.view.version if asked_on is None else asked_on)
            return
        self._pending = _Pending(token, self.host.pool.submit(self.host.decider.call, request), self.view.version, path=path)

    def _collect(self) -> None:
        p = self._pending
        if p is None or not p.future.done():
            return
        self._pending = None
        if p.turn:  # goalcheck.turn_facts never raises
            self._feed(GoalChecked(p.token, p.future.result(), p.message))
        elif p.path is not None:  # Decider.call never raises
            self._follow(p.token, p.path, p.future.result(), p.content)
        else:  # people's answer (human/humans.py): who gave it, or why none came
            try:
                d = p.future.result()
            except Exception as exc:
                d = Decision.escalate(f"nobody could be asked ({type(exc).__name__}: {exc})", NOBODY)
            self._decided(p.token, d, p.content)

    def _decided(self, token: int, d: Decision, asked_on: int) -> None:
        changed = self.view.version != asked_on
        lflag = self._mode()
        timing = Timing(quiet_for=float("inf"), canonical=None if lflag is None else bool(lflag & termios.ICANON))
        snap = self.screen.snapshot()
        current = classify(self.profile, snap, timing) if changed else None
        if current is not None and current.state == ScreenKind.UNKNOWN:  # read whole, as the screen asked about was
            current = undecided(self.profile, snap, self.pilot.answering.answered_to, timing.canonical)
        self._feed(Decided(token, d, self.view.version, self._modes(), current))

    # -- keys and the end ---------------------------------------------------------------------------------------------
    def _keys(self, now: float) -> None:
        due = self.pilot.key_at(self.screen.version)
        if due is not None and now >= due:
            lflag = self._lflag()
            working = self.pilot.enter_waits() and self.view.watch is not None and self.view.watch.working(now)
            self._feed(KeyDue(KeyView(self.screen.snapshot(), self.screen.version, _no_echo(lflag), bool(lflag & termios.ECHO),
                                      working, keys=not lflag & termios.ICANON)))  # (echo on: a mode was read)

    def _lflag(self) -> int:
        """The terminal's local modes (ECHO, ICANON), as the program set them."""
        return self._mode() or 0

    def _mode(self) -> int | None:
        """...or None where they can't be read (the terminal closed)."""
        assert self.driver is not None
        try:
            return int(termios.tcgetattr(self.driver.fd)[3])
        except termios.error:
            return None

    def _no_echo(self) -> bool:
        return _no_echo(self._lflag())

    def _unread(self) -> int | None:
        """Bytes typed that the program has not read yet (its terminal's input queue), None where unknown."""
        return None if self.view.watch is None else inqueue.unread(self.view.watch.slave)

    def _limits(self, now: float) -> None:
        if self.ctx.interrupts > self._interrupts:
            self._interrupts = self.ctx.interrupts
            self._feed(Interrupted(self.ctx.interrupts - self._interrupts_before))
        if self.step.deadline is not None and now > self.step.deadline:
            self._feed(Deadline(self.step.deadline_reason))

    def _keyboard(self, now: float) -> None:
        """A person who took the keyboard (commands/watched.py): the pilot pauses, their keys go to the program as they come, and
        when they give it back the screen is looked at afresh."""
        keyboard = self.host.keyboard
        if keyboard is None:
            return
        for kind, data in keyboard.poll():
            if kind == "joined":  # a new watcher sees the screen at once, not at its next change
                self._mirror(now)
            elif kind == "take":
                if self._pending is not None and self._pending.people and self.step.people:
                    self.step.people.withdraw("a person took the keyboard (cursor-pilot watch --take)")
                self._pending, self._typed_by_person = None, 0
                self._feed(Taken(f"pid {data.decode()}"))
                keyboard.told({"t": "taken"})
            elif kind == "keys" and self.pilot.taken and self.driver is not None:
                self.driver.write(data)
                self.recorder.input(data, secret=self._no_echo())
                self._typed_by_person += len(data)
            elif kind == "give":
                self._feed(HandedBack(f"pid {data.decode()}", self._typed_by_person))
                self.view.look_at = now
                keyboard.told({"t": "given"})

    def _close(self, e: Close) -> None:
        """End the program as the pilot says: its quit keys (in the typist), else SIGINT; SIGKILL `kill_after` later."""
        assert self.driver is not None
        if not self.driver.alive():
            return
        self._pending = None
        self.host.shared(e.record)
        if not e.keys:
            self.driver.signal_group(signal.SIGINT)
            self.driver.signal_group(signal.SIGCONT)  # a stopped program takes its SIGINT only once continued
        self._kill_at, self._on_kill = self.clock.monotonic() + e.kill_after, e.on_kill

    def _kill_if_due(self, now: float) -> None:
        assert self.driver is not None
        if self._kill_at is not None and now >= self._kill_at and self.driver.alive():
            if self._on_kill is not None:
                self.host.shared(self._on_kill)
            self.driver.signal_group(signal.SIGKILL)
            self._kill_at = None
