"""`run`'s options read without typer, for a run that starts its program at once (start.py): the argument fast path.

Reading the options through typer costs more than starting most programs does (typer, its click, and a command built
from 50 options' signatures), so a run whose options are all plain ones is read here instead, with the same names,
defaults and ranges: RunArgs' own (commands/runargs.py), the one declaration of `run`'s options. Anything else (an
option a run that starts at once may not be given, a value out of range, --help, a typo) is left to typer, which reads
it and says what is wrong in its own words. Stdlib only, and light: a run served by the resident pilot only asks it
whether the run is a plain one.
"""

from __future__ import annotations

from cursorpilot.commands.runargs import FIELDS

# what a run that starts at once may be given: a program on a terminal, its answerers, its limits, its output. The rest
# (plans, resumes, agents, learning, a person reached, detector files, prices) goes through typer and starts as before.
QUICK = frozenset(name for name, spec in FIELDS.items() if spec.quick)
ENV_OPTIONS = tuple(spec.envvar for spec in FIELDS.values() if spec.envvar)  # with one set, typer reads the run


def parse(args: list[str]) -> tuple[dict[str, object], set[str]] | None:
    """`run`'s options and its program from the words after `run` (their values as RunArgs.from_values takes them, and
    the names given), or None when typer should read them: an option a run that starts at once may not be given (plans,
    resumes, agents, learning, a person reached, detector files, prices), a value out of range, --help, a typo."""
    values: dict[str, object] = {name: spec.default for name, spec in FIELDS.items()}
    given: set[str] = set()
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name, eq, value = word[2:].partition("=") if word.startswith("--") else ("", "", "")
        name = name.replace("-", "_")
        if name not in QUICK:
            return None
        kind = FIELDS[name].kind
        if kind == "flag":
            if eq:
                return None
            values[name] = True
        else:
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            converted = _convert(name, value)
            if converted is None:
                return None
            values[name] = [*(values[name] or []), value] if kind == "list" else converted  # type: ignore[misc]
        given.add(name)
        i += 1
    command = args[i:]
    if not command:
        return None
    values["command"] = command
    given.add("command")
    return values, given


def _convert(name: str, value: str) -> object | None:
    spec = FIELDS[name]
    if spec.kind in ("str", "list"):
        return value
    if spec.kind == "path":
        return value or None
    try:
        number: float = int(value) if spec.kind == "int" else float(value)
    except ValueError:
        return None
    if (spec.min is not None and number < spec.min) or (spec.max is not None and number > spec.max):
        return None
    return number
