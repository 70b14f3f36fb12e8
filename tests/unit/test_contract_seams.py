"""What sits above the channels is named in the channel contract by a Protocol the upper module serves, never imported,
even for the type checker (issue 51): the plan's step, the people, the person watching."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from cursorpilot.channels import contract
from cursorpilot.events import BaseSink
from cursorpilot.human import humans
from cursorpilot.human.humans import Humans
from cursorpilot.plan import Step

ROOT = Path(contract.__file__).parents[2]


def imports(path: Path) -> set[str]:
    """Every module a file imports, at run time or for the type checker."""
    out: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.ImportFrom) and n.module:
            out.add(n.module)
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
    return out


def members(protocol: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(protocol) if not name.startswith("_")}


def test_the_contract_imports_nothing_above_it_and_the_people_nothing_of_the_run_s_sink():
    assert not imports(Path(contract.__file__)) & {"cursorpilot.plan", "cursorpilot.events", "cursorpilot.human.humans"}
    assert "cursorpilot.events" not in imports(Path(humans.__file__))


def test_each_upper_module_serves_the_protocol_that_names_it():
    """What a channel reads of them is there (mypy checks the types; this keeps the names honest at run time too)."""
    assert members(contract.PlanStep) <= set(Step.model_fields) | {"kind"}  # (kind: a property of the plan's step)
    assert members(contract.People) <= members(Humans)
    assert members(contract.StepSink) <= members(BaseSink) and members(humans.Told) <= members(BaseSink)


def test_the_mirror_a_protocol_naming_what_the_upper_module_lacks_is_found():
    class Wider(contract.PlanStep):
        @property
        def surprise(self) -> int: ...

    assert not members(Wider) <= set(Step.model_fields) | {"kind"}
