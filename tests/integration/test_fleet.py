"""`cursor-pilot fleet` on the local engine, as a user runs it: six real tasks at concurrency 3, each in a worktree on a
branch of its own; one task's question answered on the inbox page (in chromium) while the others finish; the fleet's
page looked at in the browser; Ctrl-C leaving no process; `fleet resume` running only what did not finish."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests import fleetlab as lab
from tests.browser import chromium

pytestmark = pytest.mark.timeout(300)

SLOW = """\
import os, sys, time
input('Ready? ')
if not os.environ.get('QUICK') and not os.path.exists(sys.argv[1]):
    time.sleep(120)
print('finished')
"""


def test_six_tasks_at_concurrency_3_worktrees_the_inbox_and_the_page(tmp_path):
    name = f"fl{secrets.token_hex(3)}"
    repo = lab.repo(tmp_path / "repo")
    fleet_file = lab.six_tasks(repo, name)
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "--concurrency", "3", "--dir", str(folder), "--listen", "127.0.0.1:0"], out, tmp_path)
    with chromium() as browser:
        inbox = lab.wait_for(lambda: lab.line(out, "inbox:"), 60, "the inbox's link")
        # the others finish while `asks` waits for a person
        lab.wait_for(lambda: all(lab.rows(folder).get(t, {}).get("status") == s for t, s in lab.STATUS.items() if t != "asks"), 150,
                     f"the five other tasks' ends: {lab.rows(folder)}", every=0.5)
        assert lab.rows(folder)["asks"]["status"] == "waiting" and proc.poll() is None
        page = browser.new_page()
        page.goto(inbox)
        page.wait_for_selector('li.asked[data-task="asks"]')
        assert page.locator("li.asked").count() == 1 and "Which port should the server use?" in page.inner_text("#inbox")
        page.click('li.asked[data-task="asks"] a')
        page.wait_for_selector("#answer")
        assert "asks: python" in page.inner_text(".where")  # the task's name beside its step
        page.fill("#answer", "8080")
        page.click("#send")
        page.wait_for_selector("#result")
        assert "accepted" in page.inner_text("#result")
        code = proc.wait(120)
        text = out.read_text()
        assert code == 1, text  # one task failed

        rows = lab.rows(folder)
        assert {t: r["status"] for t, r in rows.items()} == lab.STATUS, text
        assert {t: r["exit_code"] for t, r in rows.items()} == {"sim": 0, "name": 0, "confirm": 0, "asks": 0, "fails": 1, "slow": 4}
        assert rows["sim"]["result"]["answers"] == 5 and rows["sim"]["result"]["denials"] == 1
        assert (folder / "work" / "asks" / "port.txt").read_text() == "8080"
        assert (folder / "work" / "name" / "name.txt").read_text() == "fleet-app\n"
        assert not (repo / "name.txt").exists()
        branches = subprocess.run(["git", "-C", str(repo), "branch", "--list", f"cursor-pilot/{name}/*"], capture_output=True, text=True).stdout
        assert sorted(b.strip(" *+") for b in branches.splitlines()) == sorted(f"cursor-pilot/{name}/{t}" for t in lab.STATUS)
        worktrees = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True).stdout
        assert all(str(folder / "work" / t) in worktrees for t in lab.STATUS)
        assert "name.txt" in rows["name"]["result"]["diffstat"] or "1 file" in rows["name"]["result"]["diffstat"], rows["name"]
        assert "asks: asks a person: Which port should the server use?" in text and "fails: failed (exit 1" in text

        # the fleet's page, as a person looks at it
        requests: list[str] = []
        view = browser.new_page()
        view.on("request", lambda r: requests.append(r.url))
        view.goto((folder / "report.html").as_uri())
        assert view.inner_text("#fleet-status") == "finished" and "exit 1" in view.inner_text("#fleet-reason")
        shown = {view.get_attribute(f"tr.task >> nth={i}", "data-task"): view.get_attribute(f"tr.task >> nth={i}", "data-status")
                 for i in range(view.locator("tr.task").count())}
        assert shown == lab.STATUS
        assert view.inner_text('tr[data-task="slow"] td.exit') == "4" and "timeout" in view.inner_text('tr[data-task="slow"] td.status')
        assert view.inner_text('tr[data-task="sim"] td.denials') == "1"
        assert f"cursor-pilot/{name}/name" in view.inner_text('tr[data-task="name"] td.branch')
        assert "6" in view.inner_text("#totals")
        view.click('tr[data-task="sim"] td.run a')
        view.wait_for_selector("#outcome")
        assert view.inner_text("#outcome") == "Completed"
        assert [u for u in requests if not u.startswith("file://")] == []


def test_ctrl_c_leaves_no_process_and_resume_runs_only_the_unfinished(tmp_path):
    name = f"fl{secrets.token_hex(3)}"
    go = tmp_path / "go"
    (tmp_path / "slow.py").write_text(SLOW)
    tasks = [{"id": f"t{i}", "command": [sys.executable, str(tmp_path / "slow.py"), str(go)], **({"env": {"QUICK": "1"}} if i <= 2 else {})}
             for i in range(1, 7)]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps({"name": name, "defaults": {"answers": ["Ready=y"], "env": {"FLEET_TEST": name}}, "tasks": tasks}))
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "3", "--dir", str(folder)], out, tmp_path)
    running = lambda: [t for t, r in lab.rows(folder).items() if r["status"] == "running"]  # noqa: E731
    lab.wait_for(lambda: lab.rows(folder).get("t2", {}).get("status") == "done" and len(running()) == 3, 90, f"t1, t2 done, 3 running: {lab.rows(folder)}")
    lab.wait_for(lambda: len([p for p in lab.marked(name) if "slow.py" in p]) >= 3, 30, "three programs waiting")
    code = lab.interrupt(proc)
    assert code == 130, out.read_text()
    assert lab.marked(name) == []  # nothing left: not a run, not a program
    rows = lab.rows(folder)
    assert {t: r["status"] for t, r in rows.items()} == {"t1": "done", "t2": "done", "t3": "interrupted", "t4": "interrupted",
                                                          "t5": "interrupted", "t6": "pending"}, out.read_text()
    assert lab.state(folder)["status"] == "interrupted" and lab.state(folder)["exit_code"] == 130
    done_before = {t: (folder / "runs" / t / "transcript.jsonl").read_text() for t in ("t1", "t2")}

    go.write_text("")
    r = lab.fleet("resume", str(folder), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    started = sorted(ln.split(":")[0] for ln in r.stdout.splitlines() if ": started" in ln)
    assert started == ["t3", "t4", "t5", "t6"], r.stdout
    assert {t: x["status"] for t, x in lab.rows(folder).items()} == {f"t{i}": "done" for i in range(1, 7)}
    assert {t: (folder / "runs" / t / "transcript.jsonl").read_text() for t in ("t1", "t2")} == done_before
    resumed = [json.loads(ln)["type"] for ln in (folder / "runs" / "t3" / "transcript.jsonl").read_text().splitlines()]
    assert resumed.count("run_started") == 1 and "run_resumed" in resumed  # the interrupted run went on: cursor-pilot run --resume
    assert lab.marked(name) == []


def test_a_run_killed_by_sigkill_is_killed_not_failed_and_fleet_resume_completes_it(tmp_path):
    """The OOM killer, as a user meets it: a task's run is SIGKILLed while its program works. The task is `killed` (not
    `failed`, which `fleet resume` keeps), the other task finishes, and `fleet resume` runs it again to its end."""
    name = f"fl{secrets.token_hex(3)}"
    go = tmp_path / "go"
    (tmp_path / "slow.py").write_text(SLOW)
    tasks = [{"id": "victim", "command": [sys.executable, str(tmp_path / "slow.py"), str(go)]},
             {"id": "other", "command": [sys.executable, str(tmp_path / "slow.py"), str(go)], "env": {"QUICK": "1"}}]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps({"name": name, "defaults": {"answers": ["Ready=y"], "env": {"FLEET_TEST": name}}, "tasks": tasks}))
    folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
    proc = lab.start(["run", str(fleet_file), "-j", "2", "--dir", str(folder)], out, tmp_path)
    transcript = folder / "runs" / "victim" / "transcript.jsonl"
    lab.wait_for(lambda: transcript.is_file() and '"type": "answer"' in transcript.read_text(), 90, "the victim's answer typed")
    run = lab.wait_for(lambda: lab.run_process(folder / "runs" / "victim"), 10, "the victim's run process")
    os.kill(run, signal.SIGKILL)
    code = proc.wait(90)
    text = out.read_text()
    rows = lab.rows(folder)
    assert code == 1 and "some tasks were killed (fleet resume runs them again)" in lab.state(folder)["reason"], text
    assert (rows["victim"]["status"], rows["victim"]["exit_code"]) == ("killed", 137), rows["victim"]
    assert "signal 9 (SIGKILL)" in rows["victim"]["reason"] and rows["other"]["status"] == "done"
    lab.wait_for(lambda: lab.marked(name) == [], 15, f"nothing left running: {lab.marked(name)}")

    go.write_text("")
    r = lab.fleet("resume", str(folder), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines() if ": started" in ln] == ["victim"], r.stdout
    assert {t: x["status"] for t, x in lab.rows(folder).items()} == {"victim": "done", "other": "done"}
    kinds = [json.loads(ln)["type"] for ln in transcript.read_text().splitlines()]
    assert kinds.count("run_started") == 1 and "run_resumed" in kinds  # the same run went on (run --resume)
    assert lab.marked(name) == []


def test_status_json_and_report_read_the_fleets_folder(tmp_path):
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text("name: st\ntasks:\n  - {id: ok, command: 'true'}\n  - {id: bad, command: 'false'}\n")
    folder = tmp_path / "fleet"
    r = lab.fleet("run", str(fleet_file), "--dir", str(folder), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    s = lab.fleet("status", str(folder), "--json", cwd=tmp_path)
    doc = json.loads(s.stdout)
    assert doc["status"] == "finished" and doc["exit_code"] == 1
    assert [(t["id"], t["status"], t["exit_code"]) for t in doc["tasks"]] == [("ok", "done", 0), ("bad", "failed", 1)]
    # typed for scripts: counts are numbers, the cost a float in USD, the wall seconds (not "2", "$0.0000", "0.1s")
    totals = doc["totals"]
    wall = totals.pop("wall_s")
    assert totals == {"tasks": 2, "done": 1, "failed": 1, "answers": 0, "escalations": 0, "denials": 0, "cost_usd": 0.0}
    assert type(totals["tasks"]) is int and type(totals["cost_usd"]) is float and type(wall) is float and wall > 0
    ok = doc["tasks"][0]
    assert (ok["turns"], ok["answers"], ok["cost_usd"]) == (0, 0, 0.0) and type(ok["wall_s"]) is float
    table = lab.fleet("status", str(folder), cwd=tmp_path)
    assert "ok" in table.stdout and "failed" in table.stdout
    assert "tasks 2 · done 1 · failed 1 · answers 0 · escalations 0 · denials 0 · cost $0.0000 · task wall" in " ".join(table.stdout.split())
    (folder / "report.html").unlink()
    rep = lab.fleet("report", str(folder), cwd=tmp_path)
    assert rep.returncode == 0 and (folder / "report.html").is_file() and str(folder / "report.html") in rep.stdout


def test_a_broken_fleet_file_is_one_line_and_exit_2_before_anything_runs(tmp_path):
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text("tasks:\n  - id: a\n    comand: 'true'\n")
    r = lab.fleet("run", str(fleet_file), "--dir", str(tmp_path / "fleet"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().endswith("unknown key 'comand' (did you mean 'command'?)"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "fleet").exists()
    r = lab.fleet("status", str(tmp_path / "nothing"), cwd=tmp_path)
    assert r.returncode == 2 and "not a fleet's folder" in r.stderr


def test_the_ray_engine_without_ray_installed_says_how_to_get_it(tmp_path):
    try:
        import ray  # noqa: F401
        pytest.skip("ray is installed here: tests/integration/test_fleet_ray.py runs the engine")
    except ImportError:
        pass
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text("tasks: [{id: a, command: 'true'}]\n")
    r = lab.fleet("run", str(fleet_file), "--engine", "ray", cwd=tmp_path)
    assert r.returncode == 2 and "pip install 'cursor-pilot[ray]'" in r.stderr


def test_the_default_install_imports_no_ray(tmp_path):
    probe = "import sys, cursorpilot.cli, cursorpilot.fleet.runner, cursorpilot.fleet.local; print('ray' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.strip() == "False", r.stderr


ASKS_MANY = """\
import sys, time
for n in range(8):
    input(f'Value {n}? ')
    time.sleep(0.3)
"""


def test_the_budget_spent_stops_running_tasks_at_their_next_question_and_starts_no_more(tmp_path):
    """With a model provider (the real openai SDK against a fake server): the runs' costs add up to --max-cost, the
    running tasks stop at their next question (exit 4, said in their row), the third never starts; the fleet exits 4."""
    from tests.fakes.llm_server import FakeLLM

    (tmp_path / "asks.py").write_text(ASKS_MANY)
    (tmp_path / "prices.yaml").write_text("gpt-4o-mini: [20000, 20000]\n")
    with FakeLLM(answer=lambda prompt: json.dumps({"action": "type", "text": "7", "submit": True})) as llm:
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(json.dumps({"name": "budget", "defaults": {
            "provider": "openai", "model": "gpt-4o-mini", "prices": str(tmp_path / "prices.yaml"), "timeout": "60s",
            "env": {"OPENAI_API_KEY": "sk-test-fleet-key-0000000000", "OPENAI_BASE_URL": f"{llm.url}/v1"}},
            "tasks": [{"id": f"t{i}", "command": [sys.executable, str(tmp_path / "asks.py")]} for i in (1, 2, 3)]}))
        folder = tmp_path / "fleet"
        r = lab.fleet("run", str(fleet_file), "-j", "2", "--max-cost", "0.5", "--dir", str(folder), cwd=tmp_path)
    rows = lab.rows(folder)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "budget is spent" in r.stdout
    for t in ("t1", "t2"):
        assert (rows[t]["status"], rows[t]["exit_code"]) == ("limit", 4), rows[t]
        assert "budget" in rows[t]["reason"] and 0 < rows[t]["answers"] < 8
    assert rows["t3"]["status"] == "pending" and rows["t3"]["attempts"] == 0
    assert sum(x["cost_usd"] for x in rows.values()) >= 0.5
    assert "budget" in lab.state(folder)["reason"]


def test_notify_sends_one_notice_per_question_each_with_its_own_single_use_link(tmp_path):
    from tests.integration.test_human_e2e import Receiver

    hook = Receiver()
    try:
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(json.dumps({"name": "notices", "defaults": {"answers": ["never asked=n"], "timeout": "90s"}, "tasks": [
            {"id": t, "command": [sys.executable, "-c", f"open('{t}.txt', 'w').write(input('Release name for {t}? '))"]}
            for t in ("a", "b")]}))
        folder, out = tmp_path / "fleet", tmp_path / "fleet.out"
        proc = lab.start(["run", str(fleet_file), "-j", "2", "--dir", str(folder), "--notify", hook.url], out, tmp_path)
        links = {hook.link(1), hook.link(2)}
        assert len(links) == 2 and all("/d/" in link for link in links)
        titles = sorted(n["title"] for n in hook.notices)
        assert titles == ["cursor-pilot needs you: Release name for a?", "cursor-pilot needs you: Release name for b?"]
        for link in links:
            body = urllib.parse.urlencode({"answer": "v1"}).encode()
            assert urllib.request.urlopen(urllib.request.Request(link, data=body), timeout=60).status == 200
            with pytest.raises(urllib.error.HTTPError) as again:
                urllib.request.urlopen(urllib.request.Request(link, data=body), timeout=60)
            assert again.value.code == 409  # single use
        assert proc.wait(90) == 0, out.read_text()
        assert len(hook.notices) == 2  # one per question
        assert all((folder / "work" / t / f"{t}.txt").read_text() == "v1" for t in ("a", "b"))
    finally:
        hook.close()


def test_the_inbox_lists_only_for_its_own_token_and_only_its_own_host():
    from cursorpilot.fleet.inbox import Inbox
    from cursorpilot.human import page

    said: list[str] = []
    inbox = Inbox("f", page.bind("127.0.0.1", 0), "127.0.0.1", False, (), said.append)
    inbox.start()
    try:
        assert "Nothing waits for you" in urllib.request.urlopen(inbox.link, timeout=10).read().decode()
        for url, headers, status in ((inbox.link[:-3] + "xyz", {}, 403), (inbox.base + "/i/", {}, 404),
                                     (inbox.link, {"Host": "evil.example:80"}, 421)):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10)
            assert refused.value.code == status, url
    finally:
        inbox.close()
