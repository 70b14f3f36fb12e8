"""The fleet file (cursorpilot/fleet/model.py) read like a plan: every mistake is one line with the file, the line and
the column, and a mistyped key names the key it probably meant; what it reads is the `cursor-pilot run` each task is."""

from __future__ import annotations

import subprocess

import pytest

from cursorpilot.errors import BadInput
from cursorpilot.fleet.command import place, run_options
from cursorpilot.commands.runargs import FIELDS
from cursorpilot.fleet import model

GOOD = """\
name: backlog
defaults:
  program: cursor-agent --model auto
  prompt: Fix what the task says, nothing else.
  answers: ['Continue\\?=y']
  timeout: 30m
  env: {A: "1"}
tasks:
  - id: fix-12
    task: Fix the crash in the parser
  - id: svc
    command: npm init
    timeout: 5m
    env: {B: two}
  - id: planned
    plan: plan.yaml
"""


def load_fleet(path):
    return model.load_fleet(path, FIELDS)


def fleet(tmp_path, text: str, name: str = "fleet.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def error(tmp_path, text: str) -> str:
    with pytest.raises(BadInput) as exc:
        load_fleet(fleet(tmp_path, text))
    return str(exc.value)


def test_a_good_file_is_each_tasks_run_with_its_defaults(tmp_path):
    (tmp_path / "plan.yaml").write_text("name: p\nsteps: [{name: a, run: [true]}]\n")
    f = load_fleet(fleet(tmp_path, GOOD))
    assert f.name == "backlog" and [t.id for t in f.tasks] == ["fix-12", "svc", "planned"]
    fix, svc, planned = f.tasks
    assert run_options(fix) == ["--prompt", "Fix what the task says, nothing else.", "--timeout", "30m", "--answer", "Continue\\?=y",
                                "--", "cursor-agent", "--model", "auto", "Fix the crash in the parser"]
    assert run_options(svc)[-3:] == ["--", "npm", "init"] and "5m" in run_options(svc)
    assert svc.env == {"A": "1", "B": "two"}
    assert run_options(planned)[-2:] == ["--plan", str(tmp_path / "plan.yaml")]


def test_an_agent_task_is_sent_with_task_over_its_channel(tmp_path):
    f = load_fleet(fleet(tmp_path, "defaults: {agent: claude, channel: headless}\ntasks: [{id: a, task: do it}]\n"))
    assert run_options(f.tasks[0]) == ["--agent", "claude", "--headless", "--task", "do it"]
    assert f.name == "fleet"  # the file's stem


def test_a_mistyped_key_in_a_task_says_where_and_what_it_meant(tmp_path):
    msg = error(tmp_path, "defaults: {program: [x]}\ntasks:\n  - id: a\n    taks: do it\n")
    assert msg.startswith(f"{tmp_path / 'fleet.yaml'}:4:5: task 1 (a): unknown key 'taks' (did you mean 'task'?)"), msg


def test_a_mistyped_key_in_defaults_and_at_the_top(tmp_path):
    assert ":2:3: unknown key 'isolaton' (did you mean 'isolation'?)" in error(tmp_path, "defaults:\n  isolaton: copy\ntasks: [{id: a, command: x}]\n")
    assert ":1:1: unknown key 'task' (did you mean 'tasks'?)" in error(tmp_path, "task: [{id: a, command: x}]\n")


def test_a_bad_value_says_where(tmp_path):
    msg = error(tmp_path, "tasks:\n  - id: a\n    command: x\n    timeout: soon\n")
    assert ":4:5: task 1 (a): timeout: invalid duration 'soon'" in msg, msg
    msg = error(tmp_path, "tasks:\n  - id: a\n    command: x\n    isolation: branch\n")
    assert ":4:5: task 1 (a): isolation:" in msg and "worktree" in msg, msg


def test_a_task_needs_exactly_one_thing_to_run_and_a_program_for_its_text(tmp_path):
    assert "exactly one of task, command, plan (found: none)" in error(tmp_path, "tasks: [{id: a}]\n")
    assert "(found: task, command)" in error(tmp_path, "tasks: [{id: a, task: t, command: x}]\n")
    msg = error(tmp_path, "tasks:\n  - {id: a, task: t}\n")
    assert ":2:5: task 'a': task: needs a program or an agent" in msg, msg


def test_ids_are_unique_names_for_folders_and_branches(tmp_path):
    assert ":3:6: task id 'a' is already task 1's" in error(tmp_path, "tasks:\n  - {id: a, command: x}\n  - {id: a, command: y}\n")
    assert "is not an id" in error(tmp_path, "tasks: [{id: 'a b', command: x}]\n")
    assert "is not an id" in error(tmp_path, "tasks: [{id: ../up, command: x}]\n")


def test_isolation_needs_what_it_isolates(tmp_path):
    msg = error(tmp_path, "defaults: {isolation: copy}\ntasks: [{id: a, command: x}]\n")
    assert "isolation: copy needs source:" in msg
    msg = error(tmp_path, "defaults: {isolation: worktree}\ntasks: [{id: a, command: x}]\n")
    assert "needs a git repository" in msg
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    f = load_fleet(fleet(tmp_path, "name: n\ndefaults: {isolation: worktree}\ntasks: [{id: a, command: x}]\n"))
    where = place(f.tasks[0], f.name, "/w/a")
    assert (where.kind, where.repo, where.branch) == ("worktree", str(tmp_path), "cursor-pilot/n/a")


def test_broken_yaml_and_a_missing_file_are_one_line(tmp_path):
    assert ":3:1: invalid YAML" in error(tmp_path, "tasks:\n  - id: [a\n")
    with pytest.raises(BadInput, match="file not found"):
        load_fleet(tmp_path / "nope.yaml")
    assert ":1:1: a fleet file is a mapping" in error(tmp_path, "- a\n")
