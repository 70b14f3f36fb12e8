"""An answer's keys go as fast as the program takes them, never faster (pty/typist.py, the profile's `key_pace`).

A fake clock and screen versions: the next key goes once the program has written something since the last key (it read
that key), key_delay_ms later at most; never before the program answered, so two keys are never read as one chunk. The
mirror: `key_pace: fixed` (the agents, which tell a paste from typing by time) keeps the delay whatever the screen does.
"""

from __future__ import annotations

from cursorpilot.detect.profiles import load_profile as load
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.keys import Write, to_writes
from cursorpilot.decide.deliver import Record
from cursorpilot.channels.pty.typist import ECHO_WAIT, KeysOut, KeyView, Send, Typist

SNAP = Snapshot(lines=("? Pick one", "❯ a", "  b", "  c"), cursor_x=0, cursor_y=3, scrolled=0, version=0)


def view(version: int) -> KeyView:
    return KeyView(SNAP, version, False)


def sent(out) -> list[bytes]:
    return [e.data for e in out if isinstance(e, Send)]


def keys(reply: str):
    return tuple(to_writes(reply, submit=False, key_delay=0.06))


def test_paced_keys_go_once_the_program_answered_the_last_one():
    t = Typist()
    t.schedule(keys("<down><down><space>"), now=0.0, paced=True)
    assert sent(t.step(0.0, view(10))) == [b"\x1b[B"]
    # nothing written since the first key: not due before its delay, whatever the loop asks
    assert t.due_at(10) == 0.06
    assert sent(t.step(0.001, view(10))) == []
    # the program redrew (it read the key): the next key is due at once, not 60 ms later
    assert t.due_at(11) <= 0.001
    assert sent(t.step(0.004, view(11))) == [b"\x1b[B"]
    assert sent(t.step(0.005, view(11))) == []  # its answer to the second key has not come yet
    out = t.step(0.009, view(12))
    assert sent(out) == [b" "] and any(isinstance(e, KeysOut) for e in out)
    assert t.due_at(13) is None


def test_a_paced_key_that_changes_nothing_goes_after_the_delay():
    t = Typist()
    t.schedule(keys("<up><enter>"), now=0.0, paced=True)
    t.step(0.0, view(5))
    assert sent(t.step(0.03, view(5))) == []
    assert sent(t.step(0.06, view(5))) == [b"\r"]


def test_fixed_keys_keep_their_delay_even_when_the_screen_answers():
    t = Typist()
    t.schedule(keys("<down><down>"), now=0.0, paced=False)
    t.step(0.0, view(1))
    assert t.due_at(2) == 0.06
    assert sent(t.step(0.01, view(2))) == []
    assert sent(t.step(0.06, view(2))) == [b"\x1b[B"]


def test_a_new_answer_starts_on_its_own_delay_not_on_the_last_answers_output():
    t = Typist()
    t.schedule(keys("<down>"), now=0.0, paced=True)
    t.step(0.0, view(1))
    t.schedule((Write(b"y", 0.2, "y"),), now=1.0, paced=True)
    assert t.due_at(99) == 1.2
    assert sent(t.step(1.1, view(99))) == []


def test_the_agents_profiles_pace_keys_by_time_and_line_programs_by_the_program():
    assert {name: load(name).key_pace for name in ("claude", "codex", "gemini", "cursor")} == dict.fromkeys(
        ("claude", "codex", "gemini", "cursor"), "fixed")
    assert load("generic").key_pace == "reaction"


def test_the_enter_after_typed_text_keeps_its_least_gap_when_paced():
    """enter_delay_ms is a floor (a box that takes fast input for a paste), not a bound: the echo does not hurry it."""
    t = Typist()
    t.schedule(tuple(to_writes("hello", key_delay=0.06, enter_delay=0.2, echo_check=True)), now=0.0, paced=True)
    assert sent(t.step(0.0, view(1))) == [b"hello"]
    assert t.due_at(2) == 0.2
    assert sent(t.step(0.05, view(2))) == []


def test_output_is_no_answer_while_the_terminal_echoes_keys():
    """With echo on, the terminal itself writes each key back: that output says nothing of the program having read it,
    so the keys keep their delay."""
    t = Typist()
    t.schedule(keys("<down><space>"), now=0.0, paced=True)
    t.step(0.0, KeyView(SNAP, 1, False, echo=True))
    assert sent(t.step(0.01, KeyView(SNAP, 2, False, echo=True))) == []
    assert sent(t.step(0.06, KeyView(SNAP, 2, False, echo=True))) == [b" "]


def test_the_enter_after_typed_text_goes_as_soon_as_its_echo_is_drawn():
    """The echo wait looks again when the program draws, not only every RECHECK: Enter follows the echo at once. The
    mirror: output that does not show the text yet leaves Enter waiting, and the next look falls due on RECHECK (no
    busy loop on a version already looked at)."""
    def at(text: str, version: int) -> KeyView:
        return KeyView(Snapshot(lines=(f"name: {text}",), cursor_x=6 + len(text), cursor_y=0, scrolled=0, version=version),
                       version, False)

    t = Typist()
    t.schedule(tuple(to_writes("hello", key_delay=0.06, enter_delay=0.0, echo_check=True)), now=0.0, paced=True)
    assert sent(t.step(0.0, at("", 1))) == [b"hello"]
    assert sent(t.step(0.0005, at("", 1))) == []  # not shown yet
    assert t.due_at(1) == 0.0105
    assert sent(t.step(0.002, at("he", 2))) == []  # part of it: still waiting
    assert t.due_at(2) == 0.012
    assert t.due_at(3) < 0.003  # drawn again: looked at now
    out = t.step(0.003, at("hello", 3))
    assert sent(out) == [b"\r"] and any(isinstance(e, KeysOut) for e in out)


def _line(text: str, version: int, working: bool = False) -> KeyView:
    return KeyView(Snapshot(lines=(f"> {text}",), cursor_x=2 + len(text), cursor_y=0, scrolled=0, version=version), version, False,
                   working=working)


def test_the_enter_after_a_query_waits_while_the_kernel_sees_the_program_at_work_on_it():
    """fzf draws the query at once and filters a long list after it, in other threads: an Enter between took the old
    first item. Paced by the program, Enter waits for the echo and for no thread of it to be running."""
    t = Typist()
    t.schedule(tuple(to_writes("cherry", key_delay=0.06, enter_delay=0.0, echo_check=True)), now=0.0, paced=True)
    assert sent(t.step(0.0, _line("", 1))) == [b"cherry"]
    assert t.enter_waits()
    assert sent(t.step(0.001, _line("cherry", 2, working=True))) == []  # shown, but its matcher runs
    assert sent(t.step(0.011, _line("cherry", 2, working=True))) == []
    out = t.step(0.03, _line("cherry", 3))
    assert sent(out) == [b"\r"] and [e.type for e in out if isinstance(e, Record)] == ["keys_sent"]
    assert not t.enter_waits()


def test_a_program_at_work_for_good_gets_its_enter_after_the_wait_and_a_record_says_so():
    t = Typist()
    t.schedule(tuple(to_writes("cherry", key_delay=0.06, enter_delay=0.0, echo_check=True)), now=0.0, paced=True)
    t.step(0.0, _line("", 1))
    assert sent(t.step(0.001, _line("cherry", 2, working=True))) == []
    out = t.step(0.001 + ECHO_WAIT, _line("cherry", 2, working=True))
    assert sent(out) == [b"\r"]
    assert [e.type for e in out if isinstance(e, Record)] == ["enter_while_working", "keys_sent"]


def test_keys_paced_by_time_do_not_ask_whether_the_program_works():
    """The mirror: the agents' profiles (key_pace: fixed) keep their Enter on the echo and its least gap alone."""
    t = Typist()
    t.schedule(tuple(to_writes("cherry", key_delay=0.06, enter_delay=0.0, echo_check=True)), now=0.0, paced=False)
    t.step(0.0, _line("", 1))
    assert not t.enter_waits()
    assert sent(t.step(0.001, _line("cherry", 2, working=True))) == [b"\r"]
