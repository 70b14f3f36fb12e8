"""decide/hidden.py: at a prompt that hides what is typed, only a value someone gave is typed (issue 48)."""

from __future__ import annotations

import pytest

from cursorpilot.decide.hidden import made_up
from cursorpilot.decide.question import Decision, Question, Verdict


def q(text: str = "New password:", secret: bool = True, live: tuple[str, ...] = ()) -> Question:
    return Question(kind="input", text=text, key="k", source="generic.waiting_input", secret=secret, live=live or (text,))


def said(text: str) -> Decision:
    return Decision(Verdict.ANSWER, text=text, source="openai:m")


@pytest.mark.parametrize("reply", ["y", "YES", "hunter2", "<secret:kp>x", "password123", "<space>", "<key:y>"])
def test_trap_a_value_a_model_made_up_is_refused_at_a_hidden_prompt(reply):
    assert "hidden prompt" in (made_up(q(), said(reply)) or "")


@pytest.mark.parametrize("reply", ["<secret:kp>", " <secret:kp> ", "<secret:vault.pw><enter>", "<esc>", "<ctrl-c>"])
def test_mirror_a_given_secret_or_a_key_that_types_nothing_goes(reply):
    assert made_up(q(), said(reply)) is None


@pytest.mark.parametrize("reply", ["y", ""])
def test_mirror_a_prompt_that_shows_what_is_typed_is_not_this_rules(reply):
    assert made_up(q("Project name:", secret=False), said(reply)) is None


def test_an_empty_answer_goes_only_where_the_prompt_offers_one():
    """ssh-keygen names 'no passphrase' as an answer, on both of its prompts' screen; passwd and LUKS do not."""
    first = "Enter passphrase (empty for no passphrase):"
    assert made_up(q(first), said("")) is None
    assert made_up(q("Enter same passphrase again:", live=(first, "Enter same passphrase again:")), said("<enter>")) is None
    assert "empty answer" in (made_up(q("Enter passphrase for img:"), said("")) or "")
    assert "empty answer" in (made_up(q("New password:"), said("<enter>")) or "")


def test_only_answers_are_read():
    assert made_up(q(), Decision(Verdict.ESCALATE, why="a person")) is None
    assert made_up(q(), Decision(Verdict.WAIT)) is None


def test_only_a_models_answer_is_refused_the_users_rules_are_theirs():
    from cursorpilot.decide.hidden import refused
    d = refused(q(), said("y"), by_model=True)
    assert d is not None and d.verdict == Verdict.ESCALATE and d.source == "openai:m" and "hidden prompt" in d.why
    assert refused(q(), said("y"), by_model=False) is None
    assert refused(q(), said("<secret:kp>"), by_model=True) is None


def test_a_value_the_governing_prompt_spells_out_is_yours_and_a_yes_word_never_is():
    """The yardstick's ssh-keygen ("Protect the key with the passphrase s3cret-pass"), openssl, django, gpg: the
    passphrase is the user's words. Its mirror: "type YES" in a prompt never makes YES a passphrase."""
    from cursorpilot.decide.hidden import yours
    assert yours("s3cret-pass", "Protect the key with the passphrase s3cret-pass (type it twice when asked).")
    assert not yours("s3cret", "Protect the key with the passphrase s3cret-pass.")  # only the whole value
    assert not yours("YES", "Format the image; type YES when cryptsetup asks.")
    assert not yours("hunter2", "Set up the account.")


def test_an_empty_default_shown_offers_the_empty_answer_and_its_mirror():
    """openssl req's `A challenge password []:` shows its default: empty (the yardstick's openssl-req)."""
    from cursorpilot.decide.hidden import offers_empty
    from cursorpilot.decide.question import Kind, Question
    ask = lambda text: Question(kind=Kind.QUESTION, text=text, key="k", source="generic.library_input", secret=True)  # noqa: E731
    assert offers_empty(ask("A challenge password []:")) and not offers_empty(ask("New password:"))
