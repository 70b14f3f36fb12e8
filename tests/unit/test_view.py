"""ScreenView's bookkeeping between two looks (pty/view.py): when the loop classifies the screen again."""

from __future__ import annotations

from cursorpilot.channels.pty import kernel
from cursorpilot.channels.pty.screen import TerminalScreen
from cursorpilot.channels.pty.view import KERNEL_EVERY, ScreenView


class _Kernel:
    """The kernel's word on the foreground process, as the test says it is (kernel.TtyWatch's one method)."""

    def __init__(self, word: str | None):
        self.word = word

    def state(self, now: float) -> str | None:
        return self.word


def _view(word: str | None) -> tuple[ScreenView, _Kernel]:
    view = ScreenView(TerminalScreen(80, 24), 0.0)
    watch = _Kernel(word)
    view.watch = watch  # type: ignore[assignment]
    return view, watch


def test_a_prompt_judged_while_busy_is_looked_at_again_once_the_program_reads_its_terminal():
    """whiptail's next box, classified a moment after the answer while the script was still starting it: the full
    400 ms settle applied and the next look was 0.38 s away; the kernel saying it now reads its terminal must bring
    the look forward (its prompt is complete), not wait out the timer."""
    view, watch = _view(kernel.BUSY)
    view.look_at = 0.0
    due, tty = view.look_due(0.05, None)
    assert due and tty == kernel.BUSY
    view.look_at, view.judged_tty = 0.05 + 0.38, tty  # the classifier said: settling, look again in 0.38 s
    watch.word = kernel.READING
    due, tty = view.look_due(0.05 + KERNEL_EVERY, None)
    assert due and tty == kernel.READING


def test_a_program_that_turns_to_polling_is_looked_at_when_the_classifier_said():
    """The mirror: a poller may wait on something else too (ssh: its terminal and its socket, while the remote command
    runs): its still screen is not brought forward to be judged."""
    view, watch = _view(kernel.BUSY)
    view.look_at, view.judged_tty = 0.43, kernel.BUSY
    watch.word = kernel.POLLING
    assert view.look_due(0.1, None) == (False, kernel.POLLING)
    assert view.look_due(0.43, None) == (True, kernel.POLLING)


def test_a_first_screen_judged_while_starting_is_looked_at_again_once_the_program_polls_its_terminal():
    """vim draws its first screen while it starts: classified busy (or with no word yet) it got the full 400 ms
    settle. Before anything was answered, no screen can be a program still at work on an answer of ours: the kernel's
    word that it now polls its terminal brings the look forward, once (the classifier's poll settle decides)."""
    view, watch = _view(kernel.BUSY)
    view.look_at, view.judged_tty = 0.43, kernel.BUSY
    watch.word = kernel.POLLING
    assert view.look_due(0.1, None, answered=False) == (True, kernel.POLLING)
    view.look_at, view.judged_tty = 0.15, kernel.POLLING  # looked at with it: settling, the classifier's recheck
    assert view.look_due(0.1 + KERNEL_EVERY, None, answered=False) == (False, kernel.POLLING)


def test_a_polling_program_judged_as_polling_waits_for_its_recheck():
    """The mirror: the fast settle of a polling program was already applied; its look comes when the classifier said."""
    view, _ = _view(kernel.POLLING)
    view.look_at, view.judged_tty = 0.2, kernel.POLLING
    assert view.look_due(0.1, None) == (False, kernel.POLLING)
    assert view.look_due(0.2, None) == (True, kernel.POLLING)


def test_a_busy_program_left_to_work_is_looked_at_when_it_turns_to_its_terminal():
    """A program the pilot left to work (a wake 0.25 s away) that now reads its terminal is looked at at once."""
    view, watch = _view(kernel.BUSY)
    view.judged_tty = kernel.BUSY
    assert view.look_due(1.0, 1.25) == (False, kernel.BUSY)
    watch.word = kernel.READING
    assert view.look_due(1.0 + KERNEL_EVERY, 1.25) == (True, kernel.READING)


def test_nothing_pending_nothing_due():
    view, _ = _view(kernel.READING)
    assert view.look_due(1.0, None) == (False, None)  # the kernel is not even asked


def test_a_program_that_turns_to_reading_with_nothing_new_shown_is_quiet_only_from_then():
    """A script printed a line, slept 0.3 s (busy), then wrote its prompt and blocked in read(): the kernel said
    reading before the prompt had crossed the pty, and the 0.3 s of quiet since the line counted as the settle: the
    line alone was judged (and escalated) as the question. Silence while busy says nothing of a prompt: the quiet
    counts from the word. The mirror: a prompt written after the last word (the usual way) keeps its quiet."""
    view, watch = _view(kernel.BUSY)
    view.fed(13, 0.0)
    view.render(0.02)
    view.look_at = 0.1
    assert view.look_due(0.1, None) == (True, kernel.BUSY) and view.quiet_from == float("-inf")
    watch.word = kernel.READING
    assert view.look_due(0.3, None)[1] == kernel.READING
    assert view.quiet_from == 0.3  # nothing was shown since the busy word: the quiet starts now

    view, watch = _view(kernel.BUSY)
    view.look_at = 0.1
    view.look_due(0.1, None)
    view.fed(16, 0.25)  # the prompt, after the busy word
    view.render(0.27)
    watch.word = kernel.READING
    assert view.look_due(0.3, None)[1] == kernel.READING and view.quiet_from == float("-inf")
