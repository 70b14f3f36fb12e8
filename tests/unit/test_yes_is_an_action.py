"""A yes is an action: the deny policy weighs the question together with the answer, whoever chose it (issue 22, 1).

The decision path over questions as both channels put them (a `[y/N]` line, a numbered Yes/No, Enter on `[Y/n]`, an
ACP permission), answered by a rule; the real PTY programs and a model misled by the program's output are in
tests/integration/test_yes_is_an_action.py.
"""

import json

import pytest

from cursorpilot.channels.acp.ask import permission_question
from cursorpilot.clock import FakeClock
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide import weigh
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.policy import check_question
from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict
from cursorpilot.decide.yesno import said_yes, spelling
from cursorpilot.detect.classifier import Timing, classify
from cursorpilot.detect.profiles import load_profile
from cursorpilot.providers.rules import RuleEntry, RulesProvider
from cursorpilot.channels.pty.ask import question as pty_question
from cursorpilot.channels.pty.screen import TerminalScreen
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript

YES_NO = (Choice("0", "Yes", number=1), Choice("1", "No", number=2))
ACP = ({"optionId": "ok", "name": "Allow", "kind": "allow_once"}, {"optionId": "no", "name": "Reject", "kind": "reject_once"})


def decider(tmp_path, reply: str, allow: frozenset[str] = frozenset()) -> Decider:
    clock, redactor = FakeClock(), Redactor(env={})
    rules = RulesProvider([RuleEntry(id="yes", match=".", reply=reply)], "test")
    run = RunContext(tx=Transcript(tmp_path / "t.jsonl", "r", clock, redactor), redactor=redactor, clock=clock, log_dir=tmp_path,
                     run_id="r", provider=rules, allow=allow)
    return Decider(run, "never delete anything", None, None, PromptFiler(run, 1, "1/1", None, ""))


def records(tmp_path, type_: str) -> list[dict]:
    return [r for r in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines()) if r["type"] == type_]


def line(text: str, deny: str | None = "n", choices=(), highlighted=None) -> Question:
    return Question(kind=Kind.MENU if choices else Kind.QUESTION, text=text, key=text, source="generic.yes_no", asked=text,
                    approval=deny is not None, deny_reply=deny, choices=choices, highlighted=highlighted)


@pytest.mark.parametrize("q,reply,typed", [
    (line("Delete all files in important/? [y/N]"), "y", "n"),
    (line("Delete all files in important/? [y/N]"), "<key:y>", "n"),
    (line("Delete all files in important/? [y/N]"), "yes", "n"),
    (line("Remove the old backups? [Y/n]"), "", "n"),  # Enter on a default-yes is a yes
    (line("Wipe the cache? (yes/no)", deny="n"), "yes", "no"),  # the no the question spells out, not the profile's n
    (line("Proceed anyway? (y,N)\n", deny=None), "y", None),  # nothing destructive in its words: typed as it is
    (line("Delete everything?\n1. Yes\n2. No\n#? ", deny=None, choices=YES_NO), "y", "No"),
    (line("Delete everything?\n❯ 1. Yes\n  2. No", deny=None, choices=YES_NO, highlighted=0), "<enter>", "No"),
    (line("Drop database prod? [y/N]"), "sure", "n"),
    (line("cp: overwrite 'b'? ", deny="n"), "y", "n"),
    (line("Force push to origin/main? [y/N]"), "y", "n"),
    (line("replace a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename:"), "A", "n"),  # unzip: A is [A]ll, a yes to every file
])
def test_a_yes_to_a_destructive_question_is_answered_no(tmp_path, q, reply, typed):
    d = decider(tmp_path, reply).first(q)
    if typed is None:
        assert d.verdict == Verdict.ANSWER and d.text == reply
        return
    assert (d.verdict, d.text) == (Verdict.ANSWER, typed), d
    assert d.source.startswith("policy:") and d.denied
    denied = records(tmp_path, "policy_denied")
    assert [(r["on"], r["reply"], r["policy_rule"]) for r in denied] == [("yes", typed, d.denied)]
    assert denied[0]["evidence"]


def test_a_no_and_a_harmless_yes_pass(tmp_path):
    assert decider(tmp_path, "n").first(line("Delete all files? [y/N]")).text == "n"
    assert decider(tmp_path, "y").first(line("Continue with the install? [Y/n]")).text == "y"
    assert decider(tmp_path, "").first(line("Delete all files? [y/N]")).text == ""  # Enter takes the default, no
    assert records(tmp_path, "policy_denied") == []


def test_a_plan_that_allows_the_class_lets_the_yes_through(tmp_path):
    d = decider(tmp_path, "y", allow=frozenset({"delete"}))
    assert d.first(line("Delete all files in important/? [y/N]")).text == "y"
    assert decider(tmp_path, "y", allow=frozenset({"delete"})).first(line("Overwrite config.yaml? [y/N]")).text == "n"


def test_a_yes_to_a_question_that_offers_no_no_goes_to_a_human(tmp_path):
    q = Question(kind=Kind.INPUT, text="Type DELETE to erase the volume:", key="k", source="generic.waiting_input",
                 asked="Type DELETE to erase the volume:")
    d = decider(tmp_path, "DELETE").first(q)
    assert d.verdict == Verdict.ESCALATE and "delete" in d.why
    assert records(tmp_path, "policy_denied")[0]["reply"] is None


def test_a_human_who_answers_yes_decides_for_themselves(tmp_path):
    d = decider(tmp_path, "y")
    q = line("Delete all files in important/? [y/N]")
    assert d.check(q, Decision(Verdict.ANSWER, text="y", source="human")).text == "y"


def test_an_acp_permission_to_delete_approved_is_rejected_once(tmp_path):
    q = permission_question({"kind": "delete", "title": "Delete important/", "locations": [{"path": "important"}]}, list(ACP))
    d = decider(tmp_path, "allow").first(q)
    assert [c.kind for c in d.choices] == ["reject_once"] and d.denied == "delete"
    harmless = permission_question({"kind": "edit", "title": "Edit remover.py", "content": [
        {"type": "diff", "path": "remover.py", "oldText": "x", "newText": "def remove_all():\n    items.clear()  # erase them"}]}, list(ACP))
    assert decider(tmp_path, "allow").first(harmless).choices[0].kind == "allow_once"  # a diff's words are not the question


def screen_question(text: str, profile="generic"):
    s = TerminalScreen(120, 40)
    s.feed(text.encode())
    snap = s.snapshot()
    p = load_profile(profile)
    return pty_question(p, classify(p, snap, Timing(5.0)), snap, [])


def test_a_line_question_is_weighed_by_its_whole_block_the_rows_that_lead_up_to_it_included():
    """mkfs asks only "Proceed anyway? (y,N)": what it would do is in the rows above, read with it (tests/unit/
    test_whole_question.py has gdisk's, parted's and apt's): a look, never a verdict."""
    q = screen_question("mke2fs 1.47.0 (5-Feb-2023)\r\ndisk.img contains a ext4 file system\r\n\tcreated on Mon Jan 1\r\n"
                        "Proceed anyway? (y,N) ")
    assert q.source == "generic.yes_no" and q.asked == "Proceed anyway? (y,N)" and "contains a ext4 file system" in q.lead
    look = weigh.trigger(weigh.block(q.asked, q.lead, (), ()), None, frozenset())
    assert look is not None and look.acts == {"mkfs"}


def test_a_dialog_is_weighed_by_its_question_not_by_the_diff_in_it():
    q = Question(kind=Kind.MENU, text="Edit file\n- remove_everything()\nDo you want to make this edit to a.py?", key="k",
                 source="claude.permission", choices=YES_NO, asked="Do you want to make this edit to a.py?")
    assert not check_question(q.asked)


@pytest.mark.parametrize("text,expected", [
    ("Proceed anyway? (y,N)", ("no", "n")), ("Go? [Y/n]:", ("yes", "n")), ("Sure? (yes/no)", (None, "no")),
    ("Continue (yes/no/[fingerprint])?", (None, "no")), ("Is this OK? (yes)", ("yes", None)),
    ("Add file? (Y)es/(N)o [Yes]:", ("yes", "n")), ("Stage this hunk [y,n,q,a,d,e,?]?", (None, "n")), ("Continue?", (None, None)),
])
def test_yes_no_spellings_say_their_default_and_their_no(text, expected):
    assert spelling(text) == expected


def test_what_counts_as_a_yes():
    q = line("Delete? [Y/n]")
    for reply in ("y", "Y", "yes", "<key:y>", "", "<enter>", "OK", "allow", "delete"):
        assert said_yes(q, Decision(Verdict.ANSWER, text=reply)), reply
    for reply in ("n", "no", "<key:n>", "q", "later"):
        assert not said_yes(q, Decision(Verdict.ANSWER, text=reply)), reply
    unzip = line("replace a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename:")
    assert [r for r in "yAnNr" if said_yes(unzip, Decision(Verdict.ANSWER, text=r))] == ["y", "A"]  # N is [N]one
    assert not said_yes(line("Delete? [y/N]"), Decision(Verdict.ANSWER, text=""))  # Enter on a default-no
    assert said_yes(q, Decision(Verdict.ANSWER, text="1", choices=(Choice("0", "Delete all"),)))
    assert not said_yes(q, Decision(Verdict.ANSWER, text="2", choices=(Choice("1", "Keep them"),)))


def test_the_governing_prompt_grants_a_yes_only_in_plain_words_its_negations_do_not_govern():
    from cursorpilot.decide.consent import reading

    def grants(prompt: str, act: str, block: str) -> list[str]:
        return [c.text for c in reading(prompt, frozenset({act}), block).granting]

    assert grants("Remove the six package from the tv virtual environment. Confirm the uninstall.", "delete",
                  "Would remove: six.py\nProceed (Y/n)?") == ["Remove the six package from the tv virtual environment"]
    assert grants("Generate a key in ./id_test. Replace the existing file there.", "overwrite", "./id_test exists\nOverwrite (y/n)?") == [
        "Replace the existing file there"]
    for refusing in ("Never delete anything.", "Approve tests and writes; never delete.", "Nothing here may be deleted.",
                     "When asked whether to remove a file, refuse.", "Don't reset the branch"):
        assert reading(refusing, frozenset({"delete", "reset_hard"}), "Delete a.txt? Reset branch main?").forbidding, refusing
