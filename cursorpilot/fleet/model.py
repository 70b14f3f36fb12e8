"""The fleet file (docs/fleet.md): `defaults` and `tasks`, validated like a plan, every error with its file, line and
column and, for a mistyped key, the key it probably meant.

A task is one `cursor-pilot run`: its own text for a program or an agent (`task`), a whole command line (`command`) or
a plan (`plan`), with any default overridden. Relative paths are the fleet file's, so a fleet reads the same from any
folder. Besides the fleet's own keys (`Own`, `Task`), every key is a `run` option: `models()` adds them, one per
RunArgs field that fleet/options.py passes on, with the field's type and range.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from cursorpilot.durations import parse_duration
from cursorpilot.errors import BadInput
from cursorpilot.fleet.options import DURATIONS, Passed, Picked, passed, picked
from cursorpilot.fleet.options import Field as OptionField
from cursorpilot.yamlpos import explain, load_with_positions, where

SHAPE = "; a fleet file is a mapping: {name: NAME, defaults: {...}, tasks: [{id: ID, task: TEXT}, ...]}"
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a folder's and a branch's name as it is (cursor-pilot/<fleet>/<id>)
Isolation = Literal["worktree", "copy", "none"]
PROGRAM = "pty"  # `channel: pty`: a program on a terminal; the agents' channels are named by their `run` flag (Picked)


def _duration(value: object) -> str | None:
    """Kept as written (the run reads it again), checked now."""
    if value is None:
        return None
    try:
        parse_duration(str(value))
    except BadInput as exc:
        raise ValueError(str(exc)) from None
    return str(value)


def _words(value: object) -> object:
    return shlex.split(value) if isinstance(value, str) else value


class Own(BaseModel):
    """What `defaults` sets and a task may override that the fleet spells its own way: the program, the agent and its
    channel (`run`'s command, --agent, --acp, --headless), and where the task works."""

    model_config = ConfigDict(extra="forbid")

    program: list[str] | None = None  # a program on a terminal; a task's text is its last argument
    agent: str | None = None  # a known agent (claude, cursor, gemini, codex), driven over `channel`
    channel: str | None = None  # pty (a program), or an agent's channel: acp (an agent's default), headless (its print mode)
    isolation: Isolation | None = None
    repo: str | None = None  # worktree: the repository (default: the fleet file's folder)
    base: str | None = None  # worktree: where its branch starts (default: HEAD)
    source: str | None = None  # copy: the folder copied
    env: dict[str, str] | None = None

    _p = field_validator("program", mode="before")(lambda cls, v: _words(v))

    @field_validator("env", mode="before")
    @classmethod
    def _text_values(cls, v: object) -> object:
        return {str(k): str(x) for k, x in v.items()} if isinstance(v, dict) else v


class Task(Own):
    """A task: the fleet's own keys, what it runs, and (in the model `models()` makes) each `run` option's key."""

    passed: ClassVar[tuple[Passed, ...]] = ()  # the `run` options this model takes (fleet/options.py)
    picked: ClassVar[tuple[Picked, ...]] = ()  # the agent channels its `channel:` may name, beside pty

    id: str
    task: str | None = None  # the task's text: the program's last argument, or the agent's first prompt
    command: list[str] | None = None  # a whole command line, driven on a terminal
    plan: str | None = None  # a plan file (docs/plans.md)

    _c = field_validator("command", mode="before")(lambda cls, v: _words(v))

    @field_validator("id")
    @classmethod
    def _an_id(cls, v: str) -> str:
        if not ID.match(v):
            raise ValueError(f"{v!r} is not an id: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit")
        return v

    @model_validator(mode="after")
    def _one_kind(self) -> Task:
        kinds = [k for k in ("task", "command", "plan") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a task needs exactly one of task, command, plan (found: {', '.join(kinds) or 'none'})")
        if self.command is not None and not self.command:
            raise ValueError("command: needs a command line")
        return self

    def paths(self) -> tuple[str, ...]:
        """Its keys that name a file or a folder: found from the fleet file's folder, and checked to be there."""
        return (*(p.key for p in self.passed if p.kind == "path"), "repo", "source", "plan")


class FleetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    defaults: Own = Field(default_factory=Own)
    tasks: list[Task] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _a_name(cls, v: str | None) -> str | None:
        if v is not None and not ID.match(v):
            raise ValueError(f"{v!r} is not a name: letters, digits, '.', '_' and '-' (it names the branches cursor-pilot/{v}/<task>)")
        return v


def _field(p: Passed) -> tuple[object, object]:
    """A `run` option as a fleet key: its type and range, read from its RunArgs field."""
    kind = {"flag": bool, "int": int, "float": float, "str": str, "path": str, "list": list[str]}[p.kind]
    return kind | None, Field(default=None, ge=p.min, le=p.max)  # type: ignore[operator]


@functools.lru_cache(maxsize=4)
def models(passed: tuple[Passed, ...], channels: tuple[Picked, ...] = ()) -> tuple[type[Own], type[Task], type[FleetFile]]:
    """The fleet file's models with a key per `run` option (fleet/options.py): `defaults`, a task, the file; `channel:`
    takes pty or a channel `run` has a flag for (`channels`)."""
    named = Literal[(PROGRAM, *(c.name for c in channels))]  # type: ignore[valid-type]
    fields: dict[str, Any] = {p.key: _field(p) for p in passed} | {"channel": (named | None, None)}
    durations = [d for d in DURATIONS if d in fields]

    def checked() -> dict[str, Any]:
        return {"_d": field_validator(*durations, mode="before")(lambda cls, v: _duration(v))} if durations else {}

    settings = create_model("Settings", __base__=Own, __validators__=checked(), **fields)
    task = create_model("Task", __base__=Task, __validators__=checked(), **fields)
    task.passed = passed
    task.picked = channels
    file = create_model("FleetFile", __base__=FleetFile, defaults=(settings, Field(default_factory=settings)),
                        tasks=(list[task], Field(min_length=1)))  # type: ignore[valid-type]
    return settings, task, file


class Fleet:
    """A fleet file read and checked: its tasks, each with its defaults applied and its paths made absolute."""

    def __init__(self, path: Path, file: FleetFile):
        self.path = path.resolve()
        self.name = file.name or re.sub(r"[^A-Za-z0-9._-]", "-", path.stem) or "fleet"
        self.tasks = [resolved(t, file.defaults, self.path.parent) for t in file.tasks]

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)


def resolved(task: Task, defaults: Own, home: Path) -> Task:
    """The task with the defaults it does not override, its env added to theirs, and its files found from `home`."""
    own = task.model_dump(exclude_unset=True)
    merged = {**defaults.model_dump(exclude_unset=True), **own}
    merged["env"] = {**(defaults.env or {}), **(task.env or {})}
    for key in task.paths():
        if merged.get(key):
            merged[key] = str((home / Path(merged[key]).expanduser()).resolve())
    prompt = merged.get("prompt")
    if prompt and (home / prompt).is_file():  # a prompt file; else its text (the run tells a one-word typo apart)
        merged["prompt"] = str((home / prompt).resolve())
    out = type(task).model_validate(merged)
    if out.isolation == "worktree" and not out.repo:
        out.repo = str(home)
    return out


def load_fleet(path: Path, run_fields: Mapping[str, OptionField]) -> Fleet:
    """The fleet file at `path`, its tasks' keys `run`'s options (RunArgs.FIELDS, handed in: fleet/options.py)."""
    defaults_model, task_model, file_model = models(passed(run_fields), picked(run_fields))
    data, positions = load_with_positions(path, hint=SHAPE)
    if not isinstance(data, dict):
        raise BadInput(f"{path}:1:1: a fleet file is a mapping{SHAPE}")
    try:
        file = file_model.model_validate(data)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        fields = task_model.model_fields if loc[:1] == ("tasks",) and len(loc) > 2 else defaults_model.model_fields \
            if loc[:1] == ("defaults",) else file_model.model_fields
        msg, at = explain(exc, positions, fields)
        raise BadInput(f"{path}{where(positions, at)}: {_named(data, at)}{msg}") from None
    seen: dict[str, int] = {}
    for i, t in enumerate(file.tasks):
        if t.id in seen:
            raise BadInput(f"{path}{where(positions, ('tasks', i, 'id'))}: task id {t.id!r} is already task {seen[t.id] + 1}'s")
        seen[t.id] = i
    fleet = Fleet(path, file)
    for i, t in enumerate(fleet.tasks):
        problem = _unrunnable(t)
        if problem:
            raise BadInput(f"{path}{where(positions, ('tasks', i))}: task {t.id!r}: {problem}")
    return fleet


def _named(data: dict, loc: tuple) -> str:
    """`task 3 (fix-12): ` before an error inside a task."""
    if len(loc) < 2 or loc[0] != "tasks" or not isinstance(loc[1], int):
        return ""
    tasks = data.get("tasks") or []
    item = tasks[loc[1]] if loc[1] < len(tasks) and isinstance(tasks[loc[1]], dict) else {}
    return f"task {loc[1] + 1}" + (f" ({item['id']})" if isinstance(item.get("id"), str) else "") + ": "


def _unrunnable(t: Task) -> str:
    """What keeps a task, defaults applied, from being a run: said now, not when its turn comes."""
    if t.task is not None and not (t.program or t.agent):
        return "task: needs a program or an agent to give it to (in defaults or in the task)"
    if t.program and t.agent:
        return "program and agent are two ways to run a task: give one"
    if t.channel == PROGRAM and t.agent:
        return "channel: pty drives a program: give program: (an agent on a terminal is a program: [cursor-agent])"
    if t.isolation == "copy" and not t.source:
        return "isolation: copy needs source: (the folder copied for each task)"
    for key in ("plan", *t.paths()):
        value = getattr(t, key)
        if value and not Path(value).exists():
            return f"{key}: not found: {value}"
    if t.isolation == "worktree" and not (Path(t.repo or ".") / ".git").exists():
        return f"isolation: worktree needs a git repository: {t.repo} is not one (repo: names it)"
    return ""
