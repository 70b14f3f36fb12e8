import json

import pytest

from cursorpilot.detect.profiles import available, load_profile, resolve_name
from cursorpilot.errors import BadInput
from cursorpilot.providers import create
from cursorpilot.providers.base import AnswerRequest, ProviderConfig


@pytest.mark.parametrize("name", available())
def test_every_shipped_profile_loads(name):
    profile = load_profile(name)
    assert profile.rules and len({r.id for r in profile.rules}) == len(profile.rules)


def test_invalid_regex_names_the_file_rule_and_pattern(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - id: my.rule\n    kind: question\n    any: ['([unclosed']\n")
    with pytest.raises(BadInput) as err:
        load_profile("generic", bad)
    msg = str(err.value)
    assert str(bad) in msg and "my.rule" in msg and "([unclosed" in msg


@pytest.mark.parametrize("kind", ["settling", "unknown"])
def test_what_the_readers_say_of_an_undecided_screen_is_no_rules_kind(tmp_path, kind):
    """One enum names a screen's kind (detect/profiles.py ScreenKind), the readers' settling and unknown included: a
    rule that claims one of those two is refused with one line, as a typo'd kind is."""
    bad = tmp_path / "kind.yaml"
    bad.write_text(f"rules:\n  - id: r\n    kind: {kind}\n    any: ['x']\n")
    with pytest.raises(BadInput, match="not a rule's kind"):
        load_profile("generic", bad)


def test_unknown_keys_are_rejected(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text("rules:\n  - id: r\n    kind: question\n    any: ['x']\n    scopee: block\n")
    with pytest.raises(BadInput, match="scopee"):
        load_profile("generic", bad)


def test_json_overlay_adds_first_and_overrides_in_place(tmp_path):
    overlay = tmp_path / "more.json"
    overlay.write_text(json.dumps({
        "settle_ms": 250,
        "rules": [
            {"id": "mine.deploy", "kind": "question", "scope": "cursor_line", "any": ["Deploy\\?"]},
            {"id": "generic.yes_no", "kind": "question", "scope": "cursor_line", "any": ["\\[yes/no\\]"]},
        ],
    }))
    base = load_profile("generic")
    merged = load_profile("generic", overlay)
    assert merged.settle_ms == 250
    assert merged.rules[0].id == "mine.deploy"
    replaced = [r for r in merged.rules if r.id == "generic.yes_no"]
    assert replaced[0].any == ["\\[yes/no\\]"]
    assert len(merged.rules) == len(base.rules) + 1
    assert merged.digest() != base.digest()


def test_unknown_profile_lists_the_available_ones():
    with pytest.raises(BadInput, match="unknown profile 'nope'.*generic"):
        load_profile("nope")


def test_auto_profile_from_the_command_name():
    assert resolve_name("auto", ["cursor-agent", "fix it"]) == "cursor"
    assert resolve_name("auto", ["python", "-m", "cursorpilot.sim", "cursor"]) == "cursor"
    assert resolve_name("auto", ["python", "-m", "cursorpilot.sim", "line", "x"]) == "generic"
    assert resolve_name("auto", ["bash", "-c", "read x"]) == "generic"


def request(block: str, kind: str = "question") -> AnswerRequest:
    return AnswerRequest(governing_prompt="", kind=kind, rule_id="r", prompt_block=block, screen=block)


def test_rules_first_match_wins_and_no_match_escalates(tmp_path):
    f = tmp_path / "rules.yaml"
    f.write_text("- {match: 'Continue\\?', reply: 'y', id: cont}\n- {match: '.*', reply: 'n', kind: menu}\n")
    p = create("rules", ProviderConfig(rules_file=f))
    assert (p.answer(request("Continue? [y/n]")).text, p.answer(request("Continue? [y/n]")).source) == ("y", "rules:cont")
    assert p.answer(request("Other?", kind="menu")).text == "n"
    miss = p.answer(request("Other?"))
    assert miss.text is None and "no rule" in miss.reason


def test_rules_file_errors_are_bad_input(tmp_path):
    f = tmp_path / "rules.yaml"
    f.write_text("- {match: '(', reply: y}\n")
    with pytest.raises(BadInput, match="invalid regex"):
        create("rules", ProviderConfig(rules_file=f))
    f.write_text("- {match: 'x', reply: y, extra: 1}\n")
    with pytest.raises(BadInput, match="extra"):
        create("rules", ProviderConfig(rules_file=f))


@pytest.mark.parametrize("name", ["script", "mock"])
def test_script_replies_in_order_then_runs_out(tmp_path, name):
    f = tmp_path / "script.yaml"
    f.write_text("replies: [first, yes, 2]\n")
    p = create(name, ProviderConfig(rules_file=f))
    assert [p.answer(request("q")).text for _ in range(4)] == ["first", "yes", "2", None]


def test_unknown_provider_is_bad_input():
    with pytest.raises(BadInput, match="unknown provider 'gpt'"):
        create("gpt", ProviderConfig())
