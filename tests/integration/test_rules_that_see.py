"""Rules that see more than the prompt block, one-line rules, and rules files that fail with a place. Real PTYs."""

from __future__ import annotations

import sys

import pytest

from tests.integration.test_cli_usage import ASK, cp

pytestmark = pytest.mark.timeout(90)

PDB_RULES = r"""
- {id: quit, match: '\(Pdb\)', screen: 'will be restarted', reply: q}
- {id: cont, match: '\(Pdb\)', after: look, reply: c}
- {id: look, match: '\(Pdb\)', screen: '-> print', reply: 'p y'}
- {id: next, match: '\(Pdb\)', reply: n}
"""


def test_pdb_prompts_that_look_alike_are_told_apart_by_screen_and_after(pilot, tmp_path):
    """pdb shows `(Pdb)` each time: the block alone can't say which question this is, the screen and the last answer can."""
    script = tmp_path / "script.py"
    script.write_text('x = 1\ny = x + 1\nprint("y is", y)\n')
    r = pilot([sys.executable, "-m", "pdb", str(script)], rules=PDB_RULES)
    assert r.code == 0, r.stdout + r.stderr
    assert [(a["source"], a["reply"]) for a in r.of("answer")] == [
        ("rules:next", "n"), ("rules:next", "n"), ("rules:look", "p y"), ("rules:cont", "c"), ("rules:quit", "q")]
    assert b"y is 2" in (r.log / "session.raw").read_bytes()
    assert r.of("run_finished")[0]["counters"]["rule_hits"] == 5


def test_answer_option_answers_without_a_file_and_goes_before_the_rules_file(pilot):
    r = pilot(["bash", "-c", ASK], "--answer", r"Continue\?=y")
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:y" in (r.log / "session.raw").read_bytes()
    assert [a["source"] for a in r.of("answer")] == ["rules:answer1"]
    r = pilot(["bash", "-c", ASK], "--answer", "Stop=x", "--answer", "Continue=n", rules="- {id: file, match: Continue, reply: y}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:n" in (r.log / "session.raw").read_bytes()
    assert [a["source"] for a in r.of("answer")] == ["rules:answer2"]


def test_rules_file_typo_is_one_line_with_its_place_and_no_run_folder(tmp_path):
    (tmp_path / "yes.yaml").write_text("- id: go\n  mtch: Continue\n  reply: y\n")
    p = cp("run", "--rules", "yes.yaml", "--", "bash", "-c", ASK, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == ("cursor-pilot: error: yes.yaml:2:3: rule 1 (go): unknown key 'mtch' (did you mean 'match'?); "
                                "a rules file is a list of rules like: - {id: go, match: 'Continue\\?', reply: y}")
    assert not (tmp_path / "runs").exists()
