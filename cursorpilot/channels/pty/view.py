"""What the PTY loop knows of the program's screen between two looks: the rendered screen, when it last changed, when
to render it again, what the kernel says of the program. I/O-free bookkeeping for pty/loop.py.

A screen is rendered when output pauses for RENDER_PAUSE (a prompt is complete), or at most every RENDER_EVERY while it
keeps streaming (less often in a flood: each render is a pass over it); a repaint with equal content is no change.
The kernel is asked at most every KERNEL_EVERY, and only while output is quiet (a program that streams is not waiting);
its word is never older than the last output (a reader that took its key and wrote more is no longer the reader it was).

A change confined to digits and spinner glyphs (a clock, an uptime, a spinner) is a tick, not activity, while the
kernel says the program waits on its terminal: `quiet_since` counts from the last change of anything else. A full-screen
program with a clock redrawn every second never went quiet, and its prompt was never judged.
"""

from __future__ import annotations

from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.channels.pty import kernel
from cursorpilot.channels.pty.held import steady
from cursorpilot.channels.pty.screen import TerminalScreen

RENDER_EVERY = 0.1  # re-render a screen that keeps changing at most this often
RENDER_PAUSE = 0.02  # ...and whenever output has paused this long (a prompt is complete; not every 20 ms of a stream)
FLOOD_BYTES = 1 << 20  # more output than this since the last render is a flood:
FLOOD_RENDER_EVERY = 0.5  # render it less often (each render then costs a pass over the flood)
KERNEL_EVERY = 0.03  # how often the kernel is asked whether the program waits on its terminal


class ScreenView:
    def __init__(self, screen: TerminalScreen, now: float):
        self.screen = screen
        self.last_output = self.last_change = now
        self.dirty = False
        self.unrendered = 0
        self.version = 0  # changes when what is shown changes (a repaint with equal content does not)
        self.look_at: float | None = None  # classify again at this time (the screen changed, or the pilot asked)
        self.last_render = 0.0
        self._content: tuple[str, ...] = ()
        self._steady: tuple[str, ...] = ()  # the content with its ticks masked (quiet.steady)
        self.last_steady = now  # when the content last changed in more than its ticks
        self._tty: str | None = None
        # the quiet that tells a reader's prompt is complete counts from here, not from the last change, when the program
        # turned to reading with nothing new on screen since it was last seen not reading: it was silent while busy (a
        # script's `sleep`), and the prompt it wrote before its read() may still be crossing the pty
        self.quiet_from = float("-inf")
        self._tty_at = 0.0
        self.judged_tty: str | None = None  # the kernel's word the screen was last classified with
        self.watch: kernel.TtyWatch | None = None

    def fed(self, n: int, now: float) -> None:
        self.last_output, self.dirty = now, True
        self.unrendered += n

    def render_due(self, now: float) -> float | None:
        """When the screen should be rendered next, if it changed since the last render."""
        if not self.dirty:
            return None
        return min(self.last_render + RENDER_EVERY, self.last_output + RENDER_PAUSE)

    def render_if_due(self, now: float) -> bool:
        """Render when output paused or every RENDER_EVERY; True when it was rendered."""
        every = FLOOD_RENDER_EVERY if self.unrendered > FLOOD_BYTES else RENDER_EVERY
        if not self.dirty or (now - self.last_render < every and now - self.last_output < RENDER_PAUSE):
            return False
        self.render(now)
        return True

    def render(self, now: float) -> Snapshot:
        self.last_render, self.unrendered, self.dirty = now, 0, False
        snap = self.screen.snapshot()
        content = (*snap.lines, f"{snap.cursor_x},{snap.cursor_y},{snap.scrolled}")
        if content != self._content:
            self._content = content
            self.version += 1
            self.last_change = self.last_output
            self.look_at = now
            still = (*(steady(line) for line in snap.lines), content[-1])  # the cursor, exactly
            if still != self._steady:
                self._steady, self.last_steady = still, self.last_output
        return snap

    def quiet_since(self, tty: str | None) -> float:
        """Since when the screen has been quiet: its last change, or, while the program waits on its terminal, its last
        change beyond a clock's digits and a spinner's glyphs (which a program at its prompt redraws by itself)."""
        last = self.last_steady if tty in (kernel.READING, kernel.POLLING) else self.last_change
        return max(last, self.quiet_from)

    def look_due(self, now: float, wake: float | None, answered: bool = True) -> tuple[bool, str | None]:
        """Is a look at the screen due now, and the kernel's word to judge it with. Due when the screen changed or the
        pilot asked (look_at, wake), and sooner while one is pending when the kernel's word turns to reading: a screen
        classified while the program was still busy with the last key (or the kernel not asked) waits out the full
        settle window, but a prompt of a program that now reads its terminal is complete, so it is classified again
        with that fact (at every turn while it settles). Not so for one that turns to polling: it may wait on
        something else too (ssh polls its terminal and its socket while the remote command runs, and an answered
        question above was judged again before it ended): its look comes when the classifier said. Unless nothing has
        been answered yet (`answered` False): then no screen can be a program still at work on our answer, and the
        word a poller's first screen would have been classified with, had the first look come a moment later (vim
        draws its first screen while it starts: 0.4 s of settle instead of the poll settle), is the word it is
        looked at again with, once."""
        look_at = self.look_at
        pending = look_at is not None or wake is not None
        due = (look_at is not None and now >= look_at) or (wake is not None and now >= wake)
        tty = self.tty(now, pending)
        if not due and pending:
            due = tty == kernel.READING and (look_at is not None or tty != self.judged_tty)
            due = due or (not answered and look_at is not None and tty == kernel.POLLING != self.judged_tty)
        return due, tty

    def tty(self, now: float, ask: bool) -> str | None:
        """The kernel's word on the foreground process (reading | polling | busy | None), asked at most every
        KERNEL_EVERY while output is quiet, and only when `ask` (a look is due); else the last word."""
        if not ask or self.watch is None:
            return self._tty
        if now - self.last_output < 0.02:
            return None  # output is streaming: it is not waiting
        if now - self._tty_at >= KERNEL_EVERY or self._tty_at < self.last_output:  # a word older than the last output
            word = self.watch.state(now)  # is not about the screen shown now: asked again
            if word == kernel.READING and self._tty != kernel.READING and self._tty_at > self.last_output:
                self.quiet_from = now
            self._tty, self._tty_at = word, now
        return self._tty
