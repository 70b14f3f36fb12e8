"""Line-mode programs through real PTYs: bash, python input(), the line simulator."""

import sys

import pytest

from tests.conftest import SIM

pytestmark = pytest.mark.timeout(60)

YES = "- {match: '\\[(y|Y)/(n|N)\\]|\\(yes/no\\)', reply: y}\n"


def test_bash_read_p(pilot):
    r = pilot(["bash", "-c", 'read -p "Continue? [Y/n] " a; echo "got:$a"'], rules=YES)
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:y" in (r.log / "session.raw").read_bytes()
    assert [a["rule_id"] for a in r.of("answer")] == ["generic.yes_no"]
    assert [k["keys"] for k in r.of("keys_sent")] == ["y", "<enter>"]


def test_python_input_with_an_ansi_coloured_prompt(pilot):
    code = "x = input('\\x1b[1;33mProceed?\\x1b[0m \\x1b[2m(yes/no)\\x1b[0m '); print('got:' + x)"
    r = pilot([sys.executable, "-c", code], rules=YES)
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:y" in (r.log / "session.raw").read_bytes()


def test_confirm_then_free_text(pilot):
    rules = YES + "- {match: 'Release name:', reply: 'v1.2 \"Aurora\"'}\n"
    r = pilot([*SIM, "line", "line-confirm"], rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [(e["event"], e["text"]) for e in r.sim() if e["event"] in ("confirm", "text")] == [
        ("confirm", "y"), ("text", 'v1.2 "Aurora"')]
    assert [a["rule_id"] for a in r.of("answer")] == ["generic.yes_no", "generic.waiting_input"]


def test_trap_menu_in_two_writes_is_answered_once_when_complete(pilot):
    r = pilot([*SIM, "line", "line-menu-split"], rules="- {match: 'cherry', reply: '3'}\n- {match: '.', reply: '1'}\n")
    assert r.code == 0, r.stdout + r.stderr
    answers = r.of("answer")
    assert len(answers) == 1 and "3) cherry" in answers[0]["prompt"]
    assert r.sim_events("menu")[0]["text"] == "3"


def test_trap_prompt_with_ten_lines_below_gets_zero_keystrokes(pilot):
    r = pilot([*SIM, "line", "line-trap-below"], rules="- {match: '.', reply: y}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert r.of("keys_sent") == []


def test_trap_prompt_repainted_six_times_gets_one_answer(pilot):
    r = pilot([*SIM, "line", "line-repaint"], rules=YES)
    assert r.code == 0, r.stdout + r.stderr
    assert len(r.of("answer")) == 1
    assert r.sim_events("confirm")[0]["text"] == "y"


def test_cursor_position_query_is_answered(pilot):
    r = pilot([*SIM, "line", "line-cpr"], rules=YES)
    assert r.code == 0, r.stdout + r.stderr
    assert r.sim_events("cpr")[0]["reply"].endswith("R")
    assert len(r.of("terminal_reply")) == 1


def test_nonzero_exit_is_a_failure(pilot):
    r = pilot(["bash", "-c", "echo broken; exit 7"], rules=YES)
    assert r.code == 1
    fin = r.of("run_finished")[0]
    assert (fin["child_exit_code"], fin["child_signal"]) == (7, None)


def test_timeout_stops_the_program_with_exit_4(pilot):
    r = pilot(["sleep", "30"], "--timeout", "1s", rules=YES)
    assert r.code == 4
    assert "timeout" in r.of("run_finished")[0]["reason"]


def test_program_that_does_not_take_the_answer_gets_enter_twice_then_is_judged_again_then_escalated(pilot):
    # reads every line and shows nothing: the screen stays exactly as it was, and it reads again
    r = pilot(["bash", "-c", 'printf "Continue? [y/n] "; stty -echo; while read -r x; do :; done'], rules=YES)
    assert r.code == 3
    assert [e["attempt"] for e in r.of("enter_retry")] == [1, 2] and len(r.of("not_taken")) == 1
    assert "did not take" in r.of("run_finished")[0]["reason"]  # (masked: typed with echo off)


def test_a_prompt_printed_by_a_program_that_never_reads_gets_no_key(pilot):
    """It prints a question and sleeps: nobody is being asked. A key typed now would wait for whatever reads next."""
    r = pilot(["bash", "-c", 'printf "Continue? [y/n] "; sleep 4'], rules=YES)
    assert r.code == 0 and r.of("keys_sent") == [], r.stdout + r.stderr
    assert any(s["rule_id"] == "kernel.busy" for s in r.of("screen_state"))


def test_aider_confirm_prompts(pilot):
    rules = "- {match: 'Add .* to the chat', reply: y}\n- {match: 'Create new file', reply: y}\n"
    r = pilot([*SIM, "line", "line-aider"], "--profile", "aider", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert [e["text"] for e in r.sim_events("confirm")] == ["y", "y"]
    assert [a["rule_id"] for a in r.of("answer")] == ["aider.confirm", "aider.confirm"]


CI_AWARE = ["bash", "-c", 'if [ -n "$CI$GITHUB_ACTIONS" ]; then echo "CI detected: not asking anything. Set CI= to be asked."; exit 3; fi; '
            'read -p "Continue? [Y/n] " a; echo "got:$a"']


def test_ci_markers_are_hidden_from_the_program_it_has_a_user(pilot):
    """Run in CI, the pilot must not make programs skip their questions (Gemini CLI exits 55, ci-info tools take defaults)."""
    r = pilot(CI_AWARE, rules=YES, env={"CI": "true", "GITHUB_ACTIONS": "true"})
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:y" in (r.log / "session.raw").read_bytes()
    assert r.of("program_started")[0]["hidden_env"] == ["CI", "GITHUB_ACTIONS"]


def test_keep_ci_env_passes_them_and_a_failing_program_is_quoted_in_the_summary(pilot):
    r = pilot(CI_AWARE, "--keep-ci-env", rules=YES, env={"CI": "true"})
    assert r.code == 1, r.stdout + r.stderr
    assert "exit code 3; it last showed: CI detected: not asking anything. Set CI= to be asked." in r.stdout + r.stderr
    assert r.of("program_exited")[0]["last_words"] == "CI detected: not asking anything. Set CI= to be asked."
    assert r.of("program_started")[0].get("hidden_env") is None
