"""The agent loops dispatch their pilots' effects exhaustively (channels/agent/loop.py): mypy rejects a loop that
leaves an effect of its channel unhandled (`assert_never`), and an effect that comes anyway raises. It was dropped in
silence (acp/loop.py's and headless/loop.py's `_carry_out` ended in an `elif` with no `else`), while the PTY loop
raised: a pilot that returned an effect nobody carried out hung its step with nothing said."""

from dataclasses import dataclass

import pytest

from cursorpilot.channels.acp import facts as acp
from cursorpilot.channels.acp.loop import AcpLoop
from cursorpilot.channels.headless import facts as headless
from cursorpilot.channels.headless.loop import HeadlessLoop


@dataclass(frozen=True)
class Stray:
    """An effect no channel declares."""


def bare(loop: type) -> object:
    """The loop without its step: the dispatch reads nothing of the loop before it has matched the effect."""
    return object.__new__(loop)


@pytest.mark.parametrize("loop", [AcpLoop, HeadlessLoop])
def test_an_effect_no_loop_carries_out_raises_instead_of_being_dropped(loop):
    with pytest.raises(AssertionError):
        loop._apply(bare(loop), [Stray()])


def test_an_effect_of_the_other_agent_channel_raises_too():
    with pytest.raises(AssertionError):
        HeadlessLoop._apply(bare(HeadlessLoop), [acp.OpenSession(load=None)])
    with pytest.raises(AssertionError):
        AcpLoop._apply(bare(AcpLoop), [headless.EndInput()])


def test_a_loops_own_effects_are_carried_out():
    """The mirror: what the channel declares goes through (a reply to a request nobody waits for any more, the input
    of a turn that has no process: each is a no-op here, and no error)."""
    step = bare(AcpLoop)
    step._waiting = {}
    AcpLoop._apply(step, [acp.Reply(token=1, payload={}), acp.Refuse(token=2, error=acp.REFUSED, message="no", target="x")])
    turn = bare(HeadlessLoop)
    turn._proc = None
    HeadlessLoop._apply(turn, [headless.EndInput()])
