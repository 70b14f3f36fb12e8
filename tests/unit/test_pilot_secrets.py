"""Secrets in the PTY pilot, with made-up facts (issue 22, 2): what is typed at a prompt that hides it reaches the
program byte for byte, and everything the pilot hands on to be shown or kept (the answer record, the console line, the
model's history, the key labels) holds only its mask."""

from dataclasses import replace

from cursorpilot.decide.deliver import Delivered, Tell
from cursorpilot.decide.question import Decision
from cursorpilot.detect.classifier import Classification
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.facts import Ask, AskHuman, Decided, GoalChecked, Screen, Started, Type, Typed

from cursorpilot.records.secret import masked
from tests.unit.test_pilot import answer, facts, of, pilot, records, screen

PASSWORD = Classification(state="input", rule_id="generic.waiting_input", block="Password:", key="w@3:Password:", anchor_row=3)
NAME = Classification(state="input", rule_id="generic.waiting_input", block="Name:", key="w@3:Name:", anchor_row=3)


def typed_at(p, c, reply, echo_off=False, **kw):
    (ask,) = of(screen(p, 0.0, c, facts_with(echo_off)), Ask)
    return ask, p.handle(0.1, Decided(ask.token, answer(reply, **kw), 1, Modes(), c))


def facts_with(echo_off: bool):
    return replace(facts(), echo_off=echo_off)


def test_an_answer_typed_while_echo_is_off_is_masked_wherever_it_is_shown_or_kept():
    """`answer 'hunter2'` on the console, in the answer record, in the model's history: the pilot knew echo was off."""
    ask, out = typed_at(pilot(), NAME, "hunter2", echo_off=True)
    assert ask.secret
    (typed,) = of(out, Type)
    assert [w.data for w in typed.writes] == [b"hunter2", b"\r"]  # the program gets it byte for byte
    assert [w.label for w in typed.writes] == [masked("hunter2"), "<enter>"] and typed.writes[0].secret and not typed.writes[1].secret
    record = records(out, "answer")[0]
    assert (record["reply"], record["secret"]) == (masked("hunter2"), True)
    assert [t.text for t in of(out, Tell)] == [masked("hunter2")] and [d.text for d in of(out, Delivered)] == [masked("hunter2")]


def test_a_field_that_asks_for_a_password_is_a_secret_with_echo_on():
    ask, out = typed_at(pilot(), PASSWORD, "hunter2")
    assert ask.secret and records(out, "answer")[0]["reply"] == masked("hunter2")
    ask, out = typed_at(pilot(), NAME, "Ada")
    assert not ask.secret and records(out, "answer")[0]["reply"] == "Ada" and "secret" not in records(out, "answer")[0]


def test_a_named_secret_is_typed_from_the_runs_secrets_and_shown_masked():
    ask, out = typed_at(pilot(secrets={"db": "s3cr3t-value"}), NAME, "<secret:db>")
    (typed,) = of(out, Type)
    assert typed.writes[0].data == b"s3cr3t-value" and records(out, "answer")[0]["reply"] == masked("s3cr3t-value")


def test_a_rule_that_says_secret_is_masked():
    _, out = typed_at(pilot(), NAME, "ABCD-1234", secret=True)
    assert records(out, "answer")[0]["reply"] == masked("ABCD-1234")


def test_a_named_secret_nobody_gave_is_escalated_and_nothing_typed():
    _, out = typed_at(pilot(interactive=True), PASSWORD, "<secret:nope>")
    assert not of(out, Type) and "--secret nope=ENVVAR" in records(out, "escalation")[0]["why"]


def test_a_person_asked_at_a_hidden_prompt_types_unseen_and_is_recorded_masked():
    p = pilot(interactive=True)
    (ask,) = of(screen(p, 0.0, PASSWORD, facts_with(True)), Ask)
    (human,) = of(p.handle(0.1, Decided(ask.token, Decision.escalate("no idea"), 1, Modes(), PASSWORD)), AskHuman)
    assert human.secret
    out = p.handle(0.5, Decided(human.token, answer("hunter2", source="human"), 1, Modes(), PASSWORD))
    assert not records(out, "human_reply")  # recorded where it was taken, masked (human/humans.py), for every channel alike
    assert records(out, "answer")[0]["reply"] == masked("hunter2")


def test_a_secret_that_names_no_option_of_a_menu_is_escalated_without_its_value():
    from cursorpilot.detect.menu import numbered

    menu_c = Classification(state="menu", rule_id="generic.numbered", block="1) a\n2) b\n#? ", key="m@1", anchor_row=1,
                            menu=numbered("1) a\n2) b\n#? "))
    _, out = typed_at(pilot(interactive=True, secrets={"db": "s3cr3t-value"}), menu_c, "<secret:db>")
    assert "s3cr3t-value" not in repr(out) and masked("s3cr3t-value") in records(out, "escalation")[0]["why"]
