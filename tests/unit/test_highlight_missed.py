"""A menu whose highlight never reaches the option chosen gets no Enter, and a person decides: asked when one can be,
the step stopped (exit 3) when none can. The first used to crash the pilot (an escalation while the answer's keys were
still going out was a move the state machine did not know)."""

from __future__ import annotations

import pytest

from cursorpilot.channels.pty.facts import Ask, AskHuman, Decided, KeyDue, Send
from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.pty.typist import KeyView
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.menu import parse
from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes
from tests.unit.test_pilot import answer, facts, of, pilot, records, screen

BLOCK = "? Pick one\n❯ Alpha\n  Beta\n  Gamma"
MENU = Classification(state="menu", rule_id="prompts.menu", block=BLOCK, key="m@1:pick", anchor_row=1, submit=False, menu=parse(BLOCK))


def keys_until_done(p, shown: str) -> list:
    """Every key falling due, on a screen that shows `shown` whatever is typed."""
    snap, out = snapshot_from_text("\n" + shown), []
    for version in range(200):
        if p.key_at() is None:
            break
        out += p.handle(p.key_at(), KeyDue(KeyView(snap, version, False)))
    return out


@pytest.mark.parametrize("interactive", [True, False])
def test_a_highlight_that_never_reaches_the_option_gets_no_enter_and_a_person_decides(interactive):
    p = pilot(interactive=interactive)
    (a,) = of(screen(p, 0.0, MENU, facts()), Ask)
    p.handle(0.1, Decided(a.token, answer("Gamma"), 1, Modes(), MENU))
    out = keys_until_done(p, BLOCK)  # the highlight stays on Alpha
    assert records(out, "menu_check_failed") and b"\r" not in b"".join(e.data for e in of(out, Send))
    if interactive:
        assert p.state == State.AWAITING_INPUT and of(out, AskHuman) and p.exit_code == ExitCode.OK
    else:
        assert p.state == State.ABORTED and p.exit_code == ExitCode.HUMAN_NEEDED


def test_the_mirror_a_highlight_that_reaches_the_option_gets_its_enter():
    p = pilot(interactive=True)
    (a,) = of(screen(p, 0.0, MENU, facts()), Ask)
    p.handle(0.1, Decided(a.token, answer("Gamma"), 1, Modes(), MENU))
    out = keys_until_done(p, "? Pick one\n  Alpha\n  Beta\n❯ Gamma")
    assert not records(out, "menu_check_failed") and b"\r" in b"".join(e.data for e in of(out, Send))
    assert p.state == State.ANSWERING and not of(out, AskHuman)
