"""Working is not waiting, and waiting is not working (issue 27, item 5; item 2's first half): the kernel's facts tell
them apart, not a timer or a marker. Real programs on real pseudo-terminals, with rules and with a model."""

from __future__ import annotations

import shutil

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, typed

pytestmark = pytest.mark.timeout(180)
SILENT_AFTER = 'read -p "Install now? [y/n] " a; sleep 5; echo "installed:$a" > out.txt'


@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_program_that_takes_the_answer_then_works_silently_is_not_interrupted(pilot, tmp_path, answerer):
    """A program that took a menu choice and then worked without printing was sent SIGINT within a second (exit 3):
    the still screen was taken for "did not react"."""
    if answerer == "rules":
        r = pilot(["bash", "-c", SILENT_AFTER], "--answer", "Install now=y")
    else:
        with FakeLLM(answer=lambda prompt: typed("y")) as server:
            r = pilot(["bash", "-c", SILENT_AFTER], "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == 1  # nobody is asked while it works
    assert r.code == 0 and (tmp_path / "out.txt").read_text() == "installed:y\n", r.stdout + r.stderr
    assert r.of("escalation") == [] and r.of("enter_retry") == [] and r.of("program_exited")[0]["code"] == 0
    assert any(s["rule_id"] == "kernel.busy" for s in r.of("screen_state"))


@pytest.mark.skipif(shutil.which("dialog") is None, reason="needs dialog")
def test_dialog_yesno_then_a_long_silent_install_runs_to_its_end(pilot, tmp_path):
    """`dialog --yesno … && ./long-silent-install` would have been killed mid-install."""
    body = 'dialog --yesno "Install the toolchain?" 7 50 && sleep 6 && echo done > done.txt'
    r = pilot(["bash", "-c", body], "--answer", "Install the toolchain=Yes")
    assert r.code == 0 and (tmp_path / "done.txt").exists(), r.stdout + r.stderr
    assert r.of("escalation") == [] and r.of("closing") == []


def test_a_build_that_sleeps_between_two_lines_runs_with_rules_only(pilot):
    """`echo building; sleep 10; echo built` ended after 7 s with exit 3: "no rule explains this screen, and it has been
    quiet: is it waiting for someone?". The kernel knew it was sleeping, not reading its terminal."""
    r = pilot(["bash", "-c", "echo building; sleep 10; echo built"], "--answer", "nothing asks this=x")
    assert r.code == 0, r.stdout + r.stderr
    assert b"built" in (r.log / "session.raw").read_bytes() and r.of("escalation") == []
    [busy] = [s for s in r.of("screen_state") if s["rule_id"] == "kernel.busy"]
    assert "not waiting on its terminal" in busy["evidence"]


def test_a_prompt_below_a_static_ellipsis_is_a_question_when_the_kernel_says_it_reads(pilot):
    """A passphrase prompt under `- encrypting with a passphrase ...` was taken for a spinner's line and sat unanswered
    until the timeout, while the program read its terminal."""
    body = "printf -- '- encrypting with a passphrase ...\\n'; read -s -p 'Enter passphrase: ' p; echo; echo \"got:${#p}\""
    r = pilot(["bash", "-c", body], "--answer", "Enter passphrase=hunter2", "--timeout", "20s")
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:7" in (r.log / "session.raw").read_bytes()


def test_a_program_that_waits_on_its_terminal_with_no_rule_is_still_escalated(pilot):
    """The mirror: waiting is not working. A program that reads its terminal, quiet, with no rule for its screen, gets a
    decision (exit 3, the screen shown) within seconds, not at stuck_after."""
    r = pilot(["bash", "-c", "echo 'ready'; read x"], "--answer", "nothing asks this=x", "--timeout", "30s")
    assert r.code == 3 and "no rule explains this screen" in r.stdout, r.stdout + r.stderr
    started = r.of("program_started")[0]["mono"]
    assert r.of("escalation")[0]["mono"] - started < 8
