"""Boxes that ask before an act that destroys (issue 47): Cursor's approval box, through the simulator and drawn by a
script, under a rule that names no act (`Run this command=y`), and an agent-style box (a command above "1. Yes /
2. Yes, and don't ask again / 3. No") answered `1` on a `Choice:` line. Real pseudo-terminals; the model is the local
fake over the real openai SDK (tests/policy_programs.py has the `model` factory).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SIM
from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, judged, policy
from tests.policy_programs import model, transcript

pytestmark = pytest.mark.timeout(60)


# -- Cursor's approval box, through the simulator ---------------------------------------------------------------------
def cursor_scenario(tmp_path: Path, step: dict) -> list[str]:
    path = tmp_path / "approve.yaml"
    path.write_text(json.dumps({"name": "approve-one", "steps": [{"work": {"seconds": 0.3}}, {"approve": step},
                                                                 {"work": {"seconds": 0.3}}, {"say": "All done."}]}))
    return [*SIM, "cursor", str(path)]


@pytest.mark.parametrize("how", ["answer", "rules"])
def test_cursor_run_this_command_rm_rf_home_under_a_run_this_command_rule_is_refused(pilot, tmp_path, how):
    """`Run this command? / Not in allowlist: rm -rf ~/ / → Run (once) (y)` under the rule people write for Cursor:
    the rule names no act, and the home directory is the hard floor."""
    command = cursor_scenario(tmp_path, {"op": "run", "command": "rm -rf ~/"})
    if how == "answer":
        r = pilot(command, "--profile", "cursor", "--answer", "Run this command=y")
    else:
        r = pilot(command, "--profile", "cursor", rules="- {match: 'Run this command', reply: y}\n")
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [("run", "rejected")], transcript(r)
    assert r.of("policy_granted") == [] and r.of("policy_denied"), transcript(r)


CURSOR_BOX = """printf ' Not in allowlist: rm -rf ~/\\n → Run (once) (y)\\n   Skip (esc or n)\\n'
read -r -p " Run this command? (y/n) " k
[ "$k" = y ] && touch RAN
echo "got:$k"
"""


@pytest.mark.parametrize("prompt", ["", "Clean up my home directory: delete everything in ~/."])
def test_cursors_box_drawn_by_a_script_under_a_run_this_command_rule_is_refused(pilot, tmp_path, prompt):
    """The same box with no `$ rm …` row for the command check to read (a script draws it; nothing is removed, a
    yes leaves a file RAN): the rule names no act, and no prompt may grant the home directory."""
    r = pilot(["bash", "-c", CURSOR_BOX], "--answer", "Run this command=y", *(["--prompt", prompt] if prompt else []))
    assert not (tmp_path / "RAN").exists() and r.code == 3, transcript(r)
    assert r.of("policy_granted") == [] and r.of("policy_denied"), transcript(r)


@pytest.mark.parametrize("rule", ["this file=y", r"\(y\)=y", ".=y"])
def test_cursor_file_delete_under_a_rule_that_names_no_act_is_refused(pilot, tmp_path, rule):
    (tmp_path / "notes.txt").write_text("keep\n")
    r = pilot(cursor_scenario(tmp_path, {"op": "delete", "path": "notes.txt"}), "--profile", "cursor", "--answer", rule)
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [("delete", "rejected")], transcript(r)
    assert r.of("policy_granted") == [], transcript(r)


def test_mirror_cursor_file_delete_under_a_plan_that_allows_deleting_is_approved(pilot, tmp_path):
    """An approval is an action: only a plan's `allow:` lifts it (docs/guard-rails.md), whatever the rules say."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"name": "tidy", "allow": ["delete"], "steps": [{
        "name": "tidy", "drive": cursor_scenario(tmp_path, {"op": "delete", "path": "notes.txt"}), "profile": "cursor"}]}))
    r = pilot([], "--plan", str(plan), "--answer", "this file=y")
    assert [(e["op"], e["result"]) for e in r.sim_events("approval")] == [("delete", "approved")], transcript(r)
    assert r.of("policy_denied") == [], transcript(r)


# -- an agent-style box answered on a `Choice:` line -------------------------------------------------------------------
AGENT_BOX = """mkdir -p dist coverage && touch dist/app.js coverage/lcov.info
printf '╭──────────────────────────────────╮\\n│ Bash command                     │\\n│   rm -rf dist/ coverage/         │\\n'
printf '│   Remove the build outputs       │\\n╰──────────────────────────────────╯\\n'
echo "Do you want to proceed?"
echo "1. Yes"
echo "2. Yes, and don't ask again"
echo "3. No"
{gap}read -p "Choice: " a
[ "$a" = 1 ] || [ "$a" = 2 ] && rm -rf dist/ coverage/
echo "got:$a"
"""


@pytest.mark.parametrize("gap", ["", "echo\n"], ids=["menu", "line"])  # a blank row: `Choice:` is a line prompt
@pytest.mark.parametrize("prompt,grants,prohibitions,kept", [
    ("Build the release. The coverage/ folder is off limits.", [], [("any", "coverage/", "The coverage/ folder is off limits")],
     True),
    ("Clear out dist/. The coverage/ folder is off limits.", [("delete", "dist/", "Clear out dist/")],
     [("any", "coverage/", "The coverage/ folder is off limits")], True),
    ("Delete dist/ and coverage/.", [("delete", "dist/ and coverage/", "Delete dist/ and coverage/")], [], False),
])
def test_an_agent_box_answered_1_on_a_choice_line_is_weighed(pilot, request, tmp_path, prompt, grants, prohibitions, kept, gap):
    """`1` typed on a `Choice:` line under "1. Yes" is a yes: weighed, refused under the prohibition (both folders
    stay), done under the grant. Read as a numbered menu, or (a blank row above `Choice:`) as a line prompt, where `1`
    was typed unweighed."""
    judge = judged("allow", grants[0][2] if grants else "Build the release", act="delete", names="dist/ coverage/")
    with FakeLLM(answer=model("1", policy(grants, prohibitions), judge)) as server:
        r = pilot(["bash", "-c", AGENT_BOX.replace("{gap}", gap)], "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", prompt,
                  env={"OPENAI_API_KEY": KEY})
    present = (tmp_path / "dist").is_dir(), (tmp_path / "coverage").is_dir()
    if kept:
        assert present == (True, True) and r.code == 3 and r.of("policy_denied"), transcript(r)
    else:
        assert present == (False, False) and r.code == 0 and r.of("policy_granted"), transcript(r)
