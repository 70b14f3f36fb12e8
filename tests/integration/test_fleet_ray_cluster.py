"""The Ray engine on a two-node cluster on this machine (`ray.cluster_utils.Cluster`, each node declaring
`pty_sessions: 2`): four tasks run at once, two on each node; the worker node is lost mid-fleet; its two tasks are
`killed` (their runs died with their workers and stopped their programs), the head's two finish, and `fleet resume`
continues the two lost runs to their ends.

Skipped where ray is not installed (CI installs the extra, and fails instead)."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

import pytest

from tests import fleetlab as lab

pytestmark = pytest.mark.timeout(300)


@pytest.fixture()
def two_nodes():
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        lab.no_ray()
    before = dict(os.environ)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"pty_sessions": 2}, "include_dashboard": False})
    worker = cluster.add_node(num_cpus=1, resources={"pty_sessions": 2})
    cluster.wait_for_nodes()
    try:
        yield cluster, worker
    finally:
        cluster.shutdown()
        os.environ.clear()
        os.environ.update(before)


def raylet(node) -> int:
    from ray._private import ray_constants

    return node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid


WAITS = """\
import os, sys, time
input('Ready? ')
while not os.path.exists(sys.argv[1]):
    time.sleep(0.2)
print('finished')
"""


def test_two_nodes_four_tasks_at_once_a_node_lost_then_fleet_resume_completes_them(two_nodes, tmp_path):
    cluster, worker = two_nodes
    name = f"fn{secrets.token_hex(3)}"
    go = tmp_path / "go"
    (tmp_path / "slow.py").write_text(WAITS)
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps({"name": name, "defaults": {"answers": ["Ready=y"], "env": {"FLEET_TEST": name,
                                      "XDG_STATE_HOME": str(tmp_path / "state")}},
                                      "tasks": [{"id": f"t{i}", "command": [sys.executable, str(tmp_path / "slow.py"), str(go)]}
                                                for i in range(1, 5)]}))
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "4", "--engine", "ray", "--address", cluster.address, "--dir", str(folder)],
                     out, tmp_path)
    tasks = [f"t{i}" for i in range(1, 5)]
    try:
        for t in tasks:  # all four at once: each has answered its question and waits for `go`
            transcript = folder / "runs" / t / "transcript.jsonl"
            lab.wait_for(lambda: transcript.is_file() and '"type": "answer"' in transcript.read_text(), 120, f"{t} answered: {lab.rows(folder)}")
        runs = {t: lab.wait_for(lambda: lab.run_process(folder / "runs" / t), 10, f"{t}'s run") for t in tasks}
        # across both nodes: each run's worker is a child of its node's raylet
        on = {t: lab.parent(lab.parent(pid)) for t, pid in runs.items()}
        head, lost_node = raylet(cluster.head_node), raylet(worker)
        assert sorted(on.values()) == sorted([head, head, lost_node, lost_node]), (on, head, lost_node)
        lost = sorted(t for t, r in on.items() if r == lost_node)

        cluster.remove_node(worker, allow_graceful=False)  # the node is lost mid-fleet
        lab.wait_for(lambda: all(lab.rows(folder)[t]["status"] == "killed" for t in lost), 60, f"its tasks killed: {lab.rows(folder)}")
        go.write_text("")
        lab.wait_for(lambda: proc.poll() is not None, 120, f"the fleet's end: {lab.rows(folder)}\n{out.read_text()}", every=0.5)
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.read_text()
    rows = lab.rows(folder)
    assert code == 1, text
    assert {t: r["status"] for t, r in rows.items()} == {t: "killed" if t in lost else "done" for t in tasks}, text
    assert all("worker died" in rows[t]["reason"] for t in lost), rows
    lab.wait_for(lambda: lab.marked(name) == [], 30, f"nothing left running: {lab.marked(name)}")

    r = lab.fleet("resume", str(folder), "--address", cluster.address, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(ln.split(":")[0] for ln in r.stdout.splitlines() if ": started" in ln) == lost, r.stdout
    assert {t: x["status"] for t, x in lab.rows(folder).items()} == dict.fromkeys(tasks, "done")
    for t in lost:
        kinds = [json.loads(ln)["type"] for ln in Path(folder / "runs" / t / "transcript.jsonl").read_text().splitlines()]
        assert kinds.count("run_started") == 1 and "run_resumed" in kinds, (t, kinds)
    s = lab.fleet("status", str(folder), "--json", cwd=tmp_path)
    totals = json.loads(s.stdout)["totals"]
    assert (totals["tasks"], totals["done"], type(totals["cost_usd"])) == (4, 4, float)
    assert lab.marked(name) == []
