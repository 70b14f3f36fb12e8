"""What a run left, looked at: `cursor-pilot runs` (the list, one run's summary), `report`, `detect` (a recording
replayed through the classifier), and the bundled `profiles` and `plans`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from cursorpilot.errors import ExitCode


def runs_list(folder: Path | None) -> None:
    from rich.console import Console

    from cursorpilot.records.pastruns import known_runs, past_runs, where
    from cursorpilot.ui import runs_table

    found = past_runs(Path(folder)) if folder is not None else known_runs()
    place = f"{folder}/" if folder is not None else where(found)
    if not found:
        typer.echo(f"no runs in {place} (cursor-pilot run makes them; --dir DIR looks elsewhere)")
        return
    runs_table(Console(width=None if sys.stdout.isatty() else 200), found, place)


def runs_show(run: str, folder: Path | None) -> int:
    from rich.console import Console

    from cursorpilot.records.pastruns import find_run
    from cursorpilot.ui import run_summary

    run_summary(Console(width=None if sys.stdout.isatty() else 200), find_run(run, Path(folder) if folder is not None else None))
    return 0


def complete_run(folder: str | None, incomplete: str) -> list[str]:
    from cursorpilot.records.pastruns import known_runs, past_runs

    found = past_runs(Path(folder)) if folder else known_runs()
    return [r.folder.name for r in found if r.folder.name.startswith(incomplete)]


def report(run_dir: Path, out: Path | None) -> int:
    from cursorpilot.records.pastruns import find_run
    from cursorpilot.report import write

    if not run_dir.exists() and len(run_dir.parts) == 1:  # a run id: from the runs cursor-pilot runs lists
        run_dir = find_run(str(run_dir)).folder
    written = write(run_dir, out)
    typer.echo(f"report: {written.html}\n        {written.json}\n        {written.md}")
    return 0


def detect(recording: Path, profile_name: str, detectors: Path | None, cols: int, rows: int) -> int:
    from cursorpilot.commands.run import existing
    from cursorpilot.detect.profiles import load_profile, resolve_name
    from cursorpilot.commands.replay import decisions, load

    rec = load(recording, cols, rows)
    profile = load_profile(resolve_name(profile_name, rec.command or None), existing(detectors, "detectors file"))
    typer.echo(f"# {recording} ({rec.kind}, {rec.cols}x{rec.rows}) with profile {profile.name}")
    for d in decisions(rec, profile):
        typer.echo(d.describe())
    return 0


def profiles() -> None:
    from cursorpilot.detect.profiles import available, load_profile, where

    names = available()
    if not names:
        typer.echo("no profiles found: the package's detectors folder is missing (a broken install)", err=True)
        raise typer.Exit(int(ExitCode.FAILED))
    for name in names:
        typer.echo(f"{name:10} {load_profile(name).description}\n{'':10} {where(name)}")


def plans() -> None:
    from cursorpilot import resources

    for path in resources.listing("plans"):
        typer.echo(f"{path.stem:12} {resources.summary(path)}\n{'':12} {path}")
