"""A task as the `cursor-pilot run` that does it: its options, in the order `run --help` lists them (each with the flag
its RunArgs field declares: fleet/options.py), then what it runs. The unit of a fleet is exactly that run (the same
options, the same records, the same exit codes), so nothing of a run is done twice here.

Written as plain data (UnitSpec, picklable): the local engine starts it on this machine, the Ray engine on a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cursorpilot.fleet.model import Task


@dataclass(frozen=True)
class Isolated:
    """Where a task works, and how that folder is made (isolation.py)."""

    kind: str  # worktree | copy | none
    folder: str  # the task's working folder (absolute)
    repo: str = ""  # worktree: the repository
    base: str = "HEAD"  # worktree: where the branch starts
    branch: str = ""  # worktree: cursor-pilot/<fleet>/<task>
    source: str = ""  # copy: the folder copied


@dataclass(frozen=True)
class UnitSpec:
    """One task's run, as a unit hands it to a process: everything it needs, nothing of the fleet's state."""

    fleet_dir: str
    task: str
    run_dir: str  # the run's folder (`--log`); a folder holding a run is continued (`--resume`)
    options: tuple[str, ...]  # `run`'s options and what it runs, after `cursor-pilot run`
    place: Isolated
    env: dict[str, str] = field(default_factory=dict)
    key: str = ""  # hex: the key the run signs its page's links with (handed over on stdin), "" without an inbox
    inbox: bool = False  # the run serves its decision page, for the fleet's inbox
    resume: bool = False


def run_options(t: Task) -> list[str]:
    """`run`'s options for the task (its working folder, --log and --listen are the unit's)."""
    out: list[str] = []
    for p in sorted(t.passed, key=lambda p: p.kind == "list"):  # a list's items last, each after its flag (--answer A --answer B)
        value = getattr(t, p.key)
        if p.kind == "list":
            out += [w for item in value or [] for w in (p.flag, item)]
        elif p.kind == "flag":
            out += [p.flag] if value else []
        elif value is not None:
            out += [p.flag, str(value)]
    if t.plan is not None:
        return [*out, "--plan", t.plan]
    if t.command is not None:
        return [*out, "--", *t.command]
    if t.agent:
        channel = next((c.flags for c in t.picked if c.name == t.channel), [])
        return [*out, "--agent", t.agent, *channel, "--task", t.task or ""]
    return [*out, "--", *(t.program or []), t.task or ""]


def place(t: Task, fleet_name: str, folder: str) -> Isolated:
    if t.isolation == "worktree":
        return Isolated("worktree", folder, repo=t.repo or "", base=t.base or "HEAD", branch=f"cursor-pilot/{fleet_name}/{t.id}")
    if t.isolation == "copy":
        return Isolated("copy", folder, source=t.source or "")
    return Isolated("none", folder)
