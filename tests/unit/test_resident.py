"""The resident that keeps a provider's SDK warm (cursorpilot/providers/resident.py, residentd.py), with the real SDKs
against the local fake server: a run's calls go through it, with the run's own key and environment; nothing of one run
is left for the next; another version is never asked; a run's child ends with the run; the daemon exits when idle; and
without it (turned off, or gone) the SDK is imported here, as before."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cursorpilot.providers import resident
from cursorpilot.providers.base import AnswerRequest, ProviderConfig
from cursorpilot.providers.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.timeout(90)
ROOT = Path(__file__).resolve().parents[2]
REQ = AnswerRequest(governing_prompt="g", kind="question", rule_id="r", prompt_block="Continue? [y/n]", screen="",
                    system="sys", user="Continue? [y/n]")


@pytest.fixture
def own_folder(monkeypatch):
    """A socket folder of this test's own (short: a socket's path has 108 bytes), and every daemon it started killed at
    its end."""
    import shutil
    import tempfile

    runtime = Path(tempfile.mkdtemp(prefix="cp-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("CURSORPILOT_RESIDENT", raising=False)
    started = len(resident._daemons)
    yield runtime / "cursor-pilot"
    for daemon in resident._daemons[started:]:
        daemon.kill()
        daemon.wait()
    shutil.rmtree(runtime, ignore_errors=True)


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)  # waiting for a process to end, with a deadline: nothing is synchronised by the sleep
    return False


def _provider(server: FakeLLM, key: str = "sk-test-key-123456789") -> OpenAIProvider:
    return OpenAIProvider(ProviderConfig(base_url=server.url + "/v1", retries=1, timeout=10.0), key, sleep=lambda s: None)


def test_a_runs_calls_are_made_by_the_resident_with_its_own_key_and_environment(own_folder, monkeypatch):
    """Two runs one after the other, with different keys and organisations: each request carries its own run's."""
    with FakeLLM(answer=lambda p: "y") as server:
        monkeypatch.setenv("OPENAI_ORG_ID", "org-first")
        first = _provider(server, "sk-first-0123456789")
        assert first.answer(REQ).text == "y"
        monkeypatch.setenv("OPENAI_ORG_ID", "org-second")
        second = _provider(server, "sk-second-0123456789")
        assert second.answer(REQ).text == "y"
    assert first._remote is not None and second._remote is not None, "the calls were made here, not by the resident"
    assert first._remote.child != second._remote.child and first._remote.child != os.getpid()
    headers = [{k.lower(): v for k, v in r["headers"].items()} for r in server.requests]
    seen = [(h.get("authorization"), h.get("openai-organization")) for h in headers]
    assert seen == [("Bearer sk-first-0123456789", "org-first"), ("Bearer sk-second-0123456789", "org-second")]
    assert len(resident._daemons) >= 1 and len(list(own_folder.glob("openai-*.sock"))) == 1  # one daemon served both


def test_the_sdks_errors_come_back_classified_as_here(own_folder):
    from tests.fakes.llm_server import Step

    with FakeLLM() as server:
        server.script = [Step(status=429, headers={"retry-after": "0"}), Step(status=401)]
        reply = _provider(server).answer(REQ)
    assert reply.text is None and "HTTP 401" in reply.reason and "not retryable" in reply.reason
    assert [a.error[:8] for a in reply.attempts] == ["HTTP 429", "HTTP 401"]


def test_the_pilot_does_not_import_the_sdk_when_the_resident_answers(own_folder, tmp_path):
    """The point of it: no second of `import openai` holding this process's GIL."""
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + (
        "from tests.unit.test_resident import REQ\n"
        "from tests.fakes.llm_server import FakeLLM\n"
        "from cursorpilot.providers.base import ProviderConfig\n"
        "from cursorpilot.providers.openai import OpenAIProvider\n"
        "with FakeLLM(answer=lambda p: 'y') as s:\n"
        "    p = OpenAIProvider(ProviderConfig(base_url=s.url + '/v1', retries=0), 'sk-test-key-123456789')\n"
        "    print(p.answer(REQ).text, p._remote is not None, 'openai' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert out.stdout.split() == ["y", "True", "False"], out.stderr


def test_a_daemon_of_another_version_is_never_asked(own_folder):
    """The digest is in the socket's name, and said again by each run: a run of another install is refused."""
    with FakeLLM(answer=lambda p: "y") as server:
        provider = _provider(server)
        assert provider.answer(REQ).text == "y"
    sock_path = next(own_folder.glob("openai-*.sock"))
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(sock_path))
        f = sock.makefile("rwb")
        f.write(json.dumps({"digest": "0" * 16, "provider": "openai", "config": {}, "key": "k", "env": {}}).encode() + b"\n")
        f.flush()
        assert json.loads(f.readline()) == {"ready": False, "error": "another version of cursor-pilot"}
    assert resident.digest("openai") in sock_path.name


def test_a_runs_child_ends_with_the_run_and_a_gone_child_means_the_sdk_here(own_folder):
    with FakeLLM(answer=lambda p: "y") as server:
        provider = _provider(server)
        assert provider.answer(REQ).text == "y"
        child = provider._remote.child
        os.kill(child, signal.SIGKILL)  # the child dies mid-run: the next call is made here, once
        assert _gone(child, 10)
        assert provider.answer(REQ).text == "y"
        assert provider._remote is None and len(server.requests) == 2
        other = _provider(server)
        assert other.answer(REQ).text == "y"
        child = other._remote.child
        other._remote.close()  # the run hangs up: its child exits
        assert _gone(child, 10)


def test_the_daemon_exits_when_idle_and_keeps_no_key(own_folder, monkeypatch):
    monkeypatch.setenv("CURSORPILOT_RESIDENT_IDLE", "1")
    with FakeLLM(answer=lambda p: "y") as server:
        provider = _provider(server, "sk-secret-key-987654321")
        assert provider.answer(REQ).text == "y"
    daemon = resident._daemons[-1]
    for what in ("cmdline", "environ"):
        assert b"sk-secret-key-987654321" not in Path(f"/proc/{daemon.pid}/{what}").read_bytes()
    provider._remote.close()
    daemon.wait(timeout=30)
    assert not list(own_folder.glob("openai-*.sock"))  # it took its socket with it


def test_turned_off_the_sdk_is_imported_here(own_folder, monkeypatch):
    monkeypatch.setenv("CURSORPILOT_RESIDENT", "0")
    with FakeLLM(answer=lambda p: "y") as server:
        provider = _provider(server)
        assert provider.answer(REQ).text == "y"
    assert provider._remote is None
    assert not own_folder.exists() or not list(own_folder.glob("*.sock"))
