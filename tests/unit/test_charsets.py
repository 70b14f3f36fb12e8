"""xterm's charsets (issue 39): G0 and G1 start as ASCII, and Shift Out / Shift In switch only to what was designated.
pyte starts G1 as DEC line drawing (the Linux console's): a stray 0x0E in a binary blob drew the prompt after it as
`C⎺┼├␋┼┤␊? [≤/┼]`, and no rule matched it."""

from cursorpilot.detect.classifier import Timing, classify
from cursorpilot.detect.profiles import load_profile
from cursorpilot.channels.pty.screen import TerminalScreen


def shown(data: bytes) -> list[str]:
    screen = TerminalScreen(80, 6)
    screen.feed(data)
    return [line for line in screen.snapshot().lines if line]


def test_a_stray_shift_out_in_a_binary_blob_leaves_the_prompt_after_it_readable():
    blob = bytes(range(0x80, 0x90)) + b"\x0e\x01\x02garbage\r\n"
    screen = TerminalScreen(80, 6)
    screen.feed(blob + b"Continue? [y/n] ")
    snap = screen.snapshot()
    assert snap.lines[1] == "Continue? [y/n]"
    assert classify(load_profile("generic"), snap, Timing(quiet_for=5.0, tty="reading")).rule_id == "generic.yes_no"


def test_shift_out_draws_line_drawing_only_where_g1_was_designated_so():
    assert shown(b"\x1b)0\x0elqqk\x0f ok") == ["┌──┐ ok"]  # ESC ) 0: G1 is line drawing, SO selects it, SI leaves it
    assert shown(b"\x1b(0lqqk\x1b(B ok") == ["┌──┐ ok"]  # ESC ( 0 (what ncurses sends for xterm): G0 itself
    assert shown(b"\x0elqqk\x0f ok") == ["lqqk ok"]  # nothing designated: G1 is ASCII, as in xterm


def test_a_full_reset_makes_g1_ascii_again():
    assert shown(b"\x1b)0\x1bc\x0elqqk") == ["lqqk"]
