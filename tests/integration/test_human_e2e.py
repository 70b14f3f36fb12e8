"""A person reached wherever they are, end to end (docs/human.md): the real CLI, unattended (stdin is not a terminal),
a real webhook receiver on 127.0.0.1 for the `--notify json://` notice, and the decision page opened in a real browser
(Debian's chromium over CDP, as the report's tests drive it). A program line prompt, an ACP permission, an agent's
blocked turn end; and a person at the terminal racing the page (cursor-pilot under a real PTY as their terminal).

Screenshots of the page go to the test's folder, or to $CURSORPILOT_HUMAN_SHOTS (docs/ keeps two of them)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.browser import chromium
from tests.integration.test_human_page import call

pytestmark = pytest.mark.timeout(120)
# after its answer the program works on (a dot at a time) until the test lets it end: the page is still there for a late answer
ASKS = ('echo "about to ask"; echo "3 packages built"; read -p "Release name: " a; echo "got:$a"; '
        'while [ ! -f go ]; do printf .; sleep 0.2; done; test "$a" = v1.2')


class Receiver:
    """A webhook on 127.0.0.1: what Apprise's json:// posts arrives here."""

    def __init__(self):
        self.notices: list[dict] = []
        self.arrived = threading.Condition()
        outer = self

        class Hook(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.end_headers()
                with outer.arrived:
                    outer.notices.append(body)
                    outer.arrived.notify_all()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        self.url = f"json://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def link(self, n: int = 1, timeout: float = 40) -> str:
        """The decision page's link in the n-th notice, once it has come."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.notices) >= n, timeout), "no notice came"
            return re.search(r"http://\S+", self.notices[n - 1]["message"]).group(0)

    def close(self):
        self.server.shutdown()


@pytest.fixture
def hook():
    r = Receiver()
    yield r
    r.close()


def start(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    env = {**{k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_PILOT_NOTIFY")}, **(env or {})}
    env["CURSORPILOT_SIM_RECORD"] = str(tmp_path / "received.jsonl")
    return subprocess.Popen([sys.executable, "-m", "cursorpilot", "run", "--log", str(tmp_path / "log"), "--timeout", "90s", *args],
                            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)


def finished(proc: subprocess.Popen) -> tuple[int, str]:
    """How the run ended; a test that failed while it ran ends it first (not a 60 s wait on a question nobody answers)."""
    if sys.exc_info()[0] is not None:
        proc.kill()
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out


def records(tmp_path: Path, type_: str) -> list[dict]:
    lines = (tmp_path / "log" / "transcript.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["type"] == type_]


def shot(page, tmp_path: Path, name: str) -> Path:
    folder = Path(os.environ.get("CURSORPILOT_HUMAN_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def submit(page, selector: str):
    """Click what posts the form; the response to the POST (its status, the page it leads to)."""
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.click(selector)
    page.wait_for_load_state()
    return posted.value


def test_an_unattended_line_prompt_is_answered_on_the_page_from_the_notice(tmp_path, hook):
    proc = start(tmp_path, "--answer", "Continue=y", "--notify", hook.url, "--report", "--", "bash", "-c", ASKS)
    try:
        link = hook.link()
        with chromium() as browser:
            phone, laptop = browser.new_page(), browser.new_page()  # the same link open twice: one answer wins
            phone.set_viewport_size({"width": 900, "height": 900})
            phone.goto(link)
            laptop.goto(link)
            assert phone.inner_text("#question").strip() == "Release name:"
            assert "about to ask" in phone.inner_text("#screen") and "3 packages built" in phone.inner_text("#screen")
            assert "no rule matches this prompt" in phone.inner_text(".why")
            shot(phone, tmp_path, "human-page")
            phone.fill("#answer", "v1.2")
            first = submit(phone, "#send")
            assert first.status == 200 and "Thank you" in phone.inner_text("h1")
            laptop.fill("#answer", "v1.3")
            second = submit(laptop, "#send")
            assert second.status == 409 and "already answered on the page" in laptop.inner_text("#result")
    finally:
        (tmp_path / "go").touch()
        code, out = finished(proc)
    assert code == 0, out
    assert "got:v1.2" in out and "got:v1.3" not in out
    notice = hook.notices[0]
    assert notice["title"] == "cursor-pilot needs you: Release name:" and "no rule matches this prompt" in notice["message"]
    assert len(hook.notices) == 1  # once per question
    assert [(r["channel"], r["by"]) for r in records(tmp_path, "human_answered")] == [("page", "127.0.0.1")]
    assert [(r["status"], r["text"]) for r in records(tmp_path, "human_refused")] == [(409, "v1.3")]
    assert link.split("/d/")[1] not in (tmp_path / "log" / "transcript.jsonl").read_text()  # the token is no record's
    row = next(r for r in json.loads((tmp_path / "log" / "report.json").read_text())["ledger"] if r["outcome"] == "answered")
    assert row["source"] == "human" and re.fullmatch(r"answered on the page \(127\.0\.0\.1\), \d+\.\d s after it was asked", row["why"])


PERMISSION = """name: human-permission
turns:
  - - say: "I'll add the health check."
    - tool: {title: "Write src/health.py", kind: edit, rawInput: {file_path: "src/health.py"},
             diff: {path: "src/health.py", old: "", new: "def ok():\\n    return True\\n"},
             write: {path: "src/health.py", content: "def ok():\\n    return True\\n"}}
    - say: "Done: src/health.py has the check."
"""


def test_an_acp_permission_is_answered_by_an_option_picked_on_the_page(tmp_path, hook):
    (tmp_path / "scenario.yaml").write_text(PERMISSION)
    proc = start(tmp_path, "--acp", "--task", "Add a health check", "--provider", "rules", "--notify", hook.url, "--prompt",
                 "Add the health check the team asked for. Ask before writing anything outside src/.",
                 "--", "cursor-pilot", "sim", "acp", "scenario.yaml", "--record", "agent.jsonl")
    try:
        link = hook.link()
        assert "Options: Allow, Always allow, Reject" in hook.notices[0]["message"]
        with chromium() as browser:
            page = browser.new_page()
            page.set_viewport_size({"width": 900, "height": 900})
            page.goto(link)
            assert "+def ok():" in page.inner_text("#question") and "Write src/health.py" in page.inner_text("#question")
            assert [b.inner_text() for b in page.query_selector_all("#options button")] == ["Allow", "Always allow", "Reject"]
            shot(page, tmp_path, "human-page-permission")
            assert submit(page, "#options button[value='Allow']").status == 200
    finally:
        code, out = finished(proc)
    assert code == 0, out
    assert (tmp_path / "src" / "health.py").read_text() == "def ok():\n    return True\n"
    answer = records(tmp_path, "answer")[0]
    assert (answer["reply"], answer["option_id"], answer["source"]) == ("Allow", "allow-once", "human")


def test_a_blocked_turn_end_gets_its_next_instruction_from_the_page(tmp_path, hook):
    """The Cursor simulator stops after a denial; with rules only, no rule says what to tell it: a person does."""
    proc = start(tmp_path, "--profile", "cursor", "--provider", "rules", "--notify", hook.url, "--done-when",
                 "grep -q followup received.jsonl", "--", "cursor-pilot", "sim", "cursor", "denial-wait")
    instruction = "Leave the data alone and finish."
    try:
        link = hook.link()
        with chromium() as browser:
            page = browser.new_page()
            page.goto(link)
            assert "I stopped and will wait for instructions" in page.inner_text("#question")
            assert "no rule of kind turn_end" in page.inner_text(".why")
            page.fill("#answer", instruction)  # a text area: an instruction may take several lines
            assert page.eval_on_selector("#answer", "e => e.tagName") == "TEXTAREA"
            assert submit(page, "#send").status == 200
    finally:
        code, out = finished(proc)
    assert code == 0, out
    received = [json.loads(line) for line in (tmp_path / "received.jsonl").read_text().splitlines()]
    assert [e["text"] for e in received if e["event"] == "followup"] == [instruction]
    turns = records(tmp_path, "turn_end")
    assert [t["verdict"] for t in turns] == ["blocked", "done"]


def test_a_page_answer_the_deny_policy_refuses_is_not_typed_and_the_page_says_why(tmp_path, hook):
    proc = start(tmp_path, "--answer", "Continue=y", "--notify", hook.url, "--", "bash", "-c", ASKS)
    try:
        link = hook.link()
        status, text = call(link, "v1.2; rm -rf ~")
        assert status == 422 and "denied by policy rule" in text
        assert call(link, "v1.2")[0] == 200
    finally:
        (tmp_path / "go").touch()
        code, out = finished(proc)
    assert code == 0 and "rm -rf" not in (tmp_path / "log" / "session.raw").read_text(errors="replace"), out


def test_human_timeout_ends_an_unanswered_run_with_exit_3_and_resume_asks_again(tmp_path):
    (tmp_path / "go").touch()
    proc = start(tmp_path, "--answer", "Continue=y", "--listen", "127.0.0.1:0", "--human-timeout", "1s", "--", "bash", "-c", ASKS)
    code, out = finished(proc)
    assert code == 3, out
    assert "nobody answered within 1s (--human-timeout)" in out
    assert records(tmp_path, "human_unanswered")[0]["why"] == "nobody answered within 1s (--human-timeout)"


def test_on_human_timeout_no_answers_the_questions_own_no(tmp_path):
    program = 'read -p "Overwrite config.yaml? [y/N] " a; echo "got:$a"'
    proc = start(tmp_path, "--answer", "Continue=y", "--listen", "127.0.0.1:0", "--human-timeout", "1s", "--on-human-timeout", "no",
                 "--", "bash", "-c", program)
    code, out = finished(proc)
    assert code == 0 and "got:n" in out, out
    assert records(tmp_path, "human_answered")[0]["channel"] == "timeout"


def test_on_human_timeouts_no_is_not_a_persons_answer_and_nobody_at_a_pipe_is_offered_to_save_it(tmp_path):
    """The automatic `n` was shown `[human]`, counted "1 by you" and offered as the person's answer to keep; and with stdin
    not a terminal the run still asked "Save your answers as rules? [y/N]" (of nobody)."""
    program = 'read -p "Overwrite config.yaml? [y/N] " a; echo "got:$a"'
    proc = start(tmp_path, "--answer", "Continue=y", "--listen", "127.0.0.1:0", "--human-timeout", "1s", "--on-human-timeout", "no",
                 "--", "bash", "-c", program)
    code, out = finished(proc)
    assert code == 0 and "got:n" in out, out
    assert "answer 'n'  [on-human-timeout]" in out and "answers: 1 (1 by --on-human-timeout)" in out, out
    assert "[human]" not in out and "by you" not in out and "Save your answers" not in out
    assert [r["source"] for r in records(tmp_path, "answer")] == ["on-human-timeout"]


def test_after_the_run_its_links_answer_410_this_run_has_ended_and_a_new_run_takes_the_port(tmp_path):
    """After the run ended, the decision page's link (from a phone's notice, say) was refused at the connection, where
    the docs promise 410."""
    import socket

    from cursorpilot.human import ended

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listen = f"127.0.0.1:{port}"
    try:
        proc = start(tmp_path, "--answer", "Continue=y", "--listen", listen, "--human-timeout", "1s", "--", "bash", "-c", 'read -p "Name: " a')
        code, out = finished(proc)
        assert code == 3, out
        link = re.search(r"answer on the decision page: (http://\S+)", out).group(1)
        assert call(link) == (410, "this run has ended: nothing can be answered here any more\n")
        assert call(link, "v1.2")[0] == 410
        status, page = call(link, accept="text/html")
        assert status == 410 and "No longer open" in page and "this run has ended" in page
        assert json.loads(call(link, accept="application/json")[1]) == {"status": 410, "message": ended.GONE}
        (tmp_path / "next").mkdir()  # the same --listen again: the port makes way at once
        proc = start(tmp_path / "next", "--answer", "Continue=y", "--listen", listen, "--", "bash", "-c", ASKS)
        try:
            fresh = next(m for line in proc.stdout if (m := re.search(r"answer on the decision page: (http://\S+)", line)))
            assert call(fresh.group(1))[0] == 200 and call(fresh.group(1), "v1.2")[0] == 200
        finally:
            (tmp_path / "next" / "go").touch()
            code, out = finished(proc)
        assert code == 0, out
    finally:
        ended.make_way(port)


def test_a_listen_beyond_loopback_warns(tmp_path):
    proc = start(tmp_path, "--answer", "x=y", "--listen", "0.0.0.0:0", "--", "true")
    code, out = finished(proc)
    assert code == 0 and "the decision page listens beyond this machine" in out, out


def test_the_runs_timeout_keeps_counting_while_a_person_is_asked_and_withdraws_the_question(tmp_path):
    proc = start(tmp_path, "--answer", "Continue=y", "--listen", "127.0.0.1:0", "--timeout", "2s", "--", "bash", "-c", ASKS)
    code, out = finished(proc)
    assert code == 4 and "timeout after 2s (--timeout)" in out, out
    assert records(tmp_path, "human_unanswered")[0]["why"].startswith("step 1 ended: timeout after 2s")


def test_version_and_a_run_without_notify_or_listen_import_none_of_the_pages_libraries(tmp_path):
    from tests.integration.test_install import cli

    gone = "sys.modules['aiohttp'] = sys.modules['apprise'] = sys.modules['segno'] = None"  # importing one would fail
    assert cli("--version", cwd=tmp_path, extra_code=gone).stdout.startswith("cursor-pilot ")
    p = cli("run", "--quiet", "--answer", "Continue=y", "--log", "log", "--", "bash", "-c", 'read -p "Continue? [y/n] " a; echo "got:$a"',
            cwd=tmp_path, extra_code=gone)
    assert p.returncode == 0, p.stdout + p.stderr
    # the mirror: a run that serves the page does import aiohttp; a broken install says so, and nobody waits on a dead page
    p = cli("run", "--answer", "Continue=y", "--log", "log2", "--listen", "127.0.0.1:0", "--", "bash", "-c", ASKS, cwd=tmp_path,
            extra_code=gone)
    assert p.returncode == 3 and "the decision page could not start (ModuleNotFoundError" in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize("args, env, needle", [
    (["--notify", "nosuch://x"], {}, "--notify nosuch://…: not a notification URL Apprise knows"),
    ([], {"CURSOR_PILOT_NOTIFY": "json://127.0.0.1:9/ nosuch://x"}, "--notify nosuch://…"),  # the variable, space-separated
    (["--listen", "8765"], {}, "--listen '8765': expected HOST:PORT"),
    (["--on-human-timeout", "no"], {}, "--on-human-timeout no acts when --human-timeout passes"),
    (["--human-timeout", "soon"], {}, "invalid duration 'soon'"),
])
def test_bad_options_for_reaching_a_person_are_one_line_and_exit_2_before_anything_runs(tmp_path, args, env, needle):
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", "log", "--answer", "x=y", *args, "--", "true"], cwd=tmp_path,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and needle in p.stderr, p.stderr
    assert not (tmp_path / "log").exists()


MENU = """name: human-menu
steps:
  - select:
      question: Deploy where?
      options: [staging, production]
      highlight: 0
      expect: production
"""


def test_a_menu_the_model_hands_to_a_person_is_answered_by_an_option_button(tmp_path, hook):
    """The model (the real openai SDK against a fake server) asks for a person; the page shows the menu's options as
    buttons, and the one clicked is chosen on the screen with the arrow keys."""
    from tests.fakes.llm_server import FakeLLM
    from tests.helpers import KEY

    (tmp_path / "menu.yaml").write_text(MENU)
    ask_a_person = json.dumps({"action": "human", "text": "", "submit": False,
                               "question": "Which environment? The governing prompt does not say."})
    with FakeLLM(answer=lambda prompt: ask_a_person) as llm:
        proc = start(tmp_path, "--provider", "openai", "--base-url", llm.url + "/v1", "--notify", hook.url,
                     "--", "cursor-pilot", "sim", "menu", "menu.yaml", env={"OPENAI_API_KEY": KEY})
        try:
            link = hook.link()
            with chromium() as browser:
                page = browser.new_page()
                page.goto(link)
                assert "Which environment?" in page.inner_text(".why")
                assert [b.inner_text() for b in page.query_selector_all("#options button")] == ["staging", "production"]
                assert submit(page, "#options button[value='production']").status == 200
        finally:
            code, out = finished(proc)
    assert code == 0, out
    assert [r["options"] for r in records(tmp_path, "menu_choice")] == [["production"]]
    assert len(llm.requests) == 1  # the model was asked once; the person decided
