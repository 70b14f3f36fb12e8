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
from cursorpilot.detect.classifier import Classification
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


def test_a_printed_step_shows_no_secret_given_or_typed():
    """The config holds the secrets --secret types; a secret typed sits in the keys queued and the answer watched:
    printing the step (str or repr), or the pilot, shows none of them. The mirror: what is no secret is shown."""
    p = pilot(secrets={"TOKEN": "s3cr3t-value"})
    password = Classification(state="input", rule_id="generic.password", block="Password:", key="pw@3:Password:", anchor_row=3)
    (ask,) = of(screen(p, 0.0, password, facts()), Ask)
    p.handle(0.1, Decided(ask.token, answer("<secret:TOKEN>"), 1, Modes(), password))
    for shown in (str(p.step), repr(p.step), repr(p)):
        assert "s3cr3t-value" not in shown and "s3cr3t" not in shown
    p = pilot()
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    p.handle(0.1, Decided(ask.token, answer("y"), 1, Modes(), YN))
    assert "data=b'y'" in str(p.step)


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


# Each part owns one record of the step's state and writes no other, but for the few step-wide rules named here.
OWNS = {"step": {"state", "exit_code", "reason"}, "asking": {"questions"}, "answering": {"answering"},
        "turnend": {"turn_ends"}, "quiet": {"quiet"}, "goingon": {"going_on"}}
SHARED = {"typist", "tally", "turns", "limits"}  # the keys queued, and the step's ledgers: told what a part did
ALSO = {  # (part, record): why that part writes another's record
    ("step", "questions"): "a step that ends drops the question being decided",
    ("step", "answering"): "a step that ends watches no answer any more",
    ("answering", "quiet"): "an answer typed restarts the WAIT backoff: whatever the program does next answers to us",
    ("answering", "turn_ends"): "an answer typed: the agent's next idle composer ends its turn",
    ("goingon", "turn_ends"): "an agent told to go on: its next idle composer ends its turn",
    ("quiet", "going_on"): "a stuck turn interrupted: the agent is told to go on once back (goingon.py)",
}
HELD = {"GoOn": "going_on", "Watch": "answering", "Asking": "questions", "TurnEnd": "turn_ends"}
MUTATORS = {"pop", "clear", "append", "update", "forget", "setdefault"}


def _record(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The record of the step's state an expression reaches: s.<record>…, or a name bound to one."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "s":
            return node.attr
        node = node.value
    return aliases.get(node.id) if isinstance(node, ast.Name) else None


def writes(part) -> set[tuple[str, int]]:
    """(record, line) of every assignment into the step's state and every mutating call on it, in a part's functions."""
    out: set[tuple[str, int]] = set()
    for fn in (n for n in ast.walk(ast.parse(Path(part.__file__).read_text())) if isinstance(n, ast.FunctionDef)):
        aliases = {a.arg: HELD[a.annotation.id] for a in fn.args.args
                   if isinstance(a.annotation, ast.Name) and a.annotation.id in HELD}
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                names = n.targets[0].elts if isinstance(n.targets[0], ast.Tuple) else [n.targets[0]]
                values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value] * len(names)
                for name, value in zip(names, values):
                    if isinstance(name, ast.Name) and (r := _record(value, aliases)) is not None:
                        aliases[name.id] = r
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                for one in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(one, (ast.Attribute, ast.Subscript)) and (r := _record(one, aliases)) is not None:
                        out.add((r, one.lineno))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
                if (r := _record(n.func.value, aliases)) is not None:
                    out.add((r, n.lineno))
    return out


def test_each_part_writes_only_its_own_record_but_the_step_wide_rules_named():
    for part in PARTS:
        name = part.__name__.rsplit(".", 1)[1]
        stray = {(r, line) for r, line in writes(part) if r not in OWNS[name] | SHARED and (name, r) not in ALSO}
        assert not stray, f"{name} writes records it does not own: {sorted(stray)}"


def test_the_mirror_a_part_writing_another_s_record_is_found(tmp_path):
    """The check reads writes through the state, through a name bound to a record, and through a held record passed in."""
    code = ("def f(s, r: GoOn):\n    q = s.quiet\n    q.waited.clear()\n    s.answering.watch = None\n    r.dismissed = True\n"
            "    mine, w = s.turn_ends, s.answering.watch\n    w.retries += 1\n")
    (tmp_path / "fake.py").write_text(code)

    class Fake:
        __file__ = str(tmp_path / "fake.py")

    assert {r for r, _ in writes(Fake)} == {"quiet", "answering", "going_on"}
