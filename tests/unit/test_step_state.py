"""A PTY step's state is one value you can print, and the pilot's parts are functions of it that return the pilot's own
effects (issue 51): no part holds the pilot, and nothing routes one part's request to another."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from cursorpilot.channels.pty import answering, asking, goingon, quiet, step, turnend
from cursorpilot.channels.pty.facts import Ask, Decided, Typed
from cursorpilot.channels.pty.held import StepState
from cursorpilot.channels.pty.machine import State
from cursorpilot.keys import Modes
from tests.unit.test_pilot import YN, answer, facts, of, pilot, screen

PARTS = (step, asking, answering, turnend, quiet, goingon)
PTY = Path(step.__file__).parent


def test_the_step_prints_whole_as_it_moves():
    p = pilot(send=None)
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    asked = str(p.step)
    assert "state: <State.ASKING_QUESTION" in asked and f"token={ask.token}" in asked and "Continue? [y/n]" in asked
    p.handle(0.2, Decided(ask.token, answer("y"), 1, Modes(), YN))
    typed = str(p.step)
    assert "state: <State.ANSWERING" in typed and "watch=Watch(" in typed and "typed='y'" in typed and "label='<enter>'" in typed
    p.handle(0.3, Typed(1))
    out = str(p.step)
    assert p.state == State.RUNNING and "due=1.1" in out and "content=1" in out  # watched: taken or not, from now on


def test_the_printed_state_leaves_out_what_the_step_was_given():
    """The config holds the secrets --secret types: printing a step must not show them."""
    p = pilot(secrets={"TOKEN": "s3cr3t-value"})
    assert "s3cr3t-value" not in str(p.step) and "config" not in str(p.step).split(": ")[0]


def test_every_field_of_the_step_is_printed_but_its_inputs():
    printed = {line.split(":", 1)[0] for line in str(pilot().step).splitlines() if line and not line.startswith(" ")}
    assert printed == {f for f in StepState.__dataclass_fields__ if f not in ("config", "counts")}


def test_every_part_is_a_function_of_the_step_state_and_none_is_given_the_pilot():
    """Each part's public functions take the step's state first; no part names the pilot, and the wants a part once
    returned for the pilot to route (AskAbout, Escalate, Go, WakeBy…) are gone."""
    for part in PARTS:
        functions = [f for name, f in inspect.getmembers(part, inspect.isfunction) if f.__module__ == part.__name__ and not name.startswith("_")]
        for f in functions:
            first = next(iter(inspect.signature(f).parameters.values()), None)
            takes_state = first is not None and first.annotation in ("StepState", StepState)
            assert takes_state or f.__name__ in ("is_limit", "echo_held", "not_taken_note"), f"{part.__name__}.{f.__name__}"
        tree = ast.parse(Path(part.__file__).read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {a.attr for a in ast.walk(tree) if isinstance(a, ast.Attribute)}
        assert not names & {"Pilot", "View", "Want", "AskAbout", "WakeBy", "Schedule", "TypeAnswer", "_carry"}, part.__name__


def test_the_pilot_carries_out_no_request_of_its_parts():
    """The pilot sequences facts to parts and returns what they return: it has no routing table of their requests."""
    source = (PTY / "pilot.py").read_text()
    assert "_carry" not in source and "Want" not in source
