"""The run's options as a fleet file spells them, derived from `RunArgs` (commands/runargs.py, where every `run` option is
declared once), PURE. A task is one `cursor-pilot run`, so what a task may set is what `run` takes: each `RunArgs`
field is a fleet key of the same name (its type, range and flag read from the field), unless it is listed below, as
spelled by the fleet its own way (`SPELLED`) or left out on purpose (`EXCLUDED`), each with its reason.
tests/unit/test_fleet_options.py holds the fleet to `RunArgs`: a field added there is a fleet key here, or a line below.

The fields are handed in (`passed(RunArgs.FIELDS)`, by commands/fleet.py), never imported: the commands sit above the
fleet, and the fleet importing them back would close a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

# RunArgs fields the fleet file spells its own way (model.py declares them; command.py writes their flags)
SPELLED = {
    "command": "`command:` (a whole command line) or `program:` with the task's `task:` as its last argument",
    "task": "`task:`, an agent's first prompt or a program's last argument",
    "plan": "`plan:`, a task's own (a plan is a whole run: no default)",
    "agent": "`agent:`, with `channel:`",
    "acp": "`channel: acp` (an agent's default)",
    "headless": "`channel: headless`",
}  # (every channel's flag is `channel: NAME`, read off its registry entry by `picked`: the two lines above say so of
#     today's two, and tests/unit/test_registry_one_entry.py holds them to the registry)
# RunArgs fields a fleet's task does not take, and why
EXCLUDED = {
    "cwd": "the task's folder is the fleet's: `isolation:` makes it (work/<id> in the fleet's folder)",
    "log": "each run's records go to the fleet's folder (runs/<id>), where `fleet status` and `fleet resume` read them",
    "listen": "the fleet serves one inbox for every task's questions (`fleet run --listen`)",
    "notify": "the fleet sends the notices, one per question, from its inbox (`fleet run --notify`)",
    "report": "always on: the fleet reads each run's end from its report.json",
    "resume": "`fleet resume` continues a task's run itself (run --resume on its folder)",
    "force": "goes with --resume, which is the fleet's",
    "learn": "a person answers every question at the terminal: a fleet's task has no terminal of a person's",
    "dry_run": "a preview stops at the first question and types nothing: preview one task with `cursor-pilot run --dry-run`",
}
RENAMED = {"answer": "answers"}  # RunArgs field -> fleet key (`answers:` is a list of them)
DURATIONS = ("timeout", "max_wall", "human_timeout", "llm_timeout", "stuck_after")  # checked when the file is read
PYTHON = {"flag": "bool", "int": "int", "float": "float", "str": "str", "path": "str", "list": "list[str]"}


class Field(Protocol):
    """What the fleet reads of a RunArgs field (runargs.Option)."""

    kind: str
    min: float | None
    max: float | None
    channel: str | None  # a channel's flag (channels/registry.py): a fleet names that channel `channel: FLAG`
    by_agent: bool


@dataclass(frozen=True)
class Picked:
    """A channel a fleet's task names (`channel: NAME`): its `run` flag's name, and whether `--agent` alone picks it."""

    name: str
    by_agent: bool = False

    @property
    def flags(self) -> list[str]:
        """What `run` is given for it beside --agent (nothing for the channel --agent picks alone)."""
        return [] if self.by_agent else ["--" + self.name]


@dataclass(frozen=True)
class Passed:
    """A `run` option a fleet key sets: the key, its field in RunArgs, its flag, its kind and range."""

    key: str
    field: str
    flag: str
    kind: str  # flag | int | float | str | path | list
    min: float | None = None
    max: float | None = None


def passed(fields: Mapping[str, Field]) -> tuple[Passed, ...]:
    """Every `run` option a fleet key sets, in `run --help`'s order: the fields neither spelled nor excluded."""
    return tuple(Passed(RENAMED.get(name, name), name, "--" + name.replace("_", "-"), spec.kind, spec.min, spec.max)
                 for name, spec in fields.items() if name not in SPELLED and name not in EXCLUDED and not getattr(spec, "channel", None))


def picked(fields: Mapping[str, Field]) -> tuple[Picked, ...]:
    """The agent channels a task may name (`channel:`), one per channel flag `run` takes (declared by the channel registry's
    entries, read off RunArgs' fields), in `run --help`'s order."""
    return tuple(Picked(name, bool(spec.by_agent)) for name, spec in fields.items() if getattr(spec, "channel", None))
