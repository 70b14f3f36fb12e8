"""A person's answers kept as rules (docs/rules.md#learning-from-a-person): `cursor-pilot learn` (a run with
`--learn FILE`), and the offer at the end of a run a person helped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from cursorpilot.errors import BadInput, PilotError

if TYPE_CHECKING:
    from cursorpilot.commands.runargs import RunArgs

LEARN_OUT = Path("rules.learned.yaml")


def run_args(args: list[str], out: Path) -> list[str]:
    """`learn [--out FILE] [RUN OPTIONS] -- COMMAND`: the `run` command line it stands for (the program's own words
    untouched)."""
    rest: list[str] = []
    skip = False
    for i, a in enumerate(args):  # everything but --out, as run takes it
        if a == "--":
            rest += args[i:]
            break
        if skip:
            skip = False
        elif a in ("--out", "-o"):
            skip = True
        elif not a.startswith(("--out=", "-o=")):
            rest.append(a)
    return ["run", "--learn", str(out), *rest]


def check_learning(args: RunArgs, interactive: bool) -> RunArgs:
    """--learn: a person answers every question (no model, whatever key is set), so one must be at the terminal."""
    if not (interactive and os.environ.get("CI") is None):
        raise BadInput("--learn needs you at the terminal to answer the program's questions (stdin is not a terminal, or CI is set)")
    if args.provider not in (None, "rules"):
        raise BadInput(f"--learn: you answer the questions, not --provider {args.provider}")
    return args.replace(provider="rules")


def learned_at_exit(log_dir: Path, learn_file: Path | None, rules: Path | None, command: list[str]) -> None:
    """--learn: the person's answers written as rules. A run a person helped: the offer to keep their answers as rules
    (in --rules FILE, else rules.learned.yaml). Nothing here changes the run's exit code."""
    import shlex

    from cursorpilot.commands import learn
    from cursorpilot.ui import error_line

    try:
        learned = learn.learn(learn.answers(log_dir / "transcript.jsonl"))
    except OSError:
        return
    if not learned.rules and learn_file is None:  # the common end of a run a person did not help: nothing to say, and
        return  # no typer to import for it (0.05 s on the way out of every run at a terminal, before the program's EOF)
    import typer  # only when there is something to say

    if not learned.rules:
        if learn_file is not None:
            typer.echo("  learned nothing: no question was answered by you")
        return
    target = learn_file or rules or LEARN_OUT
    try:
        if learn_file is None and not typer.confirm(
                f"You answered {learned.asked} question(s) yourself. Save your answers as rules in {target}?", default=False):
            return
    except (typer.Abort, EOFError, KeyboardInterrupt):
        return
    try:
        added = learn.write(target, learned, shlex.join(command))
    except (PilotError, OSError) as exc:
        error_line(f"the rules could not be written: {exc}")
        return
    secrets = "".join(f" --secret {n}=ENVVAR" for n in learned.secrets)
    typer.echo(f"  learned {added} rule(s) from your {learned.asked} answer(s): {target}\n"
               f"  run it with nobody there: cursor-pilot run --rules {target}{secrets} -- {shlex.join(command)}")
    for line in learned.unsure:
        typer.echo(f"  note: these rules may not answer {line!r} as you did (the same question, asked in more ways)")
