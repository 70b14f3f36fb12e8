"""Plans: YAML files of steps, validated with line and column in every error.

A step is exactly one kind of step: a key a channel's entry declares (channels/registry.py), such as ``run`` (shell
commands) or ``drive`` (a command line on the PTY). The plan reads the registry's entries (a light module, which imports
nothing of the program), so a new channel's key is a plan key with nothing written here but a line for the type checker.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cursorpilot.channels.registry import CHANNELS, COMMAND
from cursorpilot.durations import parse_duration
from cursorpilot.errors import BadInput
from cursorpilot.decide.policy import rule_ids
from cursorpilot.providers.rules import RuleEntry
from cursorpilot.yamlpos import load_with_positions, where

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


StepKind = StrEnum("StepKind", {key.upper(): key for key in CHANNELS}, module=__name__)  # type: ignore[misc]
StepKind.__doc__ = """What a step does: the key it is written with in a plan (the user's words), and the channel that drives it. Each
is a channel's entry in channels/registry.py, which declares the key, what it holds and what its step needs; nothing
here names one."""
INTERACTIVE = tuple(StepKind(c.key) for c in CHANNELS.values() if c.answers)  # the kinds that drive a program and answer it


def _duration(value: object) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(str(value))
    except BadInput as exc:
        raise ValueError(str(exc)) from None


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")

    regex: str | None = None  # seen on screen -> the step is done; checked again at the end
    exit_code: int | None = None

    @field_validator("regex")
    @classmethod
    def _valid_regex(cls, v: str | None) -> str | None:
        if v is not None:
            re.compile(v)
        return v


class DoneWhen(BaseModel):
    """A step's goal check (docs/turns.md): a shell command run at each turn end; exit 0 means the goal is met."""

    model_config = ConfigDict(extra="forbid")

    run: str
    timeout: float | None = None

    _t = field_validator("timeout", mode="before")(lambda cls, v: _duration(v))

    @field_validator("run")
    @classmethod
    def _a_command(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("done_when needs a command, e.g. done_when: pytest -q")
        return v


class Defaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout: float | None = None
    profile: str | None = None
    max_steps: int | None = Field(default=None, ge=1)
    max_turns: int | None = Field(default=None, ge=1)

    _t = field_validator("timeout", mode="before")(lambda cls, v: _duration(v))


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    # a field per kind of step, in the registry's order: its key, holding what its entry says (`run: [...]`, `acp: TASK`)
    __annotations__.update({c.key: f"{c.value} | None" for c in CHANNELS.values()})
    locals().update(dict.fromkeys(CHANNELS))
    agent: list[str] | str | None = None  # an agent's step: a known agent (cursor, gemini, claude, codex) or its command line
    allow_failure: bool = False
    send: str | None = None
    expect: Expect | None = None
    timeout: float | None = None
    max_steps: int | None = Field(default=None, ge=1)
    done_when: DoneWhen | None = None  # the goal check: a command, or {run: COMMAND, timeout: 5m}
    max_turns: int | None = Field(default=None, ge=1)
    profile: str | None = None
    prompt: str | None = None
    answers: list[RuleEntry] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    _t = field_validator("timeout", mode="before")(lambda cls, v: _duration(v))
    _d = field_validator("done_when", mode="before")(lambda cls, v: {"run": v} if isinstance(v, str) else v)

    if TYPE_CHECKING:  # the kinds' fields for the type checker, as the entries declare them (after validation: a `drive:`
        # string is split into its words); tests/unit/test_registry_one_entry.py holds these lines to the entries
        run: list[str] | None
        cursor: list[str] | None
        drive: list[str] | None
        acp: str | None
        headless: str | None

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        kinds = [k for k in StepKind if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a step needs exactly one of {', '.join(StepKind)} (found: {', '.join(kinds) or 'none'})")
        channel = CHANNELS[kinds[0]]
        if channel.words and isinstance(getattr(self, channel.key), str):
            setattr(self, channel.key, shlex.split(getattr(self, channel.key)))
        if channel.words and not getattr(self, channel.key):
            raise ValueError(f"{channel.key}: needs a command")
        if channel.agent and not self.agent:
            raise ValueError(f"{_an(channel.key)}: step needs agent: ({channel.agent}, or a command line)")
        if self.agent is not None and not channel.agent:
            with_agent = " or ".join(f"{c.key}:" for c in CHANNELS.values() if c.agent)
            raise ValueError(f"agent: belongs to {_an(with_agent)} step")
        if not channel.answers and (self.done_when is not None or self.max_turns is not None):
            raise ValueError(f"done_when and max_turns belong to a step that drives a program ({', '.join(INTERACTIVE)}), not to {channel.key}:")
        return self

    @property
    def kind(self) -> StepKind:
        return next(k for k in StepKind if getattr(self, k) is not None)


def _an(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    vars: dict[str, str] = Field(default_factory=dict)
    defaults: Defaults = Field(default_factory=Defaults)
    prompt: str | None = None
    answers: list[RuleEntry] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(min_length=1)

    @field_validator("allow")
    @classmethod
    def _known_rules(cls, v: list[str]) -> list[str]:
        unknown = sorted(set(v) - set(rule_ids()))
        if unknown:
            raise ValueError(f"unknown deny rule(s) {', '.join(unknown)}; known: {', '.join(rule_ids())}")
        return v


def single_command_plan(command: list[str], task: str | None = None, kind: str | None = None) -> Plan:
    """`-- COMMAND`: one drive step (registry.COMMAND), or, through an agent's channel (`kind`: the plan key of the channel a flag or
    --agent picks, channels/registry.py), one step of that kind whose first prompt is the task."""
    name = os.path.basename(command[0])
    if task is not None and kind is not None:
        return Plan(name="command", steps=[Step.model_validate({"name": name, kind: task, "agent": command})])
    return Plan(name="command", steps=[Step.model_validate({"name": name, COMMAND: command})])


def _substitute(data: object, variables: dict[str, str], path: tuple, positions, source: Path) -> object:
    if isinstance(data, str):
        def repl(m: re.Match[str]) -> str:
            if m.group(1) not in variables:
                raise BadInput(f"{source}{where(positions, path)}: unknown variable ${{{m.group(1)}}}")
            return variables[m.group(1)]
        return _VAR.sub(repl, data)
    if isinstance(data, dict):
        return {k: _substitute(v, variables, (*path, k), positions, source) for k, v in data.items()}
    if isinstance(data, list):
        return [_substitute(v, variables, (*path, i), positions, source) for i, v in enumerate(data)]
    return data


def load_plan(path: Path) -> Plan:
    data, positions = load_with_positions(path)
    if not isinstance(data, dict):
        raise BadInput(f"{path}:1:1: a plan is a mapping with name and steps")
    raw_vars = data.get("vars") or {}
    if isinstance(raw_vars, dict):
        variables = {str(k): str(v) for k, v in raw_vars.items()}
        data = {**data, "steps": _substitute(data.get("steps"), variables, ("steps",), positions, path)}
        if "prompt" in data:
            data["prompt"] = _substitute(data["prompt"], variables, ("prompt",), positions, path)
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if p not in ("function-after[_one_kind(), Step]",))
        msg = err["msg"].removeprefix("Value error, ")
        dotted = ".".join(str(p) for p in loc)
        raise BadInput(f"{path}{where(positions, loc)}: {dotted + ': ' if dotted else ''}{msg}") from None


def plan_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
