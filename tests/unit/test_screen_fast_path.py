"""The flood fast path renders exactly what feeding pyte everything renders, scrollback included."""

import collections
import random

import pytest

from cursorpilot.pty import screen as screen_mod
from cursorpilot.pty.screen import TerminalScreen


def render(text_parts, fast, monkeypatch):
    monkeypatch.setattr(screen_mod, "FAST_MIN_CHARS", 64 * 1024 if fast else 10**12)
    s = TerminalScreen(120, 40)
    s._screen.scrollback = collections.deque(maxlen=10**6)
    for part in text_parts:
        s.feed(part.encode())
        s.flush()
    return s.snapshot(), s.scrollback(), s.fast_lines


@pytest.mark.parametrize("seed", range(12))
def test_fast_path_is_equivalent(seed, monkeypatch):
    rnd = random.Random(seed)
    pre = "".join(f"pre {i}\r\n" for i in range(rnd.randint(0, 60))) + ("partial " if rnd.random() < 0.5 else "")
    longest = rnd.choice([100, 118, 120, 130])  # some batches hold lines that wrap
    body = "".join(
        ("\x1b[32m" if rnd.random() < 0.2 else "") + f"line {i} " + "x" * rnd.randint(0, longest - 12)
        + ("\x1b[0m" if rnd.random() < 0.2 else "") + ("\x1b[2K" if rnd.random() < 0.002 else "") + "\r\n"
        for i in range(rnd.randint(30, 3000))
    )
    tail = "Continue? [y/n] " if rnd.random() < 0.7 else ""
    chunk = rnd.choice([4096, 70000, 300000, 10**7])
    parts = [pre, *(body[i : i + chunk] for i in range(0, len(body), chunk)), tail]
    fast_snap, fast_back, _ = render(parts, True, monkeypatch)
    slow_snap, slow_back, _ = render(parts, False, monkeypatch)
    assert fast_snap.lines == slow_snap.lines
    assert (fast_snap.cursor_x, fast_snap.cursor_y, fast_snap.scrolled) == (slow_snap.cursor_x, slow_snap.cursor_y, slow_snap.scrolled)
    assert fast_back == slow_back


def test_fast_path_is_taken_for_a_plain_flood(monkeypatch):
    body = "".join(f"line {i:06d} " + "x" * 40 + "\r\n" for i in range(20000)) + "Continue? [y/n] "
    snap, back, fast = render([body], True, monkeypatch)
    assert fast > 19000
    assert snap.lines[-1] == "Continue? [y/n]" and back[0] == "line 000000 " + "x" * 40


def test_terminal_queries_are_answered_at_once_even_when_queued():
    s = TerminalScreen(80, 24)
    s.feed(b"hello\x1b[6n")
    assert s.take_replies() == b"\x1b[1;6R"
