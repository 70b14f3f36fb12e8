"""Rules files: errors that say where and what, rules that see the screen and what was answered last."""

from __future__ import annotations

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.question import Kind, Question, Verdict
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest
from cursorpilot.providers.rules import RuleEntry, RulesProvider, parse_answer, read_entries
from cursorpilot.providers.script import ScriptProvider
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript

SHAPE = "a rules file is a list of rules like: - {id: go, match: 'Continue\\?', reply: y}"


@pytest.mark.parametrize("text, where, what", [
    ("- {match: Continue, reply: y\n", ":2:1:", "invalid YAML: expected ',' or '}'"),
    ("match: Continue\nreply: y\n", ":1:1:", "one rule without its '- '"),
    ("yes: y\nno: n\n", ":1:1:", "the file holds a mapping, not a list"),
    ("- id: ok\n  mtch: Continue\n  reply: y\n", ":2:3:", "rule 1 (ok): unknown key 'mtch' (did you mean 'match'?)"),
    ("- id: ok\n  match: Continue\n", ":1:3:", "rule 1 (ok): missing key 'reply'"),
    ("rules:\n  - {match: a, reply: b}\n  - {match: x, rply: y}\n", ":3:16:", "rule 2: unknown key 'rply' (did you mean 'reply'?)"),
    ("- {match: x, reply: y, kind: qestion}\n", ":1:24:", "rule 1: kind: Input should be 'question'"),
    ("- Continue\n", ":1:3:", "rule 1 is text, not a mapping"),
    ("", ":1:1:", "no rules in the file"),
])
def test_rules_file_error_names_file_line_column_key_and_shape(tmp_path, text, where, what):
    f = tmp_path / "rules.yaml"
    f.write_text(text)
    with pytest.raises(BadInput) as err:
        read_entries(f)
    message = str(err.value)
    assert message.startswith(f"{f}{where} ") and what in message and message.endswith(SHAPE), message
    assert "\n" not in message


def test_rules_file_bad_regex_and_unknown_after_are_placed(tmp_path):
    f = tmp_path / "rules.yaml"
    f.write_text("- {id: a, match: x, reply: y}\n- {id: b, match: x, screen: 'a(', reply: y}\n")
    with pytest.raises(BadInput, match=r"rules.yaml:2:21: rule b: invalid regex in screen: 'a\(': missing \)"):
        read_entries(f)
    f.write_text("- {id: a, match: x, reply: y}\n- {id: b, match: x, reply: y, after: c}\n")
    with pytest.raises(BadInput, match=r"rules.yaml:2:31: rule b: after: no rule has the id 'c' \(ids: a, b\)"):
        read_entries(f)


def test_reply_yes_and_numbers_stay_the_text_written(tmp_path):
    """YAML reads `yes` as True and `2` as a number; a reply is what is typed: y-e-s, 2."""
    f = tmp_path / "rules.yaml"
    f.write_text("- {match: a, reply: yes}\n- {match: b, reply: 2}\n- {match: c, reply: 'on'}\n")
    assert [e.reply for e in read_entries(f)] == ["yes", "2", "on"]


def request(block: str, screen: str = "", previous: str = "") -> AnswerRequest:
    return AnswerRequest(governing_prompt="", kind="input", rule_id="r", prompt_block=block, screen=screen or block, previous=previous)


def test_screen_and_after_tell_look_alike_prompts_apart():
    rules = RulesProvider([
        RuleEntry(id="cont", match=r"\(Pdb\)", after="look", reply="c"),
        RuleEntry(id="look", match=r"\(Pdb\)", screen="-> print", reply="p y"),
        RuleEntry(id="next", match=r"\(Pdb\)", reply="n"),
    ], "test")
    assert rules.answer(request("(Pdb)", "-> x = 1\n(Pdb)")).source == "rules:next"
    assert rules.answer(request("(Pdb)", "-> print(y)\n(Pdb)")).source == "rules:look"
    assert rules.answer(request("(Pdb)", "-> print(y)\n2\n(Pdb)", previous="rules:look")).source == "rules:cont"
    assert rules.answer(request("(Pdb)", "-> print(y)\n2\n(Pdb)", previous="human")).source == "rules:look"


def test_screen_regex_alone_never_answers_a_prompt_it_does_not_match():
    rules = RulesProvider([RuleEntry(match="Continue", screen="anything", reply="y")], "test")
    assert rules.answer(request("Delete?", "anything\nDelete?")).text is None


@pytest.mark.parametrize("value, match, reply", [
    (r"Continue\?=y", r"Continue\?", "y"),
    ("Name:=KEY=value", "Name:", "KEY=value"),
    (r"a\=b=c", r"a\=b", "c"),
    ("x(?=y)z=1", "x(?=y)z", "1"),
    ("Proceed=", "Proceed", ""),
])
def test_answer_option_splits_at_the_first_equals_outside_the_regex(value, match, reply):
    entry = parse_answer(value, 1)
    assert (entry.match, entry.reply, entry.id) == (match, reply, "answer1")


def test_answer_option_without_equals_or_with_a_bad_regex_is_bad_input():
    with pytest.raises(BadInput, match="expected REGEX=REPLY"):
        parse_answer("Continue", 1)
    with pytest.raises(BadInput, match="invalid regex in match"):
        parse_answer("a(=y", 1)


def decider(tmp_path, rules: RulesProvider) -> Decider:
    clock, redactor = FakeClock(), Redactor(env={})
    run = RunContext(tx=Transcript(tmp_path / "t.jsonl", "r", clock, redactor), redactor=redactor, clock=clock, log_dir=tmp_path,
                     run_id="r", provider=rules)
    return Decider(run, "", None, None, PromptFiler(run, 1, "1/1", None, ""))


def test_after_reads_only_an_answer_that_was_delivered(tmp_path):
    """A rule's answer that never reached the program (refused, stale, a dry run) is not 'the previous answer'."""
    d = decider(tmp_path, RulesProvider([RuleEntry(id="two", match="Go", after="one", reply="2"),
                                         RuleEntry(id="one", match="Go", reply="1")], "test"))
    q = Question(kind=Kind.INPUT, text="Go>", key="k", source="r")
    first = d.first(q)
    assert first is not None and (first.verdict, first.source) == (Verdict.ANSWER, "rules:one")
    assert d.first(q).source == "rules:one"  # not delivered: still the first rule
    d.delivered(q.text, "1")
    assert d.first(q).source == "rules:two"
    d.delivered(q.text, "a human's words")  # a human answered instead of the rule's "2"
    assert d.previous == "" and d.first(q).source == "rules:one"


def test_rule_answers_count_as_rule_hits_when_rules_are_the_provider(tmp_path):
    """rule_hits stayed 0 after nine rule answers when --provider rules answered: the summary did not add up."""
    d = decider(tmp_path, RulesProvider([RuleEntry(id="one", match="Go", reply="1")], "test"))
    d.first(Question(kind=Kind.INPUT, text="Go>", key="k", source="r"))
    d.first(Question(kind=Kind.INPUT, text="Stop>", key="k2", source="r"))
    assert d.ctx.usage["rule_hits"] == 1 and d.ctx.usage["llm_calls"] == 0


def test_script_provider_does_not_count_as_rule_hits(tmp_path):
    d = decider(tmp_path, ScriptProvider(["a"]))  # type: ignore[arg-type]
    d.first(Question(kind=Kind.INPUT, text="Go>", key="k", source="r"))
    assert d.ctx.usage["rule_hits"] == 0


def test_at_a_turn_end_only_rules_of_kind_turn_end_read_the_agents_message_and_any_rule_its_closing_question(tmp_path):
    d = decider(tmp_path, RulesProvider([RuleEntry(id="port", match="Which port", reply="8080"),
                                         RuleEntry(id="cancelled", match="Request cancelled", reply="Leave the data alone and finish.",
                                                   kind="turn_end"),
                                         RuleEntry(id="anything", match=".", reply="typed at any prompt")], "test"))
    stop = Question(kind=Kind.TURN_END, text="⎿ Request cancelled.", key="turn_end:1", source="claude.idle")
    got = d.first(stop)
    assert (got.turn, got.text, got.source) == ("continue", "Leave the data alone and finish.", "rules:cancelled")
    closing = Question(kind=Kind.QUESTION, text="Which port should it use?", key="k", source="claude.idle.prose_question")
    got = d.first(Question(kind=Kind.TURN_END, text="Done. Which port should it use?", key="turn_end:2", source="claude.idle",
                           closing=closing))
    assert (got.turn, got.text, got.source) == ("continue", "8080", "rules:port")
    got = d.first(Question(kind=Kind.TURN_END, text="All done.", key="turn_end:3", source="claude.idle"))
    assert got.verdict == Verdict.PASS  # the catch-all rule is for prompts, not for an agent that stopped: the facts decide


def test_the_script_provider_is_not_spent_on_turn_ends(tmp_path):
    script = ScriptProvider(["a"])
    d = decider(tmp_path, script)  # type: ignore[arg-type]
    assert d.first(Question(kind=Kind.TURN_END, text="Done.", key="turn_end:1", source="x")).verdict == Verdict.PASS
    assert list(script.queue) == ["a"]
