"""A model that misbehaves can't spend without bound (issue 44): the loop breaker counts what was typed, secret or not,
and --max-model-calls caps the calls of a run and of one question. Real programs on a real pty, the model a local fake
over the real openai SDK."""

from __future__ import annotations

import itertools
import json
import sys
import textwrap

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, typed

pytestmark = pytest.mark.timeout(120)


def with_model(pilot, answer, command: list[str], *opts: str, env: dict | None = None):
    with FakeLLM(answer=answer) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", *opts,
                  env={"OPENAI_API_KEY": KEY, **(env or {})})
    return r, server


def test_a_secret_typed_without_enter_again_and_again_stops_after_three(pilot, tmp_path):
    """A model answered a no-echo prompt with the secret and submit: false: typed, not taken, asked again, typed again,
    758 times in 10 minutes (the same with a visible answer stopped after 3). The loop breaker counted `<secret:pw>`
    where the channel said it typed the mask: never the same answer twice."""
    program = tmp_path / "login.py"
    program.write_text('import getpass\npw = getpass.getpass("Passphrase: ")\nprint("OK" if pw == "x" else "WRONG")\n')
    r, server = with_model(pilot, lambda p: typed("<secret:vault>", submit=False), [sys.executable, str(program)],
                           "--secret", "vault=VAULT_PASS", env={"VAULT_PASS": "hunter2"})
    assert r.code == 3 and "already answered" in r.of("escalation")[0]["why"], r.stdout + r.stderr
    assert len(r.of("answer")) == 3 and len(server.requests) == 4


def test_mirror_a_visible_answer_not_taken_stops_after_three_too(pilot, tmp_path):
    r, _ = with_model(pilot, lambda p: typed("x", submit=False), ["bash", "-c", 'read -p "Name: " a; echo "got:$a"'])
    assert r.code == 3 and len(r.of("answer")) == 3, r.stdout + r.stderr


def test_one_question_answered_differently_again_and_again_is_capped_with_its_own_exit_line(pilot, tmp_path):
    names = (f"name{i}" for i in itertools.count())
    r, server = with_model(pilot, lambda p: typed(next(names)), ["bash", "-c", 'while true; do read -p "Name (empty to stop): " a; done'],
                           "--max-model-calls", "100/5")
    assert r.code == 4 and "model-call cap reached: 5 model calls for this one question" in r.stdout + r.stderr, r.stdout + r.stderr
    assert len(server.requests) == 5


def test_the_run_s_calls_are_capped(pilot, tmp_path):
    program = textwrap.dedent("""
        for i in 1 2 3 4 5; do read -p "Question $i: " a; done; echo done
    """)
    r, server = with_model(pilot, lambda p: typed("ok"), ["bash", "-c", program], "--max-model-calls", "3")
    assert r.code == 4 and "3 model calls in this run (--max-model-calls 3/20)" in r.stdout + r.stderr, r.stdout + r.stderr
    assert len(server.requests) == 3
    finished = r.of("run_finished")[0]
    assert finished["exit_code"] == 4


def test_mirror_off_lifts_the_cap_and_the_default_lets_a_normal_run_through(pilot, tmp_path):
    program = "for i in 1 2 3 4 5; do read -p \"Question $i: \" a; done; echo done"
    r, server = with_model(pilot, lambda p: typed("ok"), ["bash", "-c", program], "--max-model-calls", "off")
    assert r.code == 0 and len(server.requests) == 5, r.stdout + r.stderr
    r, server = with_model(pilot, lambda p: typed("ok"), ["bash", "-c", program])
    assert r.code == 0 and json.loads((r.log / "manifest.json").read_text())["options"]["max_model_calls"] == "1000/20"


@pytest.mark.parametrize("value", ["0", "ten", "5/0", "5/x"])
def test_a_bad_cap_is_one_line_and_exit_2(pilot, value):
    r = pilot(["true"], "--max-model-calls", value)
    assert r.code == 2 and "--max-model-calls" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
