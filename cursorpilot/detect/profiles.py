"""Detector profiles: loaded and validated once, from YAML or JSON in detectors/.

A profile is data: rules (id, kind, patterns, scope) plus timing settings and how the
program finishes. Validation is strict so a typo in a profile is an error naming the
file, not a silently dead rule.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from enum import StrEnum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cursorpilot import resources
from cursorpilot.errors import BadInput


class ScreenKind(StrEnum):
    """What a screen is, one name everywhere: what a detector rule says it is (a rule's `kind` in a profile: the first
    seven), or what the readers say of a screen no rule decides (settling: still being drawn, looked at again soon;
    unknown: no rule explains it, read whole when it is judged). Its question, input and menu are the same words as
    decide.question.Kind's, which is what a channel asks: a screen's kind is not yet a question."""

    WORKING = "working"
    QUESTION = "question"  # yes/no or confirm
    INPUT = "input"  # free text
    MENU = "menu"  # pick one of several options
    IDLE = "idle"  # an agent's empty composer
    COMPLETED = "completed"
    ERROR = "error"
    SETTLING = "settling"  # (never a rule's kind)
    UNKNOWN = "unknown"  # (never a rule's kind)


ANSWERABLE = {ScreenKind.QUESTION, ScreenKind.INPUT, ScreenKind.MENU}


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: ScreenKind
    error: str | None = None  # sub-kind for kind=error: login_required, usage_limit, ...
    scope: Literal["cursor_line", "block"] = "block"
    any: list[str] = Field(default_factory=list)
    all: list[str] = Field(default_factory=list)
    none: list[str] = Field(default_factory=list)
    start: str | None = None  # where the prompt block starts (block scope)
    quiet_ms: int = 0  # match only after this much silence
    submit: Literal["enter", "none"] = "enter"  # "none": single-key prompt, no Enter after text
    multiline: bool = False  # the prompt takes several lines (sent as a bracketed paste when the program enabled it)
    needs_menu: bool = False  # kind=menu: match only where options and a highlight can be read (reverse video counts)
    free_text: bool = False  # kind=menu: the prompt may ask for text of its own, so a reply naming no option is typed as it is
    deny_reply: str | None = None  # the program's "no" when the deny policy refuses; none -> escalate
    keys: list[str] = Field(default_factory=list)  # the keys a prompt that spells none acts on (a pager's ':'): its answers
    reads_keys: bool = False  # match only where the kernel says the terminal is out of canonical mode (it reads keys, not a line)
    progress: bool = True  # working rules: seeing this means the task is under way (false for start-up screens)
    # the words count only in the last message above the cursor (rows after it: its own, blank ones, chrome, the
    # profile's finish.between status rows): an agent's error that stays in its history once it went on (a limit)
    last: bool = False
    description: str = ""

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if not self.any and not self.all:
            raise ValueError("a rule needs 'any' or 'all' patterns")
        if self.kind in (ScreenKind.SETTLING, ScreenKind.UNKNOWN):
            raise ValueError(f"{self.kind.value!r} is what the readers say of a screen no rule decides, not a rule's kind")
        if self.kind == ScreenKind.ERROR and not self.error:
            raise ValueError("an error rule needs an 'error' sub-kind")
        return self


class Finish(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["exit", "idle"] = "exit"
    close: list[str] = Field(default_factory=list)  # keys that quit cleanly, e.g. ["<ctrl-c>", "<ctrl-c>"]
    close_timeout_s: float = 5.0
    prose_question: str | None = None  # last message line matching this is a question, not completion
    between: str | None = None  # rows between the last message and the composer to look past ("✻ Worked for 3s", hints)


class OnLimit(BaseModel):
    """How an agent's limit screen is answered once the limit has reset (decide/limits.py): the option of its limit
    dialog that tries again (`retry`), else the one that closes it (`dismiss`: then "continue" is typed in the composer);
    `switch`: the option that switches to another model (--on-limit switch-model). Regexes on the options' labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retry: str | None = None
    dismiss: str | None = None
    switch: str | None = None


class Task(BaseModel):
    """An agent given its task on the command line starts working on its own: until it does, its idle composer is
    not a question. `flags` take the task as their value (gemini -i "…"); `positional`: a bare argument is it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flags: list[str] = Field(default_factory=list)
    positional: bool = False
    value_flags: list[str] = Field(default_factory=list)  # options whose value is not the task (--model X)

    def given(self, argv: list[str]) -> bool:
        args = argv[1:]
        if any(a in self.flags or any(a.startswith(f + "=") for f in self.flags if f.startswith("--")) for a in args):
            return True
        if not self.positional:
            return False
        for i, a in enumerate(args):
            if not a.startswith("-") and (i == 0 or args[i - 1] not in self.value_flags) and a.strip():
                return True
        return False


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    commands: list[str] = Field(default_factory=list)  # program names (or command-line phrases) for --profile auto
    settle_ms: int = 400
    # ...for a prompt, a field or a menu of a program the kernel says polls its terminal for a key (readline, newt,
    # prompt_toolkit); an agent's Ink TUI polls all the time and may draw a menu before it listens: its profile says more
    poll_settle_ms: int = 80
    block_lines: int = 12
    key_delay_ms: int = 50
    # reaction: an answer's next key goes as soon as the program has answered the last one with output (key_delay_ms
    # at most, for a key that changes nothing); fixed: key_delay_ms apart, always (a program that tells a paste from
    # typing by the time between keys: the agents' TUIs)
    key_pace: Literal["reaction", "fixed"] = "reaction"
    enter_delay_ms: int = 0  # the least gap between typed text and its Enter, which also waits for the text to show
    stuck_after_s: float = 600.0  # a working marker with no screen change this long -> escalate
    undecided_after_s: float = 3.0  # a quiet screen no rule explains gets a decision after this long (judged, or escalated)
    # ...or after this long when the kernel says the program waits for input: blocked reading its terminal, or polling
    # it with a question, a menu, buttons or a field on screen (agents poll all the time: their profiles say more)
    quick_judge_s: float = 0.3
    task: Task = Field(default_factory=lambda: Task())  # how a task is given on the command line (agents)
    finish: Finish = Field(default_factory=Finish)
    interrupt: list[str] = Field(default_factory=list)  # the keys that interrupt an agent's turn (a stuck one): ["<esc>"]
    # what moves on an agent's working screen while nothing happens (spinners, its elapsed timer, rotating phrases):
    # masked before the screen is compared for progress (pty/progress.py); its token counter and new output are progress
    animation: list[str] = Field(default_factory=list)
    on_limit: OnLimit = Field(default_factory=OnLimit)
    rules: list[Rule]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:16]


class Overlay(BaseModel):
    """A --detectors file: rules that add to or replace a profile's, plus optional settings."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str | None = None
    commands: list[str] | None = None
    settle_ms: int | None = None
    poll_settle_ms: int | None = None
    block_lines: int | None = None
    key_delay_ms: int | None = None
    key_pace: Literal["reaction", "fixed"] | None = None
    enter_delay_ms: int | None = None
    stuck_after_s: float | None = None
    undecided_after_s: float | None = None
    quick_judge_s: float | None = None
    task: Task | None = None
    finish: Finish | None = None
    interrupt: list[str] | None = None
    animation: list[str] | None = None
    on_limit: OnLimit | None = None
    rules: list[Rule] = Field(default_factory=list)


def available() -> list[str]:
    return [p.stem for p in resources.listing("detectors")]


def where(name: str) -> Path | None:
    """The file a bundled profile is read from."""
    return resources.find("detectors", name)


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML has it: ten times faster


def _read(path: Path) -> dict:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except FileNotFoundError:
        raise BadInput(f"{path}: detector file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise BadInput(f"{path}:{where} invalid YAML/JSON: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: a detector file must be a mapping")
    return data


def _validation_line(path: Path, exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{path}: {loc}: {err['msg']}{more}"


def _check_patterns(path: Path, rules: list[Rule], extra: Sequence[tuple[str, str]] = ()) -> None:
    for rule in rules:
        for pattern in [*rule.any, *rule.all, *rule.none, *([rule.start] if rule.start else [])]:
            try:
                re.compile(pattern, re.MULTILINE)
            except re.error as exc:
                raise BadInput(f"{path}: rule {rule.id!r}: invalid regex {pattern!r}: {exc}") from None
    for where, pattern in extra:
        try:
            re.compile(pattern, re.MULTILINE)
        except re.error as exc:
            raise BadInput(f"{path}: {where}: invalid regex {pattern!r}: {exc}") from None


def load_profile_file(path: Path) -> Profile:
    """A profile file, validated; read once per run for as long as the file is unchanged (`--profile auto` looks
    at every profile's `commands` to pick one: validating them all took most of a second)."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _load_profile_file(path, stamp).model_copy(deep=True)


@lru_cache(maxsize=64)
def _load_profile_file(path: Path, stamp: int | None) -> Profile:
    data = _read(path)
    base = data.pop("extends", None)
    if base is not None:  # a profile on top of another: its rules first, the rest of the base's after them
        if not isinstance(base, str) or base == data.get("name"):
            raise BadInput(f"{path}: extends: the name of another profile")
        parent = load_profile(base)
        own = {r.get("id") for r in data.get("rules") or [] if isinstance(r, dict)}
        inherited = [r.model_dump(exclude_defaults=True) for r in parent.rules if r.id not in own]
        data = {**parent.model_dump(exclude={"rules", "name", "description", "commands"}), **data,
                "rules": [*(data.get("rules") or []), *inherited]}
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise BadInput(_validation_line(path, exc)) from None
    _check_profile(path, profile)
    return profile


def _check_profile(path: Path, profile: Profile) -> None:
    extra = [("finish.prose_question", profile.finish.prose_question)] if profile.finish.prose_question else []
    extra += [("animation", p) for p in profile.animation]
    extra += [(f"on_limit.{k}", v) for k, v in profile.on_limit.model_dump().items() if v]
    _check_patterns(path, profile.rules, extra)
    ids = [r.id for r in profile.rules]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BadInput(f"{path}: duplicate rule id(s): {', '.join(sorted(dup))}")


def resolve_name(name: str, command: list[str] | None = None) -> str:
    """'auto' picks the profile whose `commands` list names the program; else generic."""
    if name != "auto":
        return name
    if command:
        prog = Path(command[0]).name
        line = " ".join(command)
        for candidate in available():
            for entry in _commands(candidate):
                # a bare name is the program; an entry with a space is a phrase of the command line
                if entry == prog or (" " in entry and entry in line):
                    return candidate
    return "generic"


def _commands(name: str) -> tuple[str, ...]:
    """A bundled profile's `commands`, read without validating the whole profile (that is done for the one chosen),
    once per process for as long as its file is unchanged: reading the seven bundled files' YAML took 30 ms, twice a
    run (its profiles checked, then its step's), on the way to the first look at the program's screen."""
    path = where(name)
    if path is None:
        return ()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return ()
    return _commands_of(path, stamp)


@lru_cache(maxsize=64)
def _commands_of(path: Path, stamp: int) -> tuple[str, ...]:
    commands = _read(path).get("commands") or []
    return tuple(c for c in commands if isinstance(c, str)) if isinstance(commands, list) else ()


def load_profile(name: str, overlay: Path | None = None) -> Profile:
    given = Path(name)
    path = given if given.suffix in (".yaml", ".yml", ".json") and given.exists() else where(name)
    if path is None:
        known = ", ".join(available()) or f"none: {resources.folder('detectors')} is missing (a broken install)"
        raise BadInput(f"unknown profile {name!r}; available: {known}")
    profile = load_profile_file(path)
    return apply_overlay(profile, overlay) if overlay else profile


def apply_overlay(profile: Profile, path: Path) -> Profile:
    data = _read(path)
    try:
        overlay = Overlay.model_validate(data)
    except ValidationError as exc:
        raise BadInput(_validation_line(path, exc)) from None
    _check_patterns(path, overlay.rules)
    by_id = {r.id: r for r in overlay.rules}
    replaced = [by_id.pop(r.id, r) for r in profile.rules]
    added = [r for r in overlay.rules if r.id in by_id]  # new ids go first: the user's rules win
    settings = {k: v for k, v in overlay.model_dump(exclude={"rules"}).items() if v is not None}
    merged = profile.model_copy(update={**settings, "rules": added + replaced})
    merged = Profile.model_validate(merged.model_dump())
    _check_profile(path, merged)
    return merged
