"""The decision page over real HTTP: the run's aiohttp server on 127.0.0.1, asked by a plain HTTP client (Host headers
of its choosing), the answers checked by the real decision path (deny policy, options). A question is put by
`Humans.ask` on a worker thread, as the loops put it.

The attacks and mistakes the page must turn away: a wrong token, a reused one, an expired one, a foreign Host (DNS
rebinding), a 1 MB answer, no token at all; and what it must let through: the right answer, by form or by curl."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cursorpilot.clock import FakeClock, SystemClock
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.question import Choice, Kind, Question, Verdict
from cursorpilot.events import BaseSink
from cursorpilot.human.humans import HumanConfig, Humans
from cursorpilot.human.page import bind
from cursorpilot.providers.rules import RulesProvider
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript

pytestmark = pytest.mark.timeout(60)

FREE = Question(kind=Kind.INPUT.value, text="Release name:", key="k1", source="generic.waiting_input",
                live=("building 3 packages", "Release name:"))
PERMISSION = Question(kind=Kind.PERMISSION.value, text="Permission for delete: rm -rf build/", key="k2", source="acp.permission",
                      action="rm -rf build/", approval=True, live=("Permission for delete: rm -rf build/",),
                      choices=(Choice("allow-once", "Allow", kind="allow_once"), Choice("reject-once", "Reject", kind="reject_once")))


@dataclass
class Step:
    index: int = 1
    total: int = 1
    name: str = "release"
    command: list[str] = field(default_factory=lambda: ["./release.sh"])
    governing_prompt: str = "Cut the release; never delete anything."


class Shown(BaseSink):
    def __init__(self):
        self.asked: list[dict] = []
        self.notes: list[str] = []

    def ask_human(self, asked, *, link=None, qr=False, typed_here=False, again=""):
        self.asked.append({"asked": asked, "link": link, "again": again})

    def note(self, text):
        self.notes.append(text)


class Desk:
    """A run's human rung with its page, and a worker thread to ask on."""

    def __init__(self, tmp_path: Path, clock=None, timeout: float | None = None, on_timeout: str = "exit"):
        self.clock = clock or SystemClock()
        redactor = Redactor(cwd=str(tmp_path))
        self.tx = Transcript(tmp_path / "transcript.jsonl", "run-1", self.clock, redactor)
        run = RunContext(tx=self.tx, redactor=redactor, clock=self.clock, log_dir=tmp_path, run_id="run-1",
                         provider=RulesProvider([], "none"))
        self.decider = Decider(run, Step().governing_prompt, str(tmp_path), None, PromptFiler(run, 1, "1/1", str(tmp_path), ""))
        self.sink = Shown()
        self.humans = Humans(HumanConfig(sock=bind("127.0.0.1", 0), timeout=timeout, on_timeout=on_timeout), self.tx, self.clock,
                             redactor.text, self.sink)
        self.humans.start()
        self.pool = ThreadPoolExecutor(max_workers=1)

    def ask(self, q: Question = FREE) -> tuple[Future, str]:
        n = len(self.sink.asked)
        future = self.pool.submit(self.humans.ask, q, "no rule matches this prompt", Step(), self.decider.check)
        wait_for(lambda: len(self.sink.asked) > n)
        return future, self.sink.asked[n]["link"]

    def records(self, type_: str) -> list[dict]:
        return [r for r in map(json.loads, (self.tx.path).read_text().splitlines()) if r["type"] == type_]

    def close(self) -> None:
        self.humans.close()
        self.pool.shutdown(wait=True)
        self.tx.close()


def wait_for(condition, timeout: float = 10.0) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("condition not met in time")


@pytest.fixture
def desk(tmp_path):
    d = Desk(tmp_path)
    yield d
    d.close()


def call(url: str, answer: str | bytes | None = None, *, host: str | None = None, accept: str = "text/plain") -> tuple[int, str]:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    headers = {"Accept": accept, "Host": host or u.netloc}
    body = None
    if answer is not None:
        body = answer if isinstance(answer, bytes) else urllib.parse.urlencode({"answer": answer}).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        conn.request("POST" if body is not None else "GET", u.path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_the_right_answer_is_taken_once_and_a_second_post_gets_409(desk):
    future, link = desk.ask()
    assert call(link)[0] == 200
    assert call(link, "v1.2") == (200, "accepted: handed to the program\n")
    assert future.result(5).text == "v1.2"
    status, text = call(link, "v1.3")
    assert status == 409 and "already answered on the page (127.0.0.1)" in text
    assert call(link)[0] == 409  # the link is spent
    assert [(r["channel"], r["status"]) for r in desk.records("human_refused")] == [("page", 409)]
    assert desk.records("human_answered")[0]["channel"] == "page" and desk.records("human_answered")[0]["latency_s"] >= 0
    assert [r["text"] for r in desk.records("human_reply")] == ["v1.2"]  # recorded once, where it was taken, for every channel


def test_a_wrong_token_is_403_and_answers_nothing(desk):
    future, link = desk.ask()
    base, token = link.rsplit("/", 1)
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    assert call(f"{base}/{forged}", "v9")[0] == 403
    assert call(f"{base}/nonsense", "v9")[0] == 403
    assert call(base + "/", "v9")[0] == 404 and call(base.rsplit("/d", 1)[0] + "/")[0] == 404  # no token: nothing to answer
    assert not future.done()
    assert call(link, "v1.2")[0] == 200 and future.result(5).text == "v1.2"  # the mirror: the real link still works
    desk.humans.close()
    assert desk.records("page_refusals")[0]["counts"] == {"wrong token": 2}


def test_a_foreign_host_header_is_421_whatever_the_token(desk):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends Host: evil.example."""
    future, link = desk.ask()
    port = urllib.parse.urlsplit(link).port
    assert call(link, "v9", host=f"evil.example:{port}")[0] == 421
    assert call(link, host=f"localhost:{port + 1}")[0] == 421  # the right name, another port
    assert not future.done()
    assert call(link, host=f"localhost:{port}")[0] == 200  # the mirror: loopback names and addresses are this server
    assert call(link, "v1.2", host=f"127.0.0.1:{port}")[0] == 200 and future.result(5).text == "v1.2"


def test_a_1_mb_answer_is_413_and_the_question_stays_open(desk):
    future, link = desk.ask()
    try:
        status, text = call(link, "x" * (1 << 20))
    except (ConnectionResetError, BrokenPipeError):  # the server may close before the client has sent it all
        status, text = 413, ""
    assert status == 413
    assert not future.done()
    assert call(link, "v1.2")[0] == 200 and future.result(5).text == "v1.2"


def test_an_answer_the_deny_policy_refuses_is_422_and_the_question_stays_open(desk):
    future, link = desk.ask()
    status, text = call(link, "v1.2; rm -rf /")
    assert status == 422 and "denied by policy rule" in text
    status, page = call(link, "rm -rf ~", accept="text/html")
    assert status == 422 and "Not taken" in page and 'name="answer"' in page  # the form again, saying why
    assert call(link, "v1.2")[0] == 200 and future.result(5).text == "v1.2"
    assert [r["status"] for r in desk.records("human_refused")] == [422, 422]


def test_a_permission_takes_an_offered_option_and_refuses_a_made_up_one(desk):
    future, link = desk.ask(PERMISSION)
    status, page = call(link, accept="text/html")
    assert 'value="Allow"' in page and 'value="Reject"' in page and "rm -rf build/" in page
    status, text = call(link, "Maybe later")
    assert status == 422 and "names none of the options" in text
    assert call(link, "Reject")[0] == 200 and future.result(5).text == "Reject"


def test_the_json_contract_for_scripts_and_bots(desk):
    future, link = desk.ask(PERMISSION)
    status, text = call(link, accept="application/json")
    q = json.loads(text)["question"]
    assert status == 200 and q["options"] == ["Allow", "Reject"] and q["program"] == "./release.sh"
    assert "rm -rf build/" in q["text"] and q["action"] is None  # what a yes does is in the question already: not twice
    status, text = call(link, b"answer=Allow&answer=Reject", accept="application/json")
    assert status == 400 and "exactly one form field named answer" in json.loads(text)["message"]
    status, text = call(link, "Allow", accept="application/json")
    assert status == 200 and json.loads(text)["status"] == 200 and future.result(5).text == "Allow"


def test_an_expired_link_is_410_and_the_step_that_ended_withdraws_its_question(tmp_path):
    clock = FakeClock(start=1_800_000_000.0)
    d = Desk(tmp_path, clock=clock, timeout=600)
    try:
        future, link = d.ask()
        clock.advance(601)  # the token's own expiry (the run's wall clock), before the asking thread notices
        status, text = call(link, "v1.2")
        assert status == 410 and "expired" in text
        d.humans.withdraw("step 1 ended: timeout after 30s (--timeout)")
        assert future.result(5).verdict == Verdict.ESCALATE and future.result(5).why.startswith("step 1 ended")
        status, text = call(link, "v1.2")
        assert status == 410 and "step 1 ended" in text
        assert d.records("human_unanswered")[0]["why"] == "step 1 ended: timeout after 30s (--timeout)"
    finally:
        d.close()


def test_human_timeout_gives_the_questions_own_no_when_told_to(tmp_path):
    d = Desk(tmp_path, timeout=0.3, on_timeout="no")
    try:
        q = Question(kind=Kind.QUESTION.value, text="Overwrite config.yaml? [y/N]", key="k", source="generic.yes_no")
        future, link = d.ask(q)
        no = future.result(10)
        assert (no.text, no.source) == ("n", "on-human-timeout")  # the question's own no, once the time is up: nobody's answer
        status, text = call(link, "y")
        assert status == 409 and "by --on-human-timeout" in text
        assert d.records("human_answered")[0]["channel"] == "timeout"
    finally:
        d.close()


def test_a_secret_answer_is_a_password_field_and_masked_in_the_records(desk):
    q = Question(kind=Kind.INPUT.value, text="Vault password:", key="k", source="generic.password", secret=True)
    future, link = desk.ask(q)
    assert 'type="password"' in call(link, accept="text/html")[1]
    assert call(link, "rm -rf / hunter2")[0] == 422
    assert call(link, "correct horse")[0] == 200 and future.result(5).text == "correct horse"
    written = desk.tx.path.read_text()
    assert "hunter2" not in written and "correct horse" not in written
    assert desk.records("human_refused")[0]["text"].startswith("••••••")
    (reply,) = desk.records("human_reply")  # the one record of a person's reply, whichever channel asked: masked
    assert reply["secret"] is True and reply["text"].startswith("••••••")
