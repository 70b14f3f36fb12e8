"""`run`'s options read without typer, for a run that starts its program at once (start.py).

Typer is the authority on `run`'s options (cli.py declares them, with their help). Reading them through it costs more
than starting most programs does (typer, its click, and a command built from 50 options' signatures), so a run whose
options are all plain ones is read here instead: the same names, defaults and ranges (tests/unit/test_start.py holds
this table to typer's, option by option, and parses the same command lines both ways). Anything else (an option this
table does not take, a value out of range, --help, a typo) is left to typer, which reads it and says what is wrong in
its own words. Stdlib only, and light: a run served by the resident pilot only asks it whether the run is a plain one
(its paths are made Paths by `paths`, where the run is run).
"""

from __future__ import annotations

# every option of `run` that takes no value
FLAGS = ("keep_ci_env", "no_native_deny", "no_upload", "quiet", "report", "debug", "version", "dry_run", "force", "acp", "headless")
# every option that takes one: its kind and its default
VALUED: dict[str, tuple[str, object]] = {
    "cwd": ("path", None), "cols": ("int", 120), "rows": ("int", 40), "profile": ("str", "auto"), "detectors": ("path", None),
    "prompt": ("str", None), "rules": ("path", None), "learn": ("path", None), "answer": ("list", None), "secret": ("list", None),
    "provider": ("str", None), "model": ("str", None), "base_url": ("str", None), "llm_retries": ("int", 4),
    "llm_timeout": ("str", "60s"), "context_tokens": ("int", 3000), "prices": ("path", None), "max_steps": ("int", None),
    "max_model_calls": ("str", "1000/20"),
    "timeout": ("str", None), "done_when": ("str", None), "max_turns": ("int", None), "max_wall": ("str", None),
    "max_cost": ("float", None), "notify": ("list", None), "listen": ("str", None), "human_timeout": ("str", None),
    "on_human_timeout": ("str", "exit"), "log": ("path", None), "plan": ("path", None), "cursor": ("str", "cursor-agent"),
    "resume": ("path", None), "agent": ("str", None), "task": ("str", None), "on_limit": ("str", "wait"), "stuck_after": ("str", None),
}
RANGES: dict[str, tuple[float | None, float | None]] = {
    "cols": (20, 1000), "rows": (5, 1000), "llm_retries": (0, None), "context_tokens": (200, None), "max_steps": (1, None),
    "max_turns": (1, None), "max_cost": (0.0, None),
}
# what a run that starts at once may be given: a program on a terminal, its answerers, its limits, its output. The rest
# (plans, resumes, agents, learning, a person reached, detector files, prices) goes through typer and starts as before.
QUICK = frozenset({"cwd", "cols", "rows", "profile", "keep_ci_env", "no_native_deny", "prompt", "rules", "answer", "secret",
                   "provider", "model", "base_url", "llm_retries", "llm_timeout", "context_tokens", "no_upload", "max_steps", "max_model_calls",
                   "timeout", "log", "quiet", "report", "debug"})
ENV_OPTIONS = ("CURSOR_PILOT_NOTIFY",)  # an option typer reads from the environment: with one set, typer reads the run


def parse(args: list[str]) -> tuple[dict[str, object], set[str]] | None:
    """`run`'s options and its program from the words after `run` (the values `run`'s body takes, and the names given),
    or None when typer should read them."""
    values: dict[str, object] = {name: False for name in FLAGS}
    values.update({name: default for name, (_, default) in VALUED.items()})
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
        if name in FLAGS:
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
            if VALUED[name][0] == "list":
                values[name] = [*(values[name] or []), value]  # type: ignore[misc]
            else:
                values[name] = converted
        given.add(name)
        i += 1
    command = args[i:]
    if not command:
        return None
    values["command"] = command
    given.add("command")
    return values, given


def _convert(name: str, value: str) -> object | None:
    kind = VALUED[name][0]
    if kind in ("str", "list"):
        return value
    if kind == "path":
        return value or None
    try:
        number: float = int(value) if kind == "int" else float(value)
    except ValueError:
        return None
    low, high = RANGES.get(name, (None, None))
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return number


def paths(values: dict[str, object]) -> dict[str, object]:
    """The values as `run`'s body takes them (as typer gives them): each path a Path."""
    from pathlib import Path

    return {k: Path(v) if isinstance(v, str) and VALUED.get(k, ("",))[0] == "path" else v for k, v in values.items()}
