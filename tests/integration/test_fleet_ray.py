"""The Ray engine (`pip install 'cursor-pilot[ray]'`), on a Ray started here (`ray.init(num_cpus=2)`, with the
`pty_sessions` resource a node declares): the same six tasks as the local engine's test give the same results, the
fleet joining that cluster with --address; and a running task force-cancelled leaves no program behind.

Skipped, saying why, where ray is not installed; CI installs the extra (.ci/run) and fails instead."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests import fleetlab as lab

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def cluster():
    try:
        import ray
    except ImportError:
        lab.no_ray()
    import logging

    # Ray ends a dead worker's child processes itself (by default, on this machine); a cluster may not: the fleet's own
    # guarantee (a run dies with its worker, and stops its program) is what is tested here, with Ray's turned off
    before = dict(os.environ)
    os.environ["RAY_kill_child_processes_on_worker_exit"] = "0"
    ray.init(num_cpus=2, resources={"pty_sessions": 3}, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        # ray.init leaves its own variables in this process's environment (PYTHONBREAKPOINT among them): every later
        # test's run inherited it, and a run with a PYTHON* variable of its own is never served by the resident pilot
        os.environ.clear()
        os.environ.update(before)


def answer_on_the_inbox(inbox: str, task: str, text: str) -> str:
    index = urllib.request.urlopen(inbox, timeout=30).read().decode()
    link = re.search(rf'data-task="{task}"><h2><a href="([^"]+)"', index).group(1)
    data = urllib.parse.urlencode({"answer": text}).encode()
    return urllib.request.urlopen(urllib.request.Request(link, data=data), timeout=60).read().decode()


def test_the_same_six_tasks_on_ray_give_the_same_results(cluster, tmp_path):
    name = f"fr{secrets.token_hex(3)}"
    repo = lab.repo(tmp_path / "repo")
    fleet_file = lab.six_tasks(repo, name, env={"XDG_STATE_HOME": str(tmp_path / "state")})
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "3", "--engine", "ray", "--address", cluster, "--dir", str(folder),
                      "--listen", "127.0.0.1:0"], out, tmp_path)
    try:
        inbox = lab.wait_for(lambda: lab.line(out, "inbox:"), 90, "the inbox's link")
        lab.wait_for(lambda: lab.rows(folder).get("asks", {}).get("status") == "waiting", 150, f"asks waits: {lab.rows(folder)}", every=0.5)
        assert "accepted" in answer_on_the_inbox(inbox, "asks", "8080")
        code = proc.wait(180)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.read_text()
    assert code == 1, text
    rows = lab.rows(folder)
    assert {t: r["status"] for t, r in rows.items()} == lab.STATUS, text
    assert {t: r["exit_code"] for t, r in rows.items()} == {"sim": 0, "name": 0, "confirm": 0, "asks": 0, "fails": 1, "slow": 4}
    assert all(r["node"] for r in rows.values())  # each said where it ran
    assert (folder / "work" / "asks" / "port.txt").read_text() == "8080"
    assert (folder / "work" / "name" / "name.txt").read_text() == "fleet-app\n"
    assert all((folder / "runs" / t / "report.html").is_file() for t in lab.STATUS)
    branches = subprocess.run(["git", "-C", str(repo), "branch", "--list", f"cursor-pilot/{name}/*"], capture_output=True, text=True).stdout
    assert len(branches.splitlines()) == 6
    assert lab.marked(name) == []


def test_a_running_task_force_cancelled_leaves_no_program(cluster, tmp_path):
    from cursorpilot.fleet.command import Isolated, UnitSpec
    from cursorpilot.fleet.facts import Lost, ProgramStarted
    from cursorpilot.fleet.ray_engine import RayEngine
    from cursorpilot.fleet.unit import MARK

    mark = f"fc{secrets.token_hex(4)}"
    program = tmp_path / f"{mark}.py"
    # a program that outlives its terminal (SIGHUP ignored): only its run can end it
    program.write_text("import signal, time\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\ninput('Ready? ')\ntime.sleep(300)\n")
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / MARK).write_text("f1\n")
    engine = RayEngine("f1", None, 1)  # the cluster this process joined
    spec = UnitSpec(fleet_dir=str(folder), task="long", run_dir=str(folder / "runs" / "long"),
                    options=("--answer", "Ready=y", "--", sys.executable, str(program)), place=Isolated("none", str(folder / "work" / "long")),
                    env={"FLEET_TEST": mark, "XDG_STATE_HOME": str(tmp_path / "state")})
    engine.start(spec)
    # one loop waits on every task's stream (ray.wait over their generators): no thread of a task's own
    assert [t.name for t in threading.enumerate() if t.name.startswith("ray-")] == ["ray-streams"]
    facts = []
    deadline = time.monotonic() + 90
    while not any(isinstance(f, ProgramStarted) for f in facts):
        assert time.monotonic() < deadline, facts
        facts.append(engine.facts.get(timeout=deadline - time.monotonic()))
    lab.wait_for(lambda: [p for p in lab.marked(mark) if f"{mark}.py" in p], 30, "the program runs")
    engine.stop("long", "the test cancels it", force=True)
    lost = engine.facts.get(timeout=60)
    while not isinstance(lost, Lost):
        lost = engine.facts.get(timeout=60)
    assert lost.task == "long"
    lab.wait_for(lambda: lab.marked(mark) == [], 30, f"nothing left running: {lab.marked(mark)}")
    engine.close()
    assert Path(spec.run_dir, "transcript.jsonl").is_file()  # what it recorded is kept


def test_ctrl_c_on_ray_stops_every_task_and_leaves_no_process(cluster, tmp_path):
    from tests.integration.test_fleet import SLOW

    name = f"fr{secrets.token_hex(3)}"
    (tmp_path / "slow.py").write_text(SLOW)
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps({"name": name, "defaults": {"answers": ["Ready=y"], "env": {"FLEET_TEST": name,
                                      "XDG_STATE_HOME": str(tmp_path / "state")}},
                                      "tasks": [{"id": f"t{i}", "command": [sys.executable, str(tmp_path / "slow.py"), str(tmp_path / "go")]}
                                                for i in range(1, 4)]}))
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "2", "--engine", "ray", "--address", cluster, "--dir", str(folder)], out, tmp_path)
    lab.wait_for(lambda: len([p for p in lab.marked(name) if "slow.py" in p and "cursorpilot" not in p]) == 2, 90, "two programs running")
    assert lab.interrupt(proc) == 130, out.read_text()
    lab.wait_for(lambda: lab.marked(name) == [], 30, f"nothing left running: {lab.marked(name)}")
    rows = lab.rows(folder)
    assert sorted(r["status"] for r in rows.values()) == ["interrupted", "interrupted", "pending"], out.read_text()
    assert all((folder / "runs" / t / "manifest.json").is_file() for t, r in rows.items() if r["status"] == "interrupted")


def test_a_run_killed_by_sigkill_and_a_lost_worker_are_killed_and_fleet_resume_on_ray_completes_them(cluster, tmp_path):
    """On Ray, the two ways a task dies without its run's own end: its run SIGKILLed (the OOM killer), and its worker
    killed (a lost worker: the run dies with it). Both are `killed`, the third task finishes, and `fleet resume`
    continues both runs (run --resume) to their ends."""
    import signal

    from tests.integration.test_fleet import SLOW

    name = f"fr{secrets.token_hex(3)}"
    go = tmp_path / "go"
    (tmp_path / "slow.py").write_text(SLOW)
    slow = [sys.executable, str(tmp_path / "slow.py"), str(go)]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps({"name": name, "defaults": {"answers": ["Ready=y"], "env": {"FLEET_TEST": name,
                                      "XDG_STATE_HOME": str(tmp_path / "state")}},
                                      "tasks": [{"id": "oom", "command": slow}, {"id": "lost", "command": slow},
                                                {"id": "other", "command": slow, "env": {"QUICK": "1"}}]}))
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "3", "--engine", "ray", "--address", cluster, "--dir", str(folder)], out, tmp_path)
    try:
        for task in ("oom", "lost"):
            transcript = folder / "runs" / task / "transcript.jsonl"
            lab.wait_for(lambda: transcript.is_file() and '"type": "answer"' in transcript.read_text(), 90, f"{task}'s answer typed")
        oom = lab.wait_for(lambda: lab.run_process(folder / "runs" / "oom"), 10, "oom's run")
        lost = lab.wait_for(lambda: lab.run_process(folder / "runs" / "lost"), 10, "lost's run")
        os.kill(oom, signal.SIGKILL)
        os.kill(lab.parent(lost), signal.SIGKILL)  # its Ray worker
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.read_text()
    rows = lab.rows(folder)
    assert code == 1, text
    assert {t: r["status"] for t, r in rows.items()} == {"oom": "killed", "lost": "killed", "other": "done"}, text
    assert rows["oom"]["exit_code"] == 137 and "SIGKILL" in rows["oom"]["reason"]
    assert rows["lost"]["exit_code"] is None and "worker died" in rows["lost"]["reason"], rows["lost"]
    lab.wait_for(lambda: lab.marked(name) == [], 30, f"nothing left running: {lab.marked(name)}")

    go.write_text("")
    r = lab.fleet("resume", str(folder), "--address", cluster, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(ln.split(":")[0] for ln in r.stdout.splitlines() if ": started" in ln) == ["lost", "oom"], r.stdout
    assert {t: x["status"] for t, x in lab.rows(folder).items()} == {"oom": "done", "lost": "done", "other": "done"}
    for task in ("oom", "lost"):
        kinds = [json.loads(ln)["type"] for ln in (folder / "runs" / task / "transcript.jsonl").read_text().splitlines()]
        assert kinds.count("run_started") == 1 and "run_resumed" in kinds, (task, kinds)
    assert lab.marked(name) == []
