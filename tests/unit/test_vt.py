"""Escape sequences modern TUIs send: probes answered as xterm answers them, nothing crashes the screen."""

import random

import pytest

from cursorpilot.channels.pty.screen import TerminalScreen

PROBES = [
    (b"\x1b[c", b"\x1b[?6c"),  # DA1
    (b"\x1b[>c", b"\x1b[>41;0;0c"),  # DA2 (pyte used to answer it as DA1)
    (b"\x1b[>0c", b"\x1b[>41;0;0c"),
    (b"\x1b[>q", b"\x1bP>|cursor-pilot("),  # XTVERSION
    (b"\x1b[5n", b"\x1b[0n"),  # DSR: status
    (b"\x1b[6n", b"\x1b[1;1R"),  # DSR: cursor position
    (b"\x1b]10;?\x1b\\", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),  # default colours, answered in the query's own terminator
    (b"\x1b]11;?\x07", b"\x1b]11;rgb:0000/0000/0000\x07"),
    (b"\x1b[?2004$p", b"\x1b[?2004;2$y"),  # DECRQM: known, reset
    (b"\x1b[?2004h\x1b[?2004$p", b"\x1b[?2004;1$y"),  # set
    (b"\x1b[?9999$p", b"\x1b[?9999;0$y"),  # not recognised
    (b"\x1b[?u", b""),  # kitty keyboard: xterm sends nothing; the DA1 that follows tells the program
]


@pytest.mark.parametrize("probe,reply", PROBES, ids=lambda v: repr(v)[:24])
def test_probe_is_answered_like_xterm(probe, reply):
    screen = TerminalScreen(80, 24)
    screen.feed(probe)
    got = screen.take_replies()
    assert got.startswith(reply) if reply else got == b""
    assert screen.snapshot().lines[0] == ""  # nothing of the probe is drawn


@pytest.mark.parametrize("cut", range(1, 8))
def test_probe_split_across_reads_is_answered_once(cut):
    data = b"ab\x1b[>0q\x1b]11;?\x07cd"
    screen = TerminalScreen(80, 24)
    screen.feed(data[:cut])
    screen.snapshot()
    screen.feed(data[cut:])
    screen.snapshot()
    assert screen.take_replies().count(b"cursor-pilot") == 1
    assert screen.snapshot().lines[0] == "abcd"


def test_gemini_start_up_probes_do_not_crash_the_screen():
    """Gemini CLI 0.61 killed the pilot: `Screen.select_graphic_rendition() got an unexpected keyword argument 'private'`."""
    screen = TerminalScreen(80, 24)
    screen.feed(b"\x1b[?u\x1b[c\x1b[>q\x1b[?4m\x1b[>4;1m\x1b[>1u\x1b[<u\x1b[=1;1u\x1b[?5A > Type your message")
    assert screen.snapshot().lines[0] == " > Type your message"
    ignored = screen.ignored
    assert ignored["CSI ? select_graphic_rendition"] == 1 and ignored["CSI ? cursor_up"] == 1
    assert ignored["CSI >…m"] == 1 and ignored["CSI >…u"] == 1 and ignored["CSI <u"] == 1


def test_keypad_and_cursor_key_modes_are_tracked():
    screen = TerminalScreen(80, 24)
    assert not screen.app_cursor_keys and not screen.app_keypad
    screen.feed(b"\x1b[?1h\x1b=")
    assert screen.app_cursor_keys and screen.app_keypad
    screen.feed(b"\x1b[?1l\x1b>")
    assert not screen.app_cursor_keys and not screen.app_keypad


def test_random_escape_soup_never_raises():
    """Malformed and unknown sequences, cut anywhere: the screen keeps drawing what follows them."""
    rng = random.Random(1234)
    alphabet = [b"\x1b", b"[", b"]", b"?", b">", b"<", b"=", b";", b"$", b"9", b"99999999999", b"m", b"u", b"q", b"c", b"n", b"h",
                b"A", b"J", b"r", b"P", b"\\", b"\x07", b"#", b"(", b"x", b"\xff", b"\xe2\x94", b"\n", b"\r", b"\x00", b"\x9b"]
    for _ in range(300):
        screen = TerminalScreen(40, 10)
        soup = b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        for i in range(0, len(soup), rng.randint(1, 7)):
            screen.feed(soup[i : i + 7])
        screen.feed(b"\x1b[0m\x1b[?1l\x1b>\x1b\\\x07\r\nEND")
        snap = screen.snapshot()
        screen.take_replies()
        assert "END" in snap.text() or snap.cursor_y >= 0


def test_string_sequences_are_not_drawn_as_text():
    """Claude Code 2.1 probes kitty graphics with APC G…; pyte drew 'Gi=31,s=1,…' into the composer, and the idle
    composer was no longer recognised."""
    screen = TerminalScreen(80, 24)
    screen.feed(b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\\xe2\x9d\xaf \x1bP+q544e\x1b\\\x1b_Gcut")
    screen.feed(b" across reads\x1b\\")
    assert screen.snapshot().lines[0] == "❯"
    assert screen.take_replies() == b"\x1bP0+r\x1b\\"  # XTGETTCAP: not recognised, as xterm says it
    assert screen.ignored["APC G"] == 2
