"""Who answered is a type (records/answerer.py): read back from a record's `source` in one place, and written back
byte for byte, so the records keep their format while every check asks the type (gate.py asked "rules:" while
pty/asking.py asked "rules": one meant a rule's answer, the other the rules at all)."""

from hypothesis import given, strategies as st

from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict
from cursorpilot.decide.toolcalls import permission_reply
from cursorpilot.records import answerer
from cursorpilot.records.answerer import Answerer, Source
from cursorpilot.report.build import source_kind

SEEN = {  # every spelling the code writes, and what it means
    "rules:approve-npm": (Answerer.RULES, "approve-npm"),
    "rules": (Answerer.RULES, None),
    "policy:rm_rf": (Answerer.POLICY, "rm_rf"),
    "policy:hook": (Answerer.POLICY, "hook"),
    "plan:send": (Answerer.PLAN, "send"),
    "human": (Answerer.PERSON, None),
    "on-human-timeout": (Answerer.TIMEOUT, None),
    "nobody": (Answerer.NOBODY, None),
    "loop-breaker": (Answerer.BREAKER, None),
    "openai:gpt-4o-mini": (Answerer.MODEL, "openai:gpt-4o-mini"),
    "mock": (Answerer.MODEL, "mock"),
    "": (Answerer.NONE, None),
}


def test_each_spelling_the_records_hold_reads_as_its_answerer_and_writes_back_the_same():
    for text, (kind, detail) in SEEN.items():
        by = Source.read(text)
        assert (by.kind, by.detail) == (kind, detail), text
        assert str(by) == text


@given(st.text(max_size=40))
def test_any_source_string_round_trips_byte_for_byte(text):
    assert str(Source.read(text)) == text


def test_a_rule_answered_only_when_a_rule_is_named():
    assert Source.read("rules:go").rule == "go"
    assert Source.read("rules").rule is None  # the rules asked, none matched: the rules, but no rule
    assert Source.read("rules").kind is Answerer.RULES
    assert Source.read("rulesmith:x").rule is None  # a model whose name begins like it is a model
    assert Source.read("policy:go").rule is None


def test_the_writers_helpers_spell_what_the_records_always_said():
    assert (answerer.rule("a"), answerer.RULES_MISS, answerer.PERSON, answerer.NOBODY) == ("rules:a", "rules", "human", "nobody")
    assert (answerer.BY_TIMEOUT, answerer.LOOP_BREAKER, answerer.policy("rm_rf")) == ("on-human-timeout", "loop-breaker", "policy:rm_rf")
    assert Decision(Verdict.ANSWER, text="y", source=answerer.rule("a")).by == Source(Answerer.RULES, "a")


def test_the_reports_source_kinds_are_read_off_the_type():
    assert [source_kind(s) for s in SEEN] == ["rules", "rules", "policy", "policy", "plan", "human", "human", "model", "breaker",
                                              "model", "model", "none"]
    assert source_kind(None) == "none"


def _approval(source: str) -> str | None:
    q = Question(kind=Kind.PERMISSION, text="run it?", key="k", source="session/request_permission",
                 choices=(Choice("allow", "Allow", kind="allow_once"), Choice("no", "No", kind="reject_once")))
    d = Decision(Verdict.ANSWER, text="Allow", choices=(q.choices[0],), source=source)
    out = permission_reply(q, d, standing=False, described=False)
    return out.choice.key if out.choice is not None else None


def test_an_undescribed_call_is_approved_by_the_users_word_and_never_by_a_model():
    for trusted in ("rules:go", "human", "policy:hook", "plan:send"):
        assert _approval(trusted) == "allow", trusted
    for untrusted in ("openai:gpt-4o-mini", "rules", "nobody", "mock"):  # a bare "rules" is no rule of the user's
        assert _approval(untrusted) is None, untrusted


def test_the_summary_counts_who_chose_each_answer_off_the_type():
    from cursorpilot.ui import chosen_by

    assert [chosen_by(s) for s in ("rules:a", "policy:rm_rf", "human", "plan:send", "on-human-timeout", "script", "openai:gpt-4o",
                                   "nobody")] == ["rules", "the deny policy", "you", "the plan", "--on-human-timeout", "the script",
                                                  "the model", "the model"]
