"""Menus through real PTYs: an Ink-style select that ignores digits, a multi-select, a real prompt library (questionary)."""

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SIM
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.timeout(90)

MENU_RULES = """
- {match: 'Deploy to production', reply: 'Yes'}
- {match: 'package manager', reply: 'pnpm'}
- {match: 'checks should run', reply: 'lint, unit tests'}
"""


def test_options_are_chosen_by_label_with_arrows(pilot):
    r = pilot([*SIM, "menu", "menu-select"], rules=MENU_RULES)
    assert r.code == 0, r.stdout + r.stderr
    assert [e["chosen"] for e in r.sim_events("select")] == [
        ["Yes"], ["pnpm (fast, disk-efficient, uses a content-addressed store)"], ["lint", "unit tests"]]
    assert r.of("program_started")[0]["profile"] == "prompts"  # picked by --profile auto from the command
    choices = r.of("menu_choice")
    assert [(c["highlighted"], c["keys"]) for c in choices] == [
        ("No", "<up><enter>"), ("npm", "<down><enter>"), ("lint", "<space><down><space><down><down><space><enter>")]
    keys = [e["key"] for e in r.sim_events("key")]
    assert not any(k.startswith("char:") and k[5:].isdigit() for k in keys)  # digits are never typed into a select


def test_enter_is_not_pressed_until_the_highlight_is_on_the_choice(pilot):
    r = pilot([*SIM, "menu", "menu-frozen"], rules="- {match: 'Which region', reply: 'us-east'}\n")
    assert r.code == 3, r.stdout + r.stderr
    assert r.sim_events("select") == []  # nothing was chosen
    assert "<enter>" not in [k["keys"] for k in r.of("keys_sent")]
    [check] = r.of("menu_check_failed")
    assert (check["expected"], check["seen"]) == ("us-east", "eu-west")
    assert "the highlight did not reach 'us-east'" in r.of("escalation")[0]["why"]


def test_a_reply_that_names_no_option_escalates(pilot):
    r = pilot([*SIM, "menu", "menu-frozen"], rules="- {match: 'Which region', reply: 'ap-south'}\n")
    assert r.code == 3 and r.of("keys_sent") == []
    assert "names none of the options (eu-west, us-east)" in r.of("escalation")[0]["why"]


QUESTIONARY = textwrap.dedent("""
    import json, sys
    import questionary
    color = questionary.select("Pick a color", choices=["Red", "Green", "Blue"]).ask()
    tops = questionary.checkbox("Pick toppings", choices=["Cheese", "Ham", "Pineapple", "Olives"]).ask()
    with open(sys.argv[1], "w") as fh:
        json.dump({"color": color, "toppings": tops}, fh)
""")


def test_questionary_select_and_checkbox(pilot, tmp_path):
    out = tmp_path / "answers.json"
    rules = "- {match: 'Pick a color', reply: 'Blue'}\n- {match: 'Pick toppings', reply: 'Ham, Olives'}\n"
    r = pilot([sys.executable, "-c", QUESTIONARY, str(out)], "--profile", "prompts", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert json.loads(out.read_text()) == {"color": "Blue", "toppings": ["Ham", "Olives"]}


def test_the_llm_sees_the_options_and_the_highlight(pilot):
    """The options once: on the screen when it shows them all (said again, a 0.5B model chose the first), listed when
    it does not (options over two rows) or when their boxes matter (a multi-select); the highlight always."""
    seen = []

    def answer(prompt):
        question = prompt.split("# The question", 1)[1]
        screen = prompt.split("# Screen", 1)[1].split("# The question", 1)[0]
        seen.append(screen)
        if "Deploy to production" in question:
            assert "Highlighted (an empty text takes it): No" in screen and "Yes" in screen and "Options (" not in screen
            return "Yes"
        if "package manager" in question:
            return "pnpm"
        assert "Options (→ marks the highlighted one)" in screen and "[ ] lint" in screen  # a multi-select: its boxes
        return "lint, unit tests"

    with FakeLLM(answer=answer) as server:
        r = pilot([*SIM, "menu", "menu-select"], "--provider", "openai", "--base-url", server.url + "/v1",
                  env={"OPENAI_API_KEY": "sk-test-0123456789abcdefghij"})
    assert r.code == 0, r.stdout + r.stderr
    assert len(server.requests) == 3
    assert [e["chosen"][0] for e in r.sim_events("select")] == ["Yes", "pnpm (fast, disk-efficient, uses a content-addressed store)", "lint"]


def test_claude_permission_menu_with_the_deny_policy_choosing_no(pilot):
    r = pilot([*SIM, "menu", "menu-claude-permission"], "--profile", "claude",
              rules="- {match: 'Do you want to proceed', reply: 'Yes'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert [e["chosen"] for e in r.sim_events("select")] == [["Yes"], ["No, and tell Claude what to do differently (esc)"]]
    [denied] = r.of("policy_denied")
    assert denied["policy_rule"] == "rm_outside" and denied["reply"] == "No"  # the profile's deny_reply, turned into arrows
    assert [a["source"] for a in r.of("answer")] == ["rules:#1", "policy:rm_outside"]


NPM = Path(__file__).resolve().parents[1] / "npm"


@pytest.mark.skipif(shutil.which("node") is None or not (NPM / "node_modules" / "@inquirer").is_dir(),
                    reason="needs node and `npm ci --prefix tests/npm` (.ci/run does both)")
def test_inquirer_select_and_checkbox(pilot, tmp_path):
    out = tmp_path / "answers.json"
    rules = "- {match: 'Which framework', reply: 'Svelte'}\n- {match: 'Which features', reply: 'TypeScript, Vitest'}\n"
    r = pilot(["node", str(NPM / "inquirer.mjs"), str(out)], "--profile", "prompts", rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert json.loads(out.read_text()) == {"framework": "Svelte", "features": ["TypeScript", "Vitest"]}


def test_agent_menus_nobody_asked_about_get_no_keystroke(pilot):
    r = pilot([*SIM, "menu", "trap-agent-menus"], "--profile", "claude", rules="- {match: '.', reply: '1'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert r.of("keys_sent") == [] and r.sim_events("unexpected_key") == []
    assert "working" in [s["state"] for s in r.of("screen_state")]


def test_a_highlight_drawn_only_in_reverse_video(pilot):
    r = pilot([*SIM, "menu", "menu-reverse"], rules="- {match: 'Which framework', reply: 'Vue'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert [e["chosen"] for e in r.sim_events("select")] == [["Vue"]]
    assert [(c["highlighted"], c["keys"]) for c in r.of("menu_choice")] == [("React", "<down><enter>")]


@pytest.mark.parametrize("tool", ["codex", "gemini"])
def test_codex_and_gemini_approval_menus(pilot, tool):
    r = pilot([*SIM, "menu", f"menu-{tool}-approval"], "--profile", tool, "--provider", "mock", rules='["Yes"]\n')
    assert r.code == 0, r.stdout + r.stderr
    assert f"{tool}.approval" in [s["rule_id"] for s in r.of("screen_state")]
    [chosen] = [e["chosen"] for e in r.sim_events("select")]
    assert chosen == [{"codex": "Yes, proceed (y)", "gemini": "Yes, allow once"}[tool]]  # once, not always
