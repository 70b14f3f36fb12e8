"""A yes is weighed by what the whole question does, a grant must ask for that act, and a prohibition wins (issue 44).

The decision path over the blocks real programs show (gdisk, parted, cp, apt, a dialog), in milliseconds: the rows
above a question are read for what a yes does; the governing prompt is read clause by clause; the focused judge's
allow is checked against the act it claims. Each guard beside its mirror (what it must let through). The real
programs on image files are in tests/integration/test_whole_question.py.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cursorpilot.clock import FakeClock
from cursorpilot.decide import consent, weigh
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.yesno import said_yes
from cursorpilot.detect.classifier import Timing, classify
from cursorpilot.detect.profiles import load_profile
from cursorpilot.providers.base import QA, AnswerRequest, Reply, Usage
from cursorpilot.providers.rules import RuleEntry, RulesProvider
from cursorpilot.channels.pty.ask import question as pty_question
from cursorpilot.channels.pty.screen import TerminalScreen
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript

GDISK_O = "Command (? for help): o\r\nThis option deletes all partitions and creates a new protective MBR.\r\nProceed? (Y/N): "
GDISK_W = ("Command (? for help): w\r\n\r\nFinal checks complete. About to write GPT data. THIS WILL OVERWRITE EXISTING\r\n"
           "PARTITIONS!!\r\n\r\nDo you want to proceed? (Y/N): ")
PARTED = ("Warning: The existing disk label on disk.img will be destroyed and all data on\r\nthis disk will be lost. Do you want "
          "to continue?\r\nYes/No? ")
APT = ("The following NEW packages will be installed:\r\n  jq libjq1 libonig5\r\n0 upgraded, 3 newly installed, 0 to remove and 0 not "
       "upgraded.\r\nNeed to get 1,032 kB of archives.\r\nDo you want to continue? [Y/n] ")
APT_REMOVE = ("The following packages will be REMOVED:\r\n  nginx nginx-common\r\n0 upgraded, 0 newly installed, 2 to remove and 0 not "
              "upgraded.\r\nDo you want to continue? [Y/n] ")
TERRAFORM = ("Plan: 0 to add, 0 to change, 3 to destroy.\r\n\r\nDo you really want to destroy all resources?\r\n  Terraform will destroy "
             "all your managed infrastructure, as shown above.\r\n  There is no undo. Only 'yes' will be accepted to confirm.\r\n\r\n"
             "  Enter a value: ")
CP = "cp: overwrite 'b.txt'? "
NEVER_PARTITION = "Never delete or overwrite any partition."


def screen(text: str) -> Question:
    s = TerminalScreen(80, 24)
    s.feed(text.encode())
    snap = s.snapshot()
    p = load_profile("generic")
    return pty_question(p, classify(p, snap, Timing(5.0)), snap, [])


class Model:
    """A model: its answer to the question, and its judgment of a yes (WEIGH_SCHEMA's fields), recording each request."""

    name = "openai"
    needs_prompt = True

    def __init__(self, answer: str = "y", decision: str = "allow", quote: str = "", act: str | None = None, turn: str | None = None,
                 policy: dict | None = None, names: str | None = None):
        self.reply, self.judged, self.quote, self.act, self.turn = answer, decision, quote, act, turn
        self.policy, self.names = policy, names  # its compile of the governing prompt (None: garbage), and the words it points at
        self.asked: list[AnswerRequest] = []

    def answer(self, request: AnswerRequest) -> Reply:
        self.asked.append(request)
        if request.kind == "policy":
            raw = json.dumps(self.policy) if self.policy is not None else "I think the policy is fine."
            return Reply(text=raw, raw=raw, source="openai:compiler")
        if request.kind == "weigh":
            return Reply(text=self.quote, source="openai:judge", judged=self.judged, act=self.act, names=self.names, reason="judged")
        return Reply(text=self.reply, source="openai:m", usage=Usage(100, 5, 0.5, None, 1), turn=self.turn)


def decider(tmp_path, governing: str, provider=None, rules: list[RuleEntry] | None = None, history=()) -> Decider:
    clock, redactor = FakeClock(), Redactor(env={})
    provider = provider or Model()
    tmp_path.mkdir(parents=True, exist_ok=True)
    run = RunContext(tx=Transcript(tmp_path / "t.jsonl", "r", clock, redactor), redactor=redactor, clock=clock, log_dir=tmp_path,
                     run_id="r", provider=provider, allow=frozenset())
    d = Decider(run, governing, str(tmp_path), RulesProvider(rules, "test") if rules else None, PromptFiler(run, 1, "1/1", None, governing))
    d.history.extend(history)
    return d


def decide(d: Decider, q: Question) -> Decision:
    """The whole path as a channel runs it: what costs nothing, the model, the policy compiled, the judge of a yes."""
    path = d.path(q)
    try:
        request = next(path)
        while True:
            request = path.send(d.call(request))
    except StopIteration as done:
        return done.value


def records(tmp_path, type_: str) -> list[dict]:
    return [r for r in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines()) if r["type"] == type_]


ANSWERED = (QA("Command (? for help):", "o"), QA("Command (? for help):", "w"))


# -- what a yes does: the whole block ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shown,acts", [
    (GDISK_O, {"delete"}), (GDISK_W, {"overwrite"}), (PARTED, {"delete"}), (APT, None), (APT_REMOVE, {"delete"}),
    (TERRAFORM, {"delete"}), (CP, {"overwrite"}),
])
def test_what_a_yes_does_is_read_from_the_rows_above_the_question_too(shown, acts):
    """gdisk's `Proceed? (Y/N):` says nothing; the row above says it deletes all partitions. apt's "0 to remove" is a
    count of none: nothing to weigh (its mirror, "2 to remove", is a delete)."""
    q = screen(shown)
    look = weigh.trigger(weigh.block(q.asked, q.lead, (), tuple(a.question for a in ANSWERED)), None, frozenset())
    assert (look.acts if look is not None else None) == acts, (q.asked, q.lead)


def test_an_earlier_question_already_answered_is_not_part_of_the_block():
    """The wizard's answered `Delete files at the destination? (y/n) n` above `Write sync.toml? (y/n)`."""
    q = screen("Delete files at the destination that are not in the source? (y/n) n\r\nWrite sync.toml? (y/n) ")
    earlier = (QA("Delete files at the destination that are not in the source? (y/n)", "n"),)
    assert weigh.trigger(weigh.block(q.asked, q.lead, (), tuple(a.question for a in earlier)), None, frozenset()) is None
    # the mirror: the same row, never answered, is part of what a yes does
    assert weigh.trigger(weigh.block(q.asked, q.lead, (), ()), None, frozenset()) is not None


def test_a_warning_across_a_blank_row_is_read_and_a_diff_s_rows_are_not():
    q = screen("removed 3 stale files\r\n\r\nbuilt ok\r\nContinue? [Y/n] ")
    assert "removed 3 stale files" in q.lead  # what a yes does may be said a blank row above: a look, not a verdict
    hunk = screen("@@ -1,2 +1,2 @@\r\n-remove_all()\r\n+keep_all()\r\n context\r\nStage this hunk [y,n,q,a,d,e,?]? ")
    assert weigh.trigger(weigh.block(hunk.asked, hunk.lead, (), ()), None, frozenset()) is None


# -- the governing prompt, clause by clause ------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,acts,block,forbids,grants", [
    (NEVER_PARTITION, {"delete"}, "This option deletes all partitions\nProceed? (Y/N):", True, False),
    ("Copy a.txt to b.txt. Never overwrite an existing file.", {"overwrite"}, "cp: overwrite 'b.txt'?", True, False),
    ("Replace b.txt with a.txt", {"overwrite"}, "cp: overwrite 'b.txt'?", False, True),
    ("Prune the old release branches, but don't push anything.", {"delete"}, "Delete 4 merged branches? [y/N]", False, False),
    ("Nothing of the old setup should survive: wipe the cache directory first.", {"delete"}, "Remove cache/ and its 80 files? [y/N]",
     False, True),
    ("Drop the staging schema and don't let anyone else connect while you work.", {"sql_drop"}, "Drop schema staging? [y/N]", False, True),
    ("Delete the build folder but keep the data.", {"delete"}, "Delete build/? [y/N]", False, True),
    ("Delete the build folder but keep the data.", {"delete"}, "Delete data/? [y/N]", True, False),  # the mirror
    ("The data/ folder is off limits.", {"delete"}, "Remove data/ and its 3 files? [y/N]", True, False),
    ("Old partitions must be kept.", {"delete"}, "This option deletes all partitions\nProceed? (Y/N):", True, False),
    ("Do not lose any data.", {"delete"}, "Remove cache/? [y/N]", True, False),
    ("Don't remove anything under data/.", {"delete"}, "Remove data/x.csv? [y/N]", True, False),
    ("When asked whether to remove a file, refuse.", {"delete"}, "Remove a.txt? [y/N]", True, False),
    ("Never delete anything.", {"delete"}, "Remove a.txt? [y/N]", True, False),
    ("Install jq.", {"delete"}, "0 to remove\nDo you want to continue? [Y/n]", False, False),
    ("Generate a key in ./id_test. Replace the existing file there. Protect the key with a passphrase.", {"overwrite"},
     "./id_test already exists.\nOverwrite (y/n)?", False, True),
])
def test_the_governing_prompt_is_read_clause_by_clause(prompt, acts, block, forbids, grants):
    """A negation governs its own clause ("don't push anything" forbids pushing, not pruning); a prohibition in other
    words ("is off limits", "must be kept", "do not lose") forbids what it names; a grant must name what the block is
    about when a prohibition names something else."""
    r = consent.reading(prompt, frozenset(acts), block)
    assert (bool(r.forbidding), bool(r.granting)) == (forbids, grants), r


def test_a_continue_message_asks_for_nothing_its_negations_forbid():
    for said in ("Do not delete anything, leave it in place and finish.", "Skip the deletion and finish.",
                 "Leave the data alone and finish.", "Run the tests; the removal can wait."):
        assert consent.asked_for(said) == frozenset(), said
    for said in ("Go ahead and delete the build folder.", "Yes, remove it.", "Run the tests, then remove the temp files."):
        assert "delete" in consent.asked_for(said), said


# -- the decision path ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shown", [GDISK_O, GDISK_W, PARTED])
def test_a_model_s_yes_that_a_sentence_forbids_is_refused_without_asking_the_judge(tmp_path, shown):
    model = Model("Y", quote="Never delete or overwrite any partition", act="delete")
    d = decider(tmp_path, NEVER_PARTITION, model, history=ANSWERED)
    out = decide(d, screen(shown))
    assert out.denied and out.text.lower() in ("n", "no") and "forbid it" in records(tmp_path, "policy_denied")[0]["why"]
    assert [r.kind for r in model.asked] == ["question", "policy"]  # no judge: a prohibition is not the model's to weigh


@pytest.mark.parametrize("shown,act", [(GDISK_O, "delete"), (GDISK_W, "overwrite"), (PARTED, "delete")])
def test_mirror_the_judge_finds_the_act_in_other_words_and_the_yes_goes_through(tmp_path, shown, act):
    """The compile grants the act on "this image"; the block says "partitions": the judge points at that grant and at the
    block's words for its object, and both are checked."""
    prompt = "Start this image over with a fresh GPT label."
    policy = {"grants": [{"act": act, "object": "this image", "quote": "Start this image over with a fresh GPT label"}], "prohibitions": []}
    names = {GDISK_O: "all partitions", GDISK_W: "EXISTING PARTITIONS", PARTED: "disk.img"}[shown]
    model = Model("Y", quote="Start this image over with a fresh GPT label", act=act, policy=policy, names=names)
    out = decide(decider(tmp_path, prompt, model, history=ANSWERED), screen(shown))
    assert (out.verdict, out.text) == (Verdict.ANSWER, "Y") and not out.denied and "granted by" in out.granted
    assert [r.kind for r in model.asked] == ["question", "policy", "weigh"]
    [granted] = records(tmp_path, "policy_granted")
    assert granted["judge"] == "openai:judge" and "the model's judgment" in granted["granted_by"]
    assert "'Start this image over with a fresh GPT label'" in granted["granted_by"]
    # the mirror: the same judge pointing at words the block does not hold grants nothing
    wrong = Model("Y", quote="Start this image over with a fresh GPT label", act=act, policy=policy, names="the other disk")
    out = decide(decider(tmp_path / "w", prompt, wrong, history=ANSWERED), screen(shown))
    assert out.denied and "is not in the question" in records(tmp_path / "w", "policy_denied")[0]["why"]


VENDORED = {"grants": [{"act": "overwrite", "object": "the vendored copy of lib.js", "quote": "Refresh the vendored copy of lib.js"}],
            "prohibitions": []}


@pytest.mark.parametrize("quote,act,names,why", [
    ("Copy a.txt to b.txt", "overwrite", "b.txt", "no grant of yours"),  # a sentence the compile made no grant of
    ("Make the copy", "overwrite", "b.txt", "no grant of yours"),  # not the user's words at all
    ("Refresh the vendored copy of lib.js", "delete", "b.txt", "your grant is for 'overwrite'"),  # an act the grant is not for
    ("Refresh the vendored copy of lib.js", "overwrite", "", "did not show the question's words"),
    ("Refresh the vendored copy of lib.js", "overwrite", "lib.js", "is not in the question"),  # the grant's thing, not the block's
])
def test_a_judge_s_pointing_that_the_policy_and_the_block_do_not_bear_out_grants_nothing(tmp_path, quote, act, names, why):
    model = Model("y", quote=quote, act=act, policy=VENDORED, names=names)
    out = decide(decider(tmp_path, "Copy a.txt to b.txt. Refresh the vendored copy of lib.js.", model), screen(CP))
    assert out.verdict == Verdict.ESCALATE  # cp offers no no: a person
    assert why in records(tmp_path, "policy_denied")[0]["why"]


def test_mirror_a_judge_that_points_at_the_grant_and_the_block_s_words_lets_it_through(tmp_path):
    model = Model("y", quote="Refresh the vendored copy of lib.js", act="overwrite", policy=VENDORED, names="b.txt")
    out = decide(decider(tmp_path, "Copy a.txt to b.txt. Refresh the vendored copy of lib.js.", model), screen(CP))
    assert out.text == "y" and out.granted


def test_cp_under_a_prohibition_is_refused_even_when_the_judge_quotes_the_copy_sentence(tmp_path):
    model = Model("y", quote="Copy a.txt to b.txt", act="overwrite")
    out = decide(decider(tmp_path, "Copy a.txt to b.txt. Never overwrite an existing file.", model), screen(CP))
    assert out.verdict == Verdict.ESCALATE and "weigh" not in [r.kind for r in model.asked]
    assert "Never overwrite an existing file" in records(tmp_path, "policy_denied")[0]["why"]
    mirror = decide(decider(tmp_path / "m", "Replace b.txt with a.txt.", Model("y")), screen(CP))
    assert mirror.text == "y" and "your words 'Replace b.txt with a.txt'" in mirror.granted  # no judge needed


@pytest.mark.parametrize("prompt,shown,quote", [
    ("Prune the old release branches, but don't push anything.", "Delete 4 merged branches? [y/N] ", "Prune the old release branches"),
    ("Nothing of the old setup should survive: wipe the cache directory first.", "Remove cache/ and its 80 files? [y/N] ", ""),
    ("Drop the staging schema and don't let anyone else connect while you work.", "Drop schema staging? [y/N] ", ""),
])
def test_a_negation_about_something_else_does_not_veto_the_grant(tmp_path, prompt, shown, quote):
    """The compile grants what the sentence asks for (a model's, or the lexical reader's where it is plain words)."""
    first = prompt.split(",")[0].split(" and ")[0].split(":")[-1].strip()
    obj = {"Prune": "the old release branches", "wipe": "the cache directory", "Drop": "the staging schema"}[next(
        w for w in ("Prune", "wipe", "Drop") if w in first)]
    act = "drop" if "Drop" in first else "delete"
    policy = {"grants": [{"act": act, "object": obj, "quote": first}], "prohibitions": []}
    names = {"Prune": "merged branches"}.get(first.split()[0])  # "the old release branches" at "4 merged branches": the judge points
    out = decide(decider(tmp_path, prompt, Model("y", quote=quote, act="delete", policy=policy, names=names)), screen(shown))
    assert (out.text, out.denied) == ("y", None) and out.granted, records(tmp_path, "policy_denied")


def test_apt_s_summary_goes_through_with_a_model_and_with_the_user_s_rule_for_continue(tmp_path):
    """"0 to remove" is a count of none: nothing is weighed, no judge is asked (a model may add acts, never remove them)."""
    model = Model("y", quote="Install jq", act="none")
    out = decide(decider(tmp_path, "Install jq.", model), screen(APT))
    assert out.text == "y" and not out.denied and [r.kind for r in model.asked] == ["question"]
    rule = decide(decider(tmp_path / "r", "Install jq.", rules=[RuleEntry(id="go", match="continue\\?", reply="y")]), screen(APT))
    assert rule.text == "y" and not rule.denied
    # the mirror: "2 to remove" is weighed; the judge's "none" grants nothing, and a rule for "continue" names no act
    forbidden = decide(decider(tmp_path / "f", "Install jq. Never remove any package.", Model("y", quote="Install jq", act="none")),
                       screen(APT_REMOVE))
    assert forbidden.text == "n" and forbidden.denied
    ruled = decide(decider(tmp_path / "g", "Install jq.", rules=[RuleEntry(id="go", match="continue\\?", reply="y")]), screen(APT_REMOVE))
    assert ruled.text == "n" and ruled.denied


def test_a_catch_all_rule_never_grants_a_destructive_yes(tmp_path):
    for shown in (GDISK_O, PARTED, APT_REMOVE, CP):
        out = decide(decider(tmp_path / str(hash(shown)), "", rules=[RuleEntry(id="all", match=".", reply="y")], history=ANSWERED),
                     screen(shown))
        assert out.denied or out.verdict == Verdict.ESCALATE, shown
    rule = decide(decider(tmp_path, "", rules=[RuleEntry(id="all", match=".*", reply="y")], history=ANSWERED), screen(GDISK_O))
    assert rule.denied


def test_the_user_s_rule_that_names_the_act_overrides_a_prohibition_and_says_so(tmp_path):
    out = decide(decider(tmp_path, NEVER_PARTITION, rules=[RuleEntry(id="go", match="Delete all partitions", reply="y")]),
                 screen("Delete all partitions on disk.img? [y/N] "))
    assert out.text == "y" and out.granted == f"delete granted by your rule go (over your {NEVER_PARTITION.rstrip('.')!r})"
    # the mirror: a rule that names the question but no act ("Proceed", "Run this command", "continue") grants nothing
    out = decide(decider(tmp_path / "m", NEVER_PARTITION, rules=[RuleEntry(id="go", match="Proceed", reply="Y")], history=ANSWERED),
                 screen(GDISK_O))
    assert out.denied and out.text == "n"


def test_a_sentence_that_asks_for_the_act_and_forbids_it_here_is_refused(tmp_path):
    """The prohibition names the block's thing (logs/): it beats the grant, whoever chose the yes."""
    out = decide(decider(tmp_path, "Delete the logs, but never delete anything in logs/.", Model("y")), screen("Delete logs/app.log? [y/N] "))
    assert out.denied and out.text == "n" and "never delete anything in logs/" in records(tmp_path, "policy_denied")[0]["why"]


def test_a_continue_is_not_a_yes_to_what_the_agent_proposed(tmp_path):
    """The agent proposed `rm -rf build` again; the judge's continue says not to: it is sent, not weighed as a yes."""
    q = Question(kind=Kind.TURN_END, text="I can remove the build directory with rm -rf build. Shall I?", key="t", source="claude.idle",
                 asked="I can remove the build directory with rm -rf build. Shall I?")
    model = Model("Do not delete anything, leave it in place and finish.", turn="continue")
    d = decider(tmp_path, "Never delete anything.", model)
    out = d.after(q, d.call(d.request(q)))
    assert (out.verdict, out.text) == (Verdict.ANSWER, "Do not delete anything, leave it in place and finish."), out
    assert records(tmp_path, "policy_denied") == []


# -- the property: no automatic answerer gets a forbidden act typed; an honest judge gets an asked one through ----------
PROHIBITIONS = {
    "delete": ["Never delete anything.", "Nothing here may be removed.", "Do not lose any data.", "Never delete or overwrite any partition.",
               "Don't remove any file.", "Deleting anything is forbidden."],
    "overwrite": ["Never overwrite an existing file.", "Do not replace any file.", "Don't touch the existing files.",
                  "Never delete or overwrite any partition."],
    "sql_drop": ["Never drop any table.", "Do not drop or truncate anything.", "Do not lose any data."],
}
BLOCKS = {
    "delete": [GDISK_O, PARTED, APT_REMOVE, "Delete all files in important/? [y/N] ", "Remove cache/ and its 80 files? [y/N] "],
    "overwrite": [GDISK_W, CP, "Overwrite config.yaml? [y/N] ", "replace app/main.py? [y]es, [n]o, [A]ll, [N]one, [r]ename: "],
    "sql_drop": ["Drop schema staging? [y/N] ", "Drop database prod? (yes/no) "],
}
OTHERS = ["Copy a.txt to b.txt.", "Install jq.", "Prune the old release branches.", "Set up the project.", "Start this image over.",
          "Answer every question with yes.", "Replace the logo in the docs."]


@settings(max_examples=150, deadline=None)
@given(act=st.sampled_from(sorted(PROHIBITIONS)), data=st.data())
def test_property_no_automatic_answerer_gets_a_forbidden_act_typed(tmp_path_factory, act, data):
    forbid = data.draw(st.sampled_from(PROHIBITIONS[act]))
    others = data.draw(st.lists(st.sampled_from(OTHERS), max_size=3))
    prompt = " ".join(data.draw(st.permutations([forbid, *others])))
    shown = data.draw(st.sampled_from(BLOCKS[act]))
    q = screen(shown)
    sentences = [s.rstrip(".") for s in prompt.split(". ")]
    quote = data.draw(st.sampled_from([*sentences, "Start this image over", "anything"]))
    judge_act = data.draw(st.sampled_from(["delete", "overwrite", "format", "drop", "none", "other", None]))
    answer = data.draw(st.sampled_from(["y", "yes", "Y", "A"]))
    tmp = tmp_path_factory.mktemp("p")
    answerers = [decider(tmp / "model", prompt, Model(answer, quote=quote, act=judge_act), history=ANSWERED),
                 decider(tmp / "rule", prompt, rules=[RuleEntry(id="all", match=".", reply=answer)], history=ANSWERED)]
    for d in answerers:
        out = decide(d, q)
        typed_yes = out.verdict == Verdict.ANSWER and not out.denied and said_yes(q, out)
        assert not typed_yes, (prompt, shown, quote, judge_act, out)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_property_mirror_an_honest_judge_s_yes_to_an_act_the_prompt_asks_for_goes_through(tmp_path_factory, data):
    act, shown, ask = data.draw(st.sampled_from([
        ("delete", GDISK_O, "Start this disk over with a fresh label."), ("overwrite", GDISK_W, "Write the new table to the image."),
        ("delete", PARTED, "Relabel disk.img with GPT."), ("overwrite", CP, "Copy a.txt over b.txt."),
        ("delete", "Delete 4 merged branches? [y/N] ", "Prune the merged branches, but don't push anything."),
        ("sql_drop", "Drop schema staging? [y/N] ", "Start the staging schema from scratch."),
    ]))
    others = data.draw(st.lists(st.sampled_from(["Install jq.", "Set up the project.", "Don't push anything.", "Keep the README."]),
                                max_size=2))
    prompt = " ".join([ask, *others])
    name = weigh.ACT_NAMES[act]
    policy = {"grants": [{"act": name, "object": "", "quote": ask.rstrip(".")}], "prohibitions": []}
    model = Model("y" if "[y/N]" in shown or "cp:" in shown else "Y", quote=ask.rstrip("."), act=name, policy=policy)
    out = decide(decider(tmp_path_factory.mktemp("m"), prompt, model, history=ANSWERED), screen(shown))
    assert out.verdict == Verdict.ANSWER and not out.denied and out.granted, (prompt, shown, out)
