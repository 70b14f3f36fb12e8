"""The Cursor simulator driven end to end through real PTYs by the real CLI."""

import pytest

from tests.conftest import SIM

pytestmark = pytest.mark.timeout(90)

APPROVE_ALL = """
- {id: trust, match: 'Workspace Trust Required', reply: a}
- {id: run, match: 'Run this command\\?', reply: y}
- {id: write, match: 'Write to this file\\?', reply: y}
- {id: delete, match: 'Delete this file\\?', reply: n}
- {id: reason, match: 'Reason for rejection', reply: 'not without a human'}
"""


def cursor(scenario, *task):
    return [*SIM, "cursor", scenario, *task]


def test_demo_answers_each_prompt_once_and_explains_every_keystroke(pilot):
    from cursorpilot.cli import PACKAGE

    r = pilot(cursor("demo", "Add a /health endpoint"), "--profile", "cursor", "--prompt", str(PACKAGE / "demo/prompt.md"),
              rules=(PACKAGE / "demo/rules.yaml").read_text())
    assert r.code == 0, r.stdout + r.stderr
    assert [e["choice"] for e in r.sim_events("trust")] == ["a"]
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [
        ("run", "approved"), ("write", "approved"), ("delete", "rejected")]
    assert r.sim_events("approval")[2]["reason"] is None  # rejected outright (q) by the deny policy
    assert r.sim_events("answer")[0]["text"] == "Keep it minimal: no database check for now."
    assert r.sim_events("exit") == [{"event": "exit", "code": 0}]
    answers = r.of("answer")
    assert [a["rule_id"] for a in answers] == [
        "cursor.trust", "cursor.approval", "cursor.approval", "cursor.approval", "cursor.idle.prose_question"]
    assert answers[3]["source"] == "policy:delete" and answers[3]["reply"] == "q"
    # every keystroke is preceded by the answer (or the close) that explains it
    why = None
    for rec in r.records():
        if rec["type"] in ("answer", "closing", "enter_retry"):
            why = rec
        if rec["type"] == "keys_sent":
            assert why is not None
    finished = r.of("run_finished")[0]
    assert finished["exit_code"] == 0 and finished["counters"]["answers"] == 5


def test_arrows_tab_and_shift_tab_reach_the_dialogs(pilot):
    rules = """
- {match: 'Workspace Trust Required', reply: '<down><up><enter>'}
- {match: 'Run this command\\?', reply: '<tab>'}
- {match: 'Write to this file\\?', reply: '<down><enter>'}
- {match: 'Reason for rejection', reply: 'keep it'}
"""
    r = pilot(cursor("approvals"), "--profile", "cursor", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert r.sim_events("trust")[0]["choice"] == "a"
    got = [(e["op"], e["result"], e["reason"]) for e in r.sim_events("approval")]
    assert got == [("run", "allowlisted", None), ("write", "rejected", "keep it"), ("delete", "rejected", None)]
    assert [k["hex"] for k in r.of("keys_sent")][:3] == ["1b5b42", "1b5b41", "0d"]  # one write per key


def test_a_key_the_prompt_ignores_is_judged_again_then_escalated_not_repeated(pilot):
    """The screen stays exactly as it was and the program reads again: the answer was not taken. The rules are asked
    again, told so; they can only give the same key, so a human is asked (never a blind Enter, never a silent loop)."""
    rules = APPROVE_ALL.replace("'Run this command\\?', reply: y}", "'Run this command\\?', reply: x}")  # no such key
    r = pilot(cursor("approvals"), "--profile", "cursor", rules=rules)
    assert r.code == 3
    assert "did not take 'x'" in r.of("run_finished")[0]["reason"]
    assert [a["reply"] for a in r.of("answer")].count("x") == 1 and len(r.of("not_taken")) == 1
    assert r.of("enter_retry") == []  # single-key prompts never get a blind Enter


def test_usage_limit_with_on_limit_stop_ends_with_exit_4_saying_so(pilot):
    """(The default waits for the reset: tests/agents_lane/test_limits.py, on the real agents.)"""
    r = pilot(cursor("usage-limit", "task"), "--profile", "cursor", "--on-limit", "stop", rules=APPROVE_ALL)
    assert r.code == 4
    assert r.of("run_finished")[0]["reason"].startswith("usage limit: it gives no reset time; --on-limit stop")
    assert r.of("answer") == [] and r.of("limit_hit")[0]["rule_id"] == "cursor.usage_limit"


def test_login_required_fails_with_exit_1_without_pressing_a_key(pilot):
    r = pilot(cursor("login"), "--profile", "cursor", rules=APPROVE_ALL)
    assert r.code == 1
    assert "login_required" in r.of("run_finished")[0]["reason"]
    assert r.sim_events("login_prompt_key") == []


def test_empty_composer_gets_the_task_then_completion(pilot):
    rules = "- {match: 'Plan, search, build anything', reply: 'Write a haiku', kind: input}\n"
    r = pilot(cursor("idle-start"), "--profile", "cursor", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [e["text"] for e in r.sim_events("followup")] == ["Write a haiku"]
    assert len(r.of("answer")) == 1


def test_trap_question_like_log_lines_while_working_get_zero_keystrokes(pilot):
    r = pilot(cursor("trap-working-log", "build it"), "--profile", "cursor", rules="- {match: '.*', reply: y}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert r.of("answer") == []
    assert [k["keys"] for k in r.of("keys_sent")] == ["<ctrl-c>", "<ctrl-c>"]  # only the clean close


def test_trap_prose_containing_y_gets_zero_keystrokes(pilot):
    r = pilot(cursor("trap-prose-y", "explain"), "--profile", "cursor", rules="- {match: '.*', reply: y}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert r.of("answer") == []
    assert r.sim_events("approval") == []


def test_trap_prompt_repainted_six_times_gets_exactly_one_answer(pilot):
    r = pilot(cursor("repaint", "test"), "--profile", "cursor", rules=APPROVE_ALL)
    assert r.code == 0, r.stdout + r.stderr
    assert len(r.of("answer")) == 1
    assert [e["result"] for e in r.sim_events("approval")] == ["approved"]


def test_no_rule_for_a_prompt_escalates_with_exit_3(pilot):
    r = pilot(cursor("approvals"), "--profile", "cursor", rules="- {match: 'Workspace Trust', reply: a}\n")
    assert r.code == 3
    assert "Run this command?" in r.stdout
    assert len(r.of("escalation")) == 1
    # nothing was guessed: the clean close (Ctrl+C) rejects the pending tool call
    assert [e["result"] for e in r.sim_events("approval")] in ([], ["rejected"])


def test_max_steps_stops_before_the_next_answer_with_exit_4(pilot):
    r = pilot(cursor("approvals"), "--profile", "cursor", "--max-steps", "2", rules=APPROVE_ALL)
    assert r.code == 4
    assert len(r.of("answer")) == 2
    assert "max-steps" in r.of("run_finished")[0]["reason"]


@pytest.mark.parametrize("name", ["script", "mock"])
def test_script_provider_answers_from_its_script_under_its_old_name_too(pilot, name):
    r = pilot(cursor("approvals"), "--profile", "cursor", "--provider", name, rules="replies: [a, y, y]\n")
    assert r.code == 0, r.stdout + r.stderr
    assert [e["result"] for e in r.sim_events("approval")] == ["approved", "approved", "rejected"]
    assert [a["source"] for a in r.of("answer")] == ["script", "script", "script", "policy:delete"]
