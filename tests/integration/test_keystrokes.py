"""Keystroke delivery to an input box that takes fast input for a paste, and multi-line text as a bracketed paste."""

import pytest

from tests.conftest import SIM

pytestmark = pytest.mark.timeout(90)

TWO = '["Add a /health endpoint", "Plan:\\n1. add the route\\n2. add a test"]\n'


@pytest.fixture
def compose_rule(tmp_path):
    overlay = tmp_path / "compose.yaml"
    overlay.write_text("rules:\n  - {id: test.compose, kind: input, scope: cursor_line, multiline: true, any: ['^›\\s*$']}\n")
    return ["--profile", "generic", "--detectors", str(overlay), "--provider", "mock"]


def test_a_profile_enter_delay_keeps_enter_out_of_a_paste_window(pilot, compose_rule, tmp_path):
    """Codex takes input that comes within ~120 ms for a paste: its profile asks for a gap before Enter. Programs
    with no such window (the generic profile) get Enter as soon as the typed text shows, with no fixed wait."""
    slow = tmp_path / "slow.yaml"
    slow.write_text("enter_delay_ms: 200\nrules:\n  - {id: test.compose, kind: input, scope: cursor_line, multiline: true, any: ['^›\\s*$']}\n")
    opts = [o if o != compose_rule[3] else str(slow) for o in compose_rule]
    r = pilot([*SIM, "menu", "compose-paste"], *opts, rules=TWO)
    assert r.code == 0, r.stdout + r.stderr
    assert [e["text"] for e in r.sim_events("compose")] == ["Add a /health endpoint", "Plan:\n1. add the route\n2. add a test"]
    assert r.sim_events("paste_newline") == []
    pasted = [k for k in r.of("keys_sent") if k["keys"].startswith("<paste")]
    assert len(pasted) == 1 and pasted[0]["hex"].startswith("1b5b3230307e")  # ESC [200~


def test_the_box_really_swallows_a_fast_enter(pilot, compose_rule, tmp_path):
    fast = tmp_path / "fast.yaml"
    fast.write_text("enter_delay_ms: 0\nrules:\n  - {id: test.compose, kind: input, scope: cursor_line, multiline: true, any: ['^›\\s*$']}\n")
    opts = [o if o != compose_rule[3] else str(fast) for o in compose_rule]
    r = pilot([*SIM, "menu", "compose-paste"], *opts, rules=TWO)
    assert r.sim_events("paste_newline")  # the Enter sent with no gap became part of the text
    assert r.code != 0 or r.sim_events("compose")[0]["text"] != "Add a /health endpoint"


def test_multi_line_text_is_refused_where_the_program_has_no_bracketed_paste(pilot, compose_rule):
    r = pilot([*SIM, "menu", "compose-plain"], *compose_rule, rules='["line one\\nline two"]\n')
    assert r.code == 3, r.stdout + r.stderr
    assert r.of("keys_sent") == [] and r.sim_events("compose") == []
    assert "bracketed paste" in r.of("escalation")[0]["why"]
