""""A new channel is a folder and one entry" (channels/registry.py), held by tests.

One test writes a channel of its own (a folder under tmp_path: its loop and its one record type) and adds its entry to
the registry, in a fresh interpreter, before anything reads the registry, as the registry's own module would. Then a
plan's `echo:` step is read (and refused without `agent:`, as its entry says) and the real `run` drives it through the
channel's loop, `run`'s parser takes `--echo`, a fleet's `channel: echo` becomes that flag, and the records read its
record type: with nothing else written. The others hold today's entries to what the plan, `run`, the fleet, the records
and pyproject's import contracts accept, so a channel spelled in two places can't drift, and check that the plan,
reading the registry, loads no channel.
"""

from __future__ import annotations

import pytest

import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from cursorpilot.channels.registry import CHANNELS, flagged
from cursorpilot.commands.runargs import FIELDS
from cursorpilot.fleet.model import PROGRAM, models
from cursorpilot.fleet.options import SPELLED, passed, picked
from cursorpilot.plan import StepKind
from cursorpilot.records.models import TYPES

ROOT = Path(__file__).resolve().parents[2]

LOOP = '''
"""The test channel's loop: it says its step's task back, as its own record, and ends."""
from cursorpilot.channels.contract import StepResult
from echochan.records import EchoSaid


def drive(job):
    job.ctx.tx.write(EchoSaid(step=job.index, text=job.step.echo))
    return StepResult(0, "said", 0, text=job.step.echo)
'''
RECORDS = '''
"""The test channel's one record type, declared in its own folder."""
from cursorpilot.records.base import Rec, declare


@declare("echo_said")
class EchoSaid(Rec):
    """What the echo agent said."""

    step: int | None
    text: str | None
'''
ENTRY = '''
"""The one entry, as channels/registry.py would hold it."""
from cursorpilot.channels.registry import CHANNELS, Channel
import echochan.records  # noqa: F401  (its record types, declared)


def _drive(job):
    from echochan.loop import drive

    return drive(job)


CHANNELS["echo"] = Channel(key="echo", value="str", agent="echo-agent", drive=_drive,
                           command_line=lambda step, cursor_bin: list(step.agent or []),
                           folder="echochan", flag="echo", help="Drive the agent through the echo channel.",
                           records=("echo_said",), called="an echo")
'''
RUN = '''
import sys
import echochan.entry  # the one entry, added before anything reads the registry
from cursorpilot.cli import app

app(["run", "--plan", sys.argv[1], "--provider", "rules", "--quiet", "--log", sys.argv[2]])
'''
SCRIPT = '''
import json, sys
import echochan.entry  # the one entry, added before anything reads the registry
import typer.main
from cursorpilot.cli import app
from cursorpilot.commands.runargs import FIELDS
from cursorpilot.fleet.command import run_options
from cursorpilot.fleet.model import load_fleet
from cursorpilot.records.reading import parse
from cursorpilot.channels.registry import command_line
from cursorpilot.plan import load_plan
from cursorpilot.errors import BadInput

run = typer.main.get_command(app).commands["run"]
params = run.make_context("run", ["--echo", "--agent", "x", "--task", "hi", "--", "echo-agent"]).params
task = load_fleet(__import__("pathlib").Path(sys.argv[1]), FIELDS).tasks[0]
said = parse({"type": "echo_said", "seq": 1, "ts": "t", "mono": 0.0, "run_id": "r", "text": "hello"})
step = load_plan(__import__("pathlib").Path(sys.argv[2])).steps[0]
refused = []
for bad in sys.argv[3:]:
    try:
        load_plan(__import__("pathlib").Path(bad))
    except BadInput as exc:
        refused.append(str(exc).split(": ", 1)[1])
print(json.dumps({"flag": params["echo"], "help": FIELDS["echo"].help, "fleet": run_options(task),
                  "record": [type(said).__name__, said.text], "step": [step.kind, step.echo, command_line(step, "")],
                  "refused": refused}))
'''


def test_a_channel_added_by_its_folder_and_one_entry_is_a_run_flag_a_fleet_channel_and_known_records(tmp_path):
    folder = tmp_path / "echochan"
    folder.mkdir()
    for name, text in {"__init__.py": "", "loop.py": LOOP, "records.py": RECORDS, "entry.py": ENTRY}.items():
        (folder / name).write_text(textwrap.dedent(text))
    (tmp_path / "fleet.yaml").write_text("defaults: {agent: claude, channel: echo}\ntasks: [{id: a, task: do it}]\n")
    plans = {"plan": "{name: p, steps: [{name: s, echo: say hi, agent: [echo-agent, --loud]}]}",
             "no-agent": "{name: p, steps: [{name: s, echo: say hi}]}", "typo": "{name: p, steps: [{name: s, ecko: say hi}]}"}
    for name, text in plans.items():
        (tmp_path / f"{name}.yaml").write_text(text + "\n")
    argv = [str(tmp_path / f) for f in ("fleet.yaml", "plan.yaml", "no-agent.yaml", "typo.yaml")]
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["step"] == ["echo", "say hi", ["echo-agent", "--loud"]]  # a plan's `echo:` step, started as its entry says
    assert out["refused"] == ["steps.0: an echo: step needs agent: (echo-agent, or a command line)",  # as its entry says
                              "steps.0.ecko: Extra inputs are not permitted"]  # and a key no entry declares is no kind
    assert out["flag"] is True and out["help"] == "Drive the agent through the echo channel."  # run's parser takes --echo
    assert out["fleet"] == ["--agent", "claude", "--echo", "--task", "do it"]  # a fleet's `channel: echo` is run --echo
    assert out["record"] == ["EchoSaid", "hello"]  # read as its own type, not a plain record
    (tmp_path / "run.yaml").write_text("{name: p, steps: [{name: s, echo: say hi, agent: ['true']}]}\n")
    ran = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / "run.yaml"), str(tmp_path / "run")], capture_output=True,
                         text=True, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                         timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr  # the real `run` drove the step through the echo channel's loop
    records = [json.loads(line) for line in (tmp_path / "run" / "transcript.jsonl").read_text().splitlines()]
    assert [(r["type"], r.get("kind") or r.get("text")) for r in records if r["type"] in ("step_started", "echo_said")] == [
        ("step_started", "echo"), ("echo_said", "say hi")]


def test_the_plan_reads_the_registry_and_loads_no_channel():
    """The one import the contracts let the plan make into channels/ (pyproject: the plan's contract) brings no channel."""
    code = "import sys, cursorpilot.plan; print(sorted(m for m in sys.modules if m.startswith('cursorpilot.channels')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert json.loads(out.replace("'", '"')) == ["cursorpilot.channels", "cursorpilot.channels.registry"]


def test_every_entry_is_what_the_plan_run_the_fleet_and_the_records_accept():
    assert set(CHANNELS) == {k.value for k in StepKind}  # a plan key per entry, and an entry per plan key
    assert all(c.key == key for key, c in CHANNELS.items())
    flags = [c.flag for c in flagged()]
    assert [n for n, spec in FIELDS.items() if spec.channel] == flags  # a `run` flag per flagged entry, no other
    assert all(FIELDS[c.flag].kind == "flag" and FIELDS[c.flag].channel == c.key for c in flagged() if c.flag)
    assert [c.key for c in flagged() if c.by_agent] == ["acp"]  # --agent alone picks exactly one channel
    assert [p.name for p in picked(FIELDS)] == flags and not {p.field for p in passed(FIELDS)} & set(flags)
    assert set(SPELLED) & {c.key for c in CHANNELS.values()} == set(flags)  # the fleet's note on them says no more than the entries
    own, _, _ = models(passed(FIELDS), picked(FIELDS))
    assert own.model_validate({"channel": "headless"}).channel == "headless" and PROGRAM not in flags
    declared = {name for c in CHANNELS.values() for name in c.records}
    assert declared <= set(TYPES), declared - set(TYPES)  # every record an entry names is declared in records/
    import cursorpilot.records.agents as agents

    written = {name for name, cls in TYPES.items() if cls.__module__ == agents.__name__}
    assert written <= declared, written - declared  # every agent record belongs to an entry that writes it


def test_pyprojects_channel_contracts_name_exactly_the_registrys_folders():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    folders = {c.folder for c in CHANNELS.values()}
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    line = next(layer for layer in layers if "|" in layer and "cursorpilot.channels." in layer)
    assert {m.strip() for m in line.split("|")} == folders
    independent = next(c for c in contracts if c["type"] == "independence" and "channel" in c["name"])
    assert set(independent["modules"]) == folders


def test_every_entrys_late_names_are_callables_of_its_own_folder():
    """The registry names its channels' loops and launchers by module name (so that it imports none of them, and the plan
    can read it): a typo there would surface only when a step of that kind runs. Each resolves here, in the entry's
    folder; the mirror: a name that is not there fails as the run would."""
    import importlib

    from cursorpilot.channels import registry

    for entry in registry.CHANNELS.values():
        for late in (entry.drive, entry.launcher):
            if late is None:
                continue
            module, _, name = late.__qualname__.rpartition(".")
            assert module.startswith(entry.folder), (entry, module)
            assert callable(getattr(importlib.import_module(module), name)), (entry, name)
        if entry.agents is not None:
            assert entry.agents(), entry
    with pytest.raises(AttributeError):
        registry._late("cursorpilot.channels.shell", "drvie")(None)


def test_the_plans_lines_for_the_type_checker_name_the_entries_kinds_and_nothing_else():
    """plan.Step declares each kind's field for mypy alone (pydantic builds the fields off the entries): a kind added to
    the registry without its line, or a line left for a kind gone, fails here, not silently as an Any."""
    import ast
    import inspect

    from cursorpilot import plan
    from cursorpilot.channels.registry import CHANNELS

    tree = ast.parse(inspect.getsource(plan.Step))
    block = next(n for n in ast.walk(tree) if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    declared = [n.target.id for n in block.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert declared == list(CHANNELS)
