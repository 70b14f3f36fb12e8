"""The guard's authority is the user's words alone (issue 47): the governing prompt compiled into a policy, a yes matched
against it, the hard floor, a rule that grants only the act it names, a judge that may only point. Each guard beside
its mirror. The real programs are in tests/integration/test_policy_programs.py and test_whole_question.py.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cursorpilot.decide import compiled, ruling, weigh
from cursorpilot.decide.compiled import Entry, Policy
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.decide.yesno import may_say_yes
from cursorpilot.providers.rules import RuleEntry
from tests.unit.test_whole_question import Model, decide, decider, records, screen

PIP = ("Found existing installation: six 1.16.0\r\nUninstalling six-1.16.0:\r\n  Would remove:\r\n"
       "    /tmp/w/v/lib/python3.11/site-packages/six.py\r\nProceed (Y/n)? ")
RESET = "This discards every local change (git reset --hard origin/main).\r\nReset the working tree? [y/N] "
BRANCH = "Delete branch feature-x (unmerged)? [y/N] "
DROP = "About to run: DROP TABLE users;\r\nAre you sure? [y/N] "
CURSOR = ("Run this command?\r\nNot in allowlist: rm -rf ~/\r\n → Run (once) (y)\r\n   Skip (esc or n)\r\n")
BOX = ("rm -rf dist/ coverage/\r\n\r\n1. Yes\r\n2. Yes, and don't ask again\r\n3. No\r\nChoice: ")


def acts_of(text: str) -> frozenset[str]:
    q = screen(text)
    look = weigh.trigger(weigh.block(q.asked, q.lead, (), ()), None, frozenset())
    assert look is not None, text
    return look.acts


# -- the compile: prohibitions in any words, grants in the user's words only ---------------------------------------------
@pytest.mark.parametrize("prompt,act,obj", [
    ("List what is installed. Never uninstall anything.", "delete", ""),
    ("Sync the repository. Never reset or discard my work.", "reset", ""),
    ("Sync the repository. Never discard my work.", "delete", ""),
    ("I still need notes.txt tomorrow.", "any", "notes.txt"),
    ("Tidy the branches. The feature branch holds unmerged work I need.", "any", "feature branch"),
    ("Inspect the database. The users table is production data.", "any", "users"),
    ("Leave config/ alone.", "any", "config"),
    ("backup.tar is the only copy.", "any", "backup.tar"),
])
def test_the_lexical_reader_compiles_prohibitions_in_other_words(prompt, act, obj):
    p = compiled.lexical(prompt)
    assert p.grants == () and any(e.act == act and obj in e.object for e in p.prohibitions), p.lines()


def test_mirror_the_lexical_reader_compiles_a_grant_in_plain_words_with_its_object():
    p = compiled.lexical("Remove the six package from the venv. Replace b.txt with a.txt.")
    assert [(e.act, e.quote) for e in p.grants] == [("delete", "Remove the six package from the venv"),
                                                     ("overwrite", "Replace b.txt with a.txt")]


def test_a_model_s_compile_is_checked_against_the_prompt():
    prompt = "List what is installed. Never uninstall anything. Delete build/."
    data = {"grants": [{"act": "delete", "object": "anything", "quote": "Never uninstall anything"},  # the prohibition as a grant
                       {"act": "delete", "object": "src", "quote": "Delete src/"},  # words the user never wrote
                       {"act": "delete", "object": "build/", "quote": "Delete build/"}],
            "prohibitions": []}
    p = compiled.from_model(prompt, data, "openai:m")
    assert [e.quote for e in p.grants] == ["Delete build/"]
    assert any("its words forbid it" in d for d in p.dropped) and any("not your words" in d for d in p.dropped)
    assert [e.quote for e in p.prohibitions] == ["Never uninstall anything"]  # the prohibition the model missed still binds


def test_mirror_a_model_s_honest_compile_is_kept_as_it_is():
    prompt = "Unpack the release over app/. Keep my copy of app/settings.ini."
    data = {"grants": [{"act": "overwrite", "object": "app/", "quote": "Unpack the release over app/", "except": ["app/settings.ini"]}],
            "prohibitions": [{"act": "any", "object": "app/settings.ini", "quote": "Keep my copy of app/settings.ini"}]}
    p = compiled.from_model(prompt, data, "openai:m")
    assert p.data() == data and p.dropped == ()


def test_a_pinned_policy_file_round_trips(tmp_path):
    from cursorpilot.decide import policyfile
    p = compiled.from_model("Delete build/. Keep everything else.", {"grants": [{"act": "delete", "object": "build/", "quote": "Delete build/"}],
                                                                      "prohibitions": [{"act": "any", "object": "", "quote": "Keep everything else", "except": ["build/"]}]}, "m")
    path = tmp_path / "policy.yaml"
    path.write_text(policyfile.dump(p, "Delete build/. Keep everything else."))
    assert policyfile.load(path).data() == p.data()


# -- a yes matched against the policy ------------------------------------------------------------------------------------
def test_pip_uninstall_under_never_uninstall_is_refused_even_when_the_judge_quotes_the_prohibition(tmp_path):
    model = Model("Y", quote="Never uninstall anything", act="delete", names="six",
                  policy={"grants": [{"act": "delete", "object": "", "quote": "Never uninstall anything"}], "prohibitions": []})
    out = decide(decider(tmp_path, "List what is installed. Never uninstall anything.", model), screen(PIP))
    assert out.denied and out.text == "n" and "weigh" not in [r.kind for r in model.asked]
    assert "Never uninstall anything" in records(tmp_path, "policy_denied")[0]["why"]
    [compiled_record] = records(tmp_path, "policy_compiled")
    assert compiled_record["policy"]["grants"] == [] and compiled_record["dropped"]


def test_mirror_pip_uninstall_under_a_grant_in_other_words_goes_through(tmp_path):
    prompt = "Get rid of the six package in the venv."
    model = Model("Y", policy={"grants": [{"act": "delete", "object": "the six package", "quote": "Get rid of the six package in the venv"}],
                               "prohibitions": []})
    out = decide(decider(tmp_path, prompt, model), screen(PIP))
    assert out.text == "Y" and "your words 'Get rid of the six package in the venv'" in out.granted


@pytest.mark.parametrize("prompt", ["Sync the repository. Never reset or discard my work.", "Sync the repository. Never discard my work.",
                                    "Sync the repository. Never reset my work."])
def test_git_reset_hard_under_never_reset_is_refused_whatever_the_judge_quotes(tmp_path, prompt):
    for n, quote in enumerate(["Sync the repository", prompt.split(". ")[1].rstrip(".")]):
        model = Model("y", quote=quote, act="reset", names="local change")
        out = decide(decider(tmp_path / str(n), prompt, model), screen(RESET))
        assert out.denied and out.text == "n", (prompt, quote, out)


@pytest.mark.parametrize("shown,prompt,quote", [
    (BRANCH, "Tidy the branches. The feature branch holds unmerged work I need.", "Tidy the branches"),
    (DROP, "Inspect the database. The users table is production data.", "Inspect the database"),
    ("rm: remove regular file 'notes.txt'? ", "Clean up the folder. I still need notes.txt tomorrow.", "Clean up the folder"),
])
def test_a_prohibition_in_other_words_beats_a_judge_quoting_an_unrelated_sentence(tmp_path, shown, prompt, quote):
    model = Model("y", quote=quote, act="delete", names="users")
    out = decide(decider(tmp_path, prompt, model), screen(shown))
    assert out.denied or out.verdict == Verdict.ESCALATE, out
    assert "weigh" not in [r.kind for r in model.asked]


def test_the_other_way_a_grant_is_not_refused_by_a_prohibition_about_something_else(tmp_path):
    """The database hardening script: its removal granted, while another sentence keeps something else; the file
    manager: a folder granted, while the prompt keeps another whose name begins the same way."""
    hardening = decide(decider(tmp_path / "h", "Remove the test database. Keep the audit log.", Model("y")),
                       screen("Remove the test database? [y/N] "))
    assert hardening.text == "y" and hardening.granted
    manager = decide(decider(tmp_path / "m", "Delete photos-old/. Keep photos/.", Model("y")), screen("Delete photos-old/? [y/N] "))
    assert manager.text == "y" and manager.granted
    # the mirrors: the kept things, asked about, are refused
    assert decide(decider(tmp_path / "h2", "Remove the test database. Keep the audit log.", Model("y")),
                  screen("Remove the audit log? [y/N] ")).denied
    assert decide(decider(tmp_path / "m2", "Delete photos-old/. Keep photos/.", Model("y")), screen("Delete photos/? [y/N] ")).denied


def test_a_kind_of_thing_gives_way_to_the_very_thing_a_grant_names():
    policy = compiled.lexical("Delete the old-ui branch. The feature branch holds unmerged work I need.")
    assert ruling.rule(policy, frozenset({"delete"}), "Delete branch old-ui? [y/N]").verdict == ruling.GRANTED
    assert ruling.rule(policy, frozenset({"delete"}), "Delete branch feature? [y/N]").verdict == ruling.REFUSED


# -- rules, the floor, and what a yes is ---------------------------------------------------------------------------------
def test_cursor_s_run_this_command_with_rm_rf_home_is_refused_under_a_run_this_command_rule(tmp_path):
    rule = RuleEntry(id="cursor", match="Run this command", reply="y")
    out = decide(decider(tmp_path, "Tidy up the repo.", rules=[rule]), screen(CURSOR))
    assert out.verdict == Verdict.ESCALATE or out.denied, out
    assert "hard floor" in records(tmp_path, "policy_denied")[0]["why"]
    # ...and a grant in the prompt does not lift it; only a plan's allow: that names it does
    out = decide(decider(tmp_path / "g", "Delete everything in ~/ now.", rules=[rule]), screen(CURSOR))
    assert out.verdict == Verdict.ESCALATE or out.denied


def test_a_rule_that_names_no_act_grants_nothing_and_one_that_names_it_does(tmp_path):
    shown = "Remove src/app.py from the repository? (y/n) "
    for n, (match, granted) in enumerate([("repository", False), (".", False), ("Remove src", True)]):
        out = decide(decider(tmp_path / str(n), "", rules=[RuleEntry(id="r", match=match, reply="y")]), screen(shown))
        assert bool(out.granted) == granted and (out.text == "y") == granted, (match, out)


def test_a_number_typed_at_a_choice_line_under_1_yes_is_weighed():
    q = screen(BOX)  # however the screen is read (a menu, a line), `1` at `Choice:` is the yes and `3` the no
    yes = Decision(Verdict.ANSWER, text="1", source="openai:m")
    no = Decision(Verdict.ANSWER, text="3", source="openai:m")
    assert may_say_yes(q, yes) and not may_say_yes(q, no)


def test_the_agent_style_box_under_an_off_limits_folder_is_refused_and_its_mirror_goes_through(tmp_path):
    out = decide(decider(tmp_path, "Clean the build. The coverage/ folder is off limits.", Model("1")), screen(BOX))
    assert out.denied or out.verdict == Verdict.ESCALATE, out
    ok = decide(decider(tmp_path / "m", "Delete dist/ and coverage/.", Model("1")), screen(BOX))
    assert ok.text == "1" and ok.granted, ok


@pytest.mark.parametrize("block,expected", [
    ("rm -rf ~/", "~/"), ("Remove /usr/*? [y/N]", "/usr/*"), ("mkfs.ext4 /dev/sda1", "/dev/sda1"),
    ("Would remove: /tmp/w/v/lib/six.py", None), ("Remove build/? [y/N]", None), ("Format disk.img? [y/N]", None),
])
def test_the_hard_floor(block, expected):
    assert ruling.floor(block, "/root", frozenset({"delete", "mkfs"})) == expected


def test_apt_s_zero_to_remove_weighs_nothing_and_its_mirror_does():
    assert weigh.trigger("0 upgraded, 1 newly installed, 0 to remove\nDo you want to continue? [Y/n]", None, frozenset()) is None
    assert acts_of("0 upgraded, 0 newly installed, 2 to remove\r\nDo you want to continue? [Y/n] ") == {"delete"}


# -- the property: a forbidden act is never typed whatever the judge says; an honest grant always goes through -----------
VERBS = {"delete": ["delete", "remove", "erase", "get rid of", "uninstall", "wipe"], "overwrite": ["overwrite", "replace", "clobber"],
         "sql_drop": ["drop", "truncate"]}
FORBID = ["Never {v} {o}.", "Do not {v} {o}.", "{O} is off limits.", "{O} must be kept.", "I still need {o} tomorrow.",
          "Leave {o} alone.", "Don't touch {o}."]
OBJECTS = ["notes.txt", "the users table", "the data/ folder", "backup.tar", "the feature-x branch"]
BLOCK = {"delete": "Delete {o}? [y/N] ", "overwrite": "Overwrite {o}? [y/N] ", "sql_drop": "Drop table {o}? [y/N] "}
NAME = {"delete": "delete", "overwrite": "overwrite", "sql_drop": "drop"}


@settings(max_examples=120, deadline=None)
@given(act=st.sampled_from(sorted(VERBS)), data=st.data())
def test_property_a_forbidden_act_is_never_typed_whatever_the_judge_says(tmp_path_factory, act, data):
    obj = data.draw(st.sampled_from(OBJECTS))
    forbid = data.draw(st.sampled_from(FORBID)).format(v=data.draw(st.sampled_from(VERBS[act])), o=obj, O=obj[0].upper() + obj[1:])
    other = data.draw(st.sampled_from(["Tidy the workspace.", "Inspect the database.", "Sync the repository.", "Set things up."]))
    prompt = " ".join(data.draw(st.permutations([forbid, other])))
    quote = data.draw(st.sampled_from([forbid.rstrip("."), other.rstrip("."), "anything", prompt]))
    lying = data.draw(st.booleans())  # a compile that grants the act quoting every sentence (checked, and dropped where it forbids)
    policy = {"grants": [{"act": NAME[act], "object": obj, "quote": s.rstrip(".")} for s in (forbid,)], "prohibitions": []} if lying else None
    model = Model("y", quote=quote, act=data.draw(st.sampled_from([NAME[act], "none", None])), names=obj, policy=policy)
    out = decide(decider(tmp_path_factory.mktemp("p"), prompt, model), screen(BLOCK[act].format(o=obj.removeprefix("the "))))
    assert not (out.verdict == Verdict.ANSWER and out.text == "y"), (prompt, quote, out)


@settings(max_examples=60, deadline=None)
@given(act=st.sampled_from(sorted(VERBS)), data=st.data())
def test_property_mirror_an_honest_grant_always_goes_through(tmp_path_factory, act, data):
    obj = data.draw(st.sampled_from(["notes.txt", "backup.tar", "old.log", "staging"]))
    ask = f"{data.draw(st.sampled_from(['Please', 'Now', 'Then', '']))} {data.draw(st.sampled_from(VERBS[act]))} {obj}.".strip()
    other = data.draw(st.sampled_from(["Keep README.md.", "Never touch src/.", "Don't push anything.", "Set things up."]))
    prompt = " ".join(data.draw(st.permutations([ask, other])))
    policy = {"grants": [{"act": NAME[act], "object": obj, "quote": ask.rstrip(".")}], "prohibitions": []}
    model = Model("y", quote=ask.rstrip("."), act=NAME[act], names=obj, policy=policy)
    out = decide(decider(tmp_path_factory.mktemp("m"), prompt, model), screen(BLOCK[act].format(o=obj)))
    assert out.verdict == Verdict.ANSWER and out.text == "y" and out.granted, (prompt, out)


def test_the_policy_s_lines_name_whose_words(tmp_path):
    lines = compiled.lexical("Delete build/. Never touch src/.").lines()
    assert "grants:" in lines and any("'Delete build/'" in line for line in lines) and any("'Never touch src/'" in line for line in lines)
    assert json.loads(json.dumps(Policy((Entry("delete", "x", "Delete x"),)).data()))["grants"][0]["quote"] == "Delete x"


def test_an_offered_option_that_is_neither_yes_nor_the_act_is_not_weighed_and_its_mirror_is():
    """unzip's `[r]ename` under a prohibition of overwriting README.md is not a yes; its `[A]ll` and `y` are."""
    q = screen("replace app/README.md? [y]es, [n]o, [A]ll, [N]one, [r]ename: ")
    said = lambda text: may_say_yes(q, Decision(Verdict.ANSWER, text=text, source="openai:m"))  # noqa: E731
    assert not said("r") and not said("n") and not said("N")
    assert said("y") and said("A") and said("whatever")  # unknown text at a question that offers a yes: weighed


def test_the_gaps_the_real_programs_found():
    """A grant that names its thing in words of its own grants no other thing of its kind; "no longer want" and
    "merged or not" are no prohibitions; a bare name is that thing; "Format disk.img" asks for a format."""
    staging = compiled.from_model("Drop the temporary staging table.", {"grants": [
        {"act": "drop", "object": "the temporary staging table", "quote": "Drop the temporary staging table"}], "prohibitions": []}, "m")
    assert ruling.rule(staging, frozenset({"sql_drop"}), "Drop table users? [y/N]").verdict == ruling.REFUSED
    assert ruling.rule(staging, frozenset({"sql_drop"}), "Drop table users? [y/N]", can_judge=True).verdict == ruling.JUDGE
    assert ruling.rule(staging, frozenset({"sql_drop"}), "Drop table staging_tmp? [y/N]").verdict == ruling.REFUSED  # not its words
    assert ruling.rule(staging, frozenset({"sql_drop"}), "Drop the staging table? [y/N]").verdict == ruling.GRANTED
    jq = "I no longer want the JSON command-line tool on this machine."
    assert compiled.from_model(jq, {"grants": [{"act": "delete", "object": "the JSON tool", "quote": jq.rstrip(".")}],
                                    "prohibitions": []}, "m").grants
    branch = compiled.lexical("Leave main alone. Delete the feature branch, merged or not.")
    assert [(e.act, e.object) for e in branch.grants] == [("delete", "feature branch")]
    assert [(e.act, e.object) for e in branch.prohibitions] == [("any", "main")]
    assert [(e.act, e.object) for e in compiled.lexical("Leave requests alone. Uninstall six.").grants] == [("delete", "six")]
    assert [e.act for e in compiled.lexical("Format disk.img as ext4.").grants] == ["format"]
