"""A key left echoed on its question's line, nothing else changed, was read, not taken: it wants Enter (issue 48,
pty/answering.py); a key the terminal echoed that the program took and went on from wants none (pty/typist.py). Pure:
made-up facts, a fake clock."""

from __future__ import annotations

import pytest

from cursorpilot.channels.pty.answering import echo_held
from cursorpilot.channels.pty.facts import Ask, Decided, ScreenFacts, Type, Typed
from cursorpilot.channels.pty.typist import KeyView, Send, Typist
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.keys import Modes, to_writes
from tests.unit.test_pilot import answer, of, pilot, records, screen

FILES = " files: ~/project\n\n  README.md\n  notes.txt\n\n Type a command at the ':' line, then Enter\n"
PAGER = Classification(state="question", rule_id="generic.pager", block=":", key="generic.pager@6::", anchor_row=6, submit=False)
LINE = Classification(state="input", rule_id="generic.waiting_input", block=":open notes.txt", key="w@6::open notes.txt", anchor_row=6)


def seen(text: str, content: int, echoes: bool | None = False, tty: str = "reading") -> ScreenFacts:
    return ScreenFacts(text=text, content=content, quiet_for=0.1, tty=tty, echoes=echoes)


@pytest.mark.parametrize(("before", "after", "typed", "held"), [
    ("a\n:", "a\n:open notes.txt", "open notes.txt", "open notes.txt"),
    ("? Publish? (y/N) ", "? Publish? (y/N) Yes", "y", "Yes"),  # questionary's confirm without auto-enter
    ("? Publish? (y/N) ", "? Publish? (y/N) y", "yes", "y"),
    ("a\n:", "b\n:q", "q", None),  # another row changed too: the program went on
    ("a\n:", "a\n:x", "q", None),  # not what was typed
    (":", ":", "q", None),  # nothing echoed
    ("? Publish? (y/N) ", "? Publish? (y/N) Yes", "n", None),
])
def test_what_the_questions_line_gained(before, after, typed, held):
    assert echo_held(before, after, typed) == held


def _typed_at_the_colon(p):
    (ask,) = of(screen(p, 0.0, PAGER, seen(FILES + ":", 1)), Ask)
    out = p.handle(0.1, Decided(ask.token, answer("open notes.txt", source="openai:m"), 1, Modes(), PAGER))
    assert [w.data for w in of(out, Type)[0].writes] == [b"open notes.txt"]  # the pager's rule: no Enter
    p.handle(0.2, Typed(1))


def test_trap_a_command_echoed_after_a_colon_gets_one_enter_and_is_not_typed_again():
    p = pilot()
    _typed_at_the_colon(p)
    assert of(screen(p, 0.3, LINE, seen(FILES + ":open notes.txt", 2)), Type) == []  # nothing else may change yet
    out = screen(p, 1.1, LINE, seen(FILES + ":open notes.txt", 2))
    assert [w.data for w in of(out, Type)[0].writes] == [b"\r"]
    assert records(out, "enter_after_echo")[0]["echoed"] == "open notes.txt" and p.answers == 1


@pytest.mark.parametrize("facts", [
    seen(FILES + ":open notes.txt", 2, echoes=True),  # the terminal echoed it: no sign the program holds it
    seen(FILES + ":open notes.txt", 2, tty="busy"),  # the program works on it
    seen(" opened notes.txt\n\n\n\n\n\n:open notes.txt", 2),  # it went on: more changed than the line
])
def test_mirror_no_enter_where_the_echo_is_no_sign_the_program_holds_it(facts):
    p = pilot()
    _typed_at_the_colon(p)
    out = screen(p, 0.3, LINE, facts) + screen(p, 1.1, LINE, facts)
    assert records(out, "enter_after_echo") == [] and not [t for t in of(out, Type) if t.writes[0].data == b"\r"]


def _snap(lines: tuple[str, ...], y: int, x: int) -> Snapshot:
    return Snapshot(lines=lines, cursor_x=x, cursor_y=y, scrolled=0, version=0)


def test_trap_a_key_the_terminal_echoed_and_the_program_went_on_from_gets_no_enter():
    """bash's read -n1 at '[y/n]', then `echo; read -p 'Tag name: '`: the Enter after y answered the next read empty."""
    t = Typist()
    writes = to_writes("y", submit=True, key_delay=0.0, enter_delay=0.01, echo_check=True)
    t.schedule(tuple(writes), now=0.0, paced=True)
    asked = _snap(("Continue? [y/n]",), 0, 16)
    assert [e.data for e in t.step(0.0, KeyView(asked, 1, False, echo=True, keys=True)) if isinstance(e, Send)] == [b"y"]
    echoed = _snap(("Continue? [y/n] y",), 0, 17)
    assert not [e for e in t.step(0.02, KeyView(echoed, 2, False, echo=True, keys=True)) if isinstance(e, Send)]  # no sign
    went_on = _snap(("Continue? [y/n] y", "Tag name:"), 1, 10)
    out = t.step(0.03, KeyView(went_on, 3, False, echo=True, keys=False))
    assert not [e for e in out if isinstance(e, Send)] and [r.type for r in out if hasattr(r, "type")] == ["enter_skipped"]


def test_mirror_a_line_reader_whose_terminal_echoed_the_key_gets_its_enter():
    t = Typist()
    t.schedule(tuple(to_writes("y", submit=True, key_delay=0.0, enter_delay=0.01, echo_check=True)), now=0.0, paced=True)
    t.step(0.0, KeyView(_snap(("Continue? [y/n]",), 0, 16), 1, False, echo=True, keys=False))
    out = t.step(0.02, KeyView(_snap(("Continue? [y/n] y",), 0, 17), 2, False, echo=True, keys=False))
    assert [e.data for e in out if isinstance(e, Send)] == [b"\r"]


def test_trap_a_pagers_q_left_echoed_after_the_colon_is_erased_and_the_line_asked_for():
    """No pager shows its q after its ':': a command line does, and an Enter there would run `q`."""
    p = pilot()
    (ask,) = of(screen(p, 0.0, PAGER, seen(FILES + ":", 1)), Ask)
    p.handle(0.1, Decided(ask.token, answer("q", source="openai:m"), 1, Modes(), PAGER))
    p.handle(0.2, Typed(1))
    echoed = Classification(state="input", rule_id="generic.waiting_input", block=":q", key="w@6::q", anchor_row=6)
    out = screen(p, 1.1, echoed, seen(FILES + ":q", 2))
    assert [w.data for t in of(out, Type) for w in t.writes] == [b"\x7f"]  # the q erased, no Enter
    (again,) = of(out, Ask)
    assert again.c.state == "input" and again.c.submit and again.c.rule_id == "generic.pager.line"
    assert "not a pager" in again.notes[0] and records(out, "read_as_line")[0]["echoed"] == "q"


def test_mirror_less_which_never_echoes_its_q_is_left_to_quit():
    p = pilot()
    (ask,) = of(screen(p, 0.0, PAGER, seen("commit 1\n:", 1)), Ask)
    p.handle(0.1, Decided(ask.token, answer("q", source="openai:m"), 1, Modes(), PAGER))
    p.handle(0.2, Typed(1))
    out = screen(p, 1.1, Classification(state="unknown"), seen("commit 1\n", 2))  # less -X cleared its prompt row and left
    assert records(out, "read_as_line") == [] and not of(out, Type)
