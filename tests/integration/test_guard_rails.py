"""Deny policy, loop breaker and stuck detection through real PTYs."""

import pytest

from tests.conftest import SIM

pytestmark = pytest.mark.timeout(90)
YES_TO_ALL = "- {match: '.', reply: y}\n"


def test_policy_answers_no_before_any_provider_is_asked(pilot):
    r = pilot(["bash", "-c", 'read -p "Run rm -rf / now? [y/n] " a; echo "got:$a"'], rules=YES_TO_ALL)
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:n" in (r.log / "session.raw").read_bytes()
    assert r.of("policy_denied")[0]["policy_rule"] == "rm_outside"
    assert r.of("provider_request") == []
    assert r.of("answer")[0]["source"] == "policy:rm_outside"


def test_cursor_delete_is_rejected_with_q_whatever_the_rules_say(pilot):
    rules = "- {match: 'Workspace Trust', reply: a}\n- {match: '.', reply: y}\n"
    r = pilot([*SIM, "cursor", "approvals"], "--profile", "cursor", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [
        ("run", "approved"), ("write", "approved"), ("delete", "rejected")]
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]


def test_a_denied_reply_is_not_typed(pilot):
    r = pilot(["bash", "-c", 'read -p "Command to run: " c; echo "got:$c"'], rules="- {match: 'Command', reply: 'rm -rf ~'}\n")
    assert r.code == 3
    assert r.of("keys_sent") == []
    assert r.of("policy_denied")[0]["on"] == "reply"


def test_loop_breaker_escalates_the_fourth_identical_answer(pilot):
    r = pilot(["bash", "-c", 'for i in 1 2 3 4 5; do read -p "Again? [y/n] " a; done'], rules=YES_TO_ALL)
    assert r.code == 3
    assert len(r.of("answer")) == 3
    assert "loop" in r.of("run_finished")[0]["reason"]


def test_stuck_working_marker_escalates(pilot, tmp_path):
    overlay = tmp_path / "fast-stuck.yaml"
    overlay.write_text("stuck_after_s: 1.5\nrules: []\n")
    r = pilot(["bash", "-c", 'printf "Thinking (esc to interrupt)"; sleep 60'], "--detectors", str(overlay), rules=YES_TO_ALL)
    assert r.code == 3
    assert "stuck" in r.of("run_finished")[0]["reason"]
    assert r.of("keys_sent") == []
