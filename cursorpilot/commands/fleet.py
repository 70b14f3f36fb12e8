"""`cursor-pilot fleet`: many runs at once (docs/fleet.md). The group's commands and their options (cli.py registers
the group), and their bodies, which read and check everything before a fleet's folder is made."""

from __future__ import annotations

import json
import os
import secrets
import sys
from datetime import datetime
from pathlib import Path

import typer

from cursorpilot.errors import BadInput

app = typer.Typer(no_args_is_help=True, help="Many runs at once: a fleet file's tasks, N at a time, on this machine or on Ray "
                  "(docs/fleet.md).", context_settings={"help_option_names": ["-h", "--help"]})

DIR_HELP = "The fleet's folder (default: the latest fleet's, under $XDG_STATE_HOME/cursor-pilot/fleets/)."
LISTEN_HELP = ("Serve one inbox here for every question a task puts to a person (default with --notify: 127.0.0.1, any "
               "port). Beyond loopback anyone who gets a link can answer: it warns.")
NOTIFY_HELP = "Send one notice per question, with its own single-use link, to this Apprise URL (repeatable; docs/human.md)."


@app.command("run")
def run_cmd(
    fleet_file: Path = typer.Argument(..., metavar="FLEET.yaml", help="The fleet file: defaults and tasks (docs/fleet.md)."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, max=1000, help="How many tasks run at once."),
    engine: str = typer.Option("local", "--engine", metavar="local|ray", help="local: child processes of this one; ray: Ray tasks."),
    address: str | None = typer.Option(None, "--address", help="Ray: the cluster to join (default: a Ray of its own on this machine)."),
    max_cost: float | None = typer.Option(None, "--max-cost", min=0.0, metavar="USD",
                                          help="The whole fleet's budget: once spent, no task starts and running ones stop at their next question (exit 4)."),
    listen: str | None = typer.Option(None, "--listen", metavar="HOST:PORT", help=LISTEN_HELP),
    notify: list[str] | None = typer.Option(None, "--notify", metavar="URL", help=NOTIFY_HELP),
    folder: Path | None = typer.Option(None, "--dir", help="The fleet's folder (default: a new one under $XDG_STATE_HOME/cursor-pilot/fleets/)."),
    debug: bool = typer.Option(False, "--debug", help="A traceback on errors."),
) -> None:
    """Run a fleet file's tasks, each one `cursor-pilot run` in a folder of its own, N at a time."""
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(debug, lambda: run_fleet(fleet_file, folder, {"concurrency": concurrency, "engine": engine, "address": address,
                                                        "max_cost": max_cost}, listen, notify or []))


@app.command("resume")
def resume_cmd(
    folder: Path = typer.Argument(..., metavar="DIR", help="The fleet's folder."),
    concurrency: int | None = typer.Option(None, "--concurrency", "-j", min=1, max=1000, help="As `run` (default: the fleet's)."),
    engine: str | None = typer.Option(None, "--engine", metavar="local|ray", help="As `run` (default: the fleet's)."),
    address: str | None = typer.Option(None, "--address", help="As `run`."),
    max_cost: float | None = typer.Option(None, "--max-cost", min=0.0, metavar="USD", help="As `run` (default: the fleet's)."),
    listen: str | None = typer.Option(None, "--listen", metavar="HOST:PORT", help=LISTEN_HELP),
    notify: list[str] | None = typer.Option(None, "--notify", metavar="URL", help=NOTIFY_HELP),
    debug: bool = typer.Option(False, "--debug", help="A traceback on errors."),
) -> None:
    """Run again only the tasks that did not finish (a task done or failed keeps its result); a run that was cut short
    goes on from where it stopped (run --resume)."""
    from cursorpilot.commands.exits import as_exit_code

    given = {k: v for k, v in {"concurrency": concurrency, "engine": engine, "address": address, "max_cost": max_cost}.items()
             if v is not None}
    as_exit_code(debug, lambda: resume_fleet(folder, given, listen, notify or []))


@app.command("status")
def status_cmd(
    folder: Path | None = typer.Argument(None, metavar="[DIR]", help=DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON document: the fleet and a row per task."),
) -> None:
    """A fleet's tasks: a live table on a terminal (until the fleet ends), else the table once; --json for scripts."""
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(False, lambda: status(folder, as_json))


@app.command("report")
def report_cmd(folder: Path | None = typer.Argument(None, metavar="[DIR]", help=DIR_HELP)) -> None:
    """Write the fleet's page again (report.html in its folder) and say where it is."""
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(False, lambda: write_report(folder))


# -- the bodies -------------------------------------------------------------------------------------------------------
def fleets_home() -> Path:
    from cursorpilot.records.pastruns import state_home

    return state_home() / "fleets"


def find_folder(folder: Path | None) -> Path:
    if folder is not None:
        return folder
    home = fleets_home()
    found = sorted((p for p in home.glob("*/fleet.json")), key=lambda p: p.stat().st_mtime) if home.is_dir() else []
    if not found:
        raise BadInput(f"no fleet found under {home}: give its folder")
    return found[-1].parent


def run_fleet(fleet_file: Path, folder: Path | None, options: dict, listen: str | None, notify: list[str]) -> int:
    from cursorpilot.fleet.manifest import FleetState
    from cursorpilot.fleet.facts import TaskRow
    from cursorpilot.commands.runargs import FIELDS
    from cursorpilot.fleet.model import load_fleet
    from cursorpilot.records.manifest import now_iso

    fleet = load_fleet(fleet_file, FIELDS)
    _check_engine(options["engine"])
    folder = (folder or fleets_home() / f"{fleet.name}-{datetime.now():%Y%m%d-%H%M%S}").resolve()
    if (folder / "fleet.json").exists():
        raise BadInput(f"--dir {folder} already holds a fleet: continue it with cursor-pilot fleet resume {folder}")
    state = FleetState(name=fleet.name, file=str(fleet.path), fleet_id=secrets.token_hex(8), created=now_iso(), options=options,
                       rows=[TaskRow(id=t.id) for t in fleet.tasks])
    return _sit(fleet, folder, state, listen, notify)


def resume_fleet(folder: Path, given: dict, listen: str | None, notify: list[str]) -> int:
    from cursorpilot.fleet import manifest
    from cursorpilot.commands.runargs import FIELDS
    from cursorpilot.fleet.model import load_fleet
    from cursorpilot.fleet.scheduler import FINISHED

    folder = folder.resolve()
    state = manifest.read(folder)
    if state.status == "running" and state.pid and _alive(state.pid):
        raise BadInput(f"the fleet in {folder} is still running (pid {state.pid})")
    fleet = load_fleet(Path(state.file), FIELDS)
    unknown = [r.id for r in state.rows if r.id not in {t.id for t in fleet.tasks}]
    if unknown:
        raise BadInput(f"{state.file}: the fleet file no longer has task(s) {', '.join(unknown)}: resume needs the file it ran")
    state.options = {**state.options, **given}
    _check_engine(state.options["engine"])
    again = [r for r in state.rows if r.status not in FINISHED]
    for r in again:
        r.status, r.exit_code, r.reason, r.waiting = "pending", None, "", []
        r.started_program = False
    state.exit_code, state.reason = None, ""
    return _sit(fleet, folder, state, listen, notify)


def _sit(fleet, folder: Path, state, listen: str | None, notify: list[str]) -> int:
    from cursorpilot.commands.fleetview import make_view
    from cursorpilot.fleet.runner import FleetRun
    from cursorpilot.fleet.unit import MARK

    view = make_view(sys.stdout.isatty())
    inbox = _inbox(fleet.name, listen, notify, view.say)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARK).write_text(state.fleet_id + "\n")
    engine = _engine(state)
    view.say(f"fleet {fleet.name}: {len(state.rows)} task(s), {state.options['concurrency']} at a time on {engine.name}; "
             f"folder {folder}")
    if inbox is not None:
        inbox.start()
        view.say(f"inbox: {inbox.link}" + ("  (beyond this machine: anyone who gets a link can answer)" if inbox.public else ""))
    code = FleetRun(fleet, folder, state, engine, view, inbox).run()
    view.say(f"fleet {fleet.name}: {state.reason} (exit {code}); page: {folder / 'report.html'}")
    return code


def _check_engine(name: str) -> None:
    if name not in ("local", "ray"):
        raise BadInput(f"--engine {name!r}: expected local or ray")
    if name == "ray":
        from cursorpilot.fleet.ray_engine import installed

        if not installed():
            raise BadInput("--engine ray needs Ray: pip install 'cursor-pilot[ray]'")


def _engine(state):
    if state.options["engine"] == "ray":
        from cursorpilot.fleet.ray_engine import RayEngine

        return RayEngine(state.fleet_id, state.options.get("address"), int(state.options["concurrency"]))
    from cursorpilot.fleet.local import LocalEngine

    return LocalEngine(state.fleet_id)


def _inbox(name: str, listen: str | None, notify: list[str], say):
    """The inbox, its socket bound now (a port in use is exit 2 before any task starts); None without --listen/--notify."""
    if not (listen or notify):
        return None
    from cursorpilot.fleet.inbox import Inbox
    from cursorpilot.human import page
    from cursorpilot.human.notify import check

    if notify:
        check(notify)
    host, port = page.parse_listen(listen) if listen else ("127.0.0.1", 0)
    return Inbox(name, page.bind(host, port), page.link_host(host), not page.is_loopback(host), tuple(notify), say=say)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(folder: Path | None, as_json: bool) -> int:
    from cursorpilot.commands.fleetview import watch
    from cursorpilot.fleet import manifest
    from cursorpilot.fleet.report import counted

    folder = find_folder(folder).resolve()
    state = manifest.read(folder)
    if as_json:
        print(json.dumps({"name": state.name, "folder": str(folder), "file": state.file, "status": state.status,
                          "exit_code": state.exit_code, "reason": state.reason, "options": state.options,
                          "totals": counted(state), "tasks": [_task_json(r) for r in state.rows]}, indent=2))
        return 0
    return watch(folder, live=sys.stdout.isatty())


def _task_json(r) -> dict[str, object]:
    """A task's row for scripts: numbers as numbers (None where its run has not said), text as text."""
    res = r.result
    return {"id": r.id, "status": r.status, "exit_code": r.exit_code, "reason": r.reason, "attempts": r.attempts,
            "turns": res.turns if res else None, "answers": res.answers if res else r.answers,
            "escalations": res.escalations if res else None, "denials": res.denials if res else None,
            "cost_usd": res.cost_usd if res and res.cost_usd is not None else r.cost_usd,
            "wall_s": res.wall_s if res else None, "waiting": list(r.waiting), "node": r.node, "branch": r.branch,
            "changes": res.diffstat if res else "", "run_dir": r.run_dir}


def write_report(folder: Path | None) -> int:
    from cursorpilot.fleet import manifest, report

    folder = find_folder(folder).resolve()
    print(f"fleet page: {report.write(manifest.read(folder), folder)}")
    return 0
