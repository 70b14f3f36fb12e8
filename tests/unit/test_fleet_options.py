"""The fleet file's run options held to `RunArgs` (commands/runargs.py), where every `run` option is declared once: each
field is a fleet key, or spelled by the fleet its own way, or left out with a reason (fleet/options.py); and what a
task sets comes back from `run`'s own parser (typer's, built from the same fields) as the value the file gave."""

from __future__ import annotations

from pathlib import Path

import typer.main

from cursorpilot.commands.runargs import FIELDS, RunArgs, option
from cursorpilot.fleet.command import run_options
from cursorpilot.fleet import model
from cursorpilot.fleet.options import DURATIONS, EXCLUDED, RENAMED, SPELLED, Passed, passed

PASSED = passed(FIELDS)
Settings, Task, _ = model.models(PASSED)
OWN = {"program", "channel", "isolation", "repo", "base", "source", "env", "id"}  # the fleet's own keys: no `run` option


def test_every_runargs_field_is_a_fleet_key_or_spelled_by_the_fleet_or_excluded_with_a_reason():
    keys = {p.field for p in PASSED}
    assert keys | set(SPELLED) | set(EXCLUDED) == set(FIELDS)
    assert not keys & set(SPELLED) and not keys & set(EXCLUDED) and not set(SPELLED) & set(EXCLUDED)
    assert all(len(why) > 12 for why in (*SPELLED.values(), *EXCLUDED.values()))
    assert set(RENAMED) <= keys and all(FIELDS[d].kind == "str" for d in DURATIONS)


def test_every_fleet_key_is_a_run_option_or_the_fleets_own():
    fleet_keys = set(Settings.model_fields) | set(Task.model_fields)
    as_fields = {next((f for f, k in RENAMED.items() if k == key), key) for key in fleet_keys - OWN}
    assert as_fields <= set(FIELDS), as_fields - set(FIELDS)
    assert {p.key for p in PASSED} <= set(Settings.model_fields)  # each passed option is a key of `defaults` and of a task
    assert set(SPELLED) - {"acp", "headless"} <= set(Task.model_fields)  # (those two are `channel:`)


def test_a_field_added_to_runargs_shows_up_in_the_fleet():
    class More(RunArgs):
        warp_factor: int = option(default=1, min=1, max=9, help="How fast.")

    fields = {**FIELDS, **More.FIELDS}  # (a subclass's FIELDS are its own fields)
    added = [p for p in passed(fields) if p.field == "warp_factor"]
    assert [(p.key, p.flag, p.kind, p.min, p.max) for p in added] == [("warp_factor", "--warp-factor", "int", 1, 9)]
    assert len(passed(fields)) == len(PASSED) + 1


def load_fleet(path):
    return model.load_fleet(path, FIELDS)


def _value(p: Passed, tmp_path: Path) -> object:
    kind, key = p.kind, p.key
    if kind == "int":
        return int(max(p.min or 0, 7))
    if key in DURATIONS:
        return "5m"
    if kind == "path":
        (tmp_path / key).write_text("[]\n")
        return str(tmp_path / key)
    if kind == "float" and p.max is not None:  # within the option's own range (--escalate-margin is a share, at most 1)
        return (p.min or 0) + (p.max - (p.min or 0)) / 2
    return {"flag": True, "float": 1.5, "str": f"{key}-value", "list": [f"{key}=1", f"{key}=2"]}[kind]


def test_what_a_task_sets_comes_back_from_runs_own_parser_as_given(tmp_path):
    """Every passed option in one task, made into `run`'s command line, and read by the real `run` command's parser."""
    from cursorpilot.cli import app

    given = {p.key: _value(p, tmp_path) for p in PASSED}
    given["max_model_calls"] = "50/5"
    (tmp_path / "fleet.yaml").write_text(__import__("json").dumps({"tasks": [{"id": "all", "command": "true", **given}]}))
    task = load_fleet(tmp_path / "fleet.yaml").tasks[0]
    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    params = run.make_context("run", run_options(task)).params
    for p in PASSED:
        want = given[p.key]
        got = params[p.field]
        got = list(got) if p.kind == "list" else str(got) if p.kind == "path" else got
        assert got == want, (p.key, got, want)
    assert list(params["command"]) == ["true"]


def test_a_path_option_is_found_from_the_fleet_files_folder_and_a_missing_one_is_said_at_once(tmp_path):
    (tmp_path / "policy.json").write_text("{}\n")
    (tmp_path / "fleet.yaml").write_text("defaults: {policy: policy.json}\ntasks: [{id: a, command: 'true', detectors: nope.yaml}]\n")
    import pytest

    from cursorpilot.errors import BadInput

    with pytest.raises(BadInput, match="detectors: not found: .*nope.yaml"):
        load_fleet(tmp_path / "fleet.yaml")
    (tmp_path / "fleet.yaml").write_text("defaults: {policy: policy.json, keep_ci_env: true}\ntasks: [{id: a, command: 'true'}]\n")
    opts = run_options(load_fleet(tmp_path / "fleet.yaml").tasks[0])
    assert opts[:3] == ["--keep-ci-env", "--policy", str(tmp_path / "policy.json")]


def test_a_runargs_range_is_the_fleet_keys_range(tmp_path):
    import pytest

    from cursorpilot.errors import BadInput

    (tmp_path / "fleet.yaml").write_text("tasks: [{id: a, command: 'true', cols: 5}]\n")
    with pytest.raises(BadInput, match="cols: Input should be greater than or equal to 20"):
        load_fleet(tmp_path / "fleet.yaml")
