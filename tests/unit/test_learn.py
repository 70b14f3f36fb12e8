"""Rules learned from a person (cursorpilot/commands/learn.py): the answers a run recorded in, a rules file out that the rules
engine answers the same questions with. Pure: no program, no terminal."""

from __future__ import annotations

import re

import pytest

from cursorpilot.errors import BadInput
from cursorpilot.commands.learn import Answered, asking_line, check, learn, pattern, to_yaml, write
from cursorpilot.providers.rules import read_entries
from cursorpilot.records.secret import masked


def human(prompt: str, reply: str, secret: bool = False, step: int = 1, kind: str = "input") -> Answered:
    return Answered(step, prompt, masked(reply) if secret else reply, "human", kind, secret)


@pytest.mark.parametrize("block, line", [
    ("Country Name (2 letter code) [AU]:", "Country Name (2 letter code) [AU]:"),
    ("◆  Project name (target directory):\n│  vue-project\n└", "Project name (target directory):"),
    ("◆  Use TypeScript?\n│  ● Yes / ○ No\n└", "Use TypeScript?"),
    ("? Use TypeScript? › No / Yes", "Use TypeScript?"),
    ("◆  Select features to include in your project: (↑/↓ to navigate, space to select, a to toggle all, enter to\n"
     "│  confirm)\n│  ◻ JSX Support\n│  ◻ Prettier (code formatting)\n└", "Select features to include in your project:"),
    ("┌──────────────┐\n│ Pick a fruit │\n│    apple     │\n│    cherry    │\n│ <Ok> <Cancel>│\n└──────────────┘", "Pick a fruit"),
    ("(Pdb)", "(Pdb)"),
])
def test_the_line_that_asks_is_drawn_from_the_prompt_block(block, line):
    assert asking_line(block) == line
    assert re.search(pattern(block), block, re.I | re.M)  # the rule matches the block it was drawn from


def test_a_pattern_is_literal_and_any_whitespace_between_its_words():
    p = pattern("Organization Name (eg, company) [Internet Widgits Pty Ltd]:")
    assert re.search(p, "Organization Name  (eg, company)\t[Internet Widgits Pty Ltd]:")
    assert not re.search(p, "Organization Name (eg, company) [Other]:")


def test_one_rule_per_question_secrets_named_and_shared_by_value_and_enter_alone_is_no_secret():
    asked = [human("Enter PEM pass phrase:", "s3cret", secret=True), human("Verifying - Enter PEM pass phrase:", "s3cret", secret=True),
             human("Country Name (2 letter code) [AU]:", "DE"), human("A challenge password []:", "", secret=True),
             human("Continue? [y/n]", "y"), human("Continue? [y/n]", "y")]
    learned = learn(asked)
    assert [(r.match, r.reply) for r in learned.rules] == [
        (r"^\W*Enter\s+PEM\s+pass\s+phrase:", "<secret:pem_pass_phrase>"),
        (r"^\W*Verifying\s+\-\s+Enter\s+PEM\s+pass\s+phrase:", "<secret:pem_pass_phrase>"),
        (r"^\W*Country\s+Name\s+\(\d+\s+letter\s+code\)\s+\[AU\]:", "DE"), (r"^\W*A\s+challenge\s+password\s+\[\]:", ""),
        (r"^\W*Continue\?", "y")]
    assert learned.secrets == ["pem_pass_phrase"] and learned.asked == 6 and learned.unsure == []
    assert "s3cret" not in to_yaml(learned, "openssl req")  # the value was never recorded, and is not made up


def answered_by(rules, block: str) -> str | None:
    from cursorpilot.providers.base import AnswerRequest
    from cursorpilot.providers.rules import RulesProvider

    reply = RulesProvider(rules, "t").answer(AnswerRequest(governing_prompt="", kind="input", rule_id="", prompt_block=block, screen=block))
    return reply.source.removeprefix("rules:") if reply.text is not None else None


def test_a_rule_learned_at_new_password_does_not_also_answer_retype_new_password():
    """`New\\s+password:` matched "Retype new password:" too, so the rule learned for the retype never fired (it typed
    the other rule's secret: the same one here by luck, another one as soon as the values differ)."""
    asked = [human("Current password:", "old-Secret1", secret=True), human("New password:", "new-Secret2", secret=True),
             human("Retype new password:", "new-Secret2", secret=True)]
    learned = learn(asked)
    assert [answered_by(learned.rules, a.prompt) for a in asked] == ["learned1", "learned2", "learned3"]
    assert learned.secrets == ["current_password", "password"] and learned.unsure == []
    differ = learn([human("New password:", "one-Secret", secret=True), human("Retype new password:", "two-Secret", secret=True)])
    assert [answered_by(differ.rules, p) for p in ("New password:", "Retype new password:")] == ["learned1", "learned2"]
    assert differ.unsure == []  # (the check knew a secret only as "a secret": any rule typing one passed for any)


def test_a_rule_that_would_answer_a_later_rules_question_goes_after_it():
    """Two dialogs titled `Overwrite` and `Overwrite all`: the first one's rule matched the second one's title too."""
    asked = [human("Overwrite\n<Yes> <No>", "<enter>"), human("Overwrite all\n<Yes> <No>", "<right><enter>"),
             human("Overwrite\n<Yes> <No>", "<enter>")]
    learned = learn(asked)
    assert [answered_by(learned.rules, a.prompt) for a in asked] == ["learned1", "learned2", "learned1"]
    assert [r.id for r in learned.rules] == ["learned2", "learned1"] and learned.unsure == []


def test_numbers_in_brackets_are_any_number_and_numbers_in_the_words_stay():
    """gdisk's learned rules hard-coded one image's sector numbers: on a disk of another size nothing matched."""
    learned = learn([human("First sector (34-20446, default = 2048) or {+-}size{KMGTP}:", ""),
                     human("Last sector (2048-20446, default = 18431) or {+-}size{KMGTP}:", "+4M"),
                     human("Delete partition 3? (Y/N):", "Y")])
    assert answered_by(learned.rules, "First sector (34-40926, default = 2048) or {+-}size{KMGTP}:") == "learned1"
    assert answered_by(learned.rules, "Last sector (2048-40926, default = 38911) or {+-}size{KMGTP}:") == "learned2"
    assert answered_by(learned.rules, "Delete partition 3? (Y/N):") == "learned3"
    assert answered_by(learned.rules, "Delete partition 4? (Y/N):") is None  # which partition is the question itself


def test_two_different_secrets_get_two_names():
    learned = learn([human("Password:", "one-secret", secret=True), human("Password again:", "another", secret=True)])
    assert learned.secrets == ["password", "password_2"]


def test_the_same_question_answered_differently_is_told_apart_by_the_rule_before_it():
    """pdb's `(Pdb)` again and again: one pattern is not enough; `after:` chains them, the first one without."""
    replies = ["n", "n", "p y", "c", "q"]
    asked = [human("(Pdb)", r) for r in replies]
    learned = learn(asked)
    assert learned.unsure == [] and check(learned.rules, asked) == []
    assert [r.after for r in learned.rules][-1] is None and all(r.after for r in learned.rules[:-1])  # the narrow ones first


def test_answers_of_other_answerers_are_not_learned_and_break_a_chain():
    asked = [human("Name?", "Ada"), Answered(1, "Continue? [y/n]", "y", "rules:go", "question", False), human("Name?", "Bob")]
    learned = learn(asked)
    assert {r.reply for r in learned.rules} == {"Ada", "Bob"} and learned.asked == 2
    assert check(learned.rules, asked) == ["Name?"]  # no rule of this file can tell the two apart: said, not hidden


def test_a_turn_end_rule_keeps_its_kind():
    learned = learn([human("● I stopped: which database?", "Use SQLite.", kind="turn_end")])
    assert learned.rules[0].kind == "turn_end"


def test_written_rules_read_back_and_are_added_to_an_existing_file_without_taking_its_ids(tmp_path):
    asked = [human("(Pdb)", r) for r in ("n", "p y")] + [human("Name?", "Ada")]
    learned = learn(asked)
    fresh = tmp_path / "fresh.yaml"
    assert write(fresh, learned, "python3 -m pdb s.py") == 3
    assert check(read_entries(fresh), asked) == [] and fresh.read_text().startswith("# Learned by cursor-pilot")
    mine = tmp_path / "mine.yaml"
    mine.write_text("- {id: learned1, match: 'Continue', reply: y}\n- {id: name, match: '^\\W*Name\\?', reply: Ada}")
    assert write(mine, learned, "python3 -m pdb s.py") == 2  # Name? -> Ada is there already
    entries = read_entries(mine)
    assert [e.id for e in entries][:2] == ["learned1", "name"] and len({e.id for e in entries}) == len(entries) == 4
    assert check(entries[1:], asked) == []
    assert write(mine, learned, "python3 -m pdb s.py") == 0  # nothing twice


def test_a_file_that_is_not_a_rules_list_is_never_overwritten(tmp_path):
    notes = tmp_path / "notes.yaml"
    notes.write_text("just: a mapping\n")
    with pytest.raises(BadInput):
        write(notes, learn([human("Name?", "Ada")]), "x")
    assert notes.read_text() == "just: a mapping\n"
