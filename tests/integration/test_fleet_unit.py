"""One task where it runs (cursorpilot/fleet/unit.py, isolation.py): its folder made (a copy, a worktree that a resumed
task finds as it was left), and a run folder the fleet can't see (a Ray node without the fleet's disk) sent back whole."""

from __future__ import annotations

import json
import subprocess
import sys

from cursorpilot.fleet import isolation
from cursorpilot.fleet.command import Isolated, UnitSpec
from cursorpilot.fleet.facts import Ended, ProgramStarted, Spawned
from cursorpilot.fleet.unit import MARK, run_unit, unpack
from tests import fleetlab


def test_a_copy_is_made_once_and_a_resumed_task_finds_it_as_it_was_left(tmp_path):
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "a.txt").write_text("a")
    place = Isolated("copy", str(tmp_path / "work" / "t1"), source=str(source))
    isolation.prepare(place)
    assert (tmp_path / "work" / "t1" / "pkg" / "a.txt").read_text() == "a"
    (tmp_path / "work" / "t1" / "pkg" / "a.txt").write_text("changed by the task")
    isolation.prepare(place)
    assert (tmp_path / "work" / "t1" / "pkg" / "a.txt").read_text() == "changed by the task"
    assert (source / "pkg" / "a.txt").read_text() == "a"


def test_a_worktree_on_its_own_branch_made_again_after_its_folder_is_gone(tmp_path):
    repo = fleetlab.repo(tmp_path / "repo")
    place = Isolated("worktree", str(tmp_path / "work" / "t1"), repo=str(repo), branch="cursor-pilot/f/t1")
    isolation.prepare(place)
    isolation.prepare(place)  # found as it was
    assert (tmp_path / "work" / "t1" / "README.md").is_file()
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tmp_path / "work" / "t1")], check=True)
    isolation.prepare(place)  # the branch is still there: checked out again, not made anew
    head = subprocess.run(["git", "-C", str(tmp_path / "work" / "t1"), "branch", "--show-current"], capture_output=True, text=True)
    assert head.stdout.strip() == "cursor-pilot/f/t1"


def test_a_run_folder_the_fleet_cant_see_comes_back_whole(tmp_path):
    fleet_dir = tmp_path / "fleet"
    fleet_dir.mkdir()
    (fleet_dir / MARK).write_text("the-fleets-id\n")
    spec = UnitSpec(fleet_dir=str(fleet_dir), task="t1", run_dir=str(tmp_path / "node" / "runs" / "t1"),
                    options=("--answer", "Go=y", "--", sys.executable, "-c", "input('Go? ')"), place=Isolated("none", str(tmp_path / "node" / "work" / "t1")))
    items = list(run_unit(spec, "another-fleets-id", lambda: None))  # as on a node that does not share the fleet's folder
    assert isinstance(items[0], Spawned) and any(isinstance(i, ProgramStarted) for i in items)
    archive = [i for i in items if isinstance(i, bytes)]
    ended = items[-1]
    assert len(archive) == 1 and isinstance(ended, Ended) and ended.result.exit_code == 0 and ended.result.answers == 1
    unpack(archive[0], tmp_path / "back" / "runs" / "t1")
    types = [json.loads(ln)["type"] for ln in (tmp_path / "back" / "runs" / "t1" / "transcript.jsonl").read_text().splitlines()]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert (tmp_path / "back" / "runs" / "t1" / "report.html").is_file()


def test_on_the_fleets_own_disk_nothing_is_sent_back(tmp_path):
    (tmp_path / MARK).write_text("f\n")
    spec = UnitSpec(fleet_dir=str(tmp_path), task="t1", run_dir=str(tmp_path / "runs" / "t1"), options=("--", "true"),
                    place=Isolated("none", str(tmp_path / "work" / "t1")))
    items = list(run_unit(spec, "f", lambda: None))
    assert not [i for i in items if isinstance(i, bytes)] and items[-1].result.exit_code == 0
