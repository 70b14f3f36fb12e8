"""What is checked before a run makes its folder, so a mistake costs one line and leaves nothing behind."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from cursorpilot import resources
from cursorpilot.channels.registry import command_line
from cursorpilot.errors import BadInput
from cursorpilot.channels import executable
from cursorpilot.plan import Plan
from cursorpilot.providers.rules import RuleEntry
from cursorpilot.records.secret import names


def check_new_log_dir(log_dir: Path) -> None:
    """A folder that holds a run is not written into: a second run would be appended to its transcript."""
    if (log_dir / "manifest.json").exists() or (log_dir / "transcript.jsonl").exists():
        raise BadInput(f"--log {log_dir} already holds a run: give another folder, or continue that run with "
                       f"--resume {log_dir / 'manifest.json'}")


def check_startable(plan: Plan, cursor_bin: str) -> None:
    """The first program is looked up before anything is recorded, so a typo in its name leaves no run folder behind.
    (A later step's program may be installed by an earlier step: it is looked up when its step starts.)"""
    step = plan.steps[0]
    if step.run is not None:
        return
    name = resources.self_command(command_line(step, cursor_bin))[0]
    path = name if os.sep in name else shutil.which(name, path={**os.environ, **step.env}.get("PATH"))
    if path is None:
        raise BadInput(f"cannot start {name!r}: not found on PATH")
    why = executable.problem(path)
    if why is not None:
        raise BadInput(f"cannot start {name!r}: {why}")


def check_secrets_given(rules: Iterable[tuple[str, RuleEntry]], given: Mapping[str, str]) -> None:
    """A rule whose reply types `<secret:NAME>` needs `--secret NAME=ENVVAR`: without it the run would start the program,
    let it work up to that question and stop there (exit 3). Refused before anything runs. (where, rule) pairs: where
    the rule is written (its file and id, an --answer, a plan's step) and the rule."""
    for where, rule in rules:
        missing = [name for name in names(rule.reply) if name not in given]
        if missing:
            raise BadInput(f"{where} types <secret:{missing[0]}>, which no --secret gives: add --secret {missing[0]}=ENVVAR "
                           "(its value is read from that environment variable)")
